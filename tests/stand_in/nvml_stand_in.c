/* A stand-in libnvidia-ml.so.1 for benchmarks on machines without a GPU: real pynvml
 * (nvidia-ml-py) loads it through ctypes exactly as it loads the driver's, so gputop and
 * nvitop pay their real Python costs around each call, and the calls themselves cost
 * what a C function costs (a real driver takes longer: see the README's H200 numbers).
 * NVML_STAND_IN_GPUS (default 8) H100s; NVML_STAND_IN_PROCS "pid:gpu:mib,..." are the GPU
 * processes.  Functions it lacks are "not found" to pynvml, which both programs show as
 * n/a.  NVML_STAND_IN_CALLS=FILE counts every call into FILE (a shared 8-byte counter
 * that a benchmark reads while the program runs: calls per GPU per second).
 * Build: gcc -shared -fPIC -O2 -o libnvidia-ml.so.1 nvml_stand_in.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct { unsigned index; } dev_t_;
typedef dev_t_ *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t;

#define OK 0
#define NOT_SUPPORTED 3
#define INVALID_ARGUMENT 2
#define INSUFFICIENT_SIZE 7
#define GIB (1024ULL * 1024 * 1024)

static dev_t_ devices[64];
static unsigned gpus = 8;
static struct { unsigned pid, gpu; unsigned long long bytes; } procs[4096];
static unsigned nprocs = 0;
static unsigned long long no_counter, *calls = &no_counter;

static void count_into(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) return;
    if (ftruncate(fd, sizeof *calls) == 0) {
        void *shared = mmap(NULL, sizeof *calls, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (shared != MAP_FAILED) calls = shared;
    }
    close(fd);
}
#define COUNT __atomic_fetch_add(calls, 1, __ATOMIC_RELAXED)

int nvmlInit_v2(void) {
    const char *g = getenv("NVML_STAND_IN_GPUS"), *p = getenv("NVML_STAND_IN_PROCS");
    if (getenv("NVML_STAND_IN_CALLS") && calls == &no_counter) count_into(getenv("NVML_STAND_IN_CALLS"));
    COUNT;
    gpus = g ? (unsigned)atoi(g) : 8;
    if (gpus > 64) gpus = 64;
    for (unsigned i = 0; i < gpus; i++) devices[i].index = i;
    nprocs = 0;
    while (p && *p && nprocs < 4096) {
        unsigned pid, gpu, mib;
        if (sscanf(p, "%u:%u:%u", &pid, &gpu, &mib) == 3) {
            procs[nprocs].pid = pid; procs[nprocs].gpu = gpu;
            procs[nprocs].bytes = (unsigned long long)mib << 20; nprocs++;
        }
        p = strchr(p, ',');
        if (p) p++;
    }
    return OK;
}
int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlInitWithFlags(unsigned flags) { (void)flags; return nvmlInit_v2(); }
int nvmlShutdown(void) { COUNT; return OK; }
const char *nvmlErrorString(int result) { COUNT; return result == NOT_SUPPORTED ? "Not Supported" : "Stand-in error"; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { COUNT; snprintf(v, n, "550.54.15"); return OK; }
int nvmlSystemGetNVMLVersion(char *v, unsigned n) { COUNT; snprintf(v, n, "12.550.54.15"); return OK; }
int nvmlSystemGetCudaDriverVersion(int *v) { COUNT; *v = 12040; return OK; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { COUNT; *v = 12040; return OK; }
int nvmlDeviceGetCount_v2(unsigned *n) { COUNT; *n = gpus; return OK; }
int nvmlDeviceGetCount(unsigned *n) { COUNT; *n = gpus; return OK; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d) { COUNT;
    if (i >= gpus) return INVALID_ARGUMENT;
    *d = &devices[i]; return OK;
}
int nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }
int nvmlDeviceGetIndex(nvmlDevice_t d, unsigned *i) { COUNT; *i = d->index; return OK; }
int nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned *i) { COUNT; *i = d->index; return OK; }
int nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned n) { COUNT; (void)d; snprintf(s, n, "NVIDIA H100 80GB HBM3"); return OK; }
int nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned n) { COUNT;
    snprintf(s, n, "GPU-5e7a1c2d-0000-4000-8000-%012u", d->index); return OK;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { COUNT;
    memset(p, 0, sizeof *p);
    p->bus = 0x18 + d->index; p->pciDeviceId = 0x233010de;
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}
int nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
static unsigned long long used_bytes(unsigned gpu) {
    unsigned long long used = 2 * GIB;  /* the context and the driver's own */
    for (unsigned i = 0; i < nprocs; i++) if (procs[i].gpu == gpu) used += procs[i].bytes;
    return used > 80 * GIB ? 80 * GIB : used;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) { COUNT;
    m->total = 80 * GIB; m->used = used_bytes(d->index); m->free = m->total - m->used; return OK;
}
int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) { COUNT;
    m->total = 80 * GIB; m->reserved = GIB / 2; m->used = used_bytes(d->index);
    m->free = m->total - m->reserved - m->used; return OK;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) { COUNT; (void)d; u->gpu = 90; u->memory = 40; return OK; }
int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t) { COUNT; (void)d; (void)sensor; *t = 55; return OK; }
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw) { COUNT; (void)d; *mw = 350000; return OK; }
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw) { COUNT; (void)d; *mw = 700000; return OK; }
int nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned *mw) { COUNT; (void)d; *mw = 700000; return OK; }
int nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned *f) { COUNT; (void)d; (void)f; return NOT_SUPPORTED; }
int nvmlDeviceGetFanSpeed_v2(nvmlDevice_t d, unsigned fan, unsigned *f) { COUNT; (void)d; (void)fan; (void)f; return NOT_SUPPORTED; }
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *mhz) { COUNT; (void)d; *mhz = type == 2 ? 2619 : 1980; return OK; }
int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *mhz) { COUNT; (void)d; *mhz = type == 2 ? 2619 : 1980; return OK; }
int nvmlDeviceGetPerformanceState(nvmlDevice_t d, int *p) { COUNT; (void)d; *p = 0; return OK; }
int nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *m) { COUNT; (void)d; *m = 1; return OK; }
static int processes(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *out) {
    unsigned n = 0;
    for (unsigned i = 0; i < nprocs; i++) if (procs[i].gpu == d->index) n++;
    if (out == NULL || *count < n) { *count = n; return n ? INSUFFICIENT_SIZE : OK; }
    unsigned k = 0;
    for (unsigned i = 0; i < nprocs; i++) if (procs[i].gpu == d->index) {
        out[k].pid = procs[i].pid; out[k].usedGpuMemory = procs[i].bytes;
        out[k].gpuInstanceId = out[k].computeInstanceId = 0xFFFFFFFF; k++;
    }
    *count = n; return OK;
}
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *o) { COUNT; return processes(d, c, o); }
int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *o) { COUNT; return processes(d, c, o); }
int nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *o) { COUNT; (void)d; (void)o; *c = 0; return OK; }
int nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *o) { COUNT; (void)d; (void)o; *c = 0; return OK; }
int nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned *c, nvmlProcessInfo_t *o) { COUNT; (void)d; (void)o; *c = 0; return OK; }
/* What nvitop asks and logs a FunctionNotFound traceback for when missing: not supported */
#define UNSUPPORTED(name) int name(void) { COUNT; return NOT_SUPPORTED; }
UNSUPPORTED(nvmlDeviceGetComputeMode)
UNSUPPORTED(nvmlDeviceGetDecoderUtilization)
UNSUPPORTED(nvmlDeviceGetEncoderUtilization)
UNSUPPORTED(nvmlDeviceGetDisplayActive)
UNSUPPORTED(nvmlDeviceGetDisplayMode)
UNSUPPORTED(nvmlDeviceGetDriverModel)
UNSUPPORTED(nvmlDeviceGetProcessUtilization)
UNSUPPORTED(nvmlDeviceGetTotalEccErrors)
UNSUPPORTED(nvmlDeviceGetMigMode)
UNSUPPORTED(nvmlDeviceGetCurrentClocksEventReasons)
UNSUPPORTED(nvmlDeviceGetCurrentClocksThrottleReasons)
UNSUPPORTED(nvmlDeviceGetPcieThroughput)
UNSUPPORTED(nvmlDeviceGetNvLinkState)
