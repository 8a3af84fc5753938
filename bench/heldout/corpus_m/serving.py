"""A request-level continuous-batching server: vLLM V1 (mixed chunked prefill, block KV pool,
preemption by recompute) or SGLang (separate prefill batches, token KV pool, retraction).
Step times come from bytes moved and FLOPs on the board (its clock follows the power cap and
temperature), the host gap between steps from the engine's CPU; every counter, gauge and
histogram is kept as the engine keeps it (cumulative, reset on restart)."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from gputop.schema import EngineSample

from .phys import SGLANG_BOUNDS, SGLANG_HISTS, VLLM_BOUNDS, VLLM_HISTS, Hist, Spec, Work


@dataclass(frozen=True)
class Model:
    name: str
    params: float
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int

    @property
    def weights_bytes(self) -> int:
        return int(self.params * 2)

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 32, 8, 128, 4096, 128256),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 64, 8, 128, 8192, 128256),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 28, 4, 128, 3584, 152064),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 40, 8, 128, 5120, 152064),
}


class Req:
    __slots__ = ("arrival", "prompt", "out", "cached", "n", "left", "gen", "admitted",
                 "first", "done_prompt", "client", "extra_gpu", "extra_host", "max_tokens",
                 "order", "prefill_started", "shared")

    def __init__(self, arrival, prompt, out, cached=0, n=1, client=None, extra_gpu=0.0,
                 extra_host=0.0, max_tokens=None):
        self.arrival, self.prompt, self.out, self.cached, self.n = arrival, prompt, out, cached, n
        self.left = prompt - cached  # prompt tokens still to compute
        self.gen = 0.0
        self.admitted = None
        self.first = None
        self.done_prompt = cached
        self.client = client
        self.extra_gpu, self.extra_host = extra_gpu, extra_host
        self.max_tokens = max_tokens or out
        self.order = 0
        self.prefill_started = None
        self.shared = 0  # prompt tokens in blocks shared with other requests (prefix cache)


class Server:
    """One engine (one data-parallel replica) on ``tp`` boards."""

    def __init__(self, kind: str, model: Model, spec: Spec, tp: int, rng, port: int,
                 pid0: int, gpu_mem_util: float = 0.9, max_seqs: int = 256,
                 budget: int = 8192, spec_k: int = 0, spec_accept: float = 0.0,
                 spec_kind: str = "eagle", mfu_metrics: bool = False, host_gap_ms: float = 1.2,
                 block: int = 16):
        self.kind, self.model, self.spec, self.tp, self.rng = kind, model, spec, tp, rng
        self.port, self.pid0 = port, pid0
        self.max_seqs, self.budget, self.block = max_seqs, budget, block
        self.spec_k, self.spec_accept, self.spec_kind = spec_k, spec_accept, spec_kind
        self.mfu = mfu_metrics
        self.host_gap = host_gap_ms / 1000.0
        self.kvb = 2 * model.layers * max(1, model.kv_heads // tp) * model.head_dim * 2
        self.weights = model.weights_bytes // tp
        activ = 4.5e9 if spec.mem_total > 60e9 else 2.0e9
        pool_bytes = spec.mem_total * gpu_mem_util - self.weights - activ - 1.2e9
        self.pool_tokens = max(4096, int(pool_bytes // self.kvb) // block * block)
        self.pool_bytes = self.pool_tokens * self.kvb
        self.mem_used = int(self.weights + self.pool_bytes + activ * 0.55 + 0.9e9)
        self.bw = spec.hbm_gbs * 1e9 * 0.87
        self.gpu_share = 1.0  # share of GPU time this engine gets (another process time-slices)
        self.cpu_served = 1.0  # share of the CPU it asks for that it gets
        self.extra_gap_s = 0.0  # extra host delay per step (CPU contention)
        self.up = True
        self.shared_tokens = 0
        self.jitter_gap_s = 0.0  # launch thread preempted: extra idle per step
        self.reset_counters()
        self.order = 0
        # per-tick outputs
        self.work = Work()
        self.tick_gen = 0.0

    def reset_counters(self) -> None:
        self.running: list[Req] = []
        self.waiting: deque[Req] = deque()
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, finished=0.0, preempt=0.0, retract=0.0,
                      retract_tokens=0.0, drafts=0.0, draft_tokens=0.0, accepted=0.0,
                      prefill_s=0.0, decode_s=0.0, forward_s=0.0, flops=0.0, rbytes=0.0,
                      wbytes=0.0, cpu_s=self.rng.uniform(30, 90), ctx_inv=0.0,
                      busy_thread_s=self.rng.uniform(20, 60))
        if self.kind == "vllm":
            self.hists = {n: Hist(n, VLLM_BOUNDS[n]) for n in VLLM_HISTS}
        else:
            self.hists = {n: Hist(n, SGLANG_BOUNDS[n]) for n in SGLANG_HISTS}
        self.accept_gauge = None
        self.finished_reqs: list[Req] = []

    def warm_start(self, rng) -> None:
        """The engine has served for hours before the recording starts: counters and
        histograms carry that history (a recording never starts from zero)."""
        n = rng.uniform(2e4, 4e5)
        out = rng.uniform(150, 400)
        c = self.c
        c["finished"] = float(int(n))
        c["gen"] = n * out
        c["prompt"] = n * rng.uniform(600, 2500)
        c["cached"] = c["prompt"] * rng.uniform(0.1, 0.4)
        c["prefill_s"] = n * rng.uniform(0.05, 0.2)
        c["decode_s"] = n * out * rng.uniform(0.01, 0.02)
        c["forward_s"] = n * out * 0.012
        c["cpu_s"] += n * 0.05
        c["busy_thread_s"] += n * 0.03
        c["ctx_inv"] = n * 2.0
        c["preempt"] = float(int(n * rng.choice((0.0, 0.0, 0.001, 0.004))))
        c["retract"] = float(int(n * rng.choice((0.0, 0.0, 0.002))))
        if self.spec_k:
            steps = c["gen"] / 2.2
            c["drafts"] = steps
            c["draft_tokens"] = steps * self.spec_k
            c["accepted"] = c["gen"] - steps
        if self.mfu:
            c["flops"] = n * out * 2 * self.model.params / self.tp * 8
            c["rbytes"] = n * out * self.weights / 20
            c["wbytes"] = c["rbytes"] * 0.05
        h = self.hists
        h["itl"].spread(0.012 * rng.uniform(0.6, 1.6), n * out, 0.5)
        h["ttft"].spread(0.09 * rng.uniform(0.6, 2.0), n, 0.8)
        h["e2e"].spread(out * 0.014, n, 0.8)
        h["queue"].spread(0.004, n, 0.5)
        if "tpot" in h:
            h["tpot"].spread(0.013, n, 0.4)
            h["params_n"].add(1.0, n * 0.995)
            h["params_n"].add(4.0, n * 0.005)
            h["params_max_tokens"].spread(out * 2.0, n, 0.6)
            h["max_generation_tokens"].spread(out, n, 0.6)

    # ---------------------------------------------------------------- step costs

    def _fl(self, clock: float) -> float:
        return self.spec.tflops * 1e12 * 0.70 * clock

    def step_cost(self, n_dec: int, ctx_sum: float, chunk: int, chunk_pos: float, clock: float,
                  verify: int = 1):
        """(gpu seconds, flops, bytes) of one forward step."""
        m, tp = self.model, self.tp
        tokens = n_dec * verify + chunk
        flops = 2 * m.params / tp * tokens
        flops += 4 * m.layers * (m.hidden / tp) * (ctx_sum * verify + chunk * (chunk_pos + chunk / 2))
        byts = self.weights + ctx_sum * self.kvb + chunk * (chunk_pos * 0.3 + chunk) * self.kvb / 64
        byts += tokens * m.hidden * 2 * m.layers * 6 / tp
        bw = self.bw * min(1.0, 0.35 + 0.65 * clock)
        t = max(byts / bw, flops / self._fl(clock)) * 1.03 + 0.0003
        if tp > 1:
            t += 2 * m.layers * (6e-6 + tokens * m.hidden * 2 * 2 * (tp - 1) / tp
                                 / (self.spec.nvlink_gbs * 1e9 * 0.7 or 25e9))
        return t, flops, byts

    # ---------------------------------------------------------------- one slice

    def admit(self, now: float) -> None:
        used = self.kv_used()
        limit = self.pool_tokens
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            need = r.prompt - r.shared + int(r.gen) + (self.block if self.kind == "vllm" else
                                            int(0.25 * max(0, r.out - r.gen)))
            if used + need > limit * (0.99 if self.kind == "vllm" else 0.97):
                break
            self.waiting.popleft()
            if r.admitted is None:
                r.admitted = now
                if self.kind == "sglang":
                    self.hists["queue"].add(now - r.arrival)
            self.order += 1
            r.order = self.order
            self.running.append(r)
            used += r.prompt - r.shared + int(r.gen)

    def kv_used(self) -> float:
        b = self.block
        return self.shared_tokens + sum(
            math.ceil((max(0, r.done_prompt - r.shared) + r.gen * r.n) / b) * b
            for r in self.running)

    def advance(self, now: float, dt: float, clock: float) -> list[Req]:
        """Run the engine for dt seconds from ``now``; returns requests that finished."""
        self.admit(now)
        done: list[Req] = []
        dec = [r for r in self.running if r.left <= 0]
        pre = [r for r in self.running if r.left > 0]
        n_dec = sum(r.n for r in dec)
        ctx_sum = sum((r.prompt + r.gen) * r.n for r in dec)
        share = self.gpu_share
        k = self.spec_k
        verify = 1 + k if k else 1
        extra_gpu = sum(r.extra_gpu for r in self.running if r.left <= 0)
        extra_host = sum(r.extra_host for r in self.running if r.left <= 0)
        gap = (self.host_gap * (1 + 0.004 * n_dec) + extra_host) / max(0.05, self.cpu_served) \
            + self.extra_gap_s + self.jitter_gap_s
        work_t = flops_t = bytes_t = 0.0  # GPU seconds, FLOPs, bytes over the slice
        low_sm_t = 0.0  # GPU time in low-SM kernels (sampler over the vocabulary, drafts)
        itl = self.hists["itl"]
        p_left = sum(r.left for r in pre)
        tokens_per_step = 1.0
        if k:
            a = self.spec_accept
            tokens_per_step = 1 + sum(a ** i for i in range(1, k + 1))
        draft_t = (k * (0.0007 if self.spec_kind == "eagle" else 0.00015)) if k else 0.0
        t_d = 0.0
        if n_dec:
            t_d, f_d, b_d = self.step_cost(n_dec, ctx_sum, 0, 0, clock, verify)
            t_d += draft_t + extra_gpu
        n_pf_steps = 0.0
        time_pf = 0.0
        chunk = 0
        if p_left > 0:
            pos = sum(r.done_prompt for r in pre) / len(pre)
            if self.kind == "vllm":  # mixed: decodes ride in each prefill step
                chunk = max(1.0, min(max(256, self.budget - n_dec), p_left))
                t_c, f_c, b_c = self.step_cost(n_dec, ctx_sum, chunk, pos, clock, verify)
                t_c += draft_t + extra_gpu
                step_c = t_c / share + gap
                n_pf_steps = min(p_left / chunk, dt / step_c)
                time_pf = n_pf_steps * step_c
                work_t += n_pf_steps * t_c
                flops_t += n_pf_steps * f_c
                bytes_t += n_pf_steps * b_c
                if n_dec:
                    itl.spread(step_c, n_dec * n_pf_steps)
            else:  # SGLang: a prefill batch stops decoding while it runs
                chunk = max(1.0, min(self.budget, p_left))
                t_c, f_c, b_c = self.step_cost(0, 0, chunk, pos, clock)
                step_c = t_c / share + gap * 0.5
                n_pf_steps = min(p_left / chunk, dt / step_c)
                time_pf = n_pf_steps * step_c
                work_t += n_pf_steps * t_c
                flops_t += n_pf_steps * f_c
                bytes_t += n_pf_steps * b_c
        n_dec_steps = 0.0
        if n_dec:
            step_d = t_d / share + gap
            n_dec_steps = max(0.0, (dt - time_pf) / step_d)
            work_t += n_dec_steps * t_d
            flops_t += n_dec_steps * f_d
            bytes_t += n_dec_steps * b_d
            low_sm_t += n_dec_steps * (extra_gpu + draft_t)
            if self.kind == "vllm":
                itl.spread(step_d, n_dec * n_dec_steps)
            else:
                if n_pf_steps and n_dec_steps >= n_pf_steps:
                    itl.spread(step_d + step_c, n_dec * n_pf_steps)
                    itl.spread(step_d, n_dec * (n_dec_steps - n_pf_steps))
                elif n_pf_steps:
                    itl.spread(step_d + time_pf / max(1.0, n_dec_steps), n_dec * n_dec_steps)
                else:
                    itl.spread(step_d, n_dec * n_dec_steps)
        if self.kind == "vllm":
            steps_for_dec = n_dec_steps + (n_pf_steps if n_dec else 0.0)
        else:
            steps_for_dec = n_dec_steps
        # decode progress
        for r in dec:
            adv = steps_for_dec * tokens_per_step
            if k:
                self.c["drafts"] += steps_for_dec * r.n
                self.c["draft_tokens"] += steps_for_dec * k * r.n
                self.c["accepted"] += steps_for_dec * (tokens_per_step - 1) * r.n
            remaining = r.out - r.gen
            if adv >= remaining:
                frac = remaining / adv if adv else 0.0
                self.c["gen"] += remaining * r.n
                r.gen = r.out
                done.append((r, now + dt * frac))
            else:
                r.gen += adv
                self.c["gen"] += adv * r.n
        # prefill progress, first come first served
        tokens = n_pf_steps * chunk
        spent = 0.0
        for r in sorted(pre, key=lambda q: q.order):
            if tokens <= 0:
                break
            if r.prefill_started is None:
                r.prefill_started = now
            take = min(r.left, tokens)
            tokens -= take
            r.left -= take
            r.done_prompt += take
            spent += take
            if r.left <= 0:
                t_first = now + (time_pf * spent / max(1.0, n_pf_steps * chunk)
                                 if self.kind == "sglang" else dt * spent / max(1.0, n_pf_steps * chunk))
                r.first = t_first
                self.hists["ttft"].add(t_first - r.arrival + self.rng.uniform(0.002, 0.02))
                self.c["prompt"] += r.prompt
                self.c["cached"] += r.cached
                r.gen = 1.0
                self.c["gen"] += r.n
        # the KV pool: preempt (vLLM) or retract (SGLang) the newest requests when it overflows
        used = self.kv_used()
        while used > self.pool_tokens and len(self.running) > 1:
            victim = max(self.running, key=lambda q: q.order)
            self.running.remove(victim)
            if self.kind == "vllm":
                self.c["preempt"] += 1
            else:
                self.c["retract"] += 1
                self.c["retract_tokens"] += victim.prompt
            # recompute from scratch: the prompt and what was generated so far
            victim.left = victim.prompt + int(victim.gen) - 0
            victim.done_prompt = 0
            victim.cached = 0
            self.waiting.appendleft(victim)
            used = self.kv_used()
        finished = []
        for r, t_end in done:
            if r in self.running:
                self.running.remove(r)
            self._finish(r, t_end)
            finished.append(r)
        # the GPU's view of this slice
        busy_t = min(dt, work_t)
        self.c["forward_s"] += busy_t
        self.tick_gen += 0
        w = self.work
        w.busy += busy_t
        sm_frac = 0.97 if chunk else (0.80 + 0.12 * min(1.0, n_dec / 64))
        w.sm += max(0.0, busy_t - low_sm_t) * sm_frac + min(low_sm_t, busy_t) * 0.30
        w.occ += busy_t * (0.42 if chunk else 0.22 + 0.1 * min(1.0, n_dec / 128))
        w.tensor += min(busy_t, flops_t / (self.spec.tflops * 1e12 * max(0.2, clock)))
        w.dram += min(dt * 0.93, bytes_t / (self.spec.hbm_gbs * 1e9))
        w.compute_bound += busy_t
        if self.tp > 1:
            w.nvlink_gbs += (n_dec_steps + n_pf_steps) * 2 * self.model.layers * (
                n_dec * verify + chunk) * self.model.hidden * 2 / 1e9
        if self.mfu:
            self.c["flops"] += flops_t
            self.c["rbytes"] += bytes_t
            self.c["wbytes"] += bytes_t * 0.05
        # CPU: the engine core's busy loop, the API server's per-request work
        busy_loop = 0.15 + 0.85 * (1.0 if (self.running or self.waiting) else 0.0)
        cpu_want = busy_loop * 1.0 + 0.12 + 0.01 * len(self.running) + extra_host / max(1e-3, (t_d or 1.0))
        cpu_got = cpu_want * self.cpu_served
        self.c["cpu_s"] += cpu_got * dt * (1 + 0.3 * (self.tp - 1))
        self.c["busy_thread_s"] += min(1.0, busy_loop * self.cpu_served) * dt
        return finished

    def _finish(self, r: Req, t_end: float) -> None:
        self.c["finished"] += 1
        h = self.hists
        e2e = t_end - r.arrival
        h["e2e"].add(e2e)
        if r.first is not None and r.prefill_started is not None:
            self.c["prefill_s"] += max(0.0, r.first - r.prefill_started)
            self.c["decode_s"] += max(0.0, t_end - r.first)
        if self.kind == "vllm":
            h["queue"].add(max(0.0, (r.admitted or r.arrival) - r.arrival))
            if r.out > 1 and r.first is not None:
                h["tpot"].add(max(0.0, (t_end - r.first) / (r.out - 1)))
            h["params_n"].add(r.n)
            h["params_max_tokens"].add(r.max_tokens)
            h["max_generation_tokens"].add(r.out)
        self.finished_reqs.append(r)

    # ---------------------------------------------------------------- the scrape

    def sample(self, t_wall: float, t_mono: float, pids: tuple[int, ...], gpus: tuple[int, ...],
               rng, replica: str = "") -> EngineSample:
        c = self.c
        used = self.kv_used()
        kv = min(1.0, used / self.pool_tokens)
        hist = tuple(h.emit() for h in self.hists.values())
        lat = rng.uniform(0.002, 0.03)
        common = dict(url=f"http://127.0.0.1:{self.port}/metrics", model=self.model.name,
                      requests_running=float(len(self.running)),
                      requests_waiting=float(len(self.waiting)),
                      generation_tokens_total=float(int(c["gen"])),
                      prompt_tokens_total=float(int(c["prompt"])),
                      prompt_tokens_cached_total=float(int(c["cached"])),
                      requests_finished_total=float(c["finished"]),
                      kv_config=self.model.kv_config(), tensor_parallel=self.tp,
                      data_parallel=1, gpu_indices=(), pids=pids,
                      time_mono_s=t_mono + lat, time_wall_s=t_wall + lat, histograms=hist,
                      cpu_s=round(c["cpu_s"], 2), ctx_involuntary=int(c["ctx_inv"]),
                      busiest_thread_cpu_s=round(c["busy_thread_s"], 2), replica=replica,
                      weights_bytes=self.weights, weights_source="size of 4 .safetensors file(s)")
        if self.kind == "vllm":
            extra = dict(kind="vllm", kv_usage_ratio=kv, num_gpu_blocks=self.pool_tokens // 16,
                         block_size=16, kv_pool_bytes=int(self.pool_bytes),
                         kv_pool_tokens=self.pool_tokens, cache_dtype="auto",
                         preemptions_total=float(c["preempt"]),
                         waiting_by_reason={"capacity": float(len(self.waiting)),
                                            "deferred": 0.0},
                         prefill_seconds_total=round(c["prefill_s"], 4),
                         decode_seconds_total=round(c["decode_s"], 4),
                         corrupted_requests_total=0.0,
                         busiest_thread=f"{pids[1] if len(pids) > 1 else pids[0]} VLLM::EngineCore")
            if self.mfu:
                extra.update(flops_total=float(int(c["flops"])),
                             read_bytes_total=float(int(c["rbytes"])),
                             write_bytes_total=float(int(c["wbytes"])))
            if self.spec_k:
                extra.update(spec_drafts_total=float(int(c["drafts"])),
                             spec_draft_tokens_total=float(int(c["draft_tokens"])),
                             spec_accepted_tokens_total=float(int(c["accepted"])))
        else:
            free = max(0.0, self.pool_tokens - used)
            extra = dict(kind="sglang", kv_usage_ratio=kv, kv_pool_tokens=self.pool_tokens,
                         kv_used_tokens=float(int(used)), kv_free_tokens=float(int(free)),
                         kv_evictable_tokens=float(int(free * 0.3)),
                         retracted_requests_total=float(c["retract"]),
                         retracted_input_tokens_total=float(c["retract_tokens"]),
                         forward_seconds_total=round(c["forward_s"], 3),
                         busiest_thread=f"{pids[1] if len(pids) > 1 else pids[0]} sglang::scheduler")
            if self.spec_k:
                a = self.spec_accept
                length = 1 + sum(a ** i for i in range(1, self.spec_k + 1))
                extra.update(spec_accept_ratio=round(min(1.0, max(0.0, (length - 1) / self.spec_k
                                                                 + rng.gauss(0, 0.01))), 4),
                             spec_accept_length=round(length + rng.gauss(0, 0.03), 3))
        return EngineSample(**common, **extra)


class Traffic:
    """Open-loop Poisson arrivals at rate(t) or a closed loop of clients with think time."""

    def __init__(self, rng, rate=None, clients=None, think_s=0.5, prompt=(800, 0.8),
                 out=(220, 0.7), cached_frac=0.3, max_prompt=32000, max_out=4096):
        self.rng, self.rate, self.clients, self.think = rng, rate, clients, think_s
        self.prompt, self.out, self.cached_frac = prompt, out, cached_frac
        self.max_prompt, self.max_out = max_prompt, max_out
        self.next_at: list[float] = []
        self.carry = 0.0

    def draw(self, t: float, client=None, prompt=None, out=None) -> Req:
        rng = self.rng
        pm, ps = prompt or self.prompt
        om, osd = out or self.out
        p = int(min(self.max_prompt, max(16, pm * math.exp(rng.gauss(0, ps)))))
        o = int(min(self.max_out, max(4, om * math.exp(rng.gauss(0, osd)))))
        cached = int(p * self.cached_frac * rng.uniform(0.6, 1.0)) // 16 * 16
        return Req(t, p, o, cached=min(cached, p - 1), client=client,
                   max_tokens=max(o, int(o * rng.choice((1.0, 1.5, 2.0, 4.0)))))

    def arrivals(self, t: float, dt: float, finished: list[Req]) -> list[Req]:
        out = []
        rng = self.rng
        if self.rate is not None:
            lam = max(0.0, self.rate(t)) * dt
            # Poisson by inversion (lam is small per slice)
            n, p, u = 0, math.exp(-lam), rng.random()
            s = p
            while u > s and n < 400:
                n += 1
                p *= lam / n
                s += p
            for _ in range(n):
                out.append(self.draw(t + rng.random() * dt))
        if self.clients is not None:
            want = self.clients(t) if callable(self.clients) else self.clients
            for r in finished:
                if r.client is None:
                    continue
                if self.live <= want:
                    self.next_at.append(t + (rng.expovariate(1.0 / self.think) if self.think else 0.0))
                else:
                    self.live -= 1
            while self.live < want:
                self.next_at.append(t + rng.uniform(0, 1.0))
                self.live += 1
            keep = []
            for at in self.next_at:
                if at < t + dt:
                    out.append(self.draw(max(t, at), client=0))
                else:
                    keep.append(at)
            self.next_at = keep
        return out

    live = 0
