"""One machine over time: GPUs, host, the jobs of its tenants, and gputop's collector
turning all of it into frames (sources that fail say so)."""
from __future__ import annotations
import math
import random

from gputop.buckets import bucket_index
from gputop.schema import (Frame, LaunchHist, PinnedSample, ProcSample, SourceStatus, ThreadSample)
from corpus_ai.gpu import Activity, GpuState
from corpus_ai.host import CpuLoad, HostState
from corpus_ai.enginepage import engine_sample, EngineStats

GIB = 2**30


class Proc:
    def __init__(self, pid, gpu, name, cmdline, container, mem_bytes, user="root", rss=2e9, start=0.0):
        self.pid, self.gpu, self.name, self.cmdline = pid, gpu, name, cmdline
        self.container, self.mem, self.user, self.rss, self.start = container, mem_bytes, user, rss, start
        self.cpu_s = random.Random(pid).uniform(10, 300)


def container_id(rng):
    return "".join(rng.choice("0123456789abcdef") for _ in range(64))


class Job:
    watched = False
    engine_stats: EngineStats | None = None

    def __init__(self, gpus, procs, start=-1e18, stop=1e18):
        self.gpus, self.procs, self.start, self.stop = tuple(gpus), procs, start, stop
        self.busy = {g: 0.0 for g in self.gpus}

    def active(self, t):
        return self.start <= t < self.stop

    def cpu_demand(self):
        return 0.3


class ProfileJob(Job):
    """A job whose GPU use is a profile: diffusion, Whisper, a miner, a notebook, a game."""

    def __init__(self, gpus, procs, profile, start=-1e18, stop=1e18, cpu=0.5):
        super().__init__(gpus, procs, start, stop)
        self.profile, self.cpu = profile, cpu

    def tick(self, t, dt, world, avail, acts):
        for g in self.gpus:
            busy, sm, tensor, dram = self.profile(t, g)
            clock = world.gpus[g].clock_ratio()
            x = busy * min(1.0, avail[g]) * dt
            self.busy[g] = busy
            acts[g].add(x, x * sm / max(busy, 1e-9) if busy else 0, x * tensor / max(busy, 1e-9) * clock if busy else 0,
                        dram * dt * avail[g] * world.gpus[g].b.bw_gbs * 1e9, self.procs[self.gpus.index(g)].pid
                        if len(self.procs) > self.gpus.index(g) else self.procs[0].pid)
        return self.cpu


class EngineJob(Job):
    def __init__(self, sim, procs, url, scrape_s=5.0, start=-1e18, stop=1e18, cpu_base=0.35):
        super().__init__(sim.gpus, procs, start, stop)
        self.sim, self.url, self.scrape_s = sim, url, scrape_s
        self.engine_stats = sim.stats
        self.host_busy = 0.3
        self.cpu_base = cpu_base
        self.jitter = []
        self.calls = (0, 0)

    def tick(self, t, dt, world, avail, acts):
        sim = self.sim
        clock = min(world.gpus[g].clock_ratio() for g in sim.gpus)
        av = min(avail[g] for g in sim.gpus)
        out = {"busy": 0.0, "sm": 0.0, "tensor": 0.0, "dram": 0.0, "nvlink": 0.0, "host_busy": 0.0,
               "calls_graph": 0, "calls_kernel": 0, "jitter": [], "gen": 0.0}
        sim.advance(t, dt, clock, av, world.cpu_share, out)
        for i, g in enumerate(sim.gpus):
            # ranks with more clock or GPU time than the slowest wait in the all-reduce
            cg = world.gpus[g].clock_ratio()
            slack = min(out["busy"], out["busy"] * (1 - min(1.0, clock / cg * av / max(avail[g], 1e-6)) ) )
            acts[g].add(out["busy"], out["sm"] - slack * 0.8, out["tensor"], out["dram"], self.procs[i].pid,
                        nvlink=out["nvlink"] if sim.link[1] >= 100 else 0, pcie=out["nvlink"] if sim.link[1] < 100 else 0)
            self.busy[g] = out["busy"] / dt
        self.host_busy = out["host_busy"] / dt
        self.jitter = out["jitter"]
        self.calls = (out["calls_graph"], out["calls_kernel"])
        return self.cpu_base + min(1.0, self.host_busy) + 0.5 * (sim.tp - 1) * min(1.0, 3 * out["busy"] / dt)


class TrainJob(Job):
    def __init__(self, sim, procs, start=-1e18, stop=1e18, url=None, scrape_s=5.0, workers=4, worker_cpu=0.8):
        gpus = tuple(p.gpu for p in procs)
        super().__init__(gpus, procs, start, stop)
        self.sim, self.url, self.scrape_s = sim, url, scrape_s
        self.workers, self.worker_cpu = workers, worker_cpu
        if url:
            self.engine_stats = EngineStats("trainer", "")
        self.host_busy = 1.0
        self.jitter = []
        self.calls = (0, 0)

    def tick(self, t, dt, world, avail, acts):
        sim = self.sim
        clocks = [world.gpus[g].clock_ratio() for g in self.gpus]
        avs = [avail[g] for g in self.gpus]
        cpus = [world.cpu_share] * len(self.gpus)
        tacts = [Activity() for _ in self.gpus]
        hb = sim.advance(t, dt, clocks, avs, cpus, tacts, [p.pid for p in self.procs])
        for i, g in enumerate(self.gpus):
            a = tacts[i]
            acts[g].add(a.busy_s, a.sm_s, a.tensor_s, a.dram_bytes, self.procs[i].pid, occ=a.occ_s,
                        pcie=a.pcie_bytes, nvlink=a.nvlink_bytes)
            self.busy[g] = a.busy_s / dt
        if self.engine_stats is not None:
            self.engine_stats.gen = sim.tokens_total
            self.engine_stats.finished_stop = sim.steps_total
        self.host_busy = sum(hb) / dt
        self.calls = (0, int(sum(a.busy_s for a in tacts) * 4000))
        loader = self.workers * self.worker_cpu * min(1.0, sim.loader_busy * 3 + 0.1)
        return self.host_busy + loader


class World:
    def __init__(self, name, rng, boards, *, tick_s=1.0, duration_s=360, start_wall=1.8e9,
                 host_cpus=32, host_name="host", ebpf="absent", miss_p=0.01, drop_p=0.003,
                 gpu_kwargs=None, ambient=None):
        self.name, self.rng, self.tick_s, self.duration = name, rng, tick_s, duration_s
        self.start_wall = start_wall
        gk = gpu_kwargs or {}
        self.gpus = [GpuState(b, i, rng, uuid_seed=hash(name) & 0xFFFF if False else sum(map(ord, name)),
                              **gk.get(i, {})) for i, b in enumerate(boards)]
        self.ambient = ambient
        self.host = HostState(host_cpus, rng)
        self.jobs: list[Job] = []
        self.watched: Job | None = None
        self.ebpf = ebpf               # "ok", "absent", "failed"
        self.miss_p, self.drop_p = miss_p, drop_p
        self.cpu_share = 1.0
        self.load_fn = lambda t: CpuLoad(demand_cores=1.0, cpuset_cores=8)
        self.gpu_events = []           # callables (t, world) applied each tick: brakes, limits
        self.mono0 = rng.uniform(5e4, 4e6)

    def add(self, job, watched=False):
        self.jobs.append(job)
        if watched:
            self.watched = job
            job.watched = True
        return job

    def frames(self):
        rng, dt = self.rng, self.tick_s
        frames = []
        t = self.start_wall
        end = self.start_wall + self.duration
        seq = 0
        last_eng = None
        last_eng_t = None
        next_scrape = t + rng.uniform(0, 1)
        w = self.watched
        demand = 1.0
        prev_busy = {}
        while t < end:
            for ev in self.gpu_events:
                ev(t, self)
            if self.ambient:
                for g in self.gpus:
                    g.ambient = self.ambient(t, g.index)
            # CPU share of the watched tree this tick
            load = self.load_fn(t)
            load.demand_cores = demand
            self.cpu_share = self.host.share(load)
            self._lp = load.launch_preempt
            # time-slicing between contexts on a GPU
            active = [j for j in self.jobs if j.active(t)]
            avail = {}
            for g in range(len(self.gpus)):
                users = [j for j in active if g in j.gpus]
                avail[g] = 1.0
            acts = [Activity() for _ in self.gpus]
            per_job_avail = {}
            for j in active:
                av = {}
                for g in range(len(self.gpus)):
                    others = sum(prev_busy.get((o, g), 0.0) for o in active if o is not j and g in o.gpus)
                    av[g] = 1.0 / (1.0 + 0.95 * others) if g in j.gpus else 1.0
                per_job_avail[j] = av
            for j in active:
                d = j.tick(t, dt, self, per_job_avail[j], acts)
                if j is w:
                    demand = d
                for g in j.gpus:
                    prev_busy[(j, g)] = j.busy.get(g, 0.0)
            for j in self.jobs:
                if not j.active(t):
                    for g in j.gpus:
                        prev_busy[(j, g)] = 0.0
            host = self.host.tick(dt, load, self.cpu_share, self.ebpf == "ok")
            # GPUs
            gs = []
            procs = []
            for g in self.gpus:
                mem = 0.35 * GIB * 0
                present = False
                for j in active:
                    for p in j.procs:
                        if p.gpu == g.index:
                            mem += p.mem
                            present = True
                for k in range(len(acts[g.index].by_pid)):
                    pass
                gs.append(g.sample(dt, acts[g.index], mem + (0.3 * GIB if present else 0.0), present))
            for j in active:
                for p in j.procs:
                    busy = acts[p.gpu].by_pid.get(p.pid, 0.0) / dt
                    if j is w:
                        p.cpu_s += demand * self.cpu_share * dt / max(1, len(j.procs))
                    else:
                        p.cpu_s += j.cpu_demand() * dt
                    procs.append(ProcSample(
                        pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user,
                        ppid=1, start_time_s=round(p.start, 2), mem_bytes=int(p.mem),
                        sm_util_pct=float(round(min(100, 100 * busy))), cpu_s=round(p.cpu_s, 2),
                        rss_bytes=int(p.rss), container=f"docker:{p.container[:12]}",
                        cgroup=f"/system.slice/docker-{p.container}.scope",
                        mem_util_pct=float(round(min(100, acts[p.gpu].dram_bytes / (dt * self.gpus[p.gpu].b.bw_gbs * 1e9) * 90 * (busy / max(1e-6, acts[p.gpu].busy_s / dt))))) if busy else 0.0))
            sources = {"nvml": SourceStatus(True, None, None, 0.0, round(0.004 + 0.0012 * len(self.gpus) + rng.random() * 0.002, 6), 0.005),
                       "procfs": SourceStatus(True, None, "/proc", 0.0, 0.0001, 0.00012),
                       "host": SourceStatus(True, None, None, 0.0, 0.0006, 0.0006)}
            pinned = None
            engine = None
            launch = ()
            mono = self.mono0 + (t - self.start_wall)
            if w is not None and w.active(t):
                h = self.host
                wp = [p.pid for p in w.procs]
                threads = (ThreadSample(wp[0] + 37, wp[0], "python3", round(h.threads_cpu[0], 2)),
                           ThreadSample(wp[0], wp[0], "python3", round(h.threads_cpu[1], 2)),
                           ThreadSample(wp[0] + 5, wp[0], "pt_autograd_0" if isinstance(w, TrainJob) else "uvicorn", round(h.threads_cpu[2], 2)))
                ld = load
                pinned = PinnedSample(label=w.procs[0].cmdline[:60] + "…", root_pids=(wp[0],), tree_pids=tuple(wp),
                                      cpu_s=round(h.tree_cpu_s, 2), ctx_voluntary=h.ctx_vol, ctx_involuntary=h.ctx_invol,
                                      threads=threads, cores=tuple(range(ld.cpuset_cores)), cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                      run_queue=host.run_queue, listening_ports=(int(w.url.rsplit(":", 1)[1].split("/")[0]),) if getattr(w, "url", None) else (),
                                      cpu_quota_cores=ld.quota_cores, cpu_periods=h.periods if ld.quota_cores else None,
                                      cpu_throttled_periods=h.throttled if ld.quota_cores else None)
                sources["pin"] = SourceStatus(True, None, None, 0.0, 0.015, 0.014)
                if w.engine_stats is not None and getattr(w, "url", None):
                    if t >= next_scrape:
                        next_scrape = t + w.scrape_s
                        if rng.random() < self.miss_p:
                            sources["engine"] = SourceStatus(False, f"timed out after {min(2.0, w.scrape_s):g} s", None, None, 2.0, 0.02)
                            last_eng = None
                        else:
                            poll = 0.01 + rng.random() * 0.03 + (0.3 if self.cpu_share < 0.5 and rng.random() < 0.3 else 0)
                            tw = t + poll
                            proc = dict(cpu_s=round(h.tree_cpu_s, 2), ctx_involuntary=h.ctx_invol,
                                        busiest_thread_cpu_s=round(h.threads_cpu[0], 2), busiest_thread=f"{wp[0] + 37} python3",
                                        cpu_quota_cores=ld.quota_cores, cpu_periods=h.periods if ld.quota_cores else None,
                                        cpu_throttled_periods=h.throttled if ld.quota_cores else None)
                            last_eng = engine_sample(w.engine_stats, w.url, pids=wp, tp=getattr(getattr(w, "sim", None), "tp", 1),
                                                     wall=tw, mono=mono + poll, proc=proc)
                            last_eng_t = t
                            sources["engine"] = SourceStatus(True, None, None, 0.0, round(poll, 6), 0.02)
                    elif last_eng is not None:
                        sources["engine"] = SourceStatus(True, None, None, round(t - last_eng_t, 3), 0.02, 0.02)
                    else:
                        sources["engine"] = SourceStatus(False, "no answer yet", None, None, None, None)
                    engine = last_eng
                if self.ebpf == "ok":
                    launch = self._launch(w, dt)
            elif w is not None and w.engine_stats is not None and getattr(w, "url", None):
                sources["engine"] = SourceStatus(False, f"connection refused: {w.url}", None, None, 0.001, 0.02)
                sources["pin"] = SourceStatus(True, None, "waiting for a match", 0.0, 0.01, 0.01)
                pinned = PinnedSample(label=w.procs[0].cmdline[:60] + "…", waiting="no process matches")
            if self.ebpf == "ok":
                sources["ebpf"] = SourceStatus(True, None, "uprobes: libcudart.so.12, libcuda.so.1", 0.0, 0.002, 0.002)
            elif self.ebpf == "failed":
                sources["ebpf"] = SourceStatus(False, "kernel headers missing at /lib/modules/6.8.0-49-generic/build: run scripts/setup-ebpf.sh")
            if rng.random() >= self.drop_p or seq == 0:
                frames.append(Frame(gpus=tuple(gs), processes=tuple(procs), engine=engine, launch=launch,
                                    host=host, pinned=pinned, seq=seq, time_wall_s=round(t + rng.uniform(0, 0.004), 6),
                                    time_mono_s=round(mono, 6), sources=sources))
                seq += 1
            t += dt
        return frames

    def _launch(self, w, dt):
        rng = self.rng
        graph, kern = w.calls
        pid = w.procs[0].pid
        share = self.cpu_share
        out = []
        for api, n, med in (("cudaLaunchKernel", int(kern * 0.35), 3.8e3), ("cuLaunchKernel", int(kern * 0.65), 4.4e3),
                            ("cudaGraphLaunch", int(graph), 11e3)):
            if n <= 0:
                continue
            buckets = {}
            tot = 0.0
            mx = 0
            k = 24
            med = med / max(0.3, share) ** 0.3
            for i in range(k):
                v = int(rng.lognormvariate(math.log(med), 0.35))
                c = n // k + (1 if i < n % k else 0)
                if c:
                    idx = bucket_index(v)
                    buckets[idx] = buckets.get(idx, 0) + c
                    tot += v * c
                    mx = max(mx, v)
            # the launch thread preempted mid-call: the off-CPU time lands in the call
            extra = list(w.jitter) if api != "cudaGraphLaunch" or not kern else []
            lp = getattr(self, "_lp", 0.0)
            if lp > 0 and api != "cudaGraphLaunch":
                for _ in range(int(n * lp * 0.003) + (1 if rng.random() < lp else 0)):
                    extra.append(rng.lognormvariate(math.log(1.5e-3), 0.8))
            if share < 0.95:
                for _ in range(int(n * (1 - share) * 0.01)):
                    extra.append(rng.lognormvariate(math.log(0.6e-3), 0.9))
            moved = 0
            for d in extra:
                v = int(d * 1e9)
                idx = bucket_index(v)
                buckets[idx] = buckets.get(idx, 0) + 1
                tot += v
                mx = max(mx, v)
                moved += 1
            out.append(LaunchHist(api=api, pid=pid, count=n + moved, sum_ns=int(tot), max_ns=mx, buckets=buckets))
        return tuple(out)
