"""Assembling frames: a box of GPUs, the workload's processes, the host, the pinned tree,
the engine's scrapes and (optionally) the eBPF launch probes, tick by tick."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import minnp as np

from gputop.schema import Frame, HostSample

from .frames import (GpuState, Host, Pinned, Proc, bad, launch_hist, ok, render_gpus, render_procs,
                     rng_for)
from .hw import GpuSpec, ModelSpec
from .serve import EngineCfg, Mods, ServeSim, Traffic, engine_sample

GiB = 2**30


def vllm_pool_tokens(gpu: GpuSpec, model: ModelSpec, tp: int, gmu: float = 0.9,
                     block: int = 16) -> tuple[int, float]:
    """(KV pool tokens per GPU, bytes the engine process holds per GPU)."""
    held = gmu * (gpu.mem_total - gpu.reserved)
    pool_bytes = held - model.weights_per_gpu(tp) - 4.5 * GiB
    tokens = int(pool_bytes / model.kv_per_gpu(tp)) // block * block
    return tokens, held


@dataclass
class Intruder:
    gpu: int
    start: float
    end: float
    busy: float  # fraction of GPU time its kernels take when alone
    sm: float = 0.85
    tensor: float = 0.45
    dram: float = 0.2
    mem: float = 12 * GiB
    name: str = "python3"
    cmdline: str = "python3 train_lora.py --bf16"
    user: str = "alice"
    pid: int = 48211
    ramp: float = 0.0


@dataclass
class Hog:
    start: float
    end: float
    cores: float  # cores the hog keeps busy
    stall: float  # PSI stall fraction it causes
    runq: float
    invol: float = 0.0  # extra involuntary switches/s on the pinned tree
    ramp: float = 0.0
    proc: tuple | None = None  # (pid, name, cmdline) of the hog when visible to NVML? (no: CPU only)


@dataclass
class Other:
    """Another independent workload on another GPU of the box (not the pinned one)."""
    gpu: int
    load: Callable  # t -> busy fraction
    mem: float
    pid: int
    name: str = "python3"
    cmdline: str = ""
    sm: float = 0.7
    tensor: float = 0.1
    dram: float = 0.45


@dataclass
class Box:
    gpu: GpuSpec
    n_gpus: int
    cpus: int = 64
    base_busy: float = 0.03


def _time_base(name: str) -> tuple[float, float]:
    r = rng_for(name, "time")
    return 1797000000.0 + float(r.integers(0, 4_000_000)), 250000.0 + float(r.integers(0, 900000))


def apply_intruders(gpus, procs, intruders, n, tick, start_wall):
    for it in intruders:
        p = Proc(it.pid, it.name, it.cmdline, (it.gpu,), n, start_wall + it.start - 3, user=it.user,
                 ppid=it.pid - 17, rss=3e9)
        g = gpus[it.gpu]
        for k in range(n):
            t0, t1 = k * tick, (k + 1) * tick
            lo, hi = max(t0, it.start), min(t1, it.end)
            p.present[k] = it.start - 3 <= t1 and t0 <= it.end + 2
            p.mem[k] = it.mem
            p.cpu[k] = 0.9
            if hi > lo:
                ramp = 1.0 if it.ramp <= 0 else min(1.0, (lo - it.start) / it.ramp + 0.05)
                b = it.busy * ramp
                g.add(lo, hi, b, it.sm * b, it.tensor * b, it.dram * b)
        p.mem = np.A(m if a else 0 for m, a in zip(p.mem, p.present))
        procs.append(p)


def apply_others(gpus, procs, others, n, tick, start_wall, rng):
    for o in others:
        p = Proc(o.pid, o.name, o.cmdline, (o.gpu,), n, start_wall - 40000 - o.pid, user="svc",
                 ppid=o.pid - 1, rss=4e9)
        g = gpus[o.gpu]
        p.mem[:] = o.mem
        for k in range(n):
            b = min(1.0, max(0.0, o.load(k * tick) + rng.normal(0, 0.03)))
            g.add(k * tick, (k + 1) * tick, b, o.sm * b, o.tensor * b, o.dram * b)
            p.cpu[k] = 0.3 + 1.0 * b
        g.mem_used += o.mem
        procs.append(p)


def apply_hogs(host: Host, pinned: Pinned | None, hogs, n, tick):
    for h in hogs:
        for k in range(n):
            t = (k + 0.5) * tick
            if h.start <= t <= h.end:
                f = 1.0 if h.ramp <= 0 else min(1.0, (t - h.start) / h.ramp)
                host.busy_cores[k] += h.cores * f
                host.stall[k] = max(host.stall[k], h.stall * f)
                host.runnable[k] += h.runq * f
                host.ctx_rate[k] += 4000 * f * h.cores / 8
                if pinned is not None:
                    pinned.invol[k] += h.invol * f


def assemble(name: str, n: int, tick: float, gpus, procs, host: Host, pinned: Pinned | None,
             engine_fn: Callable | None, launch_fn: Callable | None = None,
             scrape: Callable | None = None, engine_source: str = "engine") -> list[Frame]:
    rng = rng_for(name, "render")
    start_wall, start_mono = _time_base(name)
    if pinned is not None:
        pinned.finish(tick)
    frames = []
    for k in range(n):
        tw = start_wall + (k + 1) * tick + float(rng.uniform(0.0, 0.004))
        tm = start_mono + (k + 1) * tick + (tw - start_wall - (k + 1) * tick)
        g = render_gpus(gpus, k, rng)
        pr = render_procs(procs, gpus, k, tick)
        hs = host.render(k)
        pin = pinned.render(k, hs) if pinned is not None else None
        sources = {"nvml": ok(poll=0.004 + 0.0005 * len(gpus)), "host": ok(poll=0.0006),
                   "procfs": ok(poll=0.0003, detail="/proc")}
        if pinned is not None:
            sources["pin"] = ok(poll=0.012)
        eng = None
        if engine_fn is not None:
            state = scrape(k) if scrape is not None else "ok"
            if state == "ok":
                eng = engine_fn(k, tw, tm)
                sources[engine_source] = ok(poll=0.02 + 0.01 * rng.random()) if eng is not None else \
                    bad("connection refused (nothing listening on the port)", 0.001)
            elif isinstance(state, tuple) and state[0] == "slow":
                back = state[1]
                age = state[2]
                eng = engine_fn(back, start_wall + (back + 1) * tick, start_mono + (back + 1) * tick)
                sources[engine_source] = ok(age=age, poll=age + 0.3)
            elif state == "timeout":
                sources[engine_source] = bad("timed out after 2.0 s", 2.0)
            else:
                sources[engine_source] = bad("connection refused (nothing listening on the port)", 0.001)
        launch = ()
        if launch_fn is not None:
            launch, offcpu = launch_fn(k)
            sources["launch"] = ok(poll=0.003, detail="uprobes: libcudart.so.12, libcuda.so.1")
            hs = HostSample(cpu_pct=hs.cpu_pct, offcpu_switches=offcpu,
                            cpu_pressure_some_pct=hs.cpu_pressure_some_pct, run_queue=hs.run_queue,
                            cpus=hs.cpus, ctx_switches_total=hs.ctx_switches_total)
        frames.append(Frame(seq=k + 1, time_wall_s=round(tw, 6), time_mono_s=round(tm, 6), gpus=g,
                            processes=pr, engine=eng, launch=tuple(launch), host=hs, pinned=pin,
                            sources=sources))
    return frames


# ------------------------------------------------------------------ serving traces

@dataclass
class ServeTrace:
    name: str
    cfg: EngineCfg
    traffic: list[Traffic]
    duration: float
    tick: float = 1.0
    mods: Mods = field(default_factory=Mods)
    box: Box | None = None
    gmu: float = 0.9
    intruders: list[Intruder] = field(default_factory=list)
    hogs: list[Hog] = field(default_factory=list)
    others: list[Other] = field(default_factory=list)
    launch: Callable | None = None  # t -> (tail_frac, tail_ms, offcpu/s) when eBPF is on
    scrape: Callable | None = None  # (k, rng) -> state
    seed: tuple = (30.0, 2000.0, 0.02, 200.0)  # hours, tok/s, itl, tokens per request
    cores: tuple[int, ...] = ()
    container: str = ""
    restart: tuple[float, float] | None = None  # engine down over [a, b) (new pids after)
    forced: Callable | None = None  # (gpus, n, tick): throttling / clocks / power limits


def serving(st: ServeTrace) -> list[Frame]:
    cfg = st.cfg
    rng = rng_for(st.name, "sim")
    sim = ServeSim(cfg, st.traffic, st.mods, st.duration, st.tick, rng)
    sim.seed_history(*st.seed)
    sim.run()
    n, tick = sim.n_ticks, st.tick
    box = st.box or Box(cfg.gpu, max(cfg.gpus) + 1)
    start_wall, _ = _time_base(st.name)
    gpus = [GpuState(box.gpu, i, n, tick, st.name) for i in range(box.n_gpus)]
    for g in gpus:
        g.context[:] = False
    if st.forced is not None:
        st.forced(gpus, n, tick)
    procs: list[Proc] = []
    _, held = vllm_pool_tokens(cfg.gpu, cfg.model, cfg.tp, st.gmu)
    hrs = st.seed[0] * 3600
    base_pid = 1000 + int(rng_for(st.name, "pid").integers(1000, 60000))
    pids_old = _engine_pids(cfg, base_pid)
    pids_new = _engine_pids(cfg, base_pid + 9000)
    up = np.A(bool(st.mods.up((k + 0.5) * tick)) for k in range(n))
    after = np.zeros_bool(n)
    if st.restart:
        after = np.A((k + 0.5) * tick >= st.restart[1] for k in range(n))
    # GPU activity: every rank of the engine; a straggler computes longer, peers wait
    for gi in cfg.gpus:
        g = gpus[gi]
        for k in range(n):
            other = sim.gpu_busy_other[k]
            busy, sm = sim.gpu_busy[k], sim.gpu_sm[k]
            ten, dr = sim.gpu_tensor[k], sim.gpu_dram[k]
            if st.mods.straggler is not None and gi != cfg.gpus[st.mods.straggler]:
                sm = max(0.0, sm - other * 0.62)
                ten = ten * (busy - other) / max(busy, 1e-9)
                dr = dr * 0.97
            jitter = 1 + 0.01 * rng.normal()
            g.add(k * tick, (k + 1) * tick, min(1, busy / tick * jitter), min(1, sm / tick * jitter),
                  min(1, ten / tick), min(1, dr / tick), nvlink_bytes=(sim.launches[k] * cfg.model.layers * 2 *
                                                                   8192 * 2 * 40 if cfg.tp > 1 else 0))
    # memory: weights + KV pool + graphs, held while the engine is up (a restart refills it)
    for k in range(n):
        for gi in cfg.gpus:
            g = gpus[gi]
            if not up[k]:
                continue
            g.context[k] = True
            if st.restart and after[k]:
                age = (k + 0.5) * tick - st.restart[1]
                fill = min(1.0, age / 25.0)
                g.mem_used[k] += cfg.model.weights_per_gpu(cfg.tp) * min(1, age / 12) + \
                    max(0, held - cfg.model.weights_per_gpu(cfg.tp)) * max(0, (fill - 0.5) * 2)
                if age < 40 and sim.gpu_busy[k] < 0.05:  # profiling + CUDA-graph capture
                    g.add(k * tick, (k + 1) * tick, 0.35 if age > 12 else 0.05, 0.2 if age > 12 else 0.02,
                          0.05, 0.1)
            else:
                g.mem_used[k] += held
    # processes on the GPUs
    for gi_i, gi in enumerate(cfg.gpus):
        for pids, alive in ((pids_old, ~after), (pids_new, after)):
            if st.restart is None and pids is pids_new:
                continue
            gp = pids["gpu"][gi_i]
            p = Proc(gp[0], gp[1], gp[2], (gi,), n, start_wall - (hrs if pids is pids_old else -st.restart[0]),
                     user="svc", ppid=pids["api"][0], rss=6e9, container=st.container)
            p.present = alive & up
            p.mem = np.A(gpus[gi].mem_used[k] for k in range(n))
            p.cpu = sim.host_busy / tick if gi_i == 0 else np.full(n, 0.35)
            p.cpu0 = hrs * 0.4
            procs.append(p)
    apply_intruders(gpus, procs, st.intruders, n, tick, start_wall)
    apply_others(gpus, procs, st.others, n, tick, start_wall, rng)
    for gi in range(len(gpus)):
        if any(o.gpu == gi for o in st.others):
            gpus[gi].context[:] = True
        for it in st.intruders:
            if it.gpu == gi:
                for k in range(n):
                    if (k + 1) * tick >= it.start - 3 and k * tick <= it.end + 2:
                        gpus[gi].mem_used[k] += it.mem
                        gpus[gi].context[k] = True
    # host and pinned tree
    host = Host(box.cpus, n, tick, rng_for(st.name, "host"), box.base_busy)
    tok = sim.tokens_tick / tick
    api_rate = 0.12 + tok * 1.6e-5 * (2.2 if cfg.kind == "sglang" else 1.0)
    core_rate = sim.host_busy / tick
    host.busy_cores += core_rate + api_rate + 0.4 * (cfg.tp - 1)
    host.runnable += core_rate + api_rate
    cores = st.cores or tuple(range(box.cpus))
    pinned = Pinned(_label(cfg), (pids_old["api"][0],), n, cores, (8000,))
    for pids, alive in ((pids_old, ~after), (pids_new, after)):
        if st.restart is None and pids is pids_new:
            continue
        a = alive & up
        api, core = pids["api"], pids["core"]
        pinned.thread(api[0], api[0], "python3", api_rate * a, hrs * 0.1 if pids is pids_old else 0)
        pinned.thread(api[0] + 3, api[0], "python3", 0.02 * a)
        pinned.thread(core[0], core[0], core[1][:15], core_rate * a, hrs * 0.45 if pids is pids_old else 0)
        pinned.thread(core[0] + 9, core[0], "python3", (0.04 + tok * 4e-6) * a)
        pinned.thread(core[0] + 5, core[0], "cuda-EvtHandlr", 0.002 * a)
        for w in pids["gpu"][1:]:
            pinned.thread(w[0], w[0], w[1][:15], 0.35 * a, hrs * 0.3 if pids is pids_old else 0)
    for k in range(n):
        if st.restart and after[k]:
            pinned.tree_pids[k] = pids_new["tree"]
            pinned.root_pids = (pids_old["api"][0], pids_new["api"][0])
        else:
            pinned.tree_pids[k] = pids_old["tree"]
        if not up[k]:
            pinned.gone[k] = True
    pinned.invol[:] = 1.5 + 3 * core_rate
    pinned.vol[:] = 300 + 40 * sim.launches / tick / 10
    apply_hogs(host, pinned, st.hogs, n, tick)
    for k in range(n):
        t = (k + 0.5) * tick
        share = st.mods.cpu_share(t)
        if share < 0.999:
            pinned.invol[k] += 250 * (1 - share) * (1 + cfg.tp)

    def engine_fn(k, tw, tm):
        pids = pids_new if (st.restart and after[k]) else pids_old
        return engine_sample(sim, k, tw, tm, pids["tree"], pinned.total(k), pinned.invol_total(k),
                             pinned.busiest(k))

    scrape_rng = rng_for(st.name, "scrape")
    scrape = (lambda k: st.scrape(k, scrape_rng)) if st.scrape else None
    launch_fn = None
    if st.launch is not None:
        lrng = rng_for(st.name, "launch")

        def launch_fn(k):
            frac, ms, offcpu = st.launch((k + 0.5) * tick)
            steps = sim.launches[k]
            pid = pids_old["core"][0]
            hs = [launch_hist("cudaGraphLaunch", pid, steps, lrng, 8.5, 0.3, frac, ms),
                  launch_hist("cudaLaunchKernel", pid, steps * 22, lrng, 3.2, 0.35, frac, ms),
                  launch_hist("cuLaunchKernel", pid, steps * 9, lrng, 2.6, 0.3, frac, ms)]
            return hs, int(max(0, offcpu * tick + lrng.normal(0, 2)))
    frames = assemble(st.name, n, tick, gpus, procs, host, pinned, engine_fn, launch_fn, scrape)
    frames_meta = dict(sim=sim)
    serving.last = frames_meta
    return frames


def _label(cfg: EngineCfg) -> str:
    return {"vllm": f"vllm serve {cfg.model.name} --port 8000",
            "sglang": f"sglang.launch_server --model-path {cfg.model.name}",
            "llamacpp": "llama-server -m /models/model.gguf --metrics"}[cfg.kind][:60]


def _engine_pids(cfg: EngineCfg, base: int) -> dict:
    m, tp = cfg.model.name, cfg.tp
    if cfg.kind == "vllm":
        api = (base, "python3", f"/opt/vllm/bin/python3 /opt/vllm/bin/vllm serve {m} --tensor-parallel-size {tp} "
               f"--max-num-seqs {cfg.max_seqs} --max-num-batched-tokens {cfg.budget}"
               + (" --speculative-config {\"method\":\"eagle3\",\"num_speculative_tokens\":%d}" % cfg.spec_k
                  if cfg.spec_k else ""))
        core = (base + 61, "VLLM::EngineCore", "VLLM::EngineCore")
        if tp == 1:
            gpu = [core]
        else:
            gpu = [(base + 90 + i, f"VLLM::Worker_TP{i}", f"VLLM::Worker_TP{i}") for i in range(tp)]
    elif cfg.kind == "sglang":
        api = (base, "python3", f"python3 -m sglang.launch_server --model-path {m} --tp {tp} --enable-metrics"
               + (" --speculative-algorithm EAGLE" if cfg.spec_k else ""))
        gpu = [(base + 40 + i, f"sglang::scheduler_TP{i}", f"sglang::scheduler_TP{i}") for i in range(tp)]
        core = gpu[0]
    else:
        api = (base, "llama-server", "/opt/llama.cpp/build/bin/llama-server -m /models/model-Q8_0.gguf "
               "-ngl 99 --metrics --port 8000 -np 4" + (" -md /models/draft-Q8_0.gguf" if cfg.spec_k else ""))
        core = api
        gpu = [api]
    tree = tuple(sorted({api[0], core[0], *(g[0] for g in gpu)} | ({base + 70} if cfg.kind == "sglang" else set())))
    return dict(api=api, core=core, gpu=gpu, tree=tree)
