"""A request-level serving engine: arrivals, a continuous-batching scheduler over a KV pool in
blocks, chunked prefill, prefix caching, speculative decoding, preemption, and step times from
HBM bytes, FLOPs, launch overhead and the host's scheduling time.

Fluid in time: the engine is advanced in slices (SLICE_S); within a slice the batch is fixed and
the number of forward steps is slice / step time.  Every request is tracked on its own."""
from __future__ import annotations
import heapq
import math
from collections import deque
from dataclasses import dataclass, field

SLICE_S = 0.05


@dataclass
class Model:
    name: str
    params: float          # total parameters
    active: float          # active per token (MoE) else = params
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    wbytes: float = 2.0    # bytes per weight (bf16 2, fp8 1, int4 ~0.56 with scales)
    kvbytes: float = 2.0
    experts: int = 0
    topk: int = 0
    vocab: int = 128256


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 8, 128, 4096),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 8, 128, 8192),
    "llama70b-fp8": Model("acme/Llama-3.3-70B-Instruct-FP8", 70.6e9, 70.6e9, 80, 8, 128, 8192, 1.0, 1.0),
    "llama70b-awq": Model("acme/Llama-3.3-70B-Instruct-AWQ", 70.6e9, 70.6e9, 80, 8, 128, 8192, 0.56),
    "qwen32b": Model("Qwen/QwQ-32B", 32.8e9, 32.8e9, 64, 8, 128, 5120, vocab=152064),
    "qwen32b-gptq": Model("acme/Qwen2.5-32B-Instruct-GPTQ-Int4", 32.8e9, 32.8e9, 64, 8, 128, 5120, 0.56, vocab=152064),
    "qwen14b": Model("Qwen/Qwen2.5-14B-Instruct", 14.7e9, 14.7e9, 48, 8, 128, 5120, vocab=152064),
    "reason-moe": Model("acme/ReasonMoE-235B-A22B-FP8", 235e9, 22e9, 94, 4, 128, 4096, 1.0, 1.0, 128, 8, 151936),
    "moe-30b": Model("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9, 48, 4, 128, 2048, 2.0, 2.0, 128, 8, 151936),
    "mistral7b": Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9, 7.25e9, 32, 8, 128, 4096, vocab=32768),
    "gemma-q4": Model("gemma-3-12b-it-Q4_K_M.gguf", 12.2e9, 12.2e9, 48, 8, 256, 3840, 0.6, 2.0, vocab=262144),
    "llama3b-q4": Model("Llama-3.2-3B-Instruct-Q4_K_M.gguf", 3.2e9, 3.2e9, 28, 8, 128, 3072, 0.6),
    "embed": Model("BAAI/bge-large-en-v1.5", 0.335e9, 0.335e9, 24, 16, 64, 1024, vocab=30522),
    "rerank": Model("BAAI/bge-reranker-v2-m3", 0.568e9, 0.568e9, 24, 16, 64, 1024, vocab=250002),
    "guard": Model("meta-llama/Llama-Guard-3-1B", 1.5e9, 1.5e9, 16, 8, 64, 2048),
}


@dataclass
class Traffic:
    """One class of requests.  rate(t) in requests/s; lengths lognormal (median, sigma, cap)."""
    name: str
    rate: object
    prompt: tuple = (800, 0.6, 8000)
    out: tuple = (300, 0.7, 4000)
    cached: object = 0.0        # fraction of the prompt that hits the prefix cache (fn of t or number)
    n: int = 1
    logprobs: int = 0
    beam: int = 1
    session: bool = False       # long-lived agent sessions (sticky routing)
    embed: bool = False         # pooling request: prefill only, no decode
    conc: object = None         # closed loop: keep this many requests in the system (fn of t)


@dataclass
class Req:
    rid: int
    arrive: float
    prompt: int
    out: int
    cached: int
    cls: str
    n: int = 1
    logprobs: int = 0
    beam: int = 1
    embed: bool = False
    done_prefill: int = 0
    gen: int = 0
    offset: float = 0.0         # value of G when it started decoding
    first_token: float | None = None
    preempted: int = 0
    queued: float | None = None

    @property
    def width(self):
        return max(self.n, self.beam)


def _cum(v, t):
    return v(t) if callable(v) else v


@dataclass
class EngineCfg:
    kind: str = "vllm"
    model: Model = None
    tp: int = 1
    max_seqs: int = 256
    budget: int = 8192          # max tokens per step (chunked prefill)
    chunked: bool = True
    graphs: bool = True
    async_sched: bool = True
    block: int = 16
    pool_tokens: int = 0        # KV pool per engine in tokens
    prefix_cache: bool = True
    spec_k: int = 0             # draft tokens per step
    spec_kind: str = ""         # "eagle", "ngram", "mtp"
    host_base_s: float = 0.0018  # scheduler + sampling host time per step
    host_per_req_s: float = 8e-6
    grammar_s: float = 0.0       # host grammar-mask time per request per step
    max_model_len: int = 32768
    bw_eff: float = 0.80
    flop_eff: float = 0.55


class Engine:
    def __init__(self, cfg: EngineCfg, gpu_spec, rng):
        self.c = cfg
        self.s = gpu_spec
        self.rng = rng
        m = cfg.model
        self.kvb = 2 * m.layers * max(1, m.kv_heads // cfg.tp if m.kv_heads >= cfg.tp else 1) * m.head_dim * m.kvbytes
        if m.kv_heads < cfg.tp:
            self.kvb = 2 * m.layers * m.head_dim * m.kvbytes
        self.weights = m.params * m.wbytes / cfg.tp
        self.waiting: deque[Req] = deque()
        self.prefilling: list[Req] = []
        self.running: dict[int, Req] = {}
        self.heap: list = []
        self.G = 0.0
        self.sum_offset = 0.0
        self.sum_prompt_run = 0
        self.sum_width_run = 0
        self.kv_prefill_tokens = 0
        # counters
        self.gen_total = 0.0
        self.prompt_total = 0.0
        self.cached_total = 0.0
        self.finished = 0
        self.preempt = 0
        self.spec_drafts = 0.0
        self.spec_draft_tok = 0.0
        self.spec_acc = 0.0
        self.prefill_s = 0.0
        self.decode_s = 0.0
        self.forward_s = 0.0
        self.steps = 0.0
        self.flops_total = 0.0
        self.read_total = 0.0
        self.write_total = 0.0
        self.retract_in_tok = 0.0
        self.hist = {}  # name -> list of raw observations this tick (value, count)
        self.spec_accept = 0.7
        self.last_accept_len = 0.0
        self.evictable = 0.0
        self.up = True

    # ---------------------------------------------------------------- helpers
    def kv_used(self):
        dec = 0
        if self.running:
            dec = self.sum_prompt_run + len(self.running) * self.G - self.sum_offset
            dec = self.sum_prompt_run + (len(self.running) * self.G - self.sum_offset) * 1.0
        extra = sum((r.width - 1) * max(0, self.G - r.offset) for r in self.running.values()) if self.sum_width_run > len(self.running) else 0
        pre = sum(r.done_prefill for r in self.prefilling)
        blocks_slack = (len(self.running) + len(self.prefilling)) * self.c.block / 2
        return dec + extra + pre + blocks_slack

    def observe(self, name, value, count=1.0):
        if count > 0:
            self.hist.setdefault(name, []).append((value, count))

    def add(self, r: Req, now):
        r.queued = now
        self.waiting.append(r)

    def _start_decode(self, r: Req, now):
        r.offset = self.G - r.gen
        self.running[r.rid] = r
        self.sum_offset += r.offset
        self.sum_prompt_run += r.prompt
        self.sum_width_run += r.width
        heapq.heappush(self.heap, (r.offset + r.out, r.rid))

    def _stop_decode(self, r: Req):
        del self.running[r.rid]
        self.sum_offset -= r.offset
        self.sum_prompt_run -= r.prompt
        self.sum_width_run -= r.width

    # ---------------------------------------------------------------- one slice
    def advance(self, now, dt, clock, host_stretch=1.0, bytes_mult=1.0, extra_bytes=0.0,
                gpu_share=1.0, launch_extra_s=0.0, tiny=None, quota_share=1.0):
        """Advance dt seconds; returns the activity of the slice for the GPU model."""
        c, m = self.c, self.c.model
        if not self.up:
            return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, host=0.0, tokens=0.0, nccl=0.0)
        pool = c.pool_tokens
        # admission
        used = self.kv_used()
        while self.waiting and len(self.running) + len(self.prefilling) < c.max_seqs:
            r = self.waiting[0]
            need = (r.prompt - (r.cached if c.prefix_cache else 0)) + r.cached + c.block
            if used + min(need, c.budget * 2 if c.chunked else need) > pool * 0.98 and (self.running or self.prefilling):
                break
            self.waiting.popleft()
            if r.queued is not None and r.preempted == 0:
                self.observe("queue", now - r.arrive)
            hit = r.cached if c.prefix_cache else 0
            r.done_prefill = hit
            self.cached_total += hit
            self.prompt_total += r.prompt
            self.prefilling.append(r)
            used += hit + c.block
        B = len(self.running)
        Bw = self.sum_width_run
        ctx_sum = self.kv_used() if B else 0.0
        # prefill tokens per step
        pre_left = sum(r.prompt - r.done_prefill for r in self.prefilling)
        if c.chunked:
            P = min(pre_left, max(0, c.budget - Bw))
        else:
            P = pre_left  # whole prompts in one step, decode waits
        # per-token extra work: logprobs over the vocabulary (n x logprobs x vocab sort)
        lp_work = sum(r.width * (r.logprobs > 0) for r in self.running.values()) if Bw > B or any(r.logprobs for r in self.running.values()) else 0
        # bytes per step
        if m.experts:
            toks = max(1, Bw + P)
            frac = 1 - (1 - m.topk / m.experts) ** toks
            wb = self.weights * (0.12 + 0.88 * frac)
        else:
            wb = self.weights
        kvb = ctx_sum * self.kvb + P * self.kvb * 2
        if P:
            pre_ctx = sum(r.done_prefill for r in self.prefilling) / max(1, len(self.prefilling))
        else:
            pre_ctx = 0
        bytes_step = (wb * bytes_mult + kvb + extra_bytes + lp_work * m.vocab * 4 * 6)
        flops_step = 2 * m.active / c.tp * (Bw * (1 + c.spec_k) + P) \
            + 4 * m.layers * m.hidden / c.tp * (ctx_sum * (1 + c.spec_k) + P * (pre_ctx + P / max(1, len(self.prefilling)) / 2)) \
            + lp_work * m.vocab * 60
        spec = self.s
        t_mem = bytes_step / (spec.bw * c.bw_eff) * (1 + 0.25 * (1 - clock))
        t_cmp = flops_step / (spec.flops * c.flop_eff * clock)
        t_gpu = max(t_mem, t_cmp) + 0.15 * min(t_mem, t_cmp)
        # kernels: launch-bound when each kernel is shorter than its launch
        n_k = m.layers * 9 + 20
        if not c.graphs:
            launch = n_k * (4.5e-6 + launch_extra_s)
        else:
            launch = 40e-6 + 12 * (4.5e-6 + launch_extra_s) + (n_k * (4.5e-6 + launch_extra_s) if P else 0)
        kern_gpu = n_k * 2.5e-6  # minimal GPU time of the kernels themselves
        t_gpu = max(t_gpu, kern_gpu)
        if c.tp > 1:
            ar_bytes = (Bw + P) * m.hidden * 2 * 2 * m.layers
            t_comm = 2 * m.layers * 9e-6 + ar_bytes / 300e9
        else:
            t_comm = 0.0
        t_gpu_total = (t_gpu + t_comm) / max(0.05, gpu_share)
        # logprobs over the vocabulary: top-k, transfer and detokenising n x logprobs per token on the host
        lp_host = sum(r.width * r.logprobs for r in self.running.values() if r.logprobs) * 6e-5
        host = (c.host_base_s + c.host_per_req_s * (B + len(self.prefilling)) + c.grammar_s * B + lp_host) * host_stretch
        host_launch = launch * host_stretch
        if c.async_sched:
            exposed = max(0.0, host - 0.85 * t_gpu_total)
        else:
            exposed = host
        step = max(t_gpu_total, host_launch) + exposed
        if quota_share < 1.0:
            # a CFS quota freezes the whole tree for the rest of each period: nothing is issued then
            step /= max(0.1, quota_share) ** 0.8
        if B == 0 and P == 0:
            return dict(busy=0.0, sm=0.0, tensor=0.0, dram=0.0, host=min(1.0, 0.02 * host_stretch), tokens=0.0, nccl=0.0)
        nsteps = dt / step
        # speculative decoding: accepted tokens per step per request
        if c.spec_k:
            a = self.spec_accept
            tps = (1 - a ** (c.spec_k + 1)) / (1 - a) if a < 0.999 else c.spec_k + 1
            self.last_accept_len = tps
        else:
            tps = 1.0
        # advance prefill
        pre_done = P * nsteps
        finished_prefill = []
        rem = pre_done
        for r in self.prefilling:
            if rem <= 0:
                break
            take = min(rem, r.prompt - r.done_prefill)
            r.done_prefill += take
            rem -= take
            if r.done_prefill >= r.prompt - 0.5:
                finished_prefill.append(r)
        for r in finished_prefill:
            self.prefilling.remove(r)
            if r.first_token is None:
                r.first_token = now + dt
                self.observe("ttft", now + dt - r.arrive)
            if r.embed:
                self.finished += 1
                self.observe("e2e", now + dt - r.arrive)
                continue
            self._start_decode(r, now)
        # advance decode
        if B:
            dG = nsteps * tps
            self.G += dG
            self.gen_total += dG * Bw
            itl = step / tps
            self._itl(itl, dG * Bw)
            if c.spec_k:
                self.spec_drafts += nsteps * B
                self.spec_draft_tok += nsteps * B * c.spec_k
                self.spec_acc += nsteps * B * (tps - 1)
            while self.heap and self.heap[0][0] <= self.G:
                _, rid = heapq.heappop(self.heap)
                r = self.running.get(rid)
                if r is None or abs(r.offset + r.out - _) > 1e-6:
                    continue
                self._stop_decode(r)
                self.finished += 1
                self.observe("e2e", now + dt - r.arrive)
                self.observe("tpot", (now + dt - r.first_token) / max(1, r.out))
                if c.prefix_cache:
                    self.evictable = min(pool * 0.3, self.evictable + r.prompt * 0.5)
        # preemption when the pool overflows
        used = self.kv_used()
        while used > pool and len(self.running) > 1:
            rid = max(self.running, key=lambda k: self.running[k].offset)  # newest first
            r = self.running[rid]
            r.gen = int(max(0, self.G - r.offset))
            self._stop_decode(r)
            r.prompt += r.gen
            r.out = max(1, r.out - r.gen)
            r.gen = 0
            r.done_prefill = 0
            r.cached = 0
            r.preempted += 1
            self.preempt += 1
            self.retract_in_tok += r.prompt
            self.waiting.appendleft(r)
            used = self.kv_used()
        self.evictable *= 0.999
        gtime = nsteps * t_gpu_total
        self.steps += nsteps
        self.forward_s += min(dt, gtime)
        if P:
            self.prefill_s += dt * len(self.prefilling + finished_prefill)
        self.decode_s += dt * B
        self.flops_total += flops_step * nsteps
        self.read_total += bytes_step * nsteps
        self.write_total += (Bw + P) * self.kvb * nsteps
        busy = min(1.0, nsteps * max(t_gpu_total, kern_gpu if not c.graphs else 0) / dt)
        if not c.graphs:
            # eager launches: the GPU runs each kernel as it arrives; gaps when launch > kernel
            busy = min(1.0, nsteps * max(t_gpu_total, min(host_launch, n_k * 3.2e-6)) / dt)
        toks = Bw + P
        cover = tiny if tiny is not None else min(0.93, 0.12 + 0.8 * min(1.0, toks / 3000 + (self.weights / 9e9) ** 0.7))
        dram = min(0.97, nsteps * bytes_step / (spec.bw * dt))
        tensor = min(0.9, nsteps * flops_step / (spec.flops * dt))
        nccl = min(1.0, nsteps * t_comm / dt)
        sm = busy * cover
        return dict(busy=busy, sm=sm, tensor=tensor, dram=dram, nccl=nccl,
                    host=min(1.0, nsteps * (host + host_launch) / dt / max(1.0, host_stretch)),
                    tokens=toks, occ=cover * 0.45)

    def _itl(self, itl, count):
        # spread over neighbouring values: steps differ with the batch's make-up
        for f, w in ((0.85, 0.2), (1.0, 0.6), (1.2, 0.17), (1.8, 0.03)):
            self.observe("itl", itl * f, count * w)
