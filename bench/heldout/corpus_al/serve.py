"""A request-level serving engine: arrivals, a continuous-batching scheduler with a KV pool
in blocks, chunked (or unchunked) prefill, decode steps timed from HBM bytes and FLOPs,
launch overhead with and without CUDA graphs, the scheduler's host time stretched when
its CPU is taken, speculative decoding, preemption when the pool overflows.  Every
scrape renders the engine's real /metrics page and parses it with gputop's parser."""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace

import itertools

from gputop.schema import EngineSample
from gputop.sources.engine_metrics import config_int, recognise

from .world import EngineFeed, Proc, World


@dataclass(frozen=True)
class LLM:
    name: str
    params_b: float
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int = 128256
    wbytes: float = 2.0  # bytes per parameter as stored

    def kv_bytes(self, tp=1):
        return 2 * self.layers * self.kv_heads * self.head_dim * 2 / tp


LLAMA8B = LLM("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 4096, 8, 128)
QWEN7B = LLM("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 3584, 4, 128, 152064)
LLAMA70B = LLM("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8192, 8, 128)
QWEN32B = LLM("Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 5120, 8, 128, 152064)
MISTRAL7B = LLM("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 4096, 8, 128, 32768)
QWEN05B = LLM("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 24, 896, 2, 64, 151936)
LLAMA1B = LLM("meta-llama/Llama-3.2-1B-Instruct", 1.24, 16, 2048, 8, 64)
LLAMA8B_AWQ = LLM("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", 8.03, 32, 4096, 8, 128, 128256, 0.56)
LLAMA13B = LLM("meta-llama/Llama-2-13b-chat-hf", 13.0, 40, 5120, 40, 128, 32000)
GEMMA2B = LLM("google/gemma-2-2b-it", 2.6, 26, 2304, 4, 256, 256000)

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)
TGI_DUR = tuple(0.0001 * 1.5 ** (i + 1) for i in range(35))  # TGI's duration buckets (guessed)


def one_two_five(top):
    out, e = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if v > top:
                return tuple(float(x) for x in out)
            out.append(v)
        e += 1


class Hist:
    def __init__(self, bounds):
        self.b = bounds
        self.c = [0.0] * (len(bounds) + 1)
        self.sum = 0.0

    def obs(self, v, n=1.0):
        self.c[bisect.bisect_left(self.b, v)] += n
        self.sum += v * n

    def lines(self, name, labels):
        cum = list(itertools.accumulate(self.c))
        out = [f"# TYPE {name} histogram"]
        for b, c in zip(self.b, cum):
            out.append(f'{name}_bucket{{{labels}{"," if labels else ""}le="{b}"}} {c:.1f}')
        out.append(f'{name}_bucket{{{labels}{"," if labels else ""}le="+Inf"}} {cum[-1]:.1f}')
        lab = "{" + labels + "}" if labels else ""
        out.append(f"{name}_count{lab} {cum[-1]:.1f}")
        out.append(f"{name}_sum{lab} {self.sum:.6f}")
        return out


@dataclass
class Cfg:
    kind: str = "vllm"
    model: LLM = LLAMA8B
    gpus: tuple = (0,)
    max_num_seqs: int = 256
    max_batched: int = 8192
    chunked: bool = True
    graphs: bool = True
    block: int = 16
    pool_tokens: int | None = None  # else from memory
    mem_util: float = 0.9
    host_ms: float = 1.2  # scheduler + sampler CPU per step
    overlap: float = 0.3  # share of host time hidden behind the GPU
    launch_us: float = 4.5
    kernels_per_layer: int = 14
    spec_k: int = 0
    accept: float = 0.0
    accept_fn: object = None  # t -> acceptance
    draft: LLM | None = None
    attn_mem: float = 1.0  # x KV bytes read (an unfused attention fallback reads/writes more)
    attn_mem_fn: object = None
    dequant: float = 0.0  # extra DRAM bytes per weight byte (a dequant fallback writes dense weights)
    dequant_fn: object = None
    extra_kernel_ms: float = 0.0  # a low-occupancy custom kernel per decode step
    extra_fn: object = None
    extra_sm: float = 0.03
    max_model_len: int = 32768
    port: int = 8000
    host_name: str = "gpu-node"
    scrape_s: float = 5.0
    scrape_miss: float = 0.02
    prefix_hit: float = 0.0
    lp_ms: float = 0.0  # host ms per logprobs request per step (top-k over the vocabulary)
    mem_bytes: float | None = None
    dq_tokens: int = 0


def arrivals(rng, T, rate_fn, prompt=(600, 0.8), out=(250, 0.7), t0=0.0, dt=0.25, maxp=30000, maxo=4000, n=1, lp=0):
    """Poisson arrivals at rate_fn(t) per second; prompt/output lengths lognormal (median, sigma)."""
    out_l = []
    t = t0
    while t < T:
        k = rng.poisson(max(0.0, rate_fn(t)) * dt)
        for _ in range(k):
            a = t + rng.random() * dt
            p = int(min(maxp, max(8, rng.lognormal(math.log(prompt[0]), prompt[1]))))
            o = int(min(maxo, max(1, rng.lognormal(math.log(out[0]), out[1]))))
            out_l.append([a, p, o, n, lp])
        t += dt
    return out_l


class Engine:
    def __init__(self, w: World, cfg: Cfg, reqs: list, pid: int, start=0.0, url=None):
        self.w, self.c, self.pid = w, cfg, pid
        self.reqs = sorted(reqs, key=lambda r: r[0])
        m, tp = cfg.model, len(cfg.gpus)
        self.tp = tp
        spec = w.spec
        self.wbytes = m.params_b * 1e9 * m.wbytes / tp
        self.kvb = m.kv_bytes(tp)
        mem = spec.mem_gib * 2**30 * cfg.mem_util
        if cfg.pool_tokens is None:
            act = 2.5 * 2**30 + (cfg.draft.params_b * 2e9 if cfg.draft else 0)
            cfg.pool_tokens = int((mem - self.wbytes - act) / self.kvb)
        self.blocks_total = cfg.pool_tokens // cfg.block
        self.free = self.blocks_total
        self.mem_bytes = cfg.mem_bytes or mem
        self.url = url or f"http://{cfg.host_name}:{cfg.port}/metrics"
        self.start = start
        self.ai = 0
        self.waiting: list = []
        self.running: list = []
        # counters
        self.gen = self.prompt = self.cached = self.finished = self.preempt = 0.0
        self.drafts = self.draft_toks = self.accepted = 0.0
        self.prefill_s = self.decode_s = self.fwd_s = self.steps = 0.0
        self.fwd_decode = self.fwd_extend = 0.0
        k = cfg.kind
        if k == "sglang":
            self.h = {"ttft": Hist(SGL_TTFT), "itl": Hist(SGL_ITL), "e2e": Hist(SGL_E2E), "queue": Hist(SGL_QUEUE)}
        elif k == "tgi":
            self.h = {"tpot": Hist(TGI_DUR), "e2e": Hist(TGI_DUR), "queue": Hist(TGI_DUR)}
        else:
            self.h = {"ttft": Hist(VLLM_TTFT), "itl": Hist(VLLM_ITL), "tpot": Hist(VLLM_ITL), "e2e": Hist(VLLM_E2E),
                      "queue": Hist(VLLM_E2E), "prefill": Hist(VLLM_E2E), "decode": Hist(VLLM_E2E),
                      "params_n": Hist((1.0, 2.0, 5.0, 10.0, 20.0)),
                      "max_tokens": Hist(one_two_five(cfg.max_model_len))}
        self.feed = EngineFeed(url=self.url)
        self.gen_rate = 0.0
        self._last_gen = (0.0, 0.0)
        self.trace = []  # (t, running, waiting, kv, step_wall) per scrape for the viewer

    # ---------------------------------------------------------------- physics of one step
    def step_time(self, t, B, P, K, Pctx, ndec_spec=0):
        c, w = self.c, self.w
        spec = w.spec
        f = w.clock(c.gpus[0], t)
        if len(c.gpus) > 1:
            f = min(w.clock(g, t) for g in c.gpus)
        st = w.host.stretch(t) if w.host else 1.0
        m = c.model
        tp = self.tp
        am = c.attn_mem_fn(t) if c.attn_mem_fn else c.attn_mem
        dq = c.dequant_fn(t) if c.dequant_fn else c.dequant
        k = c.spec_k
        toks = B * (1 + k) + P
        bytes_ = self.wbytes * (1 + dq) + K * self.kvb * am + P * m.hidden * 2 * m.layers * 6 / tp
        flops = 2 * m.params_b * 1e9 / tp * toks + 4 * m.layers * m.hidden / tp * (Pctx + B * (1 + k) * (K / max(B, 1)))
        if dq:
            flops += self.wbytes * 8 * dq * (toks > 0)
        t_mem = bytes_ / (spec.hbm_gbs * 1e9 * 0.85)
        t_cmp = flops / (spec.tflops * 1e12 * 0.55 * f)
        work = max(t_mem * (1 + 0.12 * (1 - f)), t_cmp) + 0.1 * min(t_mem, t_cmp)
        nk = m.layers * c.kernels_per_layer + 12
        floor = nk * (2e-6 if c.graphs and P == 0 else 3e-6)
        extra = (c.extra_fn(t) if c.extra_fn else c.extra_kernel_ms) * 1e-3 * (B > 0)
        t_gpu = max(work, floor) + extra
        if c.dq_tokens and toks >= c.dq_tokens:
            # AWQ at >= 256 tokens: dequantise every weight to fp16, then a dense GEMM
            bytes_ += self.wbytes * 8.5
            dq_t = self.wbytes * 8.5 / (spec.hbm_gbs * 1e9 * 0.8)
            t_gpu += dq_t
            work += dq_t
        sh = w.share_fn(t, c.gpus[0])
        if sh:
            t_gpu /= (1 - sh)
        comm = 0.0
        if tp > 1:
            comm = m.layers * 2 * (12e-6 + toks * m.hidden * 2 / 150e9)
            t_gpu += comm
        draft_t = 0.0
        if k and c.draft is not None and B:
            dm = c.draft
            dbytes = dm.params_b * 1e9 * 2 + K * dm.kv_bytes() * 0.5
            draft_t = k * max(dbytes / (spec.hbm_gbs * 1e9 * 0.8), dm.layers * 14 * 2.5e-6)
            t_gpu += draft_t
            flops += 2 * dm.params_b * 1e9 * B * k
            bytes_ += k * dbytes
        graph = c.graphs and P == 0
        launch = (0.00015 + (k * 0.0001 if k else 0) if graph else nk * c.launch_us * 1e-6) * st
        lp = sum(1 for r in self.running if r[4]) * c.lp_ms * 1e-3 * st
        host = c.host_ms * 1e-3 * st * (1 + 0.002 * B) + lp
        wall = max(t_gpu, launch) + host * (1 - c.overlap) + max(0.0, host * c.overlap - t_gpu)
        busy = min(1.0, t_gpu / wall) * (1 - sh)
        smf = (1 - sh) *  (min(work, t_gpu) * 0.9 + max(0.0, t_gpu - work - extra - comm) * 0.1 + extra * c.extra_sm + comm * 0.2) / wall
        tens = min(busy, flops / (spec.tflops * 1e12 * f) / wall)
        dram = min(1.0, bytes_ / (spec.hbm_gbs * 1e9) / wall)
        return wall, busy, smf, tens, dram, (nk if not graph else 1)

    # ---------------------------------------------------------------- the loop
    def run(self, T):
        w, c = self.w, self.c
        rng = w.rng
        t = self.start
        tick = w.tick
        next_scrape = self.start + c.scrape_s * rng.random()
        B = 0
        while t < T:
            while self.ai < len(self.reqs) and self.reqs[self.ai][0] <= t:
                a = self.reqs[self.ai]
                self.ai += 1
                if a[0] >= self.start:
                    # [arr, prompt, out, done_prefill, gen, blocks, t_first, t_sched, t_last, n, lp, gen_f, orig_prompt]
                    self.waiting.append([a[0], a[1], a[2], min(a[5], a[1] - 1) if len(a) > 5 else 0, 0, 0, None, None, None, a[3], a[4], 0.0, a[1]])
                    if len(a) > 5:
                        self.cached += min(a[5], a[1] - 1)
                    self.prompt += a[1] * a[3]
                    if c.kind == "vllm":
                        self.h["params_n"].obs(a[3])
                        self.h["max_tokens"].obs(a[2])
            while next_scrape <= t:
                self.scrape(next_scrape)
                next_scrape += c.scrape_s
            # schedule
            dec = [r for r in self.running if r[3] >= r[1]]
            budget = c.max_batched - len(dec)
            chunks = []
            prefill_only = False
            if not c.chunked and self.waiting and len(self.running) < c.max_num_seqs:
                prefill_only = True
            if c.chunked or prefill_only:
                for r in self.running:
                    if r[3] < r[1] and budget > 0:
                        n = min(budget, r[1] - r[3])
                        nb = math.ceil((r[3] + n) * r[9] / c.block) - r[5]
                        if nb > self.free:
                            continue
                        self.free -= max(0, nb)
                        r[5] += max(0, nb)
                        chunks.append((r, n))
                        budget -= n
                while self.waiting and budget > 0 and len(self.running) < c.max_num_seqs:
                    r = self.waiting[0]
                    need_tok = r[1] - r[3]
                    n = min(budget, need_tok) if c.chunked else need_tok
                    if not c.chunked and n > budget and chunks:
                        break
                    nb = math.ceil((r[3] + n) * r[9] / c.block) - r[5]  # cached prefix blocks too
                    if nb > self.free - (len(dec) // 4):
                        break
                    self.waiting.pop(0)
                    self.free -= nb
                    r[5] += nb
                    if r[7] is None:
                        r[7] = t
                        self.h["queue"].obs(t - r[0])
                    self.running.append(r)
                    chunks.append((r, n))
                    budget -= n
            if prefill_only and chunks:
                dec = []
            P = sum(n for _, n in chunks)
            B = len(dec)
            if B == 0 and P == 0:
                # idle until the next arrival or scrape
                nxt = self.reqs[self.ai][0] if self.ai < len(self.reqs) else T
                t_new = min(max(nxt, t + 1e-4), next_scrape, T)
                w.clock(c.gpus[0], t_new)
                t = t_new
                continue
            K = sum(r[1] + r[4] for r in dec) * 1.0
            Kn = sum((r[1] + r[4]) * r[9] for r in dec)
            Pctx = sum(n * (r[3] + n / 2) for r, n in chunks)
            Bn = sum(r[9] for r in dec)
            wall, busy, smf, tens, dram, nl = self.step_time(t, Bn, P, Kn, Pctx)
            wall *= 1 + rng.normal(0, 0.03)
            m = 1
            if P == 0:
                rem = min(r[2] - r[4] for r in dec)
                nxt = self.reqs[self.ai][0] if self.ai < len(self.reqs) else T
                lim_t = min(nxt, next_scrape, (math.floor(t / tick) + 1) * tick, T)
                m = max(1, min(rem if c.spec_k == 0 else max(1, rem // 3), int((lim_t - t) / wall) + 1, 400))
                # blocks needed over m steps
                grow = m * (1 + c.spec_k)
                need = sum(max(0, math.ceil((r[1] + r[4] + grow) * r[9] / c.block) - r[5]) for r in dec)
                if need > self.free:
                    m = 1
                    need = sum(max(0, math.ceil((r[1] + r[4] + 1 + c.spec_k) * r[9] / c.block) - r[5]) for r in dec)
                    while need > self.free and len(self.running) > 1:
                        v = self.running.pop()  # preempt the newest: recompute later
                        self.free += v[5]
                        v[5] = 0
                        v[1] = v[1] + v[4]
                        v[2] = v[2] - v[4]
                        v[4] = 0
                        v[11] = 0.0
                        v[3] = 0
                        self.waiting.insert(0, v)
                        self.preempt += 1
                        if v in dec:
                            dec.remove(v)
                        need = sum(max(0, math.ceil((r[1] + r[4] + 1 + c.spec_k) * r[9] / c.block) - r[5]) for r in dec)
                    if not dec:
                        continue
            dur = wall * m
            for g in c.gpus:
                w.add(g, t, t + dur, busy, smf, tens, dram, pid=self.pid + g if len(c.gpus) > 1 else self.pid)
            w.launches(self.pid, "cudaGraphLaunch" if nl == 1 else "cudaLaunchKernel", t, t + dur, m * (1 if nl == 1 else nl * 0.6))
            if nl > 1:
                w.launches(self.pid, "cuLaunchKernel", t, t + dur, m * nl * 0.4)
            else:
                w.launches(self.pid, "cudaLaunchKernel", t, t + dur, m * 8)
            t_end = t + dur
            self.steps += m
            if P:
                self.fwd_extend += dur
            else:
                self.fwd_decode += dur
            for r, n in chunks:
                r[3] += n
                if r[3] >= r[1]:
                    r[6] = t_end
                    r[8] = t_end
                    r[4] = max(r[4], 1)
                    r[11] = float(r[4])
                    self.gen += r[9]
                    self.h["ttft"].obs(t_end - r[0]) if "ttft" in self.h else None
                    if "prefill" in self.h:
                        self.h["prefill"].obs(t_end - r[7])
            if dec:
                acc_fn = c.accept_fn(t) if c.accept_fn else c.accept
                if c.spec_k:
                    a = acc_fn
                    per = (1 - a ** (c.spec_k + 1)) / (1 - a) if a < 1 else c.spec_k + 1
                    self.drafts += Bn * m
                    self.draft_toks += Bn * m * c.spec_k
                    self.accepted += Bn * m * (per - 1)
                else:
                    per = 1.0
                if "itl" in self.h:
                    # each request's first gap runs from its previous token (a prefill-only step or a
                    # preemption in between stretches it); the rest of the macro step at the step time
                    if m > 1:
                        self.h["itl"].obs(wall, Bn * (m - 1))
                done = []
                for r in dec:
                    if "itl" in self.h:
                        self.h["itl"].obs(max(wall, (t + wall) - (r[8] if r[8] is not None else t)), r[9])
                    r[11] += per * m
                    new = min(r[2], int(r[11])) - r[4]
                    if new > 0:
                        self.gen += new * r[9]
                        r[4] += new
                    r[8] = t_end
                    nb = math.ceil((r[1] + r[4]) * r[9] / c.block) - r[5]
                    if nb > 0:
                        take = min(nb, self.free)
                        self.free -= take
                        r[5] += take
                    if r[4] >= r[2]:
                        done.append(r)
                for r in done:
                    self.running.remove(r)
                    self.free += r[5]
                    self.finished += 1
                    e2e = t_end - r[0]
                    self.h["e2e"].obs(e2e)
                    dec_t = t_end - (r[6] or t_end)
                    if "tpot" in self.h:
                        self.h["tpot"].obs(dec_t / max(1, r[4] - 1))
                    if "decode" in self.h:
                        self.h["decode"].obs(dec_t)
                        self.prefill_s += (r[6] or t_end) - (r[7] or r[0])
                        self.decode_s += dec_t
            t = t_end
        self.scrape(T)
        return self.feed

    # ---------------------------------------------------------------- scrape
    def scrape(self, t):
        c, w = self.c, self.w
        if t < self.start:
            return
        if w.rng.random() < c.scrape_miss:
            self.feed.scrapes.append((t, None, f"no answer from {self.url} within 2s"))
            return
        text = self.page(t)
        p = recognise(text, self.url)
        self.feed.scrapes.append((t, to_sample(p, self.url, t, w, self), ""))
        self.trace.append((t, len(self.running), len(self.waiting), 1 - self.free / self.blocks_total))

    def page(self, t):
        c = self.c
        k = c.kind
        name = c.model.name
        kv = 1 - self.free / self.blocks_total
        run = sum(1 for r in self.running)
        wait = len(self.waiting)
        L = []
        if k == "vllm":
            lab = f'engine="0",model_name="{name}"'
            g = lambda n, v, typ="gauge": L.extend([f"# TYPE {n} {typ}", f"{n}{{{lab}}} {v}"])
            g("vllm:num_requests_running", float(run))
            g("vllm:num_requests_waiting", float(wait))
            L += ["# TYPE vllm:num_requests_waiting_by_reason gauge",
                  f'vllm:num_requests_waiting_by_reason{{{lab},reason="capacity"}} {float(wait)}',
                  f'vllm:num_requests_waiting_by_reason{{{lab},reason="deferred"}} 0.0']
            g("vllm:kv_cache_usage_perc", kv)
            g("vllm:num_preemptions_total", float(self.preempt), "counter")
            g("vllm:prompt_tokens_total", float(self.prompt), "counter")
            g("vllm:prompt_tokens_cached_total", float(round(self.prompt * c.prefix_hit + self.cached)), "counter")
            g("vllm:generation_tokens_total", float(self.gen), "counter")
            L += ["# TYPE vllm:request_success_total counter",
                  f'vllm:request_success_total{{{lab},finished_reason="length"}} {float(round(self.finished * 0.3))}',
                  f'vllm:request_success_total{{{lab},finished_reason="stop"}} {float(self.finished - round(self.finished * 0.3))}']
            if c.spec_k:
                g("vllm:spec_decode_num_drafts_total", float(round(self.drafts)), "counter")
                g("vllm:spec_decode_num_draft_tokens_total", float(round(self.draft_toks)), "counter")
                g("vllm:spec_decode_num_accepted_tokens_total", float(round(self.accepted)), "counter")
            for key, fam in (("ttft", "vllm:time_to_first_token_seconds"), ("itl", "vllm:inter_token_latency_seconds"),
                             ("tpot", "vllm:request_time_per_output_token_seconds"), ("e2e", "vllm:e2e_request_latency_seconds"),
                             ("queue", "vllm:request_queue_time_seconds"), ("prefill", "vllm:request_prefill_time_seconds"),
                             ("decode", "vllm:request_decode_time_seconds"), ("params_n", "vllm:request_params_n"),
                             ("max_tokens", "vllm:request_params_max_tokens")):
                L += self.h[key].lines(fam, lab)
            L += ["# TYPE vllm:cache_config_info gauge",
                  f'vllm:cache_config_info{{block_size="{c.block}",cache_dtype="auto",enable_prefix_caching="True",engine="0",'
                  f'gpu_memory_utilization="{c.mem_util}",kv_cache_size_tokens="{self.blocks_total * c.block}",'
                  f'num_cpu_blocks="None",num_gpu_blocks="{self.blocks_total}",sliding_window="None"}} 1.0']
        elif k == "sglang":
            lab = f'model_name="{name}"'
            rl = f'engine_type="unified",model_name="{name}",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
            g = lambda n, v, typ="gauge", l=rl: L.extend([f"# TYPE {n} {typ}", f"{n}{{{l}}} {v}"])
            pool = self.blocks_total * c.block
            used = (self.blocks_total - self.free) * c.block
            g("sglang:num_running_reqs", float(run))
            g("sglang:num_queue_reqs", float(wait))
            g("sglang:token_usage", round(kv, 4))
            g("sglang:num_used_tokens", float(used))
            g("sglang:kv_used_tokens", float(used))
            g("sglang:kv_available_tokens", float(pool - used))
            g("sglang:kv_evictable_tokens", 0.0)
            g("sglang:max_total_num_tokens", float(pool))
            g("sglang:gen_throughput", round(self.gen_rate, 2))
            g("sglang:cache_hit_rate", c.prefix_hit)
            g("sglang:spec_accept_length", round(self._acc_len(t), 3) if c.spec_k else 0.0)
            g("sglang:spec_accept_rate", round(self._acc_rate(t), 4) if c.spec_k else 0.0)
            g("sglang:num_retracted_requests_total", float(self.preempt), "counter")
            L += ["# TYPE sglang:realtime_tokens_total counter",
                  f'sglang:realtime_tokens_total{{{rl},mode="prefill_compute"}} {float(round(self.prompt * (1 - c.prefix_hit)))}',
                  f'sglang:realtime_tokens_total{{{rl},mode="prefill_cache"}} {float(round(self.prompt * c.prefix_hit))}',
                  f'sglang:realtime_tokens_total{{{rl},mode="decode"}} {float(self.gen)}',
                  "# TYPE sglang:forward_execution_seconds_total counter",
                  f'sglang:forward_execution_seconds_total{{{rl},category="decode"}} {self.fwd_decode:.3f}',
                  f'sglang:forward_execution_seconds_total{{{rl},category="extend"}} {self.fwd_extend:.3f}']
            g("sglang:prompt_tokens_total", float(self.prompt), "counter", lab)
            g("sglang:generation_tokens_total", float(self.gen), "counter", lab)
            g("sglang:num_requests_total", float(self.finished), "counter", lab)
            for key, fam in (("ttft", "sglang:time_to_first_token_seconds"), ("itl", "sglang:inter_token_latency_seconds"),
                             ("e2e", "sglang:e2e_request_latency_seconds")):
                L += self.h[key].lines(fam, lab)
            L += self.h["queue"].lines("sglang:queue_time_seconds", rl)
        elif k == "tgi":
            g = lambda n, v, typ="gauge": L.extend([f"# TYPE {n} {typ}", f"{n} {v}"])
            g("tgi_batch_current_size", run)
            g("tgi_batch_current_max_tokens", int(sum(r[1] + r[2] for r in self.running)))
            g("tgi_queue_size", wait)
            g("tgi_request_count", int(self.finished + run), "counter")
            g("tgi_request_success", int(self.finished), "counter")
            L += ["# TYPE tgi_request_generated_tokens histogram", f'tgi_request_generated_tokens_bucket{{le="+Inf"}} {int(self.finished)}',
                  f"tgi_request_generated_tokens_sum {int(self.gen)}", f"tgi_request_generated_tokens_count {int(self.finished)}",
                  "# TYPE tgi_request_input_length histogram", f'tgi_request_input_length_bucket{{le="+Inf"}} {int(self.finished)}',
                  f"tgi_request_input_length_sum {int(self.prompt)}", f"tgi_request_input_length_count {int(self.finished)}",
                  "# TYPE tgi_batch_forward_duration histogram",
                  f'tgi_batch_forward_duration_sum{{method="prefill"}} {self.fwd_extend:.4f}',
                  f'tgi_batch_forward_duration_count{{method="prefill"}} {int(self.steps * 0.05)}',
                  f'tgi_batch_forward_duration_sum{{method="decode"}} {self.fwd_decode:.4f}',
                  f'tgi_batch_forward_duration_count{{method="decode"}} {int(self.steps * 0.95)}']
            L += self.h["tpot"].lines("tgi_request_mean_time_per_token_duration", "")
            L += self.h["e2e"].lines("tgi_request_duration", "")
            L += self.h["queue"].lines("tgi_request_queue_duration", "")
        else:  # llama.cpp
            g = lambda n, v, typ="gauge": L.extend([f"# TYPE {n} {typ}", f"{n} {v}"])
            g("llamacpp:prompt_tokens_total", int(self.prompt), "counter")
            g("llamacpp:prompt_seconds_total", round(self.fwd_extend, 3), "counter")
            g("llamacpp:tokens_predicted_total", int(self.gen), "counter")
            g("llamacpp:tokens_predicted_seconds_total", round(self.fwd_decode, 3), "counter")
            g("llamacpp:prompt_tokens_seconds", round(self.prompt / max(self.fwd_extend, 1e-3), 2))
            g("llamacpp:predicted_tokens_seconds", round(self.gen / max(self.fwd_decode, 1e-3), 2))
            g("llamacpp:kv_cache_usage_ratio", round(kv, 4))
            g("llamacpp:kv_cache_tokens", (self.blocks_total - self.free) * c.block)
            g("llamacpp:requests_processing", run)
            g("llamacpp:requests_deferred", wait)
            g("llamacpp:n_decode_total", int(self.steps), "counter")
            if c.spec_k:
                g("llamacpp:spec_decode_num_drafts_total", int(self.drafts), "counter")
                g("llamacpp:spec_decode_num_draft_tokens_total", int(self.draft_toks), "counter")
                g("llamacpp:spec_decode_num_accepted_tokens_total", int(self.accepted), "counter")
        # SGLang's gen_throughput: tokens/s since the last scrape
        lt, lg = self._last_gen
        if t > lt:
            self.gen_rate = (self.gen - lg) / (t - lt)
        self._last_gen = (t, self.gen)
        return "\n".join(L) + "\n"

    def _acc_rate(self, t):
        return self.c.accept_fn(t) if self.c.accept_fn else self.c.accept

    def _acc_len(self, t):
        a, k = self._acc_rate(t), self.c.spec_k
        return (1 - a ** (k + 1)) / (1 - a) if a < 1 else k + 1


def to_sample(p, url, t, w: World, eng: Engine) -> EngineSample:
    """ParsedMetrics -> EngineSample, as gputop's engine source fills it."""
    v = p.values
    c = eng.c
    from .world import MONO0, T0_WALL
    blocks = config_int(p.cache.get("num_gpu_blocks"))
    bs = config_int(p.cache.get("block_size"))
    pool = config_int(p.cache.get("kv_pool_tokens"))
    return EngineSample(
        kind=p.kind, url=url, model=p.model or c.model.name,
        generation_tokens_total=v.get("generation_tokens_total"), prompt_tokens_total=v.get("prompt_tokens_total"),
        prompt_tokens_cached_total=v.get("prompt_tokens_cached_total"), requests_finished_total=v.get("requests_finished_total"),
        requests_running=v.get("requests_running"), requests_waiting=v.get("requests_waiting"),
        kv_usage_ratio=v.get("kv_usage_ratio"), num_gpu_blocks=blocks, block_size=bs, kv_pool_tokens=pool,
        cache_dtype=p.cache.get("cache_dtype", ""), tensor_parallel=len(c.gpus), data_parallel=1,
        gpu_indices=tuple(c.gpus), histograms=p.histograms, preemptions_total=v.get("preemptions_total"),
        retracted_requests_total=v.get("retracted_requests_total"), work_unit=p.work_unit,
        waiting_by_reason=p.waiting_by_reason, spec_drafts_total=v.get("spec_drafts_total"),
        spec_draft_tokens_total=v.get("spec_draft_tokens_total"), spec_accepted_tokens_total=v.get("spec_accepted_tokens_total"),
        spec_accept_ratio=v.get("spec_accept_ratio"), spec_accept_length=v.get("spec_accept_length"),
        prefill_seconds_total=v.get("prefill_seconds_total"), decode_seconds_total=v.get("decode_seconds_total"),
        forward_seconds_total=v.get("forward_seconds_total"), decode_steps_total=v.get("decode_steps_total"),
        kv_used_tokens=v.get("kv_used_tokens"), kv_free_tokens=v.get("kv_free_tokens"),
        kv_evictable_tokens=v.get("kv_evictable_tokens"),
        time_mono_s=round(MONO0 + (w.seed % 10000) + t, 4), time_wall_s=None)
