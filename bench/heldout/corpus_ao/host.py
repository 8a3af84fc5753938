"""The host as /proc shows it: CPUs shared between the traced process tree and others.

Each tick the simulations declare how many cores the tree wants (its threads' demand) and
the scenario how many cores other tenants want on the same cores; the model hands out CPU
(fair share, a cgroup CPU quota in 100 ms periods) and keeps the cumulative counters /proc
would show: the tree's CPU seconds, voluntary and involuntary switches, throttled periods,
the host's ctxt, PSI some avg10 and procs_running.
"""
from __future__ import annotations

import math

from gputop.schema import HostSample, PinnedSample, ThreadSample


class Host:
    def __init__(self, rng, cpus: int = 64, cores: tuple[int, ...] | None = None,
                 quota: float | None = None, base_other: float = 1.5):
        self.rng = rng
        self.cpus = cpus
        self.cores = cores or tuple(range(cpus))  # the tree's cpuset
        self.quota = quota
        self.base_other = base_other  # other tenants' demand on the whole host (cores)
        self.other_on_cores = 0.0  # other tenants' demand on the tree's cores
        self.cpu_s = 0.0
        self.ctx_vol = 1000
        self.ctx_invol = 40
        self.periods = 0
        self.throttled = 0
        self.ctxt = 48_000_000 + rng.randrange(10_000_000)
        self.psi = 0.3
        self.run_queue = 3
        self.host_cpu = 5.0
        self.share = 1.0  # fraction of its demand the tree got (main thread's speed)
        self.quota_share = 1.0
        self.threads: dict[int, list] = {}  # tid -> [name, cpu_s, weight]
        self.offcpu = 0

    def tick(self, dt: float, demand: float, main_demand: float = 1.0, stall_extra: float = 0.0):
        """Share CPU for one tick; returns the main (launch) thread's speed factor 0..1."""
        rng = self.rng
        ncores = len(self.cores)
        other = self.other_on_cores * (1 + rng.gauss(0, 0.05))
        want = demand + max(0.0, other)
        share = 1.0
        if want > ncores:
            share = ncores / want
        got = demand * share
        qshare = 1.0
        if self.quota is not None:
            npp = int(round(dt / 0.1))
            self.periods += npp
            if got > self.quota:
                qshare = self.quota / got
                got = self.quota
                self.throttled += npp - (1 if rng.random() < 0.2 else 0)
            elif got > self.quota * 0.8:
                self.throttled += int(npp * rng.random() * 0.3)
        self.quota_share = qshare
        self.share = share * qshare
        got = max(0.0, got * (1 + rng.gauss(0, 0.02)))
        self.cpu_s += got * dt
        # switches: voluntary from blocking waits, involuntary from preemption
        self.ctx_vol += int(dt * (800 + 400 * demand))
        contention = max(0.0, (want - ncores) / max(1.0, ncores))
        invol = dt * (6 + 3 * demand + 900 * contention * demand + 40 * other / max(1, ncores)
                      + (300 * (1 - qshare) * demand))
        invol = max(0, int(invol + rng.gauss(0, math.sqrt(invol + 1))))
        self.ctx_invol += invol
        self.offcpu = invol
        host_want = want + self.base_other * (1 + rng.gauss(0, 0.08)) + stall_extra
        self.host_cpu = min(100.0, 100 * min(host_want, self.cpus) / self.cpus + rng.gauss(0, 0.4))
        self.host_cpu = max(0.5, self.host_cpu)
        self.ctxt += int(dt * (20000 + 3000 * host_want) * (1 + 0.05 * rng.random()))
        # PSI some: share of time some task waited for a CPU (avg10: ~10 s smoothing)
        waiting = max(0.0, want - ncores) / max(want, 1e-9) if want > ncores else 0.0
        if self.quota is not None and qshare < 1:
            waiting = max(waiting, 0.0)  # quota stalls are not host CPU pressure
        inst = 100 * min(1.0, waiting * 1.6) + max(0.0, rng.gauss(0.2, 0.15))
        a = 1 - math.exp(-dt / 10.0)
        self.psi += (inst - self.psi) * a
        rq = min(self.cpus, want + self.base_other) if want <= ncores else want + self.base_other
        self.run_queue = max(1, int(round(rq + rng.gauss(0, 0.8))))
        return self.share

    def host_sample(self) -> HostSample:
        return HostSample(cpu_pct=round(self.host_cpu, 1), offcpu_switches=None,
                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2),
                          run_queue=self.run_queue, cpus=self.cpus, ctx_switches_total=self.ctxt)

    def pinned(self, label, roots, tree, threads) -> PinnedSample:
        return PinnedSample(
            label=label, root_pids=tuple(roots), tree_pids=tuple(tree),
            cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.ctx_vol, ctx_involuntary=self.ctx_invol,
            threads=tuple(ThreadSample(tid, pid, name, round(c, 2)) for tid, pid, name, c in threads),
            cores=tuple(self.cores), cpu_pressure_some_pct=round(max(0.0, self.psi), 2),
            run_queue=self.run_queue, listening_ports=(),
            cpu_quota_cores=self.quota,
            cpu_periods=self.periods if self.quota is not None else None,
            cpu_throttled_periods=self.throttled if self.quota is not None else None)
