"""Real GPUs through NVML (nvidia-ml-py's ``pynvml``).

Every NVML call can fail on its own (not supported, no permission, GPU lost,
driver reloaded), so each value is read through ``_try``/``_read`` and a failure turns
that value into ``None`` with a reason in ``GpuSample.missing`` while the rest
of the GPU, and every other GPU, keeps updating.  Functions are looked up on
the ``pynvml`` module at call time, which is also where the tests fake them.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field

import pynvml

from gputop.schema import THROTTLE_REASONS, GpuSample, MigSample, ProcSample
from gputop.sources.base import Reading, SourceError
from gputop.sources.procinfo import gpu_process

NOT_AVAILABLE_ULL = 2**64 - 1
GPM_MIN_GAP_S = 0.1  # NVML needs two GPM samples at least 100 ms apart
SLOW_EVERY = 10  # polls between readings of what rarely changes (power cap, ECC counts)
GPM_METRICS = {
    "sm_active_pct": 2,  # NVML_GPM_METRIC_SM_UTIL
    "sm_occupancy_pct": 3,  # NVML_GPM_METRIC_SM_OCCUPANCY
    "tensor_pct": 5,  # NVML_GPM_METRIC_ANY_TENSOR_UTIL
    "dram_bw_pct": 10,  # NVML_GPM_METRIC_DRAM_BW_UTIL
    "pcie_tx_mib_per_s": 20,
    "pcie_rx_mib_per_s": 21,
    "nvlink_rx_mib_per_s": 60,
    "nvlink_tx_mib_per_s": 61,
}
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")  # per MIG instance
MIG_UTIL = "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)"
# nvmlClocksEventReason* bits that slow a busy GPU, named as in schema.THROTTLE_REASONS
THROTTLE_NAMES = dict(zip((0x4, 0x8, 0x10, 0x20, 0x40, 0x80), THROTTLE_REASONS))


def _handle_key(handle) -> int:
    """A device handle's address: an event names its GPU by a new pointer object."""
    try:
        return ctypes.cast(handle, ctypes.c_void_p).value or id(handle)
    except (TypeError, ctypes.ArgumentError):
        return id(handle)


class GpuLost(Exception):
    pass


# NVML's errors as a user reads them: (error class name, after a call, after nvmlInit);
# None: the error's own text (after nvmlInit, "NVML failed to initialise: <text>")
_REASONS = (
    ("NVMLError_NotSupported", "not supported on this GPU", None),
    ("NVMLError_NoPermission", "no permission (run as root?)", "no permission to use NVML"),
    ("NVMLError_FunctionNotFound", "not in this driver's NVML", None),
    ("NVMLError_LibraryNotFound", None,
     "NVML library (libnvidia-ml.so.1) not found: no NVIDIA driver on this machine"),
    ("NVMLError_DriverNotLoaded", None, "the NVIDIA driver is not loaded"),
)


def _reason(exc: Exception, at_init: bool = False) -> str:
    """One line naming why an NVML call (or, ``at_init``, nvmlInit) failed."""
    for name, after_call, after_init in _REASONS:
        error = getattr(pynvml, name, None)
        text = after_init if at_init else after_call
        if text is not None and error is not None and isinstance(exc, error):
            return text
    return f"NVML failed to initialise: {exc}" if at_init else (str(exc) or type(exc).__name__)


@dataclass
class _Device:
    index: int
    handle: object
    name: str = ""
    uuid: str = ""
    gpm_supported: bool = False
    gpm_reason: str | None = NO_GPM
    gpm_previous: object = None
    gpm_previous_at: float = 0.0
    util_seen_us: int = 0
    proc_util_seen_us: int = 0
    process_lister: str | None = None  # which NVML process-list variant works here
    mig_gpm: dict[int, tuple[object, float]] = field(default_factory=dict)  # GI id -> sample
    lost_reason: str | None = None
    missing: dict[str, str] = field(default_factory=dict)
    bus_id: str = ""
    xid_count: int | None = None  # None: XID events cannot be watched here
    xid_last: int | None = None
    xid_reason: str | None = None
    polls: int = 0
    slow: dict[str, object] = field(default_factory=dict)  # the power cap and ECC, re-read
    slow_missing: dict[str, str] = field(default_factory=dict)  # every SLOW_EVERY polls


class NvmlSource:
    name = "nvml"

    def __init__(self, gpu_indices: list[int] | None = None,
                 clock=time.monotonic):
        self.gpu_indices = gpu_indices
        self._clock = clock
        self._devices: list[_Device] = []
        self.driver_version: str | None = None
        self.calls = 0  # NVML calls made so far (the benchmark reads it)
        self._opened = False
        self._xid_events = None
        self._xid_devices: dict[int, _Device] = {}  # handle address -> device, for events

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Initialise NVML and learn the GPUs; a second call does nothing."""
        if self._opened:
            return
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:
            raise SourceError(_reason(exc, at_init=True)) from None
        count = self._call(pynvml.nvmlDeviceGetCount)
        wanted = self.gpu_indices if self.gpu_indices is not None else list(range(count))
        bad = [i for i in wanted if not 0 <= i < count]
        if bad:
            raise SourceError(f"no GPU {bad[0]}: this machine has {count} (0-{count - 1})")
        for index in wanted:
            handle = self._call(pynvml.nvmlDeviceGetHandleByIndex, index)
            device = _Device(index=index, handle=handle)
            device.name = self._text(self._try(pynvml.nvmlDeviceGetName, handle)[0])
            device.uuid = self._text(self._try(pynvml.nvmlDeviceGetUUID, handle)[0])
            pci, _ = self._try(pynvml.nvmlDeviceGetPciInfo, handle)
            device.bus_id = self._text(getattr(pci, "busId", None))
            self._probe_gpm(device)
            self._devices.append(device)
        self._watch_xids()
        self.driver_version = self._text(self._try(pynvml.nvmlSystemGetDriverVersion)[0]) or None
        self._opened = True

    def close(self) -> None:
        if self._xid_events is not None:
            self._try(pynvml.nvmlEventSetFree, self._xid_events)
            self._xid_events = None
        for device in self._devices:
            if device.gpm_previous is not None:
                self._try(pynvml.nvmlGpmSampleFree, device.gpm_previous)
                device.gpm_previous = None
            for sample, _ in device.mig_gpm.values():
                self._try(pynvml.nvmlGpmSampleFree, sample)
            device.mig_gpm.clear()
        if self._opened:
            self._opened = False
            try:
                pynvml.nvmlShutdown()
            except pynvml.NVMLError:
                pass

    @property
    def devices(self) -> list[_Device]:
        return list(self._devices)

    # ------------------------------------------------------------ helpers

    def _call(self, fn, *args):
        self.calls += 1
        return fn(*args)

    def _try(self, fn, *args) -> tuple[object, str | None]:
        """(value, None) or (None, reason); a lost GPU raises GpuLost."""
        try:
            return self._call(fn, *args), None
        except pynvml.NVMLError_GpuIsLost:
            raise GpuLost("GPU is lost (fell off the bus or was reset)") from None
        except pynvml.NVMLError as exc:
            return None, _reason(exc)

    def _read(self, out: dict, missing: dict[str, str], name: str, convert, fn, *args) -> None:
        """``out[name]`` = ``convert`` of ``fn(*args)``, or None with the reason in
        ``missing[name]``."""
        value, why = self._try(fn, *args)
        out[name] = None if value is None else convert(value)
        if why:
            missing[name] = why

    @staticmethod
    def _text(value) -> str:
        if value is None:
            return ""
        return value.decode() if isinstance(value, bytes) else str(value)

    def _probe_gpm(self, device: _Device) -> None:
        support, reason = self._try(pynvml.nvmlGpmQueryDeviceSupport, device.handle)
        if support is not None and getattr(support, "isSupportedDevice", 0):
            device.gpm_supported, device.gpm_reason = True, None
        else:
            device.gpm_reason = NO_GPM if reason in (None, "not supported on this GPU",
                                                     "not in this driver's NVML") else reason

    def _watch_xids(self) -> None:
        """Register every GPU for critical XID events (the driver's error codes: 79 fell off
        the bus, 48 double-bit ECC, 13/31/43 a faulting application); ``_drain_xids``
        collects them without waiting.  Where NVML refuses, XIDs stay unknown, not 0."""
        events, why = self._try(pynvml.nvmlEventSetCreate)
        for device in self._devices:
            if events is None:
                device.xid_reason = why
                continue
            _, why_not = self._try(pynvml.nvmlDeviceRegisterEvents, device.handle,
                                   pynvml.nvmlEventTypeXidCriticalError, events)
            device.xid_reason = why_not
            device.xid_count = None if why_not else 0
        self._xid_events = events
        self._xid_devices = {_handle_key(d.handle): d for d in self._devices}

    def _drain_xids(self) -> None:
        """Take the XID events waiting in the set (a 0 ms wait: never blocks a tick)."""
        if self._xid_events is None:
            return
        for _ in range(64):  # a storm of events is counted over the next ticks
            try:
                data = self._call(pynvml.nvmlEventSetWait_v2, self._xid_events, 0)
            except pynvml.NVMLError:  # NVML_ERROR_TIMEOUT: nothing is waiting
                return
            device = self._xid_devices.get(_handle_key(data.device))
            if device is not None and device.xid_count is not None:
                device.xid_count += 1
                device.xid_last = int(data.eventData)

    # ------------------------------------------------------------ polling

    def poll(self, time_mono_s: float = 0.0) -> Reading:
        gpus, processes = [], []
        self._drain_xids()
        for device in self._devices:
            if device.lost_reason is None:
                try:
                    gpu, procs = self._poll_device(device)
                    gpus.append(gpu)
                    processes.extend(procs)
                    continue
                except GpuLost as exc:
                    device.lost_reason = str(exc)
            gpus.append(GpuSample(index=device.index, name=device.name, uuid=device.uuid,
                                  lost=True, missing={"all": device.lost_reason}))
        return Reading(gpus=tuple(gpus), processes=tuple(processes))

    def _poll_device(self, device: _Device) -> tuple[GpuSample, list[ProcSample]]:
        h = device.handle
        missing: dict[str, str] = {}
        values: dict[str, object] = {}

        rates, why = self._try(pynvml.nvmlDeviceGetUtilizationRates, h)
        if rates is None:
            missing["util_gpu_pct"] = missing["util_mem_pct"] = why
        else:
            values["util_gpu_pct"] = float(rates.gpu)
            values["util_mem_pct"] = float(rates.memory)
        values["util_gpu_samples_pct"] = self._util_samples(device)

        # v2 splits off the driver's reserve (~0.6 GiB on an H200), as nvidia-smi does; the
        # v1 "used" counts it, which read 0.6 GiB above nvidia-smi on the H200 check.
        memory, why = self._try(pynvml.nvmlDeviceGetMemoryInfo, h, pynvml.nvmlMemory_v2)
        if memory is None:
            memory, why = self._try(pynvml.nvmlDeviceGetMemoryInfo, h)
        if memory is None:
            missing["mem_used_bytes"] = why
        else:
            values["mem_total_bytes"] = int(memory.total)
            values["mem_used_bytes"] = int(memory.used)
            reserved = getattr(memory, "reserved", None)
            values["mem_reserved_bytes"] = None if reserved is None else int(reserved)

        self._read(values, missing, "power_w", lambda mw: mw / 1000.0,
                   pynvml.nvmlDeviceGetPowerUsage, h)
        self._read(values, missing, "temp_c", float,
                   pynvml.nvmlDeviceGetTemperature, h, pynvml.NVML_TEMPERATURE_GPU)
        clock, why = self._try(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_SM)
        values["sm_clock_mhz"] = None if clock is None else float(clock)
        clock, _ = self._try(pynvml.nvmlDeviceGetClockInfo, h, pynvml.NVML_CLOCK_MEM)
        values["mem_clock_mhz"] = None if clock is None else float(clock)
        values["throttle"] = self._throttle(h, missing)
        values.update(self._board(device, missing))

        values.update(self._gpm(device, missing))
        total = values.get("mem_total_bytes")
        mig_mode, migs, on_instances = self._migs(device)
        procs = self._processes(device, total, missing, on_instances)
        if mig_mode:
            for name in ("util_gpu_pct", "util_mem_pct"):
                if values.get(name) is None:
                    missing[name] = MIG_UTIL
            for name in ACTIVITY:
                if values.get(name) is None and name in missing:
                    missing[name] = f"read per MIG instance in MIG mode ({missing[name]})"
        if device.xid_reason:
            missing["xid_count"] = device.xid_reason
        gpu = GpuSample(index=device.index, name=device.name, uuid=device.uuid,
                        bus_id=device.bus_id, mig_mode=mig_mode, xid_count=device.xid_count,
                        xid_last=device.xid_last, missing=missing, migs=migs, **values)
        return gpu, procs

    def _board(self, device: _Device, missing: dict[str, str]) -> dict[str, object]:
        """Fan, performance state, power cap and ECC counts: nvidia-smi's table.  Each may be
        unsupported on its own (an SXM board has no fan; ECC can be off).  The cap and the
        ECC counters change rarely and are read every SLOW_EVERY polls (three calls fewer
        per GPU per tick; a new ECC error shows within SLOW_EVERY ticks)."""
        h, out = device.handle, {}
        self._read(out, missing, "fan_pct", float, pynvml.nvmlDeviceGetFanSpeed, h)
        pstate, why = self._try(pynvml.nvmlDeviceGetPerformanceState, h)
        out["pstate"] = pstate if pstate is not None and 0 <= pstate <= 15 else None
        if out["pstate"] is None:
            missing["pstate"] = why or "unknown"
        if device.polls % SLOW_EVERY == 0:
            device.slow, device.slow_missing = self._slow_board(h)
        device.polls += 1
        missing.update(device.slow_missing)
        return {**out, **device.slow}

    def _slow_board(self, h) -> tuple[dict[str, object], dict[str, str]]:
        out, missing = {}, {}
        self._read(out, missing, "power_limit_w", lambda mw: mw / 1000.0,
                   pynvml.nvmlDeviceGetEnforcedPowerLimit, h)
        for name, kind in (("ecc_uncorrected", pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
                           ("ecc_corrected", pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED)):
            count, why = self._try(pynvml.nvmlDeviceGetTotalEccErrors, h, kind,
                                   pynvml.NVML_VOLATILE_ECC)
            out[name] = None if count is None else int(count)
            if why:
                missing[name] = "ECC is off or " + why if why == "not supported on this GPU" \
                    else why
        return out, missing

    def _util_samples(self, device: _Device) -> tuple[float, ...]:
        """Driver-buffered GPU-Util samples newer than the last seen one, oldest first."""
        result, _ = self._try(pynvml.nvmlDeviceGetSamples, device.handle,
                              pynvml.NVML_GPU_UTILIZATION_SAMPLES, device.util_seen_us)
        if not result:
            return ()
        _value_type, samples = result
        fresh = sorted((s for s in samples if s.timeStamp > device.util_seen_us),
                       key=lambda s: s.timeStamp)
        if not fresh:
            return ()
        first_call = device.util_seen_us == 0
        device.util_seen_us = fresh[-1].timeStamp
        if first_call:
            fresh = fresh[-10:]  # the buffer can hold minutes; a first tick shows the latest
        return tuple(float(s.sampleValue.uiVal) for s in fresh)

    def _throttle(self, handle, missing: dict[str, str]) -> tuple[str, ...]:
        reasons, why = self._try(getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons",
                                         pynvml.nvmlDeviceGetCurrentClocksThrottleReasons), handle)
        if reasons is None:  # unknown, not "none": the exporter then says nothing
            missing["throttle"] = why or "unknown"
            return ()
        return tuple(name for bit, name in THROTTLE_NAMES.items() if reasons & bit)

    def _gpm(self, device: _Device, missing: dict[str, str]) -> dict[str, float]:
        """SM activity from two GPM samples; nothing (not 0) until two exist."""
        if not device.gpm_supported:
            for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[name] = device.gpm_reason or NO_GPM
            return {}
        now = self._clock()
        if device.gpm_previous is not None and now - device.gpm_previous_at < GPM_MIN_GAP_S:
            for name in GPM_METRICS:
                missing[name] = "sampling faster than GPM allows (100 ms)"
            return {}
        sample, why = self._try(pynvml.nvmlGpmSampleAlloc)
        if sample is None:
            missing["sm_active_pct"] = f"GPM: {why}"
            return {}
        got, why = self._try(pynvml.nvmlGpmSampleGet, device.handle, sample)
        if got is None:
            self._try(pynvml.nvmlGpmSampleFree, sample)
            missing["sm_active_pct"] = f"GPM: {why}"
            return {}
        previous, device.gpm_previous, device.gpm_previous_at = device.gpm_previous, sample, now
        if previous is None:
            for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[name] = "GPM needs a second sample"
            return {}
        out = self._gpm_metrics(previous, sample, GPM_METRICS, missing)
        self._try(pynvml.nvmlGpmSampleFree, previous)
        return {k: v for k, v in out.items() if k in GpuSample.__dataclass_fields__}

    def _gpm_metrics(self, previous, sample, metrics: dict[str, int],
                     missing: dict[str, str]) -> dict[str, float]:
        """``metrics`` (name -> GPM metric id) between two samples; each one NVML refuses is
        missing with its reason."""
        request = pynvml.c_nvmlGpmMetricsGet_t()
        request.version = pynvml.NVML_GPM_METRICS_GET_VERSION
        request.numMetrics = len(metrics)
        request.sample1 = previous
        request.sample2 = sample
        for i, metric_id in enumerate(metrics.values()):
            request.metrics[i].metricId = metric_id
        done, why = self._try(pynvml.nvmlGpmMetricsGet, request)
        out: dict[str, float] = {}
        if done is None:
            missing["sm_active_pct"] = f"GPM: {why}"
            return out
        for i, name in enumerate(metrics):
            metric = done.metrics[i]
            if metric.nvmlReturn == pynvml.NVML_SUCCESS:
                out[name] = float(metric.value)
            else:
                missing[name] = _reason(pynvml.NVMLError(metric.nvmlReturn))
        return out

    # ------------------------------------------------------------ processes

    _LISTERS = ("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                "nvmlDeviceGetComputeRunningProcesses")

    def _running(self, device: _Device, total: int | None) -> tuple[list, str | None]:
        """Compute + graphics processes, trying newer process-struct layouts first.

        Drivers differ in which layout (v3/v2/v1) they fill; a list whose entries look
        garbled (pid 0, memory above the card) is read again with the next older one,
        and the variant that worked is kept for this GPU."""
        names = [device.process_lister] if device.process_lister else list(self._LISTERS)
        last_reason = None
        for name in names:
            fn = getattr(pynvml, name, None)
            if fn is None:
                continue
            procs, why = self._try(fn, device.handle)
            if procs is None:  # keep the most telling reason ("no permission" over "not found")
                if last_reason is None or why != "not in this driver's NVML":
                    last_reason = why
                continue
            if any(p.pid == 0 or (total and p.usedGpuMemory not in (None, NOT_AVAILABLE_ULL)
                                  and p.usedGpuMemory > total) for p in procs):
                last_reason = "process list garbled (driver/NVML struct mismatch)"
                continue
            device.process_lister = name
            graphics, _ = self._try(pynvml.nvmlDeviceGetGraphicsRunningProcesses, device.handle)
            return list(procs) + list(graphics or []), None
        return [], last_reason or "process list unavailable"

    def _processes(self, device: _Device, total: int | None, missing: dict[str, str],
                   on_instances: dict[int, tuple[int, int | None]] | None = None,
                   ) -> list[ProcSample]:
        """The GPU's processes; ``on_instances`` (pid -> (MIG index, memory)) from the MIG
        instances' own lists says which instance each runs on (and adds those the parent's
        list leaves out)."""
        running, why = self._running(device, total)
        on_instances = on_instances or {}
        if why and not on_instances:
            missing["processes"] = why
        util = self._process_util(device)
        by_pid: dict[int, int | None] = {}
        for p in running:
            mem = _memory(p.usedGpuMemory)
            if p.pid in by_pid and by_pid[p.pid] is not None and mem is not None:
                mem = max(mem, by_pid[p.pid])  # listed as compute and graphics: same memory
            by_pid[p.pid] = mem if p.pid not in by_pid or mem is not None else by_pid[p.pid]
        for pid, (_, mem) in on_instances.items():
            if by_pid.get(pid) is None:
                by_pid[pid] = mem
        return [gpu_process(pid, device.index, mem, *util.get(pid, (None, None)),
                            mig_index=on_instances[pid][0] if pid in on_instances else None)
                for pid, mem in sorted(by_pid.items())]

    def _process_util(self, device: _Device) -> dict[int, tuple[float, float]]:
        """Per-process (SM, memory-controller) util from samples newer than the last seen
        (NVIDIA: reliable only with one process on the GPU); the newest sample per pid
        wins."""
        samples, _ = self._try(pynvml.nvmlDeviceGetProcessUtilization, device.handle,
                               device.proc_util_seen_us)
        if not samples:
            return {}
        newest: dict[int, object] = {}
        for s in samples:
            if s.timeStamp <= device.proc_util_seen_us:
                continue
            if s.pid not in newest or s.timeStamp > newest[s.pid].timeStamp:
                newest[s.pid] = s
        if newest:
            device.proc_util_seen_us = max(s.timeStamp for s in newest.values())
        return {pid: (float(s.smUtil), float(s.memUtil)) for pid, s in newest.items()}

    # ------------------------------------------------------------ MIG

    def _migs(self, device: _Device) -> tuple[bool | None, tuple[MigSample, ...],
                                                dict[int, tuple[int, int | None]]]:
        """(MIG mode on?, its instances, pid -> (instance index, its memory there)); mode
        None where NVML cannot say (pre-Ampere)."""
        mode, _ = self._try(pynvml.nvmlDeviceGetMigMode, device.handle)
        if not mode or mode[0] != 1:
            for gi in list(device.mig_gpm):  # MIG turned off: its samples are of no use
                self._try(pynvml.nvmlGpmSampleFree, device.mig_gpm.pop(gi)[0])
            return (None if not mode else False), (), {}
        count, _ = self._try(pynvml.nvmlDeviceGetMaxMigDeviceCount, device.handle)
        out, on_instances = [], {}
        for i in range(min(count or 0, MAX_MIG_INSTANCES)):
            handle, _ = self._try(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, device.handle, i)
            if handle is None:
                continue  # no instance at this index (the table has holes)
            missing: dict[str, str] = {}
            memory, why = self._try(pynvml.nvmlDeviceGetMemoryInfo, handle)
            if memory is None:
                missing["mem_used_bytes"] = why
            name = self._text(self._try(pynvml.nvmlDeviceGetName, handle)[0])
            gi, why = self._try(pynvml.nvmlDeviceGetGpuInstanceId, handle)
            if gi is None:
                missing["gpu_instance_id"] = why
            ci, _ = self._try(pynvml.nvmlDeviceGetComputeInstanceId, handle)
            attributes, _ = self._try(pynvml.nvmlDeviceGetAttributes, handle)
            for pid, mem in self._instance_processes(device, handle, missing):
                on_instances[pid] = (i, mem)
            out.append(MigSample(
                index=i, name=name, uuid=self._text(self._try(pynvml.nvmlDeviceGetUUID, handle)[0]),
                mem_total_bytes=None if memory is None else int(memory.total),
                mem_used_bytes=None if memory is None else int(memory.used),
                gpu_instance_id=gi, compute_instance_id=ci, profile=mig_profile(name),
                sm_count=getattr(attributes, "multiprocessorCount", None),
                missing=missing, **self._mig_gpm(device, gi, missing)))
        return True, tuple(out), on_instances

    def _instance_processes(self, device: _Device, handle,
                            missing: dict[str, str]) -> list[tuple[int, int | None]]:
        """(pid, memory) of the processes on one MIG instance, listed by its own handle."""
        names = [device.process_lister] if device.process_lister else list(self._LISTERS)
        why = None
        for name in names:
            fn = getattr(pynvml, name, None)
            if fn is None:
                continue
            procs, why = self._try(fn, handle)
            if procs is not None:
                return [(p.pid, _memory(p.usedGpuMemory)) for p in procs if p.pid]
        missing["processes"] = why or "process list unavailable"
        return []

    def _mig_gpm(self, device: _Device, gpu_instance: int | None,
                 missing: dict[str, str]) -> dict[str, float]:
        """SM / DRAM / tensor activity of one GPU instance from two GPM MIG samples
        (``nvmlGpmMigSampleGet``), kept per instance and swapped each poll like the
        device's; nothing (not 0) until two exist."""
        def lacking(reason: str) -> dict[str, float]:
            for name in ACTIVITY:
                missing[name] = reason
            return {}
        if not device.gpm_supported:
            return lacking(device.gpm_reason or NO_GPM)
        if gpu_instance is None:
            return lacking("no GPU instance id for this MIG device")
        get = getattr(pynvml, "nvmlGpmMigSampleGet", None)
        if get is None:
            return lacking("this nvidia-ml-py has no nvmlGpmMigSampleGet")
        now = self._clock()
        previous, previous_at = device.mig_gpm.get(gpu_instance, (None, 0.0))
        if previous is not None and now - previous_at < GPM_MIN_GAP_S:
            return lacking("sampling faster than GPM allows (100 ms)")
        sample, why = self._try(pynvml.nvmlGpmSampleAlloc)
        if sample is None:
            return lacking(f"GPM: {why}")
        got, why = self._try(get, device.handle, gpu_instance, sample)
        if got is None:
            self._try(pynvml.nvmlGpmSampleFree, sample)
            return lacking(f"GPM MIG sample: {why}")
        device.mig_gpm[gpu_instance] = (sample, now)
        if previous is None:
            return lacking("GPM needs a second sample")
        out = self._gpm_metrics(previous, sample, {name: GPM_METRICS[name] for name in ACTIVITY},
                                missing)
        self._try(pynvml.nvmlGpmSampleFree, previous)
        return out


MAX_MIG_INSTANCES = 8  # an A100/H100 splits into at most 7


def _memory(used) -> int | None:
    return None if used is None or used == NOT_AVAILABLE_ULL else int(used)


def mig_profile(name: str) -> str:
    """ "1g.10gb" from a MIG device's name ("NVIDIA H100 80GB HBM3 MIG 1g.10gb")."""
    _, found, profile = name.rpartition("MIG ")
    return profile.strip() if found else ""
