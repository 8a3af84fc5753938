"""GPUs as NVML (and GPM on Hopper+) read them: one activity record per GPU per tick ->
GpuSample.  Power from what the SMs, tensor cores and HBM do (calibrated on the real H200
recording in tests/data/h200: bf16 matmul ~690 W at the 700 W cap with clocks 1440-1470 MHz,
device copy ~474 W at 1980 MHz, CUDA-graph replay of one-element kernels ~123 W, an idle
context ~121 W); clocks fall when demand exceeds the cap (P ~ f^3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gputop.schema import GpuSample, MigSample

GIB = 2**30
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
MIG_UTIL = "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)"


@dataclass(frozen=True)
class Spec:
    key: str
    name: str
    mem: int
    tdp: float
    idle_w: float  # with a CUDA context open, clocks up
    bare_w: float  # no process
    max_mhz: float
    hbm_gbs: float  # peak DRAM bandwidth, GB/s
    tflops: float  # dense bf16 tensor
    gpm: bool
    sms: int
    fan: bool  # PCIe boards with a fan
    reserved: int  # driver reserve (NVML v2)
    samples_per_s: int = 6  # buffered GPU-Util samples per second


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 700, 115, 72, 1980, 3350, 989,
                 True, 132, False, 560 * 2**20),
    "H200": Spec("H200", "NVIDIA H200", 150754820096, 700, 121, 78, 1980, 4800, 989, True, 132,
                 False, 644939776),
    "B200": Spec("B200", "NVIDIA B200", 191514411008, 1000, 160, 110, 1965, 8000, 2250, True,
                 148, False, 700 * 2**20),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 400, 62, 52, 1410, 2039, 312,
                 False, 108, False, 520 * 2**20),
    "L40S": Spec("L40S", "NVIDIA L40S", 48305799168, 350, 78, 34, 2520, 864, 362, False, 142,
                 True, 470 * 2**20),
    "A10G": Spec("A10G", "NVIDIA A10G", 24146608128, 300, 58, 25, 1710, 600, 125, False, 80,
                 True, 400 * 2**20, 1),
}


@dataclass
class Act:
    """What one GPU did over one tick (fractions of the tick, 0..1)."""

    busy: float = 0.0  # a kernel was running (GPU-Util)
    sm: float = 0.0  # SM active (cycles with a warp resident, averaged over SMs)
    occ: float = 0.0
    dram: float = 0.0
    tensor: float = 0.0
    sub: tuple = ()  # per-driver-sample busy values (saw-tooth), else noise around busy
    mem_used: int = 0
    clock_cap_mhz: float | None = None  # forced (thermal, slowdown, brake)
    reasons: tuple = ()  # forced throttle reasons
    power_cap_w: float | None = None  # enforced limit (nvidia-smi -pl); else TDP
    extra_heat_c: float = 0.0  # airflow lost: degrees above normal
    nvlink_mibs: float | None = None
    pcie_mibs: float | None = None
    has_process: bool = True


@dataclass
class GpuState:
    spec: Spec
    index: int
    temp: float = 34.0
    seq: int = 0
    uuid: str = ""
    bus: str = ""
    mig: list = field(default_factory=list)  # [(profile, sms, mem)] when MIG is on


def demand(spec: Spec, a: Act) -> float:
    """Power above idle at full clocks, as a fraction of (TDP - idle)."""
    return 1.02 * a.tensor + 0.465 * a.dram + 0.2 * a.sm


def clock_ratio(spec: Spec, a: Act) -> tuple[float, bool]:
    """(clock / max, power-capped?) for this activity at the enforced cap."""
    cap = a.power_cap_w or spec.tdp
    allowed = max(0.05, (cap - spec.idle_w) / (spec.tdp - spec.idle_w))
    d = demand(spec, a)
    if d <= allowed:
        return 1.0, False
    return max(0.45, (allowed / d) ** 1.5), True


def sample(g: GpuState, a: Act, rng, dt: float, first: bool) -> GpuSample:
    s = g.spec
    g.seq += 1
    ratio, capped = clock_ratio(s, a)
    clock = s.max_mhz * ratio
    if a.clock_cap_mhz is not None:
        clock = min(clock, a.clock_cap_mhz)
    f = clock / s.max_mhz
    d = demand(s, a)
    idle = s.idle_w if (a.has_process or a.busy > 0) else s.bare_w
    cap = a.power_cap_w or s.tdp
    if capped and a.clock_cap_mhz is None:
        power = cap * (0.985 + rng.gauss(0, 0.004))
    else:  # below the cap, or a forced clock: dynamic power falls ~ f^2.2
        power = idle + (s.tdp - s.idle_w) * d * (f ** 2.2 if f < ratio - 1e-9 or
                                                  a.clock_cap_mhz else 1.0)
        power *= 1 + rng.gauss(0, 0.006)
        power = min(power, cap * 1.005)
    # temperature: first-order lag towards ambient + k * power
    target = 30 + 0.052 * power * (700 / s.tdp) ** 0.5 + a.extra_heat_c
    g.temp += (target - g.temp) * min(1.0, dt / 40.0)
    reasons = list(a.reasons)
    if capped and a.clock_cap_mhz is None and "power cap" not in reasons:
        reasons.append("power cap")
    if a.has_process or a.busy > 0.0:
        shown = round(clock / 15) * 15 if s.key in ("H100", "H200", "B200") else round(clock)
    else:
        shown = 345.0 if s.gpm else 210.0
    missing: dict[str, str] = {}
    gpm: dict = {}
    if not s.gpm:
        for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
            missing[k] = NO_GPM
    elif first:
        for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
            missing[k] = "GPM needs a second sample"
    elif not g.mig:
        n = lambda v, sd=0.01: max(0.0, min(100.0, 100 * v * (1 + rng.gauss(0, sd))))  # noqa: E731
        gpm = dict(sm_active_pct=n(a.sm), sm_occupancy_pct=n(a.occ), tensor_pct=n(a.tensor),
                   dram_bw_pct=n(a.dram),
                   nvlink_rx_mib_per_s=a.nvlink_mibs, nvlink_tx_mib_per_s=a.nvlink_mibs,
                   pcie_rx_mib_per_s=(a.pcie_mibs if a.pcie_mibs is not None else
                                      abs(rng.gauss(40, 10))),
                   pcie_tx_mib_per_s=abs(rng.gauss(25, 8)) if a.pcie_mibs is None else a.pcie_mibs)
    busy = max(0.0, min(1.0, a.busy))
    k = max(1, int(round(s.samples_per_s * dt)))
    if a.sub:
        subs = tuple(float(round(100 * max(0.0, min(1.0, v)))) for v in a.sub[-k:])
    else:
        subs = tuple(float(round(100 * max(0.0, min(1.0, busy + rng.gauss(0, 0.015)
                                                     if 0 < busy < 1 else busy))))
                     for _ in range(k))
    util = subs[-1] if s.samples_per_s * dt <= 1 else float(round(sum(subs[-s.samples_per_s:])
                                                                  / min(len(subs), s.samples_per_s)))
    mem_util = float(min(100, round(140 * a.dram * (1 + rng.gauss(0, 0.02)))))
    if not s.fan:
        missing["fan_pct"] = "not supported on this GPU"
    kw = dict(util_gpu_pct=util, util_gpu_samples_pct=subs, util_mem_pct=mem_util)
    migs = ()
    if g.mig:
        kw = dict(util_gpu_pct=None, util_gpu_samples_pct=(), util_mem_pct=None)
        missing["util_gpu_pct"] = missing["util_mem_pct"] = MIG_UTIL
        for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
            missing[name] = "read per MIG instance in MIG mode (GPM needs a second sample)" \
                if first else "read per MIG instance in MIG mode (not supported on this GPU)"
        migs = tuple(_mig(g, i, m, rng, first) for i, m in enumerate(g.mig))
    return GpuSample(
        index=g.index, name=s.name, uuid=g.uuid, **kw,
        mem_total_bytes=s.mem, mem_used_bytes=int(a.mem_used), mem_reserved_bytes=s.reserved,
        power_w=round(power, 3), temp_c=float(round(g.temp)), sm_clock_mhz=float(shown),
        throttle=tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                   "thermal (hw)", "power brake") if r in reasons),
        bus_id=g.bus, fan_pct=(float(round(30 + 0.5 * max(0, g.temp - 35))) if s.fan else None),
        pstate=0 if (a.has_process or busy) else 8, power_limit_w=float(cap),
        mem_clock_mhz={"H100": 2619.0, "H200": 3201.0, "B200": 3996.0, "A100": 1593.0,
                       "L40S": 9001.0, "A10G": 6251.0}[s.key],
        ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=bool(g.mig) if s.key not in (
            "L40S", "A10G") else None, missing=missing, migs=migs, **gpm)


def _mig(g: GpuState, i: int, m, rng, first: bool) -> MigSample:
    profile, sms, mem_total, act = m
    miss = {}
    vals = {}
    if first:
        for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
            miss[k] = "GPM needs a second sample"
    else:
        vals = dict(sm_active_pct=max(0.0, 100 * act["sm"] * (1 + rng.gauss(0, 0.03))),
                    sm_occupancy_pct=max(0.0, 100 * act["sm"] * 0.3),
                    tensor_pct=max(0.0, 100 * act["tensor"] * (1 + rng.gauss(0, 0.03))),
                    dram_bw_pct=max(0.0, 100 * act["dram"] * (1 + rng.gauss(0, 0.03))))
    return MigSample(index=i, name=f"{g.spec.name} MIG {profile}", uuid=f"MIG-{g.uuid[4:12]}-{i}",
                     mem_total_bytes=mem_total, mem_used_bytes=int(act["mem"]),
                     gpu_instance_id=[1, 2, 9, 13][i % 4], compute_instance_id=0,
                     profile=profile, sm_count=sms, missing=miss, **vals)
