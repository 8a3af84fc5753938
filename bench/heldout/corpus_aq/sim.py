"""Run one scenario: the node loop at DT, frames at the tick."""
from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import (EngineSample, Frame, HostSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)
from gputop.sources.engine_metrics import config_int, recognise

from .hw import BOARDS, GiB
from .node import DT, GPU, Act, Host, launch_hist, SIG

EBPF_OFF = SourceStatus(ok=False, reason="off (not enabled: run with --ebpf as root)")


def seed_of(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")


def ramp(t, t0, t1, rise=5.0, fall=5.0):
    """0..1 envelope: up over `rise` s from t0, down over `fall` s from t1."""
    if t < t0 or t > t1 + fall:
        return 0.0
    up = min(1.0, (t - t0) / rise) if rise > 0 else 1.0
    down = min(1.0, (t1 + fall - t) / fall) if fall > 0 else (1.0 if t <= t1 else 0.0)
    return max(0.0, min(up, down))


@dataclass
class Other:
    """A GPU process outside the job's tree (another tenant)."""
    gpu: int
    t0: float
    t1: float
    demand: Callable[[float], float]    # fraction of time it keeps the GPU busy when alone
    mem: int
    name: str
    cmdline: str
    user: str = "editor"
    sig: str = "gemm"
    pid: int = 0


@dataclass
class Spec:
    name: str
    family: str
    cause: str | None
    culprit: tuple | None
    engine: str
    board: str
    ngpu: int
    tick: float
    duration: float
    window: tuple | None           # relative seconds
    note: str
    build: Callable               # (rng, spec) -> Job
    host_cpus: int = 64
    cpuset: int = 16
    quota: Callable | None = None   # t -> cores or None
    other_cpu: Callable = lambda t: 0.0          # other tenants on our cpuset (cores)
    other_host: Callable = lambda t: 4.0         # elsewhere on the host
    launch_core: Callable = lambda t: 0.0        # extra load on the launch thread's core
    power_limit: Callable = lambda t, i: None
    inlet: Callable = lambda t, i: 27.0
    r_scale: Callable = lambda t, i: 1.0
    brake: Callable = lambda t: None
    others: list = field(default_factory=list)
    ebpf: bool = False
    scrape_s: float = 5.0
    gpu_offset: int = 0


class Job:
    def __init__(self, kind, sim, gpus, procs, threads, label, url=None, engine_kind="none",
                 tp=1, sims=None, page=None, work_rate=None):
        self.kind = kind
        self.sim = sim
        self.sims = sims          # per-GPU stream workers
        self.gpus = gpus
        self.procs = procs        # [(pid, gpu, name, cmdline, mem_bytes or callable)]
        self.threads = threads    # [(tid, pid, name, weight)]
        self.label = label
        self.url = url
        self.engine_kind = engine_kind
        self.tp = tp
        self.page = page
        self.root = procs[0][0] if procs else 0
        self.extra_pids = []


def _pids(rng, n):
    base = rng.randrange(3000, 900000)
    return [base + i * rng.randrange(2, 40) for i in range(n)]


def engine_sample(pm, job, url, tw, tm, host, tree_pids, busiest, qcores):
    v = pm.values
    cache = pm.cache
    return EngineSample(
        kind=pm.kind, url=url, model=pm.model,
        generation_tokens_total=v.get("generation_tokens_total"),
        prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"),
        requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"),
        num_gpu_blocks=config_int(cache.get("num_gpu_blocks")),
        block_size=config_int(cache.get("block_size")),
        kv_pool_tokens=config_int(cache.get("kv_pool_tokens")),
        cache_dtype=cache.get("cache_dtype", ""),
        tensor_parallel=job.tp if pm.kind != "trainer" else None,
        data_parallel=1 if pm.kind != "trainer" else None,
        gpu_indices=tuple(job.gpus), pids=tuple(tree_pids),
        time_mono_s=tm, time_wall_s=tw, histograms=pm.histograms,
        preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"),
        work_unit=pm.work_unit, waiting_by_reason=dict(pm.waiting_by_reason),
        cpu_s=round(host.tree_cpu, 2), ctx_involuntary=host.invol,
        busiest_thread_cpu_s=busiest[1], busiest_thread=busiest[0],
        cpu_quota_cores=qcores, cpu_periods=host.periods if qcores else None,
        cpu_throttled_periods=host.throttled if qcores else None,
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        retracted_input_tokens_total=v.get("retracted_input_tokens_total"),
        spec_drafts_total=v.get("spec_drafts_total"),
        spec_draft_tokens_total=v.get("spec_draft_tokens_total"),
        spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"),
        decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"),
        decode_steps_total=v.get("decode_steps_total"))


def run(spec: Spec, start_wall: float):
    rng = random.Random(seed_of(spec.name))
    job = spec.build(rng, spec)
    gpus = [GPU(spec.board, i, rng) for i in range(spec.ngpu)]
    host = Host(rng, spec.host_cpus, range(spec.gpu_offset, spec.gpu_offset + spec.cpuset), None)
    others = list(spec.others)
    for o in others:
        o.pid = rng.randrange(1000, 999000)
    tree_pids = [p[0] for p in job.procs] + job.extra_pids
    tree_pids = list(dict.fromkeys(tree_pids))
    gpu_pids = {p[0] for p in job.procs if p[1] is not None}
    thread_cpu = {th[0]: 0.0 for th in job.threads}
    start_times = {p[0]: start_wall - rng.uniform(600, 40000) for p in job.procs}
    mono0 = rng.uniform(1e5, 5e6)
    n_slices = int(round(spec.duration / DT))
    per_tick = int(round(spec.tick / DT))
    frames = []
    seq = 0
    last_engine = None
    engine_age_t = None
    next_scrape = rng.uniform(0, spec.scrape_s)
    scrape_ok = True
    launches_tick = 0
    graph_tick = 0
    inv_tick0 = 0
    busy_job = [0.0] * spec.ngpu
    busy_oth = [0.0] * len(others)
    prev_demand = 1.0
    host_cpu_tick = []
    lshare_tick = 0.0
    for k in range(n_slices):
        t = k * DT
        for i, g in enumerate(gpus):
            pl = spec.power_limit(t, i)
            g.power_limit = pl if pl is not None else g.b.tdp
            g.inlet = spec.inlet(t, i)
            g.r_scale = spec.r_scale(t, i)
            g.brake_w = spec.brake(t)
        q = spec.quota(t) if spec.quota else None
        host.quota = q
        # host first (one slice of lag in the demand)
        host.update(prev_demand, max(1, len(job.threads) // 2), spec.other_cpu(t), spec.other_host(t),
                    spec.launch_core(t))
        share = host.share
        lshare = min(host.launch_share, share)
        lshare_tick += lshare
        acts = [Act() for _ in gpus]
        oacts = [Act() for _ in gpus]
        avails = [1.0] * len(gpus)
        for j, o in enumerate(others):
            if o.t0 <= t < o.t1:
                d = max(0.0, min(1.0, o.demand(t)))
                s = SIG[o.sig]
                oacts[o.gpu].add(DT, d * s[0], d * s[1], d * s[2], d * s[3], d * s[4])
                avails[o.gpu] = min(avails[o.gpu], 1.0 / (1.0 + d))
                busy_oth[j] += d
        clocks = [g.clock_factor() for g in gpus]
        if job.kind == "stream":
            demand = 0.2
            launches = 0
            for gi, s in zip(job.gpus, job.sims):
                s.step(t, DT, [clocks[gi]], [avails[gi]], share, lshare, [acts[gi]])
                demand += s.cpu_demand
                launches += s.launches
        else:
            sub = [acts[i] for i in job.gpus]
            job.sim.step(t, DT, [clocks[i] for i in job.gpus], [avails[i] for i in job.gpus], share,
                         lshare, sub)
            demand = job.sim.cpu_demand
            launches = job.sim.launches
            graph_tick += getattr(job.sim, "graph_launches", 0)
        prev_demand = demand
        launches_tick += launches
        for i, g in enumerate(gpus):
            # the other tenant only gets the time the job leaves (time-slicing)
            if oacts[i].busy:
                f = 1.0 - 0.5 * acts[i].busy / DT
                for a in ("busy", "sm", "occ", "tensor", "dram"):
                    setattr(oacts[i], a, getattr(oacts[i], a) * f)
            g.update(acts[i], oacts[i], any(p[1] == i for p in job.procs) or
                     any(o.gpu == i and o.t0 <= t < o.t1 for o in others))
            busy_job[i] += acts[i].busy / DT
        if (k + 1) % per_tick:
            continue
        # ---------------------------------------------------------------- a tick
        tw = start_wall + (k + 1) * DT + rng.uniform(0.0005, 0.004)
        tm = mono0 + (k + 1) * DT + rng.uniform(0.0005, 0.004)
        tsec = (k + 1) * DT
        cpu_pct = host.sample()
        # thread cpu: the launcher takes what it is given, the rest by weight
        tot_cpu = host.tree_cpu
        wsum = sum(th[3] for th in job.threads) or 1.0
        for th in job.threads:
            thread_cpu[th[0]] = tot_cpu * th[3] / wsum
        threads = tuple(sorted((ThreadSample(tid=th[0], pid=th[1], name=th[2],
                                             cpu_s=round(thread_cpu[th[0]], 2)) for th in job.threads),
                               key=lambda x: (-x.cpu_s, x.tid))[:12])
        busiest = (f"{threads[0].tid} {threads[0].name}", threads[0].cpu_s) if threads else ("", None)
        qcores = q
        sources = {"nvml": SourceStatus(ok=True), "host": SourceStatus(ok=True),
                   "pin": SourceStatus(ok=True), "procfs": SourceStatus(ok=True, detail="/proc")}
        # engine scrape
        if job.url:
            if tsec >= next_scrape:
                next_scrape += spec.scrape_s
                if rng.random() < 0.025 and last_engine is not None:
                    scrape_ok = False
                else:
                    scrape_ok = True
                    text = job.page()
                    pm = recognise(text, job.url)
                    last_engine = engine_sample(pm, job, job.url, tw - rng.uniform(0.002, 0.03),
                                                tm - 0.01, host, tree_pids, busiest, qcores)
                    engine_age_t = tsec
            if last_engine is not None:
                age = round(tsec - engine_age_t + 0.01, 3)
                sources["engine"] = (SourceStatus(ok=True, age_s=age, poll_s=round(rng.uniform(0.002, 0.02), 4))
                                     if scrape_ok else
                                     SourceStatus(ok=False, reason="timed out after 2.0 s", age_s=age))
        # launches (eBPF)
        launch = ()
        hs_off = None
        if spec.ebpf:
            lp = job.threads[0][1] if job.threads else job.root
            hs = [launch_hist(rng, "cudaLaunchKernel", lp, launches_tick, lshare_tick / per_tick, spec.tick)]
            if graph_tick:
                hs.append(launch_hist(rng, "cudaGraphLaunch", lp, graph_tick, lshare_tick / per_tick, spec.tick, mean_us=9.0))
            launch = tuple(hs)
            sources["ebpf"] = SourceStatus(ok=True, detail="uprobes on libcudart.so.12 (cudaLaunchKernel, "
                                           "cudaGraphLaunch) of pid %d" % lp)
            hs_off = max(0, host.invol - inv_tick0)
        else:
            sources["ebpf"] = EBPF_OFF
        inv_tick0 = host.invol
        launches_tick = 0
        graph_tick = 0
        lshare_tick = 0.0
        # gpus and processes
        gs = []
        procs = []
        for i, g in enumerate(gpus):
            mem = 0
            present = False
            for pid, gi, name, cmd, mb in job.procs:
                if gi != i:
                    continue
                m = mb(tsec) if callable(mb) else mb
                if m is None:
                    continue
                present = True
                mem += m
                procs.append(ProcSample(pid=pid, gpu_index=i, name=name, cmdline=cmd, user="svc",
                                        ppid=job.root if pid != job.root else 1,
                                        start_time_s=round(start_times[pid], 2), mem_bytes=int(m),
                                        sm_util_pct=float(round(100 * busy_job[i] / per_tick)),
                                        cpu_s=round(host.tree_cpu * 0.8, 2),
                                        container="", pod="", cgroup="/kubepods/job"))
            for j, o in enumerate(others):
                if o.gpu == i and o.t0 <= tsec - spec.tick * 0.5 < o.t1:
                    present = True
                    mem += o.mem
                    procs.append(ProcSample(pid=o.pid, gpu_index=i, name=o.name, cmdline=o.cmdline,
                                            user=o.user, ppid=1, start_time_s=round(start_wall + o.t0, 2),
                                            mem_bytes=o.mem,
                                            sm_util_pct=float(round(100 * busy_oth[j] / per_tick)),
                                            cgroup="/user.slice"))
            gs.append(g.sample(rng, not frames, mem + (int(0.5 * GiB) if present else 0), present,
                               30 + 10 * (i % 2)))
        busy_job = [0.0] * spec.ngpu
        busy_oth = [0.0] * len(others)
        hsample = HostSample(cpu_pct=round(cpu_pct, 1), offcpu_switches=hs_off,
                             cpu_pressure_some_pct=round(host.psi, 2), run_queue=int(round(host.rq)),
                             cpus=spec.host_cpus, ctx_switches_total=host.ctx_total)
        pinned = PinnedSample(label=job.label, root_pids=(job.root,), tree_pids=tuple(tree_pids),
                              cpu_s=round(host.tree_cpu, 2), ctx_voluntary=host.vol,
                              ctx_involuntary=host.invol, threads=threads,
                              cores=tuple(range(spec.gpu_offset, spec.gpu_offset + spec.cpuset)),
                              cpu_pressure_some_pct=round(host.psi, 2), run_queue=int(round(host.rq)),
                              cpu_quota_cores=qcores, cpu_periods=host.periods if qcores else None,
                              cpu_throttled_periods=host.throttled if qcores else None)
        if frames and rng.random() < 0.004:
            seq += 1
            continue  # a dropped tick
        frames.append(Frame(seq=seq, time_wall_s=round(tw, 6), time_mono_s=round(tm, 6),
                            gpus=tuple(gs), processes=tuple(procs), engine=last_engine,
                            launch=launch, host=hsample, pinned=pinned, sources=sources))
        seq += 1
    return frames
