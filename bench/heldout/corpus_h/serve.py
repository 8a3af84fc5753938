"""Continuous-batching serving engines (vLLM V1, SGLang, llama.cpp server) as a fluid step
model over real requests.  One step = one forward pass over the running batch plus a chunk
of prompt: its time is the larger of weights + KV bytes over HBM bandwidth and FLOPs over
tensor throughput, plus fixed kernel overhead, host time not hidden, and whatever the cause
adds.  Counters move when the engine moves them (checked in the engines' sources):
vLLM V1 counts generation tokens every step and a request's prompt tokens when its prefill
completes (IterationStats.update_from_output), TPOT / e2e / queue / params at finish;
SGLang's tokenizer counters move at finish, its realtime_tokens_total{mode} every step;
llama.cpp's tokens_predicted_total moves only when a slot finishes (metrics.on_prediction
before slot.release), prompt_tokens_total when the prompt is evaluated, n_decode_total on
every llama_decode."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import EngineSample

from . import hist as H


@dataclass(frozen=True)
class Model:
    name: str
    params: float  # active parameters per token
    weights: float  # bytes of weights, all ranks
    kvb: int  # KV bytes per token, all ranks
    vocab: int
    layers: int
    cfg: dict


def _cfg(layers, heads, kv_heads, hidden, dtype="bfloat16"):
    return {"num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": kv_heads, "hidden_size": hidden,
            "head_dim": hidden // heads, "dtype": dtype}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 16.06e9, 131072, 128256, 32,
                     _cfg(32, 32, 8, 4096)),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 15.2e9, 57344, 152064, 28,
                    _cfg(28, 28, 4, 3584)),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 65.5e9, 262144, 152064, 64,
                     _cfg(64, 40, 8, 5120)),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 141e9, 327680, 128256, 80,
                      _cfg(80, 64, 8, 8192)),
    "llama70b_fp8": Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 72e9, 327680,
                          128256, 80, _cfg(80, 64, 8, 8192)),
    "mixtral": Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 12.9e9, 93.4e9, 131072, 32000, 32,
                     _cfg(32, 32, 8, 4096)),
    "gguf8b": Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 4.92e9, 131072, 128256,
                    32, {}),
    "gguf27b": Model("gemma-2-27b-it-Q5_K_M.gguf", 27.2e9, 19.4e9, 376832, 256000, 46, {}),
}


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "gen", "left", "t_sched", "t_first", "n",
                 "max_tokens", "t_prefill", "preempted")

    def __init__(self, arr, prompt, cached, out, n=1, max_tokens=None):
        self.arr, self.prompt, self.cached, self.out, self.n = arr, prompt, cached, out, n
        self.gen = 0
        self.left = prompt - cached  # prompt tokens still to compute
        self.t_sched = self.t_first = None
        self.max_tokens = max_tokens or max(out, 256)
        self.t_prefill = 0.0
        self.preempted = 0


@dataclass
class Load:
    """What clients send and what the GPUs and host do this tick (the catalogue's knobs)."""

    rate: float = 5.0  # requests/s
    prompt: float = 800  # median prompt tokens
    prompt_sigma: float = 0.7
    out: float = 250
    out_sigma: float = 0.6
    hit: float = 0.3  # prefix-cache hit fraction of a prompt
    extra_step_s: float = 0.0  # an oversized request's per-step work (sampling over vocab)
    oversized_n: int = 0  # its n (observed when it finishes)
    clock_f: float = 1.0  # compute throughput factor (clocks)
    share: float = 0.0  # GPU time another process takes
    gap_s: float = 0.0  # host time per step not hidden behind the GPU
    accept: float = 0.7  # spec decode per-draft-token acceptance
    rank_f: tuple = ()  # per-rank compute factors (expert imbalance)
    rank_share: tuple = ()  # per-rank GPU time another process takes (time-slicing)
    long_rate: float = 0.0  # a second stream: long prompts (RAG, documents), requests/s
    long_prompt: float = 12000
    long_out: float = 200
    long_hit: float = 0.0
    eager: bool = False


class Engine:
    def __init__(self, kind, model, spec, tp, rng, *, max_seqs=256, budget=8192, pool=None,
                 mem_util=0.9, graphs=True, spec_k=0, slots=4, ctx=32768,
                 sgl_realtime=True, mfu_metrics=False, url=None, pids=()):
        self.kind, self.m, self.spec, self.tp, self.rng = kind, model, spec, tp, rng
        self.max_seqs, self.budget, self.graphs, self.spec_k = max_seqs, budget, graphs, spec_k
        self.slots, self.sgl_realtime, self.mfu = slots, sgl_realtime, mfu_metrics
        per_rank_w = model.weights / tp
        if kind == "llamacpp":
            self.max_seqs, self.budget = slots, 2048
            pool = ctx
        if pool is None:
            free = spec.mem * mem_util - per_rank_w - 2.5e9
            pool = int(free / (model.kvb / tp))
        self.pool = int(pool)  # tokens per rank (= per engine)
        self.block = 16 if kind == "vllm" else 1
        self.mem_used = int(per_rank_w + 1.2e9 + (self.pool * model.kvb / tp if kind != "llamacpp"
                                                  else self.pool * model.kvb / tp) + 0.6e9)
        self.url = url or {"vllm": "http://127.0.0.1:8000/metrics",
                           "sglang": "http://127.0.0.1:30000/metrics",
                           "llamacpp": "http://127.0.0.1:8080/metrics"}[kind]
        self.pids = pids
        self.wait: list[Req] = []
        self.run: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rd=0.0, wr=0.0)
        sgl = kind == "sglang"
        self.h = {
            "ttft": H.Hist("ttft", H.SGL_TTFT if sgl else H.VLLM_TTFT),
            "itl": H.Hist("itl", H.SGL_ITL if sgl else H.VLLM_ITL),
            "e2e": H.Hist("e2e", H.SGL_E2E if sgl else H.VLLM_REQ),
            "queue": H.Hist("queue", H.SGL_QUEUE if sgl else H.VLLM_REQ),
        }
        if kind == "vllm":
            self.h.update(tpot=H.Hist("tpot", H.VLLM_ITL), params_n=H.Hist("params_n", H.VLLM_N),
                          params_max_tokens=H.Hist("params_max_tokens", H.VLLM_TOKENS),
                          max_generation_tokens=H.Hist("max_generation_tokens", H.VLLM_TOKENS))
        self.last = None  # the last step's shape, for the GPUs

    # ------------------------------------------------------------ one tick
    def tick(self, t: float, dt: float, ld: Load) -> dict:
        rng, m = self.rng, self.m
        self._accept = ld.accept
        for _ in range(H.poisson(rng, ld.rate * dt)):
            p = max(16, int(ld.prompt * math.exp(rng.gauss(0, ld.prompt_sigma))))
            o = max(2, int(ld.out * math.exp(rng.gauss(0, ld.out_sigma))))
            hit = int(p * min(0.98, max(0.0, ld.hit + rng.gauss(0, 0.1)))) if ld.hit else 0
            hit -= hit % 16
            self.wait.append(Req(t + rng.uniform(0, dt), p, hit, o))
        for _ in range(H.poisson(rng, ld.long_rate * dt)):
            p = max(64, int(ld.long_prompt * math.exp(rng.gauss(0, 0.3))))
            o = max(2, int(ld.long_out * math.exp(rng.gauss(0, 0.5))))
            hit = int(p * ld.long_hit * rng.uniform(0.8, 1.0)) // 16 * 16
            self.wait.append(Req(t + rng.uniform(0, dt), p, hit, o))
        if ld.oversized_n > 1 and not any(r.n > 1 for r in self.run + self.wait):
            self.wait.append(Req(t, 900, 0, 10**6, n=ld.oversized_n, max_tokens=2048))
        if not ld.oversized_n:
            self.run = [r for r in self.run if r.n == 1]  # it finished
            if any(r.n > 1 for r in self.wait):
                self.wait = [r for r in self.wait if r.n == 1]
        if not ld.oversized_n and self._big is not None:
            self._finish_big(t)
        self._admit(t)
        dec = [r for r in self.run if r.left <= 0]
        pre = [r for r in self.run if r.left > 0]
        B = len(dec)
        pend = sum(r.left for r in pre)
        P_max = min(max(0, self.budget - B), pend)
        ctx = sum(r.prompt + r.gen for r in dec)
        k = self.spec_k
        verify = B * (1 + k)
        tp = self.tp
        bw = self.spec.hbm_gbs * 1e9 * 0.82
        peak = self.spec.tflops * 1e12 * 0.55 * ld.clock_f
        w_rank = m.weights / tp
        t_mem = (w_rank + ctx * m.kvb / tp) / bw

        def shape(P):
            flops = 2 * m.params * (verify + P) / tp
            t_cmp = flops / peak
            ovh = (0.0009 if self.graphs and not P and not ld.eager else 0.0001 * m.layers) \
                + (0.00002 * m.layers * 2 if tp > 1 else 0.0)
            if self.kind == "llamacpp":
                ovh += 0.0015
            return flops, t_cmp, max(t_mem, t_cmp) + 0.25 * min(t_mem, t_cmp) + ovh \
                + ld.extra_step_s
        P = P_max
        if B and P_max:  # the prompt work spread over the tick's steps (fluid)
            for _ in range(3):
                n_est = dt / (shape(P)[2] / max(0.05, 1 - ld.share) + ld.gap_s + 0.0003)
                P = min(P_max, pend / max(1.0, n_est))
        flops, t_cmp, t_gpu = shape(P)
        rank_f = ld.rank_f or (1.0,) * tp
        shares = ld.rank_share or (0.0,) * tp
        t_rank = [t_gpu * f for f in rank_f]  # a hot expert: more weights read, more FLOPs
        t_wall = [tr / max(0.05, 1 - sh) for tr, sh in zip(t_rank, shares)]
        t_gpu_max = max(t_wall)
        t_gpu_eff = t_gpu_max / max(0.05, 1 - ld.share)
        t_step = t_gpu_eff + ld.gap_s + 0.0003
        idle = not self.run
        if idle:
            steps = 0.0
        else:
            steps = dt / t_step
            if B == 0:  # only prefill: it runs until the prompts are done
                steps = min(steps, math.ceil(pend / max(P, 1)) + 0.0)
        busy_t = steps * t_gpu_max
        # ---- advance requests
        toks_per_step = 1 + (k * ld.accept * (1 - ld.accept ** k) / max(1e-9, 1 - ld.accept)
                             / k if k else 0.0)
        self._tps = toks_per_step
        gen_tok = 0.0
        done_pf = self._prefill(t, dt, steps * P, pre)
        now = t + dt
        finished = []
        if B:
            each = steps * toks_per_step
            for r in dec:
                g = min(each, r.out - r.gen)
                r.gen += g
                gen_tok += g * r.n
                if r.gen >= r.out:
                    finished.append(r)
            self.h["itl"].observe(steps * B, t_step, 0.1 + 0.5 * (P * 2 * m.params / tp / peak)
                                  / max(t_step, 1e-9))
        for r in done_pf:  # the first token comes with the prefill's last step
            gen_tok += r.n
            r.gen += 1
        self.c["gen"] += gen_tok if self.kind == "vllm" else 0.0
        self._rt_gen = gen_tok
        if k and B:
            self.c["drafts"] += steps * B
            self.c["dtok"] += steps * B * k
            self.c["acc"] += steps * B * (toks_per_step - 1)
        for r in finished:
            self.run.remove(r)
            self._finish(r, now)
        self._kv_check(now)
        self.c["steps"] += steps
        self.c["fwd_s"] += busy_t
        self.c["flops"] += steps * flops
        self.c["rd"] += steps * (w_rank + ctx * m.kvb / tp)
        self.c["wr"] += steps * (B + P) * m.kvb / tp
        # ---- what each GPU did
        acts = []
        for tr, tw in zip(t_rank, t_wall):
            own = min(1.0, steps * tr / dt)
            wait = min(1.0 - own, steps * (t_gpu_max - tw) / dt)  # NCCL spin, waiting for the slowest
            frac_c = min(1.0, t_cmp / max(t_gpu, 1e-9))
            frac_m = min(1.0, t_mem / max(t_gpu, 1e-9))
            tensor = own * frac_c * 0.75
            dram = own * frac_m * 0.85 + wait * 0.03
            sm = own * min(0.95, 0.5 + 0.45 * max(frac_c, frac_m)) + wait * 0.12
            if ld.eager and not P:
                sm *= 0.7
            acts.append(dict(busy=own + wait, sm=sm, tensor=tensor, dram=dram,
                             occ=own * (0.18 if frac_c > frac_m else 0.35) + wait * 0.02))
        self.last = dict(steps=steps, t_step=t_step, B=B, P=P, busy=busy_t / dt, idle=idle,
                         launches=steps * (1 if self.graphs and not ld.eager else m.layers * 9))
        return {"acts": acts, "steps": steps}

    def _prefill(self, t, dt, tokens, pre):
        done = []
        for r in pre:
            if tokens <= 0:
                break
            use = min(tokens, r.left)
            r.left -= use
            tokens -= use
            if r.left <= 0:
                done.append(r)
                now = t + dt * self.rng.uniform(0.3, 1.0)
                if r.t_first is None:
                    r.t_first = now
                    r.t_prefill = now - r.t_sched
                    self.h["ttft"].observe(1, max(0.005, now - r.arr), 0.05)
                    if self.kind == "vllm":
                        self.c["prompt"] += r.prompt
                        self.c["cached"] += r.cached
                    if self.kind == "llamacpp":  # on_prompt_eval
                        self.c["prompt"] += r.prompt - r.cached
                        self.c["cached"] += r.cached
                        self.c["pf_s"] += r.t_prefill
                    self._rt_prompt = getattr(self, "_rt_prompt", 0.0) + r.prompt
        return done

    _big = None

    def _admit(self, t):
        used = self._kv_used()
        while self.wait and len(self.run) < self.max_seqs:
            r = self.wait[0]
            need = r.prompt + r.gen + (r.out // 3 if self.kind == "sglang" else 0)
            if used + need > self.pool * (0.99 if self.kind != "llamacpp" else 1.0):
                break
            self.wait.pop(0)
            if r.t_sched is None:
                r.t_sched = max(r.arr, t)
                self.h["queue"].observe(1, max(1e-4, r.t_sched - r.arr + 1e-3), 0.05)
            if r.n > 1:
                self._big = r
            self.run.append(r)
            used += r.prompt + r.gen

    def _kv_used(self):
        return sum((r.prompt + r.gen) * (r.n if r.n > 1 else 1) - max(0, r.left)
                   for r in self.run if r.t_sched is not None)

    def _kv_check(self, now):
        """vLLM preempts (recompute) and SGLang retracts the newest requests when the pool
        cannot hold the next tokens of the running batch."""
        while self.run and self._kv_used() > self.pool:
            r = self.run.pop()
            if self.kind == "vllm":
                self.c["pre"] += 1
            elif self.kind == "sglang":
                self.c["retr"] += 1
                self.c["retr_tok"] += r.prompt
            r.left = r.prompt + r.gen
            r.preempted += 1
            self.wait.insert(0, r)

    def _finish_big(self, t):
        r = self._big
        self._big = None
        if self.kind == "vllm":
            self.h["params_n"]._one(r.n)
            self.h["params_max_tokens"]._one(r.max_tokens)
            self.h["max_generation_tokens"]._one(max(1, r.gen))
        self.c["fin"] += 1
        self.h["e2e"].observe(1, max(0.1, t - r.arr), 0.02)

    def _finish(self, r, now):
        e2e = max(0.01, now - r.arr)
        self.c["fin"] += 1
        self.h["e2e"].observe(1, e2e, 0.05)
        dec = max(0.0, now - (r.t_first or now))
        if self.kind == "vllm":
            self.h["tpot"].observe(1, max(1e-4, dec / max(1, r.gen - 1)), 0.05)
            self.h["params_n"]._one(1)
            self.h["params_max_tokens"]._one(r.max_tokens)
            self.h["max_generation_tokens"]._one(r.gen)
            self.c["pf_s"] += r.t_prefill
            self.c["dec_s"] += dec
        elif self.kind == "sglang" and not self.sgl_realtime:
            self.c["gen"] += r.gen
            self.c["prompt"] += r.prompt
            self.c["cached"] += r.cached
        elif self.kind == "sglang":
            self.c["cached"] += r.cached
        elif self.kind == "llamacpp":  # on_prediction: at release
            self.c["gen"] += r.gen
            self.c["dec_s"] += dec
            if self.spec_k:
                steps = r.gen / self._tps
                self.c["drafts_f"] = self.c.get("drafts_f", 0.0) + steps
                self.c["acc_f"] = self.c.get("acc_f", 0.0) + steps * (self._tps - 1)

    # ------------------------------------------------------------ the scrape
    def sample(self, now_mono, now_wall, gpu_indices, cpu) -> EngineSample:
        c = self.c
        running = float(len([r for r in self.run]))
        waiting = float(len(self.wait))
        used = self._kv_used()
        usage = min(1.0, used / self.pool) if self.pool else None
        hists = tuple(h.snapshot() for h in self.h.values()) if self.kind != "llamacpp" else ()
        kw = dict(kind=self.kind, url=self.url, model=self.m.name, requests_running=running,
                  requests_waiting=waiting, histograms=hists, time_mono_s=now_mono,
                  time_wall_s=now_wall, gpu_indices=tuple(gpu_indices), pids=tuple(self.pids),
                  tensor_parallel=self.tp, data_parallel=1, kv_config=dict(self.m.cfg),
                  cpu_s=cpu.get("cpu_s"), ctx_involuntary=cpu.get("invol"),
                  busiest_thread_cpu_s=cpu.get("busy_s"), busiest_thread=cpu.get("busy_name", ""),
                  weights_bytes=int(self.m.weights / self.tp) if self.m.cfg else None,
                  weights_source="size of 4 .safetensors file(s)" if self.m.cfg else "")
        if self.kind == "vllm":
            kw.update(generation_tokens_total=float(int(c["gen"])), prompt_tokens_total=c["prompt"],
                      prompt_tokens_cached_total=c["cached"], requests_finished_total=c["fin"],
                      kv_usage_ratio=usage, num_gpu_blocks=self.pool // 16, block_size=16,
                      kv_pool_bytes=int(self.pool * self.m.kvb / self.tp),
                      kv_pool_tokens=self.pool, cache_dtype="auto",
                      preemptions_total=c["pre"], prefill_seconds_total=c["pf_s"],
                      decode_seconds_total=c["dec_s"], corrupted_requests_total=0.0,
                      waiting_by_reason={"capacity": waiting, "deferred": 0.0})
            if self.spec_k:
                kw.update(spec_drafts_total=c["drafts"], spec_draft_tokens_total=c["dtok"],
                          spec_accepted_tokens_total=c["acc"])
            if self.mfu:
                kw.update(flops_total=c["flops"], read_bytes_total=c["rd"],
                          write_bytes_total=c["wr"])
        elif self.kind == "sglang":
            evict = max(0.0, min(self.pool - used, c["cached"] * 0.05 + 0.1 * self.pool))
            kw.update(generation_tokens_total=c["gen"] if not self.sgl_realtime else
                      getattr(self, "_rt_gen_total", 0.0),
                      prompt_tokens_total=c["prompt"] if not self.sgl_realtime else
                      getattr(self, "_rt_prompt_total", 0.0),
                      prompt_tokens_cached_total=c["cached"], requests_finished_total=c["fin"],
                      kv_usage_ratio=usage, kv_pool_tokens=self.pool,
                      retracted_requests_total=c["retr"], retracted_input_tokens_total=c["retr_tok"],
                      kv_used_tokens=float(used), kv_free_tokens=float(self.pool - used - evict),
                      kv_evictable_tokens=float(evict), forward_seconds_total=c["fwd_s"],
                      cache_dtype="auto")
            if self.spec_k:
                kw.update(spec_accept_ratio=self._accept, spec_accept_length=1 + self.spec_k
                          * self._accept)
        else:
            kw.update(generation_tokens_total=c["gen"],
                      prompt_tokens_total=c["prompt"] + c["cached"],
                      prompt_tokens_cached_total=c["cached"], kv_pool_tokens=self.pool,
                      cache_dtype="f16", prefill_seconds_total=c["pf_s"] / 1.0,
                      decode_seconds_total=c["dec_s"], decode_steps_total=math.floor(c["steps"]),
                      tensor_parallel=None, data_parallel=None)
            if self.spec_k:
                kw.update(spec_drafts_total=c.get("drafts_f", 0.0),
                          spec_draft_tokens_total=c.get("drafts_f", 0.0) * self.spec_k,
                          spec_accepted_tokens_total=c.get("acc_f", 0.0))
        return EngineSample(**kw)

    def account_realtime(self):
        """SGLang's realtime_tokens_total{mode} (per step) and llama.cpp's finish-time
        spec counters, folded in after each tick."""
        self._rt_gen_total = getattr(self, "_rt_gen_total", 0.0) + getattr(self, "_rt_gen", 0.0)
        self._rt_prompt_total = getattr(self, "_rt_prompt_total", 0.0) + getattr(
            self, "_rt_prompt", 0.0)
        self._rt_prompt = 0.0
