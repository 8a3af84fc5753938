"""A request-level continuous-batching server, vLLM V1-style or SGLang-style, stepped every
1/6 s.  Within a sub-interval the batch composition is fixed; the step time comes from the
bytes each forward pass must read from HBM (weights + the KV of every running sequence) and
the FLOPs it must do (2 x params x tokens + attention), slowed by the GPU's current clocks,
plus the host's time between steps.  Steps longer than the sub-interval carry over.

vLLM: decodes first, then chunked prefill into what is left of the token budget; n>1 fans out
into n child requests; KV in blocks of 16; a decode that cannot get a block preempts the
newest running request (recomputed later: ``num_preemptions``).  SGLang: a prefill ("extend")
batch runs on its own and the decodes wait for it; token-granular pool; admission reserves
``new_token_ratio`` of the remaining outputs; a decode short of memory retracts requests.
Histograms are observed when the engines observe them: TTFT at the first token, ITL per
iteration, everything else (e2e, queue, params_n, max_tokens) when a request finishes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from corpus_d import hist as H
from corpus_d.hw import Act


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float  # parameters read per token (active ones for MoE)
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    heads: int
    total_params: float = 0.0  # weights held (MoE: all experts)

    def kv_bpt(self, tp: int) -> int:
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * 2

    def weights(self, tp: int) -> float:
        return (self.total_params or self.params) * 2 / tp

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


LLAMA8B = ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 8, 128, 4096, 32)
QWEN7B = ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 4, 128, 3584, 28)
LLAMA70B = ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8, 128, 8192, 64)
QWEN32B = ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 8, 128, 5120, 40)
QWEN05B = ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 24, 2, 64, 896, 14)
QWEN3MOE = ModelSpec("Qwen/Qwen3-30B-A3B", 3.3e9, 48, 4, 128, 2048, 32, total_params=30.5e9)


class Req:
    __slots__ = ("arr", "prompt", "cached", "done", "gen", "target", "n", "tag", "first",
                 "sched", "extra", "max_tokens", "last", "orig_prompt", "tokens", "pre_t")

    def __init__(self, arr, prompt, target, n=1, cached=0, tag="", extra=0.0, max_tokens=None):
        self.arr, self.prompt, self.target, self.n = arr, prompt, target, n
        self.cached, self.tag, self.extra = min(cached, prompt - 1), tag, extra
        self.done = self.cached  # prompt tokens with KV (cached ones are free)
        self.gen = 0
        self.first = None
        self.sched = None
        self.max_tokens = max_tokens or target
        self.last = None
        self.orig_prompt = prompt
        self.tokens = 0
        self.pre_t = 0.0


class Server:
    """One engine over ``gpus`` (tensor parallel across all of them)."""

    def __init__(self, kind, model, gpus, rng, *, max_seqs=256, budget=8192, block=16,
                 gmu=0.9, workload=None, rate=None, spec_k=0, accept=None, prefix=False,
                 max_len=32768, pool_tokens=None, activation_gib=None):
        self.kind, self.model, self.gpus, self.rng = kind, model, gpus, rng
        self.tp = len(gpus)
        self.max_seqs, self.budget = max_seqs, budget
        self.block = block if kind == "vllm" else 1
        self.workload, self.rate = workload, rate
        self.spec_k, self.accept = spec_k, accept
        self.prefix, self.max_len = prefix, max_len
        g = gpus[0].spec
        self.kv_bpt = model.kv_bpt(self.tp)
        self.w_bytes = model.weights(self.tp)
        act = activation_gib if activation_gib is not None else (2.5 if self.tp == 1 else 3.5)
        usable = (g.mem_total - g.reserved) * gmu
        self.pool_bytes = int(usable - self.w_bytes - act * 2**30 - 0.6 * 2**30)
        if pool_tokens is not None:
            self.pool_bytes = int(pool_tokens * self.kv_bpt)
        per_block = self.block * self.kv_bpt
        self.blocks = self.pool_bytes // per_block
        self.pool_tokens = self.blocks * self.block
        self.mem_used = int(usable)
        self.running: list[Req] = []
        self.waiting: list[Req] = []
        self.acc = 0.0
        self.stall = 0.0  # SGLang: prefill time the decodes have waited through
        self.new_token_ratio = 0.7
        # knobs the scenarios turn
        self.host_slow = 1.0  # the host's time between steps, multiplied
        self.host_extra_fn = None  # rng -> extra seconds between steps (launch jitter)
        self.share = {}  # gpu index -> share of time another process holds the GPU
        self.rank_slow = {}  # gpu index -> compute time multiplier of that rank (EP load)
        self.extra_sm = 0.45
        self.paused = False  # restarting: no serving
        self.tiny = 0.0  # seconds per step of 1-block kernels (tiny-kernel pathology)
        self.lag = {}  # gpu index -> seconds per step that rank's launches come late
        # counters
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0,
                      retract=0.0, retract_tok=0.0, drafts=0.0, draft_tok=0.0, accepted=0.0,
                      prefill_s=0.0, decode_s=0.0, forward_s=0.0, flops=0.0, rbytes=0.0,
                      wbytes=0.0, steps=0.0)
        if kind == "vllm":
            mt = H.one_two_five(max_len)
            self.h = {"ttft": H.Hist("ttft", H.VLLM_TTFT), "itl": H.Hist("itl", H.VLLM_ITL),
                      "tpot": H.Hist("tpot", H.VLLM_ITL), "e2e": H.Hist("e2e", H.VLLM_REQ),
                      "queue": H.Hist("queue", H.VLLM_REQ),
                      "params_n": H.Hist("params_n", H.VLLM_N),
                      "params_max_tokens": H.Hist("params_max_tokens", mt),
                      "max_generation_tokens": H.Hist("max_generation_tokens", mt)}
        else:
            self.h = {"ttft": H.Hist("ttft", H.SGL_TTFT), "itl": H.Hist("itl", H.SGL_ITL),
                      "e2e": H.Hist("e2e", H.SGL_E2E), "queue": H.Hist("queue", H.SGL_QUEUE)}
        self.evictable = 0.0
        self.last_act = [Act() for _ in gpus]
        self.busy_s = 0.0

    # ------------------------------------------------------------ KV accounting
    def _blocks_of(self, r: Req) -> int:
        b = self.block
        own = -(-(r.done + r.gen) // b)
        return own + (r.n - 1) * -(-r.gen // b)

    def used_blocks(self) -> int:
        b = self.block
        total = 0
        for r in self.running:
            total += -(-(r.done + r.gen) // b)
            if r.n > 1:
                total += (r.n - 1) * -(-r.gen // b)
        return total

    # ------------------------------------------------------------ one sub-interval
    def advance(self, t: float, dt: float) -> list[Act]:
        rng = self.rng
        if self.rate is not None and not self.paused:
            lam = self.rate(t) * dt
            k = _poisson(rng, lam)
            for _ in range(k):
                self.waiting.append(self.workload(rng, t))
        if self.paused:
            self.last_act = [Act() for _ in self.gpus]
            return self.last_act
        if self.kind == "vllm":
            return self._vllm(t, dt)
        return self._sglang(t, dt)

    def _admit(self, t: float, free_blocks: int) -> int:
        seqs = sum(r.n for r in self.running)
        while self.waiting and seqs < self.max_seqs:
            r = self.waiting[0]
            need = -(-(r.prompt + 1) // self.block) + (r.n - 1)
            if self.kind == "sglang":
                need = r.prompt + int(self.new_token_ratio * (r.target - r.gen) * r.n)
            if need > free_blocks - (self.blocks // 100):
                break
            self.waiting.pop(0)
            if r.sched is None:
                r.sched = t
            self.running.append(r)
            seqs += r.n
            free_blocks -= need
        return free_blocks

    def _costs(self, dec: list[Req], ptoks: int, pctx: float):
        """(gpu seconds per step per rank, bytes, flops, activity mix) of one forward pass."""
        m, tp = self.model, self.tp
        g = self.gpus[0]
        D = sum(r.n for r in dec)
        k1 = self.spec_k + 1 if self.spec_k and D else 1
        ctx = 0.0
        for r in dec:
            ctx += (r.done + r.gen) * r.n
        kv_read = ctx * self.kv_bpt
        byts = self.w_bytes + kv_read + ptoks * self.kv_bpt + 2 * (D * k1 + ptoks) * m.hidden * 4
        fl = 2 * m.params / tp * (D * k1 + ptoks)
        fl += 4 * m.layers * (m.heads // tp) * m.head_dim * (ctx * k1 + ptoks * pctx)
        t_mem = byts / (g.spec.hbm_bw * 0.9) * max(x.memory_slow() for x in self.gpus)
        t_cmp = fl / (g.spec.flops * 0.62) * max(x.compute_slow() for x in self.gpus)
        t_gpu = max(t_mem, t_cmp) + 0.1 * min(t_mem, t_cmp) + 0.00035
        t_comm = 0.0
        if tp > 1:
            act_bytes = (D * k1 + ptoks) * m.hidden * 2
            t_comm = 2 * m.layers * (7e-6 + act_bytes * 2 * (tp - 1) / tp / g.spec.nvlink_bw)
        if self.spec_k and D:
            t_gpu += self.spec_k * (0.00045 + 0.02 * t_mem)  # the draft head, k passes
        extra = max((r.extra for r in dec), default=0.0)
        if ptoks and any(r.extra for r in self.running if r.done < r.prompt):
            extra = max(extra, max(r.extra for r in self.running if r.done < r.prompt))
        return t_gpu, t_comm, extra, byts, fl, t_mem, t_cmp

    def _step_time(self, t_gpu, t_comm, extra):
        host = (0.0006 + 0.000004 * len(self.running)) * self.host_slow
        if self.host_extra_fn is not None:
            host += self.host_extra_fn(self.rng)
        if self.lag:
            host += max(self.lag.values())
        # a rank that is slower (its expert load, a time-sliced GPU) holds the collectives
        slow = 1.0
        for i, g in enumerate(self.gpus):
            f = self.rank_slow.get(g.index, 1.0) / max(0.05, 1.0 - self.share.get(g.index, 0.0))
            slow = max(slow, f)
        work = t_gpu + extra + self.tiny
        return work * slow + t_comm + host, work, host, slow

    def _acts(self, T, work, t_comm, host, byts, fl, t_mem, t_cmp, extra, prefill_share):
        acts = []
        spec = self.gpus[0].spec
        for g in self.gpus:
            own = work * self.rank_slow.get(g.index, 1.0)
            shared = self.share.get(g.index, 0.0)
            other = 0.0
            if shared:
                other = (T - host) * shared  # the other process's kernels in the slices
                own_time = min(own, (T - host) - other)
            else:
                own_time = own
            wait = max(0.0, T - host - own_time - other - t_comm)  # in NCCL, spinning
            if self.lag:  # the others sit in the collective while one rank launches late
                wait += max(self.lag.values()) - self.lag.get(g.index, 0.0)
            busy = min(1.0, (own_time + other + wait + t_comm) / T)
            tiny = self.tiny / T
            ext = extra / T
            core = max(0.0, own_time - self.tiny - extra) / T
            memb = t_mem / max(t_mem + t_cmp, 1e-9)
            sm_core = 0.70 * memb + 0.93 * (1 - memb)
            sm = core * sm_core + ext * self.extra_sm + tiny * 0.015 + (wait + t_comm) / T * 0.16
            sm += other / T * 0.85
            tensor = core * (0.06 * memb + 0.76 * (1 - memb)) + other / T * 0.35
            dram = min(0.97, byts / spec.hbm_bw / T * (own_time / max(own, 1e-9))
                       + ext * 0.30 + other / T * 0.25)
            occ = core * (0.22 * memb + 0.14 * (1 - memb)) + ext * 0.12 + (wait + t_comm) / T * 0.03
            acts.append(Act(busy=busy, sm=sm, occ=occ, dram=dram, tensor=tensor,
                            nvlink=(t_comm / T) * 60e9 if self.tp > 1 else 0.0))
        return acts

    def _finish(self, r: Req, t: float) -> None:
        self.c["finished"] += 1
        h = self.h
        e2e = t - r.arr
        h["e2e"].observe(e2e)
        h["queue"].observe(max(0.0, (r.sched or t) - r.arr))
        if self.kind == "vllm":
            ttft = (r.first or t) - r.arr
            if r.gen > 1:
                h["tpot"].observe((e2e - ttft) / (r.gen - 1))
            h["params_n"].observe(r.n)
            h["params_max_tokens"].observe(r.max_tokens)
            h["max_generation_tokens"].observe(r.target)
            self.c["prefill_s"] += max(0.0, (r.first or t) - (r.sched or t))
            self.c["decode_s"] += max(0.0, t - (r.first or t))
        self.evictable = min(self.pool_tokens * 0.5, self.evictable + r.prompt * 0.5)

    def _preempt(self, t: float) -> None:
        """Free blocks by sending the newest running requests back to the queue."""
        total = self.blocks
        used = self.used_blocks()
        self._used = used
        while used > total and len(self.running) > 1:
            r = self.running.pop()
            used -= self._blocks_of(r)
            if self.kind == "vllm":
                self.c["preempt"] += 1
            else:
                self.c["retract"] += 1
                self.c["retract_tok"] += r.prompt
                self.new_token_ratio = min(1.0, self.new_token_ratio + 0.3)
            # recomputed later: prompt and what it generated so far
            r.prompt = r.orig_prompt + r.gen
            r.done = r.cached
            self.waiting.insert(0, r)

    def _emit(self, dec, k, T, t):
        """k steps of decoding for every decoding request."""
        h_itl = self.h["itl"]
        gen = 0.0
        done = []
        per_step = 1.0
        seqs = 0
        for r in dec:
            seqs += r.n
        if self.spec_k:
            a = self.accept(t) if callable(self.accept) else self.accept
            exp_acc = sum(a ** i for i in range(1, self.spec_k + 1))
            per_step = 1.0 + exp_acc
            self.c["drafts"] += k * seqs
            self.c["draft_tok"] += k * seqs * self.spec_k
            self.c["accepted"] += k * seqs * exp_acc
        add = k * per_step
        for r in dec:
            r.tokens += add
            new = int(r.tokens) - r.gen
            if new > r.target - r.gen:
                new = r.target - r.gen
            r.gen += new
            gen += new * r.n
            if r.gen >= r.target:
                done.append(r)
        stall = self.stall if self.kind == "sglang" else 0.0
        if stall:
            h_itl.observe(T + stall, seqs)
            h_itl.observe(T, (k - 1) * seqs)
        else:
            h_itl.observe(T, k * seqs)
        self.stall = 0.0
        self.c["gen"] += gen
        for r in done:
            self.running.remove(r)
            self._finish(r, t)
        return gen

    def _prefill(self, pre, ptoks_total, t):
        """Give ``ptoks_total`` prompt tokens of work to the prefilling requests, FCFS."""
        left = ptoks_total
        for r in pre:
            if left <= 0:
                break
            take = min(left, r.prompt - r.done)
            r.done += take
            left -= take
            self.c["prompt"] += take
            if r.done >= r.prompt:
                self.c["prompt"] += r.cached
                self.c["cached"] += r.cached
                r.first = t
                r.gen = max(r.gen, 1)
                r.tokens = max(r.tokens, float(r.gen))
                self.c["gen"] += r.n
                self.h["ttft"].observe(t - r.arr, 1)
                if r.gen >= r.target:
                    self.running.remove(r)
                    self._finish(r, t)

    def _vllm(self, t, dt):
        free = self.blocks - self.used_blocks()
        self._admit(t, free)
        dec = [r for r in self.running if r.done >= r.prompt]
        pre = [r for r in self.running if r.done < r.prompt]
        D = sum(r.n for r in dec)
        room = max(0, self.budget - D * (self.spec_k + 1))
        ptoks = min(room, sum(r.prompt - r.done for r in pre))
        pctx = (sum(r.done for r in pre) / len(pre) + ptoks / 2) if pre else 0.0
        if not dec and not ptoks:
            self.acc = 0.0
            self.last_act = [Act() for _ in self.gpus]
            return self.last_act
        t_gpu, t_comm, extra, byts, fl, t_mem, t_cmp = self._costs(dec, ptoks, pctx)
        T, work, host, slow = self._step_time(t_gpu, t_comm, extra)
        self.acc += dt / T
        k = int(self.acc)
        self.acc -= k
        if k:
            self._account(k, byts, fl, T)
            self._emit(dec, k, T, t)
            self._prefill(pre, ptoks * k, t)
            self._preempt(t)
        return self._acts(T, work, t_comm, host, byts, fl, t_mem, t_cmp, extra, 0.0)

    def _sglang(self, t, dt):
        free = self.pool_tokens - self.used_blocks() - 0
        self._admit(t, free)
        self.new_token_ratio = max(0.1, self.new_token_ratio - 0.0015 * dt * 6)
        dec = [r for r in self.running if r.done >= r.prompt]
        pre = [r for r in self.running if r.done < r.prompt]
        acts_sum = None
        used = 0.0
        if pre:  # an extend batch first: decodes wait for it
            ptoks = min(self.budget, sum(r.prompt - r.done for r in pre))
            pctx = sum(r.done for r in pre) / len(pre) + ptoks / 2
            cost = self._costs([], ptoks, pctx)
            T, work, host, slow = self._step_time(cost[0], cost[1], cost[2])
            n_pre = max(1, int(min(dt, T * math.ceil(sum(r.prompt - r.done for r in pre) / ptoks)) / T))
            frac = min(1.0, n_pre * T / dt)
            if T > dt:  # one long extend step spans sub-intervals
                self.acc += dt / T
                n_pre = int(self.acc)
                self.acc -= n_pre
                frac = 1.0
            if n_pre:
                self._account(n_pre, cost[3], cost[4], T)
                self._prefill(pre, ptoks * n_pre, t)
            self.stall += min(dt, n_pre * T) if dec else 0.0
            acts_sum = (self._acts(T, work, cost[1], host, cost[3], cost[4], cost[5], cost[6],
                                   cost[2], 1.0), frac)
            used = frac * dt
        rest = dt - used
        if dec and rest > 1e-4:
            cost = self._costs(dec, 0, 0.0)
            T, work, host, slow = self._step_time(cost[0], cost[1], cost[2])
            if acts_sum is None:
                self.acc += rest / T
                k = int(self.acc)
                self.acc -= k
            else:
                k = int(rest / T)
            if k:
                self._account(k, cost[3], cost[4], T)
                self._emit(dec, k, T, t)
                self._preempt(t)
            a2 = self._acts(T, work, cost[1], host, cost[3], cost[4], cost[5], cost[6], cost[2], 0.0)
            if acts_sum is None:
                return a2
            a1, frac = acts_sum
            return [_mix(x, y, frac) for x, y in zip(a1, a2)]
        if acts_sum is not None:
            a1, frac = acts_sum
            return [_mix(x, Act(), frac) for x in a1]
        self.acc = 0.0
        return [Act() for _ in self.gpus]

    def _account(self, k, byts, fl, T):
        c = self.c
        c["steps"] += k
        c["forward_s"] += k * T
        c["flops"] += k * fl
        c["rbytes"] += k * byts
        c["wbytes"] += k * byts * 0.02


def _mix(a: Act, b: Act, f: float) -> Act:
    g = 1.0 - f
    return Act(busy=a.busy * f + b.busy * g, sm=a.sm * f + b.sm * g, occ=a.occ * f + b.occ * g,
               dram=a.dram * f + b.dram * g, tensor=a.tensor * f + b.tensor * g,
               nvlink=a.nvlink * f + b.nvlink * g)


def _poisson(rng, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1
