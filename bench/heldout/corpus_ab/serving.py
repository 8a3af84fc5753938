"""Serving engines (vLLM, SGLang, TGI, llama.cpp): a request-level fluid simulation.

Per tick and per replica: requests arrive (Poisson at the traffic profile's rate), are
admitted while the KV pool has room (else they wait; when running requests outgrow the
pool the newest is preempted / retracted), prefill in chunks beside decode, and decode at
the step time the model, the batch's context and the board give:
  decode step = max(weight + KV bytes / HBM bandwidth, FLOPs / tensor peak x clock)
                + fixed per-layer cost (+ TP all-reduce) + host gap per step,
with speculative decoding, n>1 / logprobs work, a co-tenant's time slices, CPU starvation
and launch-thread deschedules modifying it.  GPU activity, engine counters and the
engine's histograms (its own bucket layouts) all come from those steps.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineHistogram, EngineSample

from .common import (EPOCH0, GiB, MiB, Act, Clock, Host, Pin, Proc, base_sources, engine_status, fail,
                     launch_hist, make_boards, rng_for)

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
            10000.0, 20000.0, 50000.0)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
          0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
          200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
            20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0)
TGI_DUR = tuple(round(0.0001 * 1.5 ** (k + 1), 10) for k in range(35))  # TGI's duration buckets


class Hist:
    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.counts = [0.0] * len(bounds)
        self.n = 0.0
        self.sum = 0.0

    def add(self, value: float, count: float = 1, rng=None, spread: float = 0.0) -> None:
        if count <= 0:
            return
        parts = [(value, count)]
        if spread and rng is not None and count >= 3:
            c = int(count)
            w = [c // 5] * 5
            for i in range(c - sum(w)):
                w[rng.randrange(5)] += 1
            parts = [(value * math.exp(spread * z), wi) for z, wi in
                     zip((-1.2, -0.5, 0.0, 0.5, 1.3), w) if wi]
        for v, c in parts:
            i = bisect.bisect_left(self.bounds, v)
            if i < len(self.bounds):
                self.counts[i] += c
            self.n += c
            self.sum += v * c

    def sample(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts:
            run += c
            cum.append(run)
        return EngineHistogram(self.name, self.bounds, tuple(cum), self.n, round(self.sum, 6))


@dataclass(frozen=True)
class Model:
    name: str
    params: float  # active parameters per token (MoE: active)
    weights: float  # bytes, all ranks together
    kv_tok: float  # KV bytes per token, all ranks together
    layers: int
    vocab: int = 128256
    dtype: str = "bf16"


LLAMA8B = Model("meta-llama/Llama-3.1-8B-Instruct", 8.0e9, 16.06e9, 131072, 32)
LLAMA8B_AWQ = Model("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", 8.0e9, 5.7e9, 131072, 32)
LLAMA70B_FP8 = Model("neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", 70.6e9, 71.0e9, 327680, 80,
                     dtype="fp8")
QWEN32B_AWQ = Model("Qwen/Qwen2.5-32B-Instruct-AWQ", 32.8e9, 19.3e9, 262144, 64, 152064)
QWEN7B = Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 15.2e9, 57344, 28, 152064)
QWEN_CODER14B = Model("Qwen/Qwen2.5-Coder-14B-Instruct", 14.8e9, 29.5e9, 196608, 48, 152064)
QWEN05B = Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.99e9, 12288, 24, 151936)
MIXTRAL = Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 12.9e9, 93.4e9, 131072, 32, 32000)
QWEN3_MOE = Model("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", 22e9, 236e9, 192512, 94, 151936,
                  "fp8")
LLAMA8B_LONG = Model("gradientai/Llama-3-8B-Instruct-Gradient-1048k", 8.0e9, 16.06e9, 131072, 32)
MISTRAL7B_GPTQ = Model("TheBloke/Mistral-7B-Instruct-v0.2-GPTQ", 7.2e9, 4.2e9, 131072, 32, 32000)
GGUF8B = Model("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", 8.0e9, 4.92e9, 131072, 32)


def const(v):
    return lambda t: v


def window(t0: float, t1: float, on, off=None):
    """A profile that is ``on`` in [t0, t1) and ``off`` elsewhere (None: unchanged)."""
    return lambda t: on if t0 <= t < t1 else off


@dataclass
class Serve:
    name: str
    engine: str  # vllm | sglang | tgi | llamacpp
    model: Model
    board: str
    tp: int = 1
    dp: int = 1
    minutes: float = 8.0
    rate: Callable = const(4.0)  # requests/s into the whole endpoint
    prompt: Callable = lambda t, r: int(r.lognormvariate(6.5, 0.8))  # tokens
    out: Callable = lambda t, r: int(r.lognormvariate(5.3, 0.7)) + 4
    cached: float = 0.3
    gmu: float = 0.9
    max_seqs: int = 256
    chunk: int = 8192
    graphs: bool = True
    cpu_step: float = 0.004  # host time per step (scheduling, sampling, detokenize)
    overlap: float = 0.75  # share of the host time hidden behind the GPU
    spec_k: int = 0
    spec_accept: Callable = const(0.0)  # per-token acceptance probability
    draft_cost: float = 0.08  # per drafted token, as a share of a target step
    specials: tuple = ()  # (t, n, logprobs, prompt, max_tokens, count)
    cpu_share: Callable = const(1.0)  # share of the CPU the engine's threads get
    intruder_cores: Callable = const(0.0)  # other runnable threads on the host
    quota: float | None = None
    jitter: Callable = const((0.0, 0.0))  # (share of launches descheduled, ms)
    tenant: Callable = lambda t, g: None  # another process's Act share on GPU g
    forced: Callable = lambda t, g: ((), 1.0)
    cooling: Callable = lambda t, g: 1.0
    power_limit: float | None = None
    down: tuple = ()  # (t0, t1): engine restarting
    loading: float = 0.0  # seconds of start-up at the trace's start (load, graph capture)
    ebpf: bool = False
    psi: bool = True
    cpus: int = 64
    host_load: float = 2.0
    pod: str = ""
    lora: tuple = ()
    max_lora: int | None = None
    tick: float = 1.0
    start: float = 0.0
    extra_procs: tuple = ()  # (gpu, name, cmdline, mem, user)
    new_metrics: bool = True  # vLLM 0.2x+: flops/bytes counters, kv_cache_size_tokens
    seed: str = ""
    ctx_slo: float = 0.0


class Req:
    __slots__ = ("arr", "prompt", "out", "done", "left", "n", "lp", "adm", "first", "max_tokens")

    def __init__(self, arr, prompt, out, n=1, lp=0, max_tokens=None):
        self.arr, self.prompt, self.out, self.n, self.lp = arr, prompt, out, n, lp
        self.done, self.left, self.adm, self.first = 0, prompt, None, None
        self.max_tokens = max_tokens or out


class Replica:
    def __init__(self, cfg: Serve, idx: int, gpus: list, pool_tokens: int, rng):
        self.cfg, self.idx, self.gpus, self.pool, self.rng = cfg, idx, gpus, pool_tokens, rng
        self.reset()

    def reset(self):
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, pre_tok=0.0, drafts=0.0,
                      dtok=0.0, acc=0.0, pf_s=0.0, dc_s=0.0, fwd=0.0, steps=0.0, flops=0.0,
                      rd=0.0, wr=0.0)
        e = self.cfg.engine
        if e == "sglang":
            self.h = [Hist("ttft", SG_TTFT), Hist("itl", SG_ITL), Hist("e2e", SG_E2E),
                      Hist("queue", SG_QUEUE)]
        elif e == "tgi":
            self.h = [Hist("tpot", TGI_DUR), Hist("e2e", TGI_DUR), Hist("queue", TGI_DUR)]
        elif e == "vllm":
            self.h = [Hist("ttft", VLLM_TTFT), Hist("itl", VLLM_ITL), Hist("tpot", VLLM_ITL),
                      Hist("e2e", VLLM_E2E), Hist("queue", VLLM_E2E), Hist("params_n", VLLM_N),
                      Hist("params_max_tokens", VLLM_TOK),
                      Hist("max_generation_tokens", VLLM_TOK)]
        else:
            self.h = []
        self.hd = {h.name: h for h in self.h}
        self.spec_acc_gauge = 0.0

    def used_tokens(self) -> int:
        bs = 16 if self.cfg.engine == "vllm" else 1
        return sum(-(-(r.prompt - r.left + r.done + 1) // bs) * bs * r.n for r in self.running)

    def obs(self, name, v, c=1, spread=0.0):
        h = self.hd.get(name)
        if h is not None:
            h.add(v, c, self.rng, spread)


def simulate(cfg: Serve):
    """Yield one frame per tick."""
    r = rng_for(cfg.name + cfg.seed)
    m = cfg.model
    ngpu = cfg.tp * cfg.dp
    boards = make_boards(cfg.board, ngpu, r, power_limit=cfg.power_limit)
    spec = boards[0].s
    host = Host(cfg.cpus, r, psi=cfg.psi, base_load=cfg.host_load)
    w_gpu = m.weights / cfg.tp
    kv_gpu = m.kv_tok / cfg.tp
    act_gpu = (1.2 + 0.1 * cfg.chunk / 1024) * GiB
    pool_bytes = max(0.5 * GiB, spec.mem_total * cfg.gmu - w_gpu - act_gpu - 0.6 * GiB)
    block = 16 if cfg.engine == "vllm" else 1
    pool_tokens = int(pool_bytes // kv_gpu) // 16 * 16
    if cfg.engine in ("llamacpp", "tgi"):
        pool_tokens = min(pool_tokens, 8 * 32768)
        pool_bytes = pool_tokens * kv_gpu
    reps = [Replica(cfg, i, list(range(i * cfg.tp, (i + 1) * cfg.tp)), pool_tokens, r)
            for i in range(cfg.dp)]
    clock = Clock(EPOCH_START(cfg), cfg.tick, r)
    port = {"vllm": 8000, "sglang": 30000, "tgi": 8080, "llamacpp": 8081}[cfg.engine]
    pod = cfg.pod
    cgroup = f"/kubepods.slice/kubepods-burstable.slice/cri-containerd-{r.getrandbits(48):012x}.scope" \
        if pod else f"/system.slice/{cfg.engine}-{cfg.name[:12]}.service"
    container = f"containerd:{r.getrandbits(48):012x}" if pod else ""
    gen = [0]
    procs: list[Proc] = []
    pin: Pin | None = None

    def spawn(t):
        gen[0] += 1
        base_pid = 2000 + r.randrange(40000)
        cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {m.name} "
                       f"--tensor-parallel-size {cfg.tp} --data-parallel-size {cfg.dp} "
                       f"--gpu-memory-utilization {cfg.gmu} --max-num-seqs {cfg.max_seqs}"
                       + (" --enforce-eager" if not cfg.graphs else "")
                       + (f" --speculative-config {{\"num_speculative_tokens\":{cfg.spec_k}}}"
                          if cfg.spec_k else "")
                       + (f" --enable-lora --max-loras {cfg.max_lora}" if cfg.lora else ""),
               "sglang": f"python3 -m sglang.launch_server --model-path {m.name} --tp {cfg.tp} "
                         f"--dp {cfg.dp} --mem-fraction-static {cfg.gmu} --enable-metrics",
               "tgi": f"text-generation-launcher --model-id {m.name} --num-shard {cfg.tp}",
               "llamacpp": f"llama-server -m /models/{m.name.split('/')[-1]}.gguf -ngl 99 "
                           f"--metrics -c 32768 --port {port}"}[cfg.engine]
        procs.clear()
        names = {"vllm": "VLLM::Worker", "sglang": "sglang::scheduler", "tgi": "text-generation-server",
                 "llamacpp": "llama-server"}
        for g in range(ngpu):
            procs.append(Proc(base_pid + 10 + g, g, names[cfg.engine] if (cfg.tp > 1 or cfg.dp > 1)
                              else ("python3" if cfg.engine in ("vllm", "sglang") else names[cfg.engine]),
                              cmd, "svc-inference", t, 0, 0.0, 3 * GiB, container, pod, cgroup,
                              base_pid))
        roots = (base_pid,)
        tree = (base_pid, *[p.pid for p in procs])
        threads = [[base_pid, base_pid, "api_server", 0.0], [base_pid + 10, base_pid + 10,
                   "EngineCore" if cfg.engine == "vllm" else "scheduler", 0.0],
                   [base_pid + 3, base_pid, "detokenizer", 0.0],
                   [base_pid + 11 + ngpu, base_pid + 10, "pt_omp", 0.0]]
        return Pin(cmd.split(" --")[0][-60:], roots, tree, tuple(range(min(cfg.cpus, 32))),
                   threads, (port,), cfg.quota)

    pin = spawn(EPOCH_START(cfg))
    load_until = cfg.loading
    ticks = int(cfg.minutes * 60 / cfg.tick)
    for k in range(ticks):
        t = k * cfg.tick
        twall = EPOCH_START(cfg) + t
        down = any(a <= t < b for a, b in cfg.down)
        if down:
            if procs:
                procs.clear()
                for rep in reps:
                    rep.reset()
                restart_at = [b for a, b in cfg.down if a <= t < b][0]
                load_until = restart_at + 35
            acts = [Act(has_context=False) for _ in boards]
            hs = host.sample(cfg.host_load, 1 + cfg.intruder_cores(t))
            parts = dict(gpus=tuple(b.sample(a) for b, a in zip(boards, acts)), processes=(),
                         engine=None, host=hs, pinned=None)
            src = base_sources(r)
            src["engine"] = fail(f"http://127.0.0.1:{port}/metrics: connection refused")
            src["pin"] = fail("no process matches the pin (it exited)")
            f = clock.frame(k, parts, src)
            if f:
                yield f
            continue
        if not procs:
            pin = spawn(twall)
        # ----------------------------------------------------- start-up: load, capture
        starting = t < load_until
        slowest = min(b.clock_f for b in boards)
        share = max(0.05, cfg.cpu_share(t))
        jfrac, jms = cfg.jitter(t)
        acts, eng_cpu, launches, invol = [], 0.0, 0, 0.0
        if starting:
            into = t - (load_until - (cfg.loading if k == 0 or load_until == cfg.loading else 35))
            span = cfg.loading if load_until == cfg.loading else 35
            frac = max(0.0, min(1.0, into / (span * 0.7)))
            capture = into > span * 0.7
            for b in boards:
                a = Act(busy=0.6 if capture else 0.0, sm=0.05 if capture else 0.0,
                        tensor=0.0, dram=0.05 if capture else 0.0,
                        mem_used=int((w_gpu * frac) + (pool_bytes + act_gpu if capture else 0)),
                        pattern="bursty", pcie_rx=1800.0 * (not capture))
                acts.append(a)
            eng_cpu = 1.2
            engine_up = capture
        else:
            engine_up = True
            for rep in reps:
                eng_cpu += tick_replica(rep, cfg, t, boards, slowest, share, (jfrac, jms), acts
                                        if False else None)
            acts = [rep_acts for rep in reps for rep_acts in rep.acts]
            launches = sum(rep.launches for rep in reps)
            invol = sum(rep.invol for rep in reps)
            for b, a in zip(boards, acts):
                a.mem_used = int(w_gpu + pool_bytes + act_gpu + 0.55 * GiB)
        for g, (b, a) in enumerate(zip(boards, acts)):
            fr, fc = cfg.forced(t, g)
            a.forced, a.forced_clock, a.cooling = fr, fc, cfg.cooling(t, g)
            ten = cfg.tenant(t, g)
            if ten is not None:
                a.busy = min(1.0, a.busy + ten.busy * (1 - a.busy * 0.5))
                a.sm = min(a.busy, a.sm + ten.sm)
                a.tensor = min(a.sm, a.tensor + ten.tensor)
                a.dram = min(1.0, a.dram + ten.dram)
        # ----------------------------------------------------- host side
        demand = eng_cpu / share
        throttled = 0
        if cfg.quota is not None and demand > cfg.quota * 0.85:
            throttled = int(round(10 * min(1.0, (demand - cfg.quota * 0.85) / demand * 3)))
        intr = cfg.intruder_cores(t)
        hs = host.sample(eng_cpu + min(intr, cfg.cpus - eng_cpu), eng_cpu + 2 + intr)
        api = eng_cpu * 0.25
        pin.add({"api_server": api, "EngineCore": eng_cpu * 0.55, "scheduler": eng_cpu * 0.55,
                 "detokenizer": eng_cpu * 0.12, "pt_omp": eng_cpu * 0.08},
                invol + r.randrange(3), 40 + launches / 50)
        pin.throttled += throttled
        if cfg.ebpf:
            hs = dataclasses.replace(hs, offcpu_switches=int(invol + r.randrange(4)))
        for p in procs:
            p.cpu_s += eng_cpu / len(procs)
            p.mem = acts[p.gpu].mem_used
            p.sm_util = round(acts[p.gpu].sm * 100) if cfg.board.startswith(("H1", "H2")) \
                else round(acts[p.gpu].busy * 100)
            p.mem_util = round(acts[p.gpu].dram * 100)
        proc_samples = [p.sample() for p in procs]
        for g, name, cmd, mem, user in cfg.extra_procs:
            proc_samples.append(Proc(90000 + g * 7 + len(name), g, name, cmd, user,
                                     EPOCH_START(cfg) - 7200, mem, 50.0 + t * 0.01,
                                     GiB).sample())
            acts[g].mem_used += mem
        for g in range(ngpu):
            ten = cfg.tenant(t, g)
            if ten is not None:
                proc_samples.append(Proc(71000 + g, g, "python", ten.label, "researcher",
                                         EPOCH_START(cfg) + 60, int(ten.mem_used), 10 + t * 0.9,
                                         6 * GiB, pod=ten.pod).sample())
                acts[g].mem_used += ten.mem_used
        gpus = tuple(b.sample(a) for b, a in zip(boards, acts))
        eng = None
        if engine_up:
            eng = engine_sample(cfg, reps, r, twall, pin, pool_tokens, pool_bytes, w_gpu, kv_gpu,
                                port, eng_cpu, throttled, procs, starting)
        launch = ()
        if cfg.ebpf and not starting:
            lpid = procs[0].pid
            hs_ = []
            api_name = "cudaGraphLaunch" if cfg.graphs else "cudaLaunchKernel"
            per = 1 if cfg.graphs else m.layers * 9
            steps = sum(rep.c_steps for rep in reps)
            for api, calls, med in ((api_name, int(steps * per), 4.5 if not cfg.graphs else 9.0),
                                    ("cudaMemcpyAsync", int(steps * 2), 6.0),
                                    ("cuLaunchKernel", int(steps * (2 if cfg.graphs else m.layers * 4)), 3.8)):
                h = launch_hist(api, lpid, calls, r, med, jfrac, jms)
                if h:
                    hs_.append(h)
            launch = tuple(hs_)
        slow = 0.0
        if share < 0.6 and r.random() < 0.15:
            slow = 0.5 + r.random()
        src = base_sources(r, f"uprobes on libcudart.so.12, libcuda.so.1 (pid {procs[0].pid})"
                           if cfg.ebpf else None)
        src["engine"] = engine_status(r, eng, slow) if engine_up else \
            fail(f"http://127.0.0.1:{port}/metrics: connection refused")
        if eng is not None and r.random() < 0.01:  # a late scrape: last reading carried
            src["engine"] = type(src["engine"])(True, None, None, 1.4, 2.0, 0.035)
        parts = dict(gpus=gpus, processes=tuple(proc_samples), engine=eng, host=hs,
                     pinned=pin.sample(hs), launch=launch)
        f = clock.frame(k, parts, src)
        if f:
            yield f


def EPOCH_START(cfg: Serve) -> float:
    from .common import EPOCH0
    return EPOCH0 + cfg.start


def tick_replica(rep: Replica, cfg: Serve, t: float, boards, slowest: float, share: float,
                 jit, _unused) -> float:
    """Advance one replica by one tick; sets rep.acts, returns its CPU-seconds."""
    r, m, dt = rep.rng, cfg.model, cfg.tick
    spec = boards[0].s
    rate = cfg.rate(t) / cfg.dp
    # Poisson arrivals
    n_new, x = 0, r.expovariate(1.0) if rate > 0 else 1e9
    while rate > 0 and x < rate * dt:
        n_new += 1
        x += r.expovariate(1.0)
    for _ in range(n_new):
        rep.waiting.append(Req(t + r.random() * dt, max(8, cfg.prompt(t, r)), max(1, cfg.out(t, r))))
    for s in cfg.specials:
        st, n, lp, pr, mt, cnt = s
        if st <= t < st + dt and (rep.idx == 0):
            for _ in range(cnt):
                rep.waiting.append(Req(t, pr, mt, n, lp, mt))
    # admission (FIFO) while slots and KV allow
    used = rep.used_tokens()
    seqs = sum(q.n for q in rep.running)
    while rep.waiting:
        q = rep.waiting[0]
        need = (q.prompt + 16) * q.n
        if seqs + q.n > cfg.max_seqs or used + need > rep.pool * 0.97:
            break
        rep.waiting.pop(0)
        q.adm = t + r.random() * dt * 0.5
        rep.obs("queue", max(0.0005, q.adm - q.arr))
        cached = int(q.prompt * cfg.cached * r.random() * 2) if cfg.cached else 0
        cached = min(cached, q.prompt - 1)
        rep.c["cached"] += cached
        rep.c["prompt"] += q.prompt
        q.left = q.prompt - cached
        rep.running.append(q)
        used += need
        seqs += q.n
    # ------------------------------------------------------------- step time
    tps = 1.0
    acc = max(0.0, min(0.97, cfg.spec_accept(t))) if cfg.spec_k else 0.0
    if cfg.spec_k:
        tps = (1 - acc ** (cfg.spec_k + 1)) / (1 - acc)
    eff_bw = spec.bw * 0.82
    eff_fl = spec.tflops * 1e12 * 0.55 * slowest * (2.0 if m.dtype == "fp8" else 1.0)
    dec = [q for q in rep.running if q.left <= 0]
    pre = [q for q in rep.running if q.left > 0]
    B = sum(q.n for q in dec)
    ctx = sum(q.n * (q.prompt + q.done) for q in dec)
    kv_gpu = m.kv_tok / cfg.tp
    w_gpu = m.weights / cfg.tp
    t_mem = (w_gpu * (1.0 if B else 0) + ctx * kv_gpu) / eff_bw / (0.85 + 0.15 * slowest)
    t_cmp = 2 * m.params / cfg.tp * B * (cfg.spec_k + 1 if cfg.spec_k else 1) / eff_fl
    t_fix = m.layers * (6e-6 if cfg.graphs else 42e-6) + (m.layers * 2 * 14e-6 if cfg.tp > 1 else 0)
    t_dec = (max(t_mem, t_cmp) + t_fix) * (1 + cfg.draft_cost * cfg.spec_k) if B else 0.0
    big = [q for q in dec if q.n > 1 or q.lp]
    if big:
        cfg.__dict__.setdefault("_on", []).append(t)
    t_extra = sum(q.n * (m.vocab / 128000) * (0.006 if q.lp else 0.0004) for q in big)
    cpu_extra = sum(q.n * q.lp * 22e-6 for q in big)
    ten = [cfg.tenant(t, g) for g in rep.gpus]
    slice_f = 1 + max((a.busy * 0.9 for a in ten if a is not None), default=0.0)
    t_gpu_dec = (t_dec + t_extra) * slice_f
    host_step = (cfg.cpu_step + cpu_extra) / share
    jfrac, jms = jit
    calls = 3 if cfg.graphs else m.layers * 9
    stall = calls * jfrac * jms / 1000.0
    gap = host_step * (1 - cfg.overlap) + stall
    if share < 1:
        gap += host_step * cfg.overlap * (1 - share)
    # prefill: chunked beside decode (vLLM); SGLang/TGI/llama.cpp run prefill batches
    pre_tokens = sum(q.left * q.n ** 0 for q in pre)
    per_tok = 2 * m.params / cfg.tp / eff_fl
    avg_ctx = (sum(q.prompt for q in pre) / len(pre)) if pre else 0
    attn = 4 * m.layers * (m.params / m.layers / 12) ** 0.5 * avg_ctx / 2 / (eff_fl * 0.7) / cfg.tp
    t_ptok = (per_tok + attn) * slice_f
    budget = dt
    room = max(1, cfg.chunk - B)
    n_mixed = math.ceil(pre_tokens / room) if pre_tokens else 0
    t_mixed = t_gpu_dec + min(room, pre_tokens) * t_ptok + gap + (w_gpu / eff_bw if not B else 0)
    if n_mixed * t_mixed > budget:
        n_mixed_f = budget / t_mixed
    else:
        n_mixed_f = n_mixed
    pf_done = min(pre_tokens, n_mixed_f * room)
    left_time = max(0.0, budget - n_mixed_f * t_mixed)
    t_pure = t_gpu_dec + gap
    n_pure = left_time / t_pure if B and t_pure > 0 else 0.0
    steps = n_mixed_f + n_pure
    # ------------------------------------------------------------- progress
    pf_left = pf_done
    for q in pre:
        if pf_left <= 0:
            break
        take = min(q.left, pf_left)
        q.left -= take
        pf_left -= take
        if q.left <= 0:
            frac = min(1.0, (pf_done - pf_left) / max(1, pf_done))
            q.first = t + frac * n_mixed_f * t_mixed
            ttft = max(0.004, q.first - q.arr + t_ptok * 64)
            rep.obs("ttft", ttft)
            rep.c["pf_s"] += max(0.002, q.first - q.adm)
            q.done = 1
            rep.c["gen"] += q.n
    finished = []
    accepted = 0.0
    for q in dec:
        adv = steps * tps
        got = min(adv, q.out - q.done)
        q.done += got
        rep.c["gen"] += got * q.n
        accepted += (tps - 1) * steps * q.n * (got / adv if adv else 0)
        if q.done >= q.out:
            finished.append(q)
    if B and steps:
        if n_mixed_f:
            rep.obs("itl", t_mixed / tps, B * n_mixed_f, 0.12)
        if n_pure:
            rep.obs("itl", t_pure / tps, B * n_pure, 0.12)
    for q in finished:
        rep.running.remove(q)
        end = t + dt * r.random()
        rep.obs("e2e", max(0.01, end - q.arr))
        per = (end - (q.first or q.adm or t)) / max(1, q.out - 1)
        rep.obs("tpot", max(0.0005, per))
        rep.obs("params_n", q.n)
        rep.obs("params_max_tokens", q.max_tokens)
        rep.obs("max_generation_tokens", q.out)
        rep.c["dc_s"] += max(0.0, end - (q.first or end))
        rep.c["fin"] += 1
    # preemption when running requests outgrow the pool (newest first, recompute)
    while rep.running and rep.used_tokens() > rep.pool:
        q = rep.running.pop()
        rep.c["pre"] += 1
        rep.c["pre_tok"] += q.prompt
        q.left, q.done = q.prompt, 0
        rep.waiting.insert(0, q)
    if cfg.spec_k and steps:
        rep.c["drafts"] += steps * B
        rep.c["dtok"] += steps * B * cfg.spec_k
        rep.c["acc"] += accepted
        rep.spec_acc_gauge = acc + r.gauss(0, 0.02)
    rep.c["steps"] += steps
    rep.c_steps = steps
    rep.c["fwd"] += n_mixed_f * (t_mixed - gap) + n_pure * t_gpu_dec
    # ------------------------------------------------------------- GPU activity
    g_time_dec = steps * t_gpu_dec
    g_time_pre = pf_done * t_ptok
    busy = min(1.0, (g_time_dec + g_time_pre) / dt)
    fill = min(0.92, 0.35 + 0.12 * math.log10(max(1e8, m.params / cfg.tp)) - 0.9
               + 0.3 * min(1.0, B / 64))
    fill = max(0.08, fill) if m.params > 1e9 else 0.08
    flops = steps * 2 * m.params / cfg.tp * B * (cfg.spec_k + 1 if cfg.spec_k else 1) \
        + pf_done * 2 * m.params / cfg.tp
    peak = spec.tflops * 1e12 * slowest * (2.0 if m.dtype == "fp8" else 1.0)
    tensor = min(busy, flops / peak / dt * 1.05)
    sm = min(busy, (g_time_dec / slice_f * fill + g_time_pre / slice_f * 0.93) / dt)
    bytes_ = steps * (w_gpu + ctx * kv_gpu) + (n_mixed_f * w_gpu if not B else 0)
    dram = min(0.97, bytes_ / spec.bw / dt)
    rep.c["flops"] += flops
    rep.c["rd"] += bytes_
    rep.c["wr"] += (steps * B + pf_done) * kv_gpu
    rep.acts = []
    for j, g in enumerate(rep.gpus):
        own = boards[g].clock_f
        wait = max(0.0, 1 - own / slowest) if cfg.tp > 1 else 0.0  # never: slowest is min
        lag = max(0.0, (own - slowest) / own) if cfg.tp > 1 else 0.0
        a = Act(busy=busy, sm=sm * (1 - 0.7 * lag), tensor=tensor * (1 - lag), dram=dram,
                occ=sm * (0.3 + 0.2 * (g_time_pre > g_time_dec)),
                nvlink=(steps * B * 8192 * 2 * m.layers * 2 / MiB + pf_done * 8192 * 4 / MiB)
                if cfg.tp > 1 else 0.0)
        del wait
        rep.acts.append(a)
    rep.invol = steps * (1 - share) * 3 + steps * jfrac * calls * 0.5
    rep.launches = steps * calls
    api_cpu = n_new * 0.004 + sum(q.n for q in dec) * steps * tps * 25e-6
    return min(steps * (cfg.cpu_step + cpu_extra), dt * share) + api_cpu * share + 0.05


def engine_sample(cfg: Serve, reps, r, twall, pin: Pin, pool_tokens, pool_bytes, w_gpu, kv_gpu,
                  port, eng_cpu, throttled, procs, starting) -> EngineSample:
    m = cfg.model

    def one(rep: Replica | None, label: str = "") -> dict:
        rs = reps if rep is None else [rep]
        c = {k: sum(x.c[k] for x in rs) for k in reps[0].c}
        run = sum(len(x.running) for x in rs)
        wait = sum(len(x.waiting) for x in rs)
        used = sum(x.used_tokens() for x in rs)
        pool = pool_tokens * len(rs)
        hists = []
        for i, h in enumerate(reps[0].h):
            if rep is None and len(reps) > 1:
                agg = Hist(h.name, h.bounds)
                for x in rs:
                    agg.counts = [a + b for a, b in zip(agg.counts, x.h[i].counts)]
                    agg.n += x.h[i].n
                    agg.sum += x.h[i].sum
                hists.append(agg.sample())
            else:
                hists.append(rs[0].h[i].sample())
        d = dict(kind=cfg.engine, model=m.name, requests_running=float(run),
                 requests_waiting=float(wait), histograms=tuple(hists), replica=label)
        e = cfg.engine
        gen, prompt = round(c["gen"]), round(c["prompt"])
        if e == "vllm":
            d.update(generation_tokens_total=float(gen), prompt_tokens_total=float(prompt),
                     prompt_tokens_cached_total=float(round(c["cached"])),
                     requests_finished_total=c["fin"], kv_usage_ratio=min(1.0, used / pool),
                     preemptions_total=c["pre"],
                     prefill_seconds_total=round(c["pf_s"], 3), decode_seconds_total=round(c["dc_s"], 3),
                     waiting_by_reason={"capacity": float(wait if used > pool * 0.9 else 0),
                                        "deferred": 0.0})
            if cfg.new_metrics:
                d.update(flops_total=float(round(c["flops"])), read_bytes_total=float(round(c["rd"])),
                         write_bytes_total=float(round(c["wr"])))
            if cfg.spec_k:
                d.update(spec_drafts_total=float(round(c["drafts"])),
                         spec_draft_tokens_total=float(round(c["dtok"])),
                         spec_accepted_tokens_total=float(round(c["acc"])))
        elif e == "sglang":
            evict = int(min(pool - used, c["cached"] * 0.02 + pool * 0.05))
            d.update(generation_tokens_total=float(gen), prompt_tokens_total=float(prompt),
                     prompt_tokens_cached_total=float(round(c["cached"])),
                     requests_finished_total=c["fin"], kv_usage_ratio=round(used / pool, 4),
                     retracted_requests_total=c["pre"], retracted_input_tokens_total=c["pre_tok"],
                     kv_used_tokens=float(used), kv_free_tokens=float(max(0, pool - used - evict)),
                     kv_evictable_tokens=float(max(0, evict)), forward_seconds_total=round(c["fwd"], 3))
            if cfg.spec_k:
                acc = sum(x.spec_acc_gauge for x in rs) / len(rs)
                k = cfg.spec_k
                d.update(spec_accept_ratio=max(0.0, acc),
                         spec_accept_length=(1 - max(acc, 0.01) ** (k + 1)) / (1 - max(acc, 0.01)))
        elif e == "tgi":
            d.update(generation_tokens_total=float(gen), prompt_tokens_total=float(prompt),
                     requests_finished_total=c["fin"])
        else:
            d.update(generation_tokens_total=float(gen), prompt_tokens_total=float(prompt),
                     prompt_tokens_cached_total=float(round(c["cached"])),
                     prefill_seconds_total=round(c["pf_s"], 3), decode_seconds_total=round(c["dc_s"], 3),
                     decode_steps_total=float(round(c["steps"])))
            if cfg.spec_k:
                d.update(spec_drafts_total=float(round(c["drafts"])),
                         spec_draft_tokens_total=float(round(c["dtok"])),
                         spec_accepted_tokens_total=float(round(c["acc"])))
        return d

    top = one(None)
    replicas = ()
    if cfg.dp > 1 and cfg.engine in ("vllm", "sglang"):
        lab = "engine" if cfg.engine == "vllm" else "dp_rank"
        replicas = tuple(EngineSample(**{**one(x, f"{lab}={x.idx}"),
                                         "histograms": tuple(h for h in one(x)["histograms"]
                                                             if h.name in ("ttft", "itl"))},
                                      gpu_indices=tuple(x.gpus))
                         for x in reps)
    bt = pin.busiest()
    extra = {}
    if cfg.engine == "vllm":
        extra = dict(num_gpu_blocks=pool_tokens // 16, block_size=16, cache_dtype="auto" if
                     m.dtype != "fp8" else "fp8", kv_pool_tokens=pool_tokens if cfg.new_metrics else None,
                     kv_pool_bytes=int(pool_bytes) if cfg.new_metrics else None)
        if cfg.lora:
            nrun = min(len(cfg.lora), max(0, int(top["requests_running"] // 3)))
            extra.update(lora_running=tuple(cfg.lora[:nrun]), lora_max=cfg.max_lora,
                         lora_waiting=tuple(cfg.lora[nrun:nrun + (1 if top["requests_waiting"] else 0)]))
    elif cfg.engine == "sglang":
        extra = dict(kv_pool_tokens=pool_tokens, block_size=1)
    return EngineSample(
        **top, url=f"http://127.0.0.1:{port}/metrics", tensor_parallel=cfg.tp, data_parallel=cfg.dp,
        pids=tuple(sorted({pin.roots[0], *[p.pid for p in procs]})), replicas=replicas,
        time_wall_s=round(twall + 0.03 + r.random() * 0.02, 6),
        time_mono_s=None, cpu_s=round(pin.cpu_s, 2), ctx_involuntary=pin.invol,
        busiest_thread_cpu_s=round(bt[3], 2), busiest_thread=f"{bt[0]} {bt[2]}",
        cpu_quota_cores=cfg.quota, cpu_periods=pin.periods if cfg.quota else None,
        cpu_throttled_periods=pin.throttled if cfg.quota else None, **extra)
