"""A serving-engine simulator: requests arrive, are admitted into the KV pool, prefilled in
chunks and decoded step by step; every GPU, host and engine signal of a tick is derived
from the steps that tick ran (step time = max(compute, HBM reads) + launch/CPU overhead).

Engines differ as they do in the field: vLLM V1 mixes prefill chunks into decode steps
(chunked prefill, token budget), SGLang and TGI run prefill batches on their own (decode
waits), llama.cpp decodes its slots with prompt batches of n_batch.  Metric names and
histogram layouts are each engine's (see ``gputop.sources.engine_names``).
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineSample, SourceStatus

from .common import (BOARDS, GiB, MiB, Activity, BoardState, Clock, Hist, Host, Proc, clamp,
                     launch_hist, make_frame, pinned_of, poisson, seed_of)

# vLLM 0.32 layouts (as its pages and a real H200 recording show)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_MAXTOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
               10000.0, 20000.0, 50000.0)
# SGLang collector defaults (from memory of its source: see README, unsure)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
           0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800)
TGI_TPOT = (0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0)
TGI_E2E = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0)


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float
    active_b: float
    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int = 2
    mla: int = 0  # latent width per layer (DeepSeek MLA), else 0

    def kv_bytes(self, tp: int) -> int:
        if self.mla:
            return self.layers * self.mla * 2
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * 2


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 8.03, 32, 8, 128),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 7.6, 28, 4, 128),
    "qwen05b": Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 0.49, 24, 2, 64),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8, 32.8, 64, 8, 128),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 70.6, 80, 8, 128),
    "llama70b_fp8": Model("neuralmagic/Llama-3.3-70B-Instruct-FP8", 70.6, 70.6, 80, 8, 128, 1),
    "mixtral": Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, 12.9, 32, 8, 128),
    "qwen3moe": Model("Qwen/Qwen3-30B-A3B-Instruct-2507", 30.5, 3.3, 48, 4, 128),
    "dsv2lite": Model("deepseek-ai/DeepSeek-V2-Lite-Chat", 15.7, 2.4, 27, 1, 576, 2, 576),
    "mistral7b": Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 7.25, 32, 8, 128),
    "gemma9b": Model("google/gemma-2-9b-it", 9.24, 9.24, 42, 8, 256),
    "phi3mini": Model("microsoft/Phi-3-mini-4k-instruct", 3.8, 3.8, 32, 32, 96),
    "bge": Model("BAAI/bge-large-en-v1.5", 0.335, 0.335, 24, 16, 64),
}


@dataclass
class Serve:
    name: str
    engine: str  # vllm | sglang | tgi | llamacpp
    model: str
    board: str
    duration: float
    rate: Callable[[float], float]  # requests/s over the whole endpoint
    prompt: Callable[[random.Random, float], tuple[int, int]]  # (prompt tokens, cached)
    gen: Callable[[random.Random, float], int]
    tp: int = 1
    dp: int = 1
    tick: float = 1.0
    gmu: float = 0.90
    max_seqs: int = 256
    budget: int = 8192
    graphs: bool = True
    pool_tokens: int | None = None  # override (a smaller pool, e.g. a low gmu)
    spec: dict | None = None  # {"method", "k", "accept": f(t), "draft_ms"}
    mods: Callable[[float], dict] = lambda t: {}
    big: list = field(default_factory=list)  # (t, dict(n, logprobs, prompt, max_tokens))
    restarts: list = field(default_factory=list)  # (t_down, t_up)
    cold_start: bool = False  # the trace begins with the engine starting
    cpus: int = 32
    quota: float | None = None
    psi: bool = True
    ebpf: bool = False
    mfu: bool = False
    dcgm: bool = False
    power_limit: float | None = None
    container: str = ""
    pod: str = ""
    others: list = field(default_factory=list)  # dict(gpu, pid, name, cmd, mem, sm=f(t), start)
    neighbour: Callable[[float], float] = lambda t: 0.0  # other host CPU demand, cores
    ambient: float = 28.0
    events: dict = field(default_factory=dict)  # filled by the run (when the big request ended)


class Req:
    __slots__ = ("arr", "plen", "cached", "gen", "n", "lp", "left", "done", "first", "admit", "big")

    def __init__(self, arr, plen, cached, gen, n=1, lp=0, big=False):
        self.arr, self.plen, self.cached, self.gen, self.n, self.lp = arr, plen, cached, gen, n, lp
        self.left = plen - cached  # prompt tokens still to compute
        self.done = 0
        self.first = None
        self.admit = None
        self.big = big


class Replica:
    def __init__(self, cfg: Serve, idx: int, gpus: tuple[int, ...], pool: int, rng):
        self.cfg, self.idx, self.gpus, self.pool, self.rng = cfg, idx, gpus, pool, rng
        self.q: deque = deque()
        self.run: list[Req] = []
        self.reset_counters()
        self.evictable = 0.0

    def reset_counters(self):
        e = self.cfg.engine
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rbytes=0.0, wbytes=0.0, tgi_gen=0.0, tgi_in=0.0)
        if e == "vllm":
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens", VLLM_MAXTOK)}
        elif e == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_E2E)}
        elif e == "tgi":
            self.h = {"tpot": Hist("tpot", TGI_TPOT), "e2e": Hist("e2e", TGI_E2E),
                      "queue": Hist("queue", TGI_E2E)}
        else:
            self.h = {}
        self.acc_recent = 0.0


def _pool_tokens(cfg: Serve, m: Model) -> tuple[int, int, int]:
    """(pool tokens per replica, weights bytes per GPU, bytes the engine holds per GPU)."""
    b = BOARDS[cfg.board]
    total = b.mem_mib * MiB
    weights = int(m.params_b * 1e9 * m.dtype_bytes / cfg.tp)
    kvb = m.kv_bytes(cfg.tp)
    if cfg.engine == "llamacpp":
        pool = cfg.pool_tokens or 32768
        return pool, weights, weights + pool * kvb + int(0.9 * GiB)
    frac = cfg.gmu if cfg.engine != "tgi" else 0.95
    held = int(total * frac)
    act = int((1.2 + 1.6 * cfg.budget / 8192) * GiB) + (int(0.6 * GiB) if cfg.graphs else 0)
    avail = held - weights - act - int(0.5 * GiB)
    pool = max(4096, avail // kvb)
    if cfg.pool_tokens:
        pool = cfg.pool_tokens
        held = weights + act + int(0.5 * GiB) + pool * kvb
    pool = pool // 16 * 16
    return pool, weights, held


def simulate(cfg: Serve, start_wall: float):
    rng = random.Random(seed_of(cfg.name))
    b, m = BOARDS[cfg.board], MODELS[cfg.model]
    ngpu = cfg.tp * cfg.dp
    boards = [BoardState(b, i, rng, seed_of(cfg.name), cfg.power_limit, cfg.ambient, cfg.dcgm)
              for i in range(ngpu)]
    pool, weights, held = _pool_tokens(cfg, m)
    kvb = m.kv_bytes(cfg.tp)
    reps = [Replica(cfg, r, tuple(range(r * cfg.tp, (r + 1) * cfg.tp)), pool, rng)
            for r in range(cfg.dp)]
    host = Host(rng, cfg.cpus, cfg.quota, cfg.psi)
    clock = Clock(rng, start_wall, cfg.tick)
    port = 8000 if cfg.engine in ("vllm", "tgi") else 30000 if cfg.engine == "sglang" else 8080
    cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {m.name} "
                   f"--tensor-parallel-size {cfg.tp} --data-parallel-size {cfg.dp} "
                   f"--gpu-memory-utilization {cfg.gmu} --max-num-seqs {cfg.max_seqs} "
                   f"--max-num-batched-tokens {cfg.budget} --port {port}"
                   + (" --enforce-eager" if not cfg.graphs else "")
                   + (f" --speculative-config {cfg.spec['method']}" if cfg.spec else ""),
           "sglang": f"python3 -m sglang.launch_server --model-path {m.name} --tp {cfg.tp} "
                     f"--dp {cfg.dp} --mem-fraction-static {cfg.gmu} --enable-metrics --port {port}"
                     + (f" --speculative-algorithm {cfg.spec['method']}" if cfg.spec else ""),
           "tgi": f"text-generation-launcher --model-id {m.name} --num-shard {cfg.tp} --port {port}",
           "llamacpp": f"llama-server -m /models/{m.name.split('/')[-1]}-Q4_K_M.gguf -ngl 99 "
                       f"--metrics -np 8 -c {pool} --port {port}"}[cfg.engine]
    pid0 = 1000 + rng.randint(100, 60000)
    generation = [0]

    def spawn(t_rel: float):
        generation[0] += 1
        base = pid0 + 211 * generation[0]
        api = Proc(base, "python3" if cfg.engine in ("vllm", "sglang") else
                   "text-generation" if cfg.engine == "tgi" else "llama-server",
                   cmd, (), start_wall + t_rel - 0.5, container=cfg.container, pod=cfg.pod,
                   cgroup=f"/kubepods/burstable/pod{seed_of(cfg.pod) % 10**8:08d}" if cfg.pod else "")
        workers = []
        for g in range(ngpu):
            if cfg.engine == "vllm":
                nm = "VLLM::EngineCor" if cfg.tp == 1 else f"VLLM::Worker_TP{g % cfg.tp}"
            elif cfg.engine == "sglang":
                nm = f"sglang::schedul"
            elif cfg.engine == "tgi":
                nm = "text-generation-server"
            else:
                nm = ""
            if nm:
                workers.append(Proc(base + 7 + g, nm, cmd, (g,), start_wall + t_rel + 2,
                                    container=cfg.container, pod=cfg.pod, cgroup=api.cgroup))
            else:
                api.gpus = tuple(range(ngpu))
        return api, workers

    api, workers = spawn(0.0)
    state = "loading" if cfg.cold_start else "up"
    load_start = 0.0
    prev_engine = None
    big = sorted(cfg.big, key=lambda x: x[0])
    frames = []
    n_ticks = int(cfg.duration / cfg.tick)
    for seq, t, dt in clock.times(n_ticks):
        mod = cfg.mods(t)
        in_down = any(a <= t < z for a, z in cfg.restarts)
        if in_down:
            state = "down"
        elif state == "down":
            state, load_start = "loading", t
            api, workers = spawn(t)
            for r in reps:
                r.reset_counters()
                r.run, r.q = [], deque()
        load_age = t - load_start
        if state == "loading" and load_age > 55 + (ngpu - 1) * 6:
            state = "up"
        loading = state == "loading"
        down = True if state == "down" else None
        # ---- CPU the engine gets this tick (host contention, quota)
        active = not loading and down is None
        n_run = sum(len(r.run) + len(r.q) for r in reps)
        tree_cores = 0.0
        if active:
            tree_cores = (0.25 + 0.0004 * n_run * 4) + (0.95 if n_run else 0.08) * cfg.dp \
                + (0.9 * ngpu if cfg.tp > 1 and cfg.engine == "vllm" else 0)
        elif loading:
            tree_cores = 1.5
        other = cfg.neighbour(t) + mod.get("neighbour", 0.0)
        hs, got = host.tick(tree_cores + other + 1.2, tree_cores, dt, mod.get("quota"))
        got = min(got, mod.get("cpu_got", 1.0))
        speeds = [bs.speed for bs in boards]
        acts = [Activity() for _ in range(ngpu)]
        tokens_tick = 0.0
        for r in reps:
            rep_tokens = _replica_tick(cfg, m, r, t, dt, mod, got, speeds, acts, big, b, kvb,
                                       weights, active) if active else 0.0
            tokens_tick += rep_tokens
        # ---- memory
        mems = {}
        for g in range(ngpu):
            if down is not None:
                used = int(0.0)
            elif loading:
                if load_age < 8:
                    used = int(0.5 * GiB)
                elif load_age < 30:
                    used = int(0.5 * GiB + weights * clamp((load_age - 8) / 20))
                else:
                    used = held
                    acts[g].busy = rng.uniform(0.3, 0.9) if 34 < load_age < 52 else rng.uniform(0, 0.05)
                    acts[g].sm = acts[g].busy * 0.2
                    acts[g].flicker = 0.5
            else:
                used = held + int(rng.uniform(-4, 4) * MiB)
            mems[g] = used
            acts[g].mem_used = used + sum(o["mem"] for o in cfg.others if o["gpu"] == g
                                          and o.get("from", 0) <= t < o.get("to", 1e9))
        # other tenants' work on the same GPU
        for o in cfg.others:
            g = o["gpu"]
            if not (o.get("from", 0) <= t < o.get("to", 1e9)):
                continue
            share = o["sm"](t)
            a = acts[g]
            a.busy = clamp(a.busy + share * (1 - a.busy * 0.5))
            a.sm = clamp(a.sm + share * 0.7)
            a.tensor = clamp(a.tensor + share * o.get("tensor", 0.3))
            a.dram = clamp(a.dram + share * 0.25)
        for g, a in enumerate(acts):
            cap = mod.get("clock_cap", {}).get(g)
            if cap:
                a.clock_cap_mhz = cap
                a.reasons = mod.get("reasons", {}).get(g, ("hw slowdown",))
            a.heat_w = mod.get("heat", {}).get(g, 0.0)
            if cfg.tp > 1 and a.busy > 0:
                a.nvlink = 1800.0 * a.busy * (8 if b.nvlink else 0)
            a.pcie_rx, a.pcie_tx = 20 + 40 * a.busy, 6 + 10 * a.busy
        gpus = [bs.read(a, dt) for bs, a in zip(boards, acts)]
        # ---- processes
        cpu_per = tree_cores * got
        if down is None:
            if workers:
                api.burn(rng, {"python3": 0.25 * got * dt, "uvicorn": 0.05 * dt})
                for w in workers:
                    w.burn(rng, {w.name: (cpu_per - 0.3) / len(workers) * dt,
                                 "cuda-EvtHandlr": 0.01 * dt},
                           invol_rate=30 + (1 - got) * 900)
            else:
                api.burn(rng, {api.name: cpu_per * dt}, invol_rate=30 + (1 - got) * 900)
        procs = []
        if down is None:
            if workers:
                for w in workers:
                    g = w.gpus[0]
                    procs += w.samples({g: mems[g]}, {g: gpus[g].util_gpu_pct})
            else:
                procs += api.samples(mems, {g: gpus[g].util_gpu_pct for g in range(ngpu)})
        for o in cfg.others:
            if o.get("from", 0) <= t < o.get("to", 1e9):
                p = o.setdefault("_proc", Proc(o["pid"], o["name"], o["cmd"], (o["gpu"],),
                                               start_wall + o.get("from", 0) - 600,
                                               user=o.get("user", "app"),
                                               container=o.get("container", "")))
                p.burn(rng, {p.name: o.get("cpu", 0.3) * dt})
                procs += p.samples({o["gpu"]: o["mem"]},
                                   {o["gpu"]: round(100 * o["sm"](t))})
        # ---- engine sample
        tree = [api.pid] + [w.pid for w in workers]
        cpu_s = api.cpu_s + sum(w.cpu_s for w in workers)
        invol = api.ctx_invol + sum(w.ctx_invol for w in workers)
        bt, btc = max([p.busiest() for p in [api, *workers]], key=lambda x: x[1])
        estatus = None
        engine = None
        if down is not None:
            estatus = SourceStatus(ok=False, reason=f"http://127.0.0.1:{port}/metrics: connection refused")
        elif loading:
            estatus = SourceStatus(ok=False, reason=f"http://127.0.0.1:{port}/metrics: connection refused")
        else:
            engine = _engine_sample(cfg, m, reps, port, pool, weights, kvb, tuple(tree), cpu_s,
                                    invol, bt, btc, host, start_wall + t, clock.mono0 + t)
            lag = rng.random()
            if lag < 0.012 + (0.05 if got < 0.6 else 0):
                # a late answer: the previous reading carried, with its age
                if prev_engine is not None:
                    engine = prev_engine
                    estatus = SourceStatus(ok=True, age_s=round(cfg.tick * rng.uniform(1, 2), 3),
                                           poll_s=round(rng.uniform(0.9, 1.5), 6))
            elif lag < 0.016:
                engine = None
                estatus = SourceStatus(ok=False, reason=f"http://127.0.0.1:{port}/metrics: timed out after 1.0 s")
            if estatus is None or estatus.ok:
                prev_engine = engine
        launch = []
        if cfg.ebpf and active:
            tail = mod.get("launch_tail", (0.0005, 90.0))
            per_step = 3 if cfg.graphs else 600
            steps = max(1, int(tokens_tick / max(1, n_run or 1)))
            for w in (workers or [api])[:8]:
                launch.append(launch_hist(rng, "cudaGraphLaunch" if cfg.graphs else "cudaLaunchKernel",
                                          w.pid, per_step * steps, 4.5 if cfg.graphs else 3.2,
                                          tail[0], tail[1]))
            hs = _with_offcpu(hs, rng, tail[0] * per_step * steps)
        pinned = pinned_of(api, hs, tuple(range(cfg.cpus)) if not cfg.quota else tuple(range(4)),
                           (port,), mod.get("quota", cfg.quota), host.periods, host.throttled,
                           tuple(w.pid for w in workers)) if down is None else None
        frames.append(make_frame(clock, seq, t, gpus, procs, engine, hs, pinned, launch,
                                 estatus, cfg.ebpf))
    return frames


def _with_offcpu(hs, rng, rate):
    from dataclasses import replace
    return replace(hs, offcpu_switches=poisson(rng, 40 + rate))


def _replica_tick(cfg, m, r: Replica, t, dt, mod, got, speeds, acts, big, b, kvb, weights,
                  active) -> float:
    rng = r.rng
    speed = min(speeds[g] for g in r.gpus) * min(mod.get("straggle", {}).get(g, 1.0) for g in r.gpus)
    # arrivals
    lam = cfg.rate(t) / cfg.dp * dt * mod.get("rate_mult", 1.0)
    for _ in range(poisson(rng, lam)):
        plen, cached = cfg.prompt(rng, t)
        r.q.append(Req(t - rng.uniform(0, dt), plen, min(cached, plen - 1), cfg.gen(rng, t)))
    for bt, spec in list(big):
        if bt <= t and r.idx == 0:
            big.remove((bt, spec))
            r.q.append(Req(t, spec.get("prompt", 600), 0, spec.get("max_tokens", 512),
                           spec.get("n", 1), spec.get("logprobs", 0), True))
            if "params_n" in r.h:
                pass
    # admission (FIFO; blocks on the KV pool)
    used = sum((q.plen + q.done) * q.n for q in r.run)
    while r.q and len(r.run) < cfg.max_seqs:
        q = r.q[0]
        need = (q.plen + 16) * q.n
        if used + need > r.pool:
            break
        r.q.popleft()
        q.admit = t
        used += need
        r.run.append(q)
        r.c["prompt"] += q.plen
        r.c["cached"] += q.cached
        if "queue" in r.h:
            r.h["queue"].add(max(0.0, t - q.arr))
        if "params_n" in r.h:
            r.h["params_n"].add(q.n)
            r.h["params_max_tokens"].add(q.gen)
    # decode growth may overflow the pool: preempt (vLLM) / retract (SGLang) the newest
    grow = sum(q.n for q in r.run if q.left <= 0) * int(40 * dt)
    while r.run and used + grow > r.pool:
        q = r.run.pop()
        used -= (q.plen + q.done) * q.n
        if cfg.engine == "sglang":
            r.c["retr"] += 1
            r.c["retr_tok"] += q.plen
        else:
            r.c["pre"] += 1
        q.left, q.plen = q.plen + q.done, q.plen + q.done  # recomputed from the start
        q.cached = 0
        r.q.appendleft(q)
    dec = [q for q in r.run if q.left <= 0]
    pend = [q for q in r.run if q.left > 0]
    B = sum(q.n for q in dec)
    P = sum(q.left for q in pend)
    if not dec and not pend:
        for g in r.gpus:
            acts[g].busy = 0.0
        r.evictable = max(0.0, r.evictable * 0.999)
        return 0.0
    tp = cfg.tp
    avg_ctx = (sum((q.plen + q.done) * q.n for q in dec) / B) if B else 0
    moe_read = m.active_b + (m.params_b - m.active_b) * min(1.0, B / 24) * 0.6
    wbytes = moe_read * 1e9 * m.dtype_bytes / tp
    bw = b.hbm_tbs * 1e12 * 0.82
    kv_read = avg_ctx * B * kvb * mod.get("kv_read_mult", 1.0)
    t_mem = (wbytes + kv_read) / bw
    spec = cfg.spec
    k = spec["k"] if spec else 0
    alpha = spec["accept"](t) if spec else 0.0
    flops = b.tflops * 1e12 * speed
    t_cmp = 2 * m.active_b * 1e9 / tp * B * (1 + k) / (flops * 0.5)
    overhead = (0.0009 if cfg.graphs else 0.0035 + m.layers * 0.00011) + (m.layers * 2 * 14e-6 if tp > 1 else 0)
    if cfg.engine == "llamacpp":
        overhead += 0.002
    if spec:
        overhead += spec.get("draft_ms", 1.0) * 1e-3 * k / 4
    bigs = [q for q in r.run if q.big]
    gpu_extra = sum(q.n * (q.lp > 0) * 0.0025 for q in bigs)
    cpu_ms = 1.8 + 0.004 * B + sum(q.n * q.lp * 0.28 for q in bigs)  # host work per step
    cpu_gap = (cpu_ms * 1e-3 / got) * 0.5 + mod.get("step_gap_ms", 0) * 1e-3
    if cfg.ebpf or "launch_tail" in mod:
        lt = mod.get("launch_tail", (0.0, 0.0))
        per_step = 3 if cfg.graphs else 600
        cpu_gap += lt[0] * per_step * lt[1] * 1e-6
    t_mem_s = t_mem / max(0.35, speed ** 0.35)
    tiny = mod.get("tiny_ms", 0) * 1e-3  # a custom logits processor: tiny kernels per step
    t_dec_gpu = max(t_mem_s, t_cmp) + overhead + gpu_extra + mod.get("step_ms", 0) * 1e-3 + tiny
    t_dec = t_dec_gpu + cpu_gap
    # prefill: vLLM mixes chunks into decode steps; the others run prefill batches alone
    mixed = cfg.engine == "vllm"
    chunk = max(256, cfg.budget - B) if mixed else (cfg.budget if cfg.engine != "llamacpp" else 2048)
    avg_plen = (sum(q.plen for q in pend) / len(pend)) if pend else 0
    t_pf_tok = 2 * m.active_b * 1e9 / tp / (flops * 0.62) * (1 + avg_plen / 24000)
    time_a = n_a = 0.0
    t_a = 0.0
    if P > 0:
        c = min(chunk, P)
        t_a_gpu = max(t_mem_s, t_cmp if mixed else 0) + c * t_pf_tok + overhead + gpu_extra + tiny
        t_a = t_a_gpu + cpu_gap
        n_a = min(math.ceil(P / c), dt / t_a)
        time_a = n_a * t_a
    rest = max(0.0, dt - time_a)
    n_b = rest / t_dec if B else 0.0
    if got < 1.0:  # CFS throttling / a lost core: the engine loop stalls, the GPU waits
        stall = 1 - 0.8 * (1 - got)
        n_a, time_a, n_b = n_a * stall, time_a * stall, n_b * stall
    busy_t = n_a * (t_a - cpu_gap) + n_b * (t_dec - cpu_gap)
    busy = clamp(busy_t / dt)
    # prefill progress, FIFO
    budget_tokens = n_a * (min(chunk, P) if P else 0)
    r.c["pf_s"] += time_a * len(pend)
    for q in pend:
        if budget_tokens <= 0:
            break
        take = min(q.left, budget_tokens)
        q.left -= take
        budget_tokens -= take
        if q.left <= 0 and q.first is None:
            q.first = t + rng.uniform(0, dt * 0.3)
            if "ttft" in r.h:
                r.h["ttft"].add(max(0.005, q.first - q.arr + t_a))
    # decode tokens
    steps = (n_a if mixed else 0) + n_b
    acc_per = sum(alpha ** i for i in range(1, k + 1)) if spec else 0.0
    tok_per_step = 1 + acc_per
    tokens = 0.0
    finished = []
    for q in dec:
        want = steps * tok_per_step
        got_tok = min(q.gen - q.done, want)
        q.done += got_tok
        tokens += got_tok * q.n
        if q.done >= q.gen - 1e-9:
            finished.append(q)
    if spec and B:
        drafts = steps * B
        r.c["drafts"] += drafts
        r.c["dtok"] += drafts * k
        r.c["acc"] += drafts * acc_per
        r.acc_recent = acc_per
    r.c["gen"] += tokens
    r.c["dec_s"] += (n_b * t_dec + (n_a * t_a if mixed else time_a)) * len(dec)
    r.c["fwd_s"] += busy_t
    r.c["steps"] += n_a + n_b
    r.c["flops"] += 2 * m.active_b * 1e9 / tp * (tokens + budget_tokens)
    r.c["rbytes"] += (wbytes + kv_read) * (n_a + n_b)
    r.c["wbytes"] += kvb * (tokens + (n_a * min(chunk, P) if P else 0))
    # latency histograms
    itl_dec = t_dec / (1 if not spec else 1)
    itl_a = t_a if mixed else (time_a + t_dec)
    if "itl" in r.h and B:
        n_dec_tok = int(round(n_b * B))
        r.h["itl"].spread(rng, itl_dec, n_dec_tok)
        if n_a >= 1:
            n_a_tok = int(round((n_a if mixed else 1) * B))
            r.h["itl"].spread(rng, itl_a, n_a_tok, 0.25)
    for q in finished:
        if q.big:
            cfg.events.setdefault("big_end", t)
        r.run.remove(q)
        r.c["fin"] += 1
        e2e = (t + dt) - q.arr
        r.c["tgi_gen"] += q.gen * q.n
        r.c["tgi_in"] += q.plen
        if "e2e" in r.h:
            r.h["e2e"].add(e2e)
        if "tpot" in r.h and q.gen > 1:
            r.h["tpot"].add(max(0.001, (e2e - ((q.first or t) - q.arr)) / q.gen))
        if cfg.engine == "sglang":
            r.evictable = min(r.pool * 0.6, r.evictable + q.plen * 0.5)
    # activity of the replica's GPUs
    cmp_frac = clamp((t_cmp * n_b + (t_cmp + min(chunk, P or 1) * t_pf_tok) * n_a) / max(busy_t, 1e-9))
    mem_frac = clamp(t_mem_s * (n_a + n_b) / max(busy_t, 1e-9))
    tiny_frac = clamp(tiny * (n_a + n_b) / max(busy_t, 1e-9))
    straggle = mod.get("straggle", {})
    for g in r.gpus:
        a = acts[g]
        a.busy = busy
        a.sm = busy * (clamp(0.35 + 0.5 * max(cmp_frac, mem_frac) + (0.15 if B > 32 else 0))
                       * (1 - tiny_frac) + 0.04 * tiny_frac)
        a.occ = a.sm * 0.35
        a.tensor = busy * clamp(cmp_frac * 0.85)
        a.dram = clamp(((wbytes + kv_read) * (n_a + n_b)) / (b.hbm_tbs * 1e12 * dt))
        if not cfg.graphs:
            a.sm *= 0.55
        if bigs:
            a.sm *= 0.9
        if g in straggle or (tp > 1 and speeds[g] < max(speeds[h] for h in r.gpus) - 0.05):
            continue
        if tp > 1 and (straggle or min(speeds[h] for h in r.gpus) < max(speeds[h] for h in r.gpus) - 0.05):
            # a fast rank finishes early and waits in NCCL: kernel time stays, SMs idle
            slow = min(min(speeds[h] for h in r.gpus), min(straggle.values()) if straggle else 1.0)
            a.sm *= 0.55 + 0.4 * slow
            a.tensor *= slow
            a.dram *= 0.6 + 0.4 * slow
    return tokens


def _engine_sample(cfg, m, reps, port, pool, weights, kvb, tree, cpu_s, invol, bt, btc, host,
                   wall, mono) -> EngineSample:
    def one(r: Replica, label: str) -> dict:
        c = r.c
        used = sum((q.plen + q.done) * q.n for q in r.run)
        kw = dict(requests_running=float(sum(q.n for q in r.run) if cfg.engine != "tgi" else len(r.run)),
                  requests_waiting=float(len(r.q)))
        e = cfg.engine
        if e == "vllm":
            kw.update(generation_tokens_total=float(int(c["gen"])), prompt_tokens_total=float(int(c["prompt"])),
                      prompt_tokens_cached_total=float(int(c["cached"])), requests_finished_total=c["fin"],
                      kv_usage_ratio=round(used / r.pool, 6), preemptions_total=c["pre"],
                      num_gpu_blocks=r.pool // 16, block_size=16,
                      prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                      waiting_by_reason={"capacity": float(len(r.q)) if used > r.pool * 0.9 else 0.0,
                                         "deferred": 0.0},
                      histograms=tuple(h.sample() for h in r.h.values()))
            if cfg.spec:
                kw.update(spec_drafts_total=float(int(c["drafts"])), spec_draft_tokens_total=float(int(c["dtok"])),
                          spec_accepted_tokens_total=float(int(c["acc"])))
            if cfg.mfu:
                kw.update(flops_total=float(int(c["flops"])), read_bytes_total=float(int(c["rbytes"])),
                          write_bytes_total=float(int(c["wbytes"])))
        elif e == "sglang":
            kw.update(generation_tokens_total=float(int(c["gen"])), prompt_tokens_total=float(int(c["prompt"])),
                      prompt_tokens_cached_total=float(int(c["cached"])), requests_finished_total=c["fin"],
                      kv_usage_ratio=round(used / r.pool, 6), kv_used_tokens=float(used),
                      kv_free_tokens=float(max(0, r.pool - used - int(r.evictable))),
                      kv_evictable_tokens=float(int(r.evictable)), retracted_requests_total=c["retr"],
                      retracted_input_tokens_total=c["retr_tok"], forward_seconds_total=round(c["fwd_s"], 4),
                      histograms=tuple(h.sample() for h in r.h.values()))
            if cfg.spec:
                k = cfg.spec["k"]
                kw.update(spec_accept_ratio=round(r.acc_recent / k, 4), spec_accept_length=round(1 + r.acc_recent, 4))
        elif e == "tgi":
            kw.update(generation_tokens_total=float(int(c["tgi_gen"])), prompt_tokens_total=float(int(c["tgi_in"])),
                      requests_finished_total=c["fin"], histograms=tuple(h.sample() for h in r.h.values()))
        else:
            kw.update(generation_tokens_total=float(int(c["gen"])), prompt_tokens_total=float(int(c["prompt"])),
                      prompt_tokens_cached_total=float(int(c["cached"])),
                      prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                      decode_steps_total=float(int(c["steps"])))
            if cfg.spec:
                kw.update(spec_drafts_total=float(int(c["drafts"])), spec_draft_tokens_total=float(int(c["dtok"])),
                          spec_accepted_tokens_total=float(int(c["acc"])))
        return kw

    common = dict(kind=cfg.engine, url=f"http://127.0.0.1:{port}/metrics",
                  model=m.name if cfg.engine != "llamacpp" else "",
                  tensor_parallel=cfg.tp, data_parallel=cfg.dp, pids=tree,
                  cache_dtype="auto" if cfg.engine == "vllm" else "",
                  time_wall_s=round(wall - 0.02, 6), time_mono_s=round(mono - 0.02, 6))
    if cfg.engine in ("vllm", "sglang"):
        common["kv_pool_tokens"] = pool
    cpu = dict(cpu_s=round(cpu_s, 2), ctx_involuntary=invol, busiest_thread=bt,
               busiest_thread_cpu_s=btc, cpu_quota_cores=cfg.quota if cfg.quota else None,
               cpu_periods=host.periods if cfg.quota else None,
               cpu_throttled_periods=host.throttled if cfg.quota else None)
    parts = [one(r, f"engine={r.idx}") for r in reps]
    if len(reps) == 1:
        return EngineSample(**common, **cpu, **parts[0])
    total = {}
    for kw in parts:
        for k, v in kw.items():
            if k == "histograms":
                continue
            if isinstance(v, float) and k not in ("kv_usage_ratio", "spec_accept_ratio", "spec_accept_length"):
                total[k] = (total.get(k) or 0.0) + v
            elif k in ("kv_usage_ratio", "spec_accept_ratio", "spec_accept_length"):
                total[k] = round(sum(p[k] for p in parts) / len(parts), 6)
            elif k not in total:
                total[k] = v
    hists = []
    for i, h in enumerate(parts[0].get("histograms", ())):
        cum = [sum(p["histograms"][i].cumulative[j] for p in parts) for j in range(len(h.cumulative))]
        hists.append(type(h)(h.name, h.upper_bounds, tuple(cum),
                             sum(p["histograms"][i].count for p in parts),
                             round(sum(p["histograms"][i].sum for p in parts), 6)))
    total["histograms"] = tuple(hists)
    label = "engine" if cfg.engine == "vllm" else "dp_rank"
    replicas = tuple(EngineSample(**{**common, "pids": ()}, replica=f"{label}={i}", **kw)
                     for i, kw in enumerate(parts))
    return EngineSample(**common, **cpu, **total, replicas=replicas)
