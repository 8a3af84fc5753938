"""Hardware physics: GPU boards (power, clock governor, thermals, NVML sampling) and the host CPU
(cpuset fair share, CFS quota, PSI, run queue, involuntary switches).  Fine grain DT seconds."""
from __future__ import annotations

import math

DT = 0.1  # the activity timeline's grain (s)
GiB = 2**30

# name: (nvml name, memory MiB, HBM bytes/s, dense bf16 FLOP/s, TDP W, max SM MHz, idle MHz, GPM,
#        fan, thermal resistance C/W, slowdown C, driver util sample period s, mem clock MHz)
SPECS = {
    "H100 SXM": ("NVIDIA H100 80GB HBM3", 81559, 3.35e12, 989e12, 700, 1980, 345, True, False, 0.055, 87, 0.2, 2619),
    "H100 PCIe": ("NVIDIA H100 PCIe", 81559, 2.0e12, 756e12, 350, 1755, 345, True, False, 0.13, 87, 0.2, 1593),
    "H200": ("NVIDIA H200", 143771, 4.8e12, 989e12, 700, 1980, 345, True, False, 0.05, 87, 0.2, 3201),
    "A100 80GB": ("NVIDIA A100-SXM4-80GB", 81920, 2.04e12, 312e12, 400, 1410, 210, False, False, 0.09, 86, 0.2, 1593),
    "A100 40GB": ("NVIDIA A100-SXM4-40GB", 40960, 1.555e12, 312e12, 400, 1410, 210, False, False, 0.09, 86, 0.2, 1215),
    "L40S": ("NVIDIA L40S", 46068, 0.864e12, 362e12, 350, 2520, 210, False, False, 0.13, 88, 0.2, 9001),
    "L4": ("NVIDIA L4", 23034, 0.3e12, 121e12, 72, 2040, 210, False, False, 0.55, 88, 0.2, 6251),
    "A10G": ("NVIDIA A10G", 23028, 0.6e12, 70e12, 300, 1710, 210, False, False, 0.14, 88, 0.2, 6251),
    "RTX A6000": ("NVIDIA RTX A6000", 49140, 0.768e12, 155e12, 300, 1800, 210, False, True, 0.17, 86, 0.2, 8001),
    "RTX 4090": ("NVIDIA GeForce RTX 4090", 24564, 1.0e12, 165e12, 450, 2520, 210, False, True, 0.11, 84, 0.2, 10501),
    "V100": ("Tesla V100-SXM2-32GB", 32768, 0.9e12, 125e12, 300, 1530, 135, False, False, 0.12, 85, 0.2, 877),
}


class Spec:
    def __init__(self, key: str):
        (self.nvml, mib, self.bw, self.flops, self.tdp, self.fmax, self.fidle, self.gpm, self.fan,
         self.rth, self.tslow, self.sample_s, self.mclk) = SPECS[key]
        self.key = key
        self.mem = mib * 2**20
        # power model (calibrated on the H200 lab: idle with a context 121 W, bf16 matmul capped
        # at 700 W near 1460 MHz, device copy ~474 W): P = idle + (A sm + B tensor) r^2.5 + C dram
        k = self.tdp / 700.0
        self.p_idle = 0.173 * self.tdp
        self.p_bare = 0.11 * self.tdp  # no context, lowest clock
        self.pa, self.pb, self.pc = 300 * k, 900 * k, 250 * k


class Gpu:
    """One board: the clock governor, the thermal state and the running NVML/GPM sums."""

    def __init__(self, index: int, spec: Spec, rng, inlet=24.0, limit=None):
        self.i, self.s, self.rng = index, spec, rng
        self.limit = float(limit or spec.tdp)
        self.inlet = inlet
        self.rth = spec.rth
        self.temp = inlet + spec.rth * spec.p_idle
        self.r_pow = 1.0
        self.r_th = 1.0
        self.brake = 1.0  # an external cap (rack power brake), 1 = none
        self.hw_slow = False
        self.r = 1.0
        self.power = spec.p_idle
        self.fan = 30.0 if spec.fan else None
        self.context = True
        self.reasons: tuple = ()

    def step(self, busy, sm, ten, dram, dt=DT):
        """Power, clock and temperature for one grain with this activity (fractions of dt)."""
        s = self.s
        dyn = s.pa * sm + s.pb * ten
        fixed = (s.p_idle if self.context else s.p_bare) + s.pc * dram + 0.04 * s.tdp * busy
        # the clock the power limit allows
        room = self.limit * min(1.0, self.brake if self.brake < 1 else 1.0) - fixed
        if dyn > 1e-6:
            want = (max(room, 1.0) / dyn) ** 0.4 if room < dyn else 1.0
        else:
            want = 1.0
        want = max(0.35, min(1.0, want))
        # governor slews: quick down, slower up
        self.r_pow += (want - self.r_pow) * (0.6 if want < self.r_pow else 0.25)
        # thermal: keep the die at the slowdown temperature
        if self.temp > s.tslow:
            self.r_th = max(0.45, self.r_th - 0.02 * (self.temp - s.tslow) * dt * 5)
        elif self.r_th < 1.0:
            self.r_th = min(1.0, self.r_th + 0.01 * dt * 5 * max(0.2, s.tslow - 1.5 - self.temp))
        r = min(self.r_pow, self.r_th, 1.0)
        if self.hw_slow:
            r = min(r, 0.55)
        self.r = r
        self.power = fixed + dyn * r ** 2.5
        target = self.inlet + self.rth * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 25.0))
        if self.fan is not None:
            f_target = max(30.0, min(100.0, 30 + (self.temp - 45) * 2.6))
            self.fan += (f_target - self.fan) * 0.05
        reasons = []
        if self.r_pow < 0.985:
            reasons.append("power brake" if self.brake < 1 else "power cap")
        if self.r_th < 0.99:
            reasons.append("thermal (sw)")
        if self.hw_slow:
            reasons.append("hw slowdown")
        self.reasons = tuple(reasons)

    def mhz(self, busy):
        if busy <= 0.0 and not self.context:
            return float(self.s.fidle)
        return float(int(self.s.fmax * self.r / 15) * 15)


class Host:
    """The job's CPU side: its cpuset, other tenants on it, an optional CFS quota, the launch
    thread's own core.  ``grant`` is the share of the tree's demand it gets, ``grant_launch``
    the launch thread's; PSI some avg10, run queue and switch counts follow."""

    def __init__(self, rng, cpus, cores, quota=None, bg=1.5):
        self.rng, self.cpus, self.cores, self.quota = rng, cpus, cores, quota
        self.bg = bg  # host load outside the cpuset
        self.other = lambda t: 0.3  # other tenants' demand on the cpuset (cores)
        self.launch_other = lambda t: 0.0  # demand pinned on the launch thread's core
        self.quota_at = lambda t: self.quota
        self.grant = 1.0
        self.grant_launch = 1.0
        self.psi = 1.0
        self.periods = 0
        self.throttled = 0
        self.ctx_invol = 0.0
        self.ctx_vol = 0.0
        self.launch_invol = 0.0
        self.ctxt_total = 4_000_000_000 // 1000 + rng.randrange(10**6)
        self.used_tree = 0.0
        self.used_all = 0.0
        self.runq = 2

    def step(self, t, demand, launch_demand, threads, dt=DT):
        rng = self.rng
        C = len(self.cores)
        demand = max(0.0, demand * (1 + rng.gauss(0, 0.04)))
        other = max(0.0, self.other(t) * (1 + rng.gauss(0, 0.08)))
        over = demand + other
        g = 1.0 if over <= C else C / over
        q = self.quota_at(t)
        self.periods += 1  # one 100-ms CFS period per grain
        if q is not None and demand * g > q:
            # the quota runs out inside the period: throttled, the rest of the period lost
            g = min(g, q / max(demand, 1e-9))
            if rng.random() < min(1.0, 0.6 + (demand - q) / max(q, 0.1)):
                self.throttled += 1
        elif q is not None and demand > 0.85 * q and rng.random() < 0.05:
            self.throttled += 1  # bursts over the quota now and then
        lo = max(0.0, self.launch_other(t))
        gl = g
        if lo > 0 and launch_demand + lo > 1.0:
            gl = min(g, 1.0 / (launch_demand + lo))
        self.grant, self.grant_launch = g, gl
        excess = max(0.0, over - C)
        some = min(1.0, excess / (0.5 + 0.12 * C) + (min(1.0, lo) * min(1.0, launch_demand) * 0.7))
        some = max(some, abs(rng.gauss(0.012, 0.01)))
        a = math.exp(-dt / 10.0)
        self.psi = self.psi * a + 100 * some * (1 - a)
        used = demand * g
        self.used_tree, self.used_all = used, used + min(other, C) + self.bg
        self.runq = max(1, int(round(min(over, C + excess) + self.bg + rng.gauss(0, 0.7))))
        wait = 1.0 - g
        self.ctx_invol += dt * threads * (3.0 + 450.0 * wait) * (1 + rng.gauss(0, 0.1))
        self.launch_invol += dt * (2.0 + 500.0 * (1.0 - gl)) * (1 + rng.gauss(0, 0.1))
        self.ctx_vol += dt * threads * 60 * (1 + rng.gauss(0, 0.1))
        self.ctxt_total += int(dt * (20000 + 3000 * over))
