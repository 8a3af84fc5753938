"""Request-level serving simulators: a vLLM V1-like and an SGLang-like continuous-batching
engine, written from how those schedulers behave (not from gputop's detector or simulator).

State is aggregate so a trace costs milliseconds per simulated minute: every decoding
sequence advances by one token per step, so one global decode-step counter ``G`` and, per
sequence, the value of G when it started decoding give every sequence's progress; a heap
of finishing points gives completions; sums over the decoding set give the KV tokens that
the next step reads.  Per quantum (1/6 s, the driver's utilization sample period) the
engine runs a number of (possibly fractional) steps whose duration comes from the roofline
in ``models.step_cost`` plus host overhead.

vLLM V1 (vllm/v1/core/sched/scheduler.py behaviour): running requests first (one decode
token each, chunked-prefill continuations), then waiting requests while the token budget
(max_num_batched_tokens) and max_num_seqs allow and KV blocks can be allocated; when a
running request cannot get a block the newest running request is preempted (recompute:
its blocks are freed and it re-prefills prompt + generated tokens).  Decode steps replay
CUDA graphs; steps with a prefill chunk run eagerly.

SGLang (python/sglang/srt/managers/scheduler.py, schedule_policy.PrefillAdder): prefill
batches run before decode whenever a waiting request can be admitted (decodes stall
meanwhile), admission reserves the running requests' remaining max_new_tokens times
new_token_ratio (0.7 at start, decaying per decode step, raised after a retraction); a
token-granular pool; when decode runs out of tokens the newest requests are retracted to
the queue; the radix cache serves cached prefixes without computing them; the overlap
scheduler hides most host work behind the GPU.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Callable

from gputop.schema import EngineSample, LaunchHist, ProcSample

from .hw import PROFILE_NCCL_WAIT, PROFILE_TINY, Device
from .models import ModelSpec, step_cost
from .util import (SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, VLLM_E2E, VLLM_ITL, VLLM_N,
                   VLLM_QUEUE, VLLM_TTFT, Hist, build_1_2_5, launch_buckets, lognormal,
                   poisson)


@dataclass
class Stream:
    """One client population.  ``rate(t)`` requests/s (open loop), or ``closed`` clients
    each sending the next request ``think`` seconds after the previous one finished."""

    rate: Callable[[float], float] | None = None
    prompt: tuple = (600, 0.8, 16, 8000)  # median, sigma, lo, hi (tokens)
    out: tuple = (180, 0.8, 4, 2048)
    max_tokens: int = 2048
    cached: float = 0.0  # share of each prompt found in the prefix cache
    # True: the cached part is this conversation's own history (it occupies the pool);
    # False: a prefix shared by all requests (counted once in EngineCfg.prefix_pool_tokens)
    cached_owned: bool = False
    n: int = 1
    logprobs: int = 0
    closed: int = 0
    think: float = 0.5
    active: tuple = (0.0, math.inf)  # when a closed stream runs (relative s)
    label: str = ""


@dataclass
class EngineCfg:
    kind: str  # "vllm" | "sglang"
    model: ModelSpec
    tp: int = 1
    max_num_seqs: int = 256
    max_batched_tokens: int = 8192  # vLLM budget per step / SGLang chunked_prefill_size
    mem_util: float = 0.90  # gpu_memory_utilization / mem_fraction_static
    block_size: int = 16
    max_model_len: int = 32768
    graphs: bool = True
    host_ms: float = 1.1  # fixed host work per step
    host_seq_us: float = 9.0  # per scheduled sequence
    prefix_pool_tokens: int = 0  # shared cached prefixes held in the pool
    port: int = 8000
    label: str = ""


# Host cost per logprob entry per sequence per step in the engine's loop: gathering the
# top-k ids/values, building and serializing k+1 entries per token and detokenizing them.
# Chosen so one n=8, logprobs=20 request adds ~16 ms to every step it shares (the batch
# stalls behind it; FACTS.md section 10/12: ITL 2.4x, 9.5 s requests upstream).
LP_ENTRY_S = 0.10e-3


class Req:
    __slots__ = ("rid", "arrival", "prompt", "cached", "out", "max_tokens", "n", "lp",
                 "stream", "t_sched", "t_first", "left", "max_out", "t_lastfinish", "owned")

    def __init__(self, rid, arrival, prompt, cached, out, max_tokens, n, lp, stream):
        self.rid = rid
        self.arrival = arrival
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.max_tokens = max_tokens
        self.n = n
        self.lp = lp
        self.stream = stream
        self.t_sched = None
        self.t_first = None
        self.left = n
        self.max_out = 0
        self.t_lastfinish = 0.0
        self.owned = False


class Seq:
    __slots__ = ("req", "pf_total", "pf_done", "target", "produced", "G0", "own0", "attn0",
                 "order", "alive", "decoding", "t_last", "resumed", "lp_host", "lp_gpu",
                 "maxnew_clip", "first_counted", "p0", "adm")

    def __init__(self, req: Req, order: int):
        self.req = req
        self.pf_total = req.prompt - req.cached
        self.pf_done = 0.0
        self.target = max(1, req.out)  # tokens to generate in all
        self.produced = 0.0
        self.G0 = 0.0
        self.own0 = 0.0
        self.attn0 = 0.0
        self.order = order
        self.alive = True
        self.decoding = False
        self.t_last = 0.0
        self.resumed = False
        # logprobs over the vocabulary: top-k selection, log-softmax on fp32 logits and
        # the host-side work of building k+1 entries per token (see README)
        self.lp_host = req.lp * LP_ENTRY_S if req.lp else 0.0
        self.lp_gpu = 0.0
        self.maxnew_clip = min(req.max_tokens, 4096)
        self.first_counted = False
        self.p0 = 0.0
        self.adm = 0


def _jitter3(rng: random.Random, value: float):
    """Three step durations around ``value`` (the spread of steps in a quantum)."""
    a = value * math.exp(rng.gauss(-0.045, 0.02))
    c = value * math.exp(rng.gauss(0.06, 0.03))
    return ((a, 0.3), (value, 0.45), (c, 0.25))


def observe_steps(rng: random.Random, hist: Hist, wall: float, weight: float, jit_p: float,
                  jit_lo: float, jit_hi: float) -> None:
    """``weight`` inter-token gaps of steps lasting ``wall`` on average.  A share ``jit_p``
    of the steps was stretched by a host-side delay in [jit_lo, jit_hi] (the launch
    thread off-CPU); ~0.3% hit a Python hiccup (GC, a slow HTTP write) of 8-30 ms."""
    if weight <= 0:
        return
    mean_delay = jit_p * (jit_lo + jit_hi) / 2
    base = max(1e-4, wall - mean_delay)
    hiccup = 0.003
    body = weight * (1 - jit_p - hiccup)
    for value, w in _jitter3(rng, base):
        hist.observe(value, body * w)
    if jit_p > 0:
        for f in (0.15, 0.5, 0.85):
            hist.observe(base + jit_lo + f * (jit_hi - jit_lo), weight * jit_p / 3)
    hist.observe(base + rng.uniform(0.008, 0.030), weight * hiccup)


class Engine:
    """A serving engine on ``devices`` (one per TP rank)."""

    def __init__(self, cfg: EngineCfg, devices: list[Device], streams: list[Stream],
                 rng: random.Random, pids, env: Callable[[float], tuple] | None = None,
                 start_wall: float = 0.0):
        self.cfg = cfg
        self.kind = cfg.kind
        self.devs = devices
        self.streams = streams
        self.rng = rng
        self.env = env or (lambda t: (1.0, 0.0, 0.0, 0.0))
        self.pid_api, self.pid_core, self.pid_workers, self.pid_other = pids
        self.start_wall = start_wall
        self.hollow = False  # the engine's process replays a graph of one-element kernels
        self.hollow_slow = 1.03
        self.logprob_gpu_scale = 1.0
        self.restarts: list[tuple] = []  # (t_down, gap_s, load_s, warm_s)
        self.state = "up"
        self.t_state = 0.0
        self.up_since = 0.0
        self.proc_start = {}
        self.fresh = False
        self._init_memory()
        self._reset_counters()
        self.cpu = {}
        self._closed_next: list[tuple[float, int]] = []  # (time, stream index)
        for i, s in enumerate(streams):
            for _ in range(s.closed):
                self._closed_next.append((s.active[0] + rng.uniform(0, s.think + 0.2), i))
        self._rid = 0
        self._order = 0
        self.tick = self._new_tick()
        self.last_wall = 0.02

    # ------------------------------------------------------------------ setup
    def _init_memory(self) -> None:
        cfg, m = self.cfg, self.cfg.model
        spec = self.devs[0].spec
        total = spec.mem_total
        weights = m.weights(cfg.tp)
        act_peak = (1.2e9 + cfg.max_batched_tokens * m.d_model * 2 * 18 / cfg.tp)
        nontorch = 0.45e9 + (0.35e9 if cfg.tp > 1 else 0) + (0.6e9 if cfg.graphs else 0)
        budget = total * cfg.mem_util
        pool_bytes = max(2e9, budget - weights - act_peak - nontorch)
        kvb = m.kv_per_token(cfg.tp)
        if self.kind == "vllm":
            self.num_blocks = int(pool_bytes // (cfg.block_size * kvb))
            self.pool_tokens = self.num_blocks * cfg.block_size
        else:
            self.num_blocks = None
            self.pool_tokens = int(pool_bytes // kvb)
        self.proc_mem = int(budget - (0.0 if self.kind == "vllm" else 0.0)
                            + (1.3e9 if self.kind == "sglang" else 0.0))
        self.weights_bytes = int(weights)
        self.proc_mem_loading = 0

    def _reset_counters(self) -> None:
        kind = self.kind
        self.G = 0.0
        self.D = 0
        self.S_own0 = self.S_attn0 = self.S_G0 = 0.0
        self.S_lp_host = 0.0
        self.S_maxnew = 0.0
        self.heap: list = []
        self.decoding: list[Seq] = []  # admission order (for LIFO preemption); lazy deletes
        self.prefilling: list[Seq] = []
        self.waiting: deque[Seq] = deque()
        self.gen = self.prompt_ctr = self.cached_ctr = self.finished = 0.0
        self.preempt = self.retract = 0.0
        self.new_token_ratio = 0.7
        if kind == "vllm":
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_QUEUE), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens",
                                                build_1_2_5(self.cfg.max_model_len)),
                      "max_generation_tokens": Hist("max_generation_tokens",
                                                    build_1_2_5(self.cfg.max_model_len))}
        else:
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        self.stall = 0.0  # SGLang: time the decoders have been waiting behind prefills

    def _new_tick(self):
        return {"graph": 0.0, "eager": 0.0, "sync": 0.0, "sync_t": 0.0, "steps": 0.0,
                "busy": 0.0, "gen": 0.0, "share": 0.0, "share_n": 0, "jit_p": 0.0,
                "jit_lo": 0.0, "jit_hi": 0.0, "active_s": 0.0, "hog": 0.0}

    # ------------------------------------------------------------------ traffic
    def _new_req(self, t: float, s: Stream, si: int) -> Req:
        rng = self.rng
        p = int(lognormal(rng, s.prompt[0], s.prompt[1], s.prompt[2], s.prompt[3]))
        o = int(lognormal(rng, s.out[0], s.out[1], s.out[2], s.out[3]))
        o = max(1, min(o, s.max_tokens))
        cached = int(p * s.cached * rng.uniform(0.9, 1.0)) // 16 * 16 if s.cached else 0
        self._rid += 1
        r = Req(self._rid, t, p, min(cached, p - 1), o, s.max_tokens, s.n, s.logprobs, si)
        r.owned = s.cached_owned
        return r

    def _enqueue(self, req: Req) -> None:
        for _ in range(req.n):
            self._order += 1
            self.waiting.append(Seq(req, self._order))

    def _arrivals(self, t: float, q: float) -> None:
        rng = self.rng
        for si, s in enumerate(self.streams):
            if s.rate is None:
                continue
            lam = max(0.0, s.rate(max(0.0, t + q / 2))) * q
            for _ in range(poisson(rng, lam)):
                self._enqueue(self._new_req(t + rng.random() * q, s, si))
        if self._closed_next:
            keep = []
            for when, si in self._closed_next:
                s = self.streams[si]
                if when < t + q:
                    if s.active[0] <= when < s.active[1]:
                        self._enqueue(self._new_req(max(when, t), s, si))
                else:
                    keep.append((when, si))
            self._closed_next = keep

    # ------------------------------------------------------------------ step timing
    def _step(self, D: float, attn: float, p: float, pctx: float, n_pf: int,
              share: float, jit_mean: float):
        cfg = self.cfg
        ranks = []
        lp_gpu = 0.0
        if self.S_lp_host:
            # full-vocabulary log-softmax + top-k on fp32 logits for each logprob sequence,
            # plus the sampler's sort over the vocabulary: memory-bound passes over V x 4 B
            n_lp = self.S_lp_host / LP_ENTRY_S / 20
            lp_gpu = n_lp * self.cfg.model.vocab * 4 * 10 * self.logprob_gpu_scale
        tmax = 0.0
        for dev in self.devs:
            c = step_cost(cfg.model, cfg.tp, dev.spec, dev.clock_factor(), dev.mem_factor(),
                          D, attn, p, pctx, graphs=cfg.graphs and p == 0,
                          extra_bytes=lp_gpu / cfg.tp, extra_s=(3e-4 * (lp_gpu > 0)))
            if self.hollow:
                c.t *= self.hollow_slow
            t_r = c.t / getattr(dev, "victim_share", 1.0)
            ranks.append((dev, c, t_r))
            tmax = max(tmax, t_r)
        comm = ranks[0][1].comm
        t_gpu = tmax + comm
        host = (cfg.host_ms * 1e-3 + cfg.host_seq_us * 1e-6 * (D + n_pf)
                + (0.2e-3 if cfg.tp > 1 and self.kind == "vllm" else 0.0)
                + self.S_lp_host) / share + jit_mean
        if self.kind == "vllm":
            wall = t_gpu + host
        else:
            wall = max(t_gpu + 0.25e-3, host)
        return wall, t_gpu, tmax, ranks

    def _account(self, k: float, wall: float, t_gpu: float, tmax: float, ranks, eager: bool,
                 prefill: bool) -> None:
        if k <= 0:
            return
        for dev, c, t_r in ranks:
            dev.add_phase(k * c.t, c.sm, c.occ, c.dram, c.tensor)
            wait = k * (tmax - t_r + c.comm)
            if wait > 0:
                sm, occ, dram, ten = PROFILE_NCCL_WAIT
                dev.add(wait, wait * sm, wait * occ, wait * (dram + 0.05 * (c.comm > 0)), 0.0,
                        nvlink_bytes=k * c.nvlink_bytes)
            stretch = k * (t_r - c.t)
            if stretch > 0:
                dev.stretch = getattr(dev, "stretch", 0.0) + stretch
            idle = k * (wall - t_gpu)
            dev.idle_gap = getattr(dev, "idle_gap", 0.0) + idle
            dev.add(0.0, pcie_bytes=k * 4096)
        tk = self.tick
        if eager:
            tk["eager"] += k * self.cfg.model.layers * 14
        else:
            tk["graph"] += k
        tk["sync"] += k
        tk["sync_t"] += k * t_gpu * 0.9
        tk["steps"] += k

    # ------------------------------------------------------------------ the quantum
    def quantum(self, t: float, q: float) -> None:
        if self.restarts or self.state != "up":
            if self._lifecycle(t, q):
                return
        self._arrivals(t, q)
        share, jp, jlo, jhi = self.env(t)
        jit_mean = jp * (jlo + jhi) / 2
        tk = self.tick
        tk["share"] += share
        tk["share_n"] += 1
        tk["jit_p"], tk["jit_lo"], tk["jit_hi"] = jp, jlo, jhi
        self._jit = (jp, jlo, jhi)
        if self.kind == "vllm":
            self._quantum_vllm(t, q, share, jit_mean)
        else:
            self._quantum_sglang(t, q, share, jit_mean)
        if self.hollow:
            for dev in self.devs:
                gap = getattr(dev, "idle_gap", 0.0)
                free = max(0.0, q - dev.q_busy)
                fill = max(gap, free)
                sm, occ, dram, ten = PROFILE_TINY
                dev.add(fill, fill * sm, fill * occ, fill * dram, 0.0)
        for dev in self.devs:
            dev.idle_gap = 0.0

    def _kv_used(self) -> float:
        own = self.S_own0 + self.D * self.G - self.S_G0
        pf = sum(s.pf_done + (s.req.cached if s.req.owned else 0) for s in self.prefilling)
        return self.cfg.prefix_pool_tokens + own + pf

    def _units(self, extra_tokens: float = 0.0, extra_seqs: int = 0) -> float:
        """KV in use in the pool's own units: blocks (vLLM, each sequence's last block
        half full on average) or tokens (SGLang)."""
        used = self._kv_used() + extra_tokens
        if self.kind == "vllm":
            return used / self.cfg.block_size + 0.5 * (self.D + len(self.prefilling) + extra_seqs)
        return used

    def _capacity(self) -> float:
        return float(self.num_blocks if self.kind == "vllm" else self.pool_tokens)

    def _usage(self) -> float:
        return min(1.0, self._units() / self._capacity())

    def _admit_common(self, t: float, budget_tokens: float) -> None:
        cfg = self.cfg
        pending = sum(s.pf_total - s.pf_done for s in self.prefilling)
        add_tokens = 0.0
        add_seqs = 0
        running = self.D + len(self.prefilling)
        limit = self._capacity()
        reserve = 0.0
        if self.kind == "sglang":
            produced = self.D * self.G - self.S_G0
            reserve = max(0.0, self.S_maxnew - produced) * self.new_token_ratio
        while self.waiting:
            s = self.waiting[0]
            if running >= cfg.max_num_seqs or pending >= budget_tokens:
                break
            if s.req.arrival > t + 1 / 6:
                break
            held = s.req.cached if s.req.owned else 0  # its cached history becomes in use
            if self.kind == "vllm":
                # a resumed (preempted) request is only taken back once its whole context
                # fits again; a new one needs blocks for its first chunk
                first = s.pf_total if s.resumed else min(s.pf_total, cfg.max_batched_tokens)
                need = first + cfg.block_size + held
            else:
                need = s.pf_total + s.maxnew_clip * self.new_token_ratio + held
            if self._units(add_tokens + need, add_seqs + 1) + reserve > limit:
                break
            self.waiting.popleft()
            self._adm = getattr(self, "_adm", 0) + 1
            s.adm = self._adm
            if s.req.t_sched is None:
                s.req.t_sched = max(s.req.arrival, t)
                self.h["queue"].observe(s.req.t_sched - s.req.arrival)
            self.prefilling.append(s)
            pending += s.pf_total - s.pf_done
            add_tokens += (min(s.pf_total, cfg.max_batched_tokens) if self.kind == "vllm" else 0.0) + held
            add_seqs += 1
            if self.kind == "sglang":
                reserve += s.maxnew_clip * self.new_token_ratio
            running += 1

    def _prefill_progress(self, t0: float, span: float, tokens: float) -> None:
        """Distribute ``tokens`` of prefill FCFS over the prefilling sequences during
        [t0, t0 + span]; sequences that finish produce their first token."""
        if tokens <= 0 or not self.prefilling:
            return
        rate_t = span / tokens if tokens else 0.0
        used = 0.0
        still = []
        for s in self.prefilling:
            left = s.pf_total - s.pf_done
            if tokens - used >= left - 1e-6:
                used += left
                s.pf_done = s.pf_total
                self._first_token(s, t0 + used * rate_t)
            else:
                s.pf_done += tokens - used
                used = tokens
                still.append(s)
        self.prefilling = still

    def _first_token(self, s: Seq, when: float) -> None:
        req = s.req
        when = max(when, req.arrival + 0.012 + 2.5e-5 * s.pf_total)
        if not s.first_counted:
            s.first_counted = True
            self.prompt_ctr += req.prompt
            self.cached_ctr += req.cached
            if req.t_first is None:
                req.t_first = when
                self.h["ttft"].observe(when - req.arrival)
            s.produced = 1.0
            self.gen += 1
        else:  # resumed after a preemption/retraction: one long inter-token gap
            self.h["itl"].observe(max(0.0, when - s.t_last))
        remaining = s.target - s.produced
        if remaining <= 0:
            self._finish_seq(s, when)
            return
        s.decoding = True
        s.G0 = self.G
        ctx = req.prompt + s.produced
        s.own0 = ctx - (0 if req.owned else req.cached)
        s.attn0 = ctx
        self.D += 1
        self.S_own0 += s.own0
        self.S_attn0 += s.attn0
        self.S_G0 += s.G0
        self.S_lp_host += s.lp_host
        s.p0 = s.produced
        self.S_maxnew += s.maxnew_clip - s.p0
        heapq.heappush(self.heap, (s.G0 + remaining, s.order, s))
        self.decoding.append(s)

    def _remove_decoding(self, s: Seq) -> None:
        s.decoding = False
        self.D -= 1
        self.S_own0 -= s.own0
        self.S_attn0 -= s.attn0
        self.S_G0 -= s.G0
        self.S_lp_host -= s.lp_host
        self.S_maxnew -= s.maxnew_clip - s.p0
        if self.D == 0:
            self.S_own0 = self.S_attn0 = self.S_G0 = self.S_lp_host = self.S_maxnew = 0.0

    def _finish_seq(self, s: Seq, when: float) -> None:
        req = s.req
        s.alive = False
        if req.t_first is not None:
            when = max(when, req.t_first)
        req.left -= 1
        req.max_out = max(req.max_out, int(s.produced))
        if req.left == 0:
            self.finished += 1
            e2e = when - req.arrival
            self.h["e2e"].observe(e2e)
            if self.kind == "vllm":
                self.h["params_n"].observe(req.n)
                self.h["params_max_tokens"].observe(req.max_tokens)
                self.h["max_generation_tokens"].observe(req.max_out)
                if req.max_out > 1 and req.t_first is not None:
                    self.h["tpot"].observe((when - req.t_first) / (req.max_out - 1))
            st = self.streams[req.stream]
            if st.closed:
                self._closed_next.append((when + st.think * self.rng.uniform(0.5, 1.5),
                                          req.stream))

    def _decode_advance(self, t0: float, span: float, k: float) -> None:
        """Advance every decoding sequence by ``k`` tokens over [t0, t0 + span]."""
        if k <= 0 or self.D == 0:
            return
        g_old = self.G
        g_new = g_old + k
        produced = self.D * k
        while self.heap and self.heap[0][0] <= g_new:
            g_fin, _, s = heapq.heappop(self.heap)
            if not s.alive or not s.decoding:
                continue
            produced -= g_new - g_fin
            when = t0 + span * (g_fin - g_old) / k
            s.produced += g_fin - s.G0
            self._remove_decoding(s)
            self._finish_seq(s, when)
        self.G = g_new
        self.gen += produced
        self.tick["gen"] += produced
        if self.D == 0:
            self.decoding = []

    def _evict_newest(self, t: float) -> bool:
        """Preempt (vLLM) or retract (SGLang) the most recently scheduled running sequence
        (vLLM V1 pops the tail of its running queue: often the request it just resumed)."""
        while self.decoding and not (self.decoding[-1].alive and self.decoding[-1].decoding):
            self.decoding.pop()
        dec = self.decoding[-1] if self.decoding else None
        pf = self.prefilling[-1] if self.prefilling else None
        if dec is None and pf is None:
            return False
        if pf is not None and (dec is None or pf.adm >= dec.adm):
            self.prefilling.pop()
            s = pf
            s.pf_done = 0.0
        else:
            s = self.decoding.pop()
            s.produced += self.G - s.G0
            self._remove_decoding(s)
            s.pf_total = int(s.req.prompt + s.produced - (0 if s.req.owned else s.req.cached))
            s.pf_done = 0.0
            s.resumed = True
        s.t_last = t
        self.waiting.appendleft(s)
        return True

    # ------------------------------------------------------------------ vLLM
    def _quantum_vllm(self, t: float, q: float, share: float, jit_mean: float) -> None:
        cfg = self.cfg
        budget_q = cfg.max_batched_tokens * max(1.0, q / max(self.last_wall, 1e-3))
        self._admit_common(t, budget_q)
        D = self.D
        attn = self.S_attn0 + D * self.G - self.S_G0
        pending = sum(s.pf_total - s.pf_done for s in self.prefilling)
        p = min(pending, max(0, cfg.max_batched_tokens - D)) if pending > 0 else 0.0
        if p <= 0 and pending > 0:
            p = min(pending, 256)
        k_pf = k_dec = 0.0
        used_t = 0.0
        if p > 0:
            pctx = sum(s.pf_done for s in self.prefilling[:4]) / max(1, min(4, len(self.prefilling)))
            mix = self._step(D, attn, p, pctx, len(self.prefilling), share, jit_mean)
            need = pending / p
            if need * mix[0] >= q:
                k_pf = q / mix[0]
            else:
                k_pf = need
            used_t = k_pf * mix[0]
            self._account(k_pf, *mix, eager=p > 512, prefill=True)
            observe_steps(self.rng, self.h["itl"], mix[0], D * k_pf, *self._jit)
            self.last_wall = mix[0]
        if D > 0 and used_t < q:
            dec = self._step(D, attn, 0, 0, 0, share, jit_mean)
            k_dec = (q - used_t) / dec[0]
            self._account(k_dec, *dec, eager=not cfg.graphs, prefill=False)
            observe_steps(self.rng, self.h["itl"], dec[0], D * k_dec, *self._jit)
            self.last_wall = dec[0]
        self.tick["active_s"] += min(q, used_t + (q - used_t if D > 0 else 0.0))
        # tokens: decoders advance one per step of either kind; prefills by p per mixed step
        self._decode_advance(t, q, k_pf + k_dec)
        if k_pf > 0:
            self._prefill_progress(t, used_t, p * k_pf)
        # blocks: preempt the newest while the pool cannot hold the running set
        guard = 0
        while self._units() > self._capacity() and guard < 64:
            if not self._evict_newest(t + q):
                break
            self.preempt += 1
            guard += 1

    # ------------------------------------------------------------------ SGLang
    def _quantum_sglang(self, t: float, q: float, share: float, jit_mean: float) -> None:
        cfg = self.cfg
        chunk = cfg.max_batched_tokens
        # prefill capacity this quantum: chunks of ``chunk`` tokens
        if self.waiting:
            pf_cost = self._step(0, 0, chunk, 1024, 4, share, jit_mean)
            budget_q = chunk * max(1.0, q / pf_cost[0])
            self._admit_common(t, budget_q)
        pending = sum(s.pf_total - s.pf_done for s in self.prefilling)
        D = self.D
        attn = self.S_attn0 + D * self.G - self.S_G0
        tau = 0.0
        if pending > 0:
            c = min(pending, chunk)
            pctx = sum(s.pf_done for s in self.prefilling[:4]) / max(1, min(4, len(self.prefilling)))
            pf = self._step(0, 0, c, pctx, len(self.prefilling), share, jit_mean)
            rate = c / pf[0]
            tau = min(q, pending / rate)
            k = tau / pf[0]
            self._account(k, *pf, eager=True, prefill=True)
            self._prefill_progress(t, tau, rate * tau)
            if D > 0:
                self.stall += tau
        if D > 0 and tau < q:
            dec = self._step(D, attn, 0, 0, 0, share, jit_mean)
            k = (q - tau) / dec[0]
            self._account(k, *dec, eager=not cfg.graphs, prefill=False)
            obs = D * k
            if self.stall > 0:
                self.h["itl"].observe(self.stall + dec[0], D)
                obs -= D
                self.stall = 0.0
            observe_steps(self.rng, self.h["itl"], dec[0], max(0.0, obs), *self._jit)
            self._decode_advance(t + tau, q - tau, k)
            self.new_token_ratio = max(0.098, self.new_token_ratio - 0.001 * k)
            self.last_wall = dec[0]
        self.tick["active_s"] += q if (D > 0 or pending > 0) else 0.0
        guard = 0
        while self._units() > self._capacity() * 0.995 and guard < 64:
            if not self._evict_newest(t + q):
                break
            self.retract += 1
            self.new_token_ratio = min(1.0, max(self.new_token_ratio, 0.7) + 0.1)
            guard += 1

    # ------------------------------------------------------------------ restarts
    def _lifecycle(self, t: float, q: float) -> bool:
        """Model reloads: down (process gone), loading (weights stream in, then the KV pool
        is reserved and CUDA graphs captured), then up with counters from zero.  Returns
        True when the engine does no serving this quantum."""
        if self.state == "up":
            for r in self.restarts:
                if r[0] <= t < r[0] + q:
                    self.state = "down"
                    self.t_state = t
                    self._restart = r
                    self.waiting.clear()
                    return True
            return False
        t_down, gap, load, warm = self._restart
        if self.state == "down" and t >= t_down + gap:
            self.state = "loading"
            self.t_state = t
            base = self.rng.randint(2000, 9000)
            self.pid_api += base
            self.pid_core += base
            self.pid_workers = [p + base for p in self.pid_workers]
            self.pid_other = [p + base for p in self.pid_other]
            self.proc_start = {}
            self.fresh = True
            self.cpu = {}
        if self.state == "loading":
            el = t - self.t_state
            if el < load:
                self.proc_mem_loading = int(0.6e9 + self.weights_bytes * el / load)
                for dev in self.devs:
                    dev.add_phase(q * 0.05, 0.3, 0.1, 0.2, 0.0)  # H2D copies
            elif el < load + warm:
                self.proc_mem_loading = self.proc_mem
                frac = (el - load) / warm
                if frac < 0.15:  # the profile run: one big dummy batch
                    for dev in self.devs:
                        dev.add_phase(q * 0.7, 0.93, 0.2, 0.35, 0.6)
                else:  # graph capture: many small batches, mostly launch-bound
                    for dev in self.devs:
                        dev.add_phase(q * 0.45, 0.12, 0.03, 0.05, 0.02)
            else:
                self.state = "up"
                self.up_since = t
                self._reset_counters()
                self.restarts = [r for r in self.restarts if r is not self._restart]
                return False
        return True

    # ------------------------------------------------------------------ readings
    def gpu_pids(self) -> list[int]:
        return self.pid_workers if self.pid_workers else [self.pid_core]

    def mem_now(self) -> int:
        if self.state == "down":
            return 0
        if self.state == "loading":
            return self.proc_mem_loading
        return self.proc_mem

    def gpu_mem(self):
        """(device, pid, bytes) of the engine's GPU processes now."""
        mem = self.mem_now()
        if not mem:
            return []
        return [(dev, pid, mem) for dev, pid in zip(self.devs, self.gpu_pids())]

    def tree_pids(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys([self.pid_api, self.pid_core, *self.pid_workers, *self.pid_other]))

    def scrape(self, t: float, mono: float, wall: float) -> EngineSample | None:
        if self.state != "up":
            return None
        cfg = self.cfg
        running = self.D + len(self.prefilling)
        waiting = len(self.waiting)
        common = dict(url=f"http://127.0.0.1:{cfg.port}/metrics", model=cfg.model.hf,
                      generation_tokens_total=float(math.floor(self.gen)),
                      prompt_tokens_total=float(self.prompt_ctr),
                      prompt_tokens_cached_total=float(self.cached_ctr),
                      requests_finished_total=float(self.finished),
                      requests_running=float(running), requests_waiting=float(waiting),
                      kv_usage_ratio=round(self._usage(), 6),
                      pids=self.tree_pids(), gpu_indices=(), time_mono_s=mono,
                      time_wall_s=wall,
                      histograms=tuple(h.snapshot() for h in self.h.values()),
                      cpu_s=round(self.cpu.get("tree", 0.0), 3),
                      ctx_involuntary=int(self.cpu.get("invol", 0)),
                      busiest_thread_cpu_s=round(self.cpu.get("busiest", 0.0), 3),
                      busiest_thread="VLLM::EngineCor" if self.kind == "vllm" else "sglang::schedul")
        if self.kind == "vllm":
            return EngineSample(kind="vllm", num_gpu_blocks=self.num_blocks,
                                block_size=cfg.block_size, cache_dtype="auto",
                                preemptions_total=float(self.preempt),
                                waiting_by_reason={"capacity": float(waiting), "deferred": 0.0},
                                **common)
        return EngineSample(kind="sglang", kv_pool_tokens=self.pool_tokens,
                            retracted_requests_total=float(self.retract), **common)

    def procs(self, wall: float, user: str = "svc") -> list[ProcSample]:
        if self.state == "down":
            return []
        out = []
        mem = self.mem_now()
        for i, (dev, pid) in enumerate(zip(self.devs, self.gpu_pids())):
            if self.kind == "vllm":
                name = "VLLM::Worker_TP%d" % i if self.pid_workers else "VLLM::EngineCore"
                cmd = name
                ppid = self.pid_core if self.pid_workers else self.pid_api
            else:
                name = "sglang::scheduler_TP%d" % i
                cmd = name
                ppid = self.pid_api
            start = self.proc_start.setdefault(pid, wall if self.fresh else wall - 7300.0)
            cpu = self.cpu.get(("pid", pid), 0.0)
            util = self.devs[i].last_util
            out.append(ProcSample(pid=pid, gpu_index=dev.index, name=name[:15], cmdline=cmd,
                                  user=user, ppid=ppid, start_time_s=start, mem_bytes=mem,
                                  sm_util_pct=None if util is None else float(round(util)),
                                  cpu_s=round(cpu, 3), rss_bytes=int(5.5e9 + 0.4e9 * i),
                                  container=getattr(self, "container", ""),
                                  pod=getattr(self, "pod", "")))
        return out

    def launch_hists(self, tick_s: float) -> list[LaunchHist]:
        """What the uprobes see this tick: one graph launch per decode step per GPU
        process, ~14 eager launches per layer for prefill steps, one stream sync per step
        (its duration is the GPU work the host waits for).  A preempted launch thread adds
        its off-CPU time to the call it was in."""
        tk = self.tick
        rng = self.rng
        out = []
        jp, jlo, jhi = tk["jit_p"], tk["jit_lo"], tk["jit_hi"]
        for pid in self.gpu_pids():
            g = int(round(tk["graph"]))
            e = int(round(tk["eager"]))
            sy = int(round(tk["sync"]))
            if g:
                out.append(LaunchHist("cudaGraphLaunch", pid,
                                      *launch_buckets(rng, g, 9500, 0.22, jp * 0.6, jlo * 1e9,
                                                      jhi * 1e9)))
            if e:
                ec = int(e * 0.45)
                out.append(LaunchHist("cudaLaunchKernel", pid,
                                      *launch_buckets(rng, ec, 4300, 0.25, jp * 0.02,
                                                      jlo * 1e9, jhi * 1e9)))
                out.append(LaunchHist("cuLaunchKernel", pid,
                                      *launch_buckets(rng, e - ec, 5200, 0.25, jp * 0.02,
                                                      jlo * 1e9, jhi * 1e9)))
            if sy:
                mean = tk["sync_t"] / max(tk["sync"], 1e-9)
                out.append(LaunchHist("cudaStreamSynchronize", pid,
                                      *launch_buckets(rng, sy, max(20000, mean * 1e9), 0.35,
                                                      jp * 0.3, jlo * 1e9, jhi * 1e9)))
        return out

    def cpu_tick(self, dt: float) -> dict:
        """CPU time of the engine's process tree this tick.  The engine-core (vLLM) or
        scheduler (SGLang) thread spins on the GPU while it has work, so it uses a whole
        core (times the share the host gives it); the API server detokenizes and streams;
        tensor-parallel workers spin on their broadcast queue.  Returns runnable threads."""
        tk = self.tick
        c = self.cpu
        if self.state == "down":
            return {"busy": 0.0}
        share = tk["share"] / tk["share_n"] if tk["share_n"] else 1.0
        if self.state == "loading":
            active, gen_rate = 1.0, 0.0
        else:
            active = min(1.0, tk["active_s"] / dt) if dt else 0.0
            gen_rate = tk["gen"] / dt if dt else 0.0
        hot = (0.03 + 0.97 * active) * share
        api = min(0.9, 0.02 + gen_rate * 12e-6)
        other = 0.01 + (gen_rate * 7e-6 if self.kind == "sglang" else 0.0)
        gpu_procs = self.gpu_pids()
        workers = [p for p in gpu_procs if p != self.pid_core]
        wrate = (0.03 + 0.95 * active) * share
        tree = hot + api + other + wrate * len(workers)
        c["tree"] = c.get("tree", 0.0) + tree * dt
        c["busiest"] = c.get("busiest", 0.0) + hot * dt
        steps = tk["steps"] / dt if dt else 0.0
        inv = 15 + 1300 * (1 - share) * active + tk["jit_p"] * steps * 0.9 + self.rng.uniform(0, 4)
        c["invol"] = c.get("invol", 0.0) + inv * dt * (1 + len(workers) * 0.5)
        c[("pid", self.pid_core)] = c.get(("pid", self.pid_core), 0.0) + hot * dt
        for p in workers:
            c[("pid", p)] = c.get(("pid", p), 0.0) + wrate * dt
        return {"busy": hot + api + other + wrate * len(workers)}

    def end_tick(self) -> None:
        self.tick = self._new_tick()
