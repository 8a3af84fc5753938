"""GPU boards as NVML reads them: specs, and a per-tick power / thermal / clock model."""
from __future__ import annotations
import math
from dataclasses import dataclass

MiB = 2**20


@dataclass(frozen=True)
class Spec:
    name: str
    mem_bytes: int
    bw: float           # HBM/GDDR bytes/s (peak)
    flops: float        # dense bf16 FLOP/s at max clock
    tdp: float          # default power limit W
    idle_w: float
    clock: float        # max SM clock MHz
    mem_clock: float
    slowdown_c: float   # software thermal slowdown begins
    hw_slow_c: float
    gpm: bool           # Hopper+: SM/DRAM/tensor activity via GPM
    fan: bool           # fan reading supported (PCIe boards with fans)
    sms: int
    nvlink: bool
    r_th: float         # degC per W above inlet
    reserve: int = 600 * MiB


SPECS = {
    "H100": Spec("NVIDIA H100 80GB HBM3", 81559 * MiB, 3.35e12, 989e12, 700, 70, 1980, 2619, 87, 90, True, False, 132, True, 0.080),
    "H200": Spec("NVIDIA H200", 150754820096, 4.8e12, 989e12, 700, 75, 1980, 3201, 87, 90, True, False, 132, True, 0.075),
    "B200": Spec("NVIDIA B200", 183359 * MiB, 8.0e12, 2250e12, 1000, 140, 1965, 3996, 87, 90, True, False, 148, True, 0.038),
    "A100": Spec("NVIDIA A100-SXM4-80GB", 81920 * MiB, 2.04e12, 312e12, 400, 55, 1410, 1593, 88, 92, False, False, 108, True, 0.085),
    "L40S": Spec("NVIDIA L40S", 46068 * MiB, 0.864e12, 362e12, 350, 35, 2520, 9001, 88, 92, False, True, 142, False, 0.12),
    "L4": Spec("NVIDIA L4", 23034 * MiB, 0.300e12, 121e12, 72, 16, 2040, 6251, 85, 90, False, False, 58, False, 0.60),
}


class GpuState:
    """One board's power, temperature and clock.  Each tick: the work of that tick (fractions
    of the tick) gives the power demand at the current clock; the power limit, a power brake,
    the temperature and any unexplained clock fall cut the clock for the next tick."""

    def __init__(self, spec: Spec, rng, inlet_c=27.0, limit_w=None):
        self.s = spec
        self.rng = rng
        self.inlet = inlet_c
        self.limit = limit_w or spec.tdp
        self.temp = inlet_c + spec.r_th * spec.idle_w + 3
        self.ratio = 1.0          # clock / max clock in effect
        self.thermal_cap = 1.0
        self.power_cap = 1.0
        self.power = spec.idle_w
        self.reasons: tuple[str, ...] = ()
        self.fan = 32.0

    def update(self, dt, busy, sm, tensor, dram, *, inlet=None, limit=None, brake=None,
               mystery=None, r_th_mult=1.0):
        s = self.s
        if inlet is not None:
            self.inlet = inlet
        if limit is not None:
            self.limit = limit
        # dynamic power at max clock for this work, then at the clock in effect (f * V^2 ~ f^2.4)
        dyn = (0.10 * busy + 0.25 * sm + 0.55 * min(1.0, tensor / 0.75) + 0.28 * dram)
        dyn_w = (s.tdp - s.idle_w) * dyn
        demand_max = s.idle_w + dyn_w
        # power cap: the clock at which demand meets the limit
        if demand_max > self.limit and dyn_w > 0:
            target = ((self.limit - s.idle_w) / dyn_w) ** (1 / 2.4)
        else:
            target = 1.0
        self.power_cap += (min(1.0, target) - self.power_cap) * min(1.0, dt / 1.5)
        # thermal
        r_th = s.r_th * r_th_mult
        t_ss = self.inlet + r_th * self.power
        self.temp += (t_ss - self.temp) * (1 - math.exp(-dt / 45.0))
        if self.temp > s.slowdown_c:
            self.thermal_cap = max(0.45, self.thermal_cap - 0.035 * dt * (self.temp - s.slowdown_c + 0.5))
        elif self.temp < s.slowdown_c - 1.5:
            self.thermal_cap = min(1.0, self.thermal_cap + 0.02 * dt)
        ratio = min(self.power_cap, self.thermal_cap)
        reasons = []
        if self.power_cap < 0.995 and self.power_cap <= self.thermal_cap:
            reasons.append("power cap")
        if self.thermal_cap < 0.995:
            reasons.append("thermal (sw)")
            if self.temp > s.hw_slow_c:
                reasons.append("hw slowdown")
                reasons.append("thermal (hw)")
        if brake:
            ratio = min(ratio, brake)
            reasons.append("power brake")
        if mystery:
            ratio = min(ratio, mystery)   # no reason flagged: the clock simply falls
        self.ratio = max(0.2, ratio)
        self.reasons = tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                         "thermal (hw)", "power brake") if r in reasons)
        self.power = s.idle_w + dyn_w * self.ratio ** 2.4 + self.rng.gauss(0, 0.01 * s.tdp)
        self.power = max(s.idle_w * 0.9, min(self.power, self.limit * 1.01 if not brake else self.limit))
        if s.fan:
            want = 30 + max(0.0, self.temp - 40) * 2.2
            self.fan += (min(100.0, want) - self.fan) * 0.3
        return self.ratio

    def clock_mhz(self):
        mhz = self.s.clock * self.ratio
        return float(round(mhz / 15) * 15)
