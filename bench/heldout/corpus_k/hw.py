"""GPU boards and the physics every trace shares: power from activity, clocks under a cap or a
limit, temperature lag, and the GpuSample / ProcSample gputop's NVML source would write."""

from __future__ import annotations

from dataclasses import dataclass

from gputop.schema import GpuSample, MigSample, ProcSample

GIB = 2**30
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIRST = "GPM needs a second sample"
FAN = "not supported on this GPU"
MIG_UTIL = "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)"


@dataclass(frozen=True)
class Spec:
    name: str
    mem_total: int
    tdp: float
    idle_w: float  # with a CUDA context open (P0)
    fmax: float  # boost SM clock with work
    hbm_gbs: float  # peak DRAM bandwidth, GB/s
    tflops: float  # dense bf16
    gpm: bool
    mem_clock: float
    reserved: int  # the driver's reserve (NVML v2)
    nvlink_gbs: float  # per direction, 0: PCIe only
    hot: float  # temperature at full power, C


SPECS = {
    "H100": Spec("NVIDIA H100 80GB HBM3", 85520809984, 700, 72, 1980, 3350, 989, True, 2619,
                 553 * 2**20, 450, 74),
    "H200": Spec("NVIDIA H200", 150754820096, 700, 120, 1980, 4800, 989, True, 3201,
                 644939776, 450, 72),
    "B200": Spec("NVIDIA B200", 191476940800, 1000, 150, 1965, 8000, 2250, True, 3996,
                 1100 * 2**20, 900, 70),
    "A100": Spec("NVIDIA A100-SXM4-80GB", 85899345920, 400, 58, 1410, 2039, 312, False, 1593,
                 0, 300, 70),
    "L40S": Spec("NVIDIA L40S", 48305799168, 350, 36, 2520, 864, 362, False, 9001,
                 0, 0, 80),
    "A10G": Spec("NVIDIA A10G", 24146608128, 300, 27, 1710, 600, 70, False, 6251, 0, 0, 79),
}


def power_demand(spec: Spec, busy: float, sm: float, tensor: float, dram: float,
                 f: float) -> float:
    """Board power for an activity mix at SM clock f (calibrated on the real H200: matmul
    wants more than 700 W and sits at the cap near 1460 MHz; a D2D copy at 88% DRAM draws
    ~474 W; one-element kernels at 100% util draw idle power)."""
    dyn = 0.05 * busy + 0.12 * sm + 1.2 * tensor + 0.5 * dram
    return spec.idle_w + (spec.tdp - spec.idle_w) * dyn * (f / spec.fmax)


def settle(spec: Spec, busy: float, sm: float, tensor: float, dram: float,
           cap_w: float | None = None, limit_mhz: float | None = None,
           limit_reason: str = "") -> tuple[float, float, tuple[str, ...]]:
    """(SM clock, power, throttle reasons) for the activity: the clock falls until the power
    fits the cap; a limit (thermal, HW slowdown, power brake) holds it lower still."""
    cap = cap_w or spec.tdp
    f = spec.fmax
    reasons: list[str] = []
    p = power_demand(spec, busy, sm, tensor, dram, f)
    if p > cap and busy > 0.05:
        f *= (cap - spec.idle_w) / (p - spec.idle_w)
        p = cap
        reasons.append("power cap")
    if limit_mhz is not None and f > limit_mhz:
        f = limit_mhz
        p = power_demand(spec, busy, sm, tensor, dram, f)
        reasons = [limit_reason] if limit_reason else reasons
    f = max(210.0, round(f / 15.0) * 15.0)
    return f, p, tuple(reasons)


@dataclass
class GpuState:
    temp: float = 32.0


@dataclass
class Act:
    """What one GPU did over a tick (fractions 0..1)."""

    busy: float = 0.0
    sm: float = 0.0
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    nvlink_mib: float = 0.0
    pcie_mib: float = 0.0
    cap_w: float | None = None
    limit_mhz: float | None = None
    limit_reason: str = ""
    temp_floor: float | None = None  # a failing fan / blocked airflow
    samples: tuple[float, ...] | None = None  # driver-buffered util samples, if not flat


def gpu_sample(spec: Spec, index: int, act: Act, mem_used: int, state: GpuState, tick_s: float,
               rng, first: bool, migs: tuple[MigSample, ...] = (), mig_mode: bool | None = False,
               no_gpm_reason: str | None = None) -> GpuSample:
    busy = max(0.0, min(1.0, act.busy))
    f, p, reasons = settle(spec, busy, act.sm, act.tensor, act.dram, act.cap_w, act.limit_mhz,
                           act.limit_reason)
    p = max(spec.idle_w * 0.9, p * (1 + rng.gauss(0, 0.006)))
    target = 28 + (spec.hot - 28) * p / spec.tdp
    if act.temp_floor is not None:
        target = max(target, act.temp_floor)
    state.temp += (target - state.temp) * min(1.0, tick_s / 45.0)
    missing: dict[str, str] = {"fan_pct": FAN}
    util = round(min(100.0, busy * 100 + rng.gauss(0, 0.8)) if busy > 0.004 else 0.0)
    util = max(0.0, util)
    n_samples = max(1, int(round(6 * tick_s)))
    if act.samples is not None:
        samples = tuple(float(round(max(0, min(100, s)))) for s in act.samples)
    else:
        samples = tuple(float(round(max(0, min(100, util + rng.gauss(0, 1.5)))))
                        for _ in range(n_samples)) if util else (0.0,) * n_samples
    values = dict(util_gpu_pct=float(util), util_gpu_samples_pct=samples,
                  util_mem_pct=float(round(min(100, act.dram * 100 * 0.93 + rng.gauss(0, 0.6))))
                  if act.dram > 0.004 else 0.0)
    if mig_mode:
        values = dict(util_gpu_pct=None, util_mem_pct=None, util_gpu_samples_pct=())
        missing["util_gpu_pct"] = missing["util_mem_pct"] = MIG_UTIL
    gpm = spec.gpm and no_gpm_reason is None
    if gpm and not first and not mig_mode:
        noise = lambda v: max(0.0, min(100.0, v * 100 * (1 + rng.gauss(0, 0.01))))  # noqa: E731
        values.update(sm_active_pct=noise(act.sm), sm_occupancy_pct=noise(act.occ),
                      tensor_pct=noise(act.tensor), dram_bw_pct=noise(act.dram),
                      nvlink_rx_mib_per_s=act.nvlink_mib, nvlink_tx_mib_per_s=act.nvlink_mib,
                      pcie_rx_mib_per_s=act.pcie_mib, pcie_tx_mib_per_s=act.pcie_mib * 0.3)
    else:
        why = (GPM_FIRST if (gpm and first) else (no_gpm_reason or NO_GPM))
        if mig_mode:
            why = f"read per MIG instance in MIG mode ({why})"
        for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
            missing[name] = why
    return GpuSample(
        index=index, name=spec.name, uuid=f"GPU-{index:08x}-5e1d-4c2a-9b7e-{spec.tdp:04.0f}ab{index:06d}",
        mem_total_bytes=spec.mem_total - spec.reserved,
        mem_used_bytes=int(mem_used), mem_reserved_bytes=spec.reserved or None,
        power_w=round(p, 3), temp_c=float(round(state.temp)), sm_clock_mhz=f,
        throttle=reasons, bus_id=f"00000000:{0x18 + 0x10 * index:02X}:00.0",
        pstate=0, power_limit_w=float(act.cap_w or spec.tdp), mem_clock_mhz=spec.mem_clock,
        ecc_corrected=0 if spec.gpm or spec.name.startswith("NVIDIA A100") else None,
        ecc_uncorrected=0 if spec.gpm or spec.name.startswith("NVIDIA A100") else None,
        xid_count=0, mig_mode=mig_mode, missing=missing, migs=migs, **values)


@dataclass
class Proc:
    """A GPU process: cumulative CPU seconds kept here."""

    pid: int
    gpu: int
    name: str
    cmdline: str
    mem: int
    user: str = "svc"
    ppid: int = 1
    start: float = 0.0
    cpu_s: float = 0.0
    rss: int = 6 * GIB
    container: str = ""
    mig_index: int | None = None

    def sample(self, sm_util: float | None, cpu_rate: float, tick_s: float,
               mem_util: float | None = None) -> ProcSample:
        self.cpu_s += max(0.0, cpu_rate) * tick_s
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start,
                          mem_bytes=int(self.mem),
                          sm_util_pct=None if sm_util is None else float(round(sm_util)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container,
                          mem_util_pct=None if sm_util is None or mem_util is None
                          else float(round(mem_util)), mig_index=self.mig_index)
