"""GPU boards, their power / clock / thermal response, and what NVML (+ GPM) reports.

One ``Board`` per GPU.  Each tick the workload hands it an ``Activity`` (time fractions over
the tick: kernel-busy, SM-active, tensor-active, DRAM-active, occupancy) and it answers a
``GpuSample`` as gputop's NVML source would write it, plus the clock factor the workload
runs at on the next tick (power cap / thermal / brake feedback).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import GpuSample

GIB = 1 << 30
MIB = 1 << 20
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclass(frozen=True)
class Spec:
    name: str
    mem_mib: int
    tdp_w: float
    idle_w: float
    clk_max: float
    clk_idle: float
    mem_clk: float
    hbm_gbs: float  # peak device-memory bandwidth, GB/s
    tflops: float  # dense bf16 peak
    gpm: bool
    fan: bool  # a fan sensor NVML reads (PCIe boards with a fan); SXM/passive: not supported
    reserved_mib: int
    temp_amb: float = 30.0
    temp_per_w: float = 0.045
    slowdown_c: float = 87.0
    nvlink: bool = True


SPECS = {
    "A100": Spec("NVIDIA A100-SXM4-80GB", 81920, 400, 55, 1410, 210, 1593, 2039, 312, False,
                 False, 550, temp_per_w=0.075),
    "L40S": Spec("NVIDIA L40S", 46068, 350, 35, 2520, 210, 9001, 864, 362, False, False, 470,
                 temp_per_w=0.13, slowdown_c=88.0, nvlink=False),
    "A10G": Spec("NVIDIA A10G", 23028, 300, 25, 1710, 210, 6251, 600, 125, False, True, 420,
                 temp_per_w=0.12, nvlink=False),
    "H100": Spec("NVIDIA H100 80GB HBM3", 81559, 700, 70, 1980, 345, 2619, 3350, 989, True,
                 False, 560),
    "H200": Spec("NVIDIA H200", 143771, 700, 78, 1980, 345, 3201, 4800, 989, True, False, 615),
    "B200": Spec("NVIDIA B200", 183359, 1000, 140, 1965, 420, 3996, 8000, 2250, True, False,
                 700, temp_per_w=0.035),
}


@dataclass
class Activity:
    busy: float = 0.0  # fraction of the tick with >= 1 kernel running (NVML GPU-Util)
    sm: float = 0.0  # GPM SM active
    tensor: float = 0.0
    dram: float = 0.0
    occ: float = 0.0
    copy: float = 0.0  # PCIe / host copies (util.memory contribution small)
    nvlink_gbs: float = 0.0
    pcie_gbs: float = 0.0

    def add(self, other: "Activity", w: float) -> None:
        for k in ("busy", "sm", "tensor", "dram", "occ", "copy", "nvlink_gbs", "pcie_gbs"):
            setattr(self, k, getattr(self, k) + w * getattr(other, k))


@dataclass
class Board:
    index: int
    spec: Spec
    rng: object
    uuid: str = ""
    bus_id: str = ""
    temp: float = 34.0
    power: float = 0.0
    clock: float = 0.0
    clock_factor: float = 1.0
    power_limit: float = 0.0
    # forced conditions set by a scenario: extra heat (a failed chassis fan), a power brake
    heat_mult: float = 1.0
    brake: float = 1.0  # clock ceiling factor from HW power brake / HW slowdown
    brake_reason: tuple[str, ...] = ()
    ticks: int = 0
    ecc_corrected: int = 0
    gpm_seen: bool = False
    _util_prev: float = 0.0
    missing_extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.power = self.spec.idle_w
        self.clock = self.spec.clk_idle
        self.power_limit = self.spec.tdp_w
        self.temp = self.spec.temp_amb + 4 + self.rng.random() * 3

    def sample(self, act: Activity, mem_used: int, dt: float) -> GpuSample:
        s, r = self.spec, self.rng
        busy = min(1.0, max(0.0, act.busy))
        # what the board would draw at full clock for this mix (a dense GEMM wants more
        # than the TDP of an H100/H200 SXM: the power cap is the normal state there)
        want = s.idle_w + (s.tdp_w - s.idle_w) * (0.10 * busy + 1.25 * act.tensor
                                                   + 0.30 * act.dram + 0.20 * act.sm)
        want *= 1 + r.gauss(0, 0.012)
        reasons: list[str] = []
        factor = 1.0
        limit = self.power_limit
        if want > limit * 0.985 and busy > 0.05:
            ratio = (limit - s.idle_w) / max(1.0, want - s.idle_w)
            factor = min(1.0, ratio ** 0.667)  # dynamic power ~ f^1.5 here
            power = limit * (0.975 + 0.02 * r.random())
            reasons.append("power cap")
        else:
            power = want
        # thermal: first order towards ambient + k * P (tau ~30 s); past the slowdown
        # temperature the clock is pulled down, and the power with it (P_dyn ~ f^1.5)
        if self.temp > s.slowdown_c:
            over = self.temp - s.slowdown_c
            hot = max(0.4, 1 - 0.12 * over)
            if hot < factor:
                power = s.idle_w + (power - s.idle_w) * (hot / factor) ** 1.5
                factor = hot
            reasons.append("thermal (sw)")
            if over > 2.5:
                reasons.append("hw slowdown")
        target = s.temp_amb + s.temp_per_w * self.heat_mult * power
        self.temp += (target - self.temp) * min(1.0, dt / 30.0)
        if self.brake < 1.0:
            factor = min(factor, self.brake)
            reasons.extend(x for x in self.brake_reason if x not in reasons)
            power = min(power, s.idle_w + (power - s.idle_w) * self.brake)
        if busy < 0.02:
            clock = s.clk_idle + r.random() * 30
            reasons = [x for x in reasons if x != "power cap"]
            power = s.idle_w * (0.97 + 0.06 * r.random()) if self.brake == 1.0 else power
        else:
            clock = s.clk_max * factor
            clock = 15 * round(clock / 15)
        self.clock_factor = factor if busy >= 0.02 else 1.0
        self.power = power
        self.clock = clock
        self.ticks += 1
        util = round(min(100.0, 100 * busy + r.gauss(0, 0.6) * (busy > 0.02)))
        util = max(0.0, float(util))
        n_samples = max(1, round((6 if s.gpm else 5) * dt))
        samples = tuple(float(max(0, min(100, round(util + r.gauss(0, 1.5 if 5 < util < 95 else 0.4)))))
                        for _ in range(n_samples))
        missing: dict[str, str] = {}
        values: dict = {}
        if s.gpm:
            if self.ticks == 1:
                for k in GPM_FIELDS:
                    missing[k] = "GPM needs a second sample"
            else:
                clockish = max(0.3, factor)
                values.update(
                    sm_active_pct=_pct(act.sm * 100 + r.gauss(0, 0.6) * (act.sm > 0.02)),
                    sm_occupancy_pct=_pct(act.occ * 100 + r.gauss(0, 0.3) * (act.occ > 0.02)),
                    tensor_pct=_pct(act.tensor * 100 * (0.97 + 0.03 * clockish)
                                    + r.gauss(0, 0.5) * (act.tensor > 0.02)),
                    dram_bw_pct=_pct(act.dram * 100 + r.gauss(0, 0.6) * (act.dram > 0.02)),
                    pcie_rx_mib_per_s=max(0.0, act.pcie_gbs * 1e9 / MIB * 0.6 + r.random() * 3),
                    pcie_tx_mib_per_s=max(0.0, act.pcie_gbs * 1e9 / MIB * 0.4 + r.random() * 3),
                    nvlink_rx_mib_per_s=max(0.0, act.nvlink_gbs * 1e9 / MIB * (1 + r.gauss(0, 0.03)))
                    if s.nvlink else None,
                    nvlink_tx_mib_per_s=max(0.0, act.nvlink_gbs * 1e9 / MIB * (1 + r.gauss(0, 0.03)))
                    if s.nvlink else None)
        else:
            for k in GPM_FIELDS:
                missing[k] = NO_GPM
        if not s.fan:
            missing["fan_pct"] = "not supported on this GPU"
            fan = None
        else:
            fan = float(round(min(100, 30 + max(0, self.temp - 40) * 1.6)))
        missing.update(self.missing_extra)
        mem_util = round(min(100.0, 100 * act.dram * 0.85 + 100 * act.copy * 0.2))
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid,
            util_gpu_pct=util, util_gpu_samples_pct=samples, util_mem_pct=float(mem_util),
            mem_total_bytes=s.mem_mib * MIB - s.reserved_mib * MIB,
            mem_used_bytes=int(mem_used), mem_reserved_bytes=s.reserved_mib * MIB,
            power_w=round(power + r.gauss(0, 1.2), 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=self.bus_id,
            fan_pct=fan, pstate=0 if busy >= 0.02 or mem_used > 2 * GIB else 8,
            power_limit_w=float(self.power_limit), mem_clock_mhz=float(s.mem_clk),
            ecc_corrected=self.ecc_corrected, ecc_uncorrected=0, xid_count=0,
            mig_mode=False, missing=missing, **values)


def _pct(x: float) -> float:
    return max(0.0, min(100.0, x))


def boards(model: str, n: int, rng, first_index: int = 0, total: int | None = None) -> list[Board]:
    spec = SPECS[model]
    out = []
    for i in range(first_index, first_index + n):
        b = Board(i, spec, rng)
        b.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        bus = (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb)[i % 8]
        b.bus_id = f"00000000:{bus:02X}:00.0"
        out.append(b)
    return out


def lognorm(rng, median: float, sigma: float) -> float:
    return median * math.exp(rng.gauss(0, sigma))
