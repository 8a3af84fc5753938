"""GPU and host physics: specs, clocks/power/temperature, NVML- and /proc-style readouts.

Every reading is computed from activity the workloads report (seconds of kernel time,
SM-, tensor- and DRAM-active seconds per GPU per tick) and from CPU demand on the host.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

MIB = 1 << 20
GIB = 1 << 30


@dataclass(frozen=True)
class GpuSpec:
    name: str
    mem_bytes: int
    reserved_bytes: int
    hbm_tbs: float        # peak DRAM bandwidth, TB/s
    tflops: float         # dense bf16 tensor TFLOP/s
    tdp_w: float          # default power limit
    idle_w: float
    clock_max: float      # MHz, sustained boost
    clock_min: float
    mem_clock: float
    gpm: bool             # Hopper+ GPM (SM/tensor/DRAM activity)
    fan: bool             # board fan reported by NVML
    sms: int
    t_slow: float         # software thermal slowdown onset, C
    t_hw: float           # hardware slowdown, C
    r_th: float           # C per W above inlet at nominal airflow
    nvlink_gbs: float     # per-GPU NVLink bandwidth, GB/s (0: PCIe only)
    pcie_gbs: float
    consumer: bool = False


SPECS = {
    "H100": GpuSpec("NVIDIA H100 80GB HBM3", 85520809984, 605028352, 3.35, 989, 700, 72, 1980, 345,
                    2619, True, False, 132, 87, 92, 0.062, 450, 55),
    "H200": GpuSpec("NVIDIA H200", 150754820096, 644939776, 4.8, 989, 700, 76, 1980, 345,
                    3201, True, False, 132, 87, 92, 0.060, 450, 55),
    "A100": GpuSpec("NVIDIA A100 80GB PCIe", 85899345920, 566231040, 1.94, 312, 300, 45, 1410, 210,
                    1512, False, False, 108, 85, 90, 0.16, 0, 25),
    "L40S": GpuSpec("NVIDIA L40S", 48305799168, 596639744, 0.864, 362, 350, 36, 2520, 210,
                    9001, False, False, 142, 85, 91, 0.14, 0, 25),
    "A10G": GpuSpec("NVIDIA A10G", 24146608128, 523763712, 0.6, 70, 300, 25, 1710, 210,
                    6251, False, False, 80, 85, 92, 0.16, 0, 12),
    "RTX4090": GpuSpec("NVIDIA GeForce RTX 4090", 25757220864, 479199232, 1.01, 165, 450, 22,
                       2520, 210, 10501, False, True, 128, 83, 90, 0.095, 0, 25, True),
    "RTX5090": GpuSpec("NVIDIA GeForce RTX 5090", 34190917632, 520093696, 1.79, 209, 575, 28,
                       2407, 210, 14001, True, True, 170, 83, 90, 0.085, 0, 50, True),
}

GPM_MISSING = {k: "needs Hopper+ (GPM)" for k in
               ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct",
                "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                "nvlink_tx_mib_per_s")}


class Act:
    """What ran on one GPU during one tick: seconds of kernel time and of each activity."""
    __slots__ = ("busy", "sm", "occ", "tensor", "dram", "pcie_rx", "pcie_tx", "nvl", "byproc")

    def __init__(self):
        self.busy = self.sm = self.occ = self.tensor = self.dram = 0.0
        self.pcie_rx = self.pcie_tx = self.nvl = 0.0  # bytes
        self.byproc: dict[int, list[float]] = {}  # pid -> [busy_s, dram_s]

    def add(self, pid, seconds, sm, tensor, dram, occ=None):
        """``seconds`` of kernels with SM/tensor/DRAM active fractions during them."""
        if seconds <= 0:
            return
        self.busy += seconds
        self.sm += seconds * sm
        self.occ += seconds * (occ if occ is not None else sm * 0.45)
        self.tensor += seconds * tensor
        self.dram += seconds * dram
        p = self.byproc.setdefault(pid, [0.0, 0.0])
        p[0] += seconds
        p[1] += seconds * dram


class Gpu:
    """Clock, power and temperature of one board, updated once per tick."""

    def __init__(self, index, spec: GpuSpec, rng: random.Random, power_limit=None,
                 ambient=27.0, bus=None):
        self.index, self.spec, self.rng = index, spec, rng
        self.power_limit = power_limit or spec.tdp_w
        self.ambient = ambient
        self.temp = ambient + 8
        self.clock = spec.clock_max
        self.thermal_mult = 1.0
        self.power = spec.idle_w
        self.reasons: tuple[str, ...] = ()
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        self.bus_id = bus or "00000000:%02X:00.0" % (0x18 + 0x11 * index)
        self.idle_ticks = 0
        # fault knobs (set by scenarios per tick)
        self.cooling = 1.0          # multiplies r_th (fan failing, dust)
        self.brake = False          # external power brake
        self.clock_cap = None       # a clock locked low (driver, application clocks)
        self.hw_slow = False        # hardware slowdown asserted (PSU, sensor)
        self.ecc_c = 0
        self.xid = 0

    @property
    def speed(self) -> float:
        """Compute speed relative to max clock."""
        return self.clock / self.spec.clock_max

    @property
    def mem_speed(self) -> float:
        return 0.72 + 0.28 * self.speed

    def update(self, dt: float, act: Act):
        s = self.spec
        busy = min(1.0, act.busy / dt)
        sm = min(1.0, act.sm / dt)
        tensor = min(1.0, act.tensor / dt)
        dram = min(1.0, act.dram / dt)
        activity = 0.18 * busy + 0.25 * sm + 0.37 * tensor + 0.20 * dram
        coef = (s.tdp_w - s.idle_w) / 0.74
        f = s.clock_max
        reasons = []
        if self.clock_cap:
            f = min(f, self.clock_cap)
        f *= self.thermal_mult
        demand = s.idle_w + coef * activity * (f / s.clock_max) ** 2.2
        if demand > self.power_limit and activity > 0:
            ratio = ((self.power_limit - s.idle_w) / (coef * activity)) ** (1 / 2.2)
            f = min(f, s.clock_max * ratio)
            reasons.append("power cap")
        if self.brake:
            f = min(f, s.clock_max * 0.36)
            reasons += ["hw slowdown", "power brake"]
        elif self.hw_slow:
            f = min(f, s.clock_max * 0.5)
            reasons.append("hw slowdown")
        if self.thermal_mult < 0.995:
            reasons.append("thermal (sw)")
        f = max(s.clock_min, f)
        if s.consumer and busy < 0.02:
            self.idle_ticks += 1
        else:
            self.idle_ticks = 0
        if self.idle_ticks > 3:
            f, pstate = 210.0, 8
        else:
            pstate = 0 if busy > 0.02 or not s.consumer else 2
        power = s.idle_w + coef * activity * (f / s.clock_max) ** 2.2
        power = min(power, self.power_limit * 1.01) if "power cap" in reasons else power
        power *= 1 + self.rng.gauss(0, 0.012)
        # temperature: first-order lag toward inlet + R*P
        target = self.ambient + s.r_th * self.cooling * power
        if getattr(self, "_warm", False):
            self.temp += (target - self.temp) * min(1.0, dt / 35.0)
        else:
            self.temp, self._warm = target, True
        # thermal control loop acts on the next tick
        if self.temp > s.t_slow:
            self.thermal_mult = max(0.45, self.thermal_mult - 0.04 * dt)
        elif self.temp < s.t_slow - 2.5:
            self.thermal_mult = min(1.0, self.thermal_mult + 0.03 * dt)
        if self.temp > s.t_hw and "hw slowdown" not in reasons:
            reasons.append("hw slowdown")
        self.clock = round(f / 15) * 15 if pstate == 0 else f
        self.power = power
        self.reasons = tuple(r for r in reasons)
        self.pstate = pstate
        return busy, sm, tensor, dram

    def fan(self):
        if not self.spec.fan:
            return None
        return float(min(100, max(30, round(30 + (self.temp - 40) * 2.2 * self.cooling))))


class Host:
    """CPU of one machine as /proc shows it; processes ask for cores each tick."""

    def __init__(self, cpus: int, rng: random.Random, base_load=0.6):
        self.cpus = cpus
        self.rng = rng
        self.base_load = base_load
        self.psi = 0.5
        self.ctxt = rng.randrange(10**8, 10**9)
        self.share = 1.0
        self.run_queue = 1
        self.cpu_pct = 0.0
        self.steal = 0.0  # cores a hypervisor takes (noisy neighbour VM)

    def update(self, dt, demands: list[float]) -> float:
        """Fair share each runnable thread gets (1.0: no contention)."""
        total = self.base_load + sum(demands)
        avail = self.cpus - self.steal
        share = 1.0 if total <= avail * 0.9 else max(0.05, avail * 0.92 / total)
        over = max(0.0, total - avail * 0.8) / max(1.0, avail * 0.5)
        inst = min(100.0, 100 * over) if over > 0 else self.rng.uniform(0.0, 1.5)
        inst = inst + 35 * min(1.0, self.steal / max(1, self.cpus) * 4) if self.steal else inst
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        self.share = share
        self.run_queue = max(1, int(round(min(total, avail * 3) + self.rng.uniform(-0.5, 1.5))))
        self.cpu_pct = 100 * min(total, avail) / self.cpus + (100 * self.steal / self.cpus if self.steal else 0)
        self.ctxt += int(dt * (2500 * self.cpus ** 0.5 + 4000 * total + (30000 * over)))
        return share


@dataclass
class CpuProc:
    """A host process (or process tree): cumulative CPU time and switches."""
    pid: int
    name: str
    cmdline: str
    user: str = "ubuntu"
    start: float = 0.0
    threads: int = 8
    cpu_s: float = 0.0
    vol: int = 0
    invol: int = 0
    rss: int = 2 * GIB
    container: str = ""
    cgroup: str = ""
    quota: float | None = None  # cores
    periods: int = 0
    throttled: int = 0
    main_cpu_s: float = 0.0  # the busiest thread (launcher / scheduler)
    main_tid: int = 0

    def account(self, dt, used_cores, main_cores, contention, rng, quota_frac=0.0):
        self.cpu_s += used_cores * dt
        self.main_cpu_s += main_cores * dt
        self.vol += int(dt * (300 + 50 * self.threads) * rng.uniform(0.9, 1.1))
        self.invol += int(dt * (2 + 900 * contention * min(self.threads, 12) / 4) * rng.uniform(0.8, 1.2))
        if self.quota:
            n = int(round(dt / 0.1))
            self.periods += n
            self.throttled += int(round(n * quota_frac))
