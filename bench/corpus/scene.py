"""A machine over time: GPUs, the processes on them, the host, and what gputop samples.

``Scene.run()`` advances every actor (engines, trainers, CUDA processes, other contexts)
tick by tick, lets each GPU turn its activity bins into NVML/GPM readings and move its
clock and temperature, and assembles the ``gputop.schema.Frame`` a real sampler would
have produced: NVML per GPU and per process, the engine scrape (only when gputop is
pointed at an engine, or a trainer exporter), /proc host readings, the pinned tree when
``-p`` was given, and eBPF launch histograms when ``--ebpf`` was.
"""

from __future__ import annotations

import math
import random

from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from bench.corpus import launch as L
from bench.corpus.cuda import CudaProc, Intruder
from bench.corpus.hw import BINS_PER_S, Gpu, GpuSpec
from bench.corpus.serving import Engine, EngineConfig
from bench.corpus.training import Trainer

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")
NO_ENGINE = "no engine found (pass --engine URL)"


# ---------------------------------------------------------------------- host

class Host:
    """Whole-host CPU as /proc shows it: cpu %, PSI cpu some avg10 (a 10 s exponential
    average updated every 2 s, so it lags), procs_running."""

    def __init__(self, cpus: int, rng: random.Random, base_cores: float = 1.2):
        self.cpus = cpus
        self.rng = rng
        self.base = base_cores
        self.ou = 0.0
        self.psi = rng.uniform(0.0, 0.6)
        self.next_psi = 2.0
        self.contention = None  # t -> dict(threads=..., share=..., preempt=...) or None
        self._frac_acc = []

    def cpu_share(self, t: float):
        c = self.contention(t) if self.contention else None
        if c:
            return c.get("share", 1.0), c.get("preempt", 0.0)
        return 1.0, 0.25

    def sample(self, t_prev: float, t: float, actor_cores: float) -> HostSample:
        self.ou += -0.1 * self.ou + 0.25 * self.rng.gauss(0, 1)
        bg = max(0.1, self.base * math.exp(0.3 * self.ou))
        c = self.contention(t) if self.contention else None
        hog = c.get("threads", 0) if c else 0
        runnable = bg + actor_cores + hog
        used = min(self.cpus, runnable)
        cpu_pct = 100.0 * used / self.cpus
        load = runnable / self.cpus
        if load > 1.0:
            frac = min(1.0, 0.75 + 0.25 * (load - 1.0))
        else:
            frac = min(1.0, 0.02 * load + 0.5 * max(0.0, load - 0.6) ** 2)
        if c and c.get("psi_floor"):
            frac = max(frac, c["psi_floor"])
        self._frac_acc.append(frac)
        while t >= self.next_psi:  # the kernel updates avg10 every 2 s
            f = sum(self._frac_acc) / len(self._frac_acc) if self._frac_acc else 0.0
            self._frac_acc = []
            k = math.exp(-2.0 / 10.0)
            self.psi = self.psi * k + 100.0 * f * (1 - k)
            self.next_psi += 2.0
        rq = max(1, int(round(runnable + self.rng.gauss(0, math.sqrt(max(1.0, runnable)) * 0.5))))
        return HostSample(cpu_pct=round(min(100.0, cpu_pct + self.rng.uniform(-0.5, 0.5)), 1),
                          cpu_pressure_some_pct=round(self.psi, 2), run_queue=rq, cpus=self.cpus)


# ---------------------------------------------------------------------- engine actor

class EngineActor:
    """One engine endpoint across restarts (each lifetime an ``Engine``)."""

    def __init__(self, scene, cfg: EngineConfig, lifetimes: list[Engine], url: str,
                 pointed: bool):
        self.scene = scene
        self.cfg = cfg
        self.lives = lifetimes
        self.url = url
        self.pointed = pointed
        self.proc_cpu: dict[int, float] = {}
        self.inv_ctx: dict[int, int] = {}
        self.busiest_cpu: dict[int, float] = {}
        self.last_sample: EngineSample | None = None
        self.last_sample_t = None
        for e in lifetimes:
            self._loading_activity(e)

    def _loading_activity(self, e: Engine) -> None:
        """Start-up as the GPU sees it: weights copied in (copy engines, not kernels),
        a profiling forward at the largest batch, then CUDA-graph capture bursts."""
        if e.load_s <= 0:
            return
        for gi in e.cfg.gpus:
            g = self.scene.gpus[gi]
            t_prof = e.t_start + 0.62 * e.load_s
            g.add(t_prof, 1.6, 0.9, 0.2, 0.55, 0.4)
            t_cap = e.t_start + 0.75 * e.load_s
            g.add(t_cap, 0.22 * e.load_s, 0.45, 0.12, 0.2, 0.3, duty=0.35)

    def run_until(self, t: float) -> None:
        for e in self.lives:
            if e.t_start < t and e.t_ready < e.t_stop:
                e.run_until(t)

    def live(self, t: float) -> Engine | None:
        for e in self.lives:
            if e.alive(t):
                return e
        return None

    def gpu_mem(self, e: Engine, t: float) -> int:
        if t >= e.t_ready:
            return e.proc_mem
        x = (t - e.t_start) / max(1e-9, e.load_s)
        ctx = 530 * 2 ** 20
        if x < 0.12:
            return ctx
        if x < 0.6:
            return ctx + int(e.weights * (x - 0.12) / 0.48)
        if x < 0.7:
            return ctx + e.weights + int(2.5 * 2 ** 30)
        return e.proc_mem

    def processes(self, t: float) -> list[ProcSample]:
        e = self.live(t)
        if e is None:
            return []
        out = []
        sc = self.scene
        for r, gi in enumerate(e.cfg.gpus):
            pid = e.gpu_pids[r]
            if e.kind == "vllm":
                if e.cfg.tp == 1:
                    name, cmd = "VLLM::EngineCore", "VLLM::EngineCore"
                else:
                    name, cmd = f"VLLM::Worker_TP{r}", f"VLLM::Worker_TP{r}"
                ppid = e.api_pid if e.cfg.tp == 1 else e.core_pid
            else:
                name = cmd = f"sglang::scheduler_TP{r}"
                ppid = e.api_pid
            util = sc.last_util.get(gi)
            n_here = sc.procs_on_gpu.get(gi, 1)
            smu = None
            if util is not None and t >= e.t_ready:
                smu = float(max(0, min(100, round(util * sc.own_fraction(gi, t) + sc.rng.gauss(0, 1.5)))))
            out.append(ProcSample(
                pid=pid, gpu_index=gi, name=name, cmdline=cmd, user=sc.user_engine, ppid=ppid,
                start_time_s=sc.wall0 + e.t_start + 2.0, mem_bytes=self.gpu_mem(e, t),
                sm_util_pct=smu, cpu_s=round(self.proc_cpu.get(pid, 0.0), 2),
                rss_bytes=int((5.5 + 0.4 * r) * 2 ** 30), container=sc.container, pod=sc.pod))
        return out

    def cpu_tick(self, t0: float, t1: float) -> float:
        """CPU of the engine's tree over the tick (cores), accumulated per process."""
        e = self.live(t1)
        if e is None:
            return 0.0
        dt = t1 - t0
        share, _ = self.scene.cpu_share(t1, e)
        active = min(1.0, max(0.0, (e.active_s - getattr(e, "_active_seen", 0.0)) / dt))
        e._active_seen = e.active_s
        if t1 < e.t_ready:  # loading: one core or so per rank (safetensors, capture)
            active = 0.9
        rate = e.gen_total - getattr(e, "_gen_seen", 0)
        e._gen_seen = e.gen_total
        tok_s = rate / dt
        core = (active * 1.0 + (1 - active) * 0.015) * share
        api = min(1.0, 0.03 + tok_s * 2.5e-5) * share
        cores = core + api
        inv_rate = 25.0 + (1.0 - share) * 2600.0
        pids = []
        if e.kind == "vllm":
            pids.append((e.api_pid, api))
            pids.append((e.core_pid, core))
            if e.cfg.tp > 1:
                for i, p in enumerate(e.gpu_pids):
                    w = (active * (0.97 - 0.006 * i) + 0.01) * share
                    pids.append((p, w))
                    cores += w
        else:
            pids.append((e.api_pid, api))
            pids.append((e.detok_pid, min(1.0, 0.01 + tok_s * 1.0e-5) * share))
            for i, p in enumerate(e.gpu_pids):
                w = core if i == 0 else (active * 0.97 + 0.03) * share
                pids.append((p, w))
                cores += w if i else 0.0
        for p, c in pids:
            self.proc_cpu[p] = self.proc_cpu.get(p, 0.0) + c * dt
            n = self.scene.rng.gauss(inv_rate * dt * max(0.05, c), math.sqrt(inv_rate * dt) + 1)
            self.inv_ctx[p] = self.inv_ctx.get(p, 0) + max(0, int(n))
        launcher = e.core_pid if e.kind == "sglang" or e.cfg.tp == 1 else e.gpu_pids[0]
        self.busiest_cpu[launcher] = self.busiest_cpu.get(launcher, 0.0) + \
            (core if launcher == e.core_pid else pids[-len(e.gpu_pids)][1]) * dt * 0.96
        return cores

    def sample(self, t: float) -> tuple[EngineSample | None, SourceStatus]:
        sc = self.scene
        e = self.live(t)
        if e is None or t < e.t_ready or e.snap is None:
            self.last_sample = None
            return None, SourceStatus(False, "engine unreachable: [Errno 111] Connection refused "
                                      "(retry in 2s)")
        c = sc.host.contention(t) if sc.host.contention else None
        slow_p = c.get("slow_scrape", 0.0) if c else 0.0
        if self.last_sample is not None and slow_p and sc.rng.random() < slow_p:
            age = t - self.last_sample_t
            return self.last_sample, SourceStatus(True, age_s=round(age, 3),
                                                  poll_s=round(sc.rng.uniform(0.5, 1.4), 3))
        snap = e.snap
        ts = e.snap_t
        model = e.model
        kind = e.kind
        tree = e.all_pids
        cpu = sum(self.proc_cpu.get(p, 0.0) for p in tree)
        inv = sum(self.inv_ctx.get(p, 0) for p in tree)
        launcher = e.core_pid if kind == "sglang" or e.cfg.tp == 1 else e.gpu_pids[0]
        if kind == "vllm":
            tname = "VLLM::EngineCor" if e.cfg.tp == 1 else "VLLM::Worker_TP"
        else:
            tname = "sglang::schedul"
        s = EngineSample(
            kind=kind, url=self.url, model=e.cfg.served_name or model.name,
            generation_tokens_total=float(snap["gen"]), prompt_tokens_total=float(snap["prompt"]),
            prompt_tokens_cached_total=float(snap["cached"]),
            requests_finished_total=float(snap["finished"]),
            requests_running=float(snap["running"]), requests_waiting=float(snap["waiting"]),
            kv_usage_ratio=round(snap["kv"], 6),
            num_gpu_blocks=e.num_blocks if kind == "vllm" else None,
            block_size=e.cfg.block_size if kind == "vllm" else None,
            kv_pool_bytes=e.pool_bytes if kind == "vllm" else None,
            kv_pool_tokens=e.pool_tokens,
            kv_config=model.kv_config() if e.cfg.weights_known else {},
            cache_dtype="auto" if kind == "vllm" else "",
            weights_bytes=e.weights if e.cfg.weights_known else None,
            weights_source="model.safetensors.index.json" if e.cfg.weights_known else "",
            tensor_parallel=e.cfg.tp, data_parallel=1, gpu_indices=(), pids=tree,
            time_mono_s=sc.mono0 + ts, time_wall_s=sc.wall0 + ts,
            histograms=snap["hists"],
            preemptions_total=float(snap["preempt"]) if kind == "vllm" else None,
            retracted_requests_total=float(snap["retract"]) if kind == "sglang" else None,
            cpu_s=round(cpu, 2), ctx_involuntary=inv,
            busiest_thread_cpu_s=round(self.busiest_cpu.get(launcher, 0.0), 2),
            busiest_thread=f"{launcher} {tname}")
        self.last_sample, self.last_sample_t = s, t
        return s, SourceStatus(True, age_s=round(t - ts, 3), poll_s=round(sc.rng.uniform(0.002, 0.012), 4))


# ---------------------------------------------------------------------- trainer actor

class TrainerActor:
    def __init__(self, scene, trainer: Trainer, counter_url: str | None = None,
                 launcher_name: str = "torchrun"):
        self.scene = scene
        self.tr = trainer
        self.counter_url = counter_url
        self.cpu: dict[int, float] = {}
        self.thread_cpu: dict[int, float] = {}
        self.vol = 0
        self.inv = 0
        self.launcher_name = launcher_name

    def run_until(self, t: float) -> None:
        self.tr.run_until(t)

    def processes(self, t: float) -> list[ProcSample]:
        tr, sc = self.tr, self.scene
        if t < tr.t_start:
            return []
        out = []
        for r, gi in enumerate(tr.cfg.gpus):
            pid = tr.rank_pids[r]
            util = sc.last_util.get(gi)
            smu = None if util is None else float(max(0, min(100, round(
                util * sc.own_fraction(gi, t) + sc.rng.gauss(0, 1.5)))))
            ppid = tr.pid if tr.cfg.mode != "single" else tr.pid - 1
            out.append(ProcSample(
                pid=pid, gpu_index=gi, name="python3", cmdline=tr.cfg.cmdline, user=tr.cfg.user,
                ppid=ppid, start_time_s=sc.wall0 + tr.t_start + 1.0,
                mem_bytes=int(tr.cfg.mem_bytes * min(1.0, max(0.05, (t - tr.t_start) / 5.0))),
                sm_util_pct=smu, cpu_s=round(self.cpu.get(pid, 0.0), 2),
                rss_bytes=int(18 * 2 ** 30), container=sc.container, pod=sc.pod))
        return out

    def cpu_tick(self, t0: float, t1: float) -> float:
        tr = self.tr
        dt = t1 - t0
        cores = 0.0
        main = tr.main_cpu(t0, t1)
        for r, pid in enumerate(tr.rank_pids):
            c = min(dt, main * (1.0 + 0.02 * r))
            self.cpu[pid] = self.cpu.get(pid, 0.0) + c + 0.05 * dt
            self.thread_cpu[pid] = self.thread_cpu.get(pid, 0.0) + c
            cores += c / dt + 0.05
            if tr.loader is not None:
                for w, wpid in enumerate(tr.worker_pids[r]):
                    wc = tr.loader.worker_cpu(w, t0, t1) * (1.0 + 0.03 * self.scene.rng.gauss(0, 1))
                    wc = max(0.0, min(dt, wc)) + 0.002 * dt
                    self.cpu[wpid] = self.cpu.get(wpid, 0.0) + wc
                    self.thread_cpu[wpid] = self.thread_cpu.get(wpid, 0.0) + wc
                    cores += wc / dt
        self.vol += int(dt * (800 + 150 * len(tr.rank_pids) * (1 + tr.cfg.workers)))
        self.inv += int(dt * (30 + 12 * cores) * (1 + self.scene.rng.random()))
        return cores

    def counter(self, t: float) -> tuple[EngineSample | None, SourceStatus]:
        tr = self.tr
        sc = self.scene
        ts = t - sc.rng.uniform(0.001, 0.006)
        if ts < tr.t_start + 3.0:
            return None, SourceStatus(False, "engine unreachable: [Errno 111] Connection refused "
                                      "(retry in 2s)")
        return (EngineSample(kind="trainer", url=self.counter_url, model=tr.cfg.model_name,
                             generation_tokens_total=float(tr.samples_at(ts)),
                             work_unit=tr.cfg.work_unit, pids=(tr.pid,) + tr.rank_pids,
                             time_mono_s=sc.mono0 + ts, time_wall_s=sc.wall0 + ts),
                SourceStatus(True, age_s=round(t - ts, 3), poll_s=0.002))

    def pinned(self, t: float) -> PinnedSample:
        tr, sc = self.tr, self.scene
        tree = [tr.pid] if tr.cfg.mode != "single" else []
        threads = []
        for r, pid in enumerate(tr.rank_pids):
            tree.append(pid)
            threads.append(ThreadSample(pid, pid, "pt_main_thread", round(self.thread_cpu.get(pid, 0.0), 2)))
            for wpid in tr.worker_pids[r] if tr.loader is not None else ():
                tree.append(wpid)
                threads.append(ThreadSample(wpid, wpid, "pt_data_worker",
                                            round(self.thread_cpu.get(wpid, 0.0), 2)))
        threads.sort(key=lambda x: -x.cpu_s)
        cpu = sum(self.cpu.get(p, 0.0) for p in tree)
        host = sc.last_host
        root = tr.pid if tr.cfg.mode != "single" else tr.rank_pids[0]
        return PinnedSample(label=f"train.py ({root})", pattern="train.py", root_pids=(root,),
                            tree_pids=tuple(tree), cpu_s=round(cpu, 2), ctx_voluntary=self.vol,
                            ctx_involuntary=self.inv, threads=tuple(threads[:8]),
                            cores=tuple(range(sc.host.cpus)),
                            cpu_pressure_some_pct=host.cpu_pressure_some_pct if host else None,
                            run_queue=host.run_queue if host else None)


# ---------------------------------------------------------------------- the scene

class Scene:
    def __init__(self, seed: int, duration: float, spec: GpuSpec, n_gpus: int,
                 interval: float = 1.0, cpus: int = 64, ebpf: bool = False,
                 base_cores: float = 1.2, inlet_c: float = 27.0):
        self.seed = seed
        self.rng = random.Random(seed)
        self.duration = duration
        self.interval = interval
        self.spec = spec
        self.ebpf = ebpf
        self.gpus = []
        for i in range(n_gpus):
            grng = random.Random(seed * 131 + i)
            self.gpus.append(Gpu(i, spec, duration + 5, grng, inlet_c=inlet_c + grng.uniform(-1.5, 2.5),
                                 r_th=0.046 * (1.0 + grng.uniform(-0.08, 0.12))))
        self.host = Host(cpus, random.Random(seed * 7 + 1), base_cores)
        self.actors: list = []
        self.engines: list[EngineActor] = []
        self.trainers: list[TrainerActor] = []
        self.intruders: list[Intruder] = []
        self.cuda: list[CudaProc] = []
        self.pointed: EngineActor | None = None
        self.counter: TrainerActor | None = None
        self.pin: TrainerActor | None = None
        self.wall0 = 1796000000.0 + (seed % 100000) * 3600.0
        self.mono0 = 40000.0 + (seed % 977) * 13.0
        self.user_engine = "svc-llm"
        self.container = ""
        self.pod = ""
        self.last_util: dict[int, float] = {}
        self.procs_on_gpu: dict[int, int] = {}
        self.last_host: HostSample | None = None
        self._own: dict[int, float] = {}

    # actors -------------------------------------------------------------

    def add_engine(self, cfg: EngineConfig, lifetimes: list[Engine], pointed: bool = True,
                   url: str | None = None) -> EngineActor:
        url = url or f"http://127.0.0.1:{cfg.port}/metrics"
        a = EngineActor(self, cfg, lifetimes, url, pointed)
        self.engines.append(a)
        self.actors.append(a)
        if pointed:
            self.pointed = a
        return a

    def add_trainer(self, trainer: Trainer, counter_url: str | None = None,
                    pinned: bool = False) -> TrainerActor:
        a = TrainerActor(self, trainer, counter_url)
        self.trainers.append(a)
        self.actors.append(a)
        if counter_url:
            self.counter = a
        if pinned:
            self.pin = a
        return a

    def add_cuda(self, p: CudaProc) -> CudaProc:
        self.cuda.append(p)
        self.actors.append(p)
        return p

    def add_intruder(self, it: Intruder) -> Intruder:
        self.intruders.append(it)
        return it

    def cpu_share(self, t: float, actor) -> tuple[float, float]:
        return self.host.cpu_share(t)

    def own_fraction(self, gi: int, t: float) -> float:
        """Share of a GPU's busy time that is the job's own (NVML per-process SM util is
        only trustworthy with one process on the GPU: with two it splits roughly so)."""
        return self._own.get(gi, 1.0)

    # run ----------------------------------------------------------------

    def _gpu_processes(self, t: float) -> list[ProcSample]:
        procs = []
        for a in self.engines:
            procs += a.processes(t)
        for a in self.trainers:
            procs += a.processes(t)
        for p in self.cuda:
            if p.alive(t):
                util = self.last_util.get(p.gpu)
                smu = None if util is None else float(max(0, min(100, round(
                    util * self.own_fraction(p.gpu, t) + self.rng.gauss(0, 1.0)))))
                procs.append(ProcSample(pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline,
                                        user=p.user, ppid=p.ppid, start_time_s=self.wall0 + p.t_start,
                                        mem_bytes=p.mem_bytes, sm_util_pct=smu,
                                        cpu_s=round(p.cpu_s, 2), rss_bytes=int(3.2 * 2 ** 30),
                                        container=self.container, pod=self.pod))
        for it in self.intruders:
            if it.alive(t):
                util = self.last_util.get(it.gpu)
                own = self.own_fraction(it.gpu, t)
                smu = None if util is None else float(max(0, min(100, round(
                    util * (1.0 - own) + self.rng.gauss(0, 4.0)))))
                procs.append(ProcSample(pid=it.pid, gpu_index=it.gpu, name=it.name,
                                        cmdline=it.cmdline, user=it.user, ppid=it.pid - 3,
                                        start_time_s=self.wall0 + it.t0, mem_bytes=it.mem_bytes,
                                        sm_util_pct=smu, cpu_s=round(it.cpu_s, 2),
                                        rss_bytes=int(6 * 2 ** 30), container=it.container,
                                        pod=it.pod))
        return procs

    def warm(self) -> None:
        """GPUs that were already working when recording began: clocks up, die warm."""
        busy = {p.gpu_index for p in self._gpu_processes(0.5)}
        for g in self.gpus:
            if g.index in busy:
                g.clock = g.spec.max_clock
                g.temp = g.inlet_c + g.r_th * (g.spec.p_ctx + 260.0)

    def run(self) -> list[Frame]:
        self.warm()
        frames = []
        n = int(self.duration / self.interval)
        t_prev = 0.0
        ebpf_status = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1")
        for k in range(1, n + 1):
            t = k * self.interval + self.rng.gauss(0.0, 0.0015)
            ts = t - self.rng.uniform(0.002, 0.012)  # when the engine's scrape answered
            for a in self.engines:
                for e in a.lives:
                    e.snap_t = ts
                    e.snap = None
                    e.want_snap = ts
                    if e.t > ts and e._pre is not None and e.alive(ts) and ts >= e.t_ready:
                        e.snap, e.want_snap = e._pre, None  # a long step began before ts
            for a in self.actors:
                a.run_until(t)
            for a in self.engines:
                for e in a.lives:
                    if e.want_snap is not None and e.alive(ts) and ts >= e.t_ready:
                        e.take_snapshot()
            # other contexts fill what the GPU left idle
            lo = int(math.floor(t_prev * BINS_PER_S))
            hi = int(math.floor(t * BINS_PER_S))
            self._own = {}
            for it in self.intruders:
                if it.t0 < t and it.t1 > t_prev:
                    g = self.gpus[it.gpu]
                    b0 = max(lo, int(it.t0 * BINS_PER_S))
                    b1 = min(hi, int(math.ceil(it.t1 * BINS_PER_S)))
                    before = sum(g.busy[b] for b in range(lo, hi))
                    g.fill_idle(b0, b1, it.duty, *it.act)
                    after = sum(g.busy[b] for b in range(lo, hi))
                    s = it.share(t)
                    own_busy = before * (1 - s)
                    self._own[it.gpu] = own_busy / after if after > 0 else 1.0
            procs = self._gpu_processes(t)
            self.procs_on_gpu = {}
            mem = {}
            for p in procs:
                self.procs_on_gpu[p.gpu_index] = self.procs_on_gpu.get(p.gpu_index, 0) + 1
                mem[p.gpu_index] = mem.get(p.gpu_index, 0) + (p.mem_bytes or 0)
            gs = []
            for g in self.gpus:
                r = g.end_tick(t_prev, t, g.index in self.procs_on_gpu)
                self.last_util[g.index] = r["util"]
                spec = g.spec
                first = k == 1
                gpm = spec.gpm and not first
                missing = {}
                if not spec.gpm:
                    missing = {f: "needs Hopper+ (GPM)" for f in GPM_FIELDS}
                elif first:
                    missing = {f: "GPM needs a second sample" for f in GPM_FIELDS}
                gs.append(GpuSample(
                    index=g.index, name=spec.name, uuid=g.uuid, util_gpu_pct=r["util"],
                    util_gpu_samples_pct=r["samples"],
                    util_mem_pct=float(round(min(100.0, r["dram"] * 1.15))),
                    sm_active_pct=r["sm"] if gpm else None,
                    sm_occupancy_pct=r["occ"] if gpm else None,
                    dram_bw_pct=r["dram"] if gpm else None,
                    tensor_pct=r["tensor"] if gpm else None,
                    mem_total_bytes=spec.mem_total, mem_used_bytes=min(spec.mem_total - spec.mem_reserved,
                                                                      mem.get(g.index, 0)),
                    mem_reserved_bytes=spec.mem_reserved,
                    power_w=round(r["power"], 2), temp_c=r["temp"], sm_clock_mhz=r["clock"],
                    throttle=r["throttle"], bus_id=g.bus_id, pstate=0,
                    power_limit_w=spec.power_limit, mem_clock_mhz=spec.mem_clock,
                    ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False,
                    missing=missing))
            # CPU: actors' use over the tick, then the host
            cores = 0.0
            for a in self.actors:
                cores += a.cpu_tick(t_prev, t)
            for it in self.intruders:
                cores += it.cpu_tick(t_prev, t)
            host = self.host.sample(t_prev, t, cores)
            launch = []
            if self.ebpf:
                switches = 0
                for a in self.engines:
                    for e in a.lives:
                        if e.alive(t) and t >= e.t_ready:
                            share, _ = self.cpu_share(t, e)
                            hs, sw = L.hists(e.kind, e.model.layers, e.launch_pids, e.launch,
                                             self.rng, share)
                            launch += hs
                            switches += sw
                        e.launch = {"decode_steps": 0, "mixed_steps": 0, "sync_s": [], "long": []}
                host = HostSample(host.cpu_pct, switches + int(self.rng.uniform(2, 12) * self.interval),
                                  host.cpu_pressure_some_pct, host.run_queue, host.cpus)
            self.last_host = host
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(self.rng.uniform(0.004, 0.012), 4))}
            engine = None
            if self.pointed is not None:
                engine, st = self.pointed.sample(t)
                sources["engine"] = st
            elif self.counter is not None:
                engine, st = self.counter.counter(t)
                sources["engine"] = st
            else:
                sources["engine"] = SourceStatus(False, NO_ENGINE)
            sources["host"] = SourceStatus(True, age_s=0.0, poll_s=0.0005)
            sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.00003)
            if self.ebpf:
                sources["ebpf"] = ebpf_status
            pinned = self.pin.pinned(t) if self.pin is not None else None
            frames.append(Frame(seq=k, time_wall_s=self.wall0 + t, time_mono_s=self.mono0 + t,
                                gpus=tuple(gs), processes=tuple(procs), engine=engine,
                                launch=tuple(launch), host=host, pinned=pinned, sources=sources))
            t_prev = t
        return frames
