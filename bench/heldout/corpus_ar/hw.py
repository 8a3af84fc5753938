"""GPU boards and their physics: activity -> NVML/GPM readings, power, clock governor, heat.

Every reading a frame carries for a GPU is derived here from what the workloads deposited
on the GPU's fine-grained activity timeline (slots of ~0.2 s): the seconds during which a
kernel ran (busy), SM-active seconds, tensor-pipe seconds, DRAM-busy seconds (bytes moved /
peak bandwidth), per context.  Power follows activity and clock; the governor holds power
under the enforced limit and temperature under the slowdown point.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MIB = 1 << 20
GIB = 1 << 30


@dataclass(frozen=True)
class Board:
    key: str
    name: str
    sms: int
    bw: float          # HBM/GDDR peak bytes/s
    flops: float       # dense bf16 tensor FLOP/s at fmax
    tdp: float         # default power limit, W
    idle_w: float      # with a CUDA context, nothing running
    fmax: float        # SM clock MHz under load (boost)
    fidle: float       # SM clock with no context
    mem_total: int     # bytes as NVML reports
    mem_clock: float
    gpm: bool          # Hopper+: SM/tensor/DRAM activity via GPM
    fan: bool          # actively cooled (fan reading)
    r_th: float        # degC per W, board to inlet, at nominal airflow
    t_slow: float      # degC where the driver starts slowing clocks
    nvlink: float      # bytes/s per direction (0 = none)
    pcie: float        # bytes/s


BOARDS = {b.key: b for b in (
    Board("h100sxm", "NVIDIA H100 80GB HBM3", 132, 3.35e12, 989e12, 700, 88, 1980, 345,
          81559 * MIB, 2619, True, False, 0.068, 87, 450e9, 55e9),
    Board("h100pcie", "NVIDIA H100 PCIe", 114, 2.0e12, 756e12, 350, 50, 1755, 345,
          81559 * MIB, 1593, True, False, 0.16, 87, 0, 55e9),
    Board("h200", "NVIDIA H200", 132, 4.8e12, 989e12, 700, 90, 1980, 345,
          150754820096, 3201, True, False, 0.066, 87, 450e9, 55e9),
    Board("b200", "NVIDIA B200", 148, 8.0e12, 2250e12, 1000, 140, 1965, 600,
          183359 * MIB, 3996, True, False, 0.050, 87, 900e9, 55e9),
    Board("a100_40", "NVIDIA A100-SXM4-40GB", 108, 1.555e12, 312e12, 400, 55, 1410, 210,
          40960 * MIB, 1215, False, False, 0.14, 85, 300e9, 25e9),
    Board("a100_80", "NVIDIA A100-SXM4-80GB", 108, 2.039e12, 312e12, 400, 60, 1410, 210,
          81920 * MIB, 1593, False, False, 0.12, 85, 300e9, 25e9),
    Board("l40s", "NVIDIA L40S", 142, 864e9, 362e12, 350, 35, 2520, 210,
          46068 * MIB, 9001, False, False, 0.15, 87, 0, 25e9),
    Board("l4", "NVIDIA L4", 58, 300e9, 121e12, 72, 16, 2040, 210,
          23034 * MIB, 6251, False, False, 0.55, 87, 0, 25e9),
    Board("a10g", "NVIDIA A10G", 80, 600e9, 125e12, 300, 25, 1710, 210,
          23028 * MIB, 6251, False, False, 0.17, 87, 0, 25e9),
    Board("rtx6000ada", "NVIDIA RTX 6000 Ada Generation", 142, 960e9, 364e12, 300, 30, 2505, 210,
          49140 * MIB, 10001, False, True, 0.16, 87, 0, 25e9),
    Board("rtx4090", "NVIDIA GeForce RTX 4090", 128, 1008e9, 165e12, 450, 25, 2520, 210,
          24564 * MIB, 10501, False, True, 0.105, 84, 0, 25e9),
    Board("rtx5090", "NVIDIA GeForce RTX 5090", 170, 1792e9, 209e12, 575, 30, 2407, 210,
          32607 * MIB, 14001, False, True, 0.085, 84, 0, 55e9),
)}

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct",
              "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
              "nvlink_tx_mib_per_s")


class Gpu:
    """One GPU's state: the slot accumulators, clocks, power, temperature."""

    def __init__(self, index: int, board: Board, rng, inlet_c: float = 24.0,
                 power_limit: float | None = None, slot_s: float = 0.2):
        self.index = index
        self.b = board
        self.rng = rng
        self.slot_s = slot_s
        self.inlet = inlet_c          # may be changed over time by the scenario
        self.power_limit = power_limit or board.tdp
        self.r_scale = 1.0            # airflow / fan health multiplier on r_th
        self.power_brake = False      # external brake signal (PSU / rack)
        self.brake_factor = 0.6
        self.clock = board.fmax
        self.temp = inlet_c + 8.0
        self.power = board.idle_w
        self.thermal_cap = 1e9        # W the thermal controller allows
        self.acc: dict[int, list] = {}
        self.throttle: tuple[str, ...] = ()
        self.has_context = True
        # per tick accumulators
        self.t_busy = self.t_sm = self.t_tensor = self.t_dram = self.t_occ = 0.0
        self.t_pcie = self.t_nvl = 0.0
        self.t_time = 0.0
        self.tick_power = []
        self.samples: list[float] = []
        self.ctx_busy: dict[int, float] = {}
        self.ctx_mem: dict[int, float] = {}
        self.fan = 35.0 if board.fan else None
        self.demand: dict[int, float] = {}      # last slot's busy per context (fraction)

    # ---------------------------------------------------------------- deposits
    def deposit(self, t0: float, t1: float, busy: float, sm: float, tensor: float,
                dram: float, ctx: int, occ: float | None = None, pcie: float = 0.0,
                nvl: float = 0.0) -> None:
        """Fractions (0..1) of [t0, t1] during which a kernel ran / SMs / tensor / DRAM were
        active; pcie/nvl are bytes/s moved over the span."""
        if t1 <= t0:
            return
        occ = sm * 0.45 if occ is None else occ
        s = self.slot_s
        k = int(t0 / s)
        while True:
            a = max(t0, k * s)
            e = min(t1, (k + 1) * s)
            if e > a:
                d = e - a
                cell = self.acc.get(k)
                if cell is None:
                    cell = self.acc[k] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, {}]
                cell[0] += busy * d
                cell[1] += sm * d
                cell[2] += tensor * d
                cell[3] += dram * d
                cell[4] += occ * d
                cell[5] += pcie * d
                cell[6] += nvl * d
                cell[7][ctx] = cell[7].get(ctx, 0.0) + busy * d
            if (k + 1) * s >= t1:
                break
            k += 1

    # ---------------------------------------------------------------- physics
    def speed(self) -> float:
        """Compute-time multiplier from the SM clock (1 at fmax)."""
        return self.b.fmax / max(self.clock, 1.0)

    def mem_speed(self) -> float:
        return 1.0 + 0.22 * (self.speed() - 1.0)

    def slowdown_for(self, ctx: int) -> float:
        """Time-slicing: how much longer this context's kernels take because other contexts
        want the GPU too (from the previous slot's demands)."""
        other = sum(v for c, v in self.demand.items() if c != ctx)
        return 1.0 + min(other, 1.5)

    def close_slot(self, k: int) -> None:
        s = self.slot_s
        cell = self.acc.pop(k, None) or [0.0] * 7 + [{}]
        raw = sum(cell[7].values())
        busy = min(s, cell[0])
        scale = busy / cell[0] if cell[0] > s else 1.0
        sm = min(s, cell[1] * scale)
        tensor = min(s, cell[2] * scale)
        dram = min(s, cell[3] * scale)
        occ = min(s, cell[4] * scale)
        self.demand = {c: v / s for c, v in cell[7].items()}
        # power from activity at this clock
        fr = self.clock / self.b.fmax
        act = (0.12 * busy + 0.30 * sm + 0.40 * tensor + 0.22 * dram) / s
        dyn = 1.25 * (self.b.tdp - self.b.idle_w)
        idle = self.b.idle_w if self.has_context else self.b.idle_w * 0.75
        want_full = idle + dyn * act  # at fmax
        p_now = idle + dyn * act * fr ** 2.4
        # governor: the clock that fits power limit, thermal cap, brake
        limit = self.power_limit
        reasons = []
        f = self.b.fmax
        if act > 0.02:
            for cap, why in ((limit, "power cap"), (self.thermal_cap, "thermal (sw)")):
                if want_full > cap:
                    ratio = max(0.05, (cap - idle) / (dyn * act))
                    fc = self.b.fmax * min(1.0, ratio ** (1 / 2.4))
                    if fc < f - 1:
                        f = fc
                        reasons = [why]
                    elif fc < self.b.fmax - 1 and why not in reasons:
                        reasons.append(why)
            if self.power_brake:
                f = min(f, self.b.fmax * self.brake_factor)
                reasons = ["hw slowdown", "power brake"]
        f = max(f, self.b.fmax * 0.3)
        if not self.has_context and busy == 0:
            f = self.b.fidle
        # clocks move in 15 MHz bins and slew quickly
        f = round(f / 15.0) * 15.0
        self.clock = f
        p_now = idle + dyn * act * (f / self.b.fmax) ** 2.4
        p_now *= 1.0 + self.rng.gauss(0, 0.01)
        self.power = p_now
        # thermal: first order toward inlet + R * P
        r = self.b.r_th * self.r_scale
        if self.fan is not None:
            target_fan = min(100.0, max(30.0, 30 + (self.temp - 45) * 2.2))
            self.fan += (target_fan - self.fan) * min(1.0, s / 4.0)
            r *= 1.0 + 0.6 * (1.0 - self.fan / 100.0)
        t_target = self.inlet + r * p_now
        self.temp += (t_target - self.temp) * (1 - math.exp(-s / 25.0))
        if self.temp > self.b.t_slow:
            self.thermal_cap = max(self.b.idle_w * 1.5,
                                   min(self.thermal_cap, p_now) - 6.0 * (self.temp - self.b.t_slow) * s * 5)
        elif self.temp < self.b.t_slow - 2:
            self.thermal_cap = min(1e9, self.thermal_cap + 10.0 * s * 5) if self.thermal_cap < 1e8 else 1e9
            if self.thermal_cap > self.b.tdp * 1.6:
                self.thermal_cap = 1e9
        self.throttle = tuple(reasons) if act > 0.02 else ()
        # tick accumulation
        self.t_busy += busy
        self.t_sm += sm
        self.t_tensor += tensor
        self.t_dram += dram
        self.t_occ += occ
        self.t_pcie += cell[5]
        self.t_nvl += cell[6]
        self.t_time += s
        self.tick_power.append(p_now)
        self.samples.append(round(100.0 * busy / s))
        for c, v in cell[7].items():
            self.ctx_busy[c] = self.ctx_busy.get(c, 0.0) + (v * scale if raw else 0.0)

    def take_tick(self) -> dict:
        tt = max(self.t_time, 1e-9)
        out = {
            "util": self.samples[-1] if self.samples else 0.0,
            "samples": tuple(float(x) for x in self.samples),
            "busy": self.t_busy / tt, "sm": self.t_sm / tt, "tensor": self.t_tensor / tt,
            "dram": self.t_dram / tt, "occ": self.t_occ / tt,
            "pcie": self.t_pcie / tt, "nvl": self.t_nvl / tt,
            "power": sum(self.tick_power) / max(1, len(self.tick_power)),
            "ctx": {c: v / tt for c, v in self.ctx_busy.items()},
        }
        self.t_busy = self.t_sm = self.t_tensor = self.t_dram = self.t_occ = 0.0
        self.t_pcie = self.t_nvl = 0.0
        self.t_time = 0.0
        self.tick_power = []
        self.samples = []
        self.ctx_busy = {}
        return out
