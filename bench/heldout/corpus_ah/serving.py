"""A request-level serving engine: arrivals, continuous batching over a KV pool in blocks,
chunked prefill, preemption, speculative decoding, and step times from bytes and FLOPs.

Each engine step's time is max(HBM time, tensor time) of the GPU work, plus tensor-parallel
all-reduces, plus launch gaps when kernels are not captured in CUDA graphs, against the
scheduler's host time (stretched when its CPU is taken).  The step's kernels are emitted to
the timeline with SM/tensor/DRAM activity fractions that follow from the same numbers.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from corpus_ah.physics import GpuSpec, GIB

# histogram layouts (upper bounds) as the engines publish them
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_MAXTOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
               10000.0, 20000.0, 50000.0, 100000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
# TGI's router: duration buckets 1e-4 * 1.5^k (35 of them); token buckets linear to the max
TGI_DUR = tuple(round(0.0001 * 1.5 ** (k + 1), 10) for k in range(35))


class Hist:
    __slots__ = ("bounds", "counts", "count", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value, n=1.0):
        if n <= 0:
            return
        self.count += n
        self.sum += value * n
        b = self.bounds
        lo, hi = 0, len(b)
        while lo < hi:
            mid = (lo + hi) // 2
            if b[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(b):
            self.counts[lo] += n

    def cumulative(self):
        out, acc = [], 0.0
        for c in self.counts:
            acc += c
            out.append(acc)
        return out


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int = 152064
    wbytes: float = 2.0
    kvbytes: float = 2.0
    active_b: float | None = None  # MoE: parameters read per token
    mla_dim: int = 0  # MLA latent (kv_lora_rank + rope dim)

    def kv_bpt(self, tp: int) -> float:
        if self.mla_dim:
            return self.layers * self.mla_dim * self.kvbytes
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kvbytes

    def weight_bytes(self, tp: int) -> float:
        return self.params_b * 1e9 * self.wbytes / tp


MODELS = {
    "qwen32": Model("Qwen/Qwen2.5-Coder-32B-Instruct", 32.8, 64, 5120, 8, 128),
    "qwen7": Model("Qwen/Qwen2.5-Coder-7B-Instruct", 7.6, 28, 3584, 4, 128),
    "llama8": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 4096, 8, 128, 128256),
    "llama70": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8192, 8, 128, 128256),
    "llama70fp8": Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6, 80, 8192, 8, 128,
                        128256, wbytes=1.0),
    "qwen72": Model("Qwen/Qwen2.5-72B-Instruct", 72.7, 80, 8192, 8, 128),
    "coder480": Model("internal/coder-agent-110b-a12b", 110, 48, 5120, 8, 128, 151936,
                      wbytes=1.0, active_b=12.0),
    "mixtral": Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, 32, 4096, 8, 128, 32000,
                     active_b=12.9),
    "dsv2lite": Model("deepseek-ai/DeepSeek-V2-Lite-Chat", 15.7, 27, 2048, 16, 128, 102400,
                      active_b=2.4, mla_dim=576),
    "llama8q4": Model("support-bot-8b-Q4_K_M.gguf", 8.03, 32, 4096, 8, 128, 128256, wbytes=0.57),
    "llama8q8": Model("support-bot-8b-Q8_0.gguf", 8.03, 32, 4096, 8, 128, 128256, wbytes=1.06),
    "mistral7": Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 4096, 8, 128, 32768),
    "qwen14": Model("Qwen/Qwen2.5-14B-Instruct", 14.8, 48, 5120, 8, 128),
    "qwen05": Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 24, 896, 2, 64),
    "bge": Model("BAAI/bge-m3", 0.57, 24, 1024, 16, 64, 250002),
}


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "n", "lp", "maxtok", "done", "gen", "ts",
                 "tfirst", "tlast", "extra_host", "nlong", "pre_start", "dec_start", "npre")

    def __init__(self, arr, prompt, out, cached=0, n=1, lp=0, maxtok=None, extra_host=0.0):
        self.arr, self.prompt, self.out, self.cached = arr, int(prompt), int(out), int(cached)
        self.n, self.lp = n, lp
        self.maxtok = maxtok or max(out, 256)
        self.done = 0  # prompt tokens computed (or taken from cache)
        self.gen = 0.0
        self.ts = self.tfirst = self.tlast = None
        self.extra_host = extra_host  # host seconds per step this request adds (grammar, logprobs)
        self.pre_start = self.dec_start = None
        self.npre = 0

    def tokens(self):
        return self.done + self.n * self.gen


@dataclass
class EngineCfg:
    kind: str  # vllm | sglang | llamacpp | tgi
    model: Model
    spec: GpuSpec
    gpus: tuple[int, ...] = (0,)
    gpu_mem_util: float = 0.9
    block_size: int = 16
    max_num_seqs: int = 256
    max_batched: int = 8192
    chunked: bool = True
    graphs: bool = True
    host_ms: float = 2.2
    host_per_seq_ms: float = 0.015
    overlap: bool = True
    spec_k: int = 0
    pool_tokens: int | None = None
    mem_bw_eff: float = 0.78
    kv_read_amp: float = 1.0  # >1: a slow attention path reading KV more than once
    weight_read_amp: float = 1.0  # >1: dequant fallback / dense MoE path
    launch_us: float = 5.0
    version: str = "v1"
    cache_dtype: str = "auto"
    url: str = "http://127.0.0.1:8000/metrics"
    served_name: str = ""
    gemm_eff: float = 0.62  # achieved fraction of tensor peak for large token counts
    client_cap: int | None = None  # closed-loop client: at most this many requests in flight

    @property
    def tp(self):
        return len(self.gpus)


class Workload:
    """Arrivals: a rate function and samplers for prompt/output lengths and the cached prefix."""

    def __init__(self, rate, prompt, out, cached=lambda r, p, t: 0, rng=None, burst=None):
        self.rate, self.prompt, self.out, self.cached = rate, prompt, out, cached
        self.burst = burst  # optional t -> multiplier (autoscaled or bursty traffic)


def arrivals(work: Workload, t0: float, t1: float, rng: random.Random, specials=()):
    """Poisson arrivals by thinning rate(t)*burst(t); specials are (t, Req-kwargs)."""
    out = []
    peak = max(work.rate(t0 + k * (t1 - t0) / 200) * (work.burst(t0 + k * (t1 - t0) / 200)
                                                      if work.burst else 1.0)
               for k in range(201)) * 1.15 + 1e-9
    t = t0
    while True:
        t += rng.expovariate(peak)
        if t >= t1:
            break
        lam = work.rate(t) * (work.burst(t) if work.burst else 1.0)
        if rng.random() * peak <= lam:
            p = work.prompt(rng, t)
            out.append(Req(t, p, work.out(rng, t), cached=min(p - 1, work.cached(rng, p, t))))
    for t, kw in specials:
        out.append(Req(t, **kw))
    out.sort(key=lambda r: r.arr)
    return out


class Engine:
    """One engine process (all its tensor-parallel ranks)."""

    def __init__(self, cfg: EngineCfg, reqs: list[Req], rng: random.Random, tl, pids,
                 t_start: float, knobs=None):
        self.cfg, self.rng, self.tl, self.pids = cfg, rng, tl, pids
        self.reqs = reqs
        self.ai = 0
        self.t = t_start
        self.knobs = knobs or (lambda t: {})
        m, tp = cfg.model, cfg.tp
        self.kv_bpt = m.kv_bpt(tp)
        self.wbytes = m.weight_bytes(tp)
        if cfg.pool_tokens:
            pool = cfg.pool_tokens
        else:
            avail = cfg.spec.mem_bytes * cfg.gpu_mem_util - self.wbytes - 2.5 * GIB
            pool = int(avail / self.kv_bpt)
        self.num_blocks = max(64, pool // cfg.block_size)
        self.pool_tokens = self.num_blocks * cfg.block_size
        self.used_blocks = 0
        self.running: list[Req] = []
        self.waiting: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0, drafts=0.0,
                      draft_tok=0.0, accepted=0.0, pre_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rbytes=0.0, wbytes=0.0, retr_tok=0.0, queries=0.0, hits=0.0,
                      fwd_pre=0.0, fwd_dec=0.0)
        k = cfg.kind
        if k == "sglang":
            b = dict(ttft=SGL_TTFT, itl=SGL_ITL, e2e=SGL_E2E, queue=SGL_TTFT)
        elif k == "tgi":
            b = dict(tpot=TGI_DUR, e2e=TGI_DUR, queue=TGI_DUR, fwd_prefill=TGI_DUR,
                     fwd_decode=TGI_DUR,
                     gen=tuple(float(x) for x in range(20, 2001, 20)),
                     inp=tuple(float(x) for x in range(80, 8001, 80)))
        else:
            b = dict(ttft=VLLM_TTFT, itl=VLLM_ITL, e2e=VLLM_E2E, queue=VLLM_E2E, tpot=VLLM_ITL,
                     n=VLLM_N, maxtok=VLLM_MAXTOK, maxgen=VLLM_MAXTOK, prefill=VLLM_E2E,
                     decode=VLLM_E2E)
        self.h = {name: Hist(bounds) for name, bounds in b.items()}
        self.down_until = None
        self.busy_s = 0.0
        self.host_cpu = 0.0  # host CPU seconds of the scheduler thread this tick
        self.launches = [0, 0, 0]  # graph launches, runtime launches, driver launches
        self.jit_hits = 0
        self.last_demand = 0.0

    # ------------------------------------------------------------------ physics
    def step_cost(self, dec, pre_tokens, pre_attn, env, kn):
        cfg, m, tp = self.cfg, self.cfg.model, self.cfg.tp
        spec = cfg.spec
        k = cfg.spec_k
        ndec = sum(r.n for r in dec)
        dtok = ndec * (k + 1)
        ctx = sum(r.n * (r.done + r.gen) for r in dec)
        active = (m.active_b or m.params_b) * 1e9
        toks = dtok + pre_tokens
        if m.active_b:
            frac = min(1.0, (m.active_b / m.params_b) * (1 + toks / 6.0))
            wread = self.wbytes * frac
        else:
            wread = self.wbytes
        wread *= kn.get("weight_amp", cfg.weight_read_amp)
        kvread = ctx * self.kv_bpt * kn.get("kv_amp", cfg.kv_read_amp)
        mem = wread + kvread + pre_tokens * self.kv_bpt + toks * m.hidden * 8 / tp
        flops = 2 * active / tp * toks + 4 * m.layers * m.hidden / tp * (ctx * (k + 1) + pre_attn)
        sp = env["speed"]
        t_mem = mem / (spec.hbm_tbs * 1e12 * cfg.mem_bw_eff * env["mem_speed"])
        eff = cfg.gemm_eff * toks / (toks + 48.0)
        t_cmp = flops / (spec.tflops * 1e12 * max(0.02, eff) * sp)
        gpu = max(t_mem, t_cmp) + 0.18 * min(t_mem, t_cmp)
        if k:  # drafts: a small head run k times, launch-bound
            gpu += k * (0.00018 + (m.hidden * m.vocab * 2 / tp) / (spec.hbm_tbs * 1e12 * 0.7))
        if tp > 1:
            bw = spec.nvlink_gbs or spec.pcie_gbs
            gpu += 2 * m.layers * (9e-6 + toks * m.hidden * 2 * 2 * (tp - 1) / tp / (bw * 1e9))
        kernels = m.layers * 12 + 40
        graph = cfg.graphs and pre_tokens == 0 and ndec <= 512
        lus = cfg.launch_us * 1e-6 * env["host_stretch"]
        if graph:
            launch_wall = 0.0
            self.launches[0] += 1
            self.launches[1] += 25
        else:
            launch_wall = kernels * lus
            self.launches[1] += kernels // 3
            self.launches[2] += kernels - kernels // 3
        gpu_wall = max(gpu, launch_wall * 0.85) if not graph else gpu + 0.00004
        share = env["share"]
        gpu_wall = gpu_wall / share
        host = (cfg.host_ms / 1000 + cfg.host_per_seq_ms / 1000 * (len(dec) + (1 if pre_tokens else 0))
                + sum(r.extra_host for r in self.running)) * env["host_stretch"]
        host += env.get("jitter_extra", 0.0)
        step = (max(gpu_wall, host) + 0.12 * host) if cfg.overlap else gpu_wall + host
        step *= 1 + self.rng.gauss(0, 0.015)
        ks = gpu / kernels
        smf = 0.93 * ks / (ks + 7e-6)
        tens = min(0.85, 0.78 * t_cmp / gpu) if gpu > 0 else 0
        dram = min(0.95, 0.93 * t_mem / gpu) if gpu > 0 else 0
        self.c["flops"] += flops
        self.c["rbytes"] += mem
        self.c["wbytes"] += (pre_tokens + dtok) * self.kv_bpt
        return step, gpu, smf, tens, dram, host

    # ------------------------------------------------------------------ scheduling
    def blocks_of(self, r: Req, extra=0.0):
        bs = self.cfg.block_size
        return math.ceil(r.done / bs) + r.n * math.ceil((r.gen + extra) / bs)

    def preempt_one(self, t):
        victim = self.running.pop()
        self.used_blocks -= self.blocks_of(victim)
        self.c["preempt"] += 1
        self.c["retr_tok"] += victim.prompt
        # recompute: the prompt and what was generated are prefilled again
        victim.prompt = victim.prompt + int(victim.gen)
        victim.out = max(1, victim.out - int(victim.gen))
        victim.done, victim.gen = 0, 0.0
        victim.npre += 1
        self.waiting.insert(0, victim)

    def restart(self, t_down, down_s):
        """The process exits (clients see errors) and a new one loads the model."""
        self.running, self.waiting = [], []
        self.used_blocks = 0
        self.down_until = t_down + down_s
        for k in self.c:  # a new process: its counters and histograms start from zero
            self.c[k] = 0.0
        self.h = {k: Hist(h.bounds) for k, h in self.h.items()}
        self.restarts = getattr(self, "restarts", 0) + 1

    def advance(self, t0, t1, env):
        cfg = self.cfg
        self.host_cpu = 0.0
        self.launches = [0, 0, 0]
        self.jit_hits = 0
        busy0 = self.busy_s
        if self.t < t0:
            self.t = t0
        while self.t < t1:
            t = self.t
            kn = self.knobs(t)
            if self.down_until is not None:
                while self.ai < len(self.reqs) and self.reqs[self.ai].arr < min(t1, self.down_until):
                    self.ai += 1  # refused by the proxy while down
                if t1 <= self.down_until:
                    self.t = t1
                    break
                self.t = self.down_until
                self.down_until = None
                continue
            cap = self.cfg.client_cap
            while self.ai < len(self.reqs) and self.reqs[self.ai].arr <= t and \
                    (cap is None or len(self.running) + len(self.waiting) < cap):
                self.waiting.append(self.reqs[self.ai])
                self.ai += 1
            if not self.running and not self.waiting:
                nxt = self.reqs[self.ai].arr if self.ai < len(self.reqs) else t1
                nxt = max(nxt, t)
                self.t = min(max(nxt, t + 1e-4), t1)
                continue
            self._one_step(t, t1, env, kn)
        self.last_demand = (self.busy_s - busy0) / (t1 - t0)

    def _one_step(self, t, t1, env, kn):
        cfg = self.cfg
        bs = cfg.block_size
        dec = [r for r in self.running if r.done >= r.prompt]
        k = cfg.spec_k
        alpha = kn.get("alpha", 0.72)
        emit = 1 + (sum(alpha ** i for i in range(1, k + 1)) if k else 0)
        # decode growth may need blocks: preempt the newest until it fits
        need = sum(self.blocks_of(r, emit) - self.blocks_of(r) for r in dec)
        while need > self.num_blocks - self.used_blocks and len(self.running) > 1:
            self.preempt_one(t)
            dec = [r for r in self.running if r.done >= r.prompt]
            need = sum(self.blocks_of(r, emit) - self.blocks_of(r) for r in dec)
        budget = cfg.max_batched - sum(r.n for r in dec) * (k + 1)
        pre_tokens, pre_attn, chunks = 0, 0.0, []
        only_prefill = False
        if not cfg.chunked and self.waiting and len(self.running) < cfg.max_num_seqs:
            only_prefill = True  # TGI / V0: a prefill batch pauses every decode
        cand = [r for r in self.running if r.done < r.prompt]
        if only_prefill:
            budget = cfg.max_batched
        free = self.num_blocks - self.used_blocks - need
        wi = 0
        while budget > 0:
            if cand:
                r = cand.pop(0)
            elif wi < len(self.waiting) and len(self.running) < cfg.max_num_seqs:
                r = self.waiting[wi]
                # admit only if its whole prompt fits with some headroom (watermark)
                if math.ceil(r.prompt / bs) + 1 > free - int(0.01 * self.num_blocks):
                    break
                wi += 1
                self.running.append(r)
                r.ts = t if r.ts is None else r.ts
                if r.pre_start is None:
                    r.pre_start = t
                if r.cached and r.done == 0 and r.npre == 0:
                    r.done = r.cached
                    self.c["cached"] += r.cached
                    self.c["prompt"] += r.cached
                    self.c["hits"] += r.cached
                self.c["queries"] += r.prompt
            else:
                break
            rem = r.prompt - r.done
            chunk = min(rem, budget) if cfg.chunked else rem
            if chunk <= 0:
                continue
            nb = math.ceil((r.done + chunk) / bs) - math.ceil(r.done / bs)
            if nb > free:
                chunk = max(0, (free * bs) - (r.done % bs if r.done % bs else 0))
                nb = math.ceil((r.done + chunk) / bs) - math.ceil(r.done / bs)
                if chunk <= 0:
                    break
            free -= nb
            chunks.append((r, chunk))
            pre_tokens += chunk
            pre_attn += chunk * (r.done + chunk / 2)
            budget -= chunk
            if not cfg.chunked and budget <= 0:
                break
        if wi:
            del self.waiting[:wi]
        if only_prefill and chunks:
            dec_now = []
        else:
            dec_now = dec
        if not chunks and not dec_now:
            # nothing fits: a request waits for blocks
            nxt = self.reqs[self.ai].arr if self.ai < len(self.reqs) else t1
            self.t = min(t1, max(t + 0.005, min(nxt, t + 0.05)))
            if self.running:  # one too big for the pool: let it go (rejected)
                pass
            elif self.waiting:
                self.waiting.pop(0)
            return
        step, gpu, smf, tens, dram, host = self.step_cost(dec_now, pre_tokens, pre_attn, env, kn)
        # how many identical decode steps fit before something changes
        n = 1
        if not chunks and not self.waiting and not env.get("single_step"):
            left = min(((r.out - r.gen) / emit) for r in dec_now)
            nxt = self.reqs[self.ai].arr if self.ai < len(self.reqs) else 1e18
            n = int(max(1, min(left, (nxt - t) / step, (t1 - t) / step + 1, 64)))
            if self.num_blocks - self.used_blocks < 4 * len(dec_now) * max(1, emit * n / bs):
                n = 1
        dt = step * n
        jit = env.get("jitter")
        if jit:  # the launch thread is preempted: whole steps stall for a while
            p, mean = jit
            hits = 0
            for _ in range(n):
                if self.rng.random() < p:
                    hits += 1
                    dt += self.rng.expovariate(1 / mean)
            self.jit_hits += hits
        for g in self.cfg.gpus:
            self.tl.emit(g, self.pids[self.cfg.gpus.index(g)], t, t + gpu * n, smf, tens, dram,
                         nvl=(2 * self.cfg.model.hidden * 2 * (pre_tokens + len(dec_now)) * self.cfg.model.layers
                              if self.cfg.tp > 1 else 0.0) * n)
        self.busy_s += gpu * n
        self.host_cpu += host * n
        self.c["steps"] += n
        self.c["fwd_s"] += gpu * n
        if chunks:
            self.c["fwd_pre"] += gpu * n
        else:
            self.c["fwd_dec"] += gpu * n
        tend = t + dt
        # prefill progress
        for r, chunk in chunks:
            r.done += chunk
            self.c["prompt"] += chunk
            if r.done >= r.prompt:
                r.tfirst = tend
                r.tlast = tend
                r.gen = 1.0
                r.dec_start = tend
                self.c["gen"] += r.n
                self.c["pre_s"] += tend - r.pre_start
                h = self.h
                if "ttft" in h:
                    h["ttft"].observe(tend - r.arr)
                h["queue"].observe((r.ts or t) - r.arr)
        if dec_now:
            nseq = sum(r.n for r in dec_now)
            self.c["gen"] += nseq * emit * n
            if k:
                self.c["drafts"] += nseq * n
                self.c["draft_tok"] += nseq * k * n
                self.c["accepted"] += nseq * (emit - 1) * n
            if "itl" in self.h:
                self.h["itl"].observe(dt / n, len(dec_now) * n)
            for r in dec_now:
                r.gen += emit * n
                r.tlast = tend
        self.used_blocks = sum(self.blocks_of(r) for r in self.running)
        # finishes
        still = []
        for r in self.running:
            if r.done >= r.prompt and r.gen >= r.out:
                self._finish(r, tend)
            else:
                still.append(r)
        self.running = still
        self.used_blocks = sum(self.blocks_of(r) for r in self.running)
        self.t = tend

    def _finish(self, r, t):
        h = self.h
        self.c["finished"] += 1
        self.c["dec_s"] += t - (r.dec_start or t)
        e2e = t - r.arr
        h["e2e"].observe(e2e)
        g = max(1, int(r.gen))
        if "tpot" in h:
            h["tpot"].observe((t - (r.tfirst or t)) / max(1, g - 1))
        if "n" in h:
            h["n"].observe(r.n)
            h["maxtok"].observe(r.maxtok)
            h["maxgen"].observe(r.maxtok)
            h["prefill"].observe((r.tfirst or t) - (r.pre_start or r.arr))
            h["decode"].observe(t - (r.dec_start or t))
        if "gen" in h:
            h["gen"].observe(g)
            h["inp"].observe(r.prompt)
