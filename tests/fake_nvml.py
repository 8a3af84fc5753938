"""A fake NVML at the ``pynvml`` function level, reproducing real behaviour.

No GPU exists on these machines, so tests replace the functions of the real
``pynvml`` module (its error classes, constants and ctypes structs stay real):
GPUs of different generations (Hopper with GPM, Ampere without), process lists
with the driver struct quirks (v3 missing on old drivers; v3 present but
garbled on some 535.x drivers; "not available" memory), errors raised from
single calls, a GPU that is lost mid-run, buffered utilization samples and
per-process utilization samples with timestamps.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from types import SimpleNamespace

import pynvml

GiB = 2**30


def err(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)  # NVMLError(code) builds the matching subclass


@dataclass
class FakeProc:
    pid: int
    mem_bytes: int | None
    sm_util: int = 0


@dataclass
class FakeGpu:
    name: str
    total_bytes: int
    used_bytes: int
    util_pct: int = 0
    mem_util_pct: int = 0
    gpm: dict[int, float] | None = None  # metric id -> value; None: no GPM (pre-Hopper)
    procs: list[FakeProc] = field(default_factory=list)
    # which process-list functions the driver has and how they behave
    process_api: str = "v3"  # "v3": fine; "v2-only": v3 missing; "garbled-v3": v3 returns junk
    failing: dict[str, int] = field(default_factory=dict)  # function name -> NVML error code
    lost_after_polls: int | None = None
    throttle_bits: int = 0
    mig_instances: list[tuple[str, int, int]] = field(default_factory=list)
    power_mw: int = 350_000
    temp_c: int = 55
    reserved_bytes: int = 0  # the driver's reserve (v2 reports it apart from "used")
    memory_v2: bool = True  # False: an old driver without nvmlDeviceGetMemoryInfo_v2
    sm_clock_mhz: int = 1980
    mem_clock_mhz: int = 2619
    fan_pct: int | None = None  # None: no fan (SXM boards): NVML says "not supported"
    pstate: int = 0
    power_limit_mw: int = 700_000
    ecc_counts: tuple[int, int] | None = (0, 0)  # (corrected, uncorrected); None: ECC off
    pending_xids: list[int] = field(default_factory=list)  # delivered by the event set


class FakeNvml:
    def __init__(self, gpus: list[FakeGpu], init_error: int | None = None,
                 driver: str = "550.54.15"):
        self.gpus = gpus
        self.init_error = init_error
        self.driver = driver
        self.calls: list[str] = []
        self.util_polls = [0] * len(gpus)
        self.now_us = 1_700_000_000_000_000
        self._gpm_samples: dict[int, tuple[int, int]] = {}  # address -> (gpu, serial)
        self._serial = 0
        self.initialised = 0

    # -------------------------------------------------------------- install

    def install(self, monkeypatch) -> FakeNvml:
        for name in dir(self):
            if name.startswith("nvml"):
                monkeypatch.setattr(pynvml, name, getattr(self, name), raising=False)
        if self.any_api("garbled-v3") or self.any_api("v3") or self.any_api("v2-only"):
            monkeypatch.setattr(pynvml, "nvmlDeviceGetComputeRunningProcesses_v3",
                                self._procs_v3)
            monkeypatch.setattr(pynvml, "nvmlDeviceGetComputeRunningProcesses_v2",
                                self._procs_v2)
            monkeypatch.setattr(pynvml, "nvmlDeviceGetComputeRunningProcesses", self._procs_v3)
        return self

    def any_api(self, api: str) -> bool:
        return any(g.process_api == api for g in self.gpus)

    # -------------------------------------------------------------- plumbing

    def _gpu(self, handle, fn: str) -> FakeGpu:
        self.calls.append(fn)
        index = handle.index
        gpu = self.gpus[index]
        if handle.mig is None and gpu.lost_after_polls is not None and \
                self.util_polls[index] > gpu.lost_after_polls:
            raise err(pynvml.NVML_ERROR_GPU_IS_LOST)
        if fn in gpu.failing:
            raise err(gpu.failing[fn])
        return gpu

    def advance(self, seconds: float = 1.0) -> None:
        self.now_us += int(seconds * 1e6)

    # -------------------------------------------------------------- system

    def nvmlInit(self):
        self.calls.append("nvmlInit")
        if self.init_error is not None:
            raise err(self.init_error)
        self.initialised += 1

    def nvmlShutdown(self):
        self.calls.append("nvmlShutdown")
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self):
        return self.driver

    def nvmlSystemGetNVMLVersion(self):
        return "12." + self.driver

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        if not 0 <= index < len(self.gpus):
            raise err(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return SimpleNamespace(index=index, mig=None)

    def nvmlDeviceGetName(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetName")
        return gpu.mig_instances[handle.mig][0] if handle.mig is not None else gpu.name

    def nvmlDeviceGetUUID(self, handle):
        self._gpu(handle, "nvmlDeviceGetUUID")
        suffix = "" if handle.mig is None else f"-mig{handle.mig}"
        return f"GPU-fake-{handle.index}{suffix}"

    # -------------------------------------------------------------- readings

    def nvmlDeviceGetUtilizationRates(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetUtilizationRates")
        self.util_polls[handle.index] += 1
        if gpu.mig_instances:  # the driver's answer in MIG mode (FACTS.md section 1)
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(gpu=gpu.util_pct, memory=gpu.mem_util_pct)

    def nvmlDeviceGetSamples(self, handle, sampling_type, last_seen_us):
        gpu = self._gpu(handle, "nvmlDeviceGetSamples")
        assert sampling_type == pynvml.NVML_GPU_UTILIZATION_SAMPLES
        # the driver keeps one sample per 1/6 s for the last ~10 s, whatever was asked
        samples = []
        for k in range(60):
            ts = self.now_us - k * 166_667
            value = pynvml.c_nvmlValue_t()
            value.uiVal = max(0, min(100, gpu.util_pct + (k % 3) - 1))
            samples.append(SimpleNamespace(timeStamp=ts, sampleValue=value))
        return pynvml.NVML_VALUE_TYPE_UNSIGNED_INT, [s for s in samples if s.timeStamp > last_seen_us]

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        gpu = self._gpu(handle, "nvmlDeviceGetMemoryInfo")
        if handle.mig is not None:
            _, total, used = gpu.mig_instances[handle.mig]
            return SimpleNamespace(total=total, used=used, free=total - used)
        if version is not None and not gpu.memory_v2:
            raise err(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        if version is None:  # v1: the driver's reserve is inside "used"
            used = gpu.used_bytes + gpu.reserved_bytes
            return SimpleNamespace(total=gpu.total_bytes, used=used, free=gpu.total_bytes - used)
        return SimpleNamespace(total=gpu.total_bytes, reserved=gpu.reserved_bytes,
                               used=gpu.used_bytes,
                               free=gpu.total_bytes - gpu.used_bytes - gpu.reserved_bytes)

    def nvmlDeviceGetPowerUsage(self, handle):
        return self._gpu(handle, "nvmlDeviceGetPowerUsage").power_mw

    def nvmlDeviceGetTemperature(self, handle, sensor):
        return self._gpu(handle, "nvmlDeviceGetTemperature").temp_c

    def nvmlDeviceGetClockInfo(self, handle, clock):
        gpu = self._gpu(handle, "nvmlDeviceGetClockInfo")
        return gpu.mem_clock_mhz if clock == pynvml.NVML_CLOCK_MEM else gpu.sm_clock_mhz

    def nvmlDeviceGetFanSpeed(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetFanSpeed")
        if gpu.fan_pct is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.fan_pct

    def nvmlDeviceGetPerformanceState(self, handle):
        return self._gpu(handle, "nvmlDeviceGetPerformanceState").pstate

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return self._gpu(handle, "nvmlDeviceGetEnforcedPowerLimit").power_limit_mw

    def nvmlDeviceGetTotalEccErrors(self, handle, error_type, counter_type):
        gpu = self._gpu(handle, "nvmlDeviceGetTotalEccErrors")
        assert counter_type == pynvml.NVML_VOLATILE_ECC
        if gpu.ecc_counts is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        corrected, uncorrected = gpu.ecc_counts
        return uncorrected if error_type == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED \
            else corrected

    def nvmlDeviceGetPciInfo(self, handle):
        self._gpu(handle, "nvmlDeviceGetPciInfo")
        return SimpleNamespace(busId=f"00000000:{0x18 + 0x10 * handle.index:02X}:00.0".encode())

    # -------------------------------------------------------------- events (XID)

    def nvmlEventSetCreate(self):
        self.calls.append("nvmlEventSetCreate")
        self.event_handles: list = []
        return SimpleNamespace(kind="event-set")

    def nvmlDeviceRegisterEvents(self, handle, event_types, event_set):
        self._gpu(handle, "nvmlDeviceRegisterEvents")
        assert event_types & pynvml.nvmlEventTypeXidCriticalError
        self.event_handles.append(handle)

    def nvmlEventSetWait_v2(self, event_set, timeout_ms):
        self.calls.append("nvmlEventSetWait_v2")
        assert timeout_ms == 0, "a tick must never wait for events"
        for handle in self.event_handles:
            gpu = self.gpus[handle.index]
            if gpu.pending_xids:
                return SimpleNamespace(device=handle, eventType=pynvml.nvmlEventTypeXidCriticalError,
                                       eventData=gpu.pending_xids.pop(0))
        raise err(pynvml.NVML_ERROR_TIMEOUT)

    def nvmlEventSetFree(self, event_set):
        self.calls.append("nvmlEventSetFree")

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self._gpu(handle, "nvmlDeviceGetCurrentClocksEventReasons").throttle_bits

    # -------------------------------------------------------------- GPM

    def nvmlGpmQueryDeviceSupport(self, handle):
        gpu = self._gpu(handle, "nvmlGpmQueryDeviceSupport")
        if gpu.gpm is None:
            raise err(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(version=1, isSupportedDevice=1)

    def nvmlGpmSampleAlloc(self):
        self.calls.append("nvmlGpmSampleAlloc")
        return pynvml.c_nvmlGpmSample_t(pynvml.struct_c_nvmlGpmSample_t())

    def nvmlGpmSampleGet(self, handle, sample):
        self._gpu(handle, "nvmlGpmSampleGet")
        self._serial += 1
        self._gpm_samples[ctypes.addressof(sample.contents)] = (handle.index, self._serial)
        return sample

    def nvmlGpmSampleFree(self, sample):
        self.calls.append("nvmlGpmSampleFree")
        self._gpm_samples.pop(ctypes.addressof(sample.contents), None)

    def nvmlGpmMetricsGet(self, request):
        self.calls.append("nvmlGpmMetricsGet")
        first = self._gpm_samples[ctypes.addressof(request.sample1.contents)]
        second = self._gpm_samples[ctypes.addressof(request.sample2.contents)]
        assert first[0] == second[0] and first[1] < second[1], "samples of one GPU, in order"
        gpu = self.gpus[first[0]]
        for i in range(request.numMetrics):
            metric = request.metrics[i]
            if metric.metricId in gpu.gpm:
                metric.value = gpu.gpm[metric.metricId]
                metric.nvmlReturn = pynvml.NVML_SUCCESS
            else:
                metric.nvmlReturn = pynvml.NVML_ERROR_NOT_SUPPORTED
        return request

    # -------------------------------------------------------------- processes

    def _proc(self, p: FakeProc):
        mem = pynvml.NVML_VALUE_NOT_AVAILABLE_ulonglong.value if p.mem_bytes is None else p.mem_bytes
        return SimpleNamespace(pid=p.pid, usedGpuMemory=mem, gpuInstanceId=0xFFFFFFFF,
                               computeInstanceId=0xFFFFFFFF)

    def _procs_v3(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetComputeRunningProcesses_v3")
        if gpu.process_api == "v2-only":
            raise err(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)
        if gpu.process_api == "garbled-v3":  # a v2 struct read as v3: shifted fields
            return [SimpleNamespace(pid=0, usedGpuMemory=p.pid * 2**32) for p in gpu.procs]
        return [self._proc(p) for p in gpu.procs]

    def _procs_v2(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetComputeRunningProcesses_v2")
        return [self._proc(p) for p in gpu.procs]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle):
        self._gpu(handle, "nvmlDeviceGetGraphicsRunningProcesses")
        return []

    def nvmlDeviceGetProcessUtilization(self, handle, last_seen_us):
        gpu = self._gpu(handle, "nvmlDeviceGetProcessUtilization")
        if not gpu.procs:
            raise err(pynvml.NVML_ERROR_NOT_FOUND)
        out = []
        for p in gpu.procs:  # an old and a new sample per process; NVML filters loosely
            for age_us, util in ((3_000_000, 1), (100_000, p.sm_util)):
                out.append(SimpleNamespace(pid=p.pid, timeStamp=self.now_us - age_us,
                                           smUtil=util, memUtil=0, encUtil=0, decUtil=0))
        return [s for s in out if s.timeStamp > last_seen_us - 5_000_000]

    # -------------------------------------------------------------- MIG

    def nvmlDeviceGetMigMode(self, handle):
        gpu = self._gpu(handle, "nvmlDeviceGetMigMode")
        if not gpu.mig_instances:
            return [0, 0]  # MIG-capable (A100/H100), mode off
        return [1, 1]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle):
        return 7

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle, index):
        gpu = self._gpu(handle, "nvmlDeviceGetMigDeviceHandleByIndex")
        if index >= len(gpu.mig_instances):
            raise err(pynvml.NVML_ERROR_NOT_FOUND)
        return SimpleNamespace(index=handle.index, mig=index)


def hopper_and_ampere(pid_hopper: int, pid_ampere: int) -> list[FakeGpu]:
    """The standard pair: an H100 serving at 97% util but 11% SM active, and an A100."""
    return [
        FakeGpu("NVIDIA H100 80GB HBM3", 80 * GiB, 74 * GiB, util_pct=97, mem_util_pct=20,
                gpm={2: 11.0, 3: 5.0, 5: 3.0, 10: 21.0, 20: 1200.0, 21: 800.0},
                procs=[FakeProc(pid_hopper, 72 * GiB, sm_util=11)]),
        FakeGpu("NVIDIA A100-SXM4-40GB", 40 * GiB, 12 * GiB, util_pct=40, mem_util_pct=10,
                procs=[FakeProc(pid_ampere, None, sm_util=38)], process_api="v2-only",
                failing={"nvmlDeviceGetPowerUsage": pynvml.NVML_ERROR_NOT_SUPPORTED}),
    ]
