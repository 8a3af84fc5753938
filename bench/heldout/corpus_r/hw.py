"""GPUs as NVML/GPM read them: specs, power, clocks, temperature, throttle reasons, and
the per-tick GpuSample from what the workloads made the GPU do.

Calibration (data/h200, a real H200, driver 580.159): idle without a context 79 W at
345 MHz; with a context 122-125 W at 1980 MHz; power = idle_ctx + 1.45 W per % SM active
+ 12.3 W per % tensor active + 2.2 W per % DRAM bandwidth fits the lab's phases within
~5% (serve host-bound 129 W, prefill 320 W, KV decode 205 W, training 480 W, d2d copy
473 W, bf16 matmul demand ~1190 W -> held at the 700 W cap at 1440-1500 MHz with
"power cap" set while healthy).  Clocks under a cap: c = ((limit - idle) / dyn)^0.45
(fits 1470 MHz for the matmul).  Temperature (39 C at 125 W, 48-50 C
at 480 W, 57-60 C at 660 W: 33 C + 0.040 C/W fits), first-order lag of 20 s.  Other GPUs scale the dynamic
coefficients by (TDP - idle_ctx) / (700 - 122).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from gputop.schema import GpuSample

H200_COEF = (1.45, 12.3, 2.2)  # W per % of SM active, tensor active, DRAM bandwidth
NO_GPM = {k: "needs Hopper+ (GPM)" for k in ("sm_active_pct", "sm_occupancy_pct",
                                             "dram_bw_pct", "tensor_pct")}
BUS_IDS = ("00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
           "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0")


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    mem_total: int
    sms: int
    bw: float  # HBM/GDDR bytes/s (datasheet)
    flops: float  # dense bf16 FLOP/s (datasheet)
    tdp: float
    idle_noctx: float
    idle_ctx: float
    clock_max: float
    clock_idle: float
    mem_clock: float
    gpm: bool
    t_amb: float
    r_th: float  # C per W at steady state
    t_slow: float  # software thermal slowdown
    t_hw: float  # hardware slowdown
    nvlink: bool = True

    @property
    def reserved(self) -> int:
        return int(self.mem_total * 0.004278 // 2**20) * 2**20  # H200: 615 MiB of 140 GiB

    @property
    def coef(self) -> tuple[float, float, float]:
        s = (self.tdp - self.idle_ctx) / (700.0 - 122.0)
        return tuple(c * s for c in H200_COEF)


SPECS = {
    "H200": GpuSpec("H200", "NVIDIA H200", 150754820096, 132, 4.8e12, 989e12, 700, 79, 122,
                    1980, 345, 3201, True, 33, 0.040, 87, 92),
    "H100": GpuSpec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 132, 3.35e12, 989e12, 700,
                    71, 113, 1980, 345, 2619, True, 29, 0.047, 87, 92),
    "A100": GpuSpec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 108, 2.039e12, 312e12, 400,
                    52, 66, 1410, 210, 1593, False, 28, 0.09, 87, 92),
    "L40S": GpuSpec("L40S", "NVIDIA L40S", 48305799168, 142, 0.864e12, 362e12, 350, 33, 79,
                    2520, 210, 9001, False, 30, 0.13, 88, 93, nvlink=False),
    "B200": GpuSpec("B200", "NVIDIA B200", 192265846784, 148, 8.0e12, 2250e12, 1000, 138, 188,
                    1965, 600, 3996, True, 27, 0.040, 87, 92),
    "L4": GpuSpec("L4", "NVIDIA L4", 24152899584, 58, 0.3e12, 121e12, 72, 16, 27, 2040, 210,
                  6251, False, 31, 0.55, 88, 93, nvlink=False),
}


@dataclass
class Activity:
    """What one GPU did during a tick, summed over the processes on it."""

    busy: list[float]  # per NVML sample period: fraction of time >= 1 kernel ran
    sm: float = 0.0  # SM-active fraction over the tick (GPM SM_UTIL / 100)
    occ: float = 0.0  # occupancy fraction
    dram: float = 0.0
    tensor: float = 0.0
    pcie_rx: float = 0.0  # MiB/s
    pcie_tx: float = 0.0
    nvl_rx: float = 0.0
    nvl_tx: float = 0.0
    ctx: bool = False  # a CUDA context is open

    def add(self, other: "Activity") -> None:
        n = len(self.busy)
        for i in range(n):
            self.busy[i] += other.busy[i] if i < len(other.busy) else 0.0
        self.sm += other.sm
        self.occ += other.occ
        self.dram += other.dram
        self.tensor += other.tensor
        self.pcie_rx += other.pcie_rx
        self.pcie_tx += other.pcie_tx
        self.nvl_rx += other.nvl_rx
        self.nvl_tx += other.nvl_tx
        self.ctx = self.ctx or other.ctx


@dataclass
class GpuState:
    """One board: thermal state, the clock it will run at, injected faults."""

    spec: GpuSpec
    index: int
    uuid: str
    rng: random.Random
    temp: float = 0.0
    clock_factor: float = 1.0  # what the workloads see this tick (set by the last tick)
    power_limit: float = 0.0
    r_mult: float = 1.0  # cooling degraded (>1)
    brake: bool = False  # external power brake asserted (BMC / PSU)
    throttle: tuple[str, ...] = ()
    power: float = 0.0
    tick_no: int = 0
    mem_extra: int = 0
    hidden_used: int = 0  # memory of processes NVML does not list (another container)
    sm_prev: float | None = None

    def __post_init__(self):
        self.power_limit = self.power_limit or self.spec.tdp
        self.temp = self.temp or (self.spec.t_amb + self.spec.r_th * self.spec.idle_ctx - 1.0)
        self.power = self.spec.idle_noctx

    def sample(self, act: Activity, mem_used: int, tick_s: float) -> GpuSample:
        s, rng = self.spec, self.rng
        self.tick_no += 1
        busy = [min(1.0, max(0.0, b)) for b in act.busy]
        sm = min(1.0, act.sm)
        tensor = min(sm, act.tensor)
        dram = min(1.0, act.dram)
        occ = min(sm, act.occ)
        a_sm, a_tc, a_dr = s.coef
        dyn = a_sm * sm * 100 + a_tc * tensor * 100 + a_dr * dram * 100
        idle = s.idle_ctx if act.ctx else s.idle_noctx
        # the clock this tick: power cap, thermal, brake (what NVML reports as reasons)
        limits = {}
        if dyn > 1e-9 and idle + dyn > self.power_limit * 0.985:
            limits["power cap"] = ((self.power_limit * 0.985 - idle) / dyn) ** 0.45
        t_target_full = s.t_amb + s.r_th * self.r_mult * (idle + dyn)
        if t_target_full > s.t_slow and self.temp > s.t_slow - 1.5 and dyn > 0:
            allowed = (s.t_slow - 0.5 - s.t_amb) / (s.r_th * self.r_mult) - idle
            limits["thermal (sw)"] = max(0.35, (max(allowed, 1.0) / dyn) ** 0.45)
        c = min(limits.values(), default=1.0)
        # NVML reports the reasons holding the clock now: the binding one(s)
        reasons = [k for k, v in limits.items() if v <= c * 1.03]
        if self.temp > s.t_hw:
            c = min(c, 0.5)
            reasons += ["hw slowdown", "thermal (hw)"]
        if self.brake:
            c = min(c, 0.33)
            reasons = ["power brake", "hw slowdown"]
        c = max(0.2, min(1.0, c + (rng.gauss(0, 0.02) if c < 0.999 else 0.0)))
        power = idle + dyn * c ** (1 / 0.45) + rng.gauss(0, 0.8 + 0.004 * dyn)
        if "power cap" in reasons:
            power = min(power, self.power_limit - rng.uniform(2, 14))
        self.power = max(s.idle_noctx * 0.95, power)
        target = s.t_amb + s.r_th * self.r_mult * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-tick_s / 20.0))
        clock = s.clock_max * c if act.ctx or sum(busy) > 0 else s.clock_idle
        if c < 0.999:
            clock = 15 * round(clock / 15)  # NVML clocks come in 15 MHz steps
        self.clock_factor = c if act.ctx else 1.0
        self.throttle = tuple(dict.fromkeys(reasons))
        # NVML GPU-Util: the driver's samples since the last tick, and its own average
        samples = tuple(float(max(0, min(100, round(100 * b + rng.gauss(0, 2.0 if 0 < b < 1 else 0.0)))))
                        for b in busy)
        mean = sum(busy) / max(1, len(busy))
        util = float(max(0, min(100, round(100 * mean + rng.gauss(0, 2.5 if 0.02 < mean < 0.98 else 0.3)))))
        umem = float(max(0, min(100, round(100 * min(1.0, dram * 1.28 * (1 if mean > 0 else 0))
                                           + rng.gauss(0, 1.0) * (dram > 0.01)))))
        missing = {"fan_pct": "not supported on this GPU"}
        gpm = dict(sm_active_pct=None, sm_occupancy_pct=None, dram_bw_pct=None, tensor_pct=None)
        if not s.gpm:
            missing.update(NO_GPM)
        elif self.tick_no == 1:
            missing.update({k: "GPM needs two samples" for k in NO_GPM})
        else:
            j = lambda v, r=0.015: max(0.0, 100 * v * (1 + rng.gauss(0, r)) + rng.gauss(0, 0.03))
            gpm = dict(sm_active_pct=min(100.0, j(sm)), sm_occupancy_pct=min(100.0, j(occ)),
                       dram_bw_pct=min(100.0, j(dram)), tensor_pct=min(100.0, j(tensor)))
        used = min(s.mem_total - s.reserved, mem_used + self.mem_extra + self.hidden_used)
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=samples, util_mem_pct=umem, **gpm,
            mem_total_bytes=s.mem_total, mem_used_bytes=int(used),
            mem_reserved_bytes=s.reserved, power_w=round(self.power, 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=float(round(clock)),
            throttle=self.throttle, bus_id=BUS_IDS[self.index % 8], fan_pct=None, pstate=0,
            power_limit_w=float(self.power_limit), mem_clock_mhz=float(s.mem_clock),
            pcie_rx_mib_per_s=(act.pcie_rx * (1 + rng.gauss(0, 0.05)) + rng.uniform(0.5, 3)) if s.gpm else None,
            pcie_tx_mib_per_s=(act.pcie_tx * (1 + rng.gauss(0, 0.05)) + rng.uniform(0.2, 2)) if s.gpm else None,
            nvlink_rx_mib_per_s=(max(0.0, act.nvl_rx * (1 + rng.gauss(0, 0.04)))) if s.gpm else None,
            nvlink_tx_mib_per_s=(max(0.0, act.nvl_tx * (1 + rng.gauss(0, 0.04)))) if s.gpm else None,
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, xid_last=None, mig_mode=False,
            missing=missing)


def uuid_for(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
