"""The host as /proc shows it: CPUs shared by tenants' containers, cgroup quotas, PSI,
run queue, per-process CPU time and involuntary context switches."""
from __future__ import annotations
import math
from dataclasses import dataclass

from gputop.schema import HostSample


@dataclass
class CpuLoad:
    """This tick: what the watched tree wants and who else runs on its cores and the host."""
    demand_cores: float               # cores the watched tree would use unhindered
    cpuset_cores: int                 # cores the tree may run on
    neighbours_on_cpuset: float = 0.0  # other tenants' runnable threads on those cores
    background: float = 0.0           # runnable threads elsewhere on the host
    quota_cores: float | None = None
    launch_preempt: float = 0.0       # extra preemptions of the launch thread (short bursts)


class HostState:
    def __init__(self, cpus: int, rng, ctx_base: int = 0):
        self.cpus, self.rng = cpus, rng
        self.psi = 1.0 + rng.random()
        self.ctx_total = ctx_base or int(rng.uniform(2e6, 9e7))
        self.tree_cpu_s = rng.uniform(20, 200)
        self.ctx_vol = int(rng.uniform(5e3, 5e4))
        self.ctx_invol = int(rng.uniform(100, 3000))
        self.periods = 0
        self.throttled = 0
        self.threads_cpu = [self.tree_cpu_s * 0.7, self.tree_cpu_s * 0.2, self.tree_cpu_s * 0.05]
        self.last_share = 1.0
        self.last_invol = 0

    def share(self, load: CpuLoad) -> float:
        """Fraction of its CPU demand the tree gets this tick."""
        d = max(0.05, load.demand_cores)
        s = 1.0
        comp = d + load.neighbours_on_cpuset
        if comp > load.cpuset_cores:
            s = min(s, load.cpuset_cores / comp)
        if load.quota_cores:
            s = min(s, load.quota_cores / d * 0.97 if d > load.quota_cores * 0.9 else 1.0)
        return max(0.02, min(1.0, s))

    def tick(self, dt: float, load: CpuLoad, share: float, ebpf: bool):
        rng = self.rng
        used = load.demand_cores * share
        self.tree_cpu_s += used * dt
        self.threads_cpu[0] += min(1.0, used * 0.75) * dt
        self.threads_cpu[1] += used * 0.18 * dt
        self.threads_cpu[2] += used * 0.04 * dt
        lost = load.demand_cores * (1 - share)
        invol = rng.poisson if False else None
        n_inv = int(max(0, (3 + 900 * lost + 400 * load.launch_preempt) * dt * (1 + rng.gauss(0, 0.15))))
        self.ctx_invol += n_inv
        self.last_invol = n_inv
        self.ctx_vol += int((250 + 400 * used) * dt * (1 + rng.gauss(0, 0.1)))
        if load.quota_cores:
            p = int(round(dt / 0.1))
            self.periods += p
            frac = min(1.0, max(0.0, (load.demand_cores / load.quota_cores - 0.85) * 3))
            self.throttled += int(round(p * frac * (0.9 + 0.1 * rng.random())))
        runnable = used + load.neighbours_on_cpuset + load.background + lost
        busy = min(self.cpus, used + min(load.neighbours_on_cpuset, load.cpuset_cores) + load.background)
        over = max(0.0, runnable - self.cpus) / max(1.0, runnable)
        waiting_local = max(0.0, (load.demand_cores + load.neighbours_on_cpuset - load.cpuset_cores)) / max(1.0, load.cpuset_cores)
        inst = min(100.0, 100 * (1.4 * over + 0.5 * min(1.0, waiting_local)
                                 + 0.4 * (1 - share) + 0.3 * load.launch_preempt) + 0.6 + rng.random())
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        rq = max(1, int(round(runnable + 1 + rng.gauss(0, 0.8))))
        self.ctx_total += int((12000 + 3000 * runnable) * dt)
        self.last_share = share
        host = HostSample(cpu_pct=round(min(100.0, 100 * busy / self.cpus + rng.uniform(0.5, 2)), 1),
                          offcpu_switches=(n_inv if ebpf else None),
                          cpu_pressure_some_pct=round(self.psi, 2), run_queue=rq, cpus=self.cpus,
                          ctx_switches_total=self.ctx_total)
        return host
