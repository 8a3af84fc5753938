"""GPUs as NVML reads them: specs, and a per-tick physics of power, temperature and clocks.

The simulation writes what the GPU did into an Activity timeline (bins of BIN_S seconds:
time some kernel ran, and the SM / tensor / DRAM coverage of that time); GpuState turns one
tick of it into readings, closing the loop through the SM clock (power cap, thermal
slowdown, HW slowdown, power brake), which the simulations read back as a speed factor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import GpuSample

BIN_S = 1.0 / 12.0  # resolution of the activity timeline
SAMPLE_S = 1.0 / 6.0  # NVML's GPU-Util sample period on these boards


@dataclass(frozen=True)
class Spec:
    name: str
    mem_total: int  # bytes, as NVML says
    reserve: int  # driver reserve
    bw: float  # HBM/GDDR bytes/s
    tflops: float  # dense bf16, tensor cores
    tdp: float
    idle_w: float
    fmax: float  # max SM clock MHz
    fidle: float
    mem_clock: float
    gpm: bool
    fan: bool
    t_slow: float  # software thermal slowdown threshold, C
    r_th: float  # C per W above inlet (steady state)
    tau_s: float  # thermal time constant
    sms: int


SPECS = {
    "H100": Spec("NVIDIA H100 80GB HBM3", 85520809984, 566231040, 3.35e12, 989e12, 700, 72,
                 1980, 345, 2619, True, False, 87, 0.060, 40, 132),
    "H200": Spec("NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12, 700, 76,
                 1980, 345, 3201, True, False, 87, 0.058, 40, 132),
    "A100": Spec("NVIDIA A100-SXM4-80GB", 85899345920, 500170752, 2.04e12, 312e12, 400, 58,
                 1410, 210, 1593, False, False, 86, 0.095, 35, 108),
    "A10G": Spec("NVIDIA A10G", 24146608128, 379584512, 6.0e11, 70e12, 300, 28,
                 1710, 210, 6251, False, False, 85, 0.16, 30, 80),
    "A6000": Spec("NVIDIA RTX A6000", 51527024640, 412090368, 7.68e11, 155e12, 300, 22,
                  1800, 210, 8001, False, True, 86, 0.14, 25, 84),
    "RTX4090": Spec("NVIDIA GeForce RTX 4090", 25757220864, 400556032, 1.0e12, 165e12, 450, 18,
                    2520, 210, 10501, False, True, 84, 0.095, 22, 128),
    "L40S": Spec("NVIDIA L40S", 48305799168, 412090368, 8.64e11, 362e12, 350, 34,
                 2520, 210, 9001, False, False, 85, 0.12, 30, 142),
    "L4": Spec("NVIDIA L4", 24152899584, 379584512, 3.0e11, 121e12, 72, 16,
               2040, 210, 6251, False, False, 85, 0.55, 25, 58),
}


class Activity:
    """What each GPU did, bin by bin, for the whole trace (filled by the simulations)."""

    def __init__(self, ngpu: int, duration_s: float):
        n = int(duration_s / BIN_S) + 64
        self.n = n
        self.busy = [[0.0] * n for _ in range(ngpu)]  # seconds some kernel ran
        self.sm = [[0.0] * n for _ in range(ngpu)]  # busy-seconds x SM coverage
        self.tensor = [[0.0] * n for _ in range(ngpu)]
        self.dram = [[0.0] * n for _ in range(ngpu)]
        self.nvlink = [[0.0] * n for _ in range(ngpu)]  # bytes
        self.pcie = [[0.0] * n for _ in range(ngpu)]  # bytes
        self.other = [[0.0] * n for _ in range(ngpu)]  # busy-seconds of a second tenant

    def add(self, g: int, t0: float, t1: float, sm: float, tensor: float, dram: float,
            nvlink_bytes: float = 0.0, pcie_bytes: float = 0.0, other: bool = False) -> None:
        if t1 <= t0:
            return
        span = t1 - t0
        i = int(t0 / BIN_S)
        busy, smv, ten, dr, nv, pc = (self.busy[g], self.sm[g], self.tensor[g], self.dram[g],
                                      self.nvlink[g], self.pcie[g])
        while t0 < t1 and i < self.n:
            edge = (i + 1) * BIN_S
            d = min(t1, edge) - t0
            room = BIN_S - busy[i]
            if room > 0:
                d2 = min(d, room)
                busy[i] += d2
                smv[i] += d2 * sm
                ten[i] += d2 * tensor
                dr[i] += d2 * dram
                if other:
                    self.other[g][i] += d2
            frac = d / span
            nv[i] += nvlink_bytes * frac
            pc[i] += pcie_bytes * frac
            t0 = edge
            i += 1


def _clamp(x, lo, hi):
    return lo if x < lo else hi if x > hi else x


class GpuState:
    """One GPU's clocks, power and temperature, advanced one tick at a time."""

    def __init__(self, index: int, model: str, rng, inlet_c: float = 24.0,
                 power_limit: float | None = None, uuid_seed: int = 0):
        self.i = index
        self.spec = SPECS[model]
        self.model = model
        self.rng = rng
        self.inlet = inlet_c
        self.limit = power_limit or self.spec.tdp
        s = self.spec
        self.temp = inlet_c + s.r_th * s.idle_w + 4
        self.clock = s.fidle
        self.speed = 1.0  # SM clock / fmax while busy, read by the simulations
        self.mem_speed = 1.0
        self.hw_slowdown = None  # clock ceiling (MHz) forced by the board/rack, or None
        self.power_brake = False
        self.clock_cap = None  # a lower max clock (e.g. a rank stuck at a lower clock)
        self.fan_ok = True
        self.fan_cmd = 30.0
        self.cooling = 1.0  # >1: worse airflow (hot aisle handled by inlet)
        self.power = s.idle_w
        self.throttle: tuple[str, ...] = ()
        self.util_pct = 0.0
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            (uuid_seed * 2654435761 + index * 97) & 0xFFFFFFFF, (uuid_seed + index) & 0xFFFF,
            (uuid_seed >> 3) & 0xFFFF, (index * 7919) & 0xFFFF, (uuid_seed * 1000003 + index) & 0xFFFFFFFFFFFF)
        self.ecc = 0

    def demand_power(self, busy, sm, tensor, dram, f):
        s = self.spec
        dyn = (s.tdp / 700.0) * (60 * busy + 437 * sm + 248 * tensor) * (f / s.fmax) ** 2.2
        memp = (s.tdp / 700.0) * 250 * dram
        return s.idle_w + dyn + memp

    def step(self, act: Activity, t0: float, t1: float):
        """Read the tick [t0, t1) from the timeline and advance clocks, power, temperature."""
        s = self.spec
        g = self.i
        i0, i1 = int(round(t0 / BIN_S)), int(round(t1 / BIN_S))
        i1 = max(i1, i0 + 1)
        span = (i1 - i0) * BIN_S
        busy = sum(act.busy[g][i0:i1]) / span
        sm = sum(act.sm[g][i0:i1]) / span
        ten = sum(act.tensor[g][i0:i1]) / span
        dram = sum(act.dram[g][i0:i1]) / span
        other = sum(act.other[g][i0:i1]) / span
        nv = sum(act.nvlink[g][i0:i1]) / (t1 - t0)
        pc = sum(act.pcie[g][i0:i1]) / (t1 - t0)
        # util samples at the driver's period
        per = max(1, int(round(SAMPLE_S / BIN_S)))
        samples = []
        for j in range(i0, i1, per):
            b = sum(act.busy[g][j:j + per]) / (per * BIN_S)
            samples.append(float(int(_clamp(b * 100 + self.rng.gauss(0, 0.6), 0, 100) + 0.5)))
        # clock governor
        reasons = []
        f = s.fmax if busy > 0.01 else s.fidle + (s.fmax - s.fidle) * min(1.0, busy * 30)
        if self.clock_cap:
            f = min(f, self.clock_cap)
        p = self.demand_power(busy, sm, ten, dram, f)
        if busy > 0.01 and p > self.limit:
            lo, hi = 200.0, f
            for _ in range(18):
                mid = (lo + hi) / 2
                if self.demand_power(busy, sm, ten, dram, mid) > self.limit:
                    hi = mid
                else:
                    lo = mid
            f = lo
            reasons.append("power cap")
        if busy > 0.01 and self.temp > s.t_slow:
            cut = _clamp(1 - 0.09 * (self.temp - s.t_slow), 0.45, 1)
            if s.fmax * cut < f:
                f = s.fmax * cut
                reasons.append("thermal (sw)")
        if busy > 0.01 and self.temp > s.t_slow + 6:
            f = min(f, s.fmax * 0.5)
            reasons.append("thermal (hw)")
        if busy > 0.01 and self.hw_slowdown:
            if self.hw_slowdown < f:
                f = self.hw_slowdown
            reasons.append("power brake" if self.power_brake else "hw slowdown")
        # clock granularity and jitter
        f = max(s.fidle, round(f / 15.0) * 15.0)
        self.clock = f
        if busy > 0.01:
            self.speed = f / s.fmax
            self.mem_speed = 1 - 0.25 * (1 - self.speed)
        p = self.demand_power(busy, sm, ten, dram, f)
        p = min(p, self.limit * 1.005) if "power cap" in reasons else p
        self.power = max(s.idle_w * 0.95, p + self.rng.gauss(0, 0.012 * p))
        # thermal RC
        r = s.r_th * self.cooling
        if not self.fan_ok:
            r *= 1.9
        t_eq = self.inlet + r * self.power + 6
        dt = t1 - t0
        self.temp += (t_eq - self.temp) * (1 - math.exp(-dt / s.tau_s))
        self.throttle = tuple(reasons)
        if s.fan:
            want = _clamp(30 + (self.temp - 45) * 2.2, 30, 100)
            self.fan_cmd += (want - self.fan_cmd) * 0.3
        self.util_pct = busy * 100
        return dict(busy=busy, sm=sm, tensor=ten, dram=dram, other=other, nvlink=nv, pcie=pc,
                    samples=samples)

    def sample(self, r: dict, mem_used: int) -> GpuSample:
        s = self.spec
        rng = self.rng
        missing = {}
        gpm = {}
        if s.gpm:
            nz = lambda v: max(0.0, v * 100 + rng.gauss(0, 0.25)) if v > 0.0005 else abs(rng.gauss(0, 0.02))
            gpm = dict(sm_active_pct=min(100.0, nz(r["sm"])),
                       sm_occupancy_pct=min(100.0, nz(r["sm"] * 0.42)),
                       dram_bw_pct=min(100.0, nz(r["dram"])), tensor_pct=min(100.0, nz(r["tensor"])),
                       pcie_rx_mib_per_s=abs(r["pcie"] / 2**20 * 0.6 + rng.gauss(0, 3)),
                       pcie_tx_mib_per_s=abs(r["pcie"] / 2**20 * 0.4 + rng.gauss(0, 2)),
                       nvlink_rx_mib_per_s=r["nvlink"] / 2**20 * 0.5,
                       nvlink_tx_mib_per_s=r["nvlink"] / 2**20 * 0.5)
        else:
            why = "needs Hopper+ (GPM); no dcgm-exporter on this node"
            for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                missing[k] = why
            missing["pcie_rx_mib_per_s"] = missing["nvlink_rx_mib_per_s"] = "needs Hopper+ (GPM)"
        if not s.fan:
            missing["fan_pct"] = "not supported on this GPU"
        samples = tuple(r["samples"])
        util = float(int(sum(samples) / len(samples) + 0.5)) if samples else 0.0
        mem_util = float(int(_clamp(r["dram"] * 100 * 0.92 + rng.gauss(0, 0.8), 0, 100) + 0.5)) \
            if r["busy"] > 0.005 else 0.0
        return GpuSample(
            index=self.i, name=s.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=samples, util_mem_pct=mem_util,
            mem_total_bytes=s.mem_total, mem_used_bytes=min(mem_used, s.mem_total - s.reserve),
            mem_reserved_bytes=s.reserve, power_w=round(self.power, 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=float(self.clock), throttle=self.throttle,
            bus_id="00000000:%02X:00.0" % (0x18 + 0x10 * self.i), 
            fan_pct=(float(round(self.fan_cmd)) if s.fan else None),
            pstate=0 if r["busy"] > 0.005 or self.clock > s.fidle else 8,
            power_limit_w=float(self.limit), mem_clock_mhz=float(s.mem_clock),
            ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, **gpm)
