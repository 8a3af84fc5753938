"""A continuous-batching serving engine, simulated at quarter-tick resolution.

Requests arrive (open loop: Poisson at a rate that changes over time; closed loop: a fixed
number of users with think time), wait for a batch slot and KV blocks, prefill in chunks
under a per-step token budget, decode one token per step (more with speculative
decoding), and free their blocks when done.  A step's time comes from bytes moved (the
weights once per step, every running request's KV) and FLOPs (prompt chunks, verification
tokens) against the board's bandwidth and its clock-scaled compute, plus the scheduler's
fixed cost and, with tensor parallelism, the all-reduces.  The engine's counters and
histograms are cumulative, with the real bucket layouts of each engine.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from gputop.schema import EngineHistogram

from ._gpu import GIB, Activity

# bucket layouts as the engines' /metrics pages have them (tests/data/metrics)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_MAXTOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
               10000.0, 20000.0)
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


class Hist:
    __slots__ = ("bounds", "counts", "count", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: float) -> None:
        """n observations around value (step-to-step jitter of a few percent)."""
        if n <= 0:
            return
        whole = int(n)
        if whole < 4:
            self.observe(value, n)
            return
        self.observe(value * 0.93, round(whole * 0.2))
        self.observe(value * 1.0, whole - 2 * round(whole * 0.2) - round(whole * 0.03))
        self.observe(value * 1.08, round(whole * 0.2))
        self.observe(value * 1.6, round(whole * 0.03))

    def snapshot(self, name: str) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(name, tuple(self.bounds), tuple(cum), float(self.count),
                               round(self.sum, 6))


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    heads: int
    vocab: int
    weight_bytes_per_param: float = 2.0

    def kv_bytes(self, tp: int, kv_dtype_bytes: int = 2) -> int:
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * kv_dtype_bytes

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 8, 128, 4096, 32, 128256),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.62, 28, 4, 128, 3584, 28, 152064),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 8, 128, 5120, 40, 152064),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8, 128, 8192, 64, 128256),
    "llama70b-fp8": Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6, 80, 8, 128,
                          8192, 64, 128256, 1.0),
    "qwen05b": Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 24, 2, 64, 896, 14, 151936),
    "mistral24b": Model("mistralai/Mistral-Small-3.1-24B-Instruct-2503", 24.0, 40, 8, 128,
                        5120, 32, 131072),
    "gguf8b": Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03, 32, 8, 128, 4096, 32,
                    128256, 0.61),
    "gguf32b": Model("Qwen2.5-Coder-32B-Instruct-Q5_K_M.gguf", 32.8, 64, 8, 128, 5120, 40,
                     152064, 0.71),
}


@dataclass
class Req:
    arrival: float
    prompt: int
    out: int
    n: int = 1
    cached: int = 0
    done_prefill: int = 0
    gen: int = 0
    admitted: float | None = None
    first_token: float | None = None
    kind: str = ""  # "", "logprobs", "prompt_logprobs": oversized work
    extra_s: float = 0.0  # per step while it decodes (its sampler / logprob work)
    extra_prefill_s: float = 0.0  # per prefill chunk (prompt logprobs)
    max_tokens: int = 0
    user: bool = False  # sent by a closed-loop user (who sends the next one when it ends)

    @property
    def ctx(self) -> int:
        return self.prompt + self.gen


@dataclass
class Workload:
    """Arrivals: ``rate(t)`` requests/s (open loop) or ``users(t)`` concurrent closed-loop
    clients with ``think_s``; lengths from ``prompt(rng, t)`` / ``out(rng, t)``."""

    rate: object = None
    users: object = None
    think_s: float = 2.0
    prompt: object = None
    out: object = None
    cache_hit: object = None  # fraction of the prompt served from the prefix cache, by t
    injections: list = field(default_factory=list)  # (t, Req-factory)
    # the closed-loop users' own lengths and cache hits, when they differ from the open loop's
    user_prompt: object = None
    user_out: object = None
    user_hit: object = None


class Engine:
    def __init__(self, kind: str, model: Model, board_spec, tp: int, rng, wl: Workload,
                 gpu_mem_util: float = 0.9, max_seqs: int = 256, budget: int = 8192,
                 block_size: int = 16, kv_dtype_bytes: int = 2, spec_k: int = 0,
                 alpha=None, pool_tokens: int | None = None, cuda_graphs: bool = True,
                 draft_cost: float = 0.06, prefix_caching: bool = True):
        self.kind, self.model, self.spec, self.tp, self.rng, self.wl = (kind, model,
                                                                         board_spec, tp, rng, wl)
        self.max_seqs, self.budget, self.block_size = max_seqs, budget, block_size
        self.kv_dtype_bytes = kv_dtype_bytes
        self.spec_k, self.alpha, self.draft_cost = spec_k, alpha, draft_cost
        self.prefix_caching = prefix_caching
        self.cuda_graphs = cuda_graphs
        total = board_spec.mem_mib * (1 << 20) - board_spec.reserved_mib * (1 << 20)
        self.weights_gpu = int(model.params_b * 1e9 * model.weight_bytes_per_param / tp)
        self.kvb = model.kv_bytes(tp, kv_dtype_bytes)
        if pool_tokens is None:
            act = 2.5 * GIB + 0.6 * GIB * (budget / 8192)
            pool = max(1 * GIB, total * gpu_mem_util - self.weights_gpu - act)
            blocks = int(pool // (block_size * self.kvb))
        else:
            blocks = pool_tokens // block_size
        self.num_blocks = blocks
        self.pool_bytes = blocks * block_size * self.kvb
        self.mem_steady = int(min(total * 0.995, self.weights_gpu + self.pool_bytes
                                  + 2.9 * GIB + 0.5 * GIB))
        self.reset_counters()
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.users_busy = 0
        self.user_next: list[float] = []
        self.extra_cpu_s = 0.0  # per step host-side delay the scenario imposes (contention)
        self.cpu_share = 1.0  # share of the CPU the engine's busy loop gets
        self.shared_factor = 1.0  # share of the SMs left to us when another process runs
        self.lora_running: tuple[str, ...] = ()
        self.lora_max: int | None = None
        self.up = True
        self.caution = 0.0  # admission headroom kept after a preemption (SGLang new_token_ratio)

    def reset_counters(self) -> None:
        k = self.kind
        if k == "sglang":
            self.h = {"ttft": Hist(SGL_TTFT), "itl": Hist(SGL_ITL), "e2e": Hist(SGL_E2E),
                      "queue": Hist(SGL_QUEUE)}
        elif k == "vllm":
            self.h = {"ttft": Hist(VLLM_TTFT), "itl": Hist(VLLM_ITL), "tpot": Hist(VLLM_ITL),
                      "e2e": Hist(VLLM_E2E), "queue": Hist(VLLM_E2E), "params_n": Hist(VLLM_N),
                      "params_max_tokens": Hist(VLLM_MAXTOK),
                      "max_generation_tokens": Hist(VLLM_MAXTOK)}
        else:
            self.h = {}
        self.c = {"gen": 0.0, "prompt": 0.0, "cached": 0.0, "finished": 0.0, "preempt": 0.0,
                  "retract": 0.0, "retract_tok": 0.0, "drafts": 0.0, "draft_tok": 0.0,
                  "accepted": 0.0, "prefill_s": 0.0, "decode_s": 0.0, "forward_s": 0.0,
                  "steps": 0.0}
        self.last_accept = 0.0
        self.last_accept_len = 0.0

    # ------------------------------------------------------------ the step model
    def step_time(self, batch_tokens: int, prefill_tokens: int, ctx_tokens: int,
                  clock: float, prefill_ctx: int = 0) -> tuple[float, float, float, float]:
        """(step seconds, memory s, compute s, overhead s) for one forward step."""
        s = self.spec
        m = self.model
        kv = ctx_tokens * self.kvb
        mem = (self.weights_gpu + kv) / (s.hbm_gbs * 1e9 * 0.82 * (0.6 + 0.4 * min(1.0, clock)))
        toks = batch_tokens + prefill_tokens
        flops = 2 * m.params_b * 1e9 * toks / self.tp
        flops += 4 * m.layers * m.hidden * prefill_tokens * max(1, prefill_ctx) / self.tp / 2
        comp = flops / (s.tflops * 1e12 * 0.62 * clock * self.shared_factor)
        over = ((0.0026 if self.cuda_graphs else 0.0075) + 0.00002 * batch_tokens) / (0.5 + 0.5 * clock)
        if self.tp > 1:
            over += m.layers * 2 * 11e-6
        if self.shared_factor < 1.0:
            mem /= (0.55 + 0.45 * self.shared_factor)
        step = over + max(mem, comp) + 0.15 * min(mem, comp)
        return step, mem, comp, over

    # ------------------------------------------------------------ arrivals
    def _arrivals(self, t: float, dt: float) -> None:
        wl, r = self.wl, self.rng
        news = []
        if wl.rate is not None:
            lam = max(0.0, wl.rate(t)) * dt
            n = _poisson(r, lam)
            news = [(t + r.random() * dt, False) for _ in range(n)]
        if wl.users is not None:
            want = int(wl.users(t))
            while len(self.user_next) < want:
                self.user_next.append(t + r.random() * wl.think_s)
            del self.user_next[want:]
            for i, at in enumerate(self.user_next):
                if at is not None and at < t + dt:
                    news.append((max(t, at), True))
                    self.user_next[i] = None
        for at, user in news:
            own = user and wl.user_prompt is not None
            p = int((wl.user_prompt if own else wl.prompt)(r, at))
            o = int((wl.user_out if own else wl.out)(r, at))
            hitf = wl.user_hit if own else wl.cache_hit
            hit = hitf(at) if hitf and self.prefix_caching else 0.0
            cached = int(p * hit * (0.8 + 0.2 * r.random())) // self.block_size * self.block_size
            self.waiting.append(Req(at, p, max(1, o), cached=min(cached, p - 1),
                                    max_tokens=max(o, int(o * 1.5)), user=user))
        for inj in list(wl.injections):
            when, make = inj
            if when < t + dt:
                wl.injections.remove(inj)
                req = make(r, max(t, when))
                if req is not None:
                    self.waiting.append(req)

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.block_size)

    def used_blocks(self) -> int:
        return sum(self._blocks(q.ctx if q.done_prefill >= q.prompt else q.done_prefill + 1)
                   * (q.n if q.done_prefill >= q.prompt else 1) for q in self.running)

    # ------------------------------------------------------------ one sub-tick
    def advance(self, t: float, dt: float, clock: float) -> Activity:
        act = Activity()
        if not self.up:
            return act
        self._arrivals(t, dt)
        used = self.used_blocks()
        # admission (FCFS): a slot, and blocks for the first chunk
        while self.waiting and len(self.running) < self.max_seqs:
            q = self.waiting[0]
            need = self._blocks(min(q.prompt, self.budget)) + 1
            if used + need > self.num_blocks * (0.995 - self.caution):
                break
            self.waiting.pop(0)
            q.admitted = max(q.arrival, t) + 0.002 + 0.01 * self.rng.random()
            if self.kind != "llamacpp" or True:
                self.h.get("queue") and self.h["queue"].observe(q.admitted - q.arrival)
            q.done_prefill = q.cached
            self.c["cached"] += q.cached
            self.running.append(q)
            used += need
        decode = [q for q in self.running if q.done_prefill >= q.prompt]
        prefill = [q for q in self.running if q.done_prefill < q.prompt]
        if not self.running:
            return act
        seqs = sum(q.n for q in decode)
        k = self.spec_k
        batch_tokens = seqs * (k + 1)
        ctx = sum(q.ctx * q.n for q in decode) + sum(q.done_prefill for q in prefill)
        pre_left = sum(q.prompt - q.done_prefill for q in prefill)
        chunk = min(max(0, self.budget - batch_tokens), pre_left)
        pre_ctx = max((q.done_prefill for q in prefill), default=0)
        extra = max((q.extra_s for q in decode), default=0.0)
        extra_pre = max((q.extra_prefill_s for q in prefill), default=0.0)
        time_left = dt
        gap = self.extra_cpu_s
        steps_p = steps_d = 0.0
        s_p = s_d = 0.0
        parts = []
        if chunk > 0:
            s_p, mem, comp, over = self.step_time(batch_tokens, chunk, ctx, clock, pre_ctx)
            s_p += extra + extra_pre * (1 if any(q.extra_prefill_s for q in prefill) else 0)
            if k:
                s_p += self.draft_cost * k * (s_p - over) * 0.3
            per = s_p + gap
            need_steps = pre_left / chunk
            steps_p = min(need_steps, time_left / per)
            time_left -= steps_p * per
            parts.append((steps_p, s_p, mem, comp, over, extra + extra_pre))
        if time_left > 1e-6 and (decode or chunk == 0):
            s_d, mem, comp, over = self.step_time(batch_tokens, 0, ctx, clock)
            s_d += extra
            if k:
                s_d += self.draft_cost * k * (s_d - over)
            per = s_d + gap
            steps_d = time_left / per if decode else 0.0
            parts.append((steps_d, s_d, mem, comp, over, extra))
        # GPU activity over the sub-tick
        busy_t = 0.0
        for n, s, mem, comp, over, ex in parts:
            if n <= 0:
                continue
            core = max(1e-6, s - ex)
            f_mem, f_comp, f_over = mem / core, comp / core, over / core
            tot = min(1.0, f_mem + f_comp + f_over) or 1.0
            f_mem, f_comp, f_over = f_mem / tot, f_comp / tot, f_over / tot
            w = n * s / dt
            ex_gpu = ex * 0.45  # the oversized request's sampler work that runs on the GPU
            gpu_s = core * 0.965 + ex_gpu
            frac_core = core / s
            a = Activity(
                busy=min(1.0, gpu_s / s),
                sm=frac_core * (0.30 * f_over + 0.82 * f_mem + 0.93 * f_comp) * self.shared_factor
                + (ex_gpu / s) * 0.55,
                tensor=frac_core * (0.72 * f_comp + 0.10 * f_mem) * self.shared_factor,
                dram=frac_core * (0.95 * f_mem + 0.22 * f_comp) + (ex_gpu / s) * 0.35,
                occ=frac_core * (0.12 + 0.10 * f_mem + 0.05 * f_comp) + (ex_gpu / s) * 0.2,
                nvlink_gbs=(40.0 if self.tp > 1 else 0.0) * min(1.0, (batch_tokens + chunk) / 512),
                pcie_gbs=0.05)
            act.add(a, w)
            busy_t += n * s
        # the host gap between steps (a starved scheduler): GPU idle
        # progress
        steps = steps_p + steps_d
        self.c["steps"] += steps
        self.c["forward_s"] += busy_t
        self.c["decode_s"] += len(decode) * dt
        self.c["prefill_s"] += len(prefill) * steps_p * (s_p + gap)
        # prefill: FCFS within the budget
        done_tokens = chunk * steps_p
        self.c["prompt"] += 0  # counted at admission below (with cached) for whole prompts
        rem = done_tokens
        t + steps_p * (s_p + gap)
        for q in prefill:
            if rem <= 0:
                break
            take = min(rem, q.prompt - q.done_prefill)
            q.done_prefill += take
            rem -= take
            if q.done_prefill >= q.prompt - 0.5:
                q.done_prefill = q.prompt
                frac = 1 - rem / max(1.0, done_tokens)
                q.first_token = max(t + frac * steps_p * (s_p + gap) + 0.5 * (s_p + gap),
                                    q.arrival + (s_p + gap) * (1 + self.rng.random()))
                q.gen = 1
                self.c["gen"] += q.n
                self.c["prompt"] += q.prompt
                if "ttft" in self.h:
                    self.h["ttft"].observe(q.first_token - q.arrival)
        # decode
        if decode and steps > 0:
            alpha = self.alpha(t) if (k and self.alpha) else 0.0
            acc = sum(alpha ** i for i in range(1, k + 1)) if k else 0.0
            acc *= 0.9 + 0.2 * self.rng.random() if k else 1.0
            per_step = 1 + acc
            if k:
                self.c["drafts"] += seqs * steps
                self.c["draft_tok"] += seqs * steps * k
                self.c["accepted"] += seqs * steps * acc
                self.last_accept = acc / k
                self.last_accept_len = per_step
            finished = []
            for q in decode:
                left = q.out - q.gen
                made = min(left, steps * per_step)
                q.gen += made
                self.c["gen"] += made * q.n
                if q.gen >= q.out - 1e-6:
                    finished.append(q)
            if "itl" in self.h:
                itl = self.h["itl"]
                nobs_p = steps_p * seqs
                nobs_d = steps_d * seqs
                if nobs_p:
                    itl.spread((s_p + gap), nobs_p)
                if nobs_d:
                    itl.spread((s_d + gap), nobs_d)
            for q in finished:
                self.running.remove(q)
                end = t + dt * self.rng.random()
                self.c["finished"] += 1
                if "e2e" in self.h:
                    self.h["e2e"].observe(end - q.arrival)
                if "tpot" in self.h and q.out > 1 and q.first_token is not None:
                    self.h["tpot"].observe(max(0.0, end - q.first_token) / (q.out - 1))
                if "params_n" in self.h:
                    self.h["params_n"].observe(q.n)
                    self.h["params_max_tokens"].observe(q.max_tokens)
                    self.h["max_generation_tokens"].observe(q.out)
                if self.wl.users is not None and q.user:
                    for i, at in enumerate(self.user_next):
                        if at is None:
                            self.user_next[i] = end + self.rng.expovariate(1 / self.wl.think_s)
                            break
        # KV pressure: preempt (vLLM: recompute) / retract (SGLang) the newest requests
        used = self.used_blocks()
        self.caution = max(0.0, self.caution - 0.004)
        while used > self.num_blocks and len(self.running) > 1:
            self.caution = 0.12
            q = self.running.pop()
            used -= self._blocks(q.ctx) * q.n
            if self.kind == "sglang":
                self.c["retract"] += 1
                self.c["retract_tok"] += q.prompt
            else:
                self.c["preempt"] += 1
            # recompute: everything generated so far becomes prompt again
            q.prompt, q.out = q.ctx, max(1, q.out - q.gen)
            q.done_prefill, q.gen, q.cached = 0, 0, 0
            self.waiting.insert(0, q)
        busy_frac = min(1.0, busy_t / dt)
        if busy_t > 0:
            scale = busy_frac / max(1e-9, act.busy) if act.busy > busy_frac else 1.0
            if scale != 1.0:
                for a in ("busy", "sm", "tensor", "dram", "occ"):
                    setattr(act, a, getattr(act, a) * scale)
        return act

    def kv_usage(self) -> float:
        return min(1.0, self.used_blocks() / max(1, self.num_blocks))

    def waiting_for_kv(self) -> int:
        if not self.waiting:
            return 0
        return len(self.waiting) if len(self.running) < self.max_seqs else 0


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
