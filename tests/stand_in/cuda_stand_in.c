/* Stand-ins for the CUDA runtime (libcudart.so.12) and driver (libcuda.so.1): the same
 * exported symbols, each busy-waiting for a duration the test sets in <symbol>_ns, so
 * uprobes see calls of a precisely known length.  Built twice by the tests with gcc:
 * -DRUNTIME for libcudart, -DDRIVER for libcuda; -DRUNTIME -DNESTED makes a libcudart whose
 * cudaLaunchKernel calls the driver's cuLaunchKernel inside it (link it to the driver),
 * as a real runtime may. */
#include <time.h>

static void spin_ns(long ns) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

#define STAND_IN(name) \
    long name##_ns = 0; \
    int name(void *a, void *b, void *c, void *d, void *e, void *f) { spin_ns(name##_ns); return 0; }

#ifdef NESTED
int cuLaunchKernel(void *a, void *b, void *c, void *d, void *e, void *f);
long cudaLaunchKernel_ns = 0;
int cudaLaunchKernel(void *a, void *b, void *c, void *d, void *e, void *f) {
    spin_ns(cudaLaunchKernel_ns);  /* the runtime's own work, then the driver's call */
    return cuLaunchKernel(a, b, c, d, e, f);
}
#elif defined(RUNTIME)
STAND_IN(cudaLaunchKernel)
#endif
#ifdef RUNTIME
STAND_IN(cudaLaunchKernelExC)
STAND_IN(cudaGraphLaunch)
STAND_IN(cudaMemcpyAsync)
STAND_IN(cudaStreamSynchronize)
STAND_IN(cudaDeviceSynchronize)
#endif
#ifdef DRIVER
STAND_IN(cuLaunchKernel)
STAND_IN(cuLaunchKernelEx)
STAND_IN(cuGraphLaunch)
#endif
