"""Request-level simulation of a serving engine (vLLM V1, SGLang, llama.cpp llama-server).

Requests arrive (Poisson at a rate that may follow a diurnal curve, bursts, a tenant mix),
wait, are admitted by a continuous-batching scheduler while the KV pool has room, are
prefilled in chunks beside the running decodes, decode one token per step (or several
with speculative decoding), and leave.  A step's time comes from physics at the current
clock: streaming the weights and the KV of every running sequence through DRAM, the
FLOPs of prefill chunks (matmuls plus attention over the context), tensor-parallel
all-reduces, sampling, and the host gap between steps.  Time advances in slices of
1/6 s; inside a slice the step composition is held and the number of steps is fractional.
Counters and histograms are cumulative and move only when work is done.
"""

from __future__ import annotations

import bisect
import math

from gputop.schema import EngineHistogram, EngineSample

from . import gpu as G

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0,
             2500.0, 3000.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)


class Hist:
    __slots__ = ("name", "bounds", "counts", "sum")

    def __init__(self, name, bounds):
        self.name = name
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value, weight=1.0):
        self.counts[bisect.bisect_left(self.bounds, value)] += weight
        self.sum += value * weight

    def warm(self, values_weights):
        for v, w in values_weights:
            self.observe(v, w)

    def reading(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += math.floor(c)
            cum.append(float(run))
        total = run + math.floor(self.counts[-1])
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(total), round(self.sum, 4))


class Model:
    """A served model: parameters, layers, KV geometry (per token, all ranks)."""

    def __init__(self, name, params_b, layers, hidden, kv_heads, head_dim, vocab=128256,
                 active_b=None, kv_dtype_bytes=2):
        self.name = name
        self.params = params_b * 1e9
        self.active = (active_b or params_b) * 1e9  # MoE: what one token touches
        self.layers = layers
        self.hidden = hidden
        self.kv_heads = kv_heads
        self.head_dim = head_dim
        self.vocab = vocab
        self.kv_bytes_token = 2 * layers * kv_heads * head_dim * kv_dtype_bytes
        self.weights_bytes = int(self.params * 2)

    def kv_config(self):
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.hidden // 128,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 4096, 8, 128),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8192, 8, 128),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 3584, 4, 128, vocab=152064),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 5120, 8, 128, vocab=152064),
    "qwen05b": Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 24, 896, 2, 64, vocab=151936),
    "mixtral": Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, 32, 4096, 8, 128,
                     vocab=32000, active_b=12.9),
    "gemma27b": Model("google/gemma-2-27b-it", 27.2, 46, 4608, 16, 128, vocab=256000),
    "mistral7b": Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 4096, 8, 128, vocab=32768),
    "llama1b": Model("meta-llama/Llama-3.2-1B-Instruct", 1.24, 16, 2048, 8, 64),
}


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "n", "lp", "done_pf", "gen", "first",
                 "sched", "heavy", "maxtok", "pre", "fin")

    def __init__(self, arr, prompt, cached, out, n=1, lp=0, heavy=0.0, maxtok=None):
        self.arr = arr
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.n = n
        self.lp = lp
        self.heavy = heavy  # extra GPU seconds per step, extra host seconds per step
        self.maxtok = maxtok or max(out, 256)
        self.done_pf = cached
        self.gen = 0.0
        self.first = None
        self.sched = None
        self.pre = 0  # times preempted
        self.fin = None


class Engine:
    """One engine instance (TP group) on its GPUs."""

    def __init__(self, kind, version, model: Model, gpus, rng, *, tp=1, max_seqs=256,
                 chunk=8192, mem_util=0.9, host_gap_s=0.0009, pool_tokens=None,
                 spec_k=0, accept=0.7, url="http://127.0.0.1:8000/metrics", pids=(),
                 replica="", slots=None, ctx=None, mfu=False, prefix_cache=True):
        self.kind, self.version, self.m, self.gpus, self.rng = kind, version, model, gpus, rng
        self.tp = tp
        self.max_seqs = slots or max_seqs
        self.chunk = chunk
        self.host_gap = host_gap_s
        self.url, self.pids, self.replica = url, tuple(pids), replica
        sp = gpus[0].spec
        w_gpu = model.weights_bytes / tp
        self.kvb_gpu = model.kv_bytes_token / tp
        if pool_tokens is None:
            avail = sp.mem_bytes * mem_util - w_gpu - 3.2e9
            pool_tokens = int(avail / self.kvb_gpu)
        if kind == "llamacpp":
            pool_tokens = ctx or pool_tokens
        self.block = 16 if kind == "vllm" else 1
        self.pool = int(pool_tokens // self.block * self.block)
        self.mem_used = int(sp.mem_bytes * mem_util) if kind != "llamacpp" else \
            int(w_gpu + self.pool * self.kvb_gpu + 1.1e9)
        self.w_gpu = w_gpu
        self.p_gpu = model.active / tp
        self.spec_k = spec_k
        self.accept = accept
        self.mfu = mfu
        self.prefix_cache = prefix_cache
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.kv_used = 0.0
        # counters
        self.c_gen = self.c_prompt = self.c_cached = self.c_fin = self.c_pre = 0.0
        self.c_retr = self.c_retr_tok = 0.0
        self.c_drafts = self.c_draft_tok = self.c_acc = 0.0
        self.c_pf_s = self.c_dec_s = self.c_fwd = self.c_steps = 0.0
        self.c_flops = self.c_read = self.c_write = 0.0
        self.evictable = 0.0
        self.host_cpu_s = 0.0
        self.busiest_s = 0.0
        self.invol = 0
        if kind == "vllm":
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens", VLLM_TOK),
                      "max_generation_tokens": Hist("max_generation_tokens", VLLM_TOK)}
        elif kind == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        else:
            self.h = {}
        # what faults set
        self.host_factor = 1.0  # host gap multiplier (CPU contention)
        self.cpu_share = 1.0  # share of the CPU it wants that it gets
        self.jitter = None  # callable(rng) -> extra host seconds per step (launch preemption)
        self.shared = None  # (share of GPU time the other process takes, its signature)
        self.accept_fn = None
        self.last_step = 0.02
        self.steps_in_tick = 0.0
        self.jitter_events = []  # (seconds) of long launches this tick
        self.alive = True
        self.dp_engine = None
        self.imbalance = None  # (gpu index, work factor): MoE hot experts on one rank

    # ------------------------------------------------------------------ warm start
    def warm(self, seconds: float, rate: float, mean_prompt: float, mean_out: float,
             itl: float, ttft: float):
        """Counters and histograms as an engine up for ``seconds`` would show them."""
        reqs = rate * seconds
        self.c_fin = math.floor(reqs * 0.995)
        self.c_prompt = math.floor(reqs * mean_prompt)
        self.c_cached = math.floor(self.c_prompt * (0.3 if self.prefix_cache else 0.0))
        self.c_gen = math.floor(reqs * mean_out)
        self.c_steps = math.floor(seconds / max(itl, 1e-3) * 0.7)
        self.c_pf_s = reqs * ttft
        self.c_dec_s = reqs * mean_out * itl
        self.c_fwd = seconds * 0.7
        self.host_cpu_s = seconds * 1.3
        self.busiest_s = seconds * 0.92
        self.invol = int(seconds * 40)
        if self.spec_k:
            d = self.c_gen / (1 + self.spec_k * self.accept)
            self.c_drafts = math.floor(d)
            self.c_draft_tok = math.floor(d * self.spec_k)
            self.c_acc = math.floor(d * self.spec_k * self.accept)
        if self.mfu:
            self.c_flops = self.c_gen * 2 * self.p_gpu
            self.c_read = self.c_steps * self.w_gpu
        r = self.rng
        for _ in range(60):
            w = reqs / 60
            if "ttft" in self.h:
                self.h["ttft"].observe(ttft * math.exp(r.gauss(0, 0.5)), w)
                self.h["e2e"].observe((ttft + mean_out * itl) * math.exp(r.gauss(0, 0.6)), w)
                self.h["queue"].observe(0.004 * math.exp(r.gauss(0, 1.0)), w)
            if "itl" in self.h:
                self.h["itl"].observe(itl * math.exp(r.gauss(0, 0.15)), w * mean_out)
            if "tpot" in self.h:
                self.h["tpot"].observe(itl * math.exp(r.gauss(0, 0.1)), w)
                self.h["params_n"].observe(1, w)
                self.h["params_max_tokens"].observe(mean_out * 2 * math.exp(r.gauss(0, 0.5)), w)
                self.h["max_generation_tokens"].observe(mean_out * math.exp(r.gauss(0, 0.6)), w)

    # ------------------------------------------------------------------ requests
    def arrive(self, req: Req):
        self.waiting.append(req)

    def _admit(self, now):
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            need = (r.prompt - r.cached) + r.gen * r.n + 16 * r.n
            if self.kv_used + need > self.pool * 0.99 and self.running:
                break
            self.waiting.pop(0)
            if r.sched is None:
                r.sched = now
                if "queue" in self.h:
                    self.h["queue"].observe(now - r.arr)
            self.running.append(r)
            self.kv_used += r.cached

    def _preempt(self, now):
        victim = self.running.pop()  # the newest is sent back (vLLM V1 / SGLang retract)
        freed = min(victim.done_pf, victim.prompt) + victim.gen * victim.n
        self.kv_used = max(0.0, self.kv_used - freed)
        victim.prompt = victim.prompt + int(victim.gen)
        victim.out = max(1, victim.out - int(victim.gen))
        victim.gen = 0.0
        victim.done_pf = victim.cached
        victim.pre += 1
        self.waiting.insert(0, victim)
        if self.kind == "sglang":
            self.c_retr += 1
            self.c_retr_tok += victim.prompt
        else:
            self.c_pre += 1

    # ------------------------------------------------------------------ one slice
    def advance(self, now, dt):
        """Run the engine for a slice; returns {gpu index: pieces} of GPU work."""
        if not self.alive:
            return {g.index: [] for g in self.gpus}, 0.0
        self._admit(now)
        run = self.running
        if not run:
            # no work: the GPU is idle; a polling scheduler loop still uses a little CPU
            self.host_cpu_s += dt * 0.08 * self.cpu_share
            self.busiest_s += dt * 0.05 * self.cpu_share
            self.last_step = 0.0
            return {g.index: [] for g in self.gpus}, 0.0
        m = self.m
        sp = self.gpus[0].spec
        c = min(g.c for g in self.gpus)
        bw = sp.hbm_tbs * 1e12
        fl = sp.tflops * 1e12
        acc = self.accept_fn(now) if self.accept_fn else self.accept
        self.last_acc = acc
        # step composition
        n_dec = 0
        ctx_tokens = 0.0
        pf_left = []
        heavy_gpu = heavy_host = 0.0
        for r in run:
            if r.done_pf >= r.prompt:
                n_dec += r.n
                ctx_tokens += r.n * (r.prompt + r.gen)
                if r.heavy:
                    heavy_gpu += r.heavy[0]
                    heavy_host += r.heavy[1]
            else:
                pf_left.append(r)
        spec_tokens = n_dec * (1 + self.spec_k)
        budget = max(0, self.chunk - spec_tokens)
        pf_tokens = 0.0
        pf_ctx = 0.0
        for r in pf_left:
            if budget <= 0:
                break
            take = min(budget, r.prompt - r.done_pf)
            pf_tokens += take
            pf_ctx += take * (r.done_pf + take / 2)
            budget -= take
        # times (per GPU of the TP group)
        t_w = self.w_gpu / (bw * 0.86) if n_dec or pf_tokens else 0.0
        t_kv = ctx_tokens * self.kvb_gpu / (bw * 0.84)
        t_dc = 2 * self.p_gpu * spec_tokens / (fl * 0.55 * c)
        t_mem = t_w + t_kv
        t_dec = max(t_mem, t_dc) / (0.55 + 0.45 * c)  # memory-bound work slows a little
        attn_fl = 4 * pf_ctx * m.hidden * m.layers / self.tp
        t_pf = (2 * self.p_gpu * pf_tokens + attn_fl) / (fl * 0.62 * c)
        t_samp = n_dec * m.vocab * 4 / (bw * 0.5) + 0.0002
        t_nccl = 0.0
        if self.tp > 1:
            toks = spec_tokens + pf_tokens
            t_nccl = m.layers * 2 * (9e-6 + toks * m.hidden * 2 / 150e9)
        if self.spec_k:
            t_dec += self.spec_k * 0.0016  # the draft's own steps
        gpu_t = t_dec + t_pf + t_samp + t_nccl + heavy_gpu
        if self.imbalance:
            gpu_t = (gpu_t - t_nccl) * self.imbalance[1] + t_nccl
        share = 0.0
        if self.shared:
            share = self.shared[0]
            gpu_t_wall = gpu_t / max(0.05, 1.0 - share)
        else:
            gpu_t_wall = gpu_t
        # host work per step (schedule, prepare inputs, process outputs) overlaps the GPU's
        # step; what does not fit, at the CPU share the engine gets, leaves the GPU idle
        host_work = (0.004 + 0.00012 * len(run)) / max(self.cpu_share, 0.05) ** 1.3
        gap = self.host_gap + max(0.0, host_work - 0.8 * gpu_t) + heavy_host
        if self.kind == "llamacpp":
            gap += 0.0012
        extra = 0.0
        if self.jitter:
            extra = self.jitter(self.rng, dt)
        step = gpu_t_wall + gap
        steps = dt / step
        if extra:
            steps = max(0.05, (dt - extra) / step)
            step = dt / steps
        self.last_step = step
        self.steps_in_tick += steps
        # progress
        per_step_tokens = 1 + (self.spec_k * acc if self.spec_k else 0.0)
        done = []
        new_gen = 0.0
        for r in run:
            if r.done_pf >= r.prompt:
                g = steps * per_step_tokens
                r.gen += g
                new_gen += g * r.n
                self.kv_used += g * r.n
                if r.gen >= r.out:
                    done.append(r)
        left = pf_tokens * steps
        for r in pf_left:
            if left <= 0:
                break
            take = min(left, r.prompt - r.done_pf)
            r.done_pf += take
            self.kv_used += take
            left -= take
            if r.done_pf >= r.prompt - 1e-6:
                r.done_pf = r.prompt
                r.first = now + dt
                if "ttft" in self.h:
                    self.h["ttft"].observe(now + dt - r.arr)
                self.c_pf_s += now + dt - (r.sched or now)
        self.c_gen += new_gen
        self.c_prompt += pf_tokens * steps
        self.c_steps += steps
        self.c_fwd += gpu_t * steps
        self.c_dec_s += len(run) * dt
        if self.spec_k:
            self.c_drafts += steps * n_dec
            self.c_draft_tok += steps * n_dec * self.spec_k
            self.c_acc += steps * n_dec * self.spec_k * acc
        if self.mfu:
            self.c_flops += steps * (2 * self.p_gpu * (spec_tokens + pf_tokens) + attn_fl)
            self.c_read += steps * (self.w_gpu + ctx_tokens * self.kvb_gpu)
            self.c_write += steps * (spec_tokens + pf_tokens) * self.kvb_gpu
        if n_dec and "itl" in self.h:
            itl = step / per_step_tokens
            self.h["itl"].observe(itl * (1 + self.rng.gauss(0, 0.03)), steps * n_dec)
        for r in done:
            r.fin = now + dt
            run.remove(r)
            self.kv_used = max(0.0, self.kv_used - (r.prompt + r.gen * r.n))
            self.evictable = min(self.pool * 0.5, self.evictable + r.prompt * 0.5)
            self.c_fin += 1
            if "e2e" in self.h:
                e2e = now + dt - r.arr
                self.h["e2e"].observe(e2e)
                if "tpot" in self.h:
                    self.h["tpot"].observe(max(0.0, e2e - ((r.first or now) - r.arr)) / max(1.0, r.out - 1))
                    self.h["params_n"].observe(r.n)
                    self.h["params_max_tokens"].observe(r.maxtok)
                    self.h["max_generation_tokens"].observe(r.out)
        while self.kv_used > self.pool and len(self.running) > 1:
            self._preempt(now)
        # CPU: the scheduler/launch thread is busy while steps run; it gets cpu_share of it
        want = dt * (0.95 if n_dec or pf_tokens else 0.1)
        self.busiest_s += want * self.cpu_share
        self.host_cpu_s += want * self.cpu_share * (1.25 + 0.1 * self.tp)
        if self.cpu_share < 0.97:
            self.invol += int(dt * (1 - self.cpu_share) * 900 * (1 + self.rng.random()))
        else:
            self.invol += int(dt * 30 * self.rng.random())
        # GPU pieces per slice
        f = steps
        pieces = []
        w_sig = G.DECODE_W
        if t_dc > t_mem and t_dec > 0:
            frac = min(1.0, t_dc / max(t_dec, 1e-9))
            w_sig = (92.0, 22.0, 20 + 60 * frac, 84 - 55 * frac, 0.62 + 0.6 * frac)
        if t_dec:
            wk = t_w / max(t_mem, 1e-12)
            pieces.append((f * t_dec * wk, w_sig))
            pieces.append((f * t_dec * (1 - wk), G.ATTN))
        if t_pf:
            pieces.append((f * t_pf, G.PREFILL))
        pieces.append((f * t_samp, G.SAMPLE))
        if heavy_gpu:
            pieces.append((f * heavy_gpu, G.SAMPLE))
        if t_nccl:
            pieces.append((f * t_nccl, G.NCCL))
        if share:
            pieces.append((f * (gpu_t_wall - gpu_t), self.shared[1]))
        nvl = (t_nccl * f / dt) * 60000.0 if self.tp > 1 else 0.0
        out = {g.index: pieces for g in self.gpus}
        if self.imbalance:  # one rank of the group computes more; the others spin in NCCL
            gi, k = self.imbalance
            slow = [(s * k, sig) if sig is not G.NCCL else (s, sig) for s, sig in pieces]
            out[gi] = slow
            extra = sum(s for s, _ in slow) - sum(s for s, _ in pieces)
            for g in self.gpus:
                if g.index != gi:
                    out[g.index] = pieces + [(extra, G.NCCL)]
        return out, nvl

    # ------------------------------------------------------------------ readings
    def sample(self, now_wall, now_mono, model_label=None) -> EngineSample:
        kind = self.kind
        v = self.version
        pool = self.pool
        kv_ratio = min(1.0, self.kv_used / pool) if pool else None
        common = dict(kind=kind, url=self.url, model=model_label or self.m.name,
                      generation_tokens_total=float(math.floor(self.c_gen)),
                      prompt_tokens_total=float(math.floor(self.c_prompt)),
                      requests_running=float(len(self.running)),
                      requests_waiting=float(len(self.waiting)),
                      tensor_parallel=self.tp, data_parallel=1,
                      gpu_indices=tuple(g.index for g in self.gpus), pids=self.pids,
                      time_mono_s=now_mono, time_wall_s=now_wall,
                      cpu_s=round(self.host_cpu_s, 2), ctx_involuntary=self.invol,
                      busiest_thread_cpu_s=round(self.busiest_s, 2), replica=self.replica,
                      weights_bytes=int(self.w_gpu), kv_config=self.m.kv_config(),
                      weights_source="size of safetensors files (index metadata.total_size)")
        if kind == "vllm":
            hs = [self.h[k].reading() for k in ("ttft", "itl", "tpot", "e2e", "queue")]
            if v >= 0.2:
                hs += [self.h[k].reading() for k in ("params_n", "params_max_tokens",
                                                     "max_generation_tokens")]
            extra = dict(
                prompt_tokens_cached_total=float(math.floor(self.c_cached)) if v >= 0.11 else None,
                requests_finished_total=float(math.floor(self.c_fin)),
                kv_usage_ratio=kv_ratio, num_gpu_blocks=pool // self.block, block_size=self.block,
                kv_pool_tokens=pool if v >= 0.2 else None,
                kv_pool_bytes=int(pool * self.kvb_gpu) if v >= 0.2 else None,
                cache_dtype="auto", preemptions_total=float(self.c_pre),
                histograms=tuple(hs),
                busiest_thread="%d VLLM::EngineCore" % (self.pids[1] if len(self.pids) > 1 else 0),
                waiting_by_reason={"capacity": float(len(self.waiting)) if kv_ratio and kv_ratio > 0.9 else 0.0,
                                   "deferred": 0.0} if v >= 0.3 else {},
                prefill_seconds_total=round(self.c_pf_s, 3) if v >= 0.11 else None,
                decode_seconds_total=round(self.c_dec_s, 3) if v >= 0.11 else None)
            if self.spec_k:
                extra.update(spec_drafts_total=float(math.floor(self.c_drafts)),
                             spec_draft_tokens_total=float(math.floor(self.c_draft_tok)),
                             spec_accepted_tokens_total=float(math.floor(self.c_acc)))
            if self.mfu:
                extra.update(flops_total=float(math.floor(self.c_flops)),
                             read_bytes_total=float(math.floor(self.c_read)),
                             write_bytes_total=float(math.floor(self.c_write)))
        elif kind == "sglang":
            used = self.kv_used
            free = max(0.0, pool - used - self.evictable)
            extra = dict(
                prompt_tokens_cached_total=float(math.floor(self.c_cached)),
                requests_finished_total=float(math.floor(self.c_fin)),
                kv_usage_ratio=kv_ratio, kv_pool_tokens=pool,
                retracted_requests_total=float(self.c_retr),
                retracted_input_tokens_total=float(math.floor(self.c_retr_tok)),
                kv_used_tokens=float(math.floor(used)), kv_free_tokens=float(math.floor(free)),
                kv_evictable_tokens=float(math.floor(min(self.evictable, pool - used))),
                forward_seconds_total=round(self.c_fwd, 3),
                histograms=tuple(self.h[k].reading() for k in ("ttft", "itl", "e2e", "queue")),
                busiest_thread="%d sglang::scheduler" % (self.pids[0] if self.pids else 0))
            if self.spec_k:
                acc = getattr(self, "last_acc", self.accept)
                extra.update(spec_accept_ratio=round(acc, 3),
                             spec_accept_length=round(1 + self.spec_k * acc, 3))
        else:  # llama.cpp: no histograms, no KV gauges (removed in #13660)
            extra = dict(
                prompt_tokens_cached_total=float(math.floor(self.c_cached)),
                kv_pool_tokens=pool, cache_dtype="f16",
                prefill_seconds_total=round(self.c_pf_s, 3),
                decode_seconds_total=round(self.c_dec_s, 3),
                decode_steps_total=float(math.floor(self.c_steps)),
                busiest_thread="%d llama-server" % (self.pids[0] if self.pids else 0))
            if self.spec_k:
                extra.update(spec_drafts_total=float(math.floor(self.c_drafts)),
                             spec_draft_tokens_total=float(math.floor(self.c_draft_tok)),
                             spec_accepted_tokens_total=float(math.floor(self.c_acc)))
        return EngineSample(**common, **extra)
