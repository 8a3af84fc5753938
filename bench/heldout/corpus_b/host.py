"""The host CPU as /proc shows it: runnable threads against CPUs, a fair scheduler, PSI.

With R runnable threads on C CPUs the fair scheduler gives each ~min(1, C/R) of a core and a
thread that becomes runnable waits for others' time slices (1-3 ms each, a few in a row on an
oversubscribed host).  /proc/pressure/cpu "some" is the share of time at least one task waited
(system-wide: weighted over CPUs), reported as a 10 s average updated every 2 s.  A
one-core collision (a process pinned onto the engine's launch thread's core, or an IRQ-heavy
core) stretches that thread without the whole host looking busy.
"""

from __future__ import annotations

import math
import random

from gputop.schema import HostSample

from .util import EMA, clamp


class Host:
    def __init__(self, cpus: int, rng: random.Random, base_busy: float = 1.2):
        self.cpus = cpus
        self.rng = rng
        self.base = base_busy
        self.cpu_jobs: list[tuple] = []  # (t0, t1, ramp_s, threads): CPU-bound co-tenants
        self.collisions: list[tuple] = []  # (t0, t1, ramp_s, share, p, lo_s, hi_s)
        self.psi = EMA()
        self.workload_busy = 2.0  # runnable threads of the monitored workloads (last tick)

    def job_threads(self, t: float) -> float:
        total = 0.0
        for t0, t1, ramp, threads in self.cpu_jobs:
            if t0 <= t < t1:
                total += threads * min(1.0, (t - t0) / ramp if ramp else 1.0) * min(1.0, (t1 - t) / 8.0)
        return total

    def runnable(self, t: float) -> float:
        return self.base + self.workload_busy + self.job_threads(t)

    def env(self, t: float):
        """(cpu share, per-step preemption probability, delay lo, delay hi) for the
        engine's launch thread."""
        R = self.runnable(t)
        C = self.cpus
        share, p, lo, hi = 1.0, 0.0, 0.0, 0.0
        if R > C:
            over = R / C
            share = C / R
            p = clamp(0.6 * (R - C) / R, 0.0, 0.7)
            # a woken thread waits behind others' slices, several times per step (it wakes
            # after each GPU sync): up to a few scheduling periods of 24-30 ms
            lo, hi = 2e-3, 10e-3 + 70e-3 * (over - 1)
        for t0, t1, ramp, c_share, c_p, c_lo, c_hi in self.collisions:
            if t0 <= t < t1:
                f = min(1.0, (t - t0) / ramp) if ramp else 1.0
                share = min(share, 1 - f * (1 - c_share))
                if f * c_p > p:
                    p, lo, hi = f * c_p, c_lo, c_hi
        return share, p, lo, hi

    def sample(self, t: float, dt: float) -> HostSample:
        R = self.runnable(t) + self.rng.gauss(0, 0.15 * math.sqrt(max(1.0, self.runnable(t))))
        C = self.cpus
        if R > C:
            some = 100 * (1 - math.exp(-4 * (R - C) / C))
        else:
            some = 0.3 + 2.5 * (max(0.0, R) / C) ** 3
        for t0, t1, *_ in self.collisions:
            if t0 <= t < t1:
                some += 2.5 + 1.5 * self.rng.random()
        some = clamp(some + self.rng.gauss(0, 0.2), 0.0, 100.0)
        self.psi.add(some, dt)
        busy = clamp(R, 0.0, C)
        return HostSample(cpu_pct=round(100 * busy / C, 1), offcpu_switches=None,
                          cpu_pressure_some_pct=round(self.psi.value, 2),
                          run_queue=max(1, int(round(R))), cpus=C)
