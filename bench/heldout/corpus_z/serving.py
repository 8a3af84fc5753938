"""A request-level serving simulation (vLLM V1, SGLang, llama.cpp) that writes frames as
gputop's sources would read them: cumulative counters and histograms from the engine's
/metrics, NVML per GPU, /proc for the host and the engine's process tree, eBPF launch
histograms where the probes are on.

Each slice (a quarter tick) runs the engine's continuous batching: admission against the
KV pool and max_num_seqs, chunked prefill under a token budget, decode steps whose time
comes from HBM bytes (weights + KV read) and FLOPs at the current clock, preemption when
decode growth finds no free blocks, speculative decoding's drafts and acceptance."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .common import (GPUS, SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, VLLM_E2E, VLLM_ITL,
                     VLLM_MAXTOK, VLLM_N, VLLM_TTFT, GiB, GpuState, Hist, Host, Proc, Thread,
                     clamp, event_value, launch_hist, make_frame, pinned_sample, poisson, proc_samples,
                     status)


@dataclass(frozen=True)
class LLM:
    name: str
    params: float  # total
    active: float  # per token (MoE: the active experts)
    layers: int
    kv_heads: int
    head_dim: int = 128
    wbytes: float = 2.0  # weight bytes per parameter
    kv_dtype: float = 2.0
    vocab: int = 128256

    def kv_bytes(self, tp: int) -> int:
        return int(2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kv_dtype)


MODELS = {
    "llama8b": LLM("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 8),
    "llama70b": LLM("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 8),
    "llama70b-fp8": LLM("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 70.6e9, 80, 8,
                        wbytes=1.0),
    "qwen32b": LLM("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 8, vocab=152064),
    "qwen7b": LLM("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 7.6e9, 28, 4, vocab=152064),
    "qwen3moe": LLM("Qwen/Qwen3-30B-A3B-Instruct-2507", 30.5e9, 3.3e9, 48, 4, vocab=151936),
    "qwen3moe-fp8": LLM("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", 30.5e9, 3.3e9, 48, 4, wbytes=1.0,
                        vocab=151936),
    "mistral7b": LLM("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9, 7.25e9, 32, 8, vocab=32768),
    "llama3b-q4": LLM("bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", 3.2e9, 3.2e9, 28, 8,
                      wbytes=0.6),
    "llama8b-q4": LLM("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", 8.03e9, 8.03e9, 32, 8,
                      wbytes=0.6),
    "gemma27b": LLM("google/gemma-3-27b-it", 27.4e9, 27.4e9, 62, 16, vocab=262144),
}


@dataclass
class Tenant:
    rate: float  # requests/s at multiplier 1
    prompt: tuple[float, float, int, int]  # median, sigma (log), min, max
    out: tuple[float, float, int, int]
    cached: float = 0.0  # fraction of the prompt served by the prefix cache
    n: int = 1
    t0: float = 0.0  # active from .. to (trace seconds)
    t1: float = 1e9
    ramp: float = 0.0  # seconds to reach full rate from t0
    label: str = ""


@dataclass
class Special:
    """One request placed by hand (an oversized one, a legitimately slow one)."""
    t: float
    prompt: int
    out: int
    n: int = 1
    logprobs: int = 0
    extra_step_s: float = 0.0  # sampler/logprob work per step while it runs
    max_tokens: int | None = None


@dataclass
class ServeSpec:
    engine: str  # vllm | sglang | llamacpp
    gpu: str
    gpus: int
    tp: int
    model: str
    duration: float
    tenants: list[Tenant]
    tick: float = 1.0
    dp: int = 1
    max_seqs: int = 256
    budget: int = 8192  # max_num_batched_tokens (chunked prefill)
    mem_util: float = 0.9
    pool_tokens: int | None = None  # override the KV pool size (tokens per GPU-group)
    block: int = 16
    spec: tuple[str, int, float] | None = None  # (method, k, per-token acceptance)
    specials: list[Special] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)  # (t0, t1, kind, value)
    diurnal: float = 0.0  # rate slope per minute (fraction)
    ebpf: bool = False
    cpus: int = 64
    quota: float | None = None
    host_step_s: float = 0.0015  # host time per step (schedule + prepare), overlapped
    restart: tuple[float, float] | None = None  # engine down at t0, serving again at t1
    start_cold: float = 0.0  # seconds of load + graph capture at the trace's start
    mfu_metrics: bool = True
    other_procs: list[tuple] = field(default_factory=list)  # (t0, t1, gpu, name, cmd, mem, frac)
    version: str = "0.11"
    power_limit: float | None = None
    reserve: float = 0.4  # SGLang's new-token reservation at admission
    seed_extra: int = 0


@dataclass
class Req:
    arr: float
    prompt: int
    cached: int
    out: int
    n: int
    logprobs: int = 0
    extra: float = 0.0
    max_tokens: int = 0
    sched: float | None = None
    done_prefill: float = 0.0
    first: float | None = None
    gen: float = 0.0
    prefill_s: float = 0.0
    preempted: int = 0
    special: bool = False


def _lognorm(rng, spec):
    med, sig, lo, hi = spec
    return int(clamp(med * math.exp(rng.gauss(0, sig)), lo, hi))


class ServeSim:
    def __init__(self, name: str, spec: ServeSpec, start_wall: float, seed: int):
        self.s, self.name = spec, name
        self.rng = rng = random.Random(seed)
        self.start = start_wall
        self.gm = GPUS[spec.gpu]
        self.llm = MODELS[spec.model]
        self.gpu_state = [GpuState(self.gm, i, rng, seed, power_limit=spec.power_limit)
                          for i in range(spec.gpus)]
        self.budget = spec.budget if spec.gpu in ("H100", "H200") else min(spec.budget, 2048)
        self.host = Host(spec.cpus, rng, spec.quota)
        self.ratio = 1.0
        self.kvb = self.llm.kv_bytes(spec.tp)
        self.w_gpu = self.llm.params * self.llm.wbytes / spec.tp
        usable = self.gm.mem_total * spec.mem_util - self.gm.reserved
        act = 3.2 * GiB if self.gm.mem_total > 40 * GiB else 1.6 * GiB
        pool_bytes = max(1 * GiB, usable - self.w_gpu - act)
        self.pool = spec.pool_tokens or int(pool_bytes // self.kvb // spec.block * spec.block)
        self.pool_bytes = self.pool * self.kvb
        self.mem_used = int(min(self.gm.mem_total * 0.985,
                                self.w_gpu + self.pool_bytes + act * 0.8 + 0.55 * GiB))
        self._init_engine_state()
        base_pid = 1000 + rng.randrange(1000, 60000)
        self.port = {"vllm": 8000, "sglang": 30000, "llamacpp": 8080}[spec.engine]
        self.base_pid = base_pid
        self._procs(start_wall - rng.uniform(3600, 86400 * 3))
        self.others: dict[int, Proc] = {}
        self.special_done: list[tuple[float, float]] = []

    # -------------------------------------------------------------- state
    def _init_engine_state(self):
        s = self.s
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd=0.0, steps=0.0,
                      flops=0.0, rd=0.0, wr=0.0)
        if s.engine == "vllm":
            self.h = [Hist("ttft", VLLM_TTFT), Hist("itl", VLLM_ITL), Hist("tpot", VLLM_ITL),
                      Hist("e2e", VLLM_E2E), Hist("queue", VLLM_E2E), Hist("params_n", VLLM_N),
                      Hist("params_max_tokens", VLLM_MAXTOK),
                      Hist("max_generation_tokens", VLLM_MAXTOK)]
        elif s.engine == "sglang":
            self.h = [Hist("ttft", SGL_TTFT), Hist("itl", SGL_ITL), Hist("e2e", SGL_E2E),
                      Hist("queue", SGL_QUEUE)]
        else:
            self.h = []
        self.hd = {h.name: h for h in self.h}
        self.specials = sorted(self.s.specials, key=lambda x: x.t)
        self.accept_gauge = None

    def _procs(self, started: float):
        s, rng = self.s, self.rng
        pid = self.base_pid
        model = self.llm.name
        user = "svc-inference"
        pod = f"inference/{s.engine}-{model.split('/')[-1].lower()[:20]}-{rng.randrange(16**5):05x}"
        cg = f"/kubepods/burstable/pod{rng.randrange(16**8):08x}/{rng.randrange(16**12):012x}"
        cont = f"containerd:{rng.randrange(16**12):012x}"
        self.procs: list[Proc] = []

        def mk(pidv, name, cmd, gpu, ppid, threads, mem=0):
            p = Proc(pidv, name, cmd, gpu, started + rng.uniform(0, 20), user=user, ppid=ppid,
                     container=cont, pod=pod, cgroup=cg, mem=mem,
                     rss=int(rng.uniform(2.5, 7) * GiB),
                     cpu_s=rng.uniform(2000, 40000), threads=threads)
            self.procs.append(p)
            return p
        if s.engine == "vllm":
            cmd = (f"/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model {model} "
                   f"--tensor-parallel-size {s.tp} --max-num-seqs {s.max_seqs} "
                   f"--max-num-batched-tokens {self.budget} --gpu-memory-utilization {s.mem_util}"
                   + (f" --speculative-config {{\"method\":\"{s.spec[0]}\",\"num_speculative_tokens\":{s.spec[1]}}}"
                      if s.spec else "") + f" --port {self.port}")
            api = mk(pid, "vllm", cmd, None, 1, [Thread(pid, pid, "vllm")])
            core_pid = pid + 37
            core = mk(core_pid, "VLLM::EngineCore", cmd, 0 if s.tp == 1 else None, pid,
                      [Thread(core_pid, core_pid, "VLLM::EngineCore"),
                       Thread(core_pid + 5, core_pid, "EngineCoreOut")])
            self.api, self.core = api, core
            self.launchers = []
            if s.tp == 1:
                core.mem = self.mem_used
                self.gpu_procs = {0: core}
                self.launchers = [core]
            else:
                self.gpu_procs = {}
                for r in range(s.tp):
                    wp = core_pid + 60 + r * 11
                    w = mk(wp, f"VLLM::Worker_TP{r}", cmd, r, core_pid,
                           [Thread(wp, wp, f"VLLM::Worker_TP{r}")], mem=self.mem_used)
                    self.gpu_procs[r] = w
                    self.launchers.append(w)
        elif s.engine == "sglang":
            cmd = (f"python3 -m sglang.launch_server --model-path {model} --tp {s.tp} "
                   f"--mem-fraction-static {s.mem_util} --max-running-requests {s.max_seqs} "
                   f"--chunked-prefill-size {self.budget} --enable-metrics --port {self.port}"
                   + (f" --speculative-algorithm {s.spec[0].upper()} --speculative-num-draft-tokens {s.spec[1] + 1}"
                      if s.spec else ""))
            api = mk(pid, "python3", cmd, None, 1, [Thread(pid, pid, "python3")])
            self.api = api
            self.gpu_procs, self.launchers = {}, []
            for r in range(s.tp):
                sp = pid + 20 + r * 9
                w = mk(sp, f"sglang::schedul" if s.tp == 1 else f"sglang::schedul", cmd, r, pid,
                       [Thread(sp, sp, "sglang::scheduler"[:15])], mem=self.mem_used)
                self.gpu_procs[r] = w
                self.launchers.append(w)
            self.core = self.launchers[0]
        else:
            cmd = (f"/opt/llama.cpp/build/bin/llama-server -m /models/{model.split('/')[-1].replace(':', '-')}.gguf "
                   f"-ngl 99 -c 16384 --parallel 4 --metrics --host 0.0.0.0 --port {self.port}"
                   + (" -md /models/draft-q8.gguf --draft-max 8" if s.spec else ""))
            p = mk(pid, "llama-server", cmd, 0, 1,
                   [Thread(pid, pid, "llama-server"), Thread(pid + 1, pid, "llama-server")],
                   mem=self.mem_used)
            p.user = "jupyter"
            self.api = self.core = p
            self.gpu_procs = {0: p}
            self.launchers = [p]
        self.all_tids = [t for p in self.procs for t in p.threads]

    # -------------------------------------------------------------- physics
    def step_time(self, B: int, P: int, ctx_tokens: float, t: float, k_spec: int = 0):
        """(GPU time of one step, its memory-bound part, its compute part) at the current
        clock; B decoding sequences, P prefill tokens, ctx_tokens KV tokens read."""
        s, llm, gm = self.s, self.llm, self.gm
        tok = B * (1 + k_spec) + P
        kv_read = ctx_tokens * self.kvb + P * self.kvb
        mem = (self.w_gpu + kv_read) / (gm.hbm_bw * 0.8)
        flops = 2 * llm.active / s.tp * tok
        flops += 4 * llm.layers * llm.head_dim * max(1, 32 // s.tp) * P * min(4096, P) * 0.5
        comp = flops / (gm.bf16_flops * 0.62)
        mem_f = mem / (0.82 + 0.18 * self.ratio)
        comp_f = comp / self.ratio
        g = max(mem_f, comp_f) + 0.2 * min(mem_f, comp_f)
        if s.tp > 1:
            g += llm.layers * 2 * (12e-6 + tok * 8192 * 2 / 300e9)
        if k_spec:
            g += k_spec * 0.11 * mem_f  # the drafter's own steps
        g += 0.0006  # sampler and small kernels
        return g, mem_f, comp_f

    # -------------------------------------------------------------- one tick
    def admit(self, now: float):
        s = self.s
        used = self.kv_used()
        if s.engine == "sglang":  # what running requests are still expected to need
            used += sum((r.prompt - r.cached - r.done_prefill
                         + s.reserve * max(0, min(r.max_tokens or r.out, 2048) - r.gen)) * r.n
                        for r in self.running)
        while self.waiting and len(self.running) < s.max_seqs:
            r = self.waiting[0]
            need = (r.prompt + r.gen) * r.n + s.block * r.n
            if s.engine == "sglang":  # SGLang reserves for the expected output too
                need += s.reserve * max(0, min(r.max_tokens or r.out, 2048) - r.gen) * r.n
            if used + need > self.pool * 0.985:
                break
            self.waiting.pop(0)
            if r.sched is None:
                r.sched = now
                if "queue" in self.hd:
                    self.hd["queue"].observe(now - r.arr)
            self.running.append(r)
            used += need

    def kv_used(self) -> float:
        u = 0.0
        blk = self.s.block
        for r in self.running:
            toks = (r.done_prefill + r.cached + r.gen) * r.n
            u += math.ceil(toks / blk) * blk
        return u

    def arrivals(self, t: float, dt: float):
        s, rng = self.s, self.rng
        mult = event_value(s, t, "rate", 1.0) * (1 + s.diurnal * t / 60.0)
        for tn in s.tenants:
            if not (tn.t0 <= t < tn.t1):
                continue
            f = clamp((t - tn.t0) / tn.ramp, 0, 1) if tn.ramp else 1.0
            lam = tn.rate * mult * f * dt
            if tn.label == "burst":
                lam *= event_value(s, t, "burst", 1.0)
            for _ in range(poisson(rng, lam)):
                p = _lognorm(rng, tn.prompt)
                o = _lognorm(rng, tn.out)
                c = int(p * tn.cached * rng.uniform(0.85, 1.0)) // s.block * s.block
                self.waiting.append(Req(t - rng.uniform(0.0, 0.012), p, c, o, tn.n,
                                        max_tokens=int(max(o, tn.out[3]))))
        while self.specials and self.specials[0].t <= t + dt:
            sp = self.specials.pop(0)
            self.waiting.append(Req(sp.t, sp.prompt, 0, sp.out, sp.n, sp.logprobs,
                                    sp.extra_step_s, sp.max_tokens or sp.out, special=True))

    def slice(self, t: float, dt: float, acc: dict):
        s, rng = self.s, self.rng
        self.arrivals(t, dt)
        self.admit(t)
        pref = [r for r in self.running if r.done_prefill < r.prompt - r.cached]
        dec = [r for r in self.running if r.done_prefill >= r.prompt - r.cached]
        B = sum(r.n for r in dec)
        ctx = sum((r.prompt + r.gen) * r.n for r in dec)
        extra = sum(r.extra for r in self.running if r.extra and r.done_prefill >= r.prompt - r.cached)
        k = s.spec[1] if s.spec else 0
        a = event_value(s, t, "accept", s.spec[2]) if s.spec else 0.0
        share = 1.0 - event_value(s, t, "share", 0.0)
        cpu_share = event_value(s, t, "cpu_share", 1.0)
        jitter = event_value(s, t, "jitter", None)  # (probability per step, mean stall s)
        pending = sum(r.prompt - r.cached - r.done_prefill for r in pref)
        host_h = s.host_step_s / cpu_share
        remaining = dt
        steps_mix = steps_dec = 0.0
        t_mix = t_dec = 0.0
        if B > 0:
            t_dec = max(self.step_time(B, 0, ctx, t, k)[0] / share + extra, host_h) + 0.0003
        busy = tensor = dram = 0.0
        stall_total = 0.0
        if pending > 0:
            chunk = max(256, min(self.budget - B * (1 + k), pending))
            g, m, c = self.step_time(B, chunk, ctx, t, k if B else 0)
            g_eff = g / share + 0.6 * extra
            t_mix = max(g_eff, host_h) + 0.0003
            if jitter:
                stall = jitter[0] * jitter[1]
                t_mix += stall
            steps_mix = min(pending / chunk, remaining / t_mix)
            remaining -= steps_mix * t_mix
            busy += steps_mix * (g + 0.6 * extra)
            tensor += steps_mix * c * 0.8
            dram += steps_mix * m * 0.85
            left = chunk * steps_mix
            t_start = dt - remaining - steps_mix * t_mix
            done_tok = 0.0
            for r in pref:
                need = r.prompt - r.cached - r.done_prefill
                take = min(need, left)
                r.done_prefill += take
                done_tok += take
                r.prefill_s += t_mix * max(1.0, take / max(1, chunk))
                left -= take
                if r.done_prefill >= r.prompt - r.cached - 0.5:
                    r.done_prefill = r.prompt - r.cached
                    # the step in which its last chunk ran, then one sampling step
                    # its last chunk's step, counted for its own share of the chunk (the
                    # slice gathers arrivals that the engine would have met spread out)
                    r.first = t + t_start + (math.ceil(done_tok / chunk) - 1) * t_mix \
                        + (take / chunk) * t_mix + rng.uniform(0.3, 1.0) * (t_dec or 0.008)
                    self.first_token(r)
                if left <= 0:
                    break
        if B > 0 and remaining > 1e-6:
            g, m, c = self.step_time(B, 0, ctx, t, k)
            g_eff = g / share + extra
            t_dec = max(g_eff, host_h) + 0.0003
            if jitter:
                t_dec += jitter[0] * jitter[1]
            steps_dec = remaining / t_dec
            busy += steps_dec * (g + extra * 0.6)
            tensor += steps_dec * c * 0.7
            dram += steps_dec * m * 0.88
            remaining = 0.0
        if jitter:
            stall_total = (steps_mix + steps_dec) * jitter[0] * jitter[1]
        steps = steps_mix + steps_dec
        acc["steps"] += steps
        acc["stall"] += stall_total
        acc["busy"] += busy * share + (dt * (1 - share) if steps else 0)
        acc["busy_own"] += busy
        acc["tensor"] += tensor
        acc["dram"] += dram
        acc["slices"].append(clamp((busy * share + (dt * (1 - share) if steps else 0)) / dt, 0, 1))
        acc["host_busy"] += min(dt, steps * s.host_step_s * 1.6) if steps else 0.0
        # tokens per step per sequence (speculative: accepted drafts + the bonus token)
        per = 1.0
        if s.spec and steps:
            e_acc = sum(a ** i for i in range(1, k + 1))
            per = 1.0 + e_acc
            nd = B * steps
            self.c["drafts"] += nd
            self.c["dtok"] += nd * k
            self.c["acc"] += nd * e_acc
            self.accept_gauge = (a, per)
        if steps:
            self.c["steps"] += steps
            self.c["fwd"] += busy
            toks_proc = B * (1 + k) * steps + (pending - sum(
                r.prompt - r.cached - r.done_prefill for r in pref))
            self.c["flops"] += 2 * self.llm.active / s.tp * toks_proc
            self.c["rd"] += steps * self.w_gpu + (steps_mix + steps_dec) * ctx * self.kvb
            self.c["wr"] += toks_proc * self.kvb
        # decode progress, ITL observations, finishes
        if dec and steps:
            itl = self.hd.get("itl")
            if itl is not None:
                nseq = sum(r.n for r in dec)
                if steps_mix:
                    itl.spread(t_mix, round(steps_mix * nseq), rng, 0.6)
                if steps_dec:
                    itl.spread(t_dec, round(steps_dec * nseq), rng, 0.5)
            for r in dec:
                r.gen += steps * per
            self.c["gen"] += steps * per * B
            self.c["dec_s"] += dt * len(dec)
        # KV growth: preempt when the pool cannot hold it
        used = self.kv_used()
        while used > self.pool and len(self.running) > 1:
            victim = self.running.pop()  # the newest request goes back to the queue
            self.c["pre"] += 1
            if s.engine == "sglang":
                self.c["retr"] += 1
                self.c["retr_tok"] += victim.prompt
            victim.done_prefill = 0.0
            victim.preempted += 1
            victim.prompt_re = True
            self.waiting.insert(0, victim)
            used = self.kv_used()
        done = [r for r in self.running if r.done_prefill >= r.prompt - r.cached and r.gen >= r.out]
        for r in done:
            self.running.remove(r)
            self.finish(r, t + dt)

    def first_token(self, r: Req):
        if r.preempted:
            return
        self.c["prompt"] += r.prompt
        self.c["cached"] += r.cached
        self.c["pf_s"] += r.prefill_s
        if "ttft" in self.hd:
            self.hd["ttft"].observe(max(0.002, r.first - r.arr) * self.rng.uniform(0.95, 1.05))

    def finish(self, r: Req, now: float):
        rng = self.rng
        self.c["fin"] += 1
        if r.special:
            self.special_done.append((r.arr, now))
        e2e = now - r.arr - rng.uniform(0, 0.2)
        if "e2e" in self.hd:
            self.hd["e2e"].observe(max(0.01, e2e))
        if "tpot" in self.hd and r.first is not None and r.out > 1:
            self.hd["tpot"].observe(max(0.001, (now - r.first) / (r.out - 1)))
        if "params_n" in self.hd:
            self.hd["params_n"].observe(r.n)
            self.hd["params_max_tokens"].observe(r.max_tokens or r.out)
            self.hd["max_generation_tokens"].observe(r.out)

    # -------------------------------------------------------------- frames
    def run(self):
        s, rng = self.s, self.rng
        n_ticks = int(s.duration / s.tick)
        mono0 = rng.uniform(5000, 900000)
        cores = tuple(range(s.cpus))
        down = False
        loading_until = s.start_cold if s.start_cold else -1.0
        for i in range(n_ticks):
            t = i * s.tick
            acc = dict(steps=0.0, busy=0.0, busy_own=0.0, tensor=0.0, dram=0.0, slices=[],
                       host_busy=0.0, stall=0.0)
            # the engine's restart: down, then loading, then serving with counters from zero
            if s.restart and s.restart[0] <= t < s.restart[1] - 45:
                if not down:
                    down = True
                    self.waiting, self.running = [], []
                    for p in self.procs:
                        p.mem = 0
            elif down:
                loading_until = s.restart[1]
                down = False
                self._init_engine_state()
                self.base_pid += 4000 + rng.randrange(500)
                self._procs(self.start + t - 40)
                for p in self.procs:
                    p.cpu_s = rng.uniform(40, 90)
            loading = t < loading_until and (not s.restart or t >= s.restart[0])
            serving = not down and not loading
            sub = 4
            if serving:
                for j in range(sub):
                    self.slice(t + j * s.tick / sub, s.tick / sub, acc)
            frame = self.frame(i, t, acc, mono0, cores, down, loading, loading_until)
            yield frame

    def frame(self, i, t, acc, mono0, cores, down, loading, loading_until):
        s, rng, gm = self.s, self.rng, self.gm
        tick = s.tick
        busy = clamp(acc["busy"] / tick, 0, 1)
        own = clamp(acc["busy_own"] / tick, 0, 1)
        tensor = clamp(acc["tensor"] / tick, 0, 1)
        dram = clamp(acc["dram"] / tick, 0, 1)
        clock_cap = event_value(s, t, "clock", None)
        reasons = event_value(s, t, "reasons", ())
        temp_add = event_value(s, t, "temp", 0.0)
        others_frac = event_value(s, t, "share", 0.0)
        mem_used_now = self.mem_used
        cold_phase = None
        if loading:
            left = loading_until - t
            if left > 25:  # weights streaming in
                frac = clamp((45 - left) / 20, 0.05, 1)
                mem_used_now = int(self.w_gpu * frac + 0.5 * GiB)
                busy, own, tensor, dram = 0.02, 0.02, 0.0, 0.01
                cold_phase = "load"
            else:  # profiling run, KV pool allocated, CUDA graph capture: many tiny launches
                mem_used_now = self.mem_used
                busy = own = rng.uniform(0.55, 0.95)
                tensor, dram = 0.02, 0.04
                cold_phase = "capture"
        gsamples = []
        ratio_min = 1.0
        caps = {}
        for g in self.gpu_state:
            own_cap = event_value(s, t, f"clock{g.index}", None)
            caps[g.index] = own_cap
        slow = min([c for c in caps.values() if c is not None], default=None)
        for g in self.gpu_state:
            own_cap = caps[g.index]
            if down:
                gs, r = g.sample(busy=0, sm=0, occ=0, tensor=0, dram=0, mem_used=0,
                                 tick_s=tick, idle_clock=True)
            else:
                sm = own * (0.78 if tensor < 0.2 else 0.9) + others_frac * 0.5
                if cold_phase == "capture":
                    sm = busy * 0.12
                tens = tensor
                if slow is not None and own_cap is None and busy > 0.05:
                    # a tensor-parallel peer finishes its share early and waits in NCCL
                    sm = sm * (0.55 + 0.45 * slow) + 0.04
                    tens = tensor * slow
                occ = sm * (0.22 + 0.3 * tens)
                slices = acc["slices"] if acc["slices"] else None
                cap = clock_cap if own_cap is None else (own_cap if clock_cap is None else min(own_cap, clock_cap))
                rs = tuple(reasons) + (tuple(event_value(s, t, f"reasons{g.index}", ())) if own_cap is not None else ())
                gs, r = g.sample(busy=busy, sm=clamp(sm, 0, 1), occ=occ, tensor=tens,
                                 dram=clamp(dram + others_frac * 0.1, 0, 1),
                                 mem_used=mem_used_now + self._other_mem(g.index, t),
                                 tick_s=tick, busy_samples=slices, clock_cap=cap,
                                 reasons=rs, temp_target_add=temp_add + event_value(s, t, f"temp{g.index}", 0.0),
                                 nvlink=(busy * 900 * (s.tp > 1)), pcie=busy * 40)
            ratio_min = min(ratio_min, r)
            gsamples.append(gs)
        self.ratio = ratio_min
        # processes: the engine's, and any other tenant's on these GPUs
        for gi, p in self.gpu_procs.items():
            p.mem = 0 if down else mem_used_now
            p.sm_util = 0 if down else clamp(own * 100 * rng.uniform(0.9, 1.05), 0, 100)
            p.mem_util = 0 if down else clamp(dram * 100 * rng.uniform(0.9, 1.1), 0, 100)
        other = self._others(t, down)
        # CPU: the engine's threads and the host
        steps = acc["steps"]
        cpu_share = event_value(s, t, "cpu_share", 1.0)
        want_core = 0.0 if down else (0.95 if steps or cold_phase else 0.04)
        got_core = want_core * min(1.0, cpu_share * 1.05)
        self.core.threads[0].cpu_s += got_core * tick * rng.uniform(0.97, 1.0)
        if len(self.core.threads) > 1:
            self.core.threads[1].cpu_s += (0.08 if steps else 0.005) * tick
        for w in self.launchers:
            if w is not self.core:
                w.threads[0].cpu_s += got_core * 0.92 * tick
        api_rate = 0.06 + 0.004 * len(self.running) + 0.0
        if self.api is not self.core and not down:
            self.api.threads[0].cpu_s += api_rate * tick * min(1, cpu_share * 1.3)
        for p in self.procs:
            p.cpu_s = sum(th.cpu_s for th in p.threads) + p.rss / GiB * 0  # tree total
        psi = event_value(s, t, "psi", 0.6 + 0.5 * busy)
        rq = event_value(s, t, "rq", 2 + 1.5 * len(self.launchers) * (steps > 0))
        thr = event_value(s, t, "throttled", 0.0)
        invol = event_value(s, t, "invol", 6.0 + 4 * len(self.launchers))
        busy_cores = sum(1 for _ in self.launchers) * (want_core) + api_rate + 0.7
        host, rqv = self.host.step(tick, busy_cores + event_value(s, t, "noise_cores", 0.0), psi, rq,
                                   thr, invol, 400 + 30 * steps / tick)
        # eBPF launch probes: graph launches per decode step, kernels per prefill chunk
        launch = ()
        offcpu = None
        if s.ebpf and not down:
            jit = event_value(s, t, "jitter", None)
            tail = 0.0
            tail_ns = (2e5, 5e6)
            if jit:
                tail = jit[0]
                tail_ns = (jit[1] * 0.3e9, jit[1] * 3e9)
            lh = []
            for w in self.launchers:
                n_graph = int(steps * (1 if s.engine != "llamacpp" else 0))
                n_kern = int(steps * (14 if s.engine != "llamacpp" else 700) + 30 * tick)
                n_cpy = int(steps * 3 + 5)
                if cold_phase == "capture":
                    n_kern, n_graph = int(40000 * tick), 0
                lh.append(launch_hist("cudaGraphLaunch", w.pid, n_graph, 9000, rng, tail, tail_ns))
                lh.append(launch_hist("cuLaunchKernel", w.pid, n_kern, 3200, rng, tail * 0.5, tail_ns))
                lh.append(launch_hist("cudaMemcpyAsync", w.pid, n_cpy, 6000, rng, tail, tail_ns))
            launch = tuple(x for x in lh if x.count)
            offcpu = poisson(rng, (invol * 0.4) * tick)
            host = type(host)(cpu_pct=host.cpu_pct, offcpu_switches=offcpu,
                              cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                              run_queue=host.run_queue, cpus=host.cpus,
                              ctx_switches_total=host.ctx_switches_total)
        procs = proc_samples(self.procs + other)
        label = self.api.cmdline.split(" --")[0][-60:]
        pinned = pinned_sample(label, self.procs, self.host, rqv, cores, (self.port,))
        engine = None if (down or loading) else self.engine_sample(t)
        srcs = {"nvml": status(0.0, rng.uniform(0.004, 0.009), 0.006),
                "host": status(0.0, rng.uniform(0.0004, 0.0009), 0.0006),
                "pin": status(0.0, rng.uniform(0.01, 0.02), 0.015),
                "procfs": status(0.0, rng.uniform(0.0002, 0.0004), 0.0003, detail="/proc")}
        url = f"http://127.0.0.1:{self.port}/metrics"
        slow = event_value(s, t, "scrape_slow", 0.0)
        if engine is None:
            srcs["engine"] = status(ok=False, reason=(
                f"engine unreachable: cannot reach {url}: Connection refused" if down or loading
                else "no engine found (pass --engine URL)"), med=0.02)
        else:
            poll = rng.uniform(0.015, 0.04) + (rng.uniform(0, slow) if slow else 0)
            srcs["engine"] = status(0.0, poll, 0.025)
        if s.ebpf:
            srcs["ebpf"] = status(0.0, rng.uniform(0.001, 0.003), 0.002,
                                    detail="uprobes: libcudart.so.12, libcuda.so.1")
        wall = self.start + t + rng.uniform(0, 0.002)
        return make_frame(i, wall, self._mono(i, t), gpus=tuple(gsamples), processes=procs,
                          engine=engine, launch=launch, host=host, pinned=pinned,
                          sources=srcs)

    def _mono(self, i, t):
        if not hasattr(self, "_mono0"):
            self._mono0 = self.rng.uniform(5000, 900000)
        return self._mono0 + t

    def _other_mem(self, gi, t):
        m = 0
        for (t0, t1, g, name, cmd, mem, frac) in self.s.other_procs:
            if g == gi and t0 <= t < t1:
                m += mem
        return m

    def _others(self, t, down):
        out = []
        for k, (t0, t1, g, name, cmd, mem, frac) in enumerate(self.s.other_procs):
            if not (t0 <= t < t1):
                continue
            p = self.others.get(k)
            if p is None:
                pid = self.base_pid + 20000 + k * 97
                p = Proc(pid, name, cmd, g, self.start + t0 - 2, user="dsci-" + "abcdefgh"[k],
                         ppid=pid - 3, container="", cgroup="/user.slice/user-1042.slice",
                         rss=int(3.5 * GiB), cpu_s=12.0,
                         threads=[Thread(pid, pid, name[:15])])
                self.others[k] = p
            p.mem = mem
            p.sm_util = clamp(frac * 100 * self.rng.uniform(0.85, 1.1), 0, 100)
            p.mem_util = clamp(frac * 40 * self.rng.uniform(0.8, 1.2), 0, 100)
            p.cpu_s += 0.9 * self.s.tick
            out.append(p)
        return out

    def engine_sample(self, t) -> EngineSample:
        s, c, rng = self.s, self.c, self.rng
        url = f"http://127.0.0.1:{self.port}/metrics"
        running = len(self.running)
        waiting = len(self.waiting)
        kv_used = self.kv_used()
        kv = clamp(kv_used / self.pool, 0, 1)
        hist = tuple(h.sample() for h in self.h)
        pids = tuple(sorted(p.pid for p in self.procs))
        busiest = max(self.all_tids, key=lambda th: th.cpu_s)
        common = dict(
            url=url, model=self.llm.name, generation_tokens_total=float(int(c["gen"])),
            prompt_tokens_total=float(int(c["prompt"])),
            requests_running=float(running), requests_waiting=float(waiting),
            tensor_parallel=s.tp, data_parallel=s.dp, pids=pids,
            time_mono_s=round(self._mono(0, t) + 0.02, 6),
            time_wall_s=round(self.start + t + rng.uniform(0.012, 0.04), 6),
            cpu_s=round(sum(p.cpu_s for p in self.procs), 2), ctx_involuntary=self.host.invol,
            busiest_thread_cpu_s=round(busiest.cpu_s, 2),
            busiest_thread=f"{busiest.tid} {busiest.name}",
            cpu_quota_cores=self.host.quota, cpu_periods=self.host.periods,
            cpu_throttled_periods=self.host.throttled)
        if s.engine == "vllm":
            extra = {}
            if s.spec:
                extra = dict(spec_drafts_total=float(int(c["drafts"])),
                             spec_draft_tokens_total=float(int(c["dtok"])),
                             spec_accepted_tokens_total=float(int(c["acc"])))
            if s.mfu_metrics:
                extra.update(flops_total=float(int(c["flops"])), read_bytes_total=float(int(c["rd"])),
                             write_bytes_total=float(int(c["wr"])))
            return EngineSample(
                kind="vllm", prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(c["fin"]), kv_usage_ratio=round(kv, 6),
                num_gpu_blocks=self.pool // s.block, block_size=s.block,
                kv_pool_bytes=int(self.pool_bytes), kv_pool_tokens=self.pool,
                cache_dtype="auto", histograms=hist, preemptions_total=float(c["pre"]),
                waiting_by_reason={"capacity": float(waiting), "deferred": 0.0},
                prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                corrupted_requests_total=0.0, **extra, **common)
        if s.engine == "sglang":
            extra = {}
            if s.spec and self.accept_gauge:
                a, per = self.accept_gauge
                extra = dict(spec_accept_ratio=round(clamp(a * rng.uniform(0.97, 1.03), 0, 1), 4),
                             spec_accept_length=round(per * rng.uniform(0.98, 1.02), 4))
            evict = max(0.0, (self.pool - kv_used) * 0.35 * (1 if self.running else 0.5))
            return EngineSample(
                kind="sglang", prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(c["fin"]), kv_usage_ratio=round(kv, 6),
                kv_pool_tokens=self.pool, histograms=hist,
                retracted_requests_total=float(c["retr"]),
                retracted_input_tokens_total=float(c["retr_tok"]),
                kv_used_tokens=float(int(kv_used)), kv_free_tokens=float(int(self.pool - kv_used)),
                kv_evictable_tokens=float(int(evict)),
                forward_seconds_total=round(c["fwd"], 4), **extra, **common)
        extra = {}
        if s.spec:
            extra = dict(spec_drafts_total=float(int(c["drafts"])),
                         spec_draft_tokens_total=float(int(c["dtok"])),
                         spec_accepted_tokens_total=float(int(c["acc"])))
        return EngineSample(
            kind="llamacpp", prompt_tokens_cached_total=float(int(c["cached"])),
            prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
            decode_steps_total=float(int(c["steps"])), **extra, **common)
