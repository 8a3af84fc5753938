"""The boards of a mixed fleet, and one GPU's physics per tick.

One activity model drives every NVML/GPM number: a tick's work is (busy fraction ``b``,
and while busy the SM, tensor and DRAM fractions); GPU-Util is ``b`` (a time fraction),
SM/tensor/DRAM activity are time averages (``b`` x the fraction while busy), power is the
context floor plus a dynamic part that grows with SM, tensor and DRAM activity and with the
clock, the clock falls when the dynamic demand exceeds the enforced cap, when the die is hot
or when a hardware brake is asserted, and the temperature follows the power with a lag.

Calibrated on the real H200 recording (tests/data/h200): idle 79 W without a context and
121 W with one; bf16 matmul (SM 96%, tensor 93%, DRAM 17%) at ~690 W under "power cap" with
the SM clock at ~1455 MHz; a device copy (SM 99%, DRAM 88%, no tensor) at ~474 W at full
clock; one-element kernels at 100% GPU-Util, SM 0.3%, 123 W.  Memory-controller util
(NVML ``utilization.memory``) read 24% at DRAM 17% and 100% at DRAM 88%.
"""

from __future__ import annotations

from dataclasses import dataclass

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIRST = "GPM needs a second sample"
MIG_UTIL = "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)"
NOT_SUPPORTED = "not supported on this GPU"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclass(frozen=True)
class Board:
    key: str
    name: str
    mem_total: int
    reserved: int  # the driver's reserve (NVML v2 memory info)
    tdp_w: float
    idle_w: float  # no context, P8
    ctx_w: float  # a context open, P0, nothing running
    clock_mhz: float
    idle_clock_mhz: float
    mem_clock_mhz: float
    hbm_bytes_s: float
    bf16_flops: float
    gpm: bool
    t_amb_c: float
    r_c_per_w: float  # steady-state temperature rise per watt
    slowdown_c: float  # software thermal slowdown starts here
    nvlink: bool
    sms: int


BOARDS = {
    "H100": Board("H100", "NVIDIA H100 80GB HBM3", 85520809984, 567279616, 700, 68, 115,
                  1980, 345, 2619, 3.35e12, 989e12, True, 30.0, 0.045, 87, True, 132),
    "H200": Board("H200", "NVIDIA H200", 150754820096, 644939776, 700, 79, 121,
                  1980, 345, 3201, 4.8e12, 989e12, True, 33.5, 0.037, 87, True, 132),
    "B200": Board("B200", "NVIDIA B200", 191514411008, 713031680, 1000, 140, 190,
                  1965, 390, 3996, 8.0e12, 2250e12, True, 31.0, 0.030, 87, True, 148),
    "A100": Board("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 0, 400, 52, 78,
                  1410, 210, 1593, 2.04e12, 312e12, False, 29.0, 0.080, 88, True, 108),
    "L40S": Board("L40S", "NVIDIA L40S", 48305799168, 0, 350, 32, 78,
                  2520, 210, 9001, 0.864e12, 362e12, False, 31.0, 0.125, 89, False, 142),
    "A10G": Board("A10G", "NVIDIA A10G", 24146608128, 0, 300, 18, 58,
                  1710, 210, 6251, 0.6e12, 70e12, False, 28.0, 0.140, 88, False, 80),
}
DYN_PER_TDP = 1.31  # dynamic watts at full clock and full load, per TDP watt (H200 fit)


@dataclass
class Activity:
    """What the GPU's work asked for over one tick (fractions of the tick / of busy time)."""

    busy: float = 0.0  # fraction of time >= 1 kernel ran (GPU-Util)
    sm: float = 0.0  # SM active while busy
    occ: float = 0.3  # occupancy / SM active
    tensor: float = 0.0
    dram: float = 0.0
    nvlink_mib_s: float = 0.0
    pcie_mib_s: float = 0.0
    samples: tuple = ()  # sub-tick busy fractions (driver samples), else made from busy


class GpuState:
    """One board's clock, temperature and throttle state, carried across ticks."""

    def __init__(self, board: Board, index: int, rng, cap_w: float | None = None):
        self.b, self.index, self.rng = board, index, rng
        self.cap_w = cap_w or board.tdp_w
        self.temp = board.t_amb_c + board.r_c_per_w * board.ctx_w
        self.f = 1.0  # SM clock / max clock
        self.last_load = 0.0
        self.reasons: tuple[str, ...] = ()
        self.extra_amb = 0.0  # cooling trouble (degrees added to the inlet)
        self.brake = False  # a hardware power brake (PSU or rack event)
        self.hw_slow = 0.0  # clock fraction removed by a hardware slowdown

    def clock_for_tick(self) -> float:
        """The clock firmware holds this tick, from last tick's power demand, the die
        temperature and any brake: the work of this tick runs at this clock."""
        b = self.b
        dyn = DYN_PER_TDP * b.tdp_w * self.last_load
        f, reasons = 1.0, []
        if dyn > 0 and b.ctx_w + dyn > self.cap_w:
            f = max(0.45, (self.cap_w - b.ctx_w) / dyn)
            reasons.append("power cap")
        if self.temp > b.slowdown_c:
            f = min(f, max(0.5, 1.0 - 0.06 * (self.temp - b.slowdown_c)))
            reasons.append("thermal (sw)")
            if self.temp > b.slowdown_c + 5:
                reasons.append("thermal (hw)")
        if self.brake:
            f = min(f, 0.42)
            reasons += ["hw slowdown", "power brake"]
        elif self.hw_slow > 0:
            f = min(f, 1.0 - self.hw_slow)
            reasons.append("hw slowdown")
        self.f = f * (1 + self.rng.uniform(-0.004, 0.004)) if f < 0.999 else 1.0
        self.reasons = tuple(dict.fromkeys(reasons))
        return self.f

    def read(self, act: Activity, has_context: bool, dt: float, gpm_ok: bool) -> dict:
        """The NVML (and GPM) readings of this tick for ``act`` at this tick's clock."""
        b, r, f = self.b, self.rng, self.f
        busy = min(1.0, max(0.0, act.busy))
        sm = busy * act.sm
        tensor = busy * act.tensor
        dram = busy * act.dram
        load = 0.012 * busy + 0.2 * sm + 0.65 * tensor + 0.2 * dram
        self.last_load = load  # the dynamic demand at full clock
        if has_context:
            power = b.ctx_w + DYN_PER_TDP * b.tdp_w * load * f
            power = min(power, self.cap_w * (1 + r.uniform(-0.012, 0.004)))
        else:
            power = b.idle_w
        power *= 1 + r.gauss(0, 0.006)
        target = b.t_amb_c + self.extra_amb + b.r_c_per_w * power
        self.temp += (target - self.temp) * min(1.0, dt / 25.0)
        util = round(min(100.0, max(0.0, 100 * busy + r.gauss(0, 0.8 if busy < 0.97 else 0.3))))
        n = 6 if dt <= 1.0 else 12
        if act.samples:
            base = list(act.samples)
            samples = tuple(float(round(min(100, max(0, 100 * base[i * len(base) // n]
                                                          + r.gauss(0, 1.5))))) for i in range(n))
        else:
            samples = tuple(float(round(min(100, max(0, util + r.gauss(0, 2.0))))) for _ in range(n))
        if busy > 0.995:
            util = 100.0 if r.random() < 0.5 else 99.0
        mem_util = round(min(100.0, max(0.0, dram * 125 + r.gauss(0, 0.6)))) if busy else 0.0
        out = dict(util_gpu_pct=float(util), util_gpu_samples_pct=samples,
                   util_mem_pct=float(mem_util), power_w=round(power, 3),
                   temp_c=float(round(self.temp)),
                   sm_clock_mhz=float(round(b.clock_mhz * f / 15) * 15) if has_context
                   else b.idle_clock_mhz,
                   mem_clock_mhz=b.mem_clock_mhz if has_context else 405.0,
                   throttle=self.reasons if has_context and busy > 0.02 else (),
                   pstate=0 if has_context else 8, power_limit_w=float(self.cap_w))
        missing = {"fan_pct": NOT_SUPPORTED}
        if b.gpm:
            if gpm_ok:
                def jit(x: float) -> float:
                    return max(0.0, min(100.0, x * 100 * (1 + r.gauss(0, 0.01))))
                out.update(sm_active_pct=jit(sm), sm_occupancy_pct=jit(sm * act.occ),
                           tensor_pct=jit(tensor), dram_bw_pct=jit(dram),
                           nvlink_rx_mib_per_s=act.nvlink_mib_s * (1 + r.gauss(0, 0.02)),
                           nvlink_tx_mib_per_s=act.nvlink_mib_s * (1 + r.gauss(0, 0.02)),
                           pcie_rx_mib_per_s=act.pcie_mib_s + abs(r.gauss(30, 10)),
                           pcie_tx_mib_per_s=act.pcie_mib_s * 0.2 + abs(r.gauss(20, 8)))
            else:
                for name in ACTIVITY:
                    missing[name] = GPM_FIRST
        else:
            for name in ACTIVITY:
                missing[name] = NO_GPM
        out["missing"] = missing
        return out
