"""A continuous-batching serving engine, simulated request by request in short slices.

Each slice (at most 0.25 s) admits waiting requests while there are sequence slots and
KV blocks, runs chunked prefill inside the decode steps (vLLM V1 / SGLang style: the
decodes of the batch first, then up to the token budget of prompt), and advances every
decoding sequence one token per step (more with speculative decoding, by the accepted
drafts).  A step's GPU time is the larger of its HBM traffic (weights of the rank, the KV
of every sequence's context, the chunk's KV written) over the bandwidth reachable at the
current clock and its FLOPs over the tensor throughput, plus launch overhead and the
tensor-parallel all-reduces; the slowest rank sets the step, the others spin in NCCL.
The host's share of each step (scheduling, sampling output, logprobs) runs on the CPU
and only partly overlaps the GPU: when the engine's threads lose CPU, gaps open.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

from corpus_c.hist import (SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, VLLM_ITL, VLLM_N, VLLM_REQ, VLLM_TTFT,
                   Hist, one_two_five)
from corpus_c.hw import Activity

SLICE_S = 0.25


@dataclass
class Req:
    arrival: float
    prompt: int
    out: int
    n: int = 1
    logprobs: int = 0
    cached: float = 0.0  # fraction of the prompt found in the prefix cache
    max_tokens: int = 0
    rid: int = 0
    left: int = 0  # prompt tokens still to compute
    started: float | None = None  # admitted (left the queue)
    first: float | None = None
    g0: float = 0.0
    done_at: float = 0.0
    preempted: int = 0
    out0: int = 0
    prompt0: int = 0


@dataclass
class EngineCfg:
    kind: str = "vllm"  # vllm | sglang | llamacpp
    max_seqs: int = 256
    budget: int = 8192  # tokens per step (chunked prefill)
    pool_tokens: int = 200_000
    block: int = 16
    spec_k: int = 0  # drafted tokens per step (0: off)
    graphs: bool = True
    host_ms: float = 1.3  # scheduler + output per step, one core, at full CPU
    host_per_seq_us: float = 9.0
    retract_reserve: float = 0.0  # SGLang admits only with room for this share of outputs
    mfu_metrics: bool = False


@dataclass
class Knobs:
    """What a trace changes over time; every field is a function of t (seconds)."""

    rate: object = None  # requests/s
    mix: object = None  # (t, rng) -> Req
    cpu_share: object = None  # fraction of the CPU the engine's threads get
    accept: object = None  # speculative acceptance rate per drafted token
    other: object = None  # t -> {gpu: demand 0..1 of another process time-slicing it}
    # cost per step of a sequence asking for logprobs, per 10 logprobs: the sampler's
    # full-vocabulary log-softmax and top-k run eager (outside the CUDA graph) on the GPU,
    # and the host copies and builds the top-k entries before the next step's inputs
    lp_ms: float = 0.5


@dataclass
class SliceOut:
    dur: float = 0.0
    busy: list = field(default_factory=list)  # per rank: kernel-resident time
    sm: list = field(default_factory=list)
    tensor: list = field(default_factory=list)
    dram: list = field(default_factory=list)
    nvlink: float = 0.0
    steps: float = 0.0
    pf_steps: float = 0.0
    gap_s: float = 0.0


class ServeSim:
    def __init__(self, lm, cfg: EngineCfg, boards, tp: int, knobs: Knobs, rng, t0: float):
        self.lm, self.cfg, self.boards, self.tp, self.k, self.rng = lm, cfg, boards, tp, knobs, rng
        self.t = t0
        self.waiting: deque[Req] = deque()
        self.prefill: list[Req] = []
        self.running: dict[int, Req] = {}
        self.heap: list = []
        self.order: dict[int, None] = {}  # running rids by admission (preempt the newest)
        self.G = 0.0
        self.N = 0  # decoding sequences
        self.A = 0.0  # sum of prompts (KV, shared by n samples)
        self.An = 0.0  # sum of n * prompt (attention reads)
        self.C = 0.0  # sum of n * g0
        self.D = 0.0  # sum of n * (g0 + out): where each sequence ends
        self.kv_prefill = 0.0
        self.next_rid = 1
        self.kvb = lm.kv_bytes_per_token(tp)
        self.wr = lm.weights_per_rank(tp)
        self.params_rank = lm.params / tp
        self.specials: list[Req] = []
        self.c = dict.fromkeys((
            "gen", "prompt", "gen_done", "prompt_done", "cached_done", "cached", "finished",
            "preempt", "retract", "retract_tok", "drafts", "draft_tok", "accepted", "prefill_s",
            "decode_s", "forward_s", "steps", "flops", "rbytes", "wbytes"), 0.0)
        ml = 32768
        if cfg.kind == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        elif cfg.kind == "vllm":
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_REQ),
                      "queue": Hist("queue", VLLM_REQ), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens", one_two_five(ml)),
                      "max_generation_tokens": Hist("max_generation_tokens", one_two_five(ml))}
        else:
            self.h = {}
        self.last_accept = None

    # ------------------------------------------------------------ requests
    def add(self, req: Req) -> None:
        req.rid = self.next_rid
        self.next_rid += 1
        req.left = int(req.prompt * (1 - req.cached))
        req.max_tokens = req.max_tokens or max(req.out, 256)
        req.out0, req.prompt0 = req.out, req.prompt
        self.waiting.append(req)

    def kv_used(self) -> float:
        return self.A + self.N * self.G - self.C + self.kv_prefill + self.N * self.cfg.block / 2

    def _admit(self, now: float) -> None:
        cfg = self.cfg
        pend = sum(r.left for r in self.prefill)
        while self.waiting and len(self.running) + len(self.prefill) < cfg.max_seqs:
            if pend >= cfg.budget:  # a request is scheduled when its chunk fits a step
                break
            r = self.waiting[0]
            need = r.prompt + r.n * cfg.block
            if cfg.retract_reserve:  # room kept for the outputs still to come
                need += cfg.retract_reserve * (r.out * r.n + self.D - self.N * self.G)
            if self.kv_used() + need > cfg.pool_tokens:
                break
            self.waiting.popleft()
            if r.started is None:
                r.started = now
            self.prefill.append(r)
            self.kv_prefill += r.prompt
            pend += r.left

    def _start_decode(self, r: Req, now: float) -> None:
        self.kv_prefill -= r.prompt
        if r.first is None:
            r.first = now
            self.h.get("ttft") and self.h["ttft"].observe(now - r.arrival)
        r.g0 = self.G - 1
        self.running[r.rid] = r
        self.order[r.rid] = None
        heapq.heappush(self.heap, (r.g0 + r.out, r.rid))
        self.N += r.n
        self.A += r.prompt
        self.An += r.n * r.prompt
        self.C += r.n * r.g0
        self.D += r.n * (r.g0 + r.out)
        self.c["gen"] += r.n  # the first token comes with the prefill's last step

    def _remove(self, r: Req) -> None:
        del self.running[r.rid]
        self.N -= r.n
        self.A -= r.prompt
        self.An -= r.n * r.prompt
        self.C -= r.n * r.g0
        self.D -= r.n * (r.g0 + r.out)

    def _finish(self, now: float) -> None:
        while self.heap and self.heap[0][0] <= self.G:
            key, rid = heapq.heappop(self.heap)
            r = self.running.get(rid)
            if r is None or abs(r.g0 + r.out - key) > 1e-6:
                continue  # preempted since (a stale entry)
            self._remove(r)
            self.order.pop(rid, None)
            self.c["finished"] += 1
            self.c["gen_done"] += r.out0 * r.n
            self.c["prompt_done"] += r.prompt0
            self.c["cached_done"] += r.prompt0 * r.cached
            e2e = now - r.arrival
            h = self.h
            if h:
                h["e2e"].observe(e2e)
                h["queue"].observe(max(0.0, r.started - r.arrival))
                if "tpot" in h and r.out > 1:
                    h["tpot"].observe((now - r.first) / (r.out - 1))
                if "params_n" in h:
                    h["params_n"].observe(r.n)
                    h["params_max_tokens"].observe(r.max_tokens)
                    h["max_generation_tokens"].observe(r.out)
            self.c["prefill_s"] += r.first - r.started
            self.c["decode_s"] += now - r.first

    def _evict(self, now: float) -> None:
        """KV pool overfull: the newest running requests go back to the queue (recompute)."""
        while self.kv_used() > self.cfg.pool_tokens and self.order:
            rid = next(reversed(self.order))
            del self.order[rid]
            r = self.running[rid]
            gen = int(self.G - r.g0)
            self._remove(r)
            r.preempted += 1
            if self.cfg.kind == "sglang":
                self.c["retract"] += 1
                self.c["retract_tok"] += r.prompt
            else:
                self.c["preempt"] += 1
            r.out = max(1, r.out - gen)
            r.prompt += gen
            r.left = r.prompt
            self.waiting.appendleft(r)

    # ------------------------------------------------------------ step physics
    def _gpu_time(self, seqs: float, ctx_tokens: float, chunk: float, chunk_ctx: float,
                  clock: float) -> tuple[float, float, float]:
        """(seconds at this clock, FLOPs, bytes) of one step on one rank."""
        lm, spec = self.lm, self.boards[0].spec
        q = seqs * (1 + self.cfg.spec_k) + chunk
        heads_r = max(1, lm.heads // self.tp) * lm.head_dim
        flops = 2 * self.params_rank * q + 4 * lm.layers * heads_r * (
            ctx_tokens * (1 + self.cfg.spec_k) + chunk * (chunk_ctx + chunk / 2))
        if self.cfg.spec_k:
            flops += 2 * self.params_rank * 0.08 * seqs * self.cfg.spec_k  # the drafter
        byts = self.wr * (1.08 if self.cfg.spec_k else 1.0) + ctx_tokens * self.kvb + \
            chunk * self.kvb + q * lm.hidden * 40
        bw = spec.hbm_bw * 0.86 * min(1.0, 0.55 + 0.45 * clock)
        eff = 0.72 * min(1.0, q / (q + 96))
        t_mem = byts / bw
        peak = spec.flops * (2.0 if lm.weight_bytes <= 1.0 and spec.gpm else 1.0)  # FP8
        t_cmp = flops / (peak * max(0.05, eff) * clock)
        t = max(t_mem, t_cmp) + 0.12 * min(t_mem, t_cmp)
        t += 0.00035 if (self.cfg.graphs and chunk == 0) else 0.0004 + lm.layers * 22e-6
        return t, flops, byts

    def _comm(self, q: float) -> float:
        if self.tp == 1:
            return 0.0
        spec = self.boards[0].spec
        per = spec.link_lat + q * self.lm.hidden * 2 * 2 * (self.tp - 1) / self.tp / spec.link_bw
        return 2 * self.lm.layers * per

    def _step(self, seqs, ctx, chunk, chunk_ctx, other):
        """One step: (wall seconds of GPU work, per-rank compute seconds, flops, bytes)."""
        per_rank = []
        for i, b in enumerate(self.boards[: self.tp]):
            t, flops, byts = self._gpu_time(seqs, ctx, chunk, chunk_ctx, b.clock_frac)
            share = other.get(b.index, 0.0) if other else 0.0
            per_rank.append(t * (1 + share))
        comm = self._comm(seqs * (1 + self.cfg.spec_k) + chunk)
        return max(per_rank) + comm, per_rank, flops, byts

    def run_slice(self, dur: float) -> SliceOut:
        now, cfg, k, rng = self.t, self.cfg, self.k, self.rng
        out = SliceOut(dur=dur, busy=[0.0] * self.tp, sm=[0.0] * self.tp,
                       tensor=[0.0] * self.tp, dram=[0.0] * self.tp)
        # arrivals
        lam = k.rate(now) if k.rate else 0.0
        n_new = _poisson(rng, lam * dur)
        for i in range(n_new):  # arrived since the scheduler last looked
            self.add(k.mix(now - 0.03 * rng.random(), rng))
        if not getattr(self, "specials_sorted", True):
            self.specials.sort(key=lambda r: r.arrival, reverse=True)
            self.specials_sorted = True
        while self.specials and self.specials[-1].arrival < now + dur:
            self.add(self.specials.pop())
        self._admit(now)
        other = k.other(now) if k.other else None
        share = k.cpu_share(now) if k.cpu_share else 1.0
        accept = k.accept(now) if (k.accept and cfg.spec_k) else None
        self.last_accept = accept
        t_used, tokens_per_step = 0.0, 1.0
        if accept is not None:
            # expected accepted drafts: a + a^2 + ... + a^k (stops at the first rejection)
            acc = sum(accept ** j for j in range(1, cfg.spec_k + 1))
            tokens_per_step = 1 + acc
        lp_cost = k.lp_ms * 1e-3 * sum(r.n * r.logprobs / 10 for r in self.running.values()
                                       if r.logprobs)
        # a thread that lost its core waits to be scheduled again after each GPU sync
        wake = (1.0 - min(1.0, share)) * 0.004
        while t_used < dur - 1e-6 and (self.N or self.prefill):
            while self.prefill and self.prefill[0].left <= 0.5:  # all of it in the cache
                r = self.prefill.pop(0)
                self.c["prompt"] += r.prompt
                self.c["cached"] += r.prompt * r.cached
                self._start_decode(r, now + t_used)
            seqs = self.N
            ctx = self.An + self.N * self.G - self.C
            pend = sum(r.left for r in self.prefill)
            room = max(0, cfg.budget - seqs * (1 + cfg.spec_k))
            chunk = min(room, pend) if cfg.kind != "llamacpp" else min(pend, 2048)
            chunk_ctx = (self.prefill[0].prompt - self.prefill[0].left) if self.prefill else 0
            t_gpu, per_rank, flops, byts = self._step(seqs, ctx, chunk, chunk_ctx, other)
            t_gpu += lp_cost
            per_rank = [x + lp_cost for x in per_rank]
            host = (cfg.host_ms * 1e-3 + cfg.host_per_seq_us * 1e-6 * (len(self.running)
                    + len(self.prefill)) + lp_cost) / max(0.05, share)
            gap = max(0.00015, host - 0.55 * t_gpu) + wake
            step = t_gpu + gap
            left = dur - t_used
            if chunk > 0:
                steps = min(left / step, max(1.0, math.ceil(pend / max(1, chunk))))
            else:
                steps = left / step
                # finishing sequences change the batch: stop at the next finish
                if self.heap:
                    to_next = max(1.0, (self.heap[0][0] - self.G) / tokens_per_step)
                    steps = min(steps, to_next + 3.999)
            steps = max(steps, min(1.0, left / step))
            t_slice = steps * step
            t_used += t_slice
            ts = now + t_used
            # decode progress
            if seqs:
                self.G += steps * tokens_per_step
                self.c["gen"] += steps * tokens_per_step * seqs
                obs = steps * seqs
                if self.h:
                    self.h["itl"].spread(step, obs)
                if cfg.spec_k:
                    self.c["drafts"] += steps * seqs
                    self.c["draft_tok"] += steps * seqs * cfg.spec_k
                    self.c["accepted"] += steps * seqs * (tokens_per_step - 1)
            # prefill progress, FIFO
            if chunk > 0:
                done = steps * chunk
                out.pf_steps += steps
                while self.prefill and done > 0:
                    r = self.prefill[0]
                    take = min(done, r.left)
                    r.left -= take
                    done -= take
                    if r.left <= 0.5:
                        self.prefill.pop(0)
                        if r.preempted == 0:
                            self.c["prompt"] += r.prompt
                            self.c["cached"] += r.prompt * r.cached
                        else:
                            self.c["prompt"] += r.prompt
                        self._start_decode(r, ts)
            self._finish(ts)
            self._evict(ts)
            self._admit(ts)
            out.steps += steps
            out.gap_s += steps * gap
            self.c["steps"] += steps
            self.c["forward_s"] += steps * t_gpu
            self.c["flops"] += steps * flops
            self.c["rbytes"] += steps * byts
            self.c["wbytes"] += steps * (seqs + chunk) * self.kvb
            spec = self.boards[0].spec
            cov = (0.97 if chunk > 512 else 0.62 + 0.3 * min(1.0, seqs / 64))
            for i in range(self.tp):
                mine = per_rank[i]
                spin = t_gpu - mine
                b = self.boards[i]
                sh = other.get(b.index, 0.0) if other else 0.0
                own = mine / (1 + sh)
                out.busy[i] += steps * t_gpu
                out.sm[i] += steps * ((own - lp_cost) * cov + lp_cost * 0.12 + spin * 0.13
                                      + (mine - own) * 0.9)
                out.tensor[i] += steps * (flops / (spec.flops * 0.82 * b.clock_frac)
                                          + (mine - own) * 0.5)
                out.dram[i] += steps * (byts / spec.hbm_bw + (mine - own) * 0.3)
            if self.tp > 1:
                out.nvlink += steps * 2 * self.lm.layers * (seqs + chunk) * self.lm.hidden * 2
        self._admit(now + dur)
        # an idle engine still holds its context; another process may be busy
        if other:
            for i, b in enumerate(self.boards[: self.tp]):
                sh = other.get(b.index, 0.0)
                idle = dur - out.busy[i]
                if sh and idle > 0:
                    extra = idle * min(1.0, sh)
                    out.busy[i] += extra
                    out.sm[i] += extra * 0.9
                    out.tensor[i] += extra * 0.5
                    out.dram[i] += extra * 0.3
        self.t = now + dur
        return out

    def lp_sequences(self) -> int:
        return sum(r.n for r in self.running.values() if r.logprobs)

    # ------------------------------------------------------------ a tick
    def tick(self, dt: float) -> tuple[list[Activity], dict]:
        slices = max(1, math.ceil(dt / SLICE_S - 1e-9))
        agg = [Activity() for _ in range(self.tp)]
        busy_series = [[] for _ in range(self.tp)]
        stats = dict(steps=0.0, gap=0.0, pf_steps=0.0)
        nv = 0.0
        for _ in range(slices):
            s = self.run_slice(dt / slices)
            for i in range(self.tp):
                f = 1.0 / (slices * s.dur)
                agg[i].busy += s.busy[i] * f
                agg[i].sm += s.sm[i] * f
                agg[i].tensor += s.tensor[i] * f
                agg[i].dram += s.dram[i] * f
                busy_series[i].append(min(1.0, s.busy[i] / s.dur))
            stats["steps"] += s.steps
            stats["gap"] += s.gap_s
            stats["pf_steps"] += s.pf_steps
            nv += s.nvlink
        for i in range(self.tp):
            a = agg[i]
            a.busy, a.sm = min(1.0, a.busy), min(0.99, a.sm)
            a.tensor, a.dram = min(0.98, a.tensor), min(0.95, a.dram)
            a.occ = a.sm * (0.22 + 0.3 * a.tensor)
            a.busy_samples = busy_series[i]
            a.nvlink_mib_s = nv / dt / (1 << 20)
            a.pcie_mib_s = 2 + 0.5 * stats["steps"] / dt
        return agg, stats


def _poisson(rng, mean: float) -> int:
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, int(round(rng.gauss(mean, math.sqrt(mean)))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1
