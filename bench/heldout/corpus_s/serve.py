"""A request-level continuous-batching server (vLLM V1 / SGLang / llama.cpp) on a KV pool.

Time advances in sub-steps of ``dt``; within one the batch composition is held and the
number of forward steps follows from the step cost: weights + KV bytes over HBM bandwidth,
FLOPs over tensor throughput, the tensor-parallel all-reduce, and the host's scheduling
time per step (overlapped by async scheduling).  Requests arrive (Poisson or closed-loop
clients), wait, are admitted when a slot and KV blocks are free, prefill in chunks within
the step token budget (vLLM mixes them into decode steps; SGLang runs separate extend
batches that pause decode), decode, finish, and are preempted (vLLM, recompute) or
retracted (SGLang) when the pool runs out.  The engine's own counters and histograms are
filled at the events where the engine fills them."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from . import minnp as np

from gputop.schema import EngineHistogram, EngineSample

from .hw import GpuSpec, ModelSpec

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
            20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
            240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
            200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1,
           0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0,
             30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0,
             700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)


def one_two_five(limit: int) -> tuple[float, ...]:
    out, mant, exp = [], (1, 2, 5), 0
    while True:
        for m in mant:
            v = m * 10 ** exp
            if v > limit:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


class Hist:
    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = [float(b) for b in bounds]
        self.counts = [0.0] * (len(bounds) + 1)
        self.sum = 0.0

    def add(self, value: float, count: float = 1.0) -> None:
        self.counts[np.searchsorted(self.bounds, value)] += count
        self.sum += value * count

    def add_spread(self, value: float, count: float, rng, sigma: float = 0.12) -> None:
        """``count`` observations around ``value`` (steps differ a little from each other)."""
        if count <= 0:
            return
        w = count / 4
        for _ in range(4):
            v = value * math.exp(rng.normal(0, sigma))
            self.counts[np.searchsorted(self.bounds, v)] += w
            self.sum += v * w

    def seed(self, total: float, value: float, rng) -> None:
        """History before the recording (the process has been up for hours)."""
        self.add_spread(value, total, rng, 0.35)

    def sample(self) -> EngineHistogram:
        cum = [float(round(x)) for x in np.cumsum([round(c) for c in self.counts])]
        return EngineHistogram(self.name, tuple(float(b) for b in self.bounds),
                               tuple(float(x) for x in cum[:-1]), float(cum[-1]), round(self.sum, 4))


@dataclass
class ReqClass:
    name: str
    prompt: Callable  # rng -> int
    out: Callable  # rng -> int (tokens actually generated)
    max_tokens: int = 512
    n: int = 1
    logprobs: int | None = None
    cached_frac: float = 0.0
    host_ms_per_step: float = 0.0  # host work per step while it runs (logprobs over the vocab)
    gpu_ms_per_step: float = 0.0  # GPU work per step while it runs
    think_s: float = 1.0  # closed-loop clients: pause between requests


@dataclass
class Traffic:
    cls: ReqClass
    level: Callable  # t -> rate (req/s) or client count
    closed: bool = False
    at: tuple = ()  # one request at each of these times (level ignored)


@dataclass
class Req:
    cls: ReqClass
    arrival: float
    prompt: int
    out: int
    cached: int
    client: int = -1
    prefilled: float = 0.0
    gen: float = 0.0
    admitted: float = -1.0
    first: float = -1.0
    prefill_done: float = -1.0
    preempted: int = 0

    @property
    def kv(self) -> float:
        return self.prefilled + self.cls.n * self.gen


@dataclass
class EngineCfg:
    kind: str  # vllm | sglang | llamacpp
    model: ModelSpec
    gpu: GpuSpec
    gpus: tuple[int, ...] = (0,)
    tp: int = 1
    max_seqs: int = 256
    budget: int = 8192  # max_num_batched_tokens / chunked_prefill_size
    kv_pool_tokens: int = 400000
    block_size: int = 16
    host_ms: float = 2.2  # scheduler + sampler + output processing per step
    host_ms_per_seq: float = 0.012
    overlap: float = 0.85  # async scheduling hides this much of the host time
    spec_k: int = 0  # speculative tokens per step
    url: str = "http://127.0.0.1:8000/metrics"
    uptime_h: float = 30.0
    new_token_ratio: float = 0.4  # SGLang's reservation for outputs at admission
    mfu_metrics: bool = True
    attn_g: float = 6.0
    draft_ms: float = 0.35  # per speculative token per step (EAGLE head / draft model)


@dataclass
class Mods:
    """External conditions, each a function of time (seconds since trace start)."""
    cpu_share: Callable = lambda t: 1.0  # the engine threads' share of the CPU they want
    clk: Callable = lambda t: 1.0  # SM clock factor (throttling)
    gpu_share: Callable = lambda t: 1.0  # share of GPU time left by another process
    launch_gap_ms: Callable = lambda t: 0.0  # launch thread delayed (GPU idles meanwhile)
    straggle: Callable = lambda t: 0.0  # extra compute fraction on the straggling rank
    straggler: int | None = None
    accept: Callable = lambda t: 0.7  # speculative acceptance rate per draft token
    up: Callable = lambda t: True  # engine process running (restart scenarios)
    step_gpu_ms: Callable = lambda t: 0.0


class ServeSim:
    def __init__(self, cfg: EngineCfg, traffic: list[Traffic], mods: Mods, duration: float,
                 tick: float, rng: np.Gen, dt: float = 0.1):
        self.cfg, self.traffic, self.mods, self.rng = cfg, traffic, mods, rng
        self.dt, self.tick, self.duration = dt, tick, duration
        self.n_ticks = int(round(duration / tick))
        self.waiting: deque[Req] = deque()
        self.running: list[Req] = []
        self.clients = [[] for _ in traffic]  # per class: next send time per client (or None busy)
        k = cfg.kind
        self.h = {}
        if k == "vllm":
            lim = one_two_five(max(cfg.kv_pool_tokens, 8192) if False else 32768)
            self.h = dict(ttft=Hist("ttft", VLLM_TTFT), itl=Hist("itl", VLLM_ITL),
                          tpot=Hist("tpot", VLLM_ITL), e2e=Hist("e2e", VLLM_E2E),
                          queue=Hist("queue", VLLM_E2E), params_n=Hist("params_n", VLLM_N),
                          params_max_tokens=Hist("params_max_tokens", lim),
                          max_generation_tokens=Hist("max_generation_tokens", lim))
        elif k == "sglang":
            self.h = dict(ttft=Hist("ttft", SGL_TTFT), itl=Hist("itl", SGL_ITL),
                          e2e=Hist("e2e", SGL_E2E), queue=Hist("queue", SGL_QUEUE))
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0, retract=0.0,
                      retract_tok=0.0, drafts=0.0, draft_tok=0.0, accepted=0.0, prefill_s=0.0,
                      decode_s=0.0, forward_s=0.0, steps=0.0, flops=0.0, rbytes=0.0, wbytes=0.0)
        # per tick outputs
        n = self.n_ticks
        self.snap: list[dict] = []
        self.gpu_busy = np.zeros(n)
        self.gpu_sm = np.zeros(n)
        self.gpu_tensor = np.zeros(n)
        self.gpu_dram = np.zeros(n)
        self.gpu_busy_other = np.zeros(n)  # straggling-rank extra, and peers' collective wait
        self.host_busy = np.zeros(n)  # engine-core thread seconds of CPU
        self.launches = np.zeros(n)
        self.tokens_tick = np.zeros(n)
        self.step_ms = np.zeros(n)
        self.itl_obs = [[] for _ in range(n)]
        self.kv_used = 0.0
        self.last_itl = 0.0

    # ------------------------------------------------------------ physics of one step
    def step_cost(self, t: float, seqs: float, decode_tokens: float, prefill: float, ctx_sum: float,
                  prefill_ctx: float, gpu_extra_ms: float, host_extra_ms: float):
        cfg, m, g = self.cfg, self.cfg.model, self.cfg.gpu
        clk = self.mods.clk(t)
        bwf = min(1.0, 0.45 + 0.55 * clk)
        tokens = decode_tokens + prefill
        if tokens <= 0:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        active = m.active if m.active == m.params else min(m.params, m.active * (1 + tokens / 48))
        w_bytes = active * m.dtype_bytes / cfg.tp
        kv_bytes = ctx_sum * m.kv_per_gpu(cfg.tp) + prefill * m.kv_per_gpu(cfg.tp)
        flops = 2 * m.active / cfg.tp * tokens + prefill * prefill_ctx * m.kv_per_gpu(cfg.tp) * cfg.attn_g \
            + decode_tokens * (ctx_sum / max(seqs, 1)) * m.kv_per_gpu(cfg.tp) * 2
        t_mem = (w_bytes + kv_bytes) / (g.bw * 0.82 * bwf)
        t_cmp = flops / (g.flops * 0.58 * clk)
        t_gpu = max(t_mem, t_cmp) + 0.18 * min(t_mem, t_cmp) + 0.0004
        if cfg.tp > 1:
            t_gpu += m.layers * 2 * (9e-6 + tokens * 8192 * 2 / 300e9)
        t_gpu += (gpu_extra_ms + self.mods.step_gpu_ms(t)) / 1000
        if cfg.spec_k and decode_tokens:
            t_gpu += cfg.spec_k * cfg.draft_ms / 1000 / clk
        strag = self.mods.straggle(t)
        t_gpu_rank = t_gpu * (1 + strag)
        share = max(0.05, self.mods.gpu_share(t))
        t_gpu_eff = t_gpu_rank / share
        host = (cfg.host_ms + cfg.host_ms_per_seq * seqs + host_extra_ms) / 1000
        host /= max(0.05, self.mods.cpu_share(t))
        gap = self.mods.launch_gap_ms(t) / 1000
        exposed = max(0.0, host - cfg.overlap * t_gpu_eff) + 0.00025
        step = t_gpu_eff + exposed + gap
        return step, t_gpu, t_gpu_rank, flops, w_bytes + kv_bytes

    # ------------------------------------------------------------ traffic
    def _new(self, i: int, t: float, client: int = -1) -> Req:
        c = self.traffic[i].cls
        r = self.rng
        p = max(4, int(c.prompt(r)))
        return Req(c, t, p, max(1, min(c.max_tokens, int(c.out(r)))), int(p * c.cached_frac * r.uniform(0.85, 1.0)), client)

    def _arrivals(self, t: float) -> None:
        dt, r = self.dt, self.rng
        for i, tr in enumerate(self.traffic):
            if tr.at:
                for a in tr.at:
                    if t <= a < t + dt:
                        self.waiting.append(self._new(i, a))
                continue
            lvl = max(0.0, tr.level(t))
            if not tr.closed:
                for _ in range(r.poisson(lvl * dt)):
                    self.waiting.append(self._new(i, t + r.uniform(0, dt)))
                continue
            cl = self.clients[i]
            want = int(round(lvl))
            while len(cl) < want:
                cl.append(t + r.uniform(0, 2 * tr.cls.think_s + 0.2))
            for j in range(len(cl)):
                nxt = cl[j]
                if nxt is not None and nxt <= t + dt:
                    if j >= want:
                        cl[j] = math.inf  # retired
                        continue
                    self.waiting.append(self._new(i, max(t, nxt), client=j))
                    cl[j] = None
            if len(cl) > want and all(x is not None for x in cl[want:]):
                del cl[want:]

    def _client_done(self, req: Req, t: float) -> None:
        if req.client < 0:
            return
        for i, tr in enumerate(self.traffic):
            if tr.cls is req.cls and tr.closed:
                cl = self.clients[i]
                if req.client < len(cl):
                    cl[req.client] = t + self.rng.exponential(tr.cls.think_s)
                return

    # ------------------------------------------------------------ main loop
    def run(self) -> "ServeSim":
        cfg, dt, rng = self.cfg, self.dt, self.rng
        pool = cfg.kv_pool_tokens
        steps_per_tick = int(round(self.tick / dt))
        t = 0.0
        for k in range(self.n_ticks):
            for s in range(steps_per_tick):
                t = (k * steps_per_tick + s) * dt
                if not self.mods.up(t):
                    if self.mods.up(t - dt):  # the process exits: a new one counts from zero
                        for key in self.c:
                            self.c[key] = 0.0
                        for h in self.h.values():
                            h.counts = [0.0] * len(h.counts)
                            h.sum = 0.0
                    self.waiting.clear()
                    self.running.clear()
                    self.kv_used = 0
                    for cl in self.clients:
                        cl.clear()
                    continue
                self._arrivals(t)
                self._substep(t, k, pool)
            self._snapshot(k, t + dt)
        return self

    def _admit(self, t: float, pool: float) -> None:
        cfg = self.cfg
        used = sum(r.kv for r in self.running)
        while self.waiting and len(self.running) < cfg.max_seqs:
            r = self.waiting[0]
            need = r.prompt + r.cls.n * 16
            if cfg.kind == "sglang":
                need = r.prompt + cfg.new_token_ratio * r.cls.n * (r.out - r.gen) + \
                    sum(cfg.new_token_ratio * x.cls.n * max(0, x.out - x.gen) for x in self.running[-8:]) / 8
            if used + need > pool * (0.985 if cfg.kind == "vllm" else 0.96):
                break
            self.waiting.popleft()
            if r.admitted < 0:
                r.admitted = t
                if "queue" in self.h:
                    self.h["queue"].add(max(0.0, t - r.arrival) + rng_small(self.rng))
            if r.prefilled == 0 and r.cached:
                r.prefilled = r.cached
                self.c["cached"] += r.cached
                self.c["prompt"] += r.cached
            self.running.append(r)
            used += r.prompt
        self.kv_used = used

    def _substep(self, t: float, k: int, pool: float) -> None:
        cfg, dt, rng, mods = self.cfg, self.dt, self.rng, self.mods
        self._admit(t, pool)
        run = self.running
        if not run:
            return
        dec = [r for r in run if r.prefilled >= r.prompt]
        pre = [r for r in run if r.prefilled < r.prompt]
        seqs = sum(r.cls.n for r in dec)
        spec = cfg.spec_k
        alpha = mods.accept(t) if spec else 0.0
        per_step_tokens = (spec + 1) if spec else 1
        dec_tok = seqs * per_step_tokens
        ctx_sum = sum(r.prompt * r.cls.n + r.cls.n * r.gen for r in dec) if dec else 0.0
        host_x = sum(r.cls.host_ms_per_step for r in run)
        gpu_x = sum(r.cls.gpu_ms_per_step for r in run)
        pre_rem = sum(r.prompt - r.prefilled for r in pre)
        if cfg.kind == "llamacpp":
            budget = min(cfg.budget, 2048)
        else:
            budget = cfg.budget
        p_step = min(max(0.0, budget - (dec_tok if cfg.kind == "vllm" else 0)), pre_rem)
        pctx = (sum(r.prefilled for r in pre) / len(pre) + p_step / 2) if pre else 0.0
        t_dec, g_dec, gr_dec, f_dec, b_dec = self.step_cost(t, seqs, dec_tok, 0, ctx_sum, 0, gpu_x, host_x) \
            if dec_tok else (0, 0, 0, 0, 0)
        if p_step > 0:
            if cfg.kind == "vllm":
                t_mix, g_mix, gr_mix, f_mix, b_mix = self.step_cost(t, seqs + len(pre), dec_tok, p_step, ctx_sum,
                                                                     pctx, gpu_x, host_x)
            else:  # separate extend batch, then the decode step
                t_e, g_e, gr_e, f_e, b_e = self.step_cost(t, len(pre), 0, p_step, 0, pctx, 0, cfg.host_ms * 0.5)
                t_mix, g_mix, gr_mix, f_mix, b_mix = (t_e + t_dec, g_e + g_dec, gr_e + gr_dec, f_e + f_dec,
                                                       b_e + b_dec)
            m_need = math.ceil(pre_rem / p_step) if p_step else 0
            if m_need * t_mix >= dt:
                m, n_dec = dt / t_mix, 0.0
            else:
                m = m_need
                n_dec = (dt - m * t_mix) / t_dec if t_dec > 0 else 0.0
        else:
            m, n_dec, t_mix, g_mix, gr_mix, f_mix, b_mix = 0, (dt / t_dec if t_dec > 0 else 0), 0, 0, 0, 0, 0
        if not dec_tok and m == 0:
            return
        steps = m + n_dec
        busy_t = m * g_mix + n_dec * g_dec
        rank_t = m * gr_mix + n_dec * gr_dec
        wall_t = m * t_mix + n_dec * t_dec
        # GPU activity: straggling rank computes rank_t, peers wait in the collective
        sm_frac = 0.72 if p_step == 0 else 0.72 + 0.2 * min(1.0, m * (g_mix - g_dec) / max(busy_t, 1e-9))
        flops = m * f_mix + n_dec * f_dec
        nbytes = m * b_mix + n_dec * b_dec
        self.gpu_busy[k] += min(dt, rank_t)
        self.gpu_sm[k] += min(dt, rank_t * sm_frac)
        self.gpu_tensor[k] += flops / cfg.gpu.flops / max(mods.clk(t), 0.2)
        self.gpu_dram[k] += nbytes / cfg.gpu.bw
        self.gpu_busy_other[k] += min(dt, rank_t - busy_t)
        host_t = steps * (cfg.host_ms + cfg.host_ms_per_seq * (seqs + len(pre)) + host_x) / 1000
        self.host_busy[k] += min(dt * 0.995, host_t / max(0.05, mods.cpu_share(t)) * mods.cpu_share(t))
        self.launches[k] += steps
        self.c["steps"] += steps
        self.c["flops"] += flops
        self.c["rbytes"] += nbytes
        self.c["wbytes"] += (dec_tok * steps + m * p_step) * cfg.model.kv_per_gpu(cfg.tp)
        self.c["forward_s"] += busy_t
        # prefill progress (FCFS)
        budget_tokens = m * p_step
        first_now = []
        for r in pre:
            if budget_tokens <= 0:
                break
            take = min(r.prompt - r.prefilled, budget_tokens)
            r.prefilled += take
            budget_tokens -= take
            self.c["prompt"] += take
            if r.prefilled >= r.prompt - 1e-6:
                r.prefilled = r.prompt
                r.prefill_done = t + dt * 0.5
                first_now.append(r)
        for r in first_now:
            if r.first < 0:
                r.first = t + dt * rng.uniform(0.3, 1.0)
                self.h["ttft"].add(r.first - r.arrival) if "ttft" in self.h else None
            r.gen = max(r.gen, 1.0)
            self.c["gen"] += r.cls.n
        # decode progress
        if dec:
            eff = (1 - alpha ** (spec + 1)) / (1 - alpha) if spec else 1.0
            tok_per_seq = steps * eff
            if spec:
                self.c["drafts"] += steps * seqs
                self.c["draft_tok"] += steps * seqs * spec
                self.c["accepted"] += steps * seqs * (eff - 1)
            if "itl" in self.h:
                per = seqs
                if n_dec > 0:
                    self.h["itl"].add_spread(t_dec, n_dec * per * eff, rng)
                if m > 0:
                    self.h["itl"].add_spread(t_mix, m * per * eff, rng, 0.2)
            mean_itl = wall_t / max(steps, 1e-9) / eff
            self.itl_obs[k].append((mean_itl, steps * seqs))
            done = []
            for r in dec:
                r.gen += tok_per_seq
                self.c["gen"] += tok_per_seq * r.cls.n
                self.tokens_tick[k] += tok_per_seq * r.cls.n
                if r.gen >= r.out:
                    extra = (r.gen - r.out) * r.cls.n
                    self.c["gen"] -= extra
                    self.tokens_tick[k] -= extra
                    r.gen = r.out
                    done.append(r)
            self.c["decode_s"] += wall_t * len(dec)
            for r in done:
                self._finish(r, t + dt * rng.uniform(0.2, 1.0))
        self.c["prefill_s"] += wall_t * len(pre)
        self.step_ms[k] += wall_t
        # KV pool: preempt (vLLM) / retract (SGLang) the newest requests when it is full
        used = sum(r.kv for r in self.running)
        while used > pool and len(self.running) > 1:
            victim = self.running.pop()
            used -= victim.kv
            if cfg.kind == "sglang":
                self.c["retract"] += 1
                self.c["retract_tok"] += victim.prompt
            else:
                self.c["preempt"] += 1
            victim.prompt = int(victim.prompt + victim.gen * victim.cls.n)
            victim.out = max(1, int(victim.out - victim.gen))
            victim.gen = 0.0
            victim.prefilled = 0.0
            victim.cached = 0
            victim.preempted += 1
            self.waiting.appendleft(victim)
        self.kv_used = used

    def _finish(self, r: Req, t: float) -> None:
        self.running.remove(r)
        self.c["finished"] += 1
        h = self.h
        if h:
            h["e2e"].add(t - r.arrival)
            if "tpot" in h and r.out > 1 and r.first > 0:
                h["tpot"].add((t - r.first) / (r.out - 1))
            if "params_n" in h:
                h["params_n"].add(r.cls.n)
                h["params_max_tokens"].add(r.cls.max_tokens)
                h["max_generation_tokens"].add(r.cls.max_tokens)
        self._client_done(r, t)

    # ------------------------------------------------------------ what the engine reports
    def _snapshot(self, k: int, t: float) -> None:
        cfg = self.cfg
        if not self.mods.up(t - self.dt):
            self.snap.append(None)
            return
        self.snap.append(dict(
            c=dict(self.c), running=len(self.running), waiting=len(self.waiting),
            kv=min(1.0, self.kv_used / cfg.kv_pool_tokens),
            kv_used=self.kv_used,
            hist={n: h.sample() for n, h in self.h.items()},
            accept=self.mods.accept(t) if cfg.spec_k else None))

    def seed_history(self, hours: float, tok_rate: float, itl: float, req_tokens: float) -> None:
        """Counters as an engine up for ``hours`` at about this load."""
        r, sec = self.rng, hours * 3600
        gen = tok_rate * sec
        reqs = gen / req_tokens
        self.c.update(gen=gen, prompt=gen * 1.7, cached=gen * 0.4, finished=reqs,
                      prefill_s=reqs * 0.08, decode_s=reqs * itl * req_tokens, steps=sec / itl * 0.6,
                      forward_s=sec * 0.6, flops=sec * 2e14, rbytes=sec * 1.5e12, wbytes=sec * 2e9,
                      drafts=0.0, draft_tok=0.0, accepted=0.0)
        if self.cfg.spec_k:
            self.c.update(drafts=gen / 3.1, draft_tok=gen / 3.1 * self.cfg.spec_k, accepted=gen / 3.1 * 2.1)
        for name, h in self.h.items():
            if name == "itl":
                h.seed(gen, itl, r)
            elif name in ("ttft",):
                h.seed(reqs, 0.12, r)
            elif name == "queue":
                h.seed(reqs, 0.004, r)
            elif name == "e2e":
                h.seed(reqs, itl * req_tokens, r)
            elif name == "tpot":
                h.seed(reqs, itl, r)
            elif name == "params_n":
                h.add(1.0, round(reqs))
            elif name in ("params_max_tokens", "max_generation_tokens"):
                h.seed(reqs, req_tokens * 2, r)


def rng_small(rng) -> float:
    return float(rng.uniform(0.0005, 0.004))


def engine_sample(sim: ServeSim, k: int, time_wall: float, time_mono: float, pids: tuple[int, ...],
                  cpu_s: float | None, invol: int | None, busiest: tuple[str, float] | None) -> EngineSample | None:
    s = sim.snap[k]
    if s is None:
        return None
    cfg, c = sim.cfg, s["c"]
    common = dict(url=cfg.url, model=cfg.model.name, time_mono_s=round(time_mono - 0.012, 6),
                  time_wall_s=round(time_wall - 0.012, 6), pids=pids, cpu_s=cpu_s,
                  ctx_involuntary=invol, busiest_thread=busiest[0] if busiest else "",
                  busiest_thread_cpu_s=busiest[1] if busiest else None,
                  tensor_parallel=cfg.tp, data_parallel=1)
    kvb = int(cfg.model.kv_per_gpu(cfg.tp))
    if cfg.kind == "vllm":
        blocks = cfg.kv_pool_tokens // cfg.block_size
        spec = {}
        if cfg.spec_k:
            spec = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["draft_tok"]),
                        spec_accepted_tokens_total=round(c["accepted"]))
        mfu = {}
        if cfg.mfu_metrics:
            mfu = dict(flops_total=float(round(c["flops"])), read_bytes_total=float(round(c["rbytes"])),
                       write_bytes_total=float(round(c["wbytes"])))
        return EngineSample(
            kind="vllm", generation_tokens_total=float(round(c["gen"])),
            prompt_tokens_total=float(round(c["prompt"])), prompt_tokens_cached_total=float(round(c["cached"])),
            requests_finished_total=float(round(c["finished"])), requests_running=float(s["running"]),
            requests_waiting=float(s["waiting"]), kv_usage_ratio=round(s["kv"], 6),
            num_gpu_blocks=blocks, block_size=cfg.block_size, kv_pool_bytes=blocks * cfg.block_size * kvb,
            kv_pool_tokens=blocks * cfg.block_size, cache_dtype="auto",
            histograms=tuple(s["hist"].values()), preemptions_total=float(round(c["preempt"])),
            waiting_by_reason={"capacity": float(s["waiting"] if s["kv"] > 0.9 else 0),
                               "deferred": 0.0},
            prefill_seconds_total=round(c["prefill_s"], 3), decode_seconds_total=round(c["decode_s"], 3),
            **spec, **mfu, **common)
    if cfg.kind == "sglang":
        used = s["kv_used"]
        spec = {}
        if cfg.spec_k:
            a = s["accept"]
            spec = dict(spec_accept_ratio=round(a, 4),
                        spec_accept_length=round((1 - a ** (cfg.spec_k + 1)) / (1 - a), 3))
        return EngineSample(
            kind="sglang", generation_tokens_total=float(round(c["gen"])),
            prompt_tokens_total=float(round(c["prompt"])), prompt_tokens_cached_total=float(round(c["cached"])),
            requests_finished_total=float(round(c["finished"])), requests_running=float(s["running"]),
            requests_waiting=float(s["waiting"]), kv_usage_ratio=round(s["kv"], 4),
            kv_pool_tokens=cfg.kv_pool_tokens, kv_used_tokens=float(round(used)),
            kv_free_tokens=float(round(max(0, cfg.kv_pool_tokens - used) * 0.8)),
            kv_evictable_tokens=float(round(max(0, cfg.kv_pool_tokens - used) * 0.2)),
            histograms=tuple(s["hist"].values()), retracted_requests_total=float(round(c["retract"])),
            retracted_input_tokens_total=float(round(c["retract_tok"])),
            forward_seconds_total=round(c["forward_s"], 3), **spec, **common)
    # llama.cpp
    spec = {}
    if cfg.spec_k:
        spec = dict(spec_drafts_total=float(round(c["drafts"])), spec_draft_tokens_total=float(round(c["draft_tok"])),
                    spec_accepted_tokens_total=float(round(c["accepted"])))
    common.pop("tensor_parallel"), common.pop("data_parallel")
    return EngineSample(
        kind="llamacpp", generation_tokens_total=float(round(c["gen"])),
        prompt_tokens_total=float(round(c["prompt"])), prompt_tokens_cached_total=float(round(c["cached"])),
        requests_running=float(s["running"]), requests_waiting=float(s["waiting"]),
        prefill_seconds_total=round(c["prefill_s"], 4), decode_seconds_total=round(c["decode_s"], 4),
        decode_steps_total=float(round(c["steps"])), **spec, **common)
