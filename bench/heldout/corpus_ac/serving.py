"""Serving endpoints: a continuous-batching scheduler per replica, stepped per tick.

Each tick the scheduler admits requests while the KV pool has room, runs mixed
(prefill chunk + decode) and decode-only steps for the tick's time, and the step times come
from the model's bytes and FLOPs on the board's bandwidth and tensor peak at the clock the
board ran at.  Every GPU, host and engine signal of the frame is derived from that.
"""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .common import (GiB, MiB, SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, TGI_DURATION, VLLM_E2E,
                     VLLM_ITL, VLLM_N, VLLM_TOKENS, VLLM_TTFT, BOARDS, Env, GpuModel, Hist,
                     Host, Load, Proc, TickOut, Tree, clamp, launch_hist, poisson, rng_for,
                     run_frames)


@dataclass(frozen=True)
class Model:
    name: str
    params: float
    active: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    wbytes: float = 2.0
    kvbytes: float = 2.0
    mla: int = 0  # latent width per layer (DeepSeek MLA), replicated on every TP rank
    vocab: int = 128256

    def kv_per_token(self, tp: int) -> int:
        if self.mla:
            return int(self.layers * self.mla * self.kvbytes)
        return int(2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kvbytes)

    def q(self, name: str, wbytes: float, kvbytes: float | None = None) -> "Model":
        return Model(name, self.params, self.active, self.layers, self.kv_heads, self.head_dim,
                     self.hidden, wbytes, kvbytes or self.kvbytes, self.mla, self.vocab)


M = {m.name: m for m in (
    Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 8, 128, 4096),
    Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 8, 128, 8192),
    Model("meta-llama/Llama-3.2-3B-Instruct", 3.2e9, 3.2e9, 28, 8, 128, 3072),
    Model("meta-llama/Llama-3.2-1B-Instruct", 1.24e9, 1.24e9, 16, 8, 64, 2048),
    Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 7.6e9, 28, 4, 128, 3584, vocab=152064),
    Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 8, 128, 5120, vocab=152064),
    Model("Qwen/Qwen2.5-72B-Instruct", 72.7e9, 72.7e9, 80, 8, 128, 8192, vocab=152064),
    Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.49e9, 24, 2, 64, 896, vocab=151936),
    Model("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9, 48, 4, 128, 2048, vocab=151936),
    Model("Qwen/Qwen2-VL-7B-Instruct", 8.3e9, 8.3e9, 28, 4, 128, 3584, vocab=152064),
    Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9, 7.25e9, 32, 8, 128, 4096, vocab=32768),
    Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7e9, 12.9e9, 32, 8, 128, 4096,
          vocab=32000),
    Model("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 23.6e9, 40, 8, 128, 5120,
          vocab=131072),
    Model("deepseek-ai/DeepSeek-V2-Lite-Chat", 15.7e9, 2.4e9, 27, 1, 576, 2048, mla=576,
          vocab=102400),
    Model("google/gemma-2-9b-it", 9.24e9, 9.24e9, 42, 8, 256, 3584, vocab=256000),
    Model("google/gemma-2-27b-it", 27.2e9, 27.2e9, 46, 16, 128, 4608, vocab=256000),
    Model("BAAI/bge-large-en-v1.5", 0.335e9, 0.335e9, 24, 16, 64, 1024, vocab=30522),
)}


@dataclass
class Req:
    arr: float
    prompt: int
    out: int
    n: int = 1
    logprobs: int = 0
    cached: int = 0
    done_prefill: int = 0
    gen: int = 0
    t_first: float | None = None
    t_admit: float | None = None
    max_tokens: int = 0


@dataclass
class ServeCfg:
    engine: str  # vllm | vllm0 | sglang | llamacpp | tgi
    model: Model
    board: str
    gpus: int = 1
    tp: int = 1
    dp: int = 1
    duration: float = 600.0
    tick: float = 1.0
    cpus: int = 16
    rate: object = 2.0  # requests/s per replica: a number or a function of t
    prompt: tuple = (600, 0.7)  # median tokens, lognormal sigma
    out: tuple = (220, 0.6)
    max_seqs: int = 256
    chunk: int = 8192
    mem_util: float = 0.9
    graphs: bool = True
    prefix_hit: float = 0.2
    spec: tuple | None = None  # (k, acceptance per token: number or fn(t), draft cost 0..1)
    long: object = None  # fn(t) -> (rate/s, prompt tokens) of an extra stream of long prompts
    ctx: object = None  # fn(t) -> multiplier of the prompt median
    inject: tuple = ()  # (t, prompt, out, n, logprobs)
    nb_runnable: object = None  # fn(t) -> runnable threads of a neighbour on the host
    quota: object = None  # fn(t) -> CPU quota (cores) of the engine's cgroup, or None
    jitter: object = None  # fn(t) -> (fraction of steps descheduled, stall ms)
    env: dict = field(default_factory=dict)  # gpu -> Env
    env_events: tuple = ()  # (t, gpu, attr, value)
    neighbors: tuple = ()  # dicts: gpu, t0, t1, load, mem, name, cmd, pid, user, container
    restart: tuple = ()  # (t, down_s)
    ebpf: bool = False
    dcgm: bool = False
    psi: bool = True
    warmup: bool = False
    kv_dtype: str = "auto"
    link_us: float = 8.0  # TP all-reduce latency per call (NVLink ~8 us, PCIe ~25 us)
    host_ms: float = 0.45  # scheduler CPU time per step
    container: str = ""
    user: str = "svc"
    extra_gpu_mem: int = 0  # per GPU: other processes' steady memory (e.g. a reranker)
    mfu_metrics: bool = False
    embed: bool = False  # embedding service: prefill only, one output


def _fn(x):
    return x if callable(x) else (lambda t, v=x: v)


class Replica:
    """One engine instance (one data-parallel replica) on ``tp`` GPUs."""

    def __init__(self, cfg: ServeCfg, rid: int, gpu_ids: list, rng, pool_tokens: int):
        self.c, self.rid, self.gpu_ids, self.rng = cfg, rid, gpu_ids, rng
        self.pool = pool_tokens
        self.block = 16 if cfg.engine.startswith("vllm") else 1
        self.waiting: deque = deque()
        self.running: list = []
        self.reset_counters()

    def reset_counters(self):
        c = self.c
        self.gen = self.prompt = self.cached = self.finished = 0.0
        self.preempt = self.retract = self.retract_tok = 0.0
        self.drafts = self.draft_tok = self.accepted = 0.0
        self.prefill_s = self.decode_s = self.forward_s = self.steps_total = 0.0
        self.flops = self.rbytes = self.wbytes = 0.0
        self.spec_rate = 0.0
        if c.engine == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        elif c.engine == "tgi":
            self.h = {"tpot": Hist("tpot", TGI_DURATION), "e2e": Hist("e2e", TGI_DURATION),
                      "queue": Hist("queue", TGI_DURATION)}
        elif c.engine == "llamacpp":
            self.h = {}
        else:
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_E2E)}
            if c.engine == "vllm":
                self.h.update({"params_n": Hist("params_n", VLLM_N),
                               "params_max_tokens": Hist("params_max_tokens", VLLM_TOKENS),
                               "max_generation_tokens": Hist("max_generation_tokens",
                                                             VLLM_TOKENS)})

    def kv_used(self) -> int:
        b = self.block
        return sum(((r.done_prefill + r.gen + b - 1) // b) * b * r.n for r in self.running)

    def arrive(self, t: float, dt: float):
        c, rng = self.c, self.rng
        mult = _fn(c.ctx)(t) if c.ctx else 1.0
        k = poisson(rng, _fn(c.rate)(t) * dt)
        for _ in range(k):
            p = max(8, int(c.prompt[0] * mult * math.exp(rng.gauss(0, c.prompt[1]))))
            o = 1 if c.embed else max(4, int(c.out[0] * math.exp(rng.gauss(0, c.out[1]))))
            cached = int(p * c.prefix_hit * rng.uniform(0.5, 1.5)) // 16 * 16
            self.waiting.append(Req(t + rng.uniform(0, dt), p, o, cached=min(cached, p - 1),
                                    max_tokens=max(o, int(o * rng.choice((1, 2, 4))))))
        if c.long:
            lr, lp = c.long(t)
            for _ in range(poisson(rng, lr * dt)):
                p = int(lp * rng.uniform(0.8, 1.2))
                self.waiting.append(Req(t + rng.uniform(0, dt), p,
                                        max(16, int(c.out[0] * rng.uniform(0.3, 1.2))),
                                        max_tokens=1024))
        for (ti, p, o, n, lp) in c.inject:
            if t <= ti < t + dt and self.rid == 0:
                self.waiting.append(Req(ti, p, o, n=n, logprobs=lp, max_tokens=o))

    def admit(self, t: float):
        c = self.c
        used = self.kv_used()
        while self.waiting and sum(r.n for r in self.running) < c.max_seqs:
            r = self.waiting[0]
            need = (r.prompt + r.gen + self.block) * r.n
            if used + need > self.pool * 0.99:
                break
            self.waiting.popleft()
            if r.t_admit is None:
                r.t_admit = max(t, r.arr)
                if "queue" in self.h:
                    self.h["queue"].observe(max(0.0005, r.t_admit - r.arr))
            self.running.append(r)
            used += need

    def step_times(self, B: int, ctx: int, pre: int, g: dict) -> tuple[float, float, float, float]:
        """(kernel time, host gap, flops, bytes) of one step on the slowest rank."""
        c, m = self.c, self.c.model
        b = BOARDS[c.board]
        tp = c.tp
        kvr = m.kv_per_token(tp)
        w = m.params * m.wbytes / tp
        # MoE: a decode batch touches only some experts' weights
        if m.active < m.params:
            touched = clamp(0.15 + 0.03 * B, 0.15, 1.0)
            w = (m.active + (m.params - m.active) * touched) * m.wbytes / tp
        tokens = B * g["spec_tokens"] + pre
        flops = 2 * m.active * tokens / tp
        flops += 4 * m.layers * m.hidden * (ctx * g["spec_tokens"] + pre * (pre / 2 + g["pctx"])) / tp
        byts = w + ctx * kvr + pre * kvr
        t_mem = byts / (0.82 * b.hbm_bps * g["memf"]) if (B or pre) else 0.0
        eff = 0.62 if pre > 256 else 0.45
        peak = b.bf16_flops * (2 if (m.wbytes <= 1 and b.fp8) else 1)
        t_cmp = flops / (eff * peak * g["clockf"])
        t_comm = 0.0
        if tp > 1:
            t_comm = 2 * m.layers * (c.link_us * 1e-6 + 2 * tokens * m.hidden * 2 / 150e9)
        t_over = 0.00025 + 0.00002 * B if c.graphs else m.layers * 10 * 5.5e-6
        if g["lp"]:
            t_over += g["lp"] * 0.004  # full-vocabulary logprobs, sorted per sequence
        kern = (max(t_mem, t_cmp) + t_comm + t_over * 0.5) * g["share"]
        if g["spec_k"]:
            kern += g["spec_k"] * g["draft_cost"] * t_mem
        host = c.host_ms * 1e-3 * (1 + B / 128) + (g["lp"] * 0.0012)
        host *= g["cpu_slow"]
        if g["jit"]:
            launches = 8 if c.graphs else m.layers * 10
            host += launches * g["jit"][0] * g["jit"][1] * 1e-3
        return kern, host, flops, byts

    def tick(self, t: float, dt: float, g: dict) -> dict:
        c, rng = self.c, self.rng
        self.arrive(t, dt)
        self.admit(t)
        dec = [r for r in self.running if r.done_prefill >= r.prompt]
        pre_q = [r for r in self.running if r.done_prefill < r.prompt]
        B = sum(r.n for r in dec)
        ctx = sum((r.prompt + r.gen) * r.n for r in dec)
        lp = sum(r.n * (1 if r.logprobs else 0) for r in dec)
        P = sum(r.prompt - r.done_prefill - (r.cached if r.done_prefill == 0 else 0)
                for r in pre_q)
        P = max(0, P)
        g = dict(g, lp=lp)
        acc_tokens = 0.0
        if c.spec:
            k, a_fn, dcost = c.spec
            a = _fn(a_fn)(t)
            acc_tokens = sum(a ** i for i in range(1, k + 1))
            g.update(spec_k=k, draft_cost=dcost, spec_tokens=k + 1)
        else:
            g.update(spec_k=0, draft_cost=0.0, spec_tokens=1)
        tps = 1 + acc_tokens
        chunk = max(256, c.chunk - B)
        cp = min(chunk, P) if P else 0
        pctx = (sum(r.done_prefill for r in pre_q) / max(1, len(pre_q))) if pre_q else 0
        g["pctx"] = pctx
        kd, hd, fd, bd = self.step_times(B, ctx, 0, g) if B else (0, 0, 0, 0)
        km, hm, fm, bm = self.step_times(B, ctx, cp, g) if cp else (0, 0, 0, 0)
        td, tm = kd + hd, km + hm
        run = dt * g.get("avail", 1.0)  # the engine runs only while its CPU lets it
        m_steps = min(math.ceil(P / cp), int(run / tm)) if cp else 0
        if cp and m_steps == 0:
            m_steps = 1 if rng.random() < run / tm else 0
        d_steps = int(max(0.0, run - m_steps * tm) / td) if B and td > 0 else 0
        busy = m_steps * km + d_steps * kd
        # prefill progress (FCFS); requests finishing prefill get their first token
        budget = m_steps * cp
        now_end = t + dt
        for idx, r in enumerate(pre_q):
            if budget <= 0:
                break
            need = r.prompt - r.done_prefill - (r.cached if r.done_prefill == 0 else 0)
            if r.done_prefill == 0:
                self.cached += r.cached
            take = min(need, budget)
            budget -= take
            r.done_prefill = r.prompt if take >= need else r.done_prefill + take + (
                r.cached if r.done_prefill == 0 else 0)
            if r.done_prefill >= r.prompt and r.t_first is None:
                frac = 1 - budget / max(1, m_steps * cp)
                r.t_first = max(r.arr + 0.002, t + frac * m_steps * tm)
                self.prompt += r.prompt * r.n
                if "ttft" in self.h:
                    self.h["ttft"].observe(r.t_first - r.arr)
                r.gen = 1
                self.gen += r.n
                if c.embed:
                    r.gen = r.out
        self.prompt_in_tick = m_steps * cp
        # decode progress
        steps = m_steps + d_steps
        done = []
        gen_tick = 0.0
        for r in dec:
            adv = min(r.out - r.gen, int(steps * tps + rng.random()))
            r.gen += adv
            gen_tick += adv * r.n
            if r.gen >= r.out:
                done.append(r)
        for r in self.running:
            if c.embed and r.t_first is not None and r not in done:
                done.append(r)
        self.gen += gen_tick
        if c.spec and steps:
            k = c.spec[0]
            self.drafts += steps * B
            self.draft_tok += steps * B * k
            self.accepted += steps * B * acc_tokens
            self.spec_rate = acc_tokens / k
        # latency observations
        if B and "itl" in self.h:
            self.h["itl"].spread(rng, tm / tps, int(m_steps * B * tps), 0.08)
            self.h["itl"].spread(rng, td / tps, int(d_steps * B * tps), 0.08)
        for r in done:
            self.running.remove(r)
            self.finished += 1
            frac = rng.random()
            t_end = t + frac * dt
            e2e = max(t_end - r.arr, (r.t_first or t_end) - r.arr + 0.001)
            tpot = (e2e - ((r.t_first or t_end) - r.arr)) / max(1, r.gen - 1)
            if "e2e" in self.h:
                self.h["e2e"].observe(e2e)
            if "tpot" in self.h and not c.embed:
                self.h["tpot"].observe(max(0.0002, tpot))
            if "params_n" in self.h:
                self.h["params_n"].observe(r.n)
                self.h["params_max_tokens"].observe(r.max_tokens)
                self.h["max_generation_tokens"].observe(r.gen)
            self.decode_s += max(0.0, e2e - ((r.t_first or t_end) - r.arr)) * r.n
            self.prefill_s += ((r.t_first or t_end) - (r.t_admit or r.arr))
        # KV growth: preempt (vLLM) / retract (SGLang) the newest when the pool overflows
        used = self.kv_used()
        while used > self.pool and len(self.running) > 1:
            r = max(self.running, key=lambda x: x.t_admit or 0)
            self.running.remove(r)
            if c.engine == "sglang":
                self.retract += 1
                self.retract_tok += r.prompt
            else:
                self.preempt += 1
            r.prompt, r.done_prefill, r.t_admit = r.prompt + r.gen, 0, None
            r.out = max(r.gen + 1, r.out)
            self.waiting.appendleft(r)
            used = self.kv_used()
        self.steps_total += steps
        self.forward_s += busy
        self.flops += m_steps * fm + d_steps * fd
        self.rbytes += m_steps * bm + d_steps * bd
        self.wbytes += (m_steps * cp + steps * B) * c.model.kv_per_token(c.tp)
        sm_eff = 0.55 if c.model.params * c.model.wbytes / c.tp < 3e9 else 0.86
        host_cpu = steps * (hm if m_steps else hd) / max(1.0, g["cpu_slow"]) if steps else 0.0
        return dict(busy=clamp(busy / dt), pre_busy=clamp(m_steps * km / dt), steps=steps,
                    flops=m_steps * fm + d_steps * fd, bytes=m_steps * bm + d_steps * bd,
                    sm_eff=sm_eff, host_cpu=min(1.0, host_cpu / dt + 0.04),
                    B=B, comm=(m_steps + d_steps) * (2 * c.model.layers * c.link_us * 1e-6)
                    if c.tp > 1 else 0.0)

    def sample(self, kind: str, model: str, label: str = "") -> EngineSample:
        c = self.c
        kv = self.kv_used()
        base = dict(kind=kind, model=model, generation_tokens_total=float(int(self.gen)),
                    prompt_tokens_total=float(int(self.prompt)),
                    requests_finished_total=float(self.finished),
                    requests_running=float(sum(r.n for r in self.running)),
                    requests_waiting=float(sum(r.n for r in self.waiting)),
                    histograms=tuple(h.snapshot() for h in self.h.values()), replica=label,
                    tensor_parallel=c.tp, data_parallel=c.dp)
        if kind == "vllm":
            blocks = self.pool // 16
            base.update(prompt_tokens_cached_total=float(int(self.cached)),
                        kv_usage_ratio=round(kv / max(1, blocks * 16), 6),
                        num_gpu_blocks=blocks, block_size=16, kv_pool_tokens=blocks * 16,
                        kv_pool_bytes=blocks * 16 * c.model.kv_per_token(c.tp),
                        cache_dtype=c.kv_dtype,
                        preemptions_total=float(self.preempt),
                        prefill_seconds_total=round(self.prefill_s, 3),
                        decode_seconds_total=round(self.decode_s, 3))
            if c.engine == "vllm":
                waiting_cap = float(sum(r.n for r in self.waiting)) if self.waiting else 0.0
                base["waiting_by_reason"] = {"capacity": waiting_cap, "deferred": 0.0}
                if c.mfu_metrics:
                    base.update(flops_total=float(int(self.flops)),
                                read_bytes_total=float(int(self.rbytes)),
                                write_bytes_total=float(int(self.wbytes)))
            if c.spec:
                base.update(spec_drafts_total=float(int(self.drafts)),
                            spec_draft_tokens_total=float(int(self.draft_tok)),
                            spec_accepted_tokens_total=float(int(self.accepted)))
        elif kind == "sglang":
            base.update(prompt_tokens_cached_total=float(int(self.cached)),
                        kv_usage_ratio=round(kv / self.pool, 6), kv_pool_tokens=self.pool,
                        kv_used_tokens=float(kv), kv_free_tokens=float(self.pool - kv),
                        kv_evictable_tokens=float(int(min(self.pool - kv, self.cached * 0.3))),
                        retracted_requests_total=float(self.retract),
                        retracted_input_tokens_total=float(self.retract_tok),
                        forward_seconds_total=round(self.forward_s, 3))
            if c.spec:
                base.update(spec_accept_ratio=round(self.spec_rate, 4),
                            spec_accept_length=round(1 + self.spec_rate * c.spec[0], 3))
        elif kind == "llamacpp":
            base.update(prompt_tokens_cached_total=float(int(self.cached)),
                        prefill_seconds_total=round(self.prefill_s, 3),
                        decode_seconds_total=round(self.decode_s, 3),
                        decode_steps_total=float(int(self.steps_total)),
                        tensor_parallel=None, data_parallel=None)
            if c.spec:
                base.update(spec_drafts_total=float(int(self.drafts)),
                            spec_draft_tokens_total=float(int(self.draft_tok)),
                            spec_accepted_tokens_total=float(int(self.accepted)))
        elif kind == "tgi":
            base.update(tensor_parallel=None, data_parallel=None)
        return EngineSample(**base)


ENGINE_CMD = {
    "vllm": "python3 -m vllm.entrypoints.openai.api_server --model {m} --tensor-parallel-size "
            "{tp} --gpu-memory-utilization {mu} --max-num-seqs {ms} --port 8000",
    "vllm0": "python3 -m vllm.entrypoints.openai.api_server --model {m} -tp {tp} "
             "--gpu-memory-utilization {mu} --port 8000",
    "sglang": "python3 -m sglang.launch_server --model-path {m} --tp {tp} --mem-fraction-static "
              "{mu} --enable-metrics --port 30000",
    "llamacpp": "/app/llama-server -m /models/{m}.gguf -ngl 99 -c 32768 -np 4 --metrics --port "
                "8080",
    "tgi": "text-generation-launcher --model-id {m} --num-shard {tp} --port 80",
}
ENGINE_URL = {"vllm": "http://127.0.0.1:8000/metrics", "vllm0": "http://127.0.0.1:8000/metrics",
              "sglang": "http://127.0.0.1:30000/metrics",
              "llamacpp": "http://127.0.0.1:8080/metrics", "tgi": "http://127.0.0.1:80/metrics"}


def simulate(name: str, cfg: ServeCfg, start_wall: float) -> list:
    rng = rng_for(name)
    b = BOARDS[cfg.board]
    gms = [GpuModel(b, i, rng_for(name, f"gpu{i}"), cfg.env.get(i, Env()), dcgm=cfg.dcgm)
           for i in range(cfg.gpus)]
    host = Host(cfg.cpus, rng_for(name, "host"), base_cores=0.3 + 0.02 * cfg.cpus, psi=cfg.psi)
    m = cfg.model
    kvr = m.kv_per_token(cfg.tp)
    total = b.mem_mib * MiB
    if cfg.engine == "llamacpp":
        pool = 32768
        per_gpu_mem = int(m.params * m.wbytes / cfg.tp + pool * kvr + 0.6 * GiB)
    else:
        per_gpu_mem = int(total * cfg.mem_util) - cfg.extra_gpu_mem
        act = 1.2 * GiB + 0.4 * GiB * (cfg.chunk / 8192)
        pool = int((per_gpu_mem - m.params * m.wbytes / cfg.tp - act - 0.5 * GiB) / kvr)
        pool = max(2048, pool // 16 * 16)
    reps = [Replica(cfg, r, list(range(r * cfg.tp, (r + 1) * cfg.tp)), rng_for(name, f"r{r}"),
                    pool) for r in range(cfg.dp)]
    kind = "vllm" if cfg.engine.startswith("vllm") else cfg.engine
    cmd = ENGINE_CMD[cfg.engine].format(m=m.name if kind != "llamacpp" else
                                        m.name.split("/")[-1] + "-Q4_K_M",
                                        tp=cfg.tp, mu=cfg.mem_util, ms=cfg.max_seqs)
    base_pid = rng.randint(2000, 60000)
    boot = start_wall - rng.uniform(3600, 86400 * 3)
    cg = f"/docker/{cfg.container}" if cfg.container else "/system.slice/inference.service"
    state = {"pid": base_pid, "boot": boot, "down_until": -1.0, "up_at": 0.0}

    def make_tree():
        pid = state["pid"]
        threads = [(pid, pid, "python3"), (pid + 61, pid + 61, "VLLM::EngineCore"
                                           if kind == "vllm" else "scheduler"),
                   (pid + 3, pid, "uvicorn"), (pid + 62, pid + 61, "cuda-EvtHandlr")]
        threads += [(pid + 70 + r, pid + 70 + r, f"worker_TP{r}") for r in range(1, cfg.tp)]
        quota = _fn(cfg.quota)(0) if cfg.quota else None
        return Tree(pid, cmd, threads, tuple(range(cfg.cpus)), (8000,), quota=quota,
                    extra_pids=(pid + 61,) + tuple(pid + 70 + r for r in range(1, cfg.tp)))

    tree_box = [make_tree()]
    procs_extra = []
    for nb in cfg.neighbors:
        procs_extra.append(Proc(nb["pid"], nb["gpu"], nb["name"], nb["cmd"],
                                start_wall + nb["t0"] - nb.get("age", 0), nb["mem"],
                                user=nb.get("user", "root"), container=nb.get("container", "")))
    warm_s = 150.0 if cfg.warmup else 0.0
    ev = sorted(cfg.env_events)

    def step(i: int, t: float) -> TickOut:
        dt = cfg.tick
        for (te, gi, attr, val) in ev:
            if t <= te < t + dt:
                setattr(gms[gi].env, attr, val)
        # restarts: the engine goes away, its memory is freed, counters start again
        for (tr, down) in cfg.restart:
            if t <= tr < t + dt:
                state["down_until"] = tr + down
                state["up_at"] = tr + down
        loading = t < warm_s or t < state["down_until"]
        since_up = t - (state["up_at"] if t >= state["up_at"] else 0)
        if state["down_until"] > 0 and t >= state["down_until"] and state["pid"] == base_pid:
            state["pid"] = base_pid + 4000 + rng.randint(1, 900)
            tree_box[0] = make_tree()
            for r in reps:
                r.reset_counters()
                r.waiting.clear()
                r.running.clear()
        nb_r = _fn(cfg.nb_runnable)(t) if cfg.nb_runnable else 0.0
        quota = _fn(cfg.quota)(t) if cfg.quota else None
        engine_threads = 1.3 + 0.2 * cfg.tp
        cpu_slow = 1.0
        if nb_r + engine_threads + host.base > cfg.cpus:
            cpu_slow = (nb_r + engine_threads + host.base) / cfg.cpus
        throttled_frac = 0.0
        jit = _fn(cfg.jitter)(t) if cfg.jitter else None
        loads = [Load() for _ in gms]
        mem = [0] * cfg.gpus
        procs = []
        # neighbours on GPUs
        share = [1.0] * cfg.gpus
        for nb, p in zip(cfg.neighbors, procs_extra):
            if nb["t0"] <= t < nb.get("t1", 1e9):
                gi = nb["gpu"]
                ld = nb["load"](t) if callable(nb["load"]) else nb["load"]
                loads[gi] = loads[gi].add(ld)
                mem[gi] += p.mem
                share[gi] = 1.0 + 0.9 * ld.busy
                p.sm = ld.sm
                p.memu = ld.dram
                p.cpu_s += dt * nb.get("cpu", 0.9)
                procs.append(p)
        host_busy = nb_r * 0.95 + 0.2
        engine_cpu = 0.25
        eng = None
        if loading:
            if t < warm_s:
                frac = clamp(t / (warm_s * 0.6))
                for gi in range(cfg.gpus):
                    mem[gi] += int(per_gpu_mem * (0.6 * frac if t < warm_s * 0.6 else 1.0))
                    if warm_s * 0.6 <= t < warm_s * 0.85:  # profiling run, graph capture
                        loads[gi] = loads[gi].add(Load(busy=rng.uniform(0.3, 0.9),
                                                       sm=rng.uniform(0.1, 0.5),
                                                       tensor=rng.uniform(0.0, 0.3),
                                                       dram=rng.uniform(0.05, 0.3), burst=0.5))
                engine_cpu = 1.1
                eng = "connection refused" if t < warm_s * 0.85 else None
            else:
                eng = "connection refused"
            if eng is None and t >= warm_s * 0.85:
                eng = _engine_sample(reps, kind, m.name, cfg)
        else:
            tb = 0.0
            if quota:
                demand = engine_threads * (0.8 if since_up > 0 else 1)
                if demand > quota:
                    cpu_slow = max(cpu_slow, demand / quota)
                    throttled_frac = clamp(0.6 + 0.4 * (demand - quota) / demand)
            for r in reps:
                gids = r.gpu_ids
                cf = min(gms[gi].compute_factor() for gi in gids)
                mf = min(gms[gi].mem_factor() for gi in gids)
                sh = max(share[gi] for gi in gids)
                avail = 1.0 / cpu_slow ** 0.85 if cpu_slow > 1 else 1.0
                out = r.tick(t, dt, dict(clockf=cf, memf=mf, share=sh, cpu_slow=cpu_slow,
                                         jit=jit, avail=avail))
                tb += out["host_cpu"]
                for gi in gids:
                    own_cf = gms[gi].compute_factor()
                    # faster ranks finish their part and spin in the all-reduce
                    work = out["busy"] * clamp(cf / own_cf) ** 0.8
                    wait = out["busy"] - work
                    ld = Load(busy=out["busy"] * (1 if out["busy"] < 0.999 else 1),
                              sm=clamp(work * out["sm_eff"] + wait * 0.14 + out["pre_busy"] * 0.1),
                              occ=clamp(work * 0.3 + out["pre_busy"] * 0.2 + wait * 0.05),
                              tensor=clamp(out["flops"] * 1.35 / (b.bf16_flops * dt *
                                                                  own_cf / cf)),
                              dram=clamp(out["bytes"] / (b.hbm_bps * dt)),
                              pcie_rx=rng.uniform(5, 40) * (1 + out["B"] / 16),
                              pcie_tx=rng.uniform(2, 10) * (1 + out["B"] / 16),
                              nvl=(out["comm"] * 2e3 + out["B"] * 8) if cfg.tp > 1 else 0.0,
                              burst=0.25 if out["busy"] < 0.6 else 0.06)
                    loads[gi] = loads[gi].add(ld) if share[gi] > 1 else ld
                    mem[gi] += per_gpu_mem
            engine_cpu = tb + 0.15 + 0.02 * sum(len(r.running) for r in reps) ** 0.5
            eng = _engine_sample(reps, kind, m.name, cfg)
            if rng.random() < 0.004:
                eng = "timed out after 2.0 s"
        # engine processes on GPUs
        if not (t < warm_s * 0.05) and not (state["down_until"] > t and
                                             t - (state["down_until"] - 1e9) < 0 and False):
            if not (state["down_until"] > t):
                pid = state["pid"]
                for gi in range(cfg.dp * cfg.tp):
                    if gi >= cfg.gpus:
                        break
                    wp = pid + 61 if cfg.tp == 1 else pid + 70 + (gi % cfg.tp)
                    if cfg.tp > 1 and gi % cfg.tp == 0:
                        wp = pid + 61
                    if cfg.dp > 1:
                        wp = pid + 61 + 100 * (gi // cfg.tp) + (gi % cfg.tp)
                    pm = mem[gi] - sum(p.mem for p in procs if p.gpu_index == gi) \
                        if False else None
                    own = per_gpu_mem if not loading else int(
                        per_gpu_mem * (0.6 * clamp(t / (warm_s * 0.6)) if t < warm_s * 0.6
                                       else 1.0))
                    name_ = {"vllm": "VLLM::EngineCore" if cfg.tp == 1 else
                             f"VLLM::Worker_TP{gi % cfg.tp}", "sglang": "sglang::scheduler",
                             "llamacpp": "llama-server", "tgi": "text-generation-server"}[kind]
                    procs.append(Proc(wp, gi, name_, cmd, state["boot"] if state["pid"] ==
                                      base_pid else start_wall + state["up_at"], own,
                                      user=cfg.user, container=cfg.container, cgroup=cg,
                                      sm=loads[gi].sm, memu=loads[gi].dram,
                                      cpu_s=tree_box[0].cpu_s / max(1, cfg.tp)))
                    _ = pm
        out_procs = [p.sample(0) for p in procs]
        for gi in range(cfg.gpus):
            mem[gi] += cfg.extra_gpu_mem if cfg.extra_gpu_mem else 0
            mem[gi] += 4 * MiB if mem[gi] else 0
        tree = tree_box[0]
        pid = state["pid"]
        use = {pid: 0.05 + 0.02 * engine_cpu, pid + 3: 0.03,
               pid + 61: min(1.0, engine_cpu), pid + 62: 0.005}
        for r in range(1, cfg.tp):
            use[pid + 70 + r] = min(1.0, engine_cpu * 0.5)
        if quota and engine_cpu > quota:
            scale = quota / engine_cpu
            use = {k: v * scale for k, v in use.items()}
        invol = 6 + (400 * (cpu_slow - 1) if cpu_slow > 1 and not quota else 0)
        if jit:
            invol += jit[0] * 1000
        tree.step(dt, use, invol, 800 + 30 * engine_cpu, throttled_frac)
        if isinstance(eng, EngineSample):
            eng = dataclasses.replace(eng, pids=(pid, *tree.extra), **tree.engine_fields())
        launch = ()
        if cfg.ebpf and not loading:
            steps = sum(getattr(r, "steps_total", 0) for r in reps)
            prev = state.get("steps", 0)
            state["steps"] = steps
            n_steps = max(0, int(steps - prev))
            tail = jit[0] if jit else 0.0004
            tail_us = (jit[1] * 1000) if jit else 45.0
            if cfg.graphs:
                launch = (launch_hist(rng, "cudaGraphLaunch", pid + 61, n_steps, 9.0, tail,
                                      tail_us),
                          launch_hist(rng, "cudaLaunchKernel", pid + 61, n_steps * 6, 3.2,
                                      tail, tail_us))
            else:
                launch = (launch_hist(rng, "cudaLaunchKernel", pid + 61,
                                      n_steps * m.layers * 10, 3.4, tail, tail_us),)
        busy_total = host_busy + engine_cpu + 0.3
        run = nb_r + engine_threads * (1 if engine_cpu > 0.5 else 0.4)
        return TickOut(loads, mem, out_procs, busy_total, run, None, tree, eng, launch)

    return run_frames(name, gms, host, cfg.tick, cfg.duration, start_wall, step,
                      ENGINE_URL[cfg.engine], "uprobes on libcudart.so.12 (EngineCore)"
                      if cfg.ebpf else None, rng_for(name, "clock"))


def _engine_sample(reps, kind, model, cfg) -> EngineSample:
    if len(reps) == 1:
        s = reps[0].sample(kind, model)
    else:
        parts = [r.sample(kind, model, f"engine={r.rid}" if kind == "vllm" else
                          f"dp_rank={r.rid}") for r in reps]
        s = _sum_samples(parts)
    return s


def _sum_samples(parts):
    import dataclasses
    first = parts[0]
    out = {}
    for f in dataclasses.fields(first):
        vals = [getattr(p, f.name) for p in parts]
        if f.name in ("kv_usage_ratio", "spec_accept_ratio", "spec_accept_length"):
            vs = [v for v in vals if v is not None]
            out[f.name] = sum(vs) / len(vs) if vs else None
        elif f.name in ("num_gpu_blocks", "kv_pool_tokens", "kv_pool_bytes", "block_size",
                        "tensor_parallel"):
            out[f.name] = vals[0]
        elif f.name == "histograms":
            hs = []
            for hi, h in enumerate(vals[0]):
                cum = tuple(sum(p.histograms[hi].cumulative[k] for p in parts)
                            for k in range(len(h.cumulative)))
                hs.append(dataclasses.replace(h, cumulative=cum,
                                              count=sum(p.histograms[hi].count for p in parts),
                                              sum=sum(p.histograms[hi].sum for p in parts)))
            out[f.name] = tuple(hs)
        elif f.name == "waiting_by_reason":
            keys = set().union(*[v.keys() for v in vals])
            out[f.name] = {k: sum(v.get(k, 0.0) for v in vals) for k in sorted(keys)}
        elif all(isinstance(v, float) for v in vals):
            out[f.name] = sum(vals)
        else:
            out[f.name] = vals[0]
    out["replicas"] = tuple(parts)
    out["replica"] = ""
    out["data_parallel"] = len(parts)
    return EngineSample(**out)
