"""A GPU as NVML reads it: time fractions, clocks under power and thermal control, power,
temperature, throttle reasons, per-process utilisation."""
from __future__ import annotations
import math
from dataclasses import dataclass, field

from gputop.schema import GpuSample
from corpus_ai.hw import GPM_FIELDS, Board

MIB = 2**20


@dataclass
class Activity:
    """What ran on one GPU during one tick (seconds of the tick, bytes)."""
    busy_s: float = 0.0       # some kernel running
    sm_s: float = 0.0         # integral of the fraction of SMs with a warp resident
    occ_s: float = 0.0
    tensor_s: float = 0.0
    dram_bytes: float = 0.0
    pcie_bytes: float = 0.0
    nvlink_bytes: float = 0.0
    by_pid: dict = field(default_factory=dict)   # pid -> kernel-busy seconds

    def add(self, busy, sm, tensor, dram_bytes, pid, occ=None, pcie=0.0, nvlink=0.0):
        self.busy_s += busy
        self.sm_s += sm
        self.occ_s += occ if occ is not None else sm * 0.45
        self.tensor_s += tensor
        self.dram_bytes += dram_bytes
        self.pcie_bytes += pcie
        self.nvlink_bytes += nvlink
        self.by_pid[pid] = self.by_pid.get(pid, 0.0) + busy


class GpuState:
    def __init__(self, board: Board, index: int, rng, *, ambient_c=28.0, power_limit_w=None,
                 r_thermal=1.0, bus: str | None = None, uuid_seed=0):
        self.b, self.index, self.rng = board, index, rng
        self.ambient = ambient_c
        self.limit = power_limit_w or board.tdp_w
        self.r_thermal = r_thermal        # 1.0 healthy cooling, >1 dried paste / clogged fins
        self.temp = ambient_c + 8
        self.power = board.idle_w
        self.th_factor = 1.0
        self.ratio = 1.0
        self.brake = 1.0                  # PSU power brake / HW slowdown factor (1: none)
        self.brake_reason = ""
        self.last_load = 0.0
        self.bus = bus or f"00000000:{0x18 + index * 0x10 if index < 14 else index:02X}:00.0"
        h = (uuid_seed * 2654435761 + index * 97) & 0xFFFFFFFFFFFF
        self.uuid = f"GPU-{h & 0xFFFFFFFF:08x}-{(h >> 8) & 0xFFFF:04x}-{(h >> 16) & 0xFFFF:04x}-{index:04x}-{(h * 31) & 0xFFFFFFFFFFFF:012x}"
        self.ecc = 0

    # the clock the work of this tick runs at, decided by the controller on the last tick
    def clock_ratio(self) -> float:
        return self.ratio

    def _full_power(self, load: float) -> float:
        return self.b.idle_w + (1.12 * self.b.tdp_w - self.b.idle_w) * load

    def sample(self, dt: float, act: Activity, mem_used: float, procs_present: bool) -> GpuSample:
        b, rng = self.b, self.rng
        busy = min(1.0, act.busy_s / dt)
        sm = min(1.0, act.sm_s / dt)
        tensor = min(1.0, act.tensor_s / dt)
        dram = min(1.0, act.dram_bytes / (b.bw_gbs * 1e9 * dt))
        load = min(1.0, 0.14 * busy + 0.36 * sm + 0.36 * tensor + 0.3 * dram)
        demand = self._full_power(load)         # what it would draw at the full clock
        # power at the clock it actually ran: dynamic part ~ f^2.4
        p = b.idle_w + (demand - b.idle_w) * self.ratio ** 2.4
        p *= 1 + rng.gauss(0, 0.015)
        if not procs_present and busy < 0.01:
            p = b.idle_w * (0.8 if b.fan else 1.0) * (1 + rng.gauss(0, 0.02))
        self.power = max(b.idle_w * 0.7, min(p, self.limit * 1.01))
        # temperature: first order towards ambient + R * P
        r = (b.slowdown_c - 6 - 30) / (0.92 * b.tdp_w) * self.r_thermal
        target = self.ambient + r * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 45.0))
        # controllers for the next tick
        reasons = []
        cap = 1.0
        if demand > self.limit and busy > 0.05:
            cap = ((self.limit - b.idle_w) / max(1.0, demand - b.idle_w)) ** (1 / 2.4)
        if self.temp > b.slowdown_c:
            self.th_factor = max(0.3, self.th_factor - 0.012 * dt * (self.temp - b.slowdown_c + 1))
        elif self.temp < b.slowdown_c - 2.5:
            self.th_factor = min(1.0, self.th_factor + 0.01 * dt)
        boost_droop = 1.0 - 0.0025 * max(0.0, self.temp - 60) if b.fan else 1.0
        ratio = min(cap, self.th_factor, self.brake, boost_droop)
        if cap < 0.995 and cap <= self.th_factor and cap <= self.brake:
            reasons.append("power cap")
        if self.th_factor < 0.985:
            reasons.append("thermal (sw)")
        if self.brake < 0.99:
            reasons.append(self.brake_reason or "hw slowdown")
        self.ratio = ratio if busy > 0.01 else 1.0
        clock = b.max_clock * (self.ratio if busy > 0.01 else (0.6 if procs_present else 0.2))
        clock = round(clock / 15) * 15
        n = max(1, round(dt * 5))
        samples = tuple(float(max(0, min(100, round(100 * busy + rng.gauss(0, 4 if 0.03 < busy < 0.97 else 0.6)))))
                        for _ in range(n))
        util = float(round(sum(samples) / n))
        missing = {}
        if not b.fan:
            missing["fan_pct"] = "not supported on this GPU"
        gpm = {}
        if b.gpm:
            def noisy(x):
                return max(0.0, x * 100 * (1 + rng.gauss(0, 0.03)))
            gpm = dict(sm_active_pct=min(100.0, noisy(sm)), sm_occupancy_pct=min(100.0, noisy(act.occ_s / dt)),
                       dram_bw_pct=min(100.0, noisy(dram)), tensor_pct=min(100.0, noisy(tensor)),
                       pcie_rx_mib_per_s=act.pcie_bytes / dt / MIB * 0.5 + 30 * rng.random(),
                       pcie_tx_mib_per_s=act.pcie_bytes / dt / MIB * 0.5 + 4 * rng.random(),
                       nvlink_rx_mib_per_s=act.nvlink_bytes / dt / MIB * 0.5,
                       nvlink_tx_mib_per_s=act.nvlink_bytes / dt / MIB * 0.5)
        else:
            for f in GPM_FIELDS:
                missing[f] = "needs Hopper+ (GPM)"
        fan = None
        if b.fan:
            fan = float(max(30, min(100, round(30 + (self.temp - 45) * 2.6))))
        return GpuSample(
            index=self.index, name=b.name, uuid=self.uuid,
            util_gpu_pct=util, util_gpu_samples_pct=samples,
            util_mem_pct=float(round(min(100, dram * 92 + rng.gauss(0, 1) if dram > 0.01 else 0))),
            mem_total_bytes=int(b.mem_gib * 2**30), mem_used_bytes=int(mem_used),
            mem_reserved_bytes=int(b.reserved_mib * MIB),
            power_w=round(self.power, 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=self.bus,
            fan_pct=fan, pstate=0 if procs_present else 8, power_limit_w=float(self.limit),
            mem_clock_mhz=float(b.mem_clock if procs_present else b.mem_clock * 0.1),
            ecc_corrected=0 if not b.fan else None, ecc_uncorrected=0 if not b.fan else None,
            xid_count=0, mig_mode=False if not b.fan else None,
            missing=missing, **gpm)
