"""The host as /proc shows it: the job's process tree on its cpuset against other tenants.

Each slot the workloads say how many cores each of their threads wants (0..1); the other
tenants on the same cpuset (a shader-compile burst, simulator workers, a log shipper) and
elsewhere on the host come from the scenario.  CFS gives each runnable thread an equal
share of the cpuset's cores; a cgroup CPU quota (cpu.max, 100 ms periods) caps the tree.
What the threads got is their CPU time; what they lost shows as PSI "some", a longer run
queue, involuntary context switches and throttled quota periods.
"""
from __future__ import annotations

import math


class Thread:
    __slots__ = ("tid", "pid", "name", "cpu_s", "want", "launch")

    def __init__(self, tid, pid, name, launch=False):
        self.tid, self.pid, self.name = tid, pid, name
        self.cpu_s = 0.0
        self.want = 0.0
        self.launch = launch


class Host:
    def __init__(self, rng, name: str, cpus: int, cpuset: tuple[int, ...],
                 quota: float | None = None, slot_s: float = 0.2):
        self.rng = rng
        self.name = name
        self.cpus = cpus
        self.cpuset = cpuset
        self.quota = quota
        self.slot_s = slot_s
        self.threads: list[Thread] = []
        self.other_on_set = lambda t: 0.3     # runnable threads of other tenants on the set
        self.other_elsewhere = lambda t: 1.0  # on the rest of the host
        self.quota_fn = None                  # t -> cores (a limit changed at run time)
        self.share = 1.0          # what a job thread gets of what it wants (last slot)
        self.launch_share = 1.0
        self.psi = 0.4
        self.psi_inst = 0.0
        self.ctx_vol = 1000
        self.ctx_invol = 50
        self.ctx_host = 83_000_000 + rng.randrange(10_000_000)
        self.periods = 0
        self.throttled = 0
        self._pfrac = 0.0
        self._tfrac = 0.0
        self.tick_cpu = 0.0
        self.tick_time = 0.0
        self.tick_runq = []
        self.tick_invol = 0.0
        self.tick_offcpu = 0.0
        self.noise = 0.0

    def thread(self, tid, pid, name, launch=False) -> Thread:
        th = Thread(tid, pid, name, launch)
        self.threads.append(th)
        return th

    def step(self, t: float) -> None:
        s = self.slot_s
        n_job = sum(th.want for th in self.threads)
        other = max(0.0, self.other_on_set(t))
        n_set = len(self.cpuset)
        total = n_job + other
        factor = 1.0 if total <= n_set else n_set / total
        quota = self.quota_fn(t) if self.quota_fn else self.quota
        throttled_frac = 0.0
        qfactor = 1.0
        if quota:
            got = n_job * factor
            # demand is bursty within a period: some periods hit the quota before the mean does
            throttled_frac = min(1.0, max(0.0, (got - 0.75 * quota) / (0.5 * quota)))
            if got > quota:
                qfactor = quota / got
        f = factor * qfactor
        self.share = f
        used = 0.0
        for th in self.threads:
            g = th.want * f * s
            th.cpu_s += g
            used += g
        self.noise = 0.85 * self.noise + 0.15 * self.rng.gauss(0, 1)
        excess = max(0.0, total / n_set - 1.0)
        inst = min(1.0, 0.95 * (1 - math.exp(-1.6 * excess)) + 0.35 * throttled_frac * (n_job > 0))
        inst = max(0.0, inst + 0.004 * abs(self.noise) + 0.002)
        self.psi_inst = inst
        a = math.exp(-s / 10.0)
        self.psi = a * self.psi + (1 - a) * 100.0 * inst
        self.periods_f = getattr(self, "periods_f", 0.0) + s / 0.1
        self._tfrac += (s / 0.1) * throttled_frac
        if quota:
            self.periods = int(self.periods_f)
            self.throttled = int(self._tfrac)
        n_threads = sum(1 for th in self.threads if th.want > 0.05)
        invol = (6 + 3 * n_threads) * s * (1 + 0.3 * abs(self.noise))
        invol += (1 - factor) * n_job * 900 * s + throttled_frac * 120 * s * max(1, n_threads)
        self.tick_invol += invol
        launch_wait = sum(th.want for th in self.threads if th.launch) * (1 - factor)
        self.tick_offcpu += launch_wait * 800 * s + 2 * s
        self.ctx_vol += int((200 + 300 * n_job) * s)
        elsewhere = max(0.0, self.other_elsewhere(t))
        host_used = used / s + min(other, max(0.0, n_set - n_job * f)) + min(elsewhere, self.cpus - n_set)
        self.tick_cpu += host_used * s
        self.tick_time += s
        rq = min(self.cpus * 2.0, n_job + other + elsewhere) + 1 + self.rng.random() * 1.5
        self.tick_runq.append(rq)
        self.ctx_host += int((8000 + 2500 * (n_job + other + elsewhere)) * s)

    def take_tick(self) -> dict:
        tt = max(self.tick_time, 1e-9)
        out = {"cpu_pct": 100.0 * self.tick_cpu / tt / self.cpus,
               "runq": int(round(max(self.tick_runq) if self.tick_runq else 1)),
               "psi": self.psi, "invol": self.tick_invol, "offcpu": self.tick_offcpu}
        self.ctx_invol += int(round(self.tick_invol))
        self.tick_cpu = self.tick_time = 0.0
        self.tick_runq = []
        self.tick_invol = 0.0
        self.tick_offcpu = 0.0
        return out
