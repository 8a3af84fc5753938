"""A request-level serving engine: vLLM V1 (0.3x), SGLang, llama.cpp server.

One step-time model drives everything: a step reads the weights and the batch's KV from HBM
and does 2 x params FLOPs per token scheduled; the host thread needs its own time per step
(scheduling, input preparation, launches, sampling) and the step takes the longer of the two
(partly overlapped).  Chunked prefill shares each step's token budget with the decodes.
Counters move when the engines move them (checked in their source):
  vLLM V1   generation tokens per iteration; prompt tokens when a request's prefill
            completes (IterationStats.update_from_output); request histograms at finish,
            TTFT at the first token, ITL once per request per iteration.
  SGLang    realtime_tokens_total{mode} per forward step (newer releases); the tokenizer's
            generation/prompt/cached_tokens_total only when a request finishes.
  llama.cpp tokens_predicted_total and its seconds at slot release (on_prediction);
            prompt tokens at prompt-eval completion; n_decode_total per llama_decode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import EngineHistogram, EngineSample

from .hw import GIB, Act, Spec

VLLM_B = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0,
                          5000.0, 10000.0, 20000.0, 50000.0, 100000.0),
}
VLLM_B["tpot"] = VLLM_B["itl"]
VLLM_B["queue"] = VLLM_B["e2e"]
VLLM_B["max_generation_tokens"] = VLLM_B["params_max_tokens"]
SGL_B = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
             100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
            0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
            200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
              20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
              600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
              3000.0),
}


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int = 128256
    weight_bytes_per_param: float = 2.0

    @property
    def kv_bytes(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    @property
    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.hidden // self.head_dim,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 8, 128, 4096),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8, 128, 8192),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 4, 128, 3584, 152064),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 8, 128, 5120, 152064),
    "qwen14b": Model("Qwen/Qwen2.5-14B-Instruct", 14.8, 48, 8, 128, 5120, 152064),
    "gguf8b": Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03, 32, 8, 128, 4096,
                    weight_bytes_per_param=0.61),
    "gguf14b": Model("Qwen2.5-14B-Instruct-Q5_K_M.gguf", 14.8, 48, 8, 128, 5120, 152064,
                     weight_bytes_per_param=0.71),
}


class Hist:
    __slots__ = ("bounds", "counts", "total", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * len(bounds)
        self.total = 0.0
        self.sum = 0.0

    def add(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.total += n
        self.sum += value * n
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.counts[i] += n
                return

    def spread(self, value: float, n: float, rng, width: float = 0.18) -> None:
        """n observations around value (a step time seen by many requests)."""
        if n <= 0:
            return
        for f, w in ((math.exp(-width * 1.3), 0.25), (1.0, 0.45), (math.exp(width), 0.2),
                     (math.exp(width * 2.4), 0.1)):
            self.add(value * f * (1 + rng.gauss(0, 0.02)), n * w)

    def build(self, name: str) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts:
            run += c
            cum.append(float(round(run)))
        return EngineHistogram(name, tuple(self.bounds), tuple(cum), float(round(self.total)),
                               round(self.sum, 4))


class Req:
    __slots__ = ("arrival", "prompt", "cached", "out", "gen", "pre_left", "first_t", "admit_t",
                 "n", "max_tokens", "heavy", "decode_t")

    def __init__(self, arrival, prompt, cached, out, n=1, max_tokens=None, heavy=0.0):
        self.arrival = arrival
        self.prompt = prompt
        self.cached = min(cached, prompt - 1)
        self.out = max(1, out)
        self.gen = 0
        self.pre_left = prompt - self.cached
        self.first_t = None
        self.admit_t = None
        self.n = n
        self.max_tokens = max_tokens or max(out, 256)
        self.heavy = heavy  # extra GPU seconds per step while it decodes (n x logprobs sampling)
        self.decode_t = 0.0


class Engine:
    def __init__(self, kind: str, model: Model, spec: Spec, tp: int, rng, *, gpus=(0,),
                 max_seqs: int = 256, budget: int | None = None, mem_util: float = 0.9,
                 pool_tokens: int | None = None, host_ms: float = 3.0, graphs: bool = True,
                 spec_k: int = 0, accept: float = 0.7, realtime: bool = True,
                 pids=(), start_wall: float = 0.0, port: int = 8000, mfu: bool = True,
                 itl_name: str = "itl", slots: int = 4):
        self.kind, self.model, self.spec, self.tp, self.rng = kind, model, spec, tp, rng
        self.gpus = tuple(gpus)
        self.max_seqs = max_seqs if kind != "llamacpp" else slots
        self.budget = budget or (8192 if spec.tflops >= 900 and model.params_b < 30 else 2048)
        self.host_ms = host_ms
        self.graphs = graphs
        self.spec_k = spec_k
        self.accept = accept
        self.realtime = realtime
        self.mfu = mfu
        self.itl_name = itl_name
        self.pids = tuple(pids)
        self.port = port
        self.weights = int(model.params_b * 1e9 * model.weight_bytes_per_param / tp)
        self.kvb = model.kv_bytes // tp
        if pool_tokens is None:
            free = spec.mem_total * mem_util - self.weights - 2.5 * GIB
            pool_tokens = int(free / self.kvb) // 16 * 16
        self.pool = pool_tokens
        self.mem_used = int(spec.mem_total * mem_util) if kind != "llamacpp" else \
            int(self.weights + self.pool * self.kvb + 0.9 * GIB)
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, preempt=0.0, retract=0.0,
                      retract_tok=0.0, drafts=0.0, draft_tok=0.0, accepted=0.0, pre_s=0.0,
                      dec_s=0.0, fwd_s=0.0, steps=0.0, flops=0.0, rbytes=0.0, wbytes=0.0,
                      fin_gen=0.0, fin_prompt=0.0, fin_cached=0.0, cpu=0.0, invol=0.0,
                      busiest=0.0)
        lay = VLLM_B if kind == "vllm" else SGL_B
        names = ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens",
                 "max_generation_tokens") if kind == "vllm" else ("ttft", "itl", "e2e", "queue")
        self.h = {n: Hist(lay[n]) for n in names} if kind != "llamacpp" else {}
        self.last_step = 0.02
        self.last_itl = 0.02
        self.start_wall = start_wall
        self.accept_now = accept

    # ------------------------------------------------------------------ physics
    def gpu_time(self, B: int, ctx: float, P: float, clock: float, heavy: float,
                 kdraft: int = 0) -> tuple[float, float, float]:
        """(GPU seconds of one step, FLOP seconds of it, bytes it moves) per rank."""
        s = self.spec
        bw = s.hbm_gbs * 1e9 * 0.82
        fl = s.tflops * 1e12 * 0.55 * clock
        toks = B * (1 + kdraft) + P
        t_mem = (self.weights + ctx * self.kvb) / bw / max(0.2, clock) ** 0.4
        t_cmp = toks * 2 * self.model.params_b * 1e9 / self.tp / fl
        t_cmp += P * min(8192, P) * self.model.layers * self.model.hidden * 4 / self.tp / fl * 0.5
        fixed = (0.0006 if self.graphs else 0.011) + 0.0009 * kdraft
        comm = 0.0
        if self.tp > 1:
            comm = 2 * self.model.layers * 9e-6 + toks * self.model.hidden * 2 * 2 * \
                self.model.layers / (max(s.nvlink_gbs, 25) * 1e9)
        t = max(t_mem, t_cmp) + 0.25 * min(t_mem, t_cmp) + fixed + comm + heavy
        return t, t_cmp, self.weights + ctx * self.kvb

    def kv_used(self) -> float:
        return sum(r.prompt + r.gen for r in self.running)

    # ------------------------------------------------------------------ one tick
    def advance(self, t: float, dt: float, arrivals: list[Req], host_share: float = 1.0,
                clock: float = 1.0, slow: float = 1.0, gpu_share: float = 1.0,
                host_jitter_ms: float = 0.0) -> Act:
        """Run the engine for dt seconds.  host_share: the fraction of a core the launching
        thread gets; clock: SM clock / fmax; slow: the slowest rank's factor on GPU time
        (a straggler every rank waits for); gpu_share: the GPU time slices this engine gets
        when another process shares the GPU."""
        rng = self.rng
        self.waiting.extend(arrivals)
        subs = max(1, int(round(dt)))
        sub = dt / subs
        busy = flop_t = moved = 0.0
        for j in range(subs):
            now = t + j * sub
            self._admit(now)
            dec = [r for r in self.running if r.pre_left <= 0]
            pre = [r for r in self.running if r.pre_left > 0]
            B = len(dec)
            ctx = sum(r.prompt + r.gen for r in dec)
            D = sum(r.pre_left for r in pre)
            heavy = sum(r.heavy for r in dec)
            kd = self.spec_k
            if B == 0 and D <= 0:
                continue
            C = max(256, self.budget - B * (1 + kd))
            g_dec, c_dec, m_dec = self.gpu_time(B, ctx, 0, clock, heavy, kd)
            g_mix, c_mix, m_mix = self.gpu_time(B, ctx, min(C, D), clock, heavy, kd)
            h = self.host_ms * 1e-3 * (1 + 0.004 * B + 0.001 * min(C, D) / 64) / host_share
            h += host_jitter_ms * 1e-3

            def step(g):
                g2 = g * slow / gpu_share
                return max(h, g2) + 0.12 * min(h, g2), g2
            s_dec, gd = step(g_dec)
            s_mix, gm = step(g_mix)
            if B == 0:
                s_dec = s_mix
            n_mix = min(sub / s_mix, D / C if D > 0 else 0.0)
            n_dec = max(0.0, (sub - n_mix * s_mix) / s_dec) if B else 0.0
            steps = n_mix + n_dec
            busy += n_mix * g_mix + n_dec * g_dec
            flop_t += n_mix * c_mix + n_dec * c_dec
            moved += n_mix * m_mix + n_dec * m_dec
            self.c["steps"] += steps
            self.c["fwd_s"] += n_mix * g_mix + n_dec * g_dec
            self.last_step = (n_mix * s_mix + n_dec * s_dec) / max(steps, 1e-9)
            # decodes
            acc = self.accept_now
            tps = (1 - acc ** (kd + 1)) / (1 - acc) if kd else 1.0
            gen_here = 0.0
            finished = []
            for r in dec:
                left = r.out - r.gen
                got = min(left, steps * tps)
                if got <= 0:
                    continue
                r.gen += got
                gen_here += got
                r.decode_t += got / tps * self.last_step
                if r.gen >= r.out - 1e-9:
                    finished.append(r)
            if B and steps:
                itl_hist = self.h.get("itl")
                if itl_hist is not None:
                    nm = n_mix * B
                    nd = n_dec * B
                    itl_hist.spread(s_mix, nm, rng)
                    itl_hist.spread(s_dec, nd, rng, 0.12)
                self.last_itl = (n_mix * s_mix + n_dec * s_dec) / steps / tps
            if kd:
                d = B * steps
                self.c["drafts"] += d
                self.c["draft_tok"] += d * kd
                self.c["accepted"] += d * (tps - 1)
            self.c["gen"] += gen_here
            self.c["flops"] += (gen_here + n_mix * min(C, D)) * 2 * self.model.params_b * 1e9 / self.tp
            self.c["rbytes"] += n_mix * m_mix + n_dec * m_dec
            self.c["wbytes"] += (gen_here + n_mix * min(C, D)) * self.kvb
            # prefill, first come first served
            progress = n_mix * C
            t_end = now + sub
            done_cum = 0.0
            for r in pre:
                if progress <= 0:
                    break
                take = min(r.pre_left, progress)
                r.pre_left -= take
                progress -= take
                done_cum += take
                if self.kind == "sglang":
                    self.c["prompt_rt"] = self.c.get("prompt_rt", 0.0) + take
                if r.pre_left <= 0 and r.first_t is None:
                    r.first_t = min(t_end, max(now, r.arrival) + s_mix * (1 + done_cum / max(C, 1)))
                    r.gen = 1
                    self.c["gen"] += 1
                    self.c["prompt"] += r.prompt
                    self.c["cached"] += r.cached
                    self.c["pre_s"] += r.first_t - (r.admit_t or r.arrival)
                    if "ttft" in self.h:
                        self.h["ttft"].add(max(0.002, r.first_t - r.arrival))
                    if r.gen >= r.out:
                        finished.append(r)
            for r in finished:
                self._finish(r, t_end)
            self._preempt()
        act = Act()
        act.busy = min(1.0, busy / dt)
        cshare = flop_t / max(busy, 1e-9)
        act.tensor = min(0.95, flop_t / dt * 0.9)
        act.dram = min(0.93, moved / dt / (self.spec.hbm_gbs * 1e9))
        base = 0.72 if self.graphs else 0.16
        act.sm = act.busy * min(0.98, base + 0.25 * cshare)
        act.occ = act.sm * (0.22 + 0.15 * cshare)
        if self.tp > 1:
            act.nvlink_mib = act.busy * 2200.0
        # the engine's process tree: the busy loop of the scheduler + the API server
        rate = sum(1 for _ in arrivals) / dt
        share = min(1.0, host_share)
        self.c["busiest"] += dt * (0.97 * share if (self.running or self.waiting) else 0.08)
        self.c["cpu"] += dt * (0.97 * share + 0.25 + 0.004 * rate + 0.08 * self.tp)
        self.c["invol"] += dt * (35 + 0.5 * rate + 1400 * (1 - share)) * (1 + rng.gauss(0, 0.1))
        return act

    def _admit(self, now: float) -> None:
        used = self.kv_used()
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            need = r.prompt + r.gen + 16
            if used + need > self.pool * 0.97:
                break
            self.waiting.pop(0)
            if r.admit_t is None:
                r.admit_t = now
            self.running.append(r)
            used += need

    def _preempt(self) -> None:
        used = self.kv_used()
        while used > self.pool and len(self.running) > 1:
            r = self.running.pop()  # the newest: recompute later (vLLM) / retracted (SGLang)
            used -= r.prompt + r.gen
            if self.kind == "sglang":
                self.c["retract"] += 1
                self.c["retract_tok"] += r.prompt
            else:
                self.c["preempt"] += 1
            r.pre_left = r.prompt + r.gen
            self.waiting.insert(0, r)

    def _finish(self, r: Req, t: float) -> None:
        if r not in self.running:
            return
        self.running.remove(r)
        self.c["fin"] += 1
        self.c["fin_gen"] += r.out
        self.c["fin_prompt"] += r.prompt
        self.c["fin_cached"] += r.cached
        self.c["dec_s"] += r.decode_t
        h = self.h
        if "e2e" in h:
            h["e2e"].add(max(0.01, t - r.arrival))
            h["queue"].add(max(0.0, (r.admit_t or r.arrival) - r.arrival))
        if "tpot" in h:
            h["tpot"].add(r.decode_t / max(1, r.out - 1))
            h["params_n"].add(r.n)
            h["params_max_tokens"].add(r.max_tokens)
            h["max_generation_tokens"].add(r.out)

    # ------------------------------------------------------------------ the scrape
    def sample(self, t_wall: float, mono: float) -> EngineSample:
        c = self.c
        url = f"http://127.0.0.1:{self.port}/metrics"
        used = self.kv_used()
        busiest_name = {"vllm": "VLLM::EngineCore" if self.tp == 1 else "VLLM::Worker_TP0",
                        "sglang": "sglang::schedul", "llamacpp": "llama-server"}[self.kind]
        common = dict(kind=self.kind, url=url, model=self.model.name, tensor_parallel=self.tp,
                      data_parallel=1, pids=self.pids, time_wall_s=round(t_wall, 3),
                      time_mono_s=round(mono, 3), kv_config=self.model.kv_config,
                      weights_bytes=self.weights, weights_source="size of 4 .safetensors file(s)"
                      if self.kind != "llamacpp" else "size of the .gguf file",
                      cpu_s=round(c["cpu"], 2), ctx_involuntary=int(c["invol"]),
                      busiest_thread_cpu_s=round(c["busiest"], 2),
                      busiest_thread=f"{self.pids[-1] if self.pids else 1} {busiest_name}",
                      requests_running=float(len(self.running)),
                      requests_waiting=float(len(self.waiting)))
        if self.kind == "vllm":
            blocks = self.pool // 16
            hist = [self.h[n].build(n) for n in self.h]
            if self.itl_name != "itl":
                hist = [h for h in hist if h.name != "itl"]
            extra = {}
            if self.spec_k:
                extra = dict(spec_drafts_total=float(round(c["drafts"])),
                             spec_draft_tokens_total=float(round(c["draft_tok"])),
                             spec_accepted_tokens_total=float(round(c["accepted"])))
            if self.mfu:
                extra.update(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                             write_bytes_total=c["wbytes"])
            blocked = len(self.waiting) if len(self.running) < self.max_seqs else 0
            return EngineSample(
                **common, generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                requests_finished_total=float(c["fin"]),
                kv_usage_ratio=round(min(1.0, used / self.pool), 5), num_gpu_blocks=blocks,
                block_size=16, kv_pool_tokens=blocks * 16, cache_dtype="auto",
                histograms=tuple(hist), preemptions_total=float(c["preempt"]),
                waiting_by_reason={"capacity": float(blocked),
                                   "deferred": float(len(self.waiting) - blocked)},
                prefill_seconds_total=round(c["pre_s"], 3),
                decode_seconds_total=round(c["dec_s"], 3), **extra)
        if self.kind == "sglang":
            gen = c["gen"] if self.realtime else c["fin_gen"]
            prompt = c.get("prompt_rt", 0.0) + c["cached"] if self.realtime else c["fin_prompt"]
            extra = {}
            if self.spec_k:
                acc = self.accept_now
                extra = dict(spec_accept_ratio=round(acc, 3),
                             spec_accept_length=round((1 - acc ** (self.spec_k + 1)) / (1 - acc), 3))
            evict = min(self.pool - used, 0.25 * self.pool) * 0.6
            return EngineSample(
                **common, generation_tokens_total=float(round(gen)),
                prompt_tokens_total=float(round(prompt)),
                prompt_tokens_cached_total=float(round(c["fin_cached"])),
                requests_finished_total=float(c["fin"]),
                kv_usage_ratio=round(min(1.0, used / self.pool), 4), kv_pool_tokens=self.pool,
                kv_used_tokens=float(round(used)), kv_free_tokens=float(round(max(0, self.pool - used - evict))),
                kv_evictable_tokens=float(round(max(0.0, evict))),
                retracted_requests_total=float(c["retract"]),
                retracted_input_tokens_total=float(c["retract_tok"]),
                forward_seconds_total=round(c["fwd_s"], 3),
                histograms=tuple(self.h[n].build(n) for n in self.h), **extra)
        extra = {}
        if self.spec_k:
            extra = dict(spec_drafts_total=float(round(c["drafts"])),
                         spec_draft_tokens_total=float(round(c["draft_tok"])),
                         spec_accepted_tokens_total=float(round(c["accepted"])))
        return EngineSample(
            **common, generation_tokens_total=float(round(c["fin_gen"])),
            prompt_tokens_total=float(round(c["prompt"])),
            prompt_tokens_cached_total=float(round(c["cached"])),
            kv_pool_tokens=self.pool, cache_dtype="f16",
            prefill_seconds_total=round(c["pre_s"], 3), decode_seconds_total=round(c["dec_s"], 3),
            decode_steps_total=float(round(c["steps"])), **extra)


def arrivals(rng, t: float, dt: float, rate: float, prompt, out, cached=0.0, **kw) -> list[Req]:
    """Poisson arrivals over [t, t+dt): prompt/out are (median, sigma) of lognormals or
    callables; cached is the fraction of each prompt in the prefix cache."""
    lam = max(0.0, rate * dt)
    n = _poisson(rng, lam)
    out_list = []
    for _ in range(n):
        p = prompt(rng) if callable(prompt) else int(prompt[0] * math.exp(rng.gauss(0, prompt[1])))
        o = out(rng) if callable(out) else int(out[0] * math.exp(rng.gauss(0, out[1])))
        p = max(8, min(p, 120000))
        o = max(2, min(o, 16000))
        cf = cached(rng) if callable(cached) else cached
        out_list.append(Req(t + rng.random() * dt, p, int(p * cf), o, **kw))
    return out_list


def _poisson(rng, lam: float) -> int:
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    k, p, L = 0, 1.0, math.exp(-lam)
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1
