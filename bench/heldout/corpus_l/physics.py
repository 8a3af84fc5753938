"""The boards and the one activity -> NVML/GPM model every trace goes through.

A simulator says, per GPU and per tick, what the GPU did: the fraction of the tick a kernel
ran (``busy``), the fraction during which the SMs had warps (``sm``), tensor-pipe and HBM
activity (``tensor``, ``dram``, time ratios over the tick, all at the clock it ran), the
sub-tick busy pattern, and what holds the clock down.  ``Board`` turns that into what NVML
and GPM would report: GPU-Util and its driver samples, memory-controller util, power (capped),
SM clock, throttle reasons, temperature (first order), and the missing reasons a real
driver gives.

Calibration (tests/data/h200, a real H200): idle with a context 121 W at 1980 MHz; bf16
matmul SM 96 % / tensor 93 % / DRAM 17 % wanted more than 700 W and sat at the cap at
1440-1470 MHz with "power cap" set; a device copy SM 99 % / DRAM 88 % drew 474 W at full
clock; tiny kernels in a CUDA graph read GPU-Util 100 % with SM 0.3 % at 123 W.
Dynamic power at full clock = (TDP - idle) * (0.25 sm + 1.11 tensor + 0.41 dram) fits
all three; under a cap the clock falls in proportion to the excess (what the H200 did).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GIB = 2**30


@dataclass(frozen=True)
class GpuModel:
    key: str
    name: str
    mem_total: int
    reserved: int
    bw: float  # HBM/GDDR bytes/s
    flops: float  # dense bf16 FLOP/s
    tdp: float
    idle_w: float  # P0 with a CUDA context, nothing running
    clock: float  # max SM clock MHz
    min_clock: float
    mem_clock: float
    gpm: bool
    fan: bool
    sxm: bool
    t_amb: float
    r_th: float  # degC per W at steady state
    t_slow: float  # software thermal slowdown starts
    sms: int


GPUS = {
    "H100": GpuModel("H100", "NVIDIA H100 80GB HBM3", 85520809984, 536870912, 3.35e12, 989e12,
                     700, 112, 1980, 345, 2619, True, False, True, 27, 0.055, 87, 132),
    "H200": GpuModel("H200", "NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12,
                     700, 121, 1980, 345, 3201, True, False, True, 27, 0.050, 87, 132),
    "B200": GpuModel("B200", "NVIDIA B200", 192265846784, 1073741824, 8.0e12, 2250e12,
                     1000, 185, 1965, 420, 3996, True, False, True, 25, 0.042, 87, 148),
    "A100": GpuModel("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 498073600, 2.039e12, 312e12,
                     400, 62, 1410, 210, 1593, False, False, True, 26, 0.090, 85, 108),
    "L40S": GpuModel("L40S", "NVIDIA L40S", 48305799168, 515899392, 864e9, 362e12,
                     350, 78, 2520, 210, 9001, False, False, False, 30, 0.135, 85, 142),
    "A10G": GpuModel("A10G", "NVIDIA A10G", 24146608128, 358612992, 600e9, 70e12,
                     300, 58, 1710, 210, 6251, False, False, False, 30, 0.150, 84, 80),
    "RTX6000": GpuModel("RTX6000", "NVIDIA RTX 6000 Ada Generation", 51527024640, 515899392,
                        960e9, 364e12, 300, 34, 2505, 210, 10001, False, True, False, 29,
                        0.160, 86, 142),
}


def dynamic_w(gpu: GpuModel, sm: float, tensor: float, dram: float) -> float:
    """Power above idle at full clock for an activity mix (fractions of the tick)."""
    return (gpu.tdp - gpu.idle_w) * (0.25 * sm + 1.11 * tensor + 0.41 * dram)


@dataclass
class Act:
    """What one GPU did over one tick (fractions 0..1 of the tick, at the clock it ran)."""

    busy: float = 0.0
    sm: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    occupancy: float | None = None  # of SM; default from sm
    pattern: tuple[float, ...] = ()  # sub-tick busy fractions (driver samples), else flat
    mem_used: int = 0  # bytes used on the GPU (sum of processes + context)
    nvlink_mib: float = 0.0  # MiB/s each way
    pcie_mib: float = 0.0
    forced_clock: float | None = None  # clock factor set from outside (HW slowdown, brake)
    forced_reasons: tuple[str, ...] = ()
    power_limit: float | None = None  # watts; None: TDP
    heat: float = 1.0  # thermal resistance multiplier (fan failure, blocked airflow)


@dataclass
class Board:
    """One GPU's slowly changing state: temperature, the tick counter (first frame: no
    GPM), what the driver supports."""

    gpu: GpuModel
    index: int
    uuid: str
    bus_id: str
    temp: float = 0.0
    polls: int = 0
    fan: float = 30.0
    last_clock_factor: float = 1.0
    missing_extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.temp = self.gpu.t_amb + self.gpu.r_th * self.gpu.idle_w + 4

    def clock_factor(self, act: Act, demand: Act | None = None) -> tuple[float, tuple[str, ...]]:
        """The clock this GPU runs at for the demanded activity: power cap, thermal,
        and what is forced from outside; with the throttle reasons NVML would set."""
        d = demand or act
        limit = act.power_limit or self.gpu.tdp
        f, reasons = 1.0, []
        want = dynamic_w(self.gpu, d.sm, d.tensor, d.dram)
        room = limit - self.gpu.idle_w
        if want > room * 0.995 and want > 0:
            f = max(0.3, room / want)
            reasons.append("power cap")
        self.cap_f = f
        if self.temp >= self.gpu.t_slow:
            over = self.temp - self.gpu.t_slow
            f = min(f, max(0.45, 0.9 - 0.06 * over))
            reasons.append("thermal (sw)")
        if act.forced_clock is not None:
            f = min(f, act.forced_clock)
            reasons.extend(r for r in act.forced_reasons if r not in reasons)
        self.last_clock_factor = f
        return f, tuple(reasons)

    def sample(self, act: Act, f: float, reasons: tuple[str, ...], dt: float, rng,
               per_second_samples: int = 6) -> GpuSample:
        gpu = self.gpu
        first = self.polls == 0
        self.polls += 1
        busy = min(1.0, max(0.0, act.busy))
        jitter = 1 + rng.gauss(0, 0.012)
        power = gpu.idle_w * (1 + rng.gauss(0, 0.006)) + dynamic_w(
            gpu, act.sm, act.tensor, act.dram) * f * jitter
        limit = act.power_limit or gpu.tdp
        if "power cap" in reasons and f >= getattr(self, "cap_f", 1.0) - 1e-6:
            power = limit * (0.985 + 0.014 * rng.random())
        power = min(power, limit * 1.005)
        # first-order thermal: tau ~ 40 s
        target = gpu.t_amb + gpu.r_th * act.heat * power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 40.0))
        temp = round(self.temp + rng.gauss(0, 0.25))
        clock = gpu.clock * f
        if busy < 0.02 and not reasons:
            clock = gpu.clock  # P0 with a context keeps the boost clock (as the H200 did)
        clock = max(gpu.min_clock, 15 * round(clock / 15))
        n = max(1, int(per_second_samples * dt))
        pattern = act.pattern or (busy,) * n
        if len(pattern) != n:
            pattern = tuple(pattern[int(i * len(pattern) / n)] for i in range(n))
        samples = tuple(float(max(0, min(100, round(100 * p + rng.gauss(0, 1.2) * (p > 0.02)))))
                        for p in pattern)
        util = float(max(0, min(100, round(100 * busy + rng.gauss(0, 0.8) * (busy > 0.02)))))
        missing: dict[str, str] = {}
        values: dict = {}
        if gpu.gpm:
            if first:
                for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                    missing[name] = "GPM needs a second sample"
            else:
                sm = 100 * min(1.0, act.sm) * (1 + rng.gauss(0, 0.01))
                occ = act.occupancy if act.occupancy is not None else act.sm * 0.42
                values.update(
                    sm_active_pct=round(max(0.0, min(100.0, sm)), 2),
                    sm_occupancy_pct=round(max(0.0, min(100.0, 100 * occ * (1 + rng.gauss(0, 0.02)))), 2),
                    tensor_pct=round(max(0.0, min(100.0, 100 * act.tensor * (1 + rng.gauss(0, 0.015)))), 2),
                    dram_bw_pct=round(max(0.0, min(100.0, 100 * act.dram * (1 + rng.gauss(0, 0.012)))), 2),
                    pcie_rx_mib_per_s=round(act.pcie_mib * (1 + rng.gauss(0, 0.05)) + 3, 1),
                    pcie_tx_mib_per_s=round(act.pcie_mib * 0.4 * (1 + rng.gauss(0, 0.05)) + 2, 1),
                )
                if gpu.sxm:
                    values.update(
                        nvlink_rx_mib_per_s=round(act.nvlink_mib * (1 + rng.gauss(0, 0.03)), 1),
                        nvlink_tx_mib_per_s=round(act.nvlink_mib * (1 + rng.gauss(0, 0.03)), 1))
        else:
            for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[name] = NO_GPM
        if not gpu.fan:
            missing["fan_pct"] = "not supported on this GPU"
        else:
            want_fan = 30 + max(0.0, self.temp - 45) * 2.2
            self.fan += (want_fan - self.fan) * 0.2
            values["fan_pct"] = float(round(min(100, self.fan)))
        missing.update(self.missing_extra)
        util_mem = min(100.0, act.dram * 130 * (1 + rng.gauss(0, 0.02)))
        return GpuSample(
            index=self.index, name=gpu.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=samples, util_mem_pct=float(round(max(0.0, util_mem))),
            mem_total_bytes=gpu.mem_total, mem_used_bytes=int(act.mem_used),
            mem_reserved_bytes=gpu.reserved, power_w=round(power, 3), temp_c=float(temp),
            sm_clock_mhz=float(clock), throttle=reasons, bus_id=self.bus_id,
            pstate=0, power_limit_w=float(limit), mem_clock_mhz=float(gpu.mem_clock),
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, **values)


def make_boards(gpu: GpuModel, n: int, rng) -> list[Board]:
    buses = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db") if gpu.sxm else \
        ("01", "21", "41", "61", "81", "a1", "c1", "e1")
    out = []
    for i in range(n):
        uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                                   rng.getrandbits(16), rng.getrandbits(16),
                                                   rng.getrandbits(48))
        out.append(Board(gpu, i, uuid, f"00000000:{buses[i % 8].upper()}:00.0"))
    return out
