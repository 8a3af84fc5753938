"""GPUs as NVML and GPM would read them: util sampled every 1/6 s, SM/DRAM/tensor activity as
time averages, power from the work done, clocks held by the power cap and by thermal control.

Calibrated on the real H200 in tests/data/h200: idle with a context 121 W at 1980 MHz; bf16
matmul 95.6% SM, 14% occupancy, 92.8% tensor, 17% DRAM at ~690 W, 1470 MHz ("power cap");
device copy 99% SM, 88.5% DRAM at ~474 W, no throttle; one-element kernels in a CUDA graph 100%
GPU-Util at 0.3% SM.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")
SUB_S = 1.0 / 6.0  # the driver's GPU-Util sample period on these boards


@dataclass(frozen=True)
class GpuSpec:
    name: str
    mem_total: int
    reserved: int
    hbm_bw: float  # B/s achievable peak (what DRAM_BW 100% means)
    flops: float  # dense bf16 FLOP/s at max clock
    sms: int
    gpm: bool
    power_cap: float
    off_w: float  # no process: idle clocks
    ctx_w: float  # a context open, clocks up, no kernels
    max_clock: float
    idle_clock: float
    k_tensor: float  # W of tensor work at full clock
    k_sm: float  # W of non-tensor SM work at full clock
    k_dram: float  # W at 100% DRAM bandwidth
    nvlink_bw: float  # B/s per direction


H100 = GpuSpec("NVIDIA H100 80GB HBM3", 85520809984, 603979776, 3.35e12, 989e12, 132, True,
               700.0, 72.0, 116.0, 1980.0, 345.0, 860.0, 60.0, 350.0, 450e9)
H200 = GpuSpec("NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12, 132, True,
               700.0, 78.6, 121.4, 1980.0, 345.0, 860.0, 60.0, 350.0, 450e9)
A100 = GpuSpec("NVIDIA A100-SXM4-80GB", 85899345920, 536870912, 2.039e12, 312e12, 108, False,
               400.0, 52.0, 84.0, 1410.0, 210.0, 420.0, 35.0, 200.0, 300e9)
SPECS = {"H100": H100, "H200": H200, "A100": A100}


@dataclass
class Act:
    """What one GPU did over a sub-interval, as time fractions 0..1."""
    busy: float = 0.0  # share of time with a kernel running (NVML GPU-Util)
    sm: float = 0.0  # share of SMs busy, time-averaged (GPM SM_UTIL)
    occ: float = 0.0  # warps resident / max (GPM SM_OCCUPANCY)
    dram: float = 0.0  # of peak HBM bandwidth
    tensor: float = 0.0  # tensor pipe active
    memctl: float | None = None  # NVML utilization.memory; derived from dram when None
    nvlink: float = 0.0  # B/s moved over NVLink
    pcie: float = 0.0  # B/s host to device


class Gpu:
    """One board's electrical and thermal state, stepped every sub-interval."""

    def __init__(self, index: int, spec: GpuSpec, rng, ambient_c: float = 30.0,
                 r_c_per_w: float = 0.041, tau_s: float = 45.0, bus: int = 0x18):
        self.index, self.spec, self.rng = index, spec, rng
        self.ambient, self.r, self.tau = ambient_c, r_c_per_w, tau_s
        self.temp = ambient_c + 4.0 + rng.uniform(-1, 1)
        self.clock = spec.idle_clock
        self.power = spec.off_w
        self.context = False  # a process holds a context: clocks up
        self.mem_used = 0
        self.thermal_limit = spec.max_clock
        self.slow_temp = 87.0  # software thermal slowdown target
        self.brake = None  # None or ("power brake"|"hw slowdown", clock ceiling)
        self.reasons: tuple[str, ...] = ()
        self.samples: list[float] = []
        self.fixed_avg = spec.off_w
        self.var_avg = 0.0
        self.acc = {"sm": 0.0, "occ": 0.0, "dram": 0.0, "tensor": 0.0, "mem": 0.0,
                    "nvl": 0.0, "pcie": 0.0, "n": 0}
        self.offset = rng.uniform(-0.6, 0.6)  # board-to-board spread in watts and percent
        self.ecc = 0
        self.bus = f"00000000:{bus:02X}:00.0"

    # ---- what the work costs the engine in time at the current clocks
    def compute_slow(self) -> float:
        return self.spec.max_clock / max(self.clock, 100.0)

    def memory_slow(self) -> float:
        # streaming kernels need enough SM clock to keep HBM busy: below ~65% clocks they slow
        knee = 0.66 * self.spec.max_clock
        return max(1.0, knee / max(self.clock, 100.0))

    def step(self, act: Act, dt: float) -> None:
        s = self.spec
        if not self.context:
            act = Act()
        fmax = s.max_clock
        base = s.ctx_w if self.context else s.off_w
        fixed = base + s.k_dram * act.dram + self.offset
        var_full = s.k_tensor * act.tensor + s.k_sm * max(0.0, act.sm - act.tensor * 0.6)
        ceiling = min(fmax, self.thermal_limit)
        reasons = []
        if self.brake is not None:
            ceiling = min(ceiling, self.brake[1])
            reasons.append(self.brake[0])
        if self.thermal_limit < fmax - 1:
            reasons.append("thermal (sw)")
        clock = ceiling if self.context else s.idle_clock
        # the power controller acts on power averaged over ~0.5 s, not on one burst
        a_p = min(1.0, dt / 0.5)
        self.fixed_avg += (fixed - self.fixed_avg) * a_p
        self.var_avg += (var_full - self.var_avg) * a_p
        demand_avg = self.fixed_avg + self.var_avg * (clock / fmax) ** 1.5
        if self.context and demand_avg > s.power_cap and self.var_avg > 1:
            f_cap = fmax * max(0.05, (s.power_cap - self.fixed_avg) / self.var_avg) ** (1 / 1.5)
            if f_cap < clock:
                clock = f_cap
                reasons.append("power cap")
        demand = fixed + var_full * (clock / fmax) ** 1.5
        # the driver moves clocks in 15 MHz steps and not instantly
        target = round(clock / 15.0) * 15.0
        self.clock += (target - self.clock) * min(1.0, dt / 0.4)
        self.clock = round(self.clock / 15.0) * 15.0
        self.power = demand + self.rng.gauss(0, 0.6 + 0.004 * demand)
        self.reasons = tuple(dict.fromkeys(reasons))
        # thermal: first order toward ambient + R * P; sw slowdown pulls the limit down
        a = 1.0 - math.exp(-dt / self.tau)
        self.temp += (self.ambient + self.r * self.power - self.temp) * a
        if self.temp > self.slow_temp:
            self.thermal_limit = max(0.45 * fmax, self.thermal_limit - 90.0 * dt)
        elif self.temp < self.slow_temp - 2.0:
            self.thermal_limit = min(fmax, self.thermal_limit + 60.0 * dt)
        # NVML's sample: share of the 1/6 s with a kernel running, integer percent
        u = 100.0 * act.busy
        if 0.0 < u < 100.0:
            u += self.rng.gauss(0, 1.2)
        self.samples.append(float(max(0, min(100, round(u)))))
        acc = self.acc
        acc["sm"] += act.sm
        acc["occ"] += act.occ
        acc["dram"] += act.dram
        acc["tensor"] += act.tensor
        acc["mem"] += act.memctl if act.memctl is not None else min(1.0, act.dram * 1.12)
        acc["nvl"] += act.nvlink
        acc["pcie"] += act.pcie
        acc["n"] += 1

    def sample(self, first: bool) -> GpuSample:
        s, acc = self.spec, self.acc
        n = max(1, acc["n"])
        samples = tuple(self.samples)
        util = None
        if samples:
            last = samples[-6:]
            util = float(round(sum(last) / len(last)))
        missing: dict[str, str] = {"fan_pct": "not supported on this GPU"}
        vals: dict = {}
        if not s.gpm:
            for name in GPM_FIELDS:
                missing[name] = NO_GPM
            for name in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                         "nvlink_tx_mib_per_s"):
                missing[name] = NO_GPM
        elif first:
            for name in GPM_FIELDS:
                missing[name] = "GPM needs a second sample"
        else:
            jit = self.rng.gauss
            vals = dict(sm_active_pct=_pct(100 * acc["sm"] / n + jit(0, 0.25)),
                        sm_occupancy_pct=_pct(100 * acc["occ"] / n + jit(0, 0.1)),
                        dram_bw_pct=_pct(100 * acc["dram"] / n + jit(0, 0.2)),
                        tensor_pct=_pct(100 * acc["tensor"] / n + jit(0, 0.2)),
                        pcie_rx_mib_per_s=max(0.0, acc["pcie"] / n / 2**20 + abs(jit(0, 3))),
                        pcie_tx_mib_per_s=max(0.0, 0.05 * acc["pcie"] / n / 2**20 + abs(jit(0, 2))),
                        nvlink_rx_mib_per_s=acc["nvl"] / n / 2**20,
                        nvlink_tx_mib_per_s=acc["nvl"] / n / 2**20)
        mem_util = float(round(100 * acc["mem"] / n)) if acc["n"] else None
        g = GpuSample(
            index=self.index, name=s.name, uuid=f"GPU-{self.index:08x}-d00d-4c0e-a{self.index:03d}-corpusd",
            util_gpu_pct=util, util_gpu_samples_pct=samples, util_mem_pct=mem_util,
            mem_total_bytes=s.mem_total, mem_used_bytes=self.mem_used + (5 * 2**20 if self.context else 0),
            mem_reserved_bytes=s.reserved, power_w=round(self.power, 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=float(self.clock), throttle=self.reasons,
            bus_id=self.bus, pstate=0 if self.context else 8, power_limit_w=s.power_cap,
            mem_clock_mhz=2619.0 if s.gpm else 1593.0, ecc_corrected=self.ecc, ecc_uncorrected=0,
            xid_count=0, mig_mode=False, missing=missing, **vals)
        self.samples = []
        for k in acc:
            acc[k] = 0 if k == "n" else 0.0
        return g


def _pct(x: float) -> float:
    return max(0.0, min(100.0, x))
