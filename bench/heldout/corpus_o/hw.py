"""The hardware side of corpus O: GPUs as NVML would read them.

A workload (serving or training simulation) writes what each GPU did into 1/6-second
*slots*: the busy fraction (time with at least one kernel running) and, weighted by
that busy time, SM coverage, occupancy, DRAM-bandwidth and tensor-pipe fractions.
Once per tick ``Gpu.sample`` turns the slots of the tick into what NVML reports:
GPU-Util (per 1/6-s sample, integer percent), GPM fields (Hopper and newer only,
missing on the first frame), memory-controller util, power from activity and clock,
temperature as a first-order lag, and clocks held down by a power cap, a thermal
limit or a forced slowdown, with the matching clock-event reasons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import GpuSample, ProcSample

SLOT_S = 1.0 / 6.0
NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclass(frozen=True)
class Spec:
    key: str
    name: str
    mem_total: int
    reserved: int
    bw: float  # bytes/s, HBM/GDDR peak
    flops: float  # dense bf16 FLOP/s at max clock
    tdp: float  # default power limit, W
    idle_w: float  # no context, low clocks
    ctx_w: float  # a context resident, clocks up, nothing running
    clk_max: float
    clk_idle: float
    mem_clk: float
    gpm: bool
    sms: int
    util_hz: int  # GPU-Util samples per second
    thermal_r: float  # deg C per W above ambient
    slowdown_c: float  # temperature at which the driver starts to pull clocks
    fan: bool
    nvlink_gbs: float  # per-GPU NVLink bandwidth (0: PCIe only)


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 85_520_809_984, 597_688_320, 3.35e12, 989e12,
                 700, 72, 118, 1980, 345, 2619, True, 132, 6, 0.062, 87, False, 450),
    "H200": Spec("H200", "NVIDIA H200", 150_754_820_096, 644_939_776, 4.8e12, 989e12,
                 700, 78, 121, 1980, 345, 3201, True, 132, 6, 0.058, 87, False, 450),
    "B200": Spec("B200", "NVIDIA B200", 191_537_856_512, 713_031_680, 8.0e12, 2250e12,
                 1000, 140, 190, 1965, 600, 3996, True, 148, 6, 0.045, 87, False, 900),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 85_899_345_920, 0, 2.04e12, 312e12,
                 400, 52, 66, 1410, 210, 1593, False, 108, 6, 0.11, 85, False, 300),
    "L40S": Spec("L40S", "NVIDIA L40S", 48_305_799_168, 0, 0.864e12, 362e12,
                 350, 34, 78, 2520, 210, 9001, False, 142, 1, 0.14, 86, False, 0),
    "A10G": Spec("A10G", "NVIDIA A10G", 24_146_608_128, 0, 0.6e12, 70e12,
                 300, 24, 58, 1710, 210, 6251, False, 80, 1, 0.17, 86, True, 0),
}


class Gpu:
    """One GPU: slots of activity written by the workload, physical state per tick."""

    def __init__(self, spec: Spec, index: int, duration_s: float, rng, uuid_seed: int,
                 ambient_c: float = 28.0):
        self.spec = spec
        self.index = index
        self.rng = rng
        n = int(duration_s / SLOT_S) + 16
        self.busy = [0.0] * n
        self.sm = [0.0] * n
        self.occ = [0.0] * n
        self.dram = [0.0] * n
        self.ten = [0.0] * n
        self.link = [0.0] * n  # NVLink/PCIe bytes moved (MiB) in the slot
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            (uuid_seed * 2654435761 + index * 97) & 0xFFFFFFFF, (uuid_seed >> 3) & 0xFFFF,
            (index * 4099 + 17) & 0xFFFF, (uuid_seed * 31 + index) & 0xFFFF,
            (uuid_seed * 1000003 + index * 7919) & 0xFFFFFFFFFFFF)
        self.bus_id = "00000000:%02X:00.0" % (0x18 + 0x11 * index if index < 8 else 0x10 + index)
        self.ambient = ambient_c
        self.temp = ambient_c + 8 + rng.random() * 3
        self.clock = spec.clk_idle
        self.clock_factor = 1.0  # what the workload runs at (updated each tick)
        self.power_limit = spec.tdp
        self.thermal_r = spec.thermal_r
        self.forced_clock: float | None = None  # a clock held down (HW slowdown, power brake)
        self.forced_reasons: tuple[str, ...] = ()
        self.mem_used = 0
        self.context = False  # a process holds the GPU (clocks up, P0)
        self.processes: list[ProcSample] = []
        self.first = True
        self.fan = 30.0

    # ------------------------------------------------------------ written by the workload

    def add(self, t0: float, t1: float, duty: float, sm: float, occ: float, dram: float,
            ten: float, link_mib_s: float = 0.0) -> None:
        """[t0, t1) seconds of this GPU with ``duty`` of the time busy; the rest are the
        levels of SM coverage, occupancy, DRAM and tensor activity while busy."""
        if t0 < 0:
            t0 = 0.0  # the pre-roll before the recording: not seen
        if t1 <= t0:
            return
        k = int(t0 / SLOT_S)
        last = len(self.busy) - 1
        while k <= last:
            s0 = k * SLOT_S
            s1 = s0 + SLOT_S
            if s0 >= t1:
                break
            o = (min(t1, s1) - max(t0, s0)) / SLOT_S
            if o > 0:
                b = o * duty
                self.busy[k] += b
                self.sm[k] += b * sm
                self.occ[k] += b * occ
                self.dram[k] += b * dram
                self.ten[k] += b * ten
                self.link[k] += o * link_mib_s * SLOT_S
            k += 1

    # ------------------------------------------------------------ read as NVML would

    def sample(self, t: float, tick_s: float) -> GpuSample:
        spec = self.spec
        k1 = int(round(t / SLOT_S))
        k0 = max(0, k1 - int(round(tick_s / SLOT_S)))
        n = max(1, k1 - k0)
        rng = self.rng

        def clip(v):
            return 0.0 if v < 0 else (1.0 if v > 1 else v)

        busy = [clip(self.busy[k]) for k in range(k0, k1)] or [0.0]
        mean_busy = sum(busy) / n
        sm = clip(sum(self.sm[k0:k1]) / n)
        occ = clip(sum(self.occ[k0:k1]) / n)
        dram = clip(sum(self.dram[k0:k1]) / n)
        ten = clip(sum(self.ten[k0:k1]) / n)
        link = sum(self.link[k0:k1]) / max(tick_s, 1e-9)

        # utilisation samples at the product's own period
        per = max(1, int(round(6 / spec.util_hz)))
        samples = []
        for j in range(0, len(busy), per):
            chunk = busy[j:j + per]
            v = sum(chunk) / len(chunk)
            samples.append(float(min(100, max(0, int(v * 100 + 0.5 + (rng.random() - 0.5) * (1.5 if 0 < v < 1 else 0))))))
        util = float(int(round(sum(samples[-max(1, spec.util_hz):]) / len(samples[-max(1, spec.util_hz):]))))

        # clocks, power, temperature
        reasons: list[str] = []
        base = spec.ctx_w if self.context else spec.idle_w
        w = 0.01 * mean_busy + 0.25 * sm + 0.40 * dram + 1.6 * ten
        if not spec.gpm:  # activity unknown to NVML, but it still burns power
            w = 0.01 * mean_busy + 0.25 * sm + 0.40 * dram + 1.6 * ten
        demand = (spec.tdp - spec.ctx_w) * w
        fmax = spec.clk_max if self.context or mean_busy > 0 else spec.clk_idle
        f = fmax
        if demand > 0 and base + demand > self.power_limit and self.context:
            f = fmax * math.sqrt(max(0.05, (self.power_limit - base) / demand))
            reasons.append("power cap")
        if self.temp > spec.slowdown_c and self.context:
            over = self.temp - spec.slowdown_c
            f = min(f, fmax * max(0.45, 1.0 - 0.09 * over))
            reasons.append("thermal (sw)")
            if over > 4:
                reasons.append("hw slowdown")
        if self.forced_clock is not None and self.context:
            if self.forced_clock < f:
                f = self.forced_clock
            reasons.extend(r for r in self.forced_reasons if r not in reasons)
        if self.context and f < fmax:
            f = 15 * round(f / 15)  # clocks move in 15 MHz steps
        ratio = f / spec.clk_max if spec.clk_max else 1.0
        power = base + demand * ratio * ratio
        if self.context:
            power = min(power, self.power_limit + 4)
        power *= 1 + (rng.random() - 0.5) * 0.01
        target = self.ambient + power * self.thermal_r
        self.temp += (target - self.temp) * (1 - math.exp(-tick_s / 35.0))
        self.clock = f
        self.clock_factor = ratio if self.context else 1.0
        if spec.fan:
            self.fan = min(100.0, max(30.0, (self.temp - 35) * 2.2))

        mem_util = float(int(min(100.0, dram * 118 + (2 if mean_busy > 0.05 else 0))))
        missing: dict[str, str] = {}
        values: dict = {}
        if not spec.gpm:
            for name in ACTIVITY:
                missing[name] = NO_GPM
        elif self.first:
            for name in ACTIVITY:
                missing[name] = "GPM needs a second sample"
        else:
            jitter = 1 + (rng.random() - 0.5) * 0.01
            values = dict(sm_active_pct=round(sm * 100 * jitter, 4),
                          sm_occupancy_pct=round(occ * 100 * jitter, 4),
                          dram_bw_pct=round(dram * 100 * jitter, 4),
                          tensor_pct=round(ten * 100 * jitter, 4))
            if spec.nvlink_gbs:
                values.update(nvlink_rx_mib_per_s=round(link * 0.5, 1),
                              nvlink_tx_mib_per_s=round(link * 0.5, 1),
                              pcie_rx_mib_per_s=round(40 + rng.random() * 20, 1),
                              pcie_tx_mib_per_s=round(25 + rng.random() * 15, 1))
            else:
                values.update(pcie_rx_mib_per_s=round(40 + link * 0.5, 1),
                              pcie_tx_mib_per_s=round(25 + link * 0.5, 1))
        if not spec.fan:
            missing["fan_pct"] = "not supported on this GPU"
        self.first = False
        return GpuSample(
            index=self.index, name=spec.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=tuple(samples), util_mem_pct=mem_util,
            mem_total_bytes=spec.mem_total, mem_used_bytes=int(self.mem_used),
            mem_reserved_bytes=spec.reserved or None, power_w=round(power, 3),
            temp_c=float(int(self.temp)), sm_clock_mhz=float(int(f)),
            throttle=tuple(reasons), bus_id=self.bus_id,
            fan_pct=float(int(self.fan)) if spec.fan else None,
            pstate=0 if self.context else 8, power_limit_w=float(self.power_limit),
            mem_clock_mhz=float(spec.mem_clk if self.context else 405),
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, **values)
