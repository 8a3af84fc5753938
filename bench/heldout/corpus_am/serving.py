"""Request-level serving simulation: arrivals, a continuous-batching scheduler over a KV pool
in blocks, chunked prefill, decode time from HBM bytes and FLOPs, CUDA-graph / eager launch
cost, host scheduler time stretched by CPU contention, speculative decoding, preemption."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from corpus_am.common import hist_add
from corpus_am.engines import SGL_B, TGI_B, VLLM_B


@dataclass
class Model:
    name: str
    params: float  # active parameters
    weight_bytes: float  # per GPU (after TP split)
    kv_tok: float  # KV bytes per token per GPU
    layers: int
    d_model: int
    vocab: int = 152064


@dataclass
class Cfg:
    kind: str = "vllm"
    tp: int = 1
    block: int = 16
    blocks: int = 20000
    max_seqs: int = 256
    budget: int = 8192
    chunked: bool = True
    graphs: bool = True
    host_base: float = 0.0022
    host_seq: float = 0.000025
    spec_k: int = 0
    draft_bytes: float = 0.0
    prefix_hit: float = 0.3  # share of prompt tokens served from the prefix cache
    eff: float = 0.55
    kernels: int = 400  # kernels per forward pass (eager)


@dataclass
class Req:
    t: float
    prompt: int
    out: int
    n: int = 1
    lp: int = 0  # logprobs requested
    cached: int = 0
    prefilled: int = 0
    gen: int = 0
    blocks: int = 0
    first: float | None = None
    sched: float | None = None
    admitted: float = 0.0
    pre: int = 0
    eff_prompt: int = 0
    hit: float | None = None  # this request's prefix-cache share (a shared long context)


class Stats:
    def __init__(self, kind, spec):
        self.kind = kind
        self.spec = spec
        self.running = self.waiting = self.waiting_capacity = 0
        self.kv_usage = 0.0
        self.prompt_tokens = self.cached_tokens = self.gen_tokens = 0.0
        self.preemptions = self.retracted_tokens = 0.0
        self.finished = self.arrived = 0
        self.flops = self.read_bytes = self.write_bytes = 0.0
        self.spec_drafts = self.spec_draft_tokens = self.spec_accepted = 0
        self.spec_len = self.spec_rate = 0.0
        self.prefill_s = self.decode_s = 0.0  # request-seconds (vLLM phase sums)
        self.prefill_s_gpu = self.decode_s_gpu = 0.0
        self.steps = self.prefill_steps = 0
        self.max_ctx = 0
        self.gen_rate = self.prompt_rate = self.pred_rate = 0.0
        self.hit_rate = 0.0
        self.kv_used_tokens = self.kv_free_tokens = self.kv_evictable = 0
        self.busy_slots = 0.0
        self.gen_tokens_finished = self.prompt_tokens_finished = 0.0
        B = {"vllm": VLLM_B, "sglang": SGL_B, "tgi": TGI_B, "llamacpp": VLLM_B}[kind]
        self.B = B
        names = list(B)
        self.h = {k: [0.0] * (len(B[k]) + 1) for k in names}
        for k in ("maxgen", "maxtok"):
            self.h[k] = [0.0] * (len(VLLM_B["tok"]) + 1)
        self.hsum = {k: 0.0 for k in list(self.h)}

    def obs(self, key, v, w=1.0):
        if key not in self.h:
            return
        bk = {"maxgen": "tok", "maxtok": "tok"}.get(key, key)
        bounds = (VLLM_B if key in ("maxgen", "maxtok") else self.B)[bk]
        hist_add(self.h[key], bounds, v, w)
        self.hsum[key] += v * w


class Knobs:
    """Time-varying conditions a fault changes: each a function of sim time."""

    def __init__(self, **kw):
        self.cpu_share = kw.get("cpu_share", lambda t: 1.0)  # scheduler thread's CPU share
        self.gpu_share = kw.get("gpu_share", lambda t: 1.0)  # time-slice share of the GPU
        self.accept = kw.get("accept", lambda t: 0.75)  # spec acceptance per draft token
        self.bw_factor = kw.get("bw_factor", lambda t: 1.0)  # extra HBM bytes per weight byte
        self.host_extra = kw.get("host_extra", lambda t: 0.0)  # seconds added per step
        self.graphs = kw.get("graphs", None)  # override CUDA graphs on/off: f(t)->bool
        self.chunked = kw.get("chunked", None)


class Serve:
    def __init__(self, model: Model, cfg: Cfg, spec, arrivals, acc, rng, knobs=None):
        self.m, self.c, self.g = model, cfg, spec
        self.arr = sorted(arrivals, key=lambda r: r.t)
        self.ai = 0
        self.acc = acc
        self.rng = rng
        self.k = knobs or Knobs()
        self.now = arrivals[0].t if False else 0.0
        self.running: list[Req] = []
        self.waiting: list[Req] = []
        self.free = cfg.blocks
        self.st = Stats(cfg.kind, cfg.spec_k > 0)
        self.clock = 1.0
        self.host_cpu = 0.0  # scheduler CPU seconds used (for the process tree)
        self.launches = 0
        self.graph_launches = 0
        self.gpu_busy_s = 0.0
        self._gen_last = (0.0, 0.0)

    def _blocks_for(self, r):
        bs = self.c.block
        held = r.prefilled
        out = max(0, r.gen)
        return math.ceil(min(held, r.eff_prompt) / bs) + r.n * math.ceil(out / bs)

    def _preempt_one(self, t):
        victim = self.running.pop()  # the newest (vLLM recompute policy)
        self.free += victim.blocks
        victim.blocks = 0
        victim.eff_prompt = victim.prompt + victim.gen
        self.st.retracted_tokens += victim.prefilled
        victim.prefilled = 0
        victim.pre += 1
        self.st.preemptions += 1
        self.waiting.insert(0, victim)

    def run_until(self, t_end):
        c, m = self.c, self.m
        while self.now < t_end - 1e-9:
            t = self.now
            while self.ai < len(self.arr) and self.arr[self.ai].t <= t:
                r = self.arr[self.ai]
                self.ai += 1
                r.eff_prompt = r.prompt
                self.waiting.append(r)
                self.st.arrived += 1
            if not self.running and not self.waiting:
                nxt = self.arr[self.ai].t if self.ai < len(self.arr) else t_end
                self.now = min(max(nxt, t + 1e-6), t_end)
                continue
            chunked = c.chunked if self.k.chunked is None else self.k.chunked(t)
            dec = [r for r in self.running if r.prefilled >= r.eff_prompt]
            k = c.spec_k
            budget = c.budget
            pre: list[tuple[Req, int]] = []
            dec_tokens = sum(r.n for r in dec) * (1 + k)
            if chunked:
                budget -= dec_tokens
                for r in self.running:
                    if r.prefilled < r.eff_prompt and budget > 0:
                        ch = min(budget, r.eff_prompt - r.prefilled)
                        pre.append((r, ch))
                        budget -= ch
                while self.waiting and budget > 0 and len(self.running) < c.max_seqs:
                    r = self.waiting[0]
                    start = self._est_cached(r)
                    ch = min(budget, r.eff_prompt - start)
                    need = math.ceil((start + ch) / c.block) + r.n
                    if need > self.free:
                        break
                    self.waiting.pop(0)
                    self._admit(r, t)
                    pre.append((r, ch))
                    budget -= ch
            else:
                if self.waiting and len(self.running) < c.max_seqs:
                    while self.waiting and len(self.running) < c.max_seqs:
                        r = self.waiting[0]
                        ch = r.eff_prompt - self._est_cached(r)
                        if pre and ch > budget:
                            break
                        need = math.ceil(r.eff_prompt / c.block) + r.n
                        if need > self.free:
                            break
                        self.waiting.pop(0)
                        self._admit(r, t)
                        pre.append((r, ch))
                        budget -= ch
                    if pre:
                        dec = []  # a prefill-only step: decodes wait
            # KV for decode growth; preempt if the pool is out
            K = 1
            if dec and not pre:
                rem = min(math.ceil((r.out - r.gen) / max(1.0, 1 + k * self.k.accept(t) * 0.8)) for r in dec)
                K = max(1, min(64, rem))
            while dec:
                need = 0
                for r in dec:
                    need += r.n * (math.ceil((r.gen + K * (1 + k)) / c.block) - math.ceil(r.gen / c.block))
                if need <= self.free:
                    break
                if K > 1:
                    K = max(1, K // 2)
                    continue
                self._preempt_one(t)
                dec = [r for r in self.running if r.prefilled >= r.eff_prompt and r in dec]
                if not self.running:
                    break
            if not dec and not pre:
                nxt = self.arr[self.ai].t if self.ai < len(self.arr) else t_end
                self.now = min(max(nxt, t + 0.002), t_end)
                continue
            # cost of one step
            D = sum(r.n for r in dec)
            C = sum(r.n * (r.eff_prompt + r.gen) for r in dec) + D * K * (1 + k) / 2
            P = sum(ch for _, ch in pre)
            ctx_pre = sum(ch * (r.prefilled + ch / 2) for r, ch in pre)
            lp_seqs = sum(r.n for r in dec if r.lp)
            bw = self.g.hbm_bps * 0.82
            bytes_ = m.weight_bytes * self.k.bw_factor(t) + (C + P + D) * m.kv_tok
            flops = 2 * m.params * (P + D * (1 + k)) / c.tp + 4 * m.layers * m.d_model * (C + ctx_pre) / c.tp
            t_mem = bytes_ / bw
            t_cmp = flops / (self.g.tflops * c.eff * self.clock)
            gpu = max(t_mem, t_cmp) + 0.15 * min(t_mem, t_cmp) + c.kernels * 1.2e-6
            if k:
                gpu += k * (c.draft_bytes / bw + 60e-6 + c.kernels * 0.4e-6)
            gpu += lp_seqs * m.vocab * 2.5e-9
            share = self.k.gpu_share(t)
            graphs = c.graphs if self.k.graphs is None else self.k.graphs(t)
            use_graph = graphs and not pre
            launch = 40e-6 if use_graph else c.kernels * (1 + k) * 4.5e-6
            cpu = self.k.cpu_share(t)
            host = (c.host_base + c.host_seq * (D + len(pre) * 8) + lp_seqs * 1.5e-3) / cpu + self.k.host_extra(t)
            launch /= cpu
            span = max(gpu / share, launch)
            wall = host + span
            T = K * wall
            # GPU activity of these K steps
            busy = gpu / wall
            tokens = P + D * (1 + k)
            sm_f = 0.95 if P > 256 else min(0.92, 0.45 + 0.45 * min(1.0, tokens / 96))
            ten_f = min(0.9, 0.85 * t_cmp / gpu) if P else min(0.6, 0.7 * t_cmp / gpu)
            dr_f = min(0.95, 0.93 * t_mem / gpu)
            self.acc.add(t, t + T, busy=busy, sm=busy * sm_f, ten=busy * ten_f, dram=busy * dr_f)
            self.gpu_busy_s += gpu * K
            self.host_cpu += (host + launch) * K * cpu
            if use_graph:
                self.graph_launches += K * (1 + (k > 0))
                self.launches += K * 6
            else:
                self.launches += K * c.kernels * (1 + k)
            st = self.st
            st.flops += flops * K
            st.read_bytes += bytes_ * K
            st.write_bytes += (P + D * K) * m.kv_tok
            st.steps += K
            st.obs("iter", tokens, K)
            if pre:
                st.prefill_s_gpu += gpu
                st.prefill_steps += 1
            else:
                st.decode_s_gpu += gpu * K
            end = t + T
            # decode outputs
            done = []
            if dec:
                a = self.k.accept(t) if k else 0.0
                emitted_mean = (1 - a ** (k + 1)) / (1 - a) if k else 1.0
                for r in dec:
                    e = K * emitted_mean
                    if k:
                        jitter = 1 + self.rng.gauss(0, 0.25 / math.sqrt(K * r.n))
                        e = max(K, e * jitter)
                    e = min(e, r.out - r.gen)
                    e_int = max(1, int(round(e)))
                    r.gen += e_int
                    st.gen_tokens += e_int * r.n
                    if k:
                        st.spec_drafts += K * r.n
                        st.spec_draft_tokens += K * k * r.n
                        st.spec_accepted += max(0, e_int - K) * r.n
                    nobs = e_int * r.n
                    itl = T / e_int
                    key = "itl" if "itl" in st.h else "tpot"
                    if key == "itl":
                        st.obs("itl", itl * 0.9, nobs * 0.25)
                        st.obs("itl", itl, nobs * 0.5)
                        st.obs("itl", itl * 1.15, nobs * 0.25)
                    st.decode_s += T * r.n if False else T
                    r.blocks = self._blocks_for(r)
                    if r.gen >= r.out:
                        done.append(r)
                if k:
                    st.spec_rate = a
                    st.spec_len = emitted_mean
            for r, ch in pre:
                r.prefilled += ch
                st.prefill_s += T
                if r.prefilled >= r.eff_prompt:
                    if r.first is None:
                        r.first = end
                        st.obs("ttft", end - r.t)
                    if r.gen == 0:
                        r.gen = 1
                        st.gen_tokens += r.n
                    if r.gen >= r.out:
                        done.append(r)
                r.blocks = self._blocks_for(r)
            # recompute the free pool
            for r in done:
                if r in self.running:
                    self.running.remove(r)
                self._finish(r, end)
            self.free = c.blocks - sum(r.blocks for r in self.running)
            if self.free < 0:
                while self.free < 0 and self.running:
                    self._preempt_one(end)
                    self.free = c.blocks - sum(r.blocks for r in self.running)
            self.now = end
        self._gauges()

    def _est_cached(self, r):
        """Prompt tokens the prefix cache will supply when this request is admitted (drawn
        once; a preempted request recomputes everything)."""
        if r.sched is not None:
            return 0
        if r.cached == 0:
            cached = int(r.prompt * (r.hit if r.hit is not None else self.c.prefix_hit * (0.6 + 0.8 * self.rng.random())))
            r.cached = max(0, min(cached, r.prompt - 1))
        return r.cached

    def _admit(self, r, t):
        if r.sched is None:
            r.sched = t
            self.st.obs("queue", t - r.t)
            self._est_cached(r)
            self.st.prompt_tokens += r.prompt
            self.st.cached_tokens += r.cached
            r.prefilled = r.cached
        else:
            r.prefilled = 0
        r.admitted = t
        r.blocks = self._blocks_for(r)
        self.running.append(r)

    def _finish(self, r, t):
        st = self.st
        st.finished += 1
        st.obs("e2e", t - r.t)
        if "tpot" in st.h and r.gen > 1 and r.first is not None:
            st.obs("tpot", (t - r.first) / (r.gen - 1))
        if "n" in st.h:
            st.obs("n", r.n)
            st.obs("maxtok", r.out)
            st.obs("maxgen", r.gen)
        if "gen" in st.h:
            st.obs("gen", r.gen)
            st.obs("inp", r.prompt)
            st.gen_tokens_finished += r.gen
            st.prompt_tokens_finished += r.prompt
        st.max_ctx = max(st.max_ctx, r.prompt + r.gen)

    def _gauges(self):
        st, c = self.st, self.c
        st.running = len(self.running)
        st.waiting = len(self.waiting)
        used = c.blocks - self.free
        st.kv_usage = max(0.0, min(1.0, used / c.blocks))
        st.waiting_capacity = st.waiting if self.free < c.blocks * 0.05 else 0
        pool = c.blocks * c.block
        st.kv_used_tokens = used * c.block
        st.kv_evictable = int(max(0, pool - st.kv_used_tokens) * 0.35)
        st.kv_free_tokens = pool - st.kv_used_tokens - st.kv_evictable
        st.hit_rate = st.cached_tokens / st.prompt_tokens if st.prompt_tokens else 0.0
        st.busy_slots = float(st.running)

    def rates(self, dt):
        g0, p0 = self._gen_last
        st = self.st
        st.gen_rate = (st.gen_tokens - g0) / dt
        st.pred_rate = st.gen_rate / max(1, st.running)
        st.prompt_rate = (st.prompt_tokens - p0) / dt
        self._gen_last = (st.gen_tokens, st.prompt_tokens)


def arrivals(rng, t0, t1, rate, prompt, out, *, bursty=0.0, n=1, lp=0):
    """Poisson arrivals with a time-varying rate(t) (thinning) and optional burstiness."""
    res = []
    t = t0
    peak = max(rate(t0 + (t1 - t0) * i / 200) for i in range(201)) * (1 + bursty) + 1e-9
    while True:
        t += rng.expovariate(peak)
        if t >= t1:
            break
        lam = rate(t)
        if bursty:
            lam *= 1 + bursty * math.sin(t / 7.0 + 3 * math.sin(t / 23.0))
        if rng.random() < lam / peak:
            res.append(Req(t, max(8, int(prompt(rng))), max(1, int(out(rng))), n, lp))
    return res


def lognorm(median, sigma, lo=1, hi=10**6):
    return lambda rng: min(hi, max(lo, median * math.exp(rng.gauss(0, sigma))))
