"""What every trace shares besides the GPU: engine histograms in their real bucket layouts,
GPU processes, the host's /proc readings, the pinned tree, eBPF launch histograms and the
frame itself."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

# vLLM V1 (tests/data/vllm-cpu recordings; vllm/v1/metrics/loggers.py)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
# SGLang (tests/data/metrics/sglang-source.txt)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
            200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
             3000.0)


def one_two_five(limit: float) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, 20, 50 ... <= limit."""
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > limit:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


class Hist:
    """A cumulative Prometheus histogram as the engine keeps it."""

    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: float, rng, cv: float = 0.12) -> None:
        """n observations around value (three points of a log-normal-ish spread)."""
        if n <= 0:
            return
        a = max(1.0, round(n * 0.25))
        b = max(0.0, round(n * 0.15))
        c = max(0.0, round(n) - a - b)
        jitter = math.exp(rng.gauss(0, cv * 0.3))
        self.observe(value * 0.86 * jitter, a)
        self.observe(value * jitter, c)
        self.observe(value * (1 + 2.2 * cv) * jitter, b)

    def freeze(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cum.append(run)
        return EngineHistogram(self.name, self.bounds, tuple(cum), self.count, self.sum)


@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    start: float
    user: str = "svc"
    ppid: int = 1
    container: str = ""
    pod: str = ""
    cpu_s: float = 0.0
    rss: int = 2 << 30
    mig: int | None = None

    def sample(self, mem: int | None, sm: float | None, cpu_rate: float, dt: float,
               mem_util: float | None = None) -> ProcSample:
        self.cpu_s += max(0.0, cpu_rate) * dt
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start, mem_bytes=mem,
                          sm_util_pct=None if sm is None else float(round(max(0.0, min(100.0, sm)))),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container, pod=self.pod,
                          cgroup=f"/kubepods/{self.container}" if self.container else "",
                          mem_util_pct=mem_util, mig_index=self.mig)


class Tree:
    """A process tree's cumulative CPU (engine.cpu_s / pinned): what /proc says of it."""

    def __init__(self, busiest: str, rng):
        self.cpu_s = 1000.0 * rng.random() + 50
        self.invol = int(20000 * rng.random())
        self.vol = int(900000 * rng.random())
        self.busy_s = self.cpu_s * 0.4
        self.busiest = busiest

    def advance(self, cores: float, busiest_cores: float, invol_per_s: float, dt: float, rng):
        self.cpu_s += max(0.0, cores * (1 + rng.gauss(0, 0.02))) * dt
        self.busy_s += max(0.0, min(1.0, busiest_cores * (1 + rng.gauss(0, 0.015)))) * dt
        self.invol += int(max(0.0, invol_per_s * (1 + rng.gauss(0, 0.08))) * dt)
        self.vol += int(4000 * dt * (1 + rng.gauss(0, 0.05)))

    def pinned(self, label: str, roots, tree_pids, cores, psi, rq) -> PinnedSample:
        tid, _, name = self.busiest.partition(" ")
        return PinnedSample(label=label, pattern=None, root_pids=tuple(roots),
                            tree_pids=tuple(tree_pids), cpu_s=round(self.cpu_s, 2),
                            ctx_voluntary=self.vol, ctx_involuntary=self.invol,
                            threads=(ThreadSample(int(tid), int(roots[0]), name, round(self.busy_s, 2)),),
                            cores=tuple(range(cores)), cpu_pressure_some_pct=psi, run_queue=rq)


class Host:
    """The host's CPU as /proc shows it: use, PSI (some, avg10: a 10 s moving average), run
    queue, context switches."""

    def __init__(self, cpus: int, rng):
        self.cpus, self.rng = cpus, rng
        self.psi = 0.5
        self.ctxt = int(3e9 * rng.random()) + 10**8

    def sample(self, busy_cores: float, runnable: float, dt: float) -> HostSample:
        rng = self.rng
        pct = max(0.5, min(100.0, 100 * busy_cores / self.cpus + rng.gauss(0, 0.6)))
        over = max(0.0, runnable - self.cpus) / max(1.0, runnable)
        inst = 100 * over + 0.4 + abs(rng.gauss(0, 0.4))
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctxt += int((9000 + 600 * busy_cores + 4000 * max(0.0, runnable - self.cpus)) * dt)
        rq = max(1, int(round(min(runnable, self.cpus * 4) + rng.gauss(0, 1))))
        return HostSample(cpu_pct=round(pct, 1), cpu_pressure_some_pct=round(self.psi, 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctxt)


def launch_hist(api: str, pid: int, count: float, median_us: float, rng, sigma: float = 0.35,
                tail_frac: float = 0.0, tail_us: float = 0.0) -> LaunchHist | None:
    """One API's host-side call durations over a tick: a log-normal body plus an optional
    tail (calls whose thread was preempted or delayed inside the call)."""
    n = int(count)
    if n <= 0:
        return None
    draws = min(n, 160)
    scale = n / draws
    buckets: dict[int, int] = {}
    total = 0.0
    mx = 0.0
    for k in range(draws):
        if tail_frac and rng.random() < tail_frac:
            v = tail_us * math.exp(rng.gauss(0, 0.7))
        else:
            v = median_us * math.exp(rng.gauss(0, sigma))
        ns = int(v * 1000)
        b = bucket_index(ns)
        buckets[b] = buckets.get(b, 0) + 1
        total += ns
        mx = max(mx, ns)
    if scale != 1:
        buckets = {b: max(1, int(round(c * scale))) for b, c in buckets.items()}
    n = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total * scale), max_ns=int(mx),
                      buckets=buckets)


def sources(engine_ok: bool | None, engine_reason: str = "", ebpf: bool = False, ngpu: int = 1,
            rng=None, pin: bool = True) -> dict[str, SourceStatus]:
    r = rng.random() if rng else 0.5
    out = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.0012 + 0.0011 * ngpu + 0.001 * r, 6)),
           "host": SourceStatus(True, age_s=0.0, poll_s=round(0.0004 + 0.0003 * r, 6))}
    if engine_ok is None:
        out["engine"] = SourceStatus(False, "no engine found (pass --engine URL)")
    elif engine_ok:
        out["engine"] = SourceStatus(True, age_s=0.0, poll_s=round(0.012 + 0.02 * r, 6))
    else:
        out["engine"] = SourceStatus(False, engine_reason)
    if pin:
        out["pin"] = SourceStatus(True, age_s=0.0, poll_s=2e-05)
    if ebpf:
        out["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12, libcuda.so.1",
                                   age_s=0.0, poll_s=round(0.002 + 0.002 * r, 6))
    return out


def frame(seq: int, wall: float, mono: float, gpus, procs, engine, launch, host, pinned, src) -> Frame:
    return Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=tuple(gpus),
                 processes=tuple(procs), engine=engine, launch=tuple(x for x in launch if x),
                 host=host, pinned=pinned, sources=src)
