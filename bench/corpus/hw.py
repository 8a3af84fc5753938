"""GPUs as NVML and GPM would read them: published figures plus a small physical model.

Each simulated actor (engine step, training step, CUDA loop) adds *busy intervals* to a
``Gpu``: how long some kernel was resident and, during that time, what fraction of the SMs
had a warp (SM active), how full they were (occupancy), how busy the tensor pipes and HBM
were.  The intervals land in 1/6-second bins, the period of the H100/H200 driver's own
GPU-Util samples (FACTS.md 1, 12), so a tick's ``util_gpu_samples_pct`` are the bins that
ended inside it and ``util_gpu_pct`` their mean, exactly as NVML's time fraction is defined:
a kernel on one SM for the whole bin is a 100% sample.

Power follows activity (a static part with a context open, HBM traffic, and an SM part
that scales with clock^2.2); when it would exceed the enforced limit the clock is lowered
until it fits and "power cap" is reported (a loaded H100 is often there while healthy).
Temperature is a first-order lag towards inlet + R x power.  Calibration points are the
real H200 readings in tests/data/h200 (idle 78 W at 345 MHz; context open 121 W at 1980
MHz; one-element CUDA-graph kernels 123 W, 0.3% SM; a device copy 474 W, 88% DRAM at 1980
MHz; bf16 matmul 690-697 W at 1425-1485 MHz, 93% tensor, 58 C) and FACTS.md 12.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

BIN_S = 1.0 / 6.0  # the driver's GPU-Util sample period on H100/H200 (FACTS.md 12)
BINS_PER_S = 6


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    mem_total: int
    mem_reserved: int
    hbm_bw: float  # bytes/s, peak
    flops: float  # dense bf16 FLOP/s at max_clock
    max_clock: float  # MHz
    idle_clock: float
    mem_clock: float
    power_limit: float  # W
    p_idle: float  # no context: clocks parked
    p_ctx: float  # a context open, clocks up, no kernel
    p_sm: float  # all SMs active, no tensor work, at max clock
    p_tensor: float  # tensor pipes saturated, at max clock
    p_dram: float  # HBM at peak bandwidth
    sms: int
    gpm: bool  # Hopper+: SM active / occupancy / tensor / DRAM from GPM
    t_sw_limit: float  # software thermal slowdown target, C
    nvlink_bw: float  # bytes/s per direction, effective for collectives


H100 = GpuSpec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 567279616, 3.35e12, 989e12,
               1980, 345, 2619, 700, 72, 116, 140, 950, 255, 132, True, 87, 3.6e11)
H200 = GpuSpec("H200", "NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12,
               1980, 345, 3201, 700, 78, 121, 140, 950, 250, 132, True, 87, 3.6e11)
A100 = GpuSpec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 476053504, 2.039e12, 312e12,
               1410, 210, 1593, 400, 58, 86, 75, 390, 115, 108, False, 85, 2.4e11)
SPECS = {s.key: s for s in (H100, H200, A100)}

CLOCK_EXP = 2.2  # dynamic power ~ f x V^2 with V rising with f over the boost range
CLOCK_STEP = 15.0  # NVML reports SM clocks in 15 MHz steps on Hopper (tests/data/h200)


def bw_clock_factor(clock: float, spec: GpuSpec) -> float:
    """HBM bandwidth reachable at an SM clock: SMs slowed far enough cannot issue loads
    fast enough to keep HBM busy (about 60% of max clock still saturates it)."""
    return min(1.0, 1.6 * clock / spec.max_clock)


class Gpu:
    """One GPU's activity bins plus its clock / power / temperature state."""

    def __init__(self, index: int, spec: GpuSpec, duration_s: float, rng: random.Random,
                 inlet_c: float = 27.0, r_th: float = 0.046, power_jitter: float = 0.02):
        self.index = index
        self.spec = spec
        self.rng = rng
        n = int(duration_s * BINS_PER_S) + 64
        self.busy = [0.0] * n
        self.sm = [0.0] * n
        self.occ = [0.0] * n
        self.tensor = [0.0] * n
        self.dram = [0.0] * n
        self.nbins = n
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        bus = (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb)[index % 8]
        self.bus_id = f"00000000:{bus:02X}:00.0"
        self.inlet_c = inlet_c
        self.r_th = r_th
        self.power_scale = 1.0 + rng.uniform(-power_jitter, power_jitter)  # silicon lottery
        self.sm_bias = 1.0 + rng.uniform(-0.02, 0.02)  # board-to-board spread of GPM readings
        self.clock = spec.idle_clock
        self.temp = inlet_c + r_th * spec.p_idle
        self.power = spec.p_idle
        self.thermal_clock = spec.max_clock
        # pathologies set these (functions of time or None)
        self.clock_hold = None  # t -> MHz or None: clocks locked (nvidia-smi -lgc)
        self.brake = None  # t -> MHz or None: HW power brake / slowdown (external signal)
        self.r_th_fn = None  # t -> C/W: cooling
        self.intruders = []  # other contexts time-slicing this GPU (cuda.Intruder)
        self.throttle: tuple[str, ...] = ()
        self._capped = False
        self.next_clock = spec.idle_clock

    # ------------------------------------------------------------ activity

    def add(self, t0: float, dur: float, sm: float, occ: float, tensor: float, dram: float,
            duty: float = 1.0) -> None:
        """Kernels resident for ``duty`` of [t0, t0+dur) with the given activity fractions
        (fractions of that busy time; sm = fraction of SMs with a warp)."""
        if dur <= 0 or duty <= 0:
            return
        end = t0 + dur
        b = int(t0 * BINS_PER_S)
        if b < 0:
            b = 0
        busy, smv, occv, tv, dv = self.busy, self.sm, self.occ, self.tensor, self.dram
        sm = min(1.0, sm * self.sm_bias)
        nb = self.nbins
        while t0 < end and b < nb:
            bend = (b + 1) * BIN_S
            seg = (end if end < bend else bend) - t0
            if seg > 0:
                s = seg * duty
                busy[b] += s
                smv[b] += s * sm
                occv[b] += s * occ
                tv[b] += s * tensor
                dv[b] += s * dram
            t0 = bend
            b += 1

    def fill_idle(self, lo_bin: int, hi_bin: int, duty: float, sm: float, occ: float,
                  tensor: float, dram: float) -> None:
        """Another context's kernels in the time the GPU had nothing else to run."""
        for b in range(max(0, lo_bin), min(hi_bin, self.nbins)):
            free = BIN_S - self.busy[b]
            if free <= 0:
                continue
            s = free * duty
            self.busy[b] += s
            self.sm[b] += s * sm
            self.occ[b] += s * occ
            self.tensor[b] += s * tensor
            self.dram[b] += s * dram

    def share(self, t: float) -> float:
        """Fraction of this GPU's time another process's kernels take from a job here
        (time-slicing between contexts: an always-busy second context takes about half)."""
        s = 0.0
        for it in self.intruders:
            s += it.share(t)
        return min(0.85, s)

    def intruder_mix(self, t: float) -> tuple[float, float, float, float]:
        """Activity (sm, occ, tensor, dram) of the other contexts' kernels, share-weighted."""
        tot = 0.0
        acc = [0.0, 0.0, 0.0, 0.0]
        for it in self.intruders:
            s = it.share(t)
            if s > 0:
                tot += s
                for i, v in enumerate(it.act):
                    acc[i] += s * v
        if tot <= 0:
            return (0.0, 0.0, 0.0, 0.0)
        return tuple(v / tot for v in acc)

    def clock_at(self, t: float) -> float:
        return self.clock

    # ------------------------------------------------------------ per tick

    def power_model(self, clock: float, util: float, sm: float, tensor: float, dram: float,
                    context: bool) -> float:
        spec = self.spec
        if not context and util <= 0.0:
            return spec.p_idle * self.power_scale
        f = (clock / spec.max_clock) ** CLOCK_EXP
        static = spec.p_ctx * (0.85 + 0.15 * clock / spec.max_clock)
        p = static + spec.p_dram * dram + f * (spec.p_sm * sm + spec.p_tensor * tensor)
        p += 4.0 * util  # front end busy: one-element kernels still add a few W
        return p * self.power_scale

    def end_tick(self, t_prev: float, t: float, context: bool) -> dict:
        """Read this tick's values (as NVML/GPM would) and move clock/temp for the next."""
        spec = self.spec
        lo = int(math.floor(t_prev * BINS_PER_S))
        hi = int(math.floor(t * BINS_PER_S))
        if hi <= lo:
            hi = lo + 1
        samples = []
        tb = ts = to = tt = td = 0.0
        for b in range(lo, min(hi, self.nbins)):
            busy = min(BIN_S, self.busy[b])
            scale = busy / self.busy[b] if self.busy[b] > 0 else 0.0
            samples.append(float(round(100.0 * busy / BIN_S)))
            tb += busy
            ts += self.sm[b] * scale
            to += self.occ[b] * scale
            tt += self.tensor[b] * scale
            td += self.dram[b] * scale
        span = max(1e-9, (hi - lo) * BIN_S)
        util = tb / span
        sm, occ, tensor, dram = ts / span, to / span, tt / span, td / span
        clock = self.clock
        power = self.power_model(clock, util, sm, tensor, dram, context)
        out = {
            "samples": tuple(samples),
            "util": float(round(sum(samples) / len(samples))) if samples else 0.0,
            "sm": min(100.0, 100.0 * sm), "occ": min(100.0, 100.0 * occ),
            "tensor": min(100.0, 100.0 * tensor), "dram": min(100.0, 100.0 * dram),
            "clock": clock, "throttle": self.throttle,
        }
        # the enforced limit: the reading sits just under it while the cap binds
        if power > spec.power_limit:
            out["power"] = spec.power_limit - self.rng.uniform(2.0, 9.0)
        else:
            out["power"] = power * (1.0 + self.rng.gauss(0, 0.004))
        # temperature: first-order lag, tau ~ 30 s
        dt = max(0.05, t - t_prev)
        r_th = self.r_th_fn(t) if self.r_th_fn else self.r_th
        t_ss = self.inlet_c + r_th * out["power"]
        self.temp += (t_ss - self.temp) * (1.0 - math.exp(-dt / 30.0))
        out["temp"] = float(round(self.temp))
        self.power = out["power"]
        self._next_clock(t, dt, util, sm, tensor, dram, context)
        return out

    def _next_clock(self, t, dt, util, sm, tensor, dram, context) -> None:
        spec = self.spec
        if not context and util <= 0.0:
            self.clock = spec.idle_clock
            self.throttle = ()
            return
        limit = spec.max_clock
        reasons: list[str] = []
        hold = self.clock_hold(t) if self.clock_hold else None
        if hold:
            limit = min(limit, hold)
        brake = self.brake(t) if self.brake else None
        if brake:
            if brake < limit:
                limit = brake
            reasons += ["hw slowdown", "power brake"]
        # software thermal slowdown holds the die at its target by lowering the clock
        if self.temp > spec.t_sw_limit:
            self.thermal_clock = max(spec.max_clock * 0.3,
                                     self.thermal_clock - 45.0 * (self.temp - spec.t_sw_limit) * dt)
        else:
            self.thermal_clock = min(spec.max_clock, self.thermal_clock + 25.0 * dt)
        if self.thermal_clock < limit - 1:
            limit = self.thermal_clock
            reasons.append("thermal (sw)")
            if self.temp > spec.t_sw_limit + 5:
                reasons.append("hw slowdown")
        # power cap: the highest clock whose modelled power fits the limit
        clock = limit
        if util > 0.02:
            f = (limit / spec.max_clock) ** CLOCK_EXP
            static = spec.p_ctx * (0.85 + 0.15 * limit / spec.max_clock) + spec.p_dram * dram + 4 * util
            dyn = spec.p_sm * sm + spec.p_tensor * tensor
            p = (static + f * dyn) * self.power_scale
            cap = spec.power_limit * 0.995
            if p > cap and dyn > 0:
                room = max(0.05, (cap / self.power_scale - static) / dyn)
                fit = spec.max_clock * room ** (1.0 / CLOCK_EXP)
                if fit < limit:
                    clock = fit + self.rng.gauss(0.0, 12.0)  # the cap's wobble
                    if "power cap" not in reasons:
                        reasons.insert(0, "power cap")
        clock = max(spec.idle_clock, min(clock, spec.max_clock))
        self.clock = CLOCK_STEP * round(clock / CLOCK_STEP) if spec.gpm else 15 * round(clock / 15)
        self.throttle = tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                          "thermal (hw)", "power brake") if r in reasons)
