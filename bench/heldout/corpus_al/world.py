"""The clock, the GPUs, the host and the frame assembly shared by every simulation.

A simulation runs forward in time and reports what each GPU did (``add``: seconds of
kernels, SM/tensor/DRAM activity, per process) and how many CUDA launches its threads
made; it asks ``clock`` for a GPU's clock factor and ``host.stretch`` for how much of the
CPU its threads get.  When the simulation passes the end of a tick the GPUs are advanced
one tick (power, clock, temperature).  ``frames`` turns it all into gputop Frames.
"""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

from .rnd import Rng

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .hw import SPECS, Gpu

T0_WALL = 1_790_000_000.0  # Sep 2026: the fortnight before the deadline
MONO0 = 86_400.0


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    user: str
    mem: float  # bytes on the GPU
    start: float = 0.0  # sim seconds it appears
    end: float = 1e9
    cpu_cores: float = 1.0  # cores it burns when running unhindered
    tree: bool = True  # part of the pinned (watched) tree
    slurm_job: str = ""
    rss: float = 3e9
    mem_fn: object = None  # t -> bytes, overrides mem


class Host:
    """/proc as the tree sees it: a cpuset (cores), an optional CFS quota, other tenants'
    runnable threads on the same cores, and the node's load beyond them."""

    def __init__(self, rng, cpus=64, cores=16, quota=None, demand=2.0, threads=6,
                 other=lambda t: 0.0, node_busy=lambda t: 8.0, quota_fn=None,
                 irq=lambda t: 0.0, core0=0):
        self.rng, self.cpus, self.ncores, self.quota = rng, cpus, cores, quota
        self.demand, self.threads, self.other, self.node_busy = demand, threads, other, node_busy
        self.quota_fn = quota_fn
        self.irq = irq  # fraction of the launch thread's core taken by interrupts/softirqs
        self.core0 = core0
        self.demand_fn = None

    def dem(self, t):
        return self.demand_fn(t) if self.demand_fn else self.demand

    def q(self, t):
        return self.quota_fn(t) if self.quota_fn else self.quota

    def got(self, t):
        d, o = self.dem(t), self.other(t)
        g = d if d + o <= self.ncores else self.ncores * d / (d + o)
        q = self.q(t)
        if q is not None:
            g = min(g, q)
        return max(0.05, g)

    def stretch(self, t) -> float:
        """How much longer a CPU-bound stretch of the tree's work takes now (>= 1)."""
        s = self.dem(t) / self.got(t)
        return max(1.0, s) * (1.0 + 2.0 * self.irq(t))


class World:
    def __init__(self, name: str, duration: float, tick: float, model: str, ngpu: int, *,
                 inlet=24.0, limits=None, r_scale=None, clock_caps=None, sub_hz=6.0):
        self.name = name
        self.seed = seed_of(name)
        self.rng = Rng(self.seed)
        self.T, self.tick = duration, tick
        self.n = int(math.ceil(duration / tick))
        spec = SPECS[model]
        self.spec = spec
        self.ngpu = ngpu
        self.gpus = [Gpu(spec, i, self.rng, inlet, (limits or {}).get(i), (r_scale or {}).get(i, 1.0),
                         self.seed, (clock_caps or {}).get(i, 1.0)) for i in range(ngpu)]
        z = lambda: [[0.0] * (self.n + 2) for _ in range(ngpu)]
        self.busy, self.sm, self.tensor, self.dram = z(), z(), z(), z()
        self.sub_per_tick = max(1, int(round(tick * sub_hz)))
        self.sub = [[0.0] * ((self.n + 2) * self.sub_per_tick) for _ in range(ngpu)]
        self.proc_busy: dict[int, list] = {}
        self.launch: dict[tuple[int, str], list] = {}
        self.done = 0  # ticks finalised
        self.gpu_rows: list[list] = []  # per tick: per gpu (power, f, reasons, temp snapshot sample)
        self.inlet_fn = lambda t, g: inlet
        self.brake_fn = lambda t, g: False
        self.limit_fn = lambda t, g: None
        self.host: Host | None = None
        self.procs: list[Proc] = []
        self.pcie = lambda t, g: (None, None)
        self.nvlink = lambda t, g: (None, None)
        self.samples = []  # per tick: tuple of GpuSample
        self.extra_mem = lambda t, g: 0.0
        self.share_fn = lambda t, g: 0.0

    # ------------------------------------------------------------ activity
    def add(self, g: int, t0: float, t1: float, busy=1.0, sm=0.0, tensor=0.0, dram=0.0, pid=None):
        """GPU g ran kernels from t0 to t1 for fraction ``busy`` of the time, with SM/tensor/DRAM
        activity as fractions of wall time."""
        if t1 <= t0:
            return
        tk = self.tick
        k0, k1 = int(t0 / tk), int(t1 / tk)
        pb = None
        if pid is not None:
            pb = self.proc_busy.setdefault(pid, [0.0] * (self.n + 2))
        for k in range(k0, min(k1, self.n + 1) + 1):
            a, b = max(t0, k * tk), min(t1, (k + 1) * tk)
            if b <= a:
                continue
            w = (b - a) / tk
            self.busy[g][k] += busy * w
            self.sm[g][k] += sm * w
            self.tensor[g][k] += tensor * w
            self.dram[g][k] += dram * w
            if pb is not None:
                pb[k] += busy * w
        st = tk / self.sub_per_tick
        s0, s1 = int(t0 / st), int(t1 / st)
        row = self.sub[g]
        last = len(row) - 1
        for s in range(s0, min(s1, last) + 1):
            a, b = max(t0, s * st), min(t1, (s + 1) * st)
            if b > a:
                row[s] += busy * (b - a) / st

    def launches(self, pid: int, api: str, t0: float, t1: float, count: float):
        arr = self.launch.setdefault((pid, api), [0.0] * (self.n + 2))
        tk = self.tick
        if t1 - t0 < 1e-9:
            arr[min(int(t0 / tk), self.n + 1)] += count
            return
        rate = count / (t1 - t0)
        for k in range(int(t0 / tk), min(int(t1 / tk), self.n + 1) + 1):
            a, b = max(t0, k * tk), min(t1, (k + 1) * tk)
            if b > a:
                arr[k] += rate * (b - a)

    def clock(self, g: int, t: float) -> float:
        self.advance(t)
        return self.gpus[g].f

    def advance(self, t: float):
        while self.done < self.n and (self.done + 1) * self.tick <= t:
            k = self.done
            tt = (k + 1) * self.tick
            for g, gpu in enumerate(self.gpus):
                b = min(1.0, self.busy[g][k])
                gpu.step(self.tick, b, min(1.0, self.sm[g][k]), min(1.0, self.tensor[g][k]),
                         min(1.0, self.dram[g][k]), inlet=self.inlet_fn(tt, g),
                         brake=self.brake_fn(tt, g), limit=self.limit_fn(tt, g))
            self.samples.append(tuple(self._sample(g, k) for g in range(self.ngpu)))
            self.done += 1

    def finish(self):
        self.advance(self.n * self.tick + 1e-9)

    def _sample(self, g, k):
        t = (k + 1) * self.tick
        mem = sum(p.mem_fn(t) if p.mem_fn else p.mem for p in self.procs
                  if p.gpu == g and p.start <= t < p.end) + self.extra_mem(t, g)
        sp = self.sub_per_tick
        sub = [min(1.0, x) for x in self.sub[g][k * sp:(k + 1) * sp]]
        busy = min(1.0, self.busy[g][k])
        sm = min(busy, self.sm[g][k])
        return self.gpus[g].sample(busy, sm, min(sm, self.tensor[g][k]), min(1.0, self.dram[g][k]), mem,
                                   tuple(sub), self.pcie(t, g), self.nvlink(t, g))


# ---------------------------------------------------------------- eBPF launch histograms

def launch_hist(rng, api, pid, count, base_us=4.0, p_preempt=0.0, delay_us=2000.0) -> LaunchHist:
    """One tick's host-side call durations: lognormal around base_us; a preempted call adds an
    off-CPU wait.  Sampled (up to 2,000 draws) and scaled to the tick's count."""
    count = int(count)
    if count <= 0:
        return LaunchHist(api=api, pid=pid, count=0)
    n = min(count, 500)
    scale = count / n
    hist: dict[int, float] = {}
    total_ns = 0
    mx = 0
    lb = math.log(base_us)
    for _ in range(n):
        d = rng.lognormal(lb, 0.35)
        if p_preempt > 0 and rng.random() < p_preempt:
            d += rng.exponential(delay_us)
        ns = int(d * 1000)
        total_ns += ns
        mx = max(mx, ns)
        b = bucket_index(ns)
        hist[b] = hist.get(b, 0) + 1
    buckets = {b: int(round(c * scale)) for b, c in sorted(hist.items()) if round(c * scale) > 0}
    return LaunchHist(api=api, pid=pid, count=sum(buckets.values()), sum_ns=int(total_ns * scale), max_ns=mx,
                      buckets=buckets)


# ---------------------------------------------------------------- frames

@dataclass
class EngineFeed:
    """Engine readings: (sim time taken, EngineSample) per scrape; None for a failed scrape."""
    url: str = ""
    scrapes: list = field(default_factory=list)  # (t, EngineSample | None, reason)
    absent_reason: str = "no engine found (pass --engine URL)"


def frames(w: World, *, engine: EngineFeed | None = None, pinned_label="", ebpf: str | None = "needs root (CAP_BPF, CAP_PERFMON)",
           jitter=lambda t: (0.0, 2000.0), launch_base_us=4.0, drop=(), start_wall=None,
           threads_names=("python3", "pt_autograd_0"), slurm_job="", engine_pids=None):
    """Build the frame list.  ``ebpf``: None when the launch probes run, else the reason they do not."""
    w.finish()
    rng = Rng(w.seed ^ 0x5EED)
    h = w.host
    t_wall0 = start_wall if start_wall is not None else T0_WALL + (w.seed % 500_000) * 10.0
    out = []
    tree_cpu = 0.0
    ctx_inv = 0
    ctx_vol = 0
    host_ctx = int(5e8 + (w.seed % 1000) * 1e5)
    psi = 0.5
    periods = throttled = 0
    proc_cpu = {p.pid: 0.0 for p in w.procs}
    tree_pids = tuple(sorted({p.pid for p in w.procs if p.tree}))
    main_pid = tree_pids[0] if tree_pids else 0
    busiest = 0.0
    scr_i = 0
    last_eng = None
    seq = 0
    for k in range(w.n):
        t = (k + 1) * w.tick
        dt = w.tick
        if h is not None:
            got = h.got(t)
            dem = h.dem(t)
            tree_cpu += got * dt
            busiest += min(1.0, got / max(dem, 1e-6)) * min(1.0, dem) * dt * 0.9
            short = max(0.0, 1 - got / max(dem, 1e-6))
            ctx_inv += int(rng.poisson(dt * (15 + 260 * short * h.threads + 400 * h.irq(t))))
            ctx_vol += int(rng.poisson(dt * 900))
            node_dem = h.node_busy(t) + dem + h.other(t)
            inst = min(100.0, max(0.0, (node_dem / h.cpus - 0.8) * 180)) if h.quota is None and h.quota_fn is None else \
                min(100.0, max(0.0, (node_dem / h.cpus - 0.8) * 180))
            inst = max(inst, min(100.0, 100 * h.other(t) / max(1, h.ncores) * (1 if h.other(t) + dem > h.ncores else 0.2)))
            psi += (inst - psi) * (1 - math.exp(-dt / 10.0))
            q = h.q(t)
            if q is not None:
                periods += int(round(dt * 10))
                if dem > q * 0.98:
                    throttled += int(round(dt * 10 * min(1.0, 0.6 + (dem - q) / q)))
                elif dem > q * 0.8:
                    throttled += int(rng.random() < 0.3)
            host_ctx += int(dt * (20000 + 3000 * node_dem))
            for p in w.procs:
                if p.start <= t < p.end:
                    share = got / max(dem, 1e-6) if p.tree else 1.0
                    proc_cpu[p.pid] += p.cpu_cores * min(1.0, share) * dt
        if k in drop:
            continue
        # engine reading: the newest scrape at or before t
        eng = None
        est = None
        if engine is not None:
            while scr_i < len(engine.scrapes) and engine.scrapes[scr_i][0] <= t + 1e-9:
                ts, es, reason = engine.scrapes[scr_i]
                last_eng = (ts, es, reason)
                scr_i += 1
            if last_eng is None:
                est = SourceStatus(ok=False, reason="connecting to " + engine.url)
            else:
                ts, es, reason = last_eng
                if es is None:
                    est = SourceStatus(ok=False, reason=reason)
                else:
                    eng = es
                    if h is not None:
                        import dataclasses
                        eng = dataclasses.replace(es, cpu_s=round(tree_cpu, 2), ctx_involuntary=ctx_inv,
                                                  busiest_thread_cpu_s=round(busiest, 2),
                                                  busiest_thread=f"{main_pid} python3",
                                                  cpu_quota_cores=h.q(t), cpu_periods=periods if h.q(t) else None,
                                                  cpu_throttled_periods=throttled if h.q(t) else None,
                                                  pids=engine_pids or tree_pids, time_wall_s=round(t_wall0 + ts, 4))
                    if h is None:
                        import dataclasses
                        eng = dataclasses.replace(es, time_wall_s=round(t_wall0 + ts, 4))
                    est = SourceStatus(ok=True, age_s=round(t - ts, 3), poll_s=0.004, poll_median_s=0.004)
        # processes
        procs = []
        for p in w.procs:
            if not (p.start <= t < p.end):
                continue
            pb = w.proc_busy.get(p.pid)
            smu = float(round(min(100, pb[k] * 100))) if pb is not None else 0.0
            procs.append(ProcSample(pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user,
                                    ppid=1 if not p.tree else (p.pid - 2), start_time_s=round(t_wall0 + p.start - 30, 2),
                                    mem_bytes=int(p.mem_fn(t) if p.mem_fn else p.mem), sm_util_pct=smu,
                                    cpu_s=round(proc_cpu.get(p.pid, 0.0), 2), rss_bytes=int(p.rss),
                                    cgroup=f"/system.slice/slurmstepd.scope/job_{p.slurm_job}/step_0" if p.slurm_job else "/user.slice",
                                    slurm_job=p.slurm_job, slurm_step="0" if p.slurm_job else "",
                                    mem_util_pct=float(round(min(100, w.dram[p.gpu][k] * 80 * (smu / 100 / max(w.busy[p.gpu][k], 1e-6))))) if pb is not None else 0.0))
        # launches
        launch = []
        if ebpf is None:
            pp, dly = jitter(t)
            for (pid, api), arr in sorted(w.launch.items()):
                launch.append(launch_hist(rng, api, pid, arr[k], launch_base_us, pp, dly))
        host = pinned = None
        if h is not None:
            host = HostSample(cpu_pct=round(min(100.0, 100 * (h.node_busy(t) + h.got(t) + min(h.other(t), h.ncores)) / h.cpus
                                                + rng.normal(0, 0.4)), 1),
                              cpu_pressure_some_pct=round(max(0.0, psi + rng.normal(0, 0.3)), 2),
                              run_queue=int(max(1, round(h.node_busy(t) + h.dem(t) + h.other(t) + rng.normal(0, 1)))),
                              cpus=h.cpus, ctx_switches_total=host_ctx,
                              offcpu_switches=None if ebpf else int(rng.poisson(dt * (5 + 300 * h.irq(t) + 100 * (h.stretch(t) - 1)))))
            thr = (ThreadSample(tid=main_pid, pid=main_pid, name=threads_names[0], cpu_s=round(busiest, 2)),
                   ThreadSample(tid=main_pid + 29, pid=main_pid, name=threads_names[1], cpu_s=round(tree_cpu * 0.08, 2)))
            pinned = PinnedSample(label=pinned_label[:60] + ("…" if len(pinned_label) > 60 else ""), root_pids=(main_pid,),
                                  tree_pids=tree_pids, cpu_s=round(tree_cpu, 2), ctx_voluntary=ctx_vol,
                                  ctx_involuntary=ctx_inv, threads=thr,
                                  cores=tuple(range(h.core0, h.core0 + h.ncores)),
                                  cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=host.run_queue,
                                  cpu_quota_cores=h.q(t), cpu_periods=periods if h.q(t) else None,
                                  cpu_throttled_periods=throttled if h.q(t) else None)
        src = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=0.005, poll_median_s=0.005),
               "host": SourceStatus(ok=True, age_s=0.0, poll_s=0.0008, poll_median_s=0.0008),
               "pin": SourceStatus(ok=True, age_s=0.0, poll_s=0.02, poll_median_s=0.02),
               "procfs": SourceStatus(ok=True, detail="/proc", age_s=0.0, poll_s=0.0003, poll_median_s=0.0003)}
        if engine is not None:
            src["engine"] = est
        else:
            src["engine"] = SourceStatus(ok=False, reason="no engine found (pass --engine URL)")
        src["ebpf"] = SourceStatus(ok=True, detail="uprobes on libcudart/libcuda", age_s=0.0) if ebpf is None else \
            SourceStatus(ok=False, reason=ebpf)
        wall = t_wall0 + t + float(rng.normal(0, 0.002))
        out.append(Frame(gpus=w.samples[k], processes=tuple(procs), engine=eng, launch=tuple(launch),
                         host=host, pinned=pinned, seq=seq, time_wall_s=round(wall, 4),
                         time_mono_s=round(MONO0 + (w.seed % 10000) + t, 4), sources=src))
        seq += 1
    return out, t_wall0
