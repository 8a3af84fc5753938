"""Assemble frames: boards, jobs (engines, trainers, programs), processes, host, pin, eBPF.

Each tick: the jobs' step models see the clocks the boards allowed last tick, return what
ran on each GPU; the boards turn that into NVML/GPM readings; processes, the host's /proc
view, the engine's scrape and (where the user runs with eBPF) launch-latency histograms are
filled from the same step model.  Signals a user would not have stay None with the reason
gputop itself writes."""

from __future__ import annotations

import dataclasses
import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (Frame, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .hw import SPECS, Act, Board

ENGINE_NONE = "no engine found (pass --engine URL)"
REFUSED = "engine unreachable: <urlopen error [Errno 111] Connection refused> (retry in {s}s)"
EBPF_ROOT = "eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo"


def seeded(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


@dataclass
class Proc:
    pid: int
    gpu: int | None  # None: a host-only process of the job (API server, loader worker)
    name: str
    cmdline: str
    ppid: int = 1
    user: str = "svc"
    mem: int = 0  # GPU memory; 0 with gpu set: taken from the job's activity
    container: str = ""
    pod: str = ""
    cpu_share: float = 0.0  # of the job's CPU
    started: float = 0.0
    cpu_s: float = 0.0
    rss: int = 2 * 2**30


@dataclass
class Job:
    sim: object
    procs: list[Proc]
    mods: object = None  # t -> dict
    alive: object = None  # t -> bool
    engine: bool = False
    cpu_s: float = 0.0
    busiest_s: float = 0.0
    invol: float = 0.0
    vol: float = 0.0
    busiest: str = ""
    threads: list = field(default_factory=list)  # (tid, pid, name, share of the job's CPU)
    last_rate: float = 0.0
    was_alive: bool = True
    launch_pid: int = 0
    launch_apis: tuple = ()
    pattern: str | None = None
    scrape: bool = False  # a trainer exporting trainer_tokens_total, read with --engine
    gpu_index: dict = field(default_factory=dict)  # sim's rank -> GPU index


def lognormal_hist(rng, count: int, median_ns: float, sigma: float,
                   tail_frac: float = 0.0, tail_ns: float = 0.0) -> tuple[dict, int, int]:
    """Buckets, sum and max of ``count`` call durations (sampled, scaled to the count)."""
    if count <= 0:
        return {}, 0, 0
    draws = min(count, 120)
    scale = count / draws
    buckets: dict[int, float] = {}
    total = 0.0
    top = 0
    for _ in range(draws):
        v = median_ns * math.exp(rng.gauss(0, sigma))
        if tail_frac and rng.random() < tail_frac:
            v += rng.expovariate(1 / tail_ns)
        v = int(max(200, v))
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0.0) + scale
        total += v * scale
        top = max(top, v)
    out = {b: max(1, int(round(n))) for b, n in buckets.items()}
    return out, int(total), top


class Trace:
    def __init__(self, name: str, gpu: str, n_gpus: int, tick: float, dur: float,
                 cpus: int = 64, ebpf: str = "off", pin: Job | None = None,
                 power_limit: float | None = None, inlet: float = 28.0):
        self.name, self.rng = name, seeded(name)
        self.spec = SPECS[gpu]
        self.n, self.tick, self.dur, self.cpus = n_gpus, tick, dur, cpus
        crc = zlib.crc32(name.encode())
        self.t0 = 1795000000.0 + (crc % 9000000)
        self.m0 = 20000.0 + (crc % 400000) / 10
        self.boards = [Board(self.spec, i, self.rng,
                             f"GPU-{(crc + 7919 * i) % 16**8:08x}-{i:04x}-4{crc % 999:03d}-a1c3-"
                             f"{(crc * (i + 3)) % 16**12:012x}",
                             f"00000000:{0x18 + 0x11 * i:02X}:00.0", power_limit, inlet)
                       for i in range(n_gpus)]
        self.jobs: list[Job] = []
        self.ebpf = ebpf  # "off" | "on" | "denied"
        self.pin = pin
        self.board_mods = lambda t: {}
        self.host_mods = lambda t: {}
        self.engine_down = lambda t: None  # t -> reason or None
        self.other_cpu = 2.0  # cores used by everything else on the host
        self.other_threads = 3.0
        self.ctx_total = 10_000_000 + crc % 90_000_000
        self.psi = 0.3
        self.last_engine = None
        self.inspect: list[dict] = []

    def add(self, job: Job) -> Job:
        self.jobs.append(job)
        return job

    # ------------------------------------------------------------------
    def frames(self) -> list[Frame]:
        out = []
        rng = self.rng
        dt = self.tick
        n_ticks = int(self.dur / dt)
        n_samples = max(1, int(round(self.spec.samples_per_s * dt)) - 1)
        for seq in range(n_ticks):
            t = seq * dt
            wall = self.t0 + t + rng.uniform(0, 0.002)
            mono = self.m0 + t
            bm = self.board_mods(t)
            clks = [b.clock_factor() for b in self.boards]
            per_gpu: dict[int, list[Act]] = {i: [] for i in range(self.n)}
            hm = self.host_mods(t)
            other_threads = self.other_threads + hm.get("threads", 0.0)
            other_cpu = self.other_cpu + hm.get("cores", 0.0)
            # CFS: a runnable thread gets cpus / runnable of a core when oversubscribed
            job_threads = sum(0.5 + j.last_rate for j in self.jobs if self._alive(j, t))
            runnable = other_threads + job_threads
            share = min(1.0, self.cpus / max(runnable, 1.0)) if runnable > self.cpus else 1.0
            share *= hm.get("share", 1.0)
            job_cpu = 0.0
            eng_job = None
            engine_sample = None
            for job in self.jobs:
                alive = self._alive(job, t)
                if alive and not job.was_alive:
                    self._revive(job, t)
                job.was_alive = alive
                if not alive:
                    job.last_rate = 0.0
                    continue
                m = dict(job.mods(t)) if job.mods else {}
                m["host"] = m.get("host", 1.0) * share
                sim = job.sim
                gpus = getattr(sim, "gpus", ())
                jclk = [clks[g] for g in gpus]
                if job.engine:
                    acts, cpu = sim.step(t, dt, jclk, m)
                    for i, g in enumerate(gpus):
                        acts[i].busy = self._engine_samples(sim, g, i, n_samples)
                    rate = cpu["tree"]
                    busiest_rate = cpu["busy_thread"]
                else:
                    acts, cpu = sim.step(t, dt, jclk, m, n_samples)
                    rate = cpu.get("main", 1.0) * len(gpus) + cpu.get("loader", 0.0)
                    busiest_rate = cpu.get("main", 1.0)
                for i, g in enumerate(gpus):
                    per_gpu[g].append(acts[i])
                job._acts = {g: acts[i] for i, g in enumerate(gpus)}
                job.cpu_s += rate * dt * (1 + rng.gauss(0, 0.02))
                job.busiest_s += busiest_rate * dt * (1 + rng.gauss(0, 0.01))
                job.vol += (400 + 2000 * min(1.0, rate)) * dt
                lost = 1 - share * m.get("share_self", 1.0)
                job.invol += (15 + 25 * rate + 400 * lost * max(rate, 0.5)) * dt * (1 + rng.gauss(0, .1))
                job.last_rate = rate
                job_cpu += rate
                if job.engine or job.scrape:
                    eng_job = job
            # boards
            gpus = []
            for i, b in enumerate(self.boards):
                acts = per_gpu[i]
                act = self._merge(acts)
                mods = bm.get(i, {})
                if "limit" in mods:
                    b.limit = mods["limit"]
                gpus.append(b.update(act, dt, cool=mods.get("cool", 1.0),
                                     force_clock=mods.get("clock"),
                                     force_reason=mods.get("reason", ())))
            # processes
            procs = []
            for job in self.jobs:
                alive = self._alive(job, t)
                for p in job.procs:
                    if not alive or p.gpu is None:
                        p.cpu_s += 0 if not alive else job.last_rate * p.cpu_share * dt
                        continue
                    p.cpu_s += job.last_rate * p.cpu_share * dt
                    own = self._own(job, p.gpu)
                    mem = p.mem or own.mem_used
                    smu = None
                    if own is not None:
                        smu = float(round(100 * own.own * (sum(own.busy) / len(own.busy)
                                                           if own.busy else 0)))
                    procs.append(ProcSample(
                        pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user,
                        ppid=p.ppid, start_time_s=round(self.t0 + p.started - 400.0, 2),
                        mem_bytes=int(mem), sm_util_pct=smu, cpu_s=round(p.cpu_s, 2),
                        rss_bytes=p.rss, container=p.container, pod=p.pod,
                        cgroup=f"/kubepods/burstable/pod{p.pod.split('/')[-1]}" if p.pod else
                        (f"/system.slice/docker-{p.container[7:]}.scope" if p.container else "")))
            gpu_samples = []
            for g in gpus:
                used = sum(p.mem_bytes or 0 for p in procs if p.gpu_index == g.index)
                used += 9_240_576 if used else 0
                gpu_samples.append(dataclasses.replace(g, mem_used_bytes=used))
            # host
            busy_cores = min(self.cpus, other_cpu + job_cpu)
            cpu_pct = round(100 * busy_cores / self.cpus * (1 + rng.gauss(0, 0.02)), 1)
            rq = int(round(runnable + rng.gauss(0, 1)))
            want_psi = 100 * max(0.0, 1 - self.cpus / max(runnable, 1)) * 1.15
            want_psi += abs(rng.gauss(0.4, 0.3))
            self.psi += (min(100, want_psi) - self.psi) * (1 - math.exp(-dt / 10))
            self.ctx_total += int((3000 * self.cpus / 16 + 2000 * max(0, runnable - self.cpus)) * dt)
            host = HostSample(cpu_pct=max(0.0, min(100.0, cpu_pct)), offcpu_switches=None,
                              cpu_pressure_some_pct=round(self.psi, 2), run_queue=max(1, rq),
                              cpus=self.cpus, ctx_switches_total=self.ctx_total)
            # engine scrape
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 * self.n + rng.uniform(0, .003), 6),
                                            poll_median_s=round(0.004 * self.n + 0.0015, 6))}
            if eng_job is not None or any(j.engine or j.scrape for j in self.jobs):
                ej = eng_job or next(j for j in self.jobs if j.engine or j.scrape)
                down = self.engine_down(t)
                if eng_job is None or down:
                    sources["engine"] = SourceStatus(False, down or REFUSED.format(s=4))
                    self.last_engine = None
                else:
                    slow = share < 0.6 and rng.random() < 0.08
                    if slow and self.last_engine is not None:
                        engine_sample = self.last_engine
                        sources["engine"] = SourceStatus(True, age_s=round(dt + rng.uniform(.1, .6), 3),
                                                         poll_s=None, poll_median_s=0.31)
                    else:
                        age = rng.uniform(0.005, 0.05) / max(share, 0.2)
                        ej.sim.pids = tuple(p.pid for p in ej.procs)
                        engine_sample = ej.sim.sample(wall - age, mono - age, ej.cpu_s,
                                                      int(ej.invol), ej.busiest_s, ej.busiest)
                        sources["engine"] = SourceStatus(True, age_s=round(age, 3),
                                                         poll_s=round(age * 0.9, 4),
                                                         poll_median_s=round(0.02 / max(share, .2), 4))
                        self.last_engine = engine_sample
            else:
                sources["engine"] = SourceStatus(False, ENGINE_NONE, poll_median_s=3.1e-05)
            sources["host"] = SourceStatus(True, age_s=0.0, poll_s=0.0003, poll_median_s=0.0003)
            # pin
            pinned = None
            if self.pin is not None:
                j = self.pin
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=2.4e-5, poll_median_s=2.4e-5)
                roots = tuple(p.pid for p in j.procs if p.ppid not in {q.pid for q in j.procs})
                threads = tuple(ThreadSample(tid, pid, tname, round(j.cpu_s * sh, 2))
                                for tid, pid, tname, sh in j.threads)
                pinned = PinnedSample(
                    label=j.procs[0].cmdline[:60], pattern=getattr(j, "pattern", None),
                    root_pids=roots, tree_pids=tuple(p.pid for p in j.procs),
                    cpu_s=round(j.cpu_s, 2), ctx_voluntary=int(j.vol),
                    ctx_involuntary=int(j.invol), threads=threads,
                    cores=tuple(range(self.cpus)), cpu_pressure_some_pct=round(self.psi, 2),
                    run_queue=max(1, rq))
            launch = ()
            if self.ebpf == "on":
                launch = self._launch(t, dt, share)
                sources["ebpf"] = SourceStatus(True, detail=self.ebpf_detail, age_s=0.0,
                                               poll_s=0.0021, poll_median_s=0.0019)
            elif self.ebpf == "denied":
                sources["ebpf"] = SourceStatus(False, EBPF_ROOT)
            out.append(Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=tuple(gpu_samples),
                             processes=tuple(procs), engine=engine_sample, launch=launch,
                             host=host, pinned=pinned, sources=sources))
        return out

    ebpf_detail = ("full mode; /usr/local/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/"
                   "libcudart.so.12: cudaLaunchKernel, cudaLaunchKernelExC, cudaGraphLaunch, "
                   "cudaMemcpyAsync, cudaStreamSynchronize, cudaDeviceSynchronize; "
                   "/usr/lib/x86_64-linux-gnu/libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx, "
                   "cuGraphLaunch")

    def _revive(self, job: Job, t: float) -> None:
        """A restarted job: new PIDs and start times, counters from zero."""
        for p in job.procs:
            p.pid += 1000
            p.ppid = p.ppid + 1000 if p.ppid > 1 else p.ppid
            p.started = t
            p.cpu_s = 0.0
        job.cpu_s = job.busiest_s = job.invol = job.vol = 0.0
        if job.launch_pid:
            job.launch_pid += 1000
        if job.busiest:
            tid, _, rest = job.busiest.partition(" ")
            job.busiest = f"{int(tid) + 1000} {rest}"
        if hasattr(job.sim, "reset"):
            job.sim.reset()

    def _alive(self, job: Job, t: float) -> bool:
        return job.alive(t) if job.alive else True

    def _own(self, job: Job, gpu: int):
        return getattr(job, "_acts", {}).get(gpu)

    def _merge(self, acts: list[Act]) -> Act:
        if not acts:
            return Act(busy=[0.0] * max(1, int(round(self.spec.samples_per_s * self.tick)) - 1),
                       has_ctx=False)
        if len(acts) == 1:
            return acts[0]
        n = max(len(a.busy) for a in acts)
        busy = [min(1.0, sum(a.busy[k] if k < len(a.busy) else 0 for a in acts)) for k in range(n)]
        return Act(busy=busy, sm=min(1, sum(a.sm for a in acts)), occ=min(1, sum(a.occ for a in acts)),
                   dram=min(1, sum(a.dram for a in acts)), tensor=min(1, sum(a.tensor for a in acts)),
                   mem_used=sum(a.mem_used for a in acts), nvlink=sum(a.nvlink for a in acts),
                   pcie=sum(a.pcie for a in acts))

    def _engine_samples(self, sim, gpu: int, rank: int, n: int) -> list[float]:
        b = sim.last_state["busy"][rank]
        return [max(0.0, min(1.0, b + self.rng.gauss(0, 0.012 if b > 0.05 else 0.002)))
                for _ in range(n)]

    # eBPF: what the launch probes saw this tick, per process
    def _launch(self, t: float, dt: float, share: float) -> tuple[LaunchHist, ...]:
        out = []
        rng = self.rng
        for job in self.jobs:
            if not self._alive(job, t) or not getattr(job, "launch_pid", None):
                continue
            lm = job.mods(t) if job.mods else {}
            tail = lm.get("jitter_frac", 0.0)
            tail_ns = lm.get("jitter_ns", 0.0)
            st = job.sim.last_state
            steps = st.get("steps") if job.engine else st.get("steps_per_s", 1.0) * dt
            steps = steps or 0.0
            base_tail = 0.002 + (1 - share) * 0.2
            for api, per_step, med, sig in job.launch_apis:
                count = int(steps * per_step * (1 + rng.gauss(0, 0.02)))
                if count <= 0:
                    continue
                b, s, mx = lognormal_hist(rng, count, med, sig, tail + base_tail,
                                          tail_ns or 40000 + 300000 * (1 - share))
                out.append(LaunchHist(api=api, pid=job.launch_pid, count=sum(b.values()),
                                      sum_ns=s, max_ns=mx, buckets=b))
            sw = int((20 + 30 * dt + (tail * 4000 + (1 - share) * 3000) * dt) * (1 + rng.gauss(0, .1)))
            b, s, mx = lognormal_hist(rng, max(1, sw), 30000, 0.8, tail * 3 + (1 - share),
                                      tail_ns * 2 or 2e6)
            out.append(LaunchHist(api="off-cpu", pid=job.launch_pid, count=sum(b.values()),
                                  sum_ns=s, max_ns=mx, buckets=b))
        return tuple(out)
