"""One trace: GPUs, a host, a server or a trainer, other processes, stepped every 1/6 s and
read into a frame every tick, as gputop's sampler would."""

from __future__ import annotations

import math
import random
import zlib

from gputop.schema import EngineSample, Frame, ProcSample, SourceStatus

from corpus_d.host import Host, TreeCpu, launch_hist, offcpu_hist
from corpus_d.hw import SPECS, SUB_S, Gpu

GIB = 2**30


class Proc:
    def __init__(self, pid, gpu, name, cmdline, mem, start, *, ppid=1, user="svc", role="engine",
                 share_of=None, cpu_rate=1.0, rss=6 * GIB, container=""):
        self.pid, self.gpu, self.name, self.cmdline = pid, gpu, name, cmdline
        self.mem, self.start, self.ppid, self.user, self.role = mem, start, ppid, user, role
        self.share_of = share_of  # for another process: fn(t) -> its share of the GPU's time
        self.cpu_rate, self.rss, self.container = cpu_rate, rss, container
        self.cpu_s = random.Random(pid).uniform(50, 900)
        self.alive = (0.0, math.inf)


class Scene:
    def __init__(self, name: str, *, gpu="H100", n_gpus=1, tick_s=1.0, duration_s=420.0,
                 cpus=224, host_load=12.0, ambient=30.0):
        self.name = name
        self.rng = random.Random(zlib.crc32(name.encode()))
        self.tick_s, self.duration = tick_s, duration_s
        self.start_wall = 1_797_000_000.0 + (zlib.crc32(name.encode()) % 5_000_000)
        spec = SPECS[gpu]
        self.gpu_model = gpu
        self.gpus = [Gpu(i, spec, self.rng, ambient_c=ambient + self.rng.uniform(-1, 2),
                         bus=0x18 + 0x11 * i) for i in range(n_gpus)]
        self.host = Host(self.rng, cpus=cpus, base_load=host_load)
        self.server = None
        self.trainer = None
        self.counter = None  # trainer counter: (unit, url)
        self.procs: list[Proc] = []
        self.hooks = []  # fn(scene, t), every sub-interval
        self.ebpf = False
        self.ebpf_reason = "kernel headers missing at /lib/modules/6.8.0-gpu/build: run scripts/setup-ebpf.sh"
        self.pin = None  # (label, pattern)
        self.tree = None
        self.engine_pids: tuple[int, ...] = ()
        self.engine_url = "http://127.0.0.1:8000/metrics"
        self.engine_up = lambda t: True
        self.mfu_metrics = False
        self.invol_rate = 40.0
        self.launch = None  # fn(scene, t, tick) -> (launch hists, offcpu switches)
        self.weights_source = "metadata.total_size of model.safetensors.index.json"
        self.base_pid = 1000 + self.rng.randrange(1000, 60000)
        self.t = 0.0

    # ---------------------------------------------------------------- set-up helpers
    def pid(self, k: int) -> int:
        return self.base_pid + k

    def run(self) -> list[Frame]:
        frames = []
        per_tick = max(1, round(self.tick_s / SUB_S))
        n_ticks = int(self.duration / self.tick_s)
        mono0 = self.rng.uniform(5000, 90000)
        sub = 0
        for tick in range(n_ticks):
            for _ in range(per_tick):
                t = sub * SUB_S
                self.t = t
                for hook in self.hooks:
                    hook(self, t)
                self.host.step(SUB_S)
                acts = None
                if self.server is not None:
                    acts = self.server.advance(t, SUB_S)
                elif self.trainer is not None:
                    acts = self.trainer.advance(t, SUB_S)
                acts = acts or []
                for p in self.procs:
                    if p.role == "other" and p.alive[0] <= t < p.alive[1] and p.share_of:
                        self._other_work(acts, p, t)
                for i, g in enumerate(self.gpus):
                    a = acts[i] if i < len(acts) else None
                    g.step(a if a is not None else _idle(), SUB_S)
                if self.tree is not None:
                    self.tree.step(SUB_S, self.host.share, self.invol_rate)
                sub += 1
            t_now = sub * SUB_S
            frames.append(self._frame(tick, t_now, mono0))
        return frames

    def _other_work(self, acts, p, t):
        from corpus_d.hw import Act
        share = p.share_of(t)
        while len(acts) <= p.gpu:
            acts.append(Act())
        a = acts[p.gpu]
        if a is None:
            a = acts[p.gpu] = Act()
        if self.server is None:  # no engine to slice with: add its kernels to the time
            a.busy = min(1.0, a.busy * (1 - share) + share)
            a.sm = a.sm * (1 - share) + 0.85 * share
            a.tensor = a.tensor * (1 - share) + 0.4 * share
            a.dram = a.dram * (1 - share) + 0.3 * share
            a.occ = a.occ * (1 - share) + 0.3 * share

    # ---------------------------------------------------------------- reading a tick
    def _frame(self, tick: int, t: float, mono0: float) -> Frame:
        rng = self.rng
        jitter = rng.uniform(-0.004, 0.004)
        wall = self.start_wall + t + jitter
        mono = mono0 + t + jitter
        gpus = tuple(g.sample(first=(tick == 0)) for g in self.gpus)
        procs = []
        for p in self.procs:
            if not p.alive[0] <= t < p.alive[1]:
                continue
            g = gpus[p.gpu]
            util = g.util_gpu_pct or 0.0
            if p.role == "other":
                share = p.share_of(t) if p.share_of else 0.0
                sm = round(util * share)
            else:
                others = [q for q in self.procs if q.role == "other" and q.gpu == p.gpu
                          and q.alive[0] <= t < q.alive[1] and q.share_of]
                share = sum(q.share_of(t) for q in others)
                sm = round(util * (1 - share))
            p.cpu_s += p.cpu_rate * self.tick_s * min(1.0, self.host.share + 0.1)
            procs.append(ProcSample(pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline,
                                    user=p.user, ppid=p.ppid, start_time_s=p.start,
                                    mem_bytes=p.mem, sm_util_pct=float(sm),
                                    cpu_s=round(p.cpu_s, 2), rss_bytes=p.rss,
                                    container=p.container))
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.001 * len(gpus), 6),
                                        poll_median_s=0.004 + 0.001 * len(gpus)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0004, poll_median_s=0.0004)}
        engine = self._engine(t, wall, mono)
        if engine is not None:
            sources["engine"] = SourceStatus(True, age_s=0.0, poll_s=round(rng.uniform(0.003, 0.02), 6),
                                             poll_median_s=0.008)
        elif self.server is not None:
            sources["engine"] = SourceStatus(False, reason="engine unreachable: connection refused "
                                             "(retry in 4s)")
        else:
            sources["engine"] = SourceStatus(False, reason="no engine found (pass --engine URL)")
        host = self.host.sample(self.tick_s)
        launch = ()
        if self.ebpf:
            sources["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12: cudaLaunchKernel, "
                                           "cudaGraphLaunch, cudaMemcpyAsync; libcuda.so.1: "
                                           "cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch",
                                           age_s=0.0, poll_s=0.0012, poll_median_s=0.0011)
            if self.launch is not None:
                launch, switches = self.launch(self, t, self.tick_s)
                host = _with(host, offcpu_switches=switches)
        else:
            sources["ebpf"] = SourceStatus(False, reason=self.ebpf_reason)
        pinned = None
        if self.pin is not None and self.tree is not None:
            pinned = self.tree.pinned(self.host, *self.pin)
            sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0006, poll_median_s=0.0006)
        return Frame(seq=tick, time_wall_s=wall, time_mono_s=mono, gpus=gpus,
                     processes=tuple(procs), engine=engine, launch=tuple(launch), host=host,
                     pinned=pinned, sources=sources)

    def _engine(self, t, wall, mono):
        lag = self.rng.uniform(0.002, 0.012)
        tree = self.tree
        cpu = {}
        if tree is not None:
            b = tree.busiest()
            cpu = dict(cpu_s=round(tree.start + tree.cpu_s, 2), ctx_involuntary=tree.invol,
                       busiest_thread_cpu_s=round(tree.start * 0.3 + b[3], 2),
                       busiest_thread=f"{b[0]} {b[2]}")
        if self.server is not None:
            if not self.engine_up(t):
                return None
            return _server_sample(self, self.server, wall - lag, mono - lag, cpu)
        if self.trainer is not None and self.counter is not None:
            unit, per = self.counter
            steps = self.trainer.steps_by(t - lag)
            return EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                                generation_tokens_total=float(steps * per),
                                requests_finished_total=float(steps), work_unit=unit,
                                pids=self.engine_pids, time_mono_s=mono - lag,
                                time_wall_s=wall - lag, **cpu)
        return None


def _server_sample(scene, s, wall, mono, cpu) -> EngineSample:
    c = s.c
    running = float(sum(r.n for r in s.running)) if s.kind == "vllm" else float(len(s.running))
    waiting = float(sum(r.n for r in s.waiting)) if s.kind == "vllm" else float(len(s.waiting))
    used = s.used_blocks()
    common = dict(url=scene.engine_url, model=s.model.name,
                  generation_tokens_total=round(c["gen"]), prompt_tokens_total=round(c["prompt"]),
                  prompt_tokens_cached_total=round(c["cached"]),
                  requests_finished_total=c["finished"], requests_running=running,
                  requests_waiting=waiting, kv_config=s.model.kv_config(), cache_dtype="auto",
                  weights_bytes=int(s.w_bytes), weights_source=scene.weights_source,
                  tensor_parallel=s.tp, data_parallel=1, pids=scene.engine_pids,
                  time_mono_s=mono, time_wall_s=wall,
                  histograms=tuple(h.sample() for h in s.h.values()), **cpu)
    if s.kind == "vllm":
        extra = {}
        if scene.mfu_metrics:
            extra = dict(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                         write_bytes_total=c["wbytes"])
        if s.spec_k:
            extra.update(spec_drafts_total=round(c["drafts"]),
                         spec_draft_tokens_total=round(c["draft_tok"]),
                         spec_accepted_tokens_total=round(c["accepted"]))
        return EngineSample(kind="vllm", **common, kv_usage_ratio=min(1.0, used / s.blocks),
                            num_gpu_blocks=s.blocks, block_size=s.block,
                            kv_pool_bytes=s.pool_bytes, kv_pool_tokens=s.pool_tokens,
                            preemptions_total=c["preempt"],
                            waiting_by_reason={"capacity": waiting, "deferred": 0.0},
                            prefill_seconds_total=round(c["prefill_s"], 4),
                            decode_seconds_total=round(c["decode_s"], 4), **extra)
    ev = min(s.evictable, max(0.0, s.pool_tokens - used))
    extra = {}
    if s.spec_k:
        a = s.accept(scene.t) if callable(s.accept) else s.accept
        extra = dict(spec_accept_ratio=round(a, 4),
                     spec_accept_length=round(1 + sum(a ** i for i in range(1, s.spec_k + 1)), 3))
    return EngineSample(kind="sglang", **common, kv_usage_ratio=min(1.0, used / s.pool_tokens),
                        kv_pool_tokens=s.pool_tokens, retracted_requests_total=c["retract"],
                        retracted_input_tokens_total=c["retract_tok"], kv_used_tokens=float(used),
                        kv_free_tokens=float(max(0, s.pool_tokens - used - ev)),
                        kv_evictable_tokens=float(round(ev)),
                        forward_seconds_total=round(c["forward_s"], 4), **extra)


def _with(host, **kw):
    import dataclasses
    return dataclasses.replace(host, **kw)


def _idle():
    from corpus_d.hw import Act
    return Act()


# ---------------------------------------------------------------- common set-ups

def serve(scene: Scene, server, *, pin=False, container="") -> None:
    """Processes, memory and the CPU tree of a serving engine on all of the scene's GPUs."""
    scene.server = server
    kind = server.kind
    n = len(scene.gpus)
    api = scene.pid(0)
    start = scene.start_wall - scene.rng.uniform(900, 40000)
    model = server.model.name
    if kind == "vllm":
        cmd = (f"python3 -m vllm.entrypoints.openai.api_server --model {model} --port 8000"
               + (f" --tensor-parallel-size {n}" if n > 1 else ""))
        pids = [api, scene.pid(1)]
        threads = [(scene.pid(1), scene.pid(1), "VLLM::EngineCore", 0.97),
                   (api, api, "python3", 0.35)]
        for i, g in enumerate(scene.gpus):
            if n == 1:
                p, name = scene.pid(1), "VLLM::EngineCore"
            else:
                p, name = scene.pid(2 + i), f"VLLM::Worker_TP{i}"
                pids.append(p)
                threads.append((p, p, name, 0.92))
            scene.procs.append(Proc(p, i, name, name if n > 1 else "VLLM::EngineCore", server.mem_used,
                                    start + 20 + i, ppid=scene.pid(1) if n > 1 else api,
                                    container=container))
    else:
        cmd = f"python3 -m sglang.launch_server --model-path {model} --port 30000 --tp {n}"
        scene.engine_url = "http://127.0.0.1:30000/metrics"
        pids = [api, scene.pid(1)]
        threads = [(api, api, "python3", 0.45), (scene.pid(1), scene.pid(1), "sglang::detokenizer", 0.1)]
        for i, g in enumerate(scene.gpus):
            p = scene.pid(2 + i)
            name = f"sglang::scheduler_TP{i}"
            pids.append(p)
            threads.append((p, p, name, 0.98))
            scene.procs.append(Proc(p, i, name, name, server.mem_used, start + 15 + i, ppid=api,
                                    container=container))
    for g in scene.gpus:
        g.context = True
        g.mem_used = server.mem_used + 540 * 2**20
    scene.engine_pids = tuple(pids)
    scene.tree = TreeCpu(scene.rng, pids, threads)
    scene.host.tree_demand = sum(t[3] for t in threads)
    scene._cmd = cmd
    if pin:
        tool = "vllm" if kind == "vllm" else "sglang"
        scene.pin = (f"{pids[0]} python3 -m {tool}...", tool)


def train(scene: Scene, trainer, *, counter=None, mem_gib=62.0, script="train.py") -> None:
    scene.trainer = trainer
    root = scene.pid(0)
    start = scene.start_wall - scene.rng.uniform(1200, 30000)
    pids = [root]
    threads = []
    for i, g in enumerate(scene.gpus):
        p = scene.pid(1 + i)
        pids.append(p)
        threads.append((p, p, "python", 0.99))
        threads.append((p + 100, p, "pt_autograd_0", 0.3))
        scene.procs.append(Proc(p, i, "python", f"/usr/bin/python -u {script} --config cfg.yaml "
                                f"--local-rank={i}", int(mem_gib * GIB), start + 8, ppid=root,
                                user="research", cpu_rate=1.6, rss=14 * GIB))
        g.context = True
        g.mem_used = int(mem_gib * GIB) + 530 * 2**20
    scene.engine_pids = tuple(pids)
    scene.tree = TreeCpu(scene.rng, pids, threads)
    scene.host.tree_demand = sum(t[3] for t in threads)
    if counter:
        scene.counter = counter


def ebpf_serving(scene: Scene, *, jitter=lambda t: (0.0, 0.0)):
    """Launch probes on the engine's launching process: per step one graph launch, a few
    dozen driver launches (sampler, prefill), a few copies.  ``jitter(t)`` gives (share of
    calls preempted, off-CPU switches per second of the launching threads)."""
    scene.ebpf = True
    server = scene.server
    last = {"steps": 0.0}

    def launch(sc, t, tick):
        steps = server.c["steps"] - last["steps"]
        last["steps"] = server.c["steps"]
        p_tail, invol = jitter(t)
        out = []
        pids = [sc.procs[i].pid for i in range(len(sc.gpus))] if server.tp > 1 else [sc.pid(1)]
        for pid in pids:
            for api, per, base in (("cudaGraphLaunch", 1.0, 5200.0), ("cuLaunchKernel", 34.0, 2600.0),
                                   ("cudaMemcpyAsync", 4.0, 3800.0)):
                h = launch_hist(sc.rng, api, pid, steps * per, base, tail_p=p_tail,
                                tail_ns=(3e5, 1.2e7))
                if h is not None:
                    out.append(h)
            o = offcpu_hist(sc.rng, pid, short=steps * 0.6 + 40 * tick, long=invol * tick)
            if o is not None:
                out.append(o)
        return tuple(out), int(invol * tick * len(pids) + sc.rng.random() * 3)

    scene.launch = launch
