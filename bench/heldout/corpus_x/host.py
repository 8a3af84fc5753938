"""The host side: CPU share, run queue, PSI avg10, cgroup CPU quota, and the eBPF launch
histograms, derived from the threads the workload wants to run and what competes with them."""

from __future__ import annotations

import math

from gputop.buckets import bucket_index
from gputop.schema import HostSample, LaunchHist


class Host:
    def __init__(self, rng, cpus: int, set_cores: int, base_busy: float):
        self.rng = rng
        self.cpus = cpus
        self.set_cores = set_cores  # the cores the job's threads may run on (cpuset)
        self.base_busy = base_busy  # cores busy with other work on the host
        self.psi = 0.3
        self.ctx = int(rng.random() * 5e8) + 10**8
        self.hogs = 0.0  # extra runnable threads on the job's cores
        self.host_hogs = 0.0  # extra busy cores elsewhere on the host
        self.quota = None  # cgroup cpu.max in cores, None: no quota
        self.periods = 0
        self.throttled = 0
        self.last_share = 1.0
        self.irq = 0.0  # fraction of the launch core taken by interrupts / a pinned agent

    def tick(self, dt: float, demand: float, launch_threads: int):
        """demand: cores the job's runnable threads want.  Returns (share each of the job's
        threads gets, HostSample)."""
        rng = self.rng
        share = 1.0
        runnable = demand + self.hogs
        if runnable > self.set_cores:
            share = self.set_cores / runnable
        throttled_frac = 0.0
        if self.quota is not None:
            self.periods += int(round(dt / 0.1))
            if demand * share > self.quota:
                qshare = self.quota / demand
                throttled_frac = min(1.0, (demand * share - self.quota) / self.quota * 2.5)
                share = min(share, qshare)
            self.throttled += int(round(dt / 0.1 * throttled_frac))
        self.last_share = share
        # PSI some: time with >= 1 runnable task waiting, weighted toward busy CPUs
        wait = max(0.0, runnable - self.set_cores) / max(runnable, 1e-9)
        busy_set = min(self.set_cores, runnable)
        other = self.base_busy + self.host_hogs
        weight = busy_set / max(1e-9, busy_set + other * 0.25)
        inst = 100 * min(1.0, wait * weight * 1.4 + 0.55 * throttled_frac) + 0.2 + 0.4 * rng.random()
        inst += 100 * self.irq * 0.3
        a = math.exp(-dt / 10.0)
        self.psi = self.psi * a + inst * (1 - a)
        busy_cores = min(self.cpus, other + min(self.set_cores, runnable) * (1 - throttled_frac * 0.6))
        running = other + min(self.set_cores, runnable) + rng.gauss(0, 1.0)
        self.ctx += int(dt * (12000 + 900 * busy_cores + 40000 * wait + 20000 * throttled_frac
                              + 30000 * self.irq))
        hs = HostSample(cpu_pct=round(100 * busy_cores / self.cpus, 1), offcpu_switches=None,
                        cpu_pressure_some_pct=round(self.psi, 2),
                        run_queue=max(1, int(round(running))), cpus=self.cpus,
                        ctx_switches_total=self.ctx)
        return share, hs


BASE_US = {"cudaGraphLaunch": 11.0, "cudaLaunchKernel": 2.6, "cuLaunchKernel": 3.1,
           "cudaMemcpyAsync": 4.5, "cuLaunchKernelEx": 3.4}


def launch_hists(rng, pid: int, calls: dict, p_pre: float, d_pre: float, share: float):
    """One tick's eBPF histograms: host-side durations of each API's calls.  Most calls take
    their base time (log-normal); a call during which the thread is descheduled takes the
    time it was off CPU on top.  Returns (hists, involuntary switches of the launch thread)."""
    out = []
    switches = 0
    for api, n in calls.items():
        n = int(n)
        if n <= 0:
            continue
        base = BASE_US[api]
        # calls interrupted: preemption events of the launch thread hit one call each
        hit = 0
        lam = p_pre * n * 0.5 + n * max(0.0, 1 - share) * 0.004
        if lam > 0:
            hit = min(n, _poisson(rng, lam))
        buckets: dict[int, int] = {}
        samples = 24
        total = 0.0
        mx = 0.0
        normal = n - hit
        for i in range(samples):
            v = base * math.exp(rng.gauss(0, 0.28)) * 1000.0
            c = normal // samples + (1 if i < normal % samples else 0)
            if c:
                idx = bucket_index(int(v))
                buckets[idx] = buckets.get(idx, 0) + c
                total += v * c
                mx = max(mx, v)
        for _ in range(hit):
            d = d_pre if p_pre > 0 else rng.uniform(0.5e-3, 3e-3)
            v = (base * 1e-6 + d * rng.uniform(0.3, 1.2)) * 1e9
            idx = bucket_index(int(v))
            buckets[idx] = buckets.get(idx, 0) + 1
            total += v
            mx = max(mx, v)
        switches += hit
        out.append(LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total), max_ns=int(mx),
                              buckets=buckets))
    return tuple(out), switches


def _poisson(rng, lam: float) -> int:
    if lam > 50:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    l, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= l:
            return k
        k += 1
