/* A stand-in libnvidia-ml.so.1 for benchmarks on machines without a GPU: real pynvml
 * (nvidia-ml-py) loads it through ctypes exactly as it loads the driver's, so gputop and
 * nvitop pay their real Python costs around each call, and the calls themselves cost
 * what a C function costs (a real driver takes longer: see the README's H200 numbers).
 * NVML_STAND_IN_GPUS (default 8) H100s; NVML_STAND_IN_PROCS "pid:gpu[.mig]:mib[:sm:mem],..."
 * are the GPU processes (".mig": on that MIG instance; sm and mem: its per-process SM and
 * memory-controller util, which makes nvmlDeviceGetProcessUtilization answer).
 * NVML_STAND_IN_MIG "gpu=profile[@sm/dram/tensor],...;gpu=..." turns MIG on for those GPUs
 * ("1=1g.10gb@30/20/5,3g.40gb@x": GPU 1 in two instances; "x" for a value or the whole
 * sample is what the driver does not give): handles by index, per-instance memory and
 * process lists, GPM MIG samples, and NotSupported for the device's own utilization.  Set
 * at all, it also makes every other GPU MIG-capable with MIG off.  Functions it lacks are
 * "not found" to pynvml, which both programs show as n/a.  NVML_STAND_IN_CALLS=FILE counts every call into FILE (a shared 8-byte counter
 * that a benchmark reads while the program runs: calls per GPU per second).
 * Build: gcc -shared -fPIC -O2 -o libnvidia-ml.so.1 nvml_stand_in.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct { unsigned index; int mig; unsigned parent; } dev_t_;  /* mig -1: a GPU */
typedef dev_t_ *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;
typedef struct { unsigned multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
    sharedEncoderCount, sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount,
    computeInstanceSliceCount; unsigned long long memorySizeMB; } nvmlDeviceAttributes_t;
typedef struct { unsigned pid; unsigned long long timeStamp; unsigned smUtil, memUtil, encUtil, decUtil; } nvmlProcessUtilizationSample_t;
typedef struct { unsigned version, isSupportedDevice; } nvmlGpmSupport_t;
typedef struct { int gpu, gi; unsigned long long seq; } gpm_sample_t;  /* opaque to pynvml */
typedef struct { const char *shortName, *longName, *unit; } nvmlGpmMetricInfo_t;
typedef struct { unsigned metricId; int nvmlReturn; double value; nvmlGpmMetricInfo_t metricInfo; } nvmlGpmMetric_t;
typedef struct { unsigned version, numMetrics; gpm_sample_t *sample1, *sample2; nvmlGpmMetric_t metrics[]; } nvmlGpmMetricsGet_t;
typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t;

#define OK 0
#define NOT_SUPPORTED 3
#define INVALID_ARGUMENT 2
#define INSUFFICIENT_SIZE 7
#define NOT_FOUND 6
#define MAX_MIGS 7
#define NO_VALUE -1.0  /* "x": the driver does not give it */
#define GIB (1024ULL * 1024 * 1024)

static dev_t_ devices[64];
static unsigned gpus = 8;
static struct { unsigned pid, gpu; int mig; unsigned long long bytes; int sm, mem; } procs[4096];
static unsigned nprocs = 0;
static int mig_capable = 0;  /* NVML_STAND_IN_MIG set: GPUs answer nvmlDeviceGetMigMode */
static struct { unsigned count; dev_t_ handles[MAX_MIGS]; char profile[MAX_MIGS][16];
                unsigned gib[MAX_MIGS], slices[MAX_MIGS]; int gpm_ok[MAX_MIGS];
                double sm[MAX_MIGS], dram[MAX_MIGS], tensor[MAX_MIGS]; } migs[64];
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

static double value_or_none(const char *s, char **end) {
    if (*s == 'x') { *end = (char *)s + 1; return NO_VALUE; }
    return strtod(s, end);
}

/* "1=1g.10gb@30/20/5,3g.40gb@x;2=7g.80gb" */
static void parse_migs(const char *spec) {
    memset(migs, 0, sizeof migs);
    mig_capable = spec != NULL;
    while (spec && *spec) {
        char *end;
        unsigned gpu = (unsigned)strtoul(spec, &end, 10);
        if (*end != '=' || gpu >= gpus) break;
        const char *s = end + 1;
        while (*s && *s != ';' && migs[gpu].count < MAX_MIGS) {
            unsigned i = migs[gpu].count, n = 0;
            while (s[n] && s[n] != '@' && s[n] != ',' && s[n] != ';' && n < 15) n++;
            memcpy(migs[gpu].profile[i], s, n); migs[gpu].profile[i][n] = 0;
            migs[gpu].slices[i] = (unsigned)atoi(s);  /* "3g.40gb": 3 slices of 7 */
            const char *gb = strchr(migs[gpu].profile[i], '.');
            migs[gpu].gib[i] = gb ? (unsigned)atoi(gb + 1) : 10;
            s += n;
            migs[gpu].gpm_ok[i] = 1;
            migs[gpu].sm[i] = migs[gpu].dram[i] = migs[gpu].tensor[i] = 0.0;
            if (*s == '@' && s[1] == 'x' && (s[2] == ',' || s[2] == ';' || !s[2])) {
                migs[gpu].gpm_ok[i] = 0; s += 2;
            } else if (*s == '@') {
                migs[gpu].sm[i] = value_or_none(s + 1, &end); s = end;
                if (*s == '/') { migs[gpu].dram[i] = value_or_none(s + 1, &end); s = end; }
                if (*s == '/') { migs[gpu].tensor[i] = value_or_none(s + 1, &end); s = end; }
            }
            migs[gpu].handles[i].index = gpu; migs[gpu].handles[i].parent = gpu;
            migs[gpu].handles[i].mig = (int)i;
            migs[gpu].count++;
            if (*s == ',') s++;
        }
        spec = strchr(s, ';');
        if (spec) spec++;
    }
}

int nvmlInit_v2(void) {
    const char *g = getenv("NVML_STAND_IN_GPUS"), *p = getenv("NVML_STAND_IN_PROCS");
    if (getenv("NVML_STAND_IN_CALLS") && calls == &no_counter) count_into(getenv("NVML_STAND_IN_CALLS"));
    COUNT;
    gpus = g ? (unsigned)atoi(g) : 8;
    if (gpus > 64) gpus = 64;
    for (unsigned i = 0; i < gpus; i++) { devices[i].index = i; devices[i].mig = -1; }
    nprocs = 0;
    while (p && *p && nprocs < 4096) {
        char *end;
        unsigned pid = (unsigned)strtoul(p, &end, 10), gpu = 0, mib = 0;
        int mig = -1, sm = -1, mem = -1, ok = *end == ':';
        if (ok) { gpu = (unsigned)strtoul(end + 1, &end, 10); }
        if (ok && *end == '.') mig = (int)strtol(end + 1, &end, 10);
        ok = ok && *end == ':';
        if (ok) mib = (unsigned)strtoul(end + 1, &end, 10);
        if (ok && *end == ':') { sm = (int)strtol(end + 1, &end, 10);
            if (*end == ':') mem = (int)strtol(end + 1, &end, 10); }
        if (ok) {
            procs[nprocs].pid = pid; procs[nprocs].gpu = gpu; procs[nprocs].mig = mig;
            procs[nprocs].sm = sm; procs[nprocs].mem = mem;
            procs[nprocs].bytes = (unsigned long long)mib << 20; nprocs++;
        }
        p = strchr(p, ',');
        if (p) p++;
    }
    parse_migs(getenv("NVML_STAND_IN_MIG"));
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
int nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned n) { COUNT;
    if (d->mig >= 0) snprintf(s, n, "NVIDIA H100 80GB HBM3 MIG %s", migs[d->parent].profile[d->mig]);
    else snprintf(s, n, "NVIDIA H100 80GB HBM3");
    return OK;
}
int nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned n) { COUNT;
    if (d->mig >= 0) snprintf(s, n, "MIG-5e7a1c2d-0000-4000-8%03u-%012d", d->parent, d->mig);
    else snprintf(s, n, "GPU-5e7a1c2d-0000-4000-8000-%012u", d->index);
    return OK;
}
int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { COUNT;
    memset(p, 0, sizeof *p);
    p->bus = 0x18 + d->index; p->pciDeviceId = 0x233010de;
    snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", p->bus);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", p->bus);
    return OK;
}
int nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
static int on(unsigned i, nvmlDevice_t d) {  /* is process i on this GPU or MIG instance? */
    return procs[i].gpu == d->index && (d->mig < 0 || procs[i].mig == d->mig);
}
static unsigned long long total_bytes(nvmlDevice_t d) {
    return d->mig >= 0 ? (unsigned long long)migs[d->parent].gib[d->mig] * GIB : 80 * GIB;
}
static unsigned long long used_bytes(nvmlDevice_t d) {
    unsigned long long used = d->mig >= 0 ? GIB / 2 : 2 * GIB;  /* contexts, the driver's own */
    for (unsigned i = 0; i < nprocs; i++) if (on(i, d)) used += procs[i].bytes;
    return used > total_bytes(d) ? total_bytes(d) : used;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) { COUNT;
    m->total = total_bytes(d); m->used = used_bytes(d); m->free = m->total - m->used; return OK;
}
int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) { COUNT;
    m->total = total_bytes(d); m->reserved = d->mig >= 0 ? 0 : GIB / 2; m->used = used_bytes(d);
    m->free = m->total - m->reserved - m->used; return OK;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) { COUNT;
    if (d->mig >= 0 || migs[d->index].count) return NOT_SUPPORTED;  /* MIG mode */
    u->gpu = 90; u->memory = 40; return OK;
}
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
static unsigned gpu_instance_id(unsigned mig) { return mig + 1; }  /* GI ids start at 1 */
static int processes(nvmlDevice_t d, unsigned *count, nvmlProcessInfo_t *out) {
    unsigned n = 0;
    for (unsigned i = 0; i < nprocs; i++) if (on(i, d)) n++;
    if (out == NULL || *count < n) { *count = n; return n ? INSUFFICIENT_SIZE : OK; }
    unsigned k = 0;
    for (unsigned i = 0; i < nprocs; i++) if (on(i, d)) {
        out[k].pid = procs[i].pid; out[k].usedGpuMemory = procs[i].bytes;
        out[k].gpuInstanceId = procs[i].mig >= 0 ? gpu_instance_id((unsigned)procs[i].mig) : 0xFFFFFFFF;
        out[k].computeInstanceId = procs[i].mig >= 0 ? 0 : 0xFFFFFFFF; k++;
    }
    *count = n; return OK;
}

/* ---- per-process utilization: only when a process was given its SM and memory util */
int nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *out,
                                    unsigned *count, unsigned long long last_seen_us) { COUNT;
    unsigned n = 0;
    (void)last_seen_us;
    if (d->mig >= 0) return NOT_SUPPORTED;  /* per instance: not in MIG mode */
    for (unsigned i = 0; i < nprocs; i++) if (on(i, d) && procs[i].sm >= 0) n++;
    if (n == 0) return NOT_SUPPORTED;
    if (out == NULL || *count < n) { *count = n; return INSUFFICIENT_SIZE; }
    static unsigned long long now_us = 1700000000000000ULL;
    now_us += 1000000;  /* a fresh sample each call, newer than any seen */
    unsigned k = 0;
    for (unsigned i = 0; i < nprocs; i++) if (on(i, d) && procs[i].sm >= 0) {
        out[k].pid = procs[i].pid; out[k].timeStamp = now_us;
        out[k].smUtil = (unsigned)procs[i].sm; out[k].memUtil = procs[i].mem < 0 ? 0 : (unsigned)procs[i].mem;
        out[k].encUtil = out[k].decUtil = 0; k++;
    }
    *count = k; return OK;
}

/* ---- MIG: handles by index, ids, attributes */
int nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending) { COUNT;
    if (!mig_capable || d->mig >= 0) return NOT_SUPPORTED;
    *current = *pending = migs[d->index].count ? 1 : 0; return OK;
}
int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *n) { COUNT;
    if (!mig_capable || d->mig >= 0) return NOT_SUPPORTED;
    *n = MAX_MIGS; return OK;
}
int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned i, nvmlDevice_t *out) { COUNT;
    if (d->mig >= 0 || !migs[d->index].count) return NOT_SUPPORTED;
    if (i >= migs[d->index].count) return NOT_FOUND;
    *out = &migs[d->index].handles[i]; return OK;
}
int nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned *is) { COUNT; *is = d->mig >= 0; return OK; }
int nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned *id) { COUNT;
    if (d->mig < 0) return INVALID_ARGUMENT;
    *id = gpu_instance_id((unsigned)d->mig); return OK;
}
int nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned *id) { COUNT;
    if (d->mig < 0) return INVALID_ARGUMENT;
    *id = 0; return OK;
}
int nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a) { COUNT;
    memset(a, 0, sizeof *a);
    unsigned slices = d->mig >= 0 ? migs[d->parent].slices[d->mig] : 7;
    a->multiprocessorCount = d->mig >= 0 ? 16 * slices : 132;  /* an H100 SXM: 132 SMs */
    a->gpuInstanceSliceCount = a->computeInstanceSliceCount = slices;
    a->memorySizeMB = total_bytes(d) >> 20; return OK;
}

/* ---- GPM: per MIG instance only (the device's own samples are refused in MIG mode) */
int nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s) { COUNT;
    s->isSupportedDevice = d->mig < 0 && migs[d->index].count ? 1 : 0; return OK;
}
int nvmlGpmSampleAlloc(gpm_sample_t **out) { COUNT;
    *out = calloc(1, sizeof **out); return *out ? OK : INSUFFICIENT_SIZE;
}
int nvmlGpmSampleFree(gpm_sample_t *s) { COUNT; free(s); return OK; }
int nvmlGpmSampleGet(nvmlDevice_t d, gpm_sample_t *s) { COUNT; (void)d; (void)s; return NOT_SUPPORTED; }
int nvmlGpmMigSampleGet(nvmlDevice_t d, unsigned gi, gpm_sample_t *s) { COUNT;
    static unsigned long long seq = 0;
    if (d->mig >= 0 || gi == 0 || gi > migs[d->index].count) return INVALID_ARGUMENT;
    if (!migs[d->index].gpm_ok[gi - 1]) return NOT_SUPPORTED;
    s->gpu = (int)d->index; s->gi = (int)gi; s->seq = ++seq; return OK;
}
int nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m) { COUNT;
    gpm_sample_t *a = m->sample1, *b = m->sample2;
    if (!a || !b || a->gpu != b->gpu || a->gi != b->gi || a->seq >= b->seq) return INVALID_ARGUMENT;
    unsigned i = (unsigned)a->gi - 1, gpu = (unsigned)a->gpu;
    for (unsigned k = 0; k < m->numMetrics; k++) {
        double v = NO_VALUE;
        switch (m->metrics[k].metricId) {
            case 2: v = migs[gpu].sm[i]; break;  /* SM_UTIL */
            case 3: v = migs[gpu].sm[i] < 0 ? NO_VALUE : migs[gpu].sm[i] / 2; break;  /* occupancy */
            case 5: v = migs[gpu].tensor[i]; break;  /* ANY_TENSOR_UTIL */
            case 10: v = migs[gpu].dram[i]; break;  /* DRAM_BW_UTIL */
        }
        m->metrics[k].nvmlReturn = v < 0 ? NOT_SUPPORTED : OK;
        m->metrics[k].value = v < 0 ? 0.0 : v;
    }
    return OK;
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
UNSUPPORTED(nvmlDeviceGetTotalEccErrors)
UNSUPPORTED(nvmlDeviceGetCurrentClocksEventReasons)
UNSUPPORTED(nvmlDeviceGetCurrentClocksThrottleReasons)
UNSUPPORTED(nvmlDeviceGetPcieThroughput)
UNSUPPORTED(nvmlDeviceGetNvLinkState)
