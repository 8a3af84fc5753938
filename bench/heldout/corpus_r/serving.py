"""A serving engine, request by request: arrivals, continuous batching over a KV pool in
blocks, chunked prefill, preemption/retraction, speculative decoding, and the step time
that follows from the bytes and FLOPs each step moves on the GPU plus the CPU work around
it.  Time advances in slices of 0.2 s (one NVML GPU-Util sample period); inside a slice a
few batch compositions are run as a fluid of identical steps.

Step time (per tensor-parallel rank):
  GPU:  max(bytes / (0.85 BW), FLOPs / (eff(tokens) x peak)) + 0.15 x the smaller  (roofline)
        but at least kernels x 2.5 us (a step of a small model is a string of tiny
        kernels: the H200 lab's 0.5B model ran at 17% GPU-Util with 2% SM active)
        + 2 all-reduces per layer with TP
  host: h0 + h1 x running + per-token and per-logprob costs, / the CPU share it gets
  step = max(GPU, host) + (1 - overlap) x min(GPU, host)   (async scheduling hides host time)
vLLM V1 counts a request's whole prompt in prompt_tokens_total when its prefill finishes,
generation tokens as they are produced; SGLang's tokenizer-side counters (older releases)
and llama.cpp's tokens_predicted_total move only when a request finishes.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .hist import sglang_hists, vllm_hists
from .hw import Activity, GpuSpec
from .models import Model

SLICE = 0.2
ITL_SPREAD = ((0.82, 0.3), (1.0, 0.45), (1.3, 0.2), (2.2, 0.05))


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


@dataclass
class Client:
    """A source of requests: open (Poisson ``rate(t)`` req/s) or closed (``users(t)``
    users, each waiting for its answer and thinking ``think`` seconds)."""

    name: str
    prompt: object  # rng -> tokens
    output: object  # rng -> tokens generated before EOS (capped by max_tokens)
    rate: object = None
    users: object = None
    think: tuple[float, float] = (0.0, 0.0)
    max_tokens: int = 1024
    n: int = 1
    logprobs: int = 0
    prompt_logprobs: int = 0
    cached: float = 0.0  # fraction of the prompt found in the prefix cache
    start: float = -1e18
    end: float = 1e18
    next_send: dict = field(default_factory=dict)
    uid: int = 0


class Parent:
    __slots__ = ("n", "left", "max_gen", "max_tokens", "client", "user", "arrival")

    def __init__(self, n, max_tokens, client, user, arrival):
        self.n, self.left, self.max_gen = n, n, 0
        self.max_tokens, self.client, self.user, self.arrival = max_tokens, client, user, arrival


class Req:
    __slots__ = ("arrival", "prompt", "cached", "target", "gen", "need", "computed", "first_t",
                 "sched_t", "seq", "parent", "lp", "plp", "done_t", "preempted", "slot_t", "goff",
                 "sd", "sa", "shared")

    def __init__(self, arrival, prompt, cached, target, parent, lp, plp):
        self.arrival, self.prompt, self.cached, self.target = arrival, prompt, cached, target
        self.gen, self.need, self.computed = 0, prompt, cached
        self.first_t = self.sched_t = self.done_t = None
        self.seq, self.parent, self.lp, self.plp, self.preempted = 0, parent, lp, plp, False
        self.slot_t = 0.0
        self.goff = 0.0
        self.sd = self.sa = 0.0
        self.shared = 0  # prompt tokens whose KV blocks a sibling (n > 1) already holds


@dataclass
class Env:
    """What the world does to the engine this tick."""

    clk: dict = field(default_factory=dict)  # gpu -> clock factor
    share: dict = field(default_factory=dict)  # gpu -> fraction of time another context holds
    cpu_avail: float = 1.0  # share of the CPU the engine's threads get when they want it
    api_avail: float = 1.0
    jitter_p: float = 0.0  # probability that one launch is delayed
    jitter_s: float = 0.0  # mean delay of such a launch
    spec_p: float = 0.0  # per-token draft acceptance probability
    rank_factor: dict = field(default_factory=dict)  # gpu -> compute time multiplier
    kernels_mult: float = 1.0  # eager fallback: more, smaller kernels per step
    eager: bool = False
    jitter_rank: dict = field(default_factory=dict)  # gpu -> (p, s): one rank's launches delayed


class Engine:
    def __init__(self, kind: str, model: Model, spec: GpuSpec, gpus: list[int], rng: random.Random,
                 clients: list[Client], *, tp: int | None = None, max_seqs: int = 256,
                 budget: int = 8192, block: int = 16, mem_util: float = 0.9,
                 max_model_len: int = 32768, h0: float = 0.0028, h1: float = 25e-6,
                 overlap: float = 0.75, spec_k: int = 0, draft_frac: float = 0.06,
                 slots: int = 4, graphs: bool = True, kv_tokens: int | None = None,
                 url: str = "http://127.0.0.1:8000/metrics", sgl_realtime: bool = True,
                 mfu_metrics: bool = False, replica: str = "", pid0: int = 4100,
                 kernels_per_layer: int = 14, kv_read_mult: float = 1.0,
                 api_tok_cost: float = 30e-6, start_t: float = 0.0, sm_fill: float = 0.88,
                 t_kernel: float = 2.5e-6, proc_mem: int | None = None, watermark: float = 0.01):
        self.kind, self.model, self.spec, self.gpus, self.rng = kind, model, spec, gpus, rng
        self.clients = clients
        self.tp = tp or len(gpus)
        self.max_seqs, self.budget, self.block = max_seqs, budget, block
        self.max_model_len = max_model_len
        self.h0, self.h1, self.overlap = h0, h1, overlap
        self.spec_k, self.draft_frac, self.slots, self.graphs = spec_k, draft_frac, slots, graphs
        self.url, self.sgl_realtime, self.mfu = url, sgl_realtime, mfu_metrics
        self.replica = replica
        self.kpl = kernels_per_layer
        self.kv_read_mult = kv_read_mult
        self.api_tok_cost = api_tok_cost
        self.sm_fill = sm_fill
        self.t_kernel = t_kernel
        self.W = model.weights(self.tp)
        self.kvb = model.kv_bytes(self.tp)
        self.act = model.active / self.tp
        self.attn = 4.0 * model.layers * (model.heads / self.tp) * model.head_dim
        mem = spec.mem_total - spec.reserved
        self.proc_mem = int(mem * mem_util) if kind != "llamacpp" else 0
        if kv_tokens is None:
            if kind == "llamacpp":
                kv_tokens = slots * 8192
            else:
                pool = mem * mem_util - self.W - 3.2 * 2**30 - 0.02 * mem
                kv_tokens = int(max(pool, 2**30) / self.kvb)
        self.num_blocks = kv_tokens // block
        self.pool_tokens = self.num_blocks * block
        if kind == "llamacpp":
            self.proc_mem = int(self.W + self.pool_tokens * self.kvb + 1.1 * 2**30)
        self.watermark = watermark
        if proc_mem:
            self.proc_mem = proc_mem
        self.pid0 = pid0
        self.start_t = start_t
        self.reset_state()

    # ------------------------------------------------------------------ state
    def reset_state(self):
        self.waiting: deque[Req] = deque()
        self.running: list[Req] = []
        self.seq = 0
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0, retract=0.0,
                      retract_tok=0.0, drafts=0.0, draft_tok=0.0, accepted=0.0, prefill_s=0.0,
                      decode_s=0.0, forward_s=0.0, decode_steps=0.0, flops=0.0, rbytes=0.0,
                      wbytes=0.0, gen_fin=0.0, prompt_fin=0.0, cached_fin=0.0)
        self.h = vllm_hists(self.max_model_len) if self.kind == "vllm" else (
            sglang_hists() if self.kind == "sglang" else {})
        self.cache_tokens = 0.0  # SGLang radix cache (evictable)
        self.ratio = 0.7  # SGLang new_token_ratio
        self.api_backlog = 0.0
        self.last_accept = 0.0
        self.last_accept_len = 0.0
        self.capacity_blocked = 0
        self.up = True
        for cl in self.clients:
            cl.next_send = {}

    # ------------------------------------------------------------------ arrivals
    def _arrivals(self, t: float, dt: float):
        rng = self.rng
        for cl in self.clients:
            if cl.rate is not None:
                if cl.start <= t < cl.end:
                    for _ in range(poisson(rng, cl.rate(t) * dt)):
                        self._new(cl, t + rng.random() * dt, None)
                continue
            want = int(cl.users(t)) if cl.start <= t < cl.end else 0
            while len(cl.next_send) < want:
                cl.uid += 1
                cl.next_send[cl.uid] = t + rng.random() * min(dt * 5, 1.0)
            if len(cl.next_send) > want:  # users leave once their answer is in
                idle = [u for u, x in cl.next_send.items() if x is not None]
                for u in idle[: len(cl.next_send) - want]:
                    del cl.next_send[u]
            for u, when in list(cl.next_send.items()):
                if when is not None and when < t + dt:
                    cl.next_send[u] = None
                    self._new(cl, max(when, t), u)

    def _new(self, cl: Client, at: float, user):
        rng = self.rng
        prompt = max(1, int(cl.prompt(rng)))
        parent = Parent(cl.n, cl.max_tokens, cl, user, at)
        cached = int(prompt * cl.cached) if not cl.prompt_logprobs else 0
        for child in range(cl.n):
            target = max(1, min(cl.max_tokens, int(cl.output(rng))))
            # children share the prompt: after the first, it is in the prefix cache
            hit = cached if child == 0 or cl.prompt_logprobs else max(cached, prompt - 16)
            r = Req(at, prompt, min(hit, prompt - 1), target, parent, cl.logprobs, cl.prompt_logprobs)
            if child > 0 and not cl.prompt_logprobs:
                r.shared = r.cached
            self.waiting.append(r)

    # ------------------------------------------------------------------ admission
    def _blocks(self, tokens: float) -> int:
        return int(math.ceil(tokens / self.block))

    def _used_blocks(self) -> int:
        return sum(self._blocks(self._kv_tokens(r)) for r in self.running)

    @staticmethod
    def _kv_tokens(r: Req) -> float:
        """Tokens holding KV: a request being prefilled holds blocks for its whole prompt
        (allocated when scheduled, prefix-cache hits referenced at once)."""
        if r.computed < r.need:
            return r.need - r.shared
        return r.need - r.shared + r.gen - r.goff

    def _admit(self, t: float):
        self.capacity_blocked = 0
        if self.kind == "llamacpp":
            while self.waiting and len(self.running) < self.slots:
                r = self.waiting.popleft()
                self._start(r, t)
            return
        if self.kind == "sglang":
            used = sum(self._kv_tokens(r) for r in self.running)
            future = sum((r.target - r.gen) * self.ratio for r in self.running)
            budget = self.budget
            while self.waiting and len(self.running) < self.max_seqs:
                r = self.waiting[0]
                need = r.need + (r.target - r.gen) * self.ratio
                room = self.pool_tokens - used - future
                if need > room + self.cache_tokens:
                    self.capacity_blocked = len(self.waiting)
                    break
                if need > room:
                    self.cache_tokens -= need - room  # evict radix-cached prefixes
                if budget <= 0:
                    break
                budget -= r.need - r.computed
                self.waiting.popleft()
                used += r.need
                future += (r.target - r.gen) * self.ratio
                self._start(r, t)
            return
        used = self._used_blocks()
        budget = self.budget * 3
        watermark = int(self.watermark * self.num_blocks)
        while self.waiting and len(self.running) < self.max_seqs and budget > 0:
            r = self.waiting[0]
            need = self._blocks(r.need - r.shared)
            if used + need > self.num_blocks - watermark:
                self.capacity_blocked = len(self.waiting)
                break
            self.waiting.popleft()
            used += need
            budget -= r.need - r.computed
            self._start(r, t)

    def _start(self, r: Req, t: float):
        self.seq += 1
        r.seq = self.seq
        if r.sched_t is None:
            r.sched_t = t
            if self.kind == "vllm":
                self.h["queue"].observe(max(0.0, t - r.arrival))
            elif self.kind == "sglang":
                self.h["queue"].observe(max(0.0, t - r.arrival))
        r.slot_t = t
        self.running.append(r)

    # ------------------------------------------------------------------ one step's cost
    def _cost(self, nD: int, ctxD: float, C: float, pairs: float, pfx: float, lp_rows: float,
              lp_entries: float, plp_tok: float, env: Env):
        """-> (step wall s, {gpu: (busy s, sm s, occ s, dram bytes, tensor s)}, host s, flops, bytes)"""
        spec, k = self.spec, self.spec_k
        tokD = nD * (1 + k)
        tok = tokD + C
        kv_read = self.kvb * (ctxD * (1 + 0.15 * k) + pfx) * self.kv_read_mult
        byt = self.W + kv_read + self.kvb * tok + tok * self.model.hidden * 2 * 8
        flops = 2.0 * self.act * tok + self.attn * (ctxD * (1 + k) + pairs)
        eff = 0.72 * tok / (tok + 96.0)
        t_mem = byt / (0.85 * spec.bw)
        t_cmp = flops / (spec.flops * max(eff, 0.01))
        # tensor pipes: GEMM rows padded to 16, ~80% of peak while busy
        t_ten = (2.0 * self.act * max(tok, 16) + self.attn * (ctxD * (1 + k) + pairs) * 0.5) / (0.8 * spec.flops)
        kernels = self.model.layers * self.kpl * env.kernels_mult + 30
        t_floor = kernels * self.t_kernel
        draft = 1.0
        if k:
            draft = 1 + k * self.draft_frac  # the drafter's k forward passes
            t_floor *= 1 + 0.5 * k
        # sampler: when any request in the batch asks for logprobs/top-p, the whole batch's
        # logits go through fp32 log-softmax and a full-vocabulary sort (~0.25 ns per element)
        t_lp = 0.0
        if lp_rows:
            t_lp = 3e-4 + nD * (1 + k) * self.model.vocab * 0.25e-9
        if plp_tok:
            t_lp += plp_tok * self.model.vocab * 4 * 6 / (0.85 * spec.bw)
        t_comm = 0.0
        if self.tp > 1:
            t_comm = 2 * self.model.layers * (7e-6 + tok * self.model.hidden * 2 / 150e9)
        out = {}
        for g in self.gpus:
            c = env.clk.get(g, 1.0)
            cm = c ** 0.25
            rf = env.rank_factor.get(g, 1.0)
            tw = (t_mem / cm if t_mem >= t_cmp else t_cmp / c) + 0.15 * min(t_mem / cm, t_cmp / c)
            tw *= rf * draft
            tf = t_floor / c
            own = max(tw, tf) + t_lp / cm
            wait = 0.0
            sm_t = tw * self.sm_fill + max(0.0, tf - tw) * 0.05 + t_lp / cm * 0.7
            out[g] = [own, sm_t, sm_t * (0.17 + 0.18 * min(1.0, tok / 4096)),
                      byt + (plp_tok + lp_rows) * self.model.vocab * 4 * 6,
                      min(tw, t_ten / c), t_comm, wait, rf]
        # one rank's launch thread delayed: its GPU idles, the others wait for it in NCCL
        delay = {}
        for g, (jp, js) in env.jitter_rank.items():
            if g in out:
                calls = (kernels if (env.eager or not self.graphs) else 8) + (60 if C else 0)
                delay[g] = (1 - (1 - jp) ** calls) * js
        # ranks wait for the slowest (all-reduce each layer): time in NCCL, busy, few SMs
        gpu_t = 0.0
        for g in self.gpus:
            gpu_t = max(gpu_t, out[g][0] + delay.get(g, 0.0))
        for g in self.gpus:
            out[g][6] = gpu_t - out[g][0] - delay.get(g, 0.0)
        gpu_t += t_comm
        share = max((env.share.get(g, 0.0) for g in self.gpus), default=0.0)
        gpu_wall = gpu_t / max(0.05, 1.0 - share)
        # host side
        nreq = len(self.running)
        host = self.h0 + self.h1 * nreq + 2e-6 * tok + 3e-6 * lp_entries
        if env.eager or not self.graphs:
            host += kernels * 4.5e-6
        else:
            host += 60e-6
        host /= max(0.05, env.cpu_avail)
        s = max(gpu_wall, host) + (1 - self.overlap) * min(gpu_wall, host)
        if env.jitter_p > 0:
            # a launch delayed past the lead the host has over the GPU leaves the GPU idle
            calls = (kernels if (env.eager or not self.graphs) else 8) + (60 if C else 0)
            p_step = 1 - (1 - env.jitter_p) ** calls
            lead = max(0.0, gpu_wall - host)
            s += p_step * max(0.3 * env.jitter_s, env.jitter_s - lead)
        if self.kind == "llamacpp":
            s = gpu_wall + host  # one thread: sample, then decode
        return s, out, host, flops, byt, gpu_t

    # ------------------------------------------------------------------ the slice
    def advance(self, t0: float, dt: float, env: Env) -> dict:
        """Run [t0, t0+dt); returns per-GPU Activity (busy per 0.2 s), CPU seconds used by
        the engine's threads, and launch counts."""
        n = max(1, int(round(dt / SLICE)))
        acts = {g: Activity(busy=[0.0] * n, ctx=self.up) for g in self.gpus}
        cpu = dict(main=0.0, api=0.0, workers=0.0)
        launches = dict(graph=0.0, kernel=0.0, driver=0.0, steps=0.0)
        if not self.up:
            return dict(acts=acts, cpu=cpu, launches=launches, active=0.0)
        active_total = 0.0
        for i in range(n):
            t = t0 + i * SLICE
            self._arrivals(t, SLICE)
            self._admit(t)
            busy, active = self._run_slice(t, SLICE, env, acts, i, launches)
            active_total += active
            for g in self.gpus:
                acts[g].busy[i] = min(1.0, busy.get(g, 0.0) / SLICE)
            ca = min(1.0, env.cpu_avail)
            cpu["main"] += active * ca + (SLICE - active) * 0.015
            if self.tp > 1:
                cpu["workers"] += active * ca * self.tp
            self._check_kv(t + SLICE)
        for g in self.gpus:
            a = acts[g]
            a.sm /= dt
            a.occ /= dt
            a.tensor /= dt
            a.dram /= (self.spec.bw * dt)
            a.nvl_rx /= dt
            a.nvl_tx /= dt
            a.pcie_rx = 20 + 120 * active_total / dt
            a.pcie_tx = 5 + 15 * active_total / dt
        # the API server: tokenizing prompts, detokenizing and streaming outputs
        demand = self._api_demand
        self._api_demand = 0.0
        cap = dt * env.api_avail
        self.api_backlog = max(0.0, self.api_backlog + demand - cap)
        cpu["api"] = min(demand + self.api_backlog, cap) if demand or self.api_backlog else 0.01 * dt
        return dict(acts=acts, cpu=cpu, launches=launches, active=active_total)

    _api_demand = 0.0

    def _run_slice(self, t: float, dt: float, env: Env, acts, idx, launches):
        rem = dt
        busy = {g: 0.0 for g in self.gpus}
        active = 0.0
        p = env.spec_p
        k = self.spec_k
        acc = (1 - p ** (k + 1)) / (1 - p) if k and p < 1 else (k + 1 if k else 1)
        now = t
        for _ in range(3):
            if rem <= 1e-6 or not self.running:
                break
            dec = [r for r in self.running if r.computed >= r.need]
            pre = [r for r in self.running if r.computed < r.need]
            ctxD = float(sum(r.computed + r.gen - r.goff for r in dec))
            nD = len(dec)
            left = sum(r.need - r.computed for r in pre)
            if self.kind == "sglang" and pre:
                C = min(self.budget, left)
                nD_step = 0  # SGLang: an extend batch runs alone
            else:
                C = max(0.0, min(self.budget - nD * (1 + k), left))
                nD_step = nD
            if self.kind == "llamacpp" and pre:
                C = min(2048 - nD, left)
            pairs = pfx = 0.0
            if C > 0:
                # the chunk attends to the already-computed prefix of its request and itself
                pfx = pre[0].computed
                pairs = C * (pfx + min(C, pre[0].need - pre[0].computed) / 2)
            lp_rows = sum(1 for r in dec if r.lp) if nD_step else 0
            lp_entries = sum(r.lp + 1 for r in dec if r.lp) if nD_step else 0
            plp_tok = min(C, sum(r.need - r.computed for r in pre if r.plp)) if C else 0
            lp_entries += plp_tok * 21
            if self.kind == "llamacpp":
                # n_probs: the server sorts the whole vocabulary on the CPU for each token
                lp_entries += sum(self.model.vocab * 0.016 for r in dec if r.lp)
            s, per, host, flops, byt, gpu_t = self._cost(nD_step, ctxD if nD_step else 0.0, C, pairs,
                                                          pfx, lp_rows, lp_entries, plp_tok, env)
            if self.kind == "sglang" and pre and dec:
                # one extend step and one decode step alternate
                s2, per2, host2, flops2, byt2, gpu_t2 = self._cost(nD, ctxD, 0, 0, 0, sum(1 for r in dec if r.lp),
                                                                   sum(r.lp + 1 for r in dec if r.lp), 0, env)
                pair = s + s2
                m = min(rem / pair, left / max(C, 1))
                self._account(per, m, acts, busy)
                self._account(per2, m, acts, busy)
                self._decode(dec, m, acc, now, pair, m * pair)
                self._prefill(pre, m * C, now, C, pair)
                self._flow(m * 2, flops + flops2, byt + byt2, host + host2, m * (gpu_t + gpu_t2))
                launches["steps"] += 2 * m
                launches["graph"] += m * (1 if self.graphs else 0)
                launches["kernel"] += m * self.model.layers * 6
                launches["driver"] += m * self.model.layers * 5
                used = m * pair
            else:
                m = rem / s
                if C > 0:
                    m = min(m, left / C)
                if self.kind == "llamacpp" and not C and dec:
                    m = min(m, min(r.target - r.gen for r in dec) / acc + 0.5)
                self._account(per, m, acts, busy)
                if nD_step:
                    self._decode(dec, m, acc, now, s, m * s)
                if C > 0:
                    self._prefill(pre, m * C, now, C, s)
                self._flow(m, flops, byt, host, m * gpu_t)
                launches["steps"] += m
                if self.graphs and not env.eager and not C:
                    launches["graph"] += m
                    launches["kernel"] += m * 12
                    launches["driver"] += m * 6
                else:
                    kern = self.model.layers * self.kpl * env.kernels_mult
                    launches["kernel"] += m * kern * 0.6
                    launches["driver"] += m * kern * 0.4
                used = m * s
            used = min(used, rem)
            rem -= used
            now += used
            active += used
            self._finish(now)
        return busy, active

    def _account(self, per, m, acts, busy):
        for g, (own, sm, occ, byt, ten, comm, wait, rf) in per.items():
            a = acts[g]
            b = m * (own + wait + comm)
            busy[g] += b
            a.sm += m * (sm + (wait + comm) * 0.14)
            a.occ += m * (occ + (wait + comm) * 0.03)
            a.dram += m * byt
            a.tensor += m * ten
            if comm:
                a.nvl_rx += m * comm * 60e9 / 2**20
                a.nvl_tx += m * comm * 60e9 / 2**20

    def _flow(self, m, flops, byt, host, gpu_s):
        self.c["flops"] += m * flops
        self.c["rbytes"] += m * byt
        self.c["wbytes"] += m * byt * 0.02
        self.c["forward_s"] += gpu_s
        self.c["decode_steps"] += m

    def _decode(self, dec, m, acc, now, s, span):
        """m steps of s seconds; each request gains acc tokens per step."""
        k, c, h = self.spec_k, self.c, self.h
        tot = 0.0
        for r in dec:
            want = r.target - r.gen
            got = min(want, m * acc)
            if got <= 0:
                continue
            r.gen += got
            tot += got
            if r.gen >= r.target - 1e-9:
                r.done_t = now + (got / acc) * s
        steps_obs = tot / acc
        if k:
            c["drafts"] += steps_obs
            c["draft_tok"] += steps_obs * k
            c["accepted"] += steps_obs * (acc - 1)
            self.last_accept = (acc - 1) / k
            self.last_accept_len = acc
        if self.kind == "vllm" or (self.kind == "sglang" and self.sgl_realtime):
            c["gen"] += tot
        if self.kind == "llamacpp":
            c["gen_live"] = c.get("gen_live", 0.0) + tot
        if "itl" in h and steps_obs > 0:
            for f, w in ITL_SPREAD:
                h["itl"].observe(s * f * (1 + self.rng.gauss(0, 0.04)), steps_obs * w)
        self._api_demand += tot * self.api_tok_cost
        for r in dec:
            if r.lp:  # detokenizing the top-k alternatives of every token
                self._api_demand += m * acc * (r.lp + 1) * 8e-6
            if k and self.kind == "llamacpp":
                r.sd += m
                r.sa += m * (acc - 1)

    def _prefill(self, pre, tokens, now, C, pace):
        """``tokens`` prompt tokens in chunks of C per step of ``pace`` seconds, FIFO."""
        left = tokens
        for r in pre:
            if left <= 0:
                break
            take = min(r.need - r.computed, left)
            left -= take
            r.computed += take
            if r.computed >= r.need - 1e-9:
                r.computed = r.need
                self._first_token(r, now + (tokens - left) / max(C, 1e-9) * pace)

    def _first_token(self, r: Req, at: float):
        c, h = self.c, self.h
        if r.first_t is not None:  # resumed after a preemption: recomputed, nothing counted
            r.preempted = False
            return
        r.first_t = at
        r.gen = max(r.gen, 1.0)
        if r.gen >= r.target:
            r.done_t = at
        lag = self.api_backlog
        if self.kind == "vllm" or (self.kind == "sglang" and self.sgl_realtime):
            c["gen"] += 1
        if self.kind == "vllm":
            c["prompt"] += r.prompt
            c["cached"] += r.cached
            h["ttft"].observe(at - r.arrival + lag)
        elif self.kind == "sglang":
            if self.sgl_realtime:
                c["prompt"] += r.prompt
                c["cached"] += r.cached
            h["ttft"].observe(at - r.arrival + lag)
        else:  # llama.cpp: on_prompt_eval when the prompt is processed
            c["prompt"] += r.prompt - r.cached
            c["cached"] += r.cached
            c["prefill_s"] += at - r.slot_t
            c["gen_live"] = c.get("gen_live", 0.0) + 1
        self._api_demand += r.prompt * 1.2e-6 + (r.plp and r.prompt * 21 * 3e-6 or 0.0)
        if r.plp:
            self._api_demand += r.prompt * r.plp * 6e-6

    def _finish(self, now: float):
        keep = []
        c, h = self.c, self.h
        for r in self.running:
            if r.done_t is None or r.first_t is None:
                keep.append(r)
                continue
            done = min(r.done_t, now)
            lag = self.api_backlog
            e2e = done - r.arrival + lag
            gen = int(round(r.gen))
            c["finished"] += 1
            par = r.parent
            if self.kind == "vllm":
                h["e2e"].observe(e2e)
                h["tpot"].observe((done - r.first_t) / max(1, gen - 1))
                h["params_max_tokens"].observe(par.max_tokens)
                c["prefill_s"] += r.first_t - r.sched_t
                c["decode_s"] += done - r.first_t
                par.left -= 1
                par.max_gen = max(par.max_gen, gen)
                if par.left == 0:
                    h["params_n"].observe(par.n)
                    h["max_generation_tokens"].observe(par.max_gen)
            elif self.kind == "sglang":
                h["e2e"].observe(e2e)
                c["gen_fin"] += gen
                c["prompt_fin"] += r.prompt
                c["cached_fin"] += r.cached
                self.cache_tokens = min(self.pool_tokens * 0.9, self.cache_tokens + r.prompt + gen)
                par.left -= 1
            else:
                c["gen_fin"] += gen
                c["decode_s"] += done - r.first_t
                c["drafts_fin"] = c.get("drafts_fin", 0.0) + r.sd
                c["draft_tok_fin"] = c.get("draft_tok_fin", 0.0) + r.sd * self.spec_k
                c["acc_fin"] = c.get("acc_fin", 0.0) + r.sa
                par.left -= 1
            if par.left == 0 and par.user is not None:
                cl = par.client
                if par.user in cl.next_send:
                    cl.next_send[par.user] = now + lag + self.rng.uniform(*cl.think)
        self.running = keep

    def _check_kv(self, now):
        if self.kind == "llamacpp":
            return
        if self.kind == "sglang":
            used = sum(self._kv_tokens(r) for r in self.running)
            self.ratio = max(0.14, self.ratio * 0.993)
            self.cache_tokens = max(0.0, min(self.cache_tokens, self.pool_tokens - used))
            while used > self.pool_tokens and self.running:
                r = max(self.running, key=lambda x: x.seq)
                self.running.remove(r)
                used -= self._kv_tokens(r)
                self.c["retract"] += 1
                self.c["retract_tok"] += r.prompt
                self._requeue(r)
                self.ratio = 0.7
            return
        used = self._used_blocks()
        while used > self.num_blocks and self.running:
            r = max(self.running, key=lambda x: x.seq)
            self.running.remove(r)
            used -= self._blocks(self._kv_tokens(r))
            self.c["preempt"] += 1
            self._requeue(r)

    def _requeue(self, r: Req):
        """Recompute-style preemption: its KV is dropped, it waits to prefill again."""
        r.need = r.prompt + int(r.gen)
        r.goff = r.gen
        r.computed = 0
        r.shared = 0
        r.preempted = True
        r.done_t = None
        self.waiting.appendleft(r)

    # ------------------------------------------------------------------ restart
    def stop(self):
        """The process exits: in-flight requests fail, counters and histograms start over."""
        self.reset_state()
        self.up = False

    def start(self, t: float):
        self.up = True

    # ------------------------------------------------------------------ the scrape
    def sample(self, t_wall: float, mono: float, pids: tuple, cpu: dict) -> EngineSample:
        c = self.c
        hist = tuple(hh.sample() for hh in self.h.values())
        running = float(len(self.running))
        waiting = float(len(self.waiting))
        common = dict(url=self.url, model=self.model.name, time_wall_s=t_wall, time_mono_s=mono,
                      pids=pids, replica=self.replica, cpu_s=cpu.get("cpu_s"),
                      ctx_involuntary=cpu.get("ctx_inv"),
                      busiest_thread_cpu_s=cpu.get("busiest"), busiest_thread=cpu.get("busiest_name", ""))
        if self.kind == "vllm":
            used = self._used_blocks()
            kw = dict(kind="vllm", generation_tokens_total=round(c["gen"]),
                      prompt_tokens_total=float(round(c["prompt"])),
                      prompt_tokens_cached_total=float(round(c["cached"])),
                      requests_finished_total=float(round(c["finished"])),
                      requests_running=running, requests_waiting=waiting,
                      kv_usage_ratio=min(1.0, used / self.num_blocks),
                      num_gpu_blocks=self.num_blocks, block_size=self.block,
                      kv_pool_bytes=int(self.pool_tokens * self.kvb), kv_pool_tokens=self.pool_tokens,
                      cache_dtype="auto", tensor_parallel=self.tp, data_parallel=1,
                      histograms=hist, preemptions_total=float(c["preempt"]),
                      waiting_by_reason={"capacity": float(self.capacity_blocked),
                                         "deferred": 0.0},
                      prefill_seconds_total=round(c["prefill_s"], 4),
                      decode_seconds_total=round(c["decode_s"], 4),
                      corrupted_requests_total=0.0)
            if self.spec_k:
                kw.update(spec_drafts_total=float(round(c["drafts"])),
                          spec_draft_tokens_total=float(round(c["draft_tok"])),
                          spec_accepted_tokens_total=float(round(c["accepted"])))
            if self.mfu:
                kw.update(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                          write_bytes_total=c["wbytes"])
            kw["generation_tokens_total"] = float(kw["generation_tokens_total"])
        elif self.kind == "sglang":
            used = sum(self._kv_tokens(r) for r in self.running)
            evict = min(self.cache_tokens, self.pool_tokens - used)
            gen = c["gen"] if self.sgl_realtime else c["gen_fin"]
            prompt = c["prompt"] if self.sgl_realtime else c["prompt_fin"]
            cached = c["cached"] if self.sgl_realtime else c["cached_fin"]
            kw = dict(kind="sglang", generation_tokens_total=float(round(gen)),
                      prompt_tokens_total=float(round(prompt)),
                      prompt_tokens_cached_total=float(round(cached)),
                      requests_finished_total=float(round(c["finished"])),
                      requests_running=running, requests_waiting=waiting,
                      kv_usage_ratio=min(1.0, used / self.pool_tokens),
                      kv_pool_tokens=self.pool_tokens, histograms=hist,
                      retracted_requests_total=float(c["retract"]),
                      retracted_input_tokens_total=float(round(c["retract_tok"])),
                      kv_used_tokens=float(round(used)), kv_free_tokens=float(round(self.pool_tokens - used - evict)),
                      kv_evictable_tokens=float(round(evict)),
                      forward_seconds_total=round(c["forward_s"], 4),
                      waiting_by_reason={"grammar": 0.0})
            if self.spec_k:
                kw.update(spec_accept_ratio=round(self.last_accept, 4),
                          spec_accept_length=round(self.last_accept_len, 3))
        else:
            kw = dict(kind="llamacpp", generation_tokens_total=float(round(c["gen_fin"])),
                      prompt_tokens_total=float(round(c["prompt"] + c["cached"])),
                      prompt_tokens_cached_total=float(round(c["cached"])),
                      requests_running=running, requests_waiting=waiting,
                      prefill_seconds_total=round(c["prefill_s"], 4),
                      decode_seconds_total=round(c["decode_s"], 4),
                      decode_steps_total=float(round(c["decode_steps"])))
            if self.spec_k:
                kw.update(spec_drafts_total=float(round(c.get("drafts_fin", 0.0))),
                          spec_draft_tokens_total=float(round(c.get("draft_tok_fin", 0.0))),
                          spec_accepted_tokens_total=float(round(c.get("acc_fin", 0.0))))
        return EngineSample(**common, **kw)
