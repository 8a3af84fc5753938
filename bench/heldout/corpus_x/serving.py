"""A serving engine, simulated step by step (in runs of identical steps between events).

Requests arrive (Poisson, a rate that can follow a curve), wait, are admitted while
the KV pool and the sequence limit allow, are prefilled in chunks under a token budget
(vLLM V1 and llama.cpp mix prefill chunks into decode steps; SGLang runs a prefill batch
between decode batches), decode one token per sequence per step (more with speculative
decoding: 1 + accepted drafts), and finish.  A step's GPU time comes from the work:
weights and KV bytes read over the board's bandwidth, FLOPs over its tensor rate, both
scaled by the clock each tensor-parallel rank runs at (the slowest rank sets the pace,
the others wait in NCCL), plus TP all-reduces.  The host thread that schedules and
launches a step needs CPU time; a step cannot start before it has had it (CPU share,
cgroup quota, preemptions of the launch thread).  Everything an engine exports is
counted from those events: cumulative counters, histograms with the engines' buckets,
gauges sampled at the scrape.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections import deque
from dataclasses import dataclass, field

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0,
             2500.0, 3000.0)


def one_two_five(limit: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets(max_model_len)."""
    out, m = [], 1
    while True:
        for d in (1, 2, 5):
            v = d * m
            if v > limit:
                return tuple(float(x) for x in out)
            out.append(v)
        m *= 10


class Hist:
    __slots__ = ("bounds", "counts", "sum", "count")

    def __init__(self, bounds):
        self.bounds = tuple(bounds)
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.sum = 0.0
        self.count = 0.0

    def observe(self, v: float, w: float = 1.0) -> None:
        if w <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, v)] += w
        self.sum += v * w
        self.count += w

    def cumulative(self) -> tuple[float, ...]:
        out, acc = [], 0.0
        for c in self.counts[:-1]:
            acc += c
            out.append(acc)
        return tuple(out)


@dataclass(frozen=True)
class Model:
    name: str
    params: float  # total parameters
    active: float  # parameters touched per token (MoE: fewer)
    layers: int
    hidden: int
    kv_bytes_tok: int  # bf16, whole model
    vocab: int = 128256
    wbytes: float = 2.0  # bytes per weight (fp8: 1)

    @property
    def weights(self) -> float:
        return self.params * self.wbytes


LLAMA8B = Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 4096, 131072)
LLAMA70B = Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 8192, 327680)
QWEN32B = Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 5120, 262144, vocab=152064)
QWEN7B = Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 7.6e9, 28, 3584, 57344, vocab=152064)
QWEN30A3 = Model("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9, 48, 2048, 98304, vocab=151936)
MISTRAL24 = Model("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 23.6e9, 40, 5120, 163840,
                  vocab=131072)
GEMMA12Q = Model("gemma-3-12b-it-Q4_K_M.gguf", 12.2e9, 12.2e9, 48, 3840, 196608, vocab=262144,
                 wbytes=0.6)


@dataclass
class Req:
    arrival: float
    prompt: int
    cached: int
    out: int
    n: int = 1
    logprobs: int = 0
    max_tokens: int = 0
    cpu_x: float = 0.0  # extra host seconds per step while it runs (its sampling/logprobs)
    gpu_x: float = 0.0  # extra GPU seconds per step while it runs
    scheduled: float = -1.0
    first: float = -1.0
    left: int = 0  # prefill tokens still to compute
    start_step: int = 0
    gen: int = 0
    preempted: int = 0


@dataclass
class ServeCfg:
    kind: str  # vllm | sglang | llamacpp
    model: Model
    tp: int = 1
    max_seqs: int = 256
    budget: int = 8192  # max_num_batched_tokens / chunked_prefill_size / n_batch
    pool_tokens: int = 200000  # per engine
    block_size: int = 16
    kv_dtype_bytes: float = 2.0
    cache_dtype: str = "auto"
    mixed: bool = True  # prefill chunks ride in decode steps
    h0: float = 0.0016  # host seconds per step (scheduler, sampler bookkeeping)
    h1: float = 6e-6  # host seconds per running sequence per step
    g0: float = 0.0004  # GPU idle between steps even when the host keeps up
    spec_k: int = 0  # draft tokens per step (0: off)
    spec_method: str = ""
    max_model_len: int = 32768
    offline: bool = False
    backlog: int = 0
    kernels_per_step: int = 0  # launches per step outside CUDA graphs (eager)
    gpu_mem_util: float = 0.9


@dataclass
class Controls:
    """What the scenario turns, as functions of time (seconds from the trace start)."""

    rate: object  # t -> requests/s
    draw: object  # (t, rng) -> Req fields dict
    host_share: object = lambda t: 1.0  # CPU share the engine's launch thread gets
    jitter: object = lambda t: (0.0, 0.0)  # (probability a step's launch is preempted, seconds)
    other_gpu: object = lambda t: 0.0  # fraction of GPU time another process takes
    spec_accept: object = lambda t: 0.0
    clock_of: object = None  # rank -> (compute speed, memory speed), set by the world
    up: object = lambda t: True  # engine process up (False: restarting)
    # (probability the launch thread is off CPU at a step boundary, mean wait): CPU share
    # lost to other runnable threads or a cgroup quota (set by the world each tick)
    host_off: object = lambda t: (0.0, 0.0)


class Serving:
    def __init__(self, cfg: ServeCfg, ctl: Controls, rng, t_start: float = 0.0):
        self.cfg, self.ctl, self.rng = cfg, ctl, rng
        self.t = t_start
        self.waiting: deque[Req] = deque()
        self.prefill: deque[Req] = deque()
        self.running: list[Req] = []
        self.heap: list = []
        self.G = 0  # decode steps done
        self.seqs = 0  # decoding sequences (n counts)
        self.sum_prompt = 0  # over decoding sequences
        self.sum_start = 0
        self.kv_used = 0
        self.next_arrival = t_start + rng.expovariate(max(1e-6, ctl.rate(t_start) or 1e-6))
        self.stall = 0.0
        self.x_cpu = 0.0
        self.x_gpu = 0.0
        self._id = 0
        self.restarts = 0
        self.was_up = True
        self.reset_counters()

    def reset_counters(self):
        c = self.cfg
        self.gen_tokens = 0.0
        self.prompt_tokens = 0.0
        self.cached_tokens = 0.0
        self.finished = 0
        self.preemptions = 0
        self.retracted_tokens = 0.0
        self.prefill_s = 0.0
        self.decode_s = 0.0
        self.forward_s = 0.0
        self.steps = 0
        self.flops = 0.0
        self.rbytes = 0.0
        self.wbytes = 0.0
        self.drafts = 0.0
        self.draft_tokens = 0.0
        self.accepted = 0.0
        self.cpu_busy = 0.0  # engine-core thread CPU seconds
        self.launches = 0.0
        self.graph_launches = 0.0
        self.preempt_events = 0
        self.acc_rate_recent = 0.0
        self.ll_gen = 0.0
        self.ll_prompt = 0.0
        self.ll_prompt_s = 0.0
        self.ll_gen_s = 0.0
        if c.kind == "sglang":
            self.h = {"ttft": Hist(SGL_TTFT), "itl": Hist(SGL_ITL), "e2e": Hist(SGL_E2E),
                      "queue": Hist(SGL_QUEUE)}
        elif c.kind == "vllm":
            mt = one_two_five(c.max_model_len)
            self.h = {"ttft": Hist(VLLM_TTFT), "itl": Hist(VLLM_ITL), "tpot": Hist(VLLM_ITL),
                      "e2e": Hist(VLLM_E2E), "queue": Hist(VLLM_E2E), "params_n": Hist(VLLM_N),
                      "params_max_tokens": Hist(mt), "max_generation_tokens": Hist(mt)}
        else:
            self.h = {}
        # itl observations kept also for the sanity table (not exported by llama.cpp)
        self.itl_all = Hist(SGL_ITL + (10.0, 20.0))
        self.ttft_all = Hist(VLLM_TTFT)

    # ------------------------------------------------------------ physics of one step
    def step_cost(self, B: int, S: float, P: int, Pctx: float, ranks: int):
        """(GPU seconds per rank list, host seconds, flops/rank, bytes/rank, tokens per seq)."""
        c, m = self.cfg, self.cfg.model
        tp = c.tp
        kvb = m.kv_bytes_tok * c.kv_dtype_bytes / 2.0 / tp
        w = m.weights / tp
        if m.active < m.params:  # MoE: experts touched grow with the batch
            touched = min(1.0, (m.active / m.params) * (1 + 0.35 * max(0, B + P - 1) ** 0.5))
            w = m.weights / tp * max(m.active / m.params, touched)
        k = c.spec_k
        verify_tokens = B * (k + 1) if k else B
        dec_bytes = w + S * kvb * (1.0 if not k else 1.0)
        dec_flops = 2 * m.active / tp * verify_tokens + 4 * m.layers * m.hidden * S / tp
        pre_flops = 2 * m.active / tp * P + 4 * m.layers * m.hidden * P * (Pctx + P / 2) / tp
        pre_bytes = (w if P and not B else 0.0) + P * kvb
        draft = 0.0
        if k:
            draft = k * (0.0006 + 0.04 * (w / 4.8e12 * 0.9))  # k small draft-model passes
        out = []
        for r in range(ranks):
            rc, rm = self.ctl.clock_of(r)
            spec = self.spec
            t_mem = (dec_bytes / (spec.bw * 0.85)) / rm if B else 0.0
            t_dc = dec_flops / (spec.flops * 0.55) / rc if B else 0.0
            t_dec = max(t_mem, t_dc) + 0.2 * min(t_mem, t_dc)
            if B:
                t_dec += m.layers * 4 * 2.2e-6 / rc  # kernel floor (graph replay)
            t_pre = pre_flops / (spec.flops * 0.62) / rc + pre_bytes / (spec.bw * 0.85) / rm
            t_comm = (m.layers * 2 * (7e-6 + (B + P) * m.hidden * 2 / 150e9)) if tp > 1 else 0.0
            out.append((t_dec + draft, t_pre, t_comm))
        host = c.h0 + c.h1 * B + (0.00004 * P / 512 if P else 0.0)
        return out, host, dec_flops + pre_flops, dec_bytes + pre_bytes

    # ------------------------------------------------------------ queue handling
    def arrivals(self, until: float):
        ctl = self.ctl
        while self.next_arrival <= until:
            t = self.next_arrival
            rate = ctl.rate(t)
            if rate > 0:
                f = ctl.draw(t, self.rng)
                r = Req(arrival=t, **f)
                r.max_tokens = r.max_tokens or max(r.out, 16)
                self.waiting.append(r)
            self.next_arrival = t + self.rng.expovariate(max(rate, 0.05))
        if self.cfg.backlog:
            while len(self.waiting) < self.cfg.backlog:
                f = ctl.draw(self.t, self.rng)
                r = Req(arrival=self.t, **f)
                r.max_tokens = r.max_tokens or max(r.out, 16)
                self.waiting.append(r)

    def admit(self):
        c = self.cfg
        pend = sum(q.left for q in self.prefill)
        while self.waiting:
            r = self.waiting[0]
            # KV is allocated as chunks are computed: requests beyond the next couple of
            # budgets' worth of prefill wait without holding blocks
            if pend >= 2 * c.budget:
                return
            seqs_now = self.seqs + sum(q.n for q in self.prefill)
            if seqs_now + r.n > c.max_seqs:
                return
            need = r.prompt - (r.cached if not r.preempted else 0) + r.n * c.block_size
            # SGLang admits optimistically and retracts when decode runs out of room
            frac = 0.999 if c.kind == "sglang" else 0.98
            if self.kv_used + r.prompt + c.block_size * r.n > c.pool_tokens * frac:
                return
            self.waiting.popleft()
            r.scheduled = self.t if r.scheduled < 0 else r.scheduled
            comp = max(1, r.prompt - r.cached) if not r.preempted else r.prompt + r.gen
            r.left = comp
            self.kv_used += r.prompt + (r.gen if r.preempted else 0)
            if not r.preempted:
                self.prompt_tokens += r.prompt
                self.cached_tokens += r.cached
            self.prefill.append(r)
            pend += r.left
            del need

    def start_decode(self, r: Req):
        if r.first < 0:
            r.first = self.t
            ttft = self.t - r.arrival
            self.ttft_all.observe(ttft)
            if "ttft" in self.h:
                self.h["ttft"].observe(ttft)
            r.gen = 1
            self.gen_tokens += r.n
            self.ll_prompt += r.prompt - r.cached
            self.ll_prompt_s += self.t - r.scheduled
            self.kv_used += r.n
        r.start_step = self.G - r.gen + 1 if r.gen > 1 else self.G
        if r.gen >= r.out:
            self.finish(r)
            return
        self.running.append(r)
        self.seqs += r.n
        self.sum_prompt += r.n * r.prompt
        self.sum_start += r.n * r.start_step
        self.x_cpu += r.cpu_x
        self.x_gpu += r.gpu_x
        heapq.heappush(self.heap, (r.start_step + r.out - 1, id(r), r))

    def remove(self, r: Req):
        self.running.remove(r)
        self.seqs -= r.n
        self.sum_prompt -= r.n * r.prompt
        self.sum_start -= r.n * r.start_step
        self.x_cpu -= r.cpu_x
        self.x_gpu -= r.gpu_x

    def finish(self, r: Req):
        self.kv_used -= r.prompt + r.n * r.out
        self.kv_used = max(0, self.kv_used)
        self.finished += 1
        e2e = self.t - r.arrival
        h = self.h
        if "e2e" in h:
            h["e2e"].observe(e2e)
            q = r.scheduled - r.arrival
            h["queue"].observe(max(0.0, q))
        if "tpot" in h and r.out > 1:
            h["tpot"].observe((self.t - r.first) / (r.out - 1))
        if "params_n" in h:
            h["params_n"].observe(r.n)
            h["params_max_tokens"].observe(r.max_tokens)
            h["max_generation_tokens"].observe(r.out)
        self.ll_gen += r.n * r.out
        self.ll_gen_s += max(0.0, self.t - r.first)
        self.prefill_s += max(0.0, r.first - r.scheduled)
        self.decode_s += max(0.0, self.t - r.first)

    def preempt_one(self):
        r = max(self.running, key=lambda q: q.arrival)
        self.remove(r)
        self.heap = [e for e in self.heap if e[2] is not r]
        heapq.heapify(self.heap)
        r.gen = self.G - r.start_step + 1
        self.kv_used -= r.prompt + r.n * r.gen
        r.preempted += 1
        self.preemptions += 1
        self.retracted_tokens += r.prompt
        self.waiting.appendleft(r)

    # ------------------------------------------------------------ the loop
    def run(self, t1: float, acts: list, spec):
        """Advance to t1, putting GPU time on ``acts`` (one Activity per TP rank)."""
        self.spec = spec
        ctl, c = self.ctl, self.cfg
        up = ctl.up(self.t)
        if not up:
            if self.was_up:
                # the process died: every request in flight is lost, counters restart
                self.waiting.clear()
                self.prefill.clear()
                self.running.clear()
                self.heap.clear()
                self.seqs = self.sum_prompt = self.sum_start = 0
                self.kv_used = 0
                self.x_cpu = self.x_gpu = 0.0
                self.restarts += 1
            self.was_up = False
            self.t = t1
            self.next_arrival = max(self.next_arrival, t1)
            return
        if not self.was_up:
            self.was_up = True
            self.reset_counters()
        guard = 0
        while self.t < t1 - 1e-9 and guard < 20000:
            guard += 1
            self.arrivals(self.t)
            self.admit()
            B = self.seqs
            if not B and not self.prefill:
                nxt = min(t1, self.next_arrival)
                self.cpu_busy += (nxt - self.t) * 0.04
                self.t = nxt
                self.stall = 0.0
                continue
            # composition of the next run of identical steps
            budget = max(0, c.budget - (B if c.mixed else 0))
            pend = sum(r.left for r in self.prefill)
            P = min(budget, pend) if (c.mixed or not B or self.stall == 0.0 or True) else 0
            sgl_prefill = (not c.mixed) and P > 0
            if sgl_prefill:
                Bs = 0
            else:
                Bs = B
            S = (self.sum_prompt + B * self.G - self.sum_start + B) if Bs else 0
            head = self.prefill[0] if P else None
            Pctx = (head.cached if head else 0)
            costs, host, flops, nbytes = self.step_cost(Bs, S, P, Pctx, len(acts))
            share = max(0.02, ctl.host_share(self.t))
            p_j, d_j = ctl.jitter(self.t)
            p_o, d_o = ctl.host_off(self.t)
            if p_o > 0 and d_o > 0:
                p_t = 1 - (1 - p_j) * (1 - p_o)
                d_j = (p_j * d_j + p_o * d_o) / p_t
                p_j = p_t
            host_s = (host + self.x_cpu) / share
            other = min(0.95, max(0.0, ctl.other_gpu(self.t)))
            gpu_each = [(d + pre + cm + (self.x_gpu if Bs else 0.0)) for d, pre, cm in costs]
            t_gpu = max(gpu_each) / (1 - other)
            w1 = max(t_gpu + c.g0, host_s + 0.0002)
            w2 = max(t_gpu + c.g0, host_s + d_j + 0.0002)
            wall = (1 - p_j) * w1 + p_j * w2
            # how many identical steps until something changes
            k = 10**9
            if Bs and self.heap:
                k = min(k, max(1, self.heap[0][0] - self.G))
            if P:
                k = min(k, max(1, math.ceil(head.left / P)) if head.left >= P else 1)
            if Bs:
                toks_step = B * (1 if not c.spec_k else 1)
                room = c.pool_tokens - self.kv_used
                if room < toks_step:
                    self.preempt_one()
                    self.preempt_events += 1
                    continue
                k = min(k, max(1, int(room // max(1, toks_step))))
            if self.waiting and self.next_arrival > self.t:
                k = min(k, max(1, int(max(wall, 0.02) // wall)))  # re-try admission often
            k = min(k, max(1, math.ceil((min(t1, self.next_arrival) - self.t) / wall)))
            span = k * wall
            # GPU activity on each rank
            for r, (act, (d, pre, cm)) in enumerate(zip(acts, costs)):
                own_d = (d + (self.x_gpu if Bs else 0.0)) / (1 - other)
                own_p = pre / (1 - other)
                wait = max(0.0, t_gpu - own_d - own_p - cm / (1 - other))
                pf = P / max(1, P + Bs)
                if Bs:
                    act.add(self.t, span, "decode", nbytes=k * nbytes, flops=k * flops * (1 - pf),
                            duty=min(1.0, own_d / wall))
                if P:
                    act.add(self.t, span, "gemm", flops=k * flops * pf,
                            nbytes=0.0 if Bs else k * nbytes, duty=min(1.0, own_p / wall))
                if cm or wait > 1e-5:
                    act.add(self.t, span, "nccl", duty=min(1.0, (cm + wait) / wall),
                            nbytes=k * 1e6)
                    act.nvlink_bytes += k * (Bs + P) * c.model.hidden * 2 * c.model.layers * 2
                if other:
                    act.add(self.t, span, "gemm", other=True, duty=other * t_gpu / wall,
                            flops=k * other * t_gpu * spec.flops * 0.5)
            self.flops += k * flops
            self.rbytes += k * nbytes
            self.wbytes += k * (Bs + P) * c.model.kv_bytes_tok * c.kv_dtype_bytes / 2 / c.tp
            self.forward_s += k * t_gpu
            work = k * (host + self.x_cpu)
            self.cpu_busy += min(span * min(1.0, share), work + max(0.0, span - k * host_s) * 0.85)
            self.steps += k
            self.graph_launches += k
            self.launches += k * (6 + c.kernels_per_step)
            # tokens
            if Bs:
                acc = 0.0
                if c.spec_k:
                    a = max(0.0, min(0.98, ctl.spec_accept(self.t)))
                    acc = sum(a ** i for i in range(1, c.spec_k + 1))
                    self.drafts += k * B
                    self.draft_tokens += k * B * c.spec_k
                    self.accepted += k * B * acc
                # tokens per sequence per step: 1 + accepted (spec) — as whole steps of progress
                adv = 1 + acc
                self.gen_tokens += k * B * adv
                first_itl = wall + self.stall
                hs = [self.itl_all] + ([self.h["itl"]] if "itl" in self.h else [])
                for hh in hs:
                    hh.observe(first_itl, B)
                    hh.observe(w1, B * (k - 1) * (1 - p_j))
                    hh.observe(w2, B * (k - 1) * p_j)
                self.stall = 0.0
                self.kv_used += int(k * B * adv)
                # speculative progress finishes sequences sooner: count steps as adv each
                self.G += k if not c.spec_k else max(1, round(k * adv))
            elif sgl_prefill and B:
                self.stall += span
            self.t += span
            # prefill progress
            if P:
                left = k * P
                while self.prefill and left > 0:
                    r = self.prefill[0]
                    take = min(left, r.left)
                    r.left -= take
                    left -= take
                    if r.left <= 0:
                        self.prefill.popleft()
                        self.start_decode(r)
                    else:
                        break
            # finishes
            while self.heap and self.heap[0][0] <= self.G:
                _, _, r = heapq.heappop(self.heap)
                if r not in self.running:
                    continue
                self.remove(r)
                self.finish(r)

    # ------------------------------------------------------------ scrape
    def gauges(self):
        run = len(self.running) + len(self.prefill)
        return dict(running=float(run), waiting=float(len(self.waiting)),
                    kv=min(1.0, max(0.0, self.kv_used / self.cfg.pool_tokens)))
