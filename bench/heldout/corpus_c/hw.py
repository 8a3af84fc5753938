"""GPU boards: what NVML reads off a board given what its kernels did over a tick.

The workload models say, per tick and per GPU, how much of the time a kernel was
resident (``busy``), what fraction of SM-cycles had a warp (``sm``), how much of the
time the tensor pipes and HBM were busy (``tensor``, ``dram``), all 0..1.  The board
turns that into power, clocks (a power cap solved for the SM clock, a thermal
controller, external slowdowns), temperature with a thermal lag, and the readings
NVML and GPM would give, with GPM fields missing on parts without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import GpuSample, MigSample

GIB = 1 << 30
MIB = 1 << 20
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
SAMPLE_S = 1 / 6  # NVML's GPU-Util sample period on these parts


@dataclass(frozen=True)
class Spec:
    model: str  # short name used in the catalogue
    name: str  # as NVML names it
    mem_bytes: int
    hbm_bw: float  # bytes/s
    flops: float  # dense bf16 FLOP/s at the top clock
    tdp_w: float
    f_max: float  # MHz under load
    f_idle: float
    mem_clock: float
    p_idle_w: float  # no context
    p_ctx_w: float  # a context open, no kernels
    gpm: bool
    fan: bool  # air-cooled PCIe boards report a fan
    sms: int
    reserved: int
    therm_r: float  # degC per W at steady state
    t_inlet: float
    t_slow: float  # thermal (sw) target
    link_bw: float = 300e9  # all-reduce bus bandwidth between GPUs (NVLink; PCIe on L40S/A10G)
    link_lat: float = 9e-6


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 81559 * MIB, 3.35e12, 989e12, 700, 1980, 345,
                 2619, 70, 115, True, False, 132, 595 * MIB, 0.040, 31, 87),
    "H200": Spec("H200", "NVIDIA H200", 150754820096, 4.8e12, 989e12, 700, 1980, 345, 3201,
                 78, 121, True, False, 132, 615 * MIB, 0.038, 33, 87),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 81920 * MIB, 2.039e12, 312e12, 400, 1410, 210,
                 1593, 56, 84, False, False, 108, 0, 0.075, 30, 85, 200e9, 11e-6),
    "L40S": Spec("L40S", "NVIDIA L40S", 46068 * MIB, 0.864e12, 362e12, 350, 2520, 210, 9001,
                 34, 78, False, True, 142, 0, 0.13, 30, 87, 18e9, 22e-6),
    "A10G": Spec("A10G", "NVIDIA A10G", 23028 * MIB, 0.600e12, 70e12, 300, 1710, 210, 6251, 22,
                 58, False, True, 80, 0, 0.15, 28, 87, 12e9, 25e-6),
}


@dataclass
class Activity:
    """What the kernels on one GPU did over one tick (fractions of the tick)."""

    busy: float = 0.0  # a kernel resident
    sm: float = 0.0  # SM-cycles with a warp
    occ: float = 0.0  # warps resident / max
    tensor: float = 0.0
    dram: float = 0.0
    # busy fraction of each NVML sample in the tick; None: ``busy`` throughout
    busy_samples: list[float] | None = None
    nvlink_mib_s: float = 0.0
    pcie_mib_s: float = 0.0
    context: bool = True  # a CUDA context is open on it


@dataclass
class Board:
    spec: Spec
    index: int
    uuid: str
    rng: object
    power_limit_w: float | None = None
    temp_c: float | None = None
    f_thermal: float = 1.0  # the thermal controller's ceiling (fraction of f_max)
    f_cap: float = 1.0  # external ceiling (HW slowdown, power brake, locked clocks)
    cap_reasons: tuple[str, ...] = ()
    cooling: float = 1.0  # thermal resistance multiplier (a failing fan, a hot aisle)
    clock_frac: float = 1.0  # the SM clock last tick, fraction of f_max
    mig: tuple = ()
    missing_extra: dict = field(default_factory=dict)
    _sample_phase: float = 0.0

    def __post_init__(self):
        if self.power_limit_w is None:
            self.power_limit_w = self.spec.tdp_w
        if self.temp_c is None:
            self.temp_c = self.spec.t_inlet + self.spec.therm_r * self.spec.p_ctx_w

    def power_at(self, act: Activity, f: float) -> float:
        s = self.spec
        if not act.context:
            return s.p_idle_w
        scale = s.tdp_w / 700.0
        return (s.p_ctx_w + scale * (280 * act.dram + 60 * act.sm * f
                                     + 650 * act.tensor * f * f))

    def solve_clock(self, act: Activity) -> tuple[float, tuple[str, ...]]:
        """The SM clock fraction the board runs at and why it is held down."""
        reasons = list(self.cap_reasons) if self.f_cap < 1.0 else []
        f = min(1.0, self.f_cap, self.f_thermal)
        if self.f_thermal < 0.999 and self.f_thermal <= self.f_cap:
            reasons.append("thermal (sw)")
        if act.context and act.busy > 0.02:
            s = self.spec
            scale = s.tdp_w / 700.0
            base = s.p_ctx_w + scale * 280 * act.dram
            b = scale * 60 * act.sm
            c = scale * 650 * act.tensor
            if base + b * f + c * f * f > self.power_limit_w:
                room = self.power_limit_w - base
                if c > 1e-9:
                    fp = (-b + math.sqrt(b * b + 4 * c * max(0.0, room))) / (2 * c)
                else:
                    fp = room / b if b > 0 else 1.0
                fp = max(0.3, min(f, fp))
                if fp < f - 0.005:
                    f = fp
                    reasons.append("power cap")
        return f, tuple(dict.fromkeys(reasons))

    def tick(self, dt: float, act: Activity, mem_used: int | None = None) -> GpuSample:
        s, rng = self.spec, self.rng
        f, reasons = self.solve_clock(act)
        self.clock_frac = f if act.context else s.f_idle / s.f_max
        power = self.power_at(act, f) * (1 + rng.gauss(0, 0.006))
        if act.context and act.busy > 0.02:
            power = min(power, self.power_limit_w * (1 + abs(rng.gauss(0, 0.004))))
        target = s.t_inlet + s.therm_r * self.cooling * power
        self.temp_c += (target - self.temp_c) * (1 - math.exp(-dt / 45.0))
        # thermal controller: hold the slowdown temperature, release slowly below it
        if self.temp_c > s.t_slow:
            self.f_thermal = max(0.35, self.f_thermal - 0.03 * dt * (self.temp_c - s.t_slow + 0.5))
        elif self.temp_c < s.t_slow - 2:
            self.f_thermal = min(1.0, self.f_thermal + 0.01 * dt)
        if act.context:
            clock = round(s.f_max * f / 15) * 15
        else:
            clock = s.f_idle
        samples = self.util_samples(dt, act)
        util = float(samples[-1]) if samples else round(100 * act.busy)
        missing: dict[str, str] = dict(self.missing_extra)
        values: dict = {}
        if s.gpm and not self.mig:
            j = lambda x: max(0.0, x * (1 + rng.gauss(0, 0.01)))
            values.update(sm_active_pct=100 * j(act.sm), sm_occupancy_pct=100 * j(act.occ),
                          dram_bw_pct=100 * j(act.dram), tensor_pct=100 * j(act.tensor),
                          nvlink_rx_mib_per_s=j(act.nvlink_mib_s),
                          nvlink_tx_mib_per_s=j(act.nvlink_mib_s),
                          pcie_rx_mib_per_s=j(act.pcie_mib_s) + 20,
                          pcie_tx_mib_per_s=j(act.pcie_mib_s * 0.3) + 10)
        elif not s.gpm:
            for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[name] = NO_GPM
        if not s.fan:
            missing["fan_pct"] = "not supported on this GPU"
            fan = None
        else:
            fan = float(max(30, min(100, round(30 + 2.2 * (self.temp_c - 40)))))
        mem_util = min(100.0, round(113 * act.dram + 6 * act.tensor))
        if not s.gpm:  # without GPM the memory-controller util is the one memory signal
            mem_util = min(100.0, round(100 * min(1.0, act.dram * 1.1)))
        if self.mig:
            missing["util_gpu_pct"] = missing["util_mem_pct"] = (
                "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)")
            util, mem_util, samples = None, None, ()
            migs = []
            for i, (profile, sms, mem_b) in enumerate(self.mig):
                a = act if i == 0 else Activity()
                share = sms / s.sms
                migs.append(MigSample(
                    index=i, name=f"MIG {profile} Device {i}", uuid=f"MIG-{self.uuid[4:]}-{i}",
                    mem_total_bytes=mem_b, mem_used_bytes=(mem_used or 0) if i == 0 else 13 * MIB,
                    gpu_instance_id=1 + i, compute_instance_id=0, profile=profile, sm_count=sms,
                    sm_active_pct=100 * a.sm, sm_occupancy_pct=100 * a.occ,
                    dram_bw_pct=100 * a.dram / max(share, 1e-3) * share,
                    tensor_pct=100 * a.tensor))
            self._migs = tuple(migs)
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid,
            util_gpu_pct=util, util_gpu_samples_pct=tuple(samples), util_mem_pct=mem_util,
            mem_total_bytes=s.mem_bytes, mem_used_bytes=mem_used, mem_reserved_bytes=s.reserved or None,
            power_w=round(power, 3), temp_c=float(round(self.temp_c)), sm_clock_mhz=float(clock),
            mem_clock_mhz=float(s.mem_clock), throttle=reasons if act.context else (),
            bus_id=f"00000000:{0x18 + 0x10 * self.index:02X}:00.0", fan_pct=fan,
            pstate=0 if act.context else 8, power_limit_w=float(self.power_limit_w),
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=bool(self.mig),
            missing=missing, migs=getattr(self, '_migs', ()), **values)

    def util_samples(self, dt: float, act: Activity) -> list[float]:
        """The driver's GPU-Util samples that fell in this tick: the busy time of each 1/6 s."""
        self._sample_phase += dt
        n = int(self._sample_phase / SAMPLE_S + 1e-9)
        self._sample_phase -= n * SAMPLE_S
        if n <= 0:
            return []
        src = act.busy_samples
        out = []
        for i in range(n):
            if src:
                b = src[min(len(src) - 1, int(i * len(src) / n))]
            else:
                b = act.busy
            b = min(1.0, max(0.0, b))
            v = 100 * b + (self.rng.gauss(0, 1.2) if 0.02 < b < 0.98 else 0)
            out.append(float(max(0, min(100, round(v if b < 0.985 else 99 + (b > 0.995))))))
        return out


def uuid_for(rng, index: int) -> str:
    h = "".join("0123456789abcdef"[rng.randrange(16)] for _ in range(32))
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
