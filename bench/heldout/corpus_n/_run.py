"""Put boards, workloads, the host and eBPF together and write Frames tick by tick."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (Frame, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

from ._gpu import GIB, Activity, Board

NO_ENGINE = "no engine found (pass --engine URL)"


@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    start: float
    ppid: int = 1
    user: str = "svc"
    mem: int = 0
    cpu_rate: float = 1.0  # cores
    rss: int = 4 * GIB
    cpu_s: float = 0.0
    sm_share: float | None = None  # this process's part of the GPU's busy time (NVML)
    alive: bool = True
    container: str = ""
    pod: str = ""

    def sample(self, util: float, single: bool) -> ProcSample:
        share = self.sm_share if self.sm_share is not None else 1.0
        sm = None if util is None else float(round(min(100.0, util * share)))
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name,
                          cmdline=self.cmdline, user=self.user, ppid=self.ppid,
                          start_time_s=round(self.start, 2), mem_bytes=int(self.mem),
                          sm_util_pct=sm, cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container, pod=self.pod,
                          mem_util_pct=None)


@dataclass
class Host:
    cpus: int
    base_pct: float = 6.0
    psi: float = 0.3
    runq: float = 3.0
    ctx_rate: float = 25000.0
    ctx_total: float = 8.4e9
    # a scenario's extra load: (cpu%, psi, runq) by time
    extra: object = None

    def sample(self, t: float, dt: float, rng, engine_cores: float) -> HostSample:
        pct, psi, rq = self.base_pct + 100 * engine_cores / self.cpus, self.psi, self.runq
        pct_e = psi_e = rq_e = 0.0
        if self.extra is not None:
            pct_e, psi_e, rq_e = self.extra(t)
        pct = min(100.0, pct + pct_e + rng.gauss(0, 0.8))
        psi = max(0.0, psi + psi_e + rng.gauss(0, 0.15))
        rq = max(1, int(round(rq + engine_cores + rq_e + rng.gauss(0, 1.0))))
        self.ctx_total += dt * (self.ctx_rate * (1 + 0.08 * rng.random()) + 900 * rq_e)
        return HostSample(cpu_pct=round(max(0.0, pct), 1), cpu_pressure_some_pct=round(psi, 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=int(self.ctx_total))


@dataclass
class Ebpf:
    """Launch-latency probes: per tick, a histogram of host-side call durations per API
    of the launching process; ``jitter(t)`` -> (share of calls delayed, delay median s)."""

    pid: int
    apis: tuple[tuple[str, float], ...]  # (api, calls per second)
    lib: str = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    jitter: object = None
    median_us: float = 3.2
    reason: str | None = None  # the source failing: its reason (no probes)

    def hists(self, t: float, dt: float, rng, busy: float) -> tuple[tuple[LaunchHist, ...], int]:
        share, delay = (0.0, 0.0)
        if self.jitter is not None:
            share, delay = self.jitter(t)
        out = []
        switches = int(max(0, rng.gauss(30 + 4000 * share, 5 + 400 * share)) * dt)
        for api, rate in self.apis:
            n = int(rate * dt * max(0.05, busy) * (1 + rng.gauss(0, 0.03)))
            if n <= 0:
                continue
            buckets: dict[int, int] = {}
            total_ns = 0
            max_ns = 0
            # the bulk: log-normal around the median; the delayed share: off-CPU waits
            pts = ((0.10, 0.55), (0.25, 0.8), (0.30, 1.0), (0.20, 1.3), (0.10, 1.9),
                   (0.04, 3.2), (0.01, 7.0))
            delayed = int(n * share)
            bulk = n - delayed
            for w, m in pts:
                c = int(round(bulk * w))
                if c <= 0:
                    continue
                ns = int(self.median_us * 1000 * m * (1 + rng.gauss(0, 0.05)))
                buckets[bucket_index(ns)] = buckets.get(bucket_index(ns), 0) + c
                total_ns += ns * c
                max_ns = max(max_ns, ns)
            if delayed:
                for w, m in ((0.3, 0.4), (0.4, 1.0), (0.2, 2.2), (0.1, 4.5)):
                    c = max(1, int(round(delayed * w)))
                    ns = int(delay * 1e9 * m * (1 + rng.gauss(0, 0.1)))
                    buckets[bucket_index(ns)] = buckets.get(bucket_index(ns), 0) + c
                    total_ns += ns * c
                    max_ns = max(max_ns, ns)
            count = sum(buckets.values())
            out.append(LaunchHist(api=api, pid=self.pid, count=count, sum_ns=total_ns,
                                  max_ns=max_ns, buckets=buckets))
        off = {}
        if switches:
            for ns, w in ((20_000, 0.5), (80_000, 0.3), (400_000, 0.15)):
                off[bucket_index(ns)] = max(1, int(switches * w))
            if share > 0:
                off[bucket_index(int(delay * 1e9))] = max(1, int(switches * share * 3))
            out.append(LaunchHist(api="off-cpu", pid=self.pid, count=sum(off.values()),
                                  sum_ns=int(sum(k * 1000 for k in off.values())),
                                  max_ns=int(max(delay * 1e9 * 4, 400_000)), buckets=off))
        return tuple(out), switches


@dataclass
class Trace:
    name: str
    tick_s: float
    duration_s: float
    start_wall: float
    boards: list[Board]
    host: Host
    rng: object
    workloads: list = field(default_factory=list)
    events: list = field(default_factory=list)  # (t offset s, fn(trace, t))
    ebpf: Ebpf | None = None
    engine_url: str | None = None  # where the engine source looks (None: discovery)
    pin: object = None  # fn(trace, t, dt) -> PinnedSample
    mono0: float = 5000.0

    def run(self) -> list[Frame]:
        frames = []
        n = int(round(self.duration_s / self.tick_s))
        events = sorted(self.events, key=lambda e: e[0])
        for i in range(n):
            t = self.start_wall + i * self.tick_s + self.rng.gauss(0, 0.0004)
            off = i * self.tick_s
            while events and events[0][0] <= off:
                events.pop(0)[1](self, off)
            clocks = {b.index: b.clock_factor for b in self.boards}
            acts = {b.index: [] for b in self.boards}
            mems = {b.index: 0 for b in self.boards}
            procs: list[Proc] = []
            engine = None
            engine_status = SourceStatus(False, NO_ENGINE, poll_median_s=3e-05)
            engine_cores = 0.0
            for wl in self.workloads:
                out = wl.tick(self, off, self.tick_s, clocks)
                for g, a in out.get("acts", {}).items():
                    acts[g].append(a)
                for g, m in out.get("mem", {}).items():
                    mems[g] += m
                procs.extend(out.get("procs", ()))
                engine_cores += out.get("cores", 0.0)
                if "engine" in out and (engine is None or engine_status.ok is False):
                    if out["engine"] is not None:
                        engine = out["engine"]
                        engine_status = SourceStatus(True, age_s=0.0,
                                                     poll_s=round(0.012 + 0.01 * self.rng.random(), 6),
                                                     poll_median_s=0.014)
                    elif out.get("engine_reason"):
                        engine_status = SourceStatus(False, out["engine_reason"],
                                                     poll_median_s=0.002)
            gpus = []
            utils = {}
            for b in self.boards:
                parts = acts[b.index]
                a = _combine(parts)
                s = b.sample(a, mems[b.index] + (0 if mems[b.index] == 0 else 0), self.tick_s)
                gpus.append(s)
                utils[b.index] = s.util_gpu_pct
            per_gpu = {}
            for p in procs:
                per_gpu.setdefault(p.gpu, []).append(p)
            psamples = []
            for p in procs:
                p.cpu_s += p.cpu_rate * self.tick_s * (1 + self.rng.gauss(0, 0.02))
                psamples.append(p.sample(utils.get(p.gpu), len(per_gpu[p.gpu]) == 1))
            host = self.host.sample(off, self.tick_s, self.rng, engine_cores)
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.0006 * len(gpus) + 0.002 * self.rng.random(), 6),
                                            poll_median_s=round(0.004 + 0.0006 * len(gpus), 6)),
                       "engine": engine_status,
                       "host": SourceStatus(True, age_s=0.0, poll_s=0.0005, poll_median_s=0.0005)}
            launch = ()
            if self.ebpf is not None:
                if self.ebpf.reason:
                    sources["ebpf"] = SourceStatus(False, self.ebpf.reason)
                else:
                    busy = sum(utils.values()) / max(1, len(utils)) / 100
                    launch, sw = self.ebpf.hists(off, self.tick_s, self.rng, busy)
                    host = HostSample(cpu_pct=host.cpu_pct, offcpu_switches=sw,
                                      cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                      run_queue=host.run_queue, cpus=host.cpus,
                                      ctx_switches_total=host.ctx_switches_total)
                    sources["ebpf"] = SourceStatus(
                        True, detail=f"full mode; {self.ebpf.lib}: cuLaunchKernel, cuLaunchKernelEx, "
                        "cuGraphLaunch (not exported: cuLaunchKernel_ptsz, cuLaunchKernelEx_ptsz, "
                        "cuGraphLaunch_ptsz)", age_s=0.0, poll_s=0.0011, poll_median_s=0.001)
            pinned = None
            if self.pin is not None:
                pinned = self.pin(self, off, self.tick_s, host)
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0004, poll_median_s=0.0004)
            frames.append(Frame(seq=i, time_wall_s=round(t, 6),
                                time_mono_s=round(self.mono0 + off + (t - self.start_wall - off), 6),
                                gpus=tuple(gpus), processes=tuple(psamples), engine=engine,
                                launch=launch, host=host, pinned=pinned, sources=sources))
        return frames


def _combine(parts: list[Activity]) -> Activity:
    if not parts:
        return Activity()
    if len(parts) == 1:
        return parts[0]
    out = Activity()
    idle = 1.0
    for p in parts:
        idle *= (1 - min(1.0, p.busy))
        for k in ("sm", "tensor", "dram", "occ", "copy", "nvlink_gbs", "pcie_gbs"):
            setattr(out, k, getattr(out, k) + getattr(p, k))
    out.busy = 1 - idle
    for k in ("sm", "tensor", "dram", "occ", "copy"):
        setattr(out, k, min(0.98, getattr(out, k)))
    return out


def pinned_sample(label: str, pattern: str, pids: tuple[int, ...], cpu_s: float, vol: int,
                  invol: int, threads: list[tuple[int, str, float]], cores: tuple[int, ...],
                  host: HostSample) -> PinnedSample:
    return PinnedSample(label=label, pattern=pattern, root_pids=pids[:1], tree_pids=pids,
                        cpu_s=round(cpu_s, 3), ctx_voluntary=vol, ctx_involuntary=invol,
                        threads=tuple(ThreadSample(tid=tid, pid=pids[0], name=nm,
                                                   cpu_s=round(c, 3)) for tid, nm, c in threads),
                        cores=cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                        run_queue=host.run_queue)


def smooth(t: float, a: float, b: float, t0: float, t1: float) -> float:
    """a before t0, b after t1, a cosine ramp between."""
    if t <= t0:
        return a
    if t >= t1:
        return b
    x = (t - t0) / (t1 - t0)
    return a + (b - a) * (1 - math.cos(math.pi * x)) / 2
