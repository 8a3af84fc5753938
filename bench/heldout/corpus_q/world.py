"""A box with GPUs, the jobs on them and the host around them, run slice by slice and read
out once per tick as gputop's sampler would build a Frame."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.buckets import bucket_index
from gputop.schema import (Frame, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)
from gputop.sources.engine_merge import merge_engines

from . import gpu as G
from .serve import Engine, Req

SLICES_PER_S = 6


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    k, p, lim = 0, rng.random(), math.exp(-lam)
    while p > lim:
        k += 1
        p *= rng.random()
    return k


class Traffic:
    """Arrivals into one or more engines: rate(t) requests/s, make(rng, t) -> Req kwargs."""

    def __init__(self, engines, rate, make, split=None):
        self.engines = engines
        self.rate = rate
        self.make = make
        self.split = split  # weights per engine (a router's balance)
        self.i = 0

    def advance(self, world, now, dt):
        n = poisson(world.rng, self.rate(now) * dt)
        for _ in range(n):
            kw = self.make(world.rng, now)
            if self.split:
                r, acc, j = world.rng.random() * sum(self.split), 0.0, 0
                for j, w in enumerate(self.split):
                    acc += w
                    if r <= acc:
                        break
                eng = self.engines[j]
            else:
                eng = min(self.engines, key=lambda e: len(e.running) + len(e.waiting))
            eng.arrive(Req(now + world.rng.random() * dt, **kw))


@dataclass
class Proc:
    pid: int
    gpus: tuple
    name: str
    cmdline: str
    mem: int  # per GPU
    user: str = "svc"
    ppid: int = 1
    start: float = 0.0
    cpu_rate: float = 1.0  # cores used when running
    alive_from: float = -1e12
    alive_to: float = 1e12
    sm_of: object = None  # callable(world, gpu) -> per-process sm util, or None
    container: str = ""
    pod: str = ""


class Trainer:
    """Synchronous data-parallel training on ``gpus``: per step each rank waits for its
    batch, computes forward/backward (GEMM + elementwise), meets the others in the gradient
    all-reduce (spinning in NCCL until the slowest arrives), runs the optimizer."""

    def __init__(self, gpus, rng, *, compute_s, elem_frac=0.25, comm_s=0.04, opt_s=0.03,
                 workers=8, decode_s=None, prefetch=2, tokens_per_step=0, samples_per_step=0,
                 fsdp=False, sig=G.GEMM, tiny=False):
        self.gpus = gpus
        self.rng = rng
        self.compute_s = compute_s
        self.elem_frac = elem_frac
        self.comm_s = comm_s
        self.opt_s = opt_s
        self.workers = workers
        self.decode_s = decode_s or (lambda t: compute_s * workers * 0.4)  # per batch per worker
        self.prefetch = prefetch
        self.tokens_per_step = tokens_per_step
        self.samples_per_step = samples_per_step
        self.fsdp = fsdp
        self.sig = sig
        self.tiny = tiny
        self.segs = {g.index: [] for g in gpus}
        self.t = 0.0  # where the simulated steps have reached
        self.ready = []  # batch ready times
        self.loader_t = 0.0
        self.steps = 0
        self.tokens = 0.0
        self.work = {}  # gpu index -> work factor (fn of t)
        self.pause = None  # callable(t) -> seconds of pause starting at t (checkpoint / eval)
        self.cpu_s = 0.0
        self.loader_cpu = 0.0
        self.step_log = []
        self.data_wait = 0.0
        self.launch_gap = None  # callable(rng, t) -> host seconds added per step
        self.host_slow = 1.0
        self.steps_done = 0
        self.tokens_done = 0.0
        self._ptr = 0

    def _batch_ready(self):
        t = self.t
        # the loader runs ahead, ``workers`` batches in flight, at most prefetch x workers queued
        while len(self.ready) < self.workers * self.prefetch:
            d = self.decode_s(self.loader_t) / self.workers
            self.loader_t = max(self.loader_t, t - 5.0) + d
            self.ready.append(self.loader_t)
            self.loader_cpu += d * self.workers
        return self.ready.pop(0)

    def _one_step(self):
        rng = self.rng
        start = self.t
        if self.pause:
            p = self.pause(start)
            if p:
                kind, secs = p
                for g in self.gpus:
                    if kind == "eval":
                        self.segs[g.index].append((start, start + secs, "eval"))
                    else:
                        self.segs[g.index].append((start, start + secs, None))
                self.t = start + secs
                self.loader_t = max(self.loader_t, self.t - 2)
                return
        ready = self._batch_ready()
        t0 = max(start, ready)
        self.data_wait += t0 - start
        h2d = 0.004
        t0 += h2d
        gap = self.launch_gap(rng, t0) if self.launch_gap else 0.0
        base = self.compute_s * (1 + rng.gauss(0, 0.015)) * self.host_slow + gap
        ends = {}
        for g in self.gpus:
            w = self.work.get(g.index)
            k = w(t0) if w else 1.0
            comp = base * k / (0.35 + 0.65 * g.c)
            ends[g.index] = t0 + comp
        last = max(ends.values())
        comm_exposed = self.comm_s * (1 + rng.gauss(0, 0.05)) if len(self.gpus) > 1 else 0.0
        sync = last + comm_exposed
        for g in self.gpus:
            e = ends[g.index]
            comp = e - t0
            s = self.segs[g.index]
            if self.tiny:
                s.append((t0, e, "tiny"))
            else:
                gemm_end = t0 + comp * (1 - self.elem_frac)
                if self.fsdp:
                    s.append((t0, gemm_end, "fsdp"))
                else:
                    s.append((t0, gemm_end, "gemm"))
                s.append((gemm_end, e, "elem"))
            if sync > e:
                s.append((e, sync, "nccl"))
            s.append((sync, sync + self.opt_s, "elem"))
        self.t = sync + self.opt_s + 0.002
        self.steps += 1
        self.step_log.append((start, self.t))
        self.cpu_s += (self.t - start) * 0.9

    def advance(self, world, now, dt):
        end = now + dt
        while self.t < end + 1.0:
            self._one_step()
        log = self.step_log
        while self._ptr < len(log) and log[self._ptr][1] <= end:
            self._ptr += 1
            self.steps_done += 1
            self.tokens_done += self.tokens_per_step or self.samples_per_step
        out = {}
        nvl = {}
        for g in self.gpus:
            segs = self.segs[g.index]
            pieces = []
            comm = 0.0
            while segs and segs[0][1] <= now:
                segs.pop(0)
            for a, b, kind in segs:
                if a >= end:
                    break
                ov = min(b, end) - max(a, now)
                if ov <= 0 or kind is None:
                    continue
                if kind == "gemm":
                    pieces.append((ov, self.sig))
                elif kind == "fsdp":
                    pieces.append((ov * 0.82, self.sig))
                    pieces.append((ov * 0.18, G.NCCL))
                    comm += ov * 0.18
                elif kind == "elem":
                    pieces.append((ov, G.ELEMENT))
                elif kind == "nccl":
                    pieces.append((ov, G.NCCL))
                    comm += ov
                elif kind == "eval":
                    pieces.append((ov * 0.55, G.PREFILL))
                    pieces.append((ov * 0.15, G.ELEMENT))
                elif kind == "tiny":
                    pieces.append((ov * 0.93, G.TINY))
            out[g.index] = pieces
            nvl[g.index] = comm / dt * 90000.0
        return out, nvl


class Program:
    """A plain CUDA program or notebook: busy(t) -> list of (fraction, signature)."""

    def __init__(self, gpus, mix):
        self.gpus = gpus
        self.mix = mix

    def advance(self, world, now, dt):
        out = {}
        for g in self.gpus:
            m = self.mix(world.rng, now, g.index)
            out[g.index] = [(f * dt, sig) for f, sig in m]
        return out, {}


class TrainerCounter:
    """A training job's own Prometheus counter (trainer_tokens_total / _samples_total)."""

    def __init__(self, trainer, unit="tokens", url="http://127.0.0.1:9108/metrics", pids=()):
        self.tr = trainer
        self.unit = unit
        self.url = url
        self.pids = tuple(pids)
        self.offset = 0.0
        self.step_offset = 0

    def sample(self, wall, mono):
        from gputop.schema import EngineSample
        return EngineSample(kind="trainer", url=self.url, model="",
                            generation_tokens_total=float(self.offset + self.tr.tokens_done),
                            requests_finished_total=float(self.step_offset + self.tr.steps_done),
                            work_unit=self.unit, pids=self.pids,
                            gpu_indices=tuple(g.index for g in self.tr.gpus),
                            time_mono_s=mono, time_wall_s=wall,
                            cpu_s=round(self.tr.cpu_s + self.tr.loader_cpu, 2))


class Host:
    def __init__(self, cpus, base_load=0.08):
        self.cpus = cpus
        self.base = base_load  # cores busy / cpus from other work
        self.extra = lambda t: 0.0  # cores of extra demand (noisy neighbour, compile job)
        self.psi = 0.5
        self.ctx = 812_345_678
        self.demand = 0.0

    def step(self, world, now, dt, engine_cores):
        extra = self.extra(now)
        demand = self.cpus * self.base + engine_cores + extra
        over = max(0.0, demand - self.cpus)
        stall = min(95.0, 100.0 * over / max(demand, 1.0) * 1.6 + 0.6 + world.rng.random() * 0.8)
        self.psi += (stall - self.psi) * min(1.0, dt / 10.0)  # avg10
        self.demand = demand
        self.ctx += int(dt * (9000 + 600 * demand + world.rng.random() * 2000))
        return min(1.0, self.cpus / max(demand, 1e-9))

    def sample(self, rng):
        busy = min(100.0, 100.0 * self.demand / self.cpus + rng.gauss(0, 1.0))
        rq = max(1, int(round(self.demand + rng.gauss(0, 1.0))))
        return busy, rq


class Ebpf:
    """Launch-call durations of the launching thread (uprobes) and its off-CPU time."""

    def __init__(self, pid, api="cudaGraphLaunch", base_us=9.0, per_step=1, extra_api=None):
        self.pid = pid
        self.api = api
        self.base_us = base_us
        self.per_step = per_step
        self.extra_api = extra_api  # (api, calls per step, base us)
        self.preempt = lambda t: 0.0  # probability a launch is preempted; long tail in ms
        self.preempt_ms = 6.0

    def hists(self, rng, now, steps):
        out = []
        p = self.preempt(now)
        offcpu_counts = {}
        long_n = 0
        for api, per, base in ((self.api, self.per_step, self.base_us),) + (
                (self.extra_api,) if self.extra_api else ()):
            count = int(steps * per)
            if count <= 0:
                continue
            k = min(count, 32)
            w = count / k
            buckets: dict[int, int] = {}
            total = 0.0
            mx = 0
            carry = 0.0
            for i in range(k):
                if rng.random() < p:
                    d = rng.expovariate(1 / self.preempt_ms) * 1e6 + 5e5
                    long_n += 1
                else:
                    d = base * 1000 * math.exp(rng.gauss(0, 0.35))
                    if rng.random() < 0.01:
                        d *= 6
                d = int(d)
                carry += w
                c = int(carry)
                carry -= c
                if c:
                    b = bucket_index(d)
                    buckets[b] = buckets.get(b, 0) + c
                    total += d * c
                mx = max(mx, d)
            n = sum(buckets.values())
            if n:
                out.append(LaunchHist(api=api, pid=self.pid, count=n, sum_ns=int(total),
                                      max_ns=mx, buckets=buckets))
        # off-CPU episodes of the launching threads
        n_off = int(20 + rng.random() * 30 + long_n * (count / 32 if count else 1) * 0.5)
        buckets = {}
        total = 0
        mx = 0
        for i in range(min(n_off, 24)):
            if i < long_n * 2:
                d = int(rng.expovariate(1 / self.preempt_ms) * 1e6 + 1e6)
            else:
                d = int(rng.expovariate(1 / 40.0) * 1e3 + 3e3)
            b = bucket_index(d)
            c = max(1, n_off // 24)
            buckets[b] = buckets.get(b, 0) + c
            total += d * c
            mx = max(mx, d)
        out.append(LaunchHist(api="off-cpu", pid=self.pid, count=sum(buckets.values()),
                              sum_ns=total, max_ns=mx, buckets=buckets))
        switches = int(5 + rng.random() * 10 + long_n * 8 + p * 400)
        return tuple(out), switches


class World:
    def __init__(self, rng, gpus, tick_s, duration_s, start_wall, host, scrape_s=None):
        self.rng = rng
        self.gpus = gpus
        self.tick_s = tick_s
        self.n_ticks = int(round(duration_s / tick_s))
        self.start_wall = start_wall
        self.mono0 = 4000.0 + rng.random() * 90000
        self.host = host
        self.actors = []
        self.engines = []  # Engine or TrainerCounter objects with sample()
        self.procs: list[Proc] = []
        self.hooks = []  # callable(world, now) run every slice
        self.ebpf: Ebpf | None = None
        self.scrape_s = scrape_s or tick_s
        self.engine_url_down = None  # callable(now) -> reason or None
        self.pinned = None  # (label, pids) when the user pinned a tree
        self.dp_url = None
        self.proc_cpu = {}

    def run(self):
        frames = []
        dt = 1.0 / SLICES_PER_S
        spt = int(round(self.tick_s * SLICES_PER_S))
        last_engine = None
        last_engine_t = -1e9
        for k in range(self.n_ticks):
            for j in range(spt):
                now = k * self.tick_s + j * dt
                for h in self.hooks:
                    h(self, now)
                work = {g.index: [] for g in self.gpus}
                nvl = {g.index: 0.0 for g in self.gpus}
                cores = 0.0
                for a in self.actors:
                    if isinstance(a, Traffic):
                        a.advance(self, now, dt)
                        continue
                    pieces, nv = a.advance(self, now, dt) if not isinstance(a, Engine) \
                        else a.advance(now, dt)
                    for gi, p in pieces.items():
                        work[gi].extend(p)
                    if isinstance(nv, dict):
                        for gi, v in nv.items():
                            nvl[gi] += v
                    elif nv:
                        for gi in pieces:
                            nvl[gi] += nv
                    if isinstance(a, Engine):
                        cores += 1.6 + 0.4 * a.tp if a.running else 0.15
                    elif isinstance(a, Trainer):
                        cores += a.workers * 0.9 + len(a.gpus)
                share = self.host.step(self, now, dt, cores)
                for a in self.actors:
                    if isinstance(a, Engine):
                        a.cpu_share = share
                    elif isinstance(a, Trainer):
                        a.host_slow = 1.0 + 0.6 * (1.0 / max(share, 0.1) - 1.0)
                for g in self.gpus:
                    g.step(dt, work[g.index], nvl[g.index], 300.0 + 200.0 * self.rng.random())
            t_end = (k + 1) * self.tick_s
            wall = self.start_wall + t_end
            mono = self.mono0 + t_end
            # engine reading: refreshed every scrape_s, carried (with its age) in between
            statuses = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004, poll_median_s=0.004),
                        "host": SourceStatus(True, age_s=0.0, poll_s=0.0004, poll_median_s=0.0004)}
            engine = None
            if self.engines:
                down = self.engine_url_down(t_end) if self.engine_url_down else None
                if down:
                    statuses["engine"] = SourceStatus(False, down, poll_median_s=0.003)
                    last_engine = None
                    last_engine_t = -1e9
                else:
                    if t_end - last_engine_t >= self.scrape_s - 1e-6 or last_engine is None:
                        last_engine = self._engine_sample(wall, mono)
                        last_engine_t = t_end
                    age = t_end - last_engine_t
                    statuses["engine"] = SourceStatus(True, age_s=round(age, 3), poll_s=0.012,
                                                      poll_median_s=0.011)
                    engine = last_engine
            else:
                statuses["engine"] = SourceStatus(False, "no engine found (pass --engine URL)",
                                                  poll_median_s=0.002)
            launch = ()
            off = None
            if self.ebpf is not None:
                steps = sum(getattr(a, "steps_in_tick", 0.0) for a in self.actors
                            if isinstance(a, Engine))
                tr = [a for a in self.actors if isinstance(a, Trainer)]
                if tr:
                    steps = self.tick_s / max(0.05, (tr[0].step_log[-1][1] - tr[0].step_log[-1][0])
                                               if tr[0].step_log else 1.0)
                if not tr and not any(isinstance(a, Engine) for a in self.actors):
                    steps = self.tick_s * sum(g.samples[-1] if g.samples else 0 for g in self.gpus[:1]) / 100.0 \
                        if False else self.tick_s
                launch, off = self.ebpf.hists(self.rng, t_end, steps)
                statuses["ebpf"] = SourceStatus(True, detail="full mode; uprobes on libcudart, libcuda",
                                                age_s=0.0, poll_s=0.002, poll_median_s=0.002)
            for a in self.actors:
                if isinstance(a, Engine):
                    a.steps_in_tick = 0.0
            busy, rq = self.host.sample(self.rng)
            host = HostSample(cpu_pct=round(busy, 1), offcpu_switches=off,
                              cpu_pressure_some_pct=round(self.host.psi, 2), run_queue=rq,
                              cpus=self.host.cpus, ctx_switches_total=self.host.ctx)
            gs = []
            procs = []
            for g in self.gpus:
                used = 0
                mine = [p for p in self.procs if g.index in p.gpus
                        and p.alive_from <= t_end < p.alive_to]
                g.context = bool(mine)
                for p in mine:
                    used += p.mem
                gs.append(g.sample(used + (300 << 20 if mine else 0)))
                for p in mine:
                    cpu = self.proc_cpu.get(p.pid, p.start * 0 + 3600 * p.cpu_rate * 0.5)
                    cpu += self.tick_s * p.cpu_rate * (0.9 + 0.2 * self.rng.random())
                    self.proc_cpu[p.pid] = cpu
                    smu = p.sm_of(self, gs[-1]) if p.sm_of else gs[-1].util_gpu_pct
                    procs.append(ProcSample(
                        pid=p.pid, gpu_index=g.index, name=p.name, cmdline=p.cmdline,
                        user=p.user, ppid=p.ppid, start_time_s=p.start, mem_bytes=p.mem,
                        sm_util_pct=smu, cpu_s=round(cpu, 2), rss_bytes=6 << 30,
                        container=p.container, pod=p.pod))
            pinned = None
            if self.pinned:
                label, pids = self.pinned
                cpu = sum(self.proc_cpu.get(p, 0.0) for p in pids)
                pinned = PinnedSample(label=label, root_pids=pids[:1], tree_pids=pids,
                                      cpu_s=round(cpu, 2), ctx_voluntary=int(cpu * 800),
                                      ctx_involuntary=int(self.host.ctx // 4000),
                                      threads=(ThreadSample(pids[0] + 7, pids[0], "pt_main_thread",
                                                            round(cpu * 0.6, 2)),),
                                      cores=tuple(range(self.host.cpus)),
                                      cpu_pressure_some_pct=round(self.host.psi, 2),
                                      run_queue=rq)
                statuses["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0003, poll_median_s=0.0003)
            frames.append(Frame(seq=k, time_wall_s=round(wall, 6), time_mono_s=round(mono, 6),
                                gpus=tuple(gs), processes=tuple(procs), engine=engine,
                                launch=launch, host=host, pinned=pinned, sources=statuses))
        return frames

    def _engine_sample(self, wall, mono):
        samples = [e.sample(wall, mono) for e in self.engines]
        if len(samples) == 1:
            return samples[0]
        merged = merge_engines(samples)
        if self.dp_url:
            import dataclasses
            merged = dataclasses.replace(merged, url=self.dp_url, data_parallel=len(samples))
        return merged
