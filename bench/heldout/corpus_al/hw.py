"""GPUs as NVML reads them: a per-tick physical model (activity -> power -> clock -> temperature).

Activity comes from the workload simulation as seconds-weighted fractions per tick
(busy = some kernel ran, sm = SMs with a resident warp, tensor = tensor pipe, dram = HBM
interface).  Power follows activity and clock; the clock is held down by the power
limit, the thermal controller, the HW slowdown and an external power brake; the
temperature is a first-order lag to inlet + R * power.  The sim reads the clock factor
back (compute-bound work stretches by 1/f), so a throttle changes the work done.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace


from gputop.schema import GpuSample


@dataclass(frozen=True)
class Spec:
    name: str
    mem_gib: float
    hbm_gbs: float  # peak DRAM bandwidth, GB/s
    tflops: float  # dense bf16/fp16 tensor TFLOP/s at max clock
    sms: int
    tdp_w: float  # default power limit
    idle_w: float
    peak_draw: float  # draw at full tensor+dram activity and max clock, uncapped (x tdp)
    max_mhz: float
    min_mhz: float
    mem_mhz: float
    t_sw: float  # SW thermal slowdown starts
    t_hw: float  # HW slowdown
    r_cw: float  # degC per W, heatsink to inlet
    gpm: bool  # Hopper+: NVML GPM (SM/tensor/DRAM activity)
    fan: bool
    pcie: bool = False


SPECS = {
    "V100": Spec("Tesla V100-SXM2-32GB", 32, 900, 125, 80, 300, 40, 1.05, 1530, 135, 877, 83, 87, 0.16, False, False),
    "A100-40": Spec("NVIDIA A100-PCIE-40GB", 40, 1555, 312, 108, 250, 35, 1.08, 1410, 210, 1215, 85, 90, 0.20, False, False, True),
    "A100-80": Spec("NVIDIA A100-SXM4-80GB", 80, 2039, 312, 108, 400, 55, 1.06, 1410, 210, 1593, 85, 90, 0.16, False, False),
    "H100": Spec("NVIDIA H100 80GB HBM3", 80, 3350, 989, 132, 700, 70, 1.12, 1980, 345, 2619, 85, 90, 0.075, True, False),
    "GH200": Spec("NVIDIA GH200 480GB", 96, 4000, 989, 132, 900, 90, 1.05, 1980, 345, 2619, 85, 90, 0.06, True, False),
    "L40S": Spec("NVIDIA L40S", 48, 864, 362, 142, 350, 35, 1.10, 2520, 210, 9001, 86, 90, 0.19, False, False, True),
    "A6000": Spec("NVIDIA RTX A6000", 48, 768, 155, 84, 300, 25, 1.05, 1800, 210, 8001, 86, 93, 0.17, False, True, True),
    "RTX4090": Spec("NVIDIA GeForce RTX 4090", 24, 1008, 165, 128, 450, 25, 1.04, 2520, 210, 10501, 83, 90, 0.11, False, True, True),
}


class Gpu:
    """One GPU's state, advanced tick by tick."""

    def __init__(self, spec: Spec, index: int, rng, inlet_c: float = 24.0,
                 power_limit_w: float | None = None, r_scale: float = 1.0, uuid_seed: int = 0,
                 clock_cap: float = 1.0):
        self.spec, self.index, self.rng = spec, index, rng
        self.inlet = inlet_c
        self.limit = power_limit_w or spec.tdp_w
        self.r = spec.r_cw * r_scale
        self.temp = inlet_c + 8 + rng.normal(0, 1)
        self.f = 1.0  # clock factor for the next tick
        self.f_thermal = 1.0
        self.clock_cap = clock_cap  # application-clock / lock (a rank locked low)
        self.brake = False
        self.reasons: tuple[str, ...] = ()
        h = (uuid_seed * 2654435761 + index * 97) & 0xFFFFFFFFFFFF
        self.uuid = f"GPU-{h & 0xffffffff:08x}-{(h >> 8) & 0xffff:04x}-{(h >> 20) & 0xffff:04x}-{index:04x}-{(h * 31) & 0xffffffffffff:012x}"
        self.bus = f"00000000:{(0x18 + index * 0x10) & 0xff:02X}:00.0"
        self.last_power = spec.idle_w

    def factor(self) -> float:
        return self.f

    def step(self, dt: float, busy: float, sm: float, tensor: float, dram: float,
             inlet: float | None = None, brake: bool = False, limit: float | None = None):
        """Advance one tick with this tick's activity fractions; returns (power, clock factor used)."""
        s = self.spec
        if inlet is not None:
            self.inlet = inlet
        if limit is not None:
            self.limit = limit
        act = 0.12 * busy + 0.28 * sm + 0.38 * tensor + 0.22 * dram
        dyn = (s.peak_draw * s.tdp_w - s.idle_w) * act
        reasons = []
        f = min(1.0, self.clock_cap)
        # power cap: the clock the limit allows (P ~ f^2.3 for the dynamic part)
        if dyn > 0 and s.idle_w + dyn * f ** 2.3 > self.limit:
            f = max(s.min_mhz / s.max_mhz, ((self.limit - s.idle_w) / dyn) ** (1 / 2.3))
            reasons.append("power cap")
        # thermal controller: slow integral action above t_sw
        if self.temp > s.t_sw:
            self.f_thermal = max(0.45, self.f_thermal - 0.012 * (self.temp - s.t_sw + 0.5) * dt)
        elif self.temp < s.t_sw - 2:
            self.f_thermal = min(1.0, self.f_thermal + 0.01 * dt)
        if self.f_thermal < 0.995 and self.f_thermal < f:
            f = self.f_thermal
            reasons.append("thermal (sw)")
        if self.temp >= s.t_hw:
            f = min(f, 0.5)
            reasons.append("hw slowdown")
        if brake:
            f = min(f, 0.42)
            reasons.append("power brake")
        self.f = f
        self.reasons = tuple(reasons)
        p = s.idle_w + dyn * f ** 2.3
        if busy < 0.02:
            p = s.idle_w * (0.85 if busy == 0 else 1.0)
        p = p * (1 + self.rng.normal(0, 0.012))
        self.last_power = p
        tau = 60.0
        target = self.inlet + self.r * p
        self.temp += (target - self.temp) * (1 - math.exp(-dt / tau))
        return p, f

    def sample(self, busy, sm, tensor, dram, mem_used, sub_busy=(), pcie=(None, None), nvlink=(None, None),
               occ=None) -> GpuSample:
        s, rng = self.spec, self.rng
        noise = lambda v, sd: max(0.0, min(100.0, v + rng.normal(0, sd)))
        util = round(noise(busy * 100, 0.6)) if busy > 0.005 else 0.0
        missing = {}
        if not s.fan:
            missing["fan_pct"] = "not supported on this GPU"
        kw = {}
        if s.gpm:
            kw = dict(sm_active_pct=noise(sm * 100, 0.5), sm_occupancy_pct=noise((occ if occ is not None else sm * 0.45) * 100, 0.4),
                      dram_bw_pct=noise(dram * 100, 0.5), tensor_pct=noise(tensor * 100, 0.4),
                      pcie_rx_mib_per_s=pcie[0], pcie_tx_mib_per_s=pcie[1],
                      nvlink_rx_mib_per_s=nvlink[0], nvlink_tx_mib_per_s=nvlink[1])
        else:
            for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                missing[k] = "needs Hopper+ (GPM) or DCGM profiling"
            for k in ("pcie_rx_mib_per_s", "nvlink_rx_mib_per_s"):
                missing[k] = "needs Hopper+ (GPM)"
        fan = None
        if s.fan:
            fan = float(round(min(100, max(30, 30 + (self.temp - 40) * 1.6))))
        clock = round(s.max_mhz * self.f / 15) * 15 if busy > 0.01 or self.f < 1 else (s.max_mhz if self.temp > 0 else 0)
        if busy <= 0.01 and not self.reasons:
            clock = round(s.max_mhz * (0.35 if busy == 0 else 0.9) / 15) * 15
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=float(util),
            util_gpu_samples_pct=tuple(float(round(noise(b * 100, 1.0))) for b in sub_busy),
            util_mem_pct=float(round(noise(dram * 82, 0.5))),
            mem_total_bytes=int(s.mem_gib * 2**30), mem_used_bytes=int(mem_used),
            mem_reserved_bytes=int(0.6 * 2**30) if s.mem_gib > 40 else int(0.4 * 2**30),
            power_w=round(self.last_power, 2), temp_c=float(round(self.temp)), sm_clock_mhz=float(clock),
            throttle=self.reasons if busy > 0.01 else (), bus_id=self.bus, fan_pct=fan,
            pstate=0 if busy > 0.01 or mem_used > 2**30 else 8, power_limit_w=float(self.limit),
            mem_clock_mhz=float(s.mem_mhz), ecc_corrected=0, ecc_uncorrected=0, xid_count=0,
            mig_mode=False, missing=missing, **kw)
