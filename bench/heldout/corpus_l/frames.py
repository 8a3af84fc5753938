"""Pieces every trace needs: engines' cumulative histograms in their real bucket layouts,
eBPF launch-latency histograms in gputop's log-linear layout, processes, host, sources."""

from __future__ import annotations

import math

from gputop.buckets import bucket_bounds_ns, bucket_index
from gputop.schema import (EngineHistogram, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

# bucket layouts as the engines write them (tests/data/metrics, vLLM 0.32 loggers.py,
# SGLang metrics_collector.py)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0,
             2500.0, 3000.0)


def tokens_buckets(max_model_len: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, ... up to the context."""
    out, mant, exp = [], (1, 2, 5), 0
    while True:
        for m in mant:
            v = m * 10**exp
            if v > max_model_len:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


def _cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf((math.log(x) - math.log(median)) / (sigma * 1.4142135623730951)))


class Hist:
    """A cumulative Prometheus histogram fed with observations described as a mixture of
    log-normals (weight, median, sigma); exact values (sigma 0) go into their bucket."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.cum = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0
        self._carry = 0.0

    def observe(self, n: float, comps, rng=None) -> None:
        """Add about ``n`` observations (integer counts kept, remainder carried)."""
        n += self._carry
        whole = int(n)
        self._carry = n - whole
        if whole <= 0:
            return
        total_w = sum(w for w, _, _ in comps) or 1.0
        fr = [0.0] * len(self.bounds)
        mean = 0.0
        for w, med, sig in comps:
            w /= total_w
            if sig <= 0:
                mean += w * med
                for i, b in enumerate(self.bounds):
                    if med <= b:
                        fr[i] += w
            else:
                mean += w * med * math.exp(sig * sig / 2)
                for i, b in enumerate(self.bounds):
                    fr[i] += w * _cdf(b, med, sig)
        for i in range(len(self.bounds)):
            self.cum[i] += round(whole * min(1.0, fr[i]))
        for i in range(1, len(self.cum)):  # rounding never breaks monotonicity
            if self.cum[i] < self.cum[i - 1]:
                self.cum[i] = self.cum[i - 1]
        self.count += whole
        if self.cum[-1] > self.count:
            self.cum[-1] = self.count
            for i in range(len(self.cum) - 2, -1, -1):
                self.cum[i] = min(self.cum[i], self.cum[i + 1])
        noise = 1 + (rng.gauss(0, 0.03) if rng else 0)
        self.sum += whole * mean * noise

    def snap(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(self.cum), self.count,
                               round(self.sum, 6))


# ----------------------------------------------------------------- eBPF

def launch_hist(api: str, pid: int, calls: float, median_ns: float, sigma: float,
                tail_frac: float = 0.0, tail_median_ns: float = 0.0, tail_sigma: float = 0.8,
                rng=None) -> LaunchHist | None:
    """Host-side durations of ``calls`` calls of one API over a tick, in the BPF layout."""
    n = int(calls)
    if n <= 0:
        return None
    comps = [(1 - tail_frac, median_ns, sigma)]
    if tail_frac > 0:
        comps.append((tail_frac, tail_median_ns, tail_sigma))
    lo = max(100.0, median_ns / 12)
    hi = max(median_ns * 12, (tail_median_ns * 20) if tail_frac else 0)
    i0, i1 = bucket_index(int(lo)), bucket_index(int(hi))
    buckets: dict[int, int] = {}
    prev = 0
    total_sum = 0.0
    top = 0
    for i in range(i0, i1 + 1):
        upper = bucket_bounds_ns(i)[1]
        frac = sum(w * _cdf(upper, m, s) for w, m, s in comps)
        c = round(n * frac)
        if i == i1:
            c = n
        k = c - prev
        if k > 0:
            buckets[i] = k
            low, high = bucket_bounds_ns(i)
            total_sum += k * (low + high) / 2
            top = high - 1
        prev = max(prev, c)
    if not buckets:
        return None
    if tail_frac > 0 and rng is not None and rng.random() < 0.5:
        top = int(top * (0.6 + 0.4 * rng.random()))
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total_sum), max_ns=int(top),
                      buckets=buckets)


# ----------------------------------------------------------------- processes, host

class Proc:
    """A process on the GPUs: cumulative CPU time and context switches advance per tick."""

    def __init__(self, pid: int, name: str, cmdline: str, start: float, user: str = "svc",
                 ppid: int = 1, container: str = "", cgroup: str = "", rss: int = 2 * 2**30):
        self.pid, self.name, self.cmdline, self.start = pid, name, cmdline, start
        self.user, self.ppid, self.container, self.cgroup, self.rss = user, ppid, container, cgroup, rss
        self.cpu_s = 3.0 + (pid % 97) * 0.37
        self.invol = 1000 + pid % 500
        self.vol = 20000 + pid % 5000

    def run(self, cpu_rate: float, dt: float, invol_rate: float = 30.0, vol_rate: float = 400.0):
        self.cpu_s += max(0.0, cpu_rate) * dt
        self.invol += int(max(0.0, invol_rate) * dt)
        self.vol += int(max(0.0, vol_rate) * dt)

    def sample(self, gpu: int, mem: int | None, sm: float | None, mem_util: float | None = None):
        return ProcSample(pid=self.pid, gpu_index=gpu, name=self.name[:15], cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start,
                          mem_bytes=mem, sm_util_pct=sm, cpu_s=round(self.cpu_s, 2),
                          rss_bytes=self.rss, container=self.container, cgroup=self.cgroup,
                          mem_util_pct=mem_util)


class Host:
    def __init__(self, cpus: int, rng, base_pct: float = 4.0):
        self.cpus, self.rng, self.base = cpus, rng, base_pct
        self.ctxt = 10**9 + rng.randrange(10**8)
        self.psi = 0.3

    def sample(self, dt: float, busy_cores: float, extra_runnable: float = 0.0,
               offcpu: int | None = None) -> HostSample:
        rng = self.rng
        pct = min(100.0, self.base + 100 * busy_cores / self.cpus + rng.gauss(0, 0.8))
        over = max(0.0, busy_cores + extra_runnable - self.cpus * 0.85) / self.cpus
        want = min(95.0, 0.3 + 150 * over + rng.gauss(0, 0.15))
        self.psi += (want - self.psi) * (1 - math.exp(-dt / 10))  # avg10
        runq = max(1, int(round(busy_cores + extra_runnable + rng.gauss(0, 1.0))))
        self.ctxt += int((20000 + 800 * busy_cores + 3000 * extra_runnable) * dt)
        return HostSample(cpu_pct=round(max(0.0, pct), 1), offcpu_switches=offcpu,
                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2), run_queue=runq,
                          cpus=self.cpus, ctx_switches_total=self.ctxt)


def pinned(label: str, pattern: str, procs: list[Proc], threads: list[tuple[int, int, str, float]],
           host: HostSample, cores: int) -> PinnedSample:
    return PinnedSample(
        label=label, pattern=pattern, root_pids=(procs[0].pid,),
        tree_pids=tuple(p.pid for p in procs), cpu_s=round(sum(p.cpu_s for p in procs), 2),
        ctx_voluntary=sum(p.vol for p in procs), ctx_involuntary=sum(p.invol for p in procs),
        threads=tuple(ThreadSample(tid=t, pid=pid, name=n, cpu_s=round(c, 2))
                      for t, pid, n, c in threads),
        cores=tuple(range(cores)), cpu_pressure_some_pct=host.cpu_pressure_some_pct,
        run_queue=host.run_queue)


def ok(poll: float = 0.01, age: float = 0.0, detail: str | None = None) -> SourceStatus:
    return SourceStatus(True, None, detail, age_s=round(age, 3), poll_s=poll, poll_median_s=poll)


def failed(reason: str) -> SourceStatus:
    return SourceStatus(False, reason)


NO_ENGINE = "no engine found (pass --engine URL)"
