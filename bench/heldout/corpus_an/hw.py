"""GPU and host hardware, and the physics NVML and /proc read from them.

Figures are public datasheet numbers (dense bf16/fp16 tensor throughput, HBM/GDDR
bandwidth, board power); idle power, slowdown temperatures and the power coefficients
are calibrated on the real H200 recordings in data/h200 (see README.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class GpuSpec:
    model: str          # short name used in Truth.gpu_model
    name: str           # as NVML names it
    mem_total: int      # bytes, as NVML's memory.total
    reserved: int       # driver reserve (NVML v2 "reserved")
    bw: float           # bytes/s of device memory
    flops: float        # dense bf16 tensor FLOP/s at max clock
    tdp: float          # default power limit, W
    idle_w: float       # power with a context and memory held, no kernels
    max_clk: float
    mem_clk: float
    sms: int
    gpm: bool           # Hopper+: SM/DRAM/tensor activity from NVML GPM
    fan: bool
    slow_c: float       # software thermal slowdown starts
    hw_slow_c: float    # hardware slowdown
    nvlink: bool


GIB = 2**30
SPECS = {
    "H100": GpuSpec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 566231040, 3.35e12, 989e12,
                    700, 72, 1980, 2619, 132, True, False, 87, 92, True),
    "H200": GpuSpec("H200", "NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12,
                    700, 78, 1980, 3201, 132, True, False, 87, 92, True),
    "A100": GpuSpec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 536870912, 2.04e12, 312e12,
                    400, 58, 1410, 1593, 108, False, False, 85, 90, True),
    "L40S": GpuSpec("L40S", "NVIDIA L40S", 48305799168, 595591168, 0.864e12, 362e12,
                    350, 34, 2520, 9001, 142, False, False, 86, 91, False),
    "A10G": GpuSpec("A10G", "NVIDIA A10G", 24146608128, 490733568, 0.6e12, 70e12,
                    300, 24, 1710, 6251, 80, False, False, 86, 91, False),
    "A6000": GpuSpec("A6000", "NVIDIA RTX A6000", 51527024640, 515899392, 0.768e12, 155e12,
                     300, 22, 1800, 8001, 84, False, True, 86, 91, False),
    "4090": GpuSpec("4090", "NVIDIA GeForce RTX 4090", 25757220864, 411041792, 1.008e12,
                    165e12, 450, 20, 2520, 10501, 128, False, True, 84, 90, False),
}


@dataclass
class Activity:
    """What the work did on one GPU over one tick, as time fractions of the tick."""
    busy: float = 0.0      # some kernel ran (NVML GPU-Util)
    sm: float = 0.0        # SM activity (<= busy)
    occ: float = 0.0       # warp occupancy (<= sm)
    tensor: float = 0.0
    dram: float = 0.0
    pcie_rx: float = 0.0   # MiB/s
    pcie_tx: float = 0.0
    nvlink: float = 0.0    # MiB/s each way
    # per process: pid -> (share of busy time, bytes of memory)
    procs: dict = field(default_factory=dict)


class GpuPhysics:
    """Power, clock and temperature of one board, updated once per tick.

    Power at max clock = idle + (212*sm + 919*tensor + 300*dram) * tdp/700 W (fitted on
    the H200 lab: training 46/13/21 % -> ~400 W, bf16 matmul 82/52/26 % -> ~690 W
    capped); dynamic power scales with (f/fmax)^2.4.  The driver lowers the clock until
    power fits the limit ("power cap"); temperature follows inlet + R*P with a 35 s time
    constant; above slow_c the clock is walked down ("thermal (sw)"), above hw_slow_c it
    is halved ("hw slowdown")."""

    def __init__(self, spec: GpuSpec, rng, inlet_c=24.0, r_th=0.045, power_limit=None):
        self.spec = spec
        self.rng = rng
        self.inlet_c = inlet_c
        self.r_th = r_th * 700 / spec.tdp  # a smaller board sheds less heat per watt
        self.power_limit = power_limit or spec.tdp
        self.clk = spec.max_clk
        self.thermal_clk = spec.max_clk
        self.temp = inlet_c + 8 + self.r_th * spec.idle_w
        self.power = spec.idle_w
        self.throttle: tuple[str, ...] = ()
        self.clock_cap = None  # an admin's locked clock (nvidia-smi -lgc), MHz
        self.hw_slow = False   # an external HW slowdown signal (power brake / PSU)

    @property
    def factor(self) -> float:
        """Clock relative to max: compute-bound work runs this much as fast."""
        return self.clk / self.spec.max_clk

    def dyn_power(self, a: Activity) -> float:
        k = self.spec.tdp / 700.0
        return (212 * a.sm + 919 * a.tensor + 300 * a.dram) * k

    def update(self, a: Activity, dt: float) -> None:
        s = self.spec
        dyn = self.dyn_power(a)
        reasons = []
        f = s.max_clk
        if self.clock_cap:
            f = min(f, self.clock_cap)
        # power controller: the clock that fits the limit
        if dyn > 1 and s.idle_w + dyn * (f / s.max_clk) ** 2.4 > self.power_limit:
            room = max(5.0, self.power_limit - s.idle_w)
            f = max(s.max_clk * 0.35, s.max_clk * (room / dyn) ** (1 / 2.4))
            if f < s.max_clk - 1:
                reasons.append("power cap")
        # thermal controller (slow): walk down above slow_c, recover below
        if self.temp > s.slow_c:
            self.thermal_clk = max(s.max_clk * 0.45, self.thermal_clk - 60 * dt * (self.temp - s.slow_c))
        else:
            self.thermal_clk = min(s.max_clk, self.thermal_clk + 40 * dt)
        if self.thermal_clk < f - 1:
            f = self.thermal_clk
            reasons.append("thermal (sw)")
        if self.temp > s.hw_slow_c or self.hw_slow:
            f = min(f, s.max_clk * 0.5)
            reasons.append("hw slowdown" if not self.hw_slow else "power brake")
        # clocks move in 15 MHz steps with a little hunting under a cap
        if reasons and a.busy > 0.05:
            f += self.rng.uniform(-20, 20)
        f = min(f, s.max_clk if not self.clock_cap else self.clock_cap)
        self.clk = round(f / 15) * 15
        p = s.idle_w + dyn * (self.clk / s.max_clk) ** 2.4
        if "power cap" in reasons:
            p = min(p, self.power_limit) - self.rng.uniform(0, 0.012) * self.power_limit
        self.power = max(s.idle_w * 0.9, p + self.rng.gauss(0, 1.5 + 0.004 * p))
        target = self.inlet_c + 8 + self.r_th * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 35.0))
        self.throttle = tuple(reasons) if a.busy > 0.02 else ()


@dataclass
class HostSpec:
    cores: int = 128
    name: str = "node"


class HostPhysics:
    """/proc as a collector reads it: the monitored process tree against everything else.

    tree_demand: cores the tree would use if it got them; others: cores other tenants
    want on the same cores (cpuset share); quota: cgroup cpu.max in cores (None: none).
    The tree's share under oversubscription is proportional; under a quota it is capped
    and periods are throttled.  PSI "some" is the share of time a runnable task waited
    (smoothed like avg10)."""

    def __init__(self, cores: int, rng, base_other: float = 3.0):
        self.cores = cores
        self.rng = rng
        self.others = base_other
        self.tree_cores = cores  # cores the tree may run on (its cpuset)
        self.others_on_set = 0.3  # other demand on those same cores
        self.quota = None
        self.psi = 0.3
        self.periods = 0
        self.throttled = 0
        self.ctxt = 10_000_000 + rng.randrange(10**6)
        self.tree_cpu_s = 0.0
        self.tree_inv = 0
        self.tree_vol = 0
        self.cpu_pct = 0.0
        self.run_queue = 2
        self._period_acc = 0.0
        self._thr_acc = 0.0

    def share(self, demand: float) -> float:
        """Fraction of the tree's demand it gets this tick (before it runs)."""
        if demand <= 0:
            return 1.0
        got = demand
        if self.tree_cores:
            total = demand + self.others_on_set
            if total > self.tree_cores:
                got = demand * self.tree_cores / total
        if self.quota is not None:
            got = min(got, self.quota)
        return max(0.02, got / demand)

    def account(self, demand: float, used: float, dt: float, threads: int = 4) -> None:
        rng = self.rng
        self.tree_cpu_s += used * dt
        starved = 0.0 if demand <= 0 else max(0.0, 1 - used / demand)
        # involuntary switches: timeslice expiries grow with contention on the set
        over = max(0.0, (demand + self.others_on_set) / max(1, self.tree_cores) - 0.7)
        inv = dt * (threads * 1.5 + 900 * over * min(demand, 8) + 400 * starved)
        if self.quota is not None and starved > 0.02:
            inv += dt * 40 * threads  # throttled threads are descheduled at period ends
        self.tree_inv += int(inv * rng.uniform(0.7, 1.3))
        self.tree_vol += int(dt * (200 + 150 * used) * rng.uniform(0.8, 1.2))
        if self.quota is not None:
            self._period_acc += dt / 0.1
            n = int(self._period_acc)
            self._period_acc -= n
            self.periods += n
            frac = min(1.0, starved * 3) if demand > self.quota * 0.98 else 0.0
            self._thr_acc += n * frac
            k = int(self._thr_acc)
            self._thr_acc -= k
            self.throttled += k
        other_used = min(self.others, max(0.0, self.cores - used))
        self.cpu_pct = round(100 * (used + other_used) / self.cores + rng.uniform(-0.3, 0.3), 1)
        runnable = used + other_used + max(0.0, demand - used) + max(0.0, self.others - other_used)
        self.run_queue = max(1, int(round(min(runnable, self.cores * 3) * rng.uniform(0.85, 1.15))))
        # host-wide PSI some: time some task waited for a CPU (smoothed ~ avg10)
        wait = 100 * min(1.0, starved * 1.2 + max(0.0, (self.others + demand) / self.cores - 0.85) * 2)
        wait += rng.uniform(0, 0.4)
        self.psi += (wait - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctxt += int(dt * (2000 + 300 * runnable) * rng.uniform(0.9, 1.1))
