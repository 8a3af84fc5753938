"""The host around the GPUs: CPU load and pressure (PSI some avg10, the run queue), the
engine's process tree losing CPU to others, and the eBPF launch probes' histograms."""

from __future__ import annotations

import math

from gputop.buckets import bucket_index, bucket_mid_ns
from gputop.schema import HostSample, LaunchHist, PinnedSample, ThreadSample


class Host:
    def __init__(self, rng, cpus=224, base_load=10.0):
        self.rng, self.cpus = rng, cpus
        self.base_load = base_load  # runnable threads of everything else, in cores
        self.extra_load = 0.0  # a contender (scenarios ramp it)
        self.tree_demand = 2.5  # what the watched tree wants, in cores
        self.psi = 0.3
        self.ctxt = int(rng.uniform(4e9, 9e9))
        self.share = 1.0

    def step(self, dt: float) -> None:
        load = self.base_load + self.extra_load + self.tree_demand
        over = load / self.cpus
        inst = 96.0 * max(0.0, min(1.0, (over - 0.82) / 0.55))
        inst = min(100.0, inst + 0.3 + 1.5 * self.rng.random())
        a = 1 - math.exp(-dt / 10.0)
        self.psi += (inst - self.psi) * a
        # the tree's share of what it asks for (CFS fair share once the cores are full)
        self.share = 1.0 if over <= 0.92 else max(0.15, 0.92 / over)

    def sample(self, tick_s: float) -> HostSample:
        load = self.base_load + self.extra_load + self.tree_demand
        cpu = min(100.0, 100.0 * load / self.cpus + self.rng.gauss(0, 0.6))
        self.ctxt += int(tick_s * (20000 + 900 * load * (1 + 2 * max(0.0, load / self.cpus - 0.9))))
        rq = max(1, int(round(min(load, self.cpus * 3) * (0.55 + 0.45 * min(1.0, load / self.cpus))
                              + self.rng.gauss(0, 1.5))))
        return HostSample(cpu_pct=round(max(0.0, cpu), 1), cpu_pressure_some_pct=round(self.psi, 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctxt)


class TreeCpu:
    """Cumulative CPU of a process tree and of its busiest (launching) thread."""

    def __init__(self, rng, pids, threads):
        self.rng = rng
        self.pids = pids
        self.threads = [[tid, pid, name, 0.0, want] for tid, pid, name, want in threads]
        self.cpu_s = 0.0
        self.vol = 0
        self.invol = 0
        self.start = rng.uniform(300, 3000)

    def step(self, dt: float, share: float, invol_rate: float, vol_rate: float = 900.0) -> None:
        got = 0.0
        for th in self.threads:
            use = th[4] * share * (1 + self.rng.gauss(0, 0.02)) * dt
            th[3] += max(0.0, use)
            got += max(0.0, use)
        self.cpu_s += got + 0.05 * dt
        self.invol += int(invol_rate * dt + self.rng.random())
        self.vol += int(vol_rate * dt * (0.5 + 0.5 * share))

    def busiest(self):
        th = max(self.threads, key=lambda x: x[3])
        return th

    def pinned(self, host: Host, label: str, pattern: str) -> PinnedSample:
        top = sorted(self.threads, key=lambda x: -x[3])[:8]
        return PinnedSample(label=label, pattern=pattern, root_pids=(self.pids[0],),
                            tree_pids=tuple(self.pids), cpu_s=round(self.start + self.cpu_s, 2),
                            ctx_voluntary=self.vol, ctx_involuntary=self.invol,
                            threads=tuple(ThreadSample(tid=t[0], pid=t[1], name=t[2],
                                                       cpu_s=round(self.start * 0.3 + t[3], 2))
                                          for t in top),
                            cores=tuple(range(host.cpus)),
                            cpu_pressure_some_pct=round(host.psi, 2),
                            run_queue=host.sample(0.0).run_queue)


def launch_hist(rng, api: str, pid: int, calls: float, base_ns: float, spread: float = 0.35,
                tail_p: float = 0.0, tail_ns: tuple[float, float] = (0, 0)) -> LaunchHist | None:
    """Host-side durations of ``calls`` calls: log-normal around ``base_ns``; a share
    ``tail_p`` of them preempted mid-call for a log-uniform time in ``tail_ns``."""
    n = int(calls + rng.random())
    if n <= 0:
        return None
    m = min(n, 40)
    w, rem = divmod(n, m)
    buckets: dict[int, int] = {}
    total = 0.0
    top = 0.0
    tails = int(n * tail_p + rng.random()) if tail_p else 0
    for i in range(m):
        v = base_ns * math.exp(rng.gauss(0, spread))
        c = w + (1 if i < rem else 0)
        b = bucket_index(int(v))
        buckets[b] = buckets.get(b, 0) + c
        total += v * c
        top = max(top, v)
    for _ in range(min(tails, n)):
        v = math.exp(rng.uniform(math.log(tail_ns[0]), math.log(tail_ns[1])))
        b = bucket_index(int(v))
        buckets[b] = buckets.get(b, 0) + 1
        # the call it replaced
        total += v
        top = max(top, v)
    count = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=count, sum_ns=int(total), max_ns=int(top),
                      buckets=buckets)


def offcpu_hist(rng, pid: int, short: float, long: float, long_ns=(1e6, 2e7)) -> LaunchHist | None:
    """Off-CPU periods of the launching threads: short voluntary sleeps and, when the thread is
    preempted, long waits on the run queue."""
    buckets: dict[int, int] = {}
    n_s = int(short + rng.random())
    n_l = int(long + rng.random())
    for count, lo, hi in ((n_s, 3e3, 4e5), (n_l, long_ns[0], long_ns[1])):
        if not count:
            continue
        m = min(count, 24)
        w, rem = divmod(count, m)
        for i in range(m):
            v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            b = bucket_index(int(v))
            buckets[b] = buckets.get(b, 0) + w + (1 if i < rem else 0)
    if not buckets:
        return None
    return LaunchHist(api="off-cpu", pid=pid, count=sum(buckets.values()),
                      sum_ns=int(sum(bucket_mid_ns(b) * n for b, n in buckets.items())),
                      max_ns=int(max(bucket_mid_ns(b) for b in buckets)), buckets=buckets)
