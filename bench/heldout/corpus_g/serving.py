"""A serving engine at tick resolution, driven by one step-time model.

Each tick: requests arrive (Poisson), are admitted while the batch and the KV pool have
room, prompts are prefilled in chunks (vLLM and llama.cpp mix a chunk into a decode step;
SGLang runs prefill batches that pause the decodes), every running request gains one
token per step (1 + accepted drafts with speculative decoding), finished requests leave.
A step costs, on each tensor-parallel rank, the weight and KV reads at HBM speed and the
matmul FLOPs at the clock the board allows, plus the all-reduce over NVLink, plus the
host's time between steps (scheduling, sampling, launches; stretched when the engine's
threads lose CPU or the launch thread is delayed).  The same numbers give tokens/s, the
latency histograms, GPU-Util, SM / DRAM / tensor activity and so power and clocks.

Counters move when the engine moves them: vLLM V1 counts generated tokens every step
and prompt tokens when a prompt's prefill completes; SGLang's realtime_tokens_total moves
every step but its generation/prompt_tokens_total (older releases' only counters) when a
request finishes; llama.cpp's tokens_predicted_total when a slot finishes
(server_metrics::on_prediction), prompt_tokens_total when a prompt is evaluated
(on_prompt_eval), n_decode_total every llama_decode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from . import frames as F
from .hw import Act, Board


@dataclass(frozen=True)
class Model:
    name: str
    params: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    heads: int
    bytes_per_param: float = 2.0
    kv_bytes: int = 2

    def weights(self, tp: int) -> int:
        return int(self.params * self.bytes_per_param / tp)

    def kv_per_token(self, tp: int) -> int:
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kv_bytes

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 8, 128, 4096, 32),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 4, 128, 3584, 28),
    "qwen05b": Model("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 24, 2, 64, 896, 14),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8, 128, 8192, 64),
    "qwen32b": Model("Qwen/Qwen3-32B", 32.8e9, 64, 8, 128, 5120, 64),
    "mistral24b": Model("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 40, 8, 128, 5120, 32),
    "r1d14b": Model("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 14.8e9, 48, 8, 128, 5120, 40),
    "llama405fp8": Model("meta-llama/Llama-3.1-405B-Instruct-FP8", 405e9, 126, 8, 128, 16384, 128,
                         bytes_per_param=1.0, kv_bytes=1),
    "gguf8b_q4": Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 32, 8, 128, 4096, 32,
                       bytes_per_param=0.61),
    "gguf32b_q4": Model("Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf", 32.8e9, 64, 8, 128, 5120, 40,
                        bytes_per_param=0.60),
    "gguf70b_q8": Model("Llama-3.3-70B-Instruct-Q8_0.gguf", 70.6e9, 80, 8, 128, 8192, 64,
                        bytes_per_param=1.06),
}


@dataclass
class Req:
    arr: float
    prompt: int
    cached: int
    out: int
    n: int = 1
    max_tokens: int = 0
    extra: float = 0.0  # GPU seconds per step this request adds (logprobs over the vocab)
    done: int = 0  # prompt tokens computed
    gen: int = 0
    t_sched: float | None = None
    t_first: float | None = None
    recompute: int = 0


def _const(v):
    return lambda t: v


@dataclass
class Hooks:
    """What a scenario changes, each a function of seconds since the trace began."""

    rate: object = None  # requests/s
    prompt: object = None  # mean prompt tokens
    out: object = None  # mean output tokens
    cached: object = None  # fraction of the prompt found in the prefix cache
    inject: object = None  # t -> list of dicts (extra Req fields) arriving now
    cpu_share: object = None  # t -> share of CPU the engine threads get (1: all they want)
    host_busy: object = None  # t -> cores busy with other work on the host
    jitter: object = None  # t -> (share of launch calls delayed, delay in us)
    neighbor: object = None  # t, gpu -> (share of SM time taken, bytes, label) or None
    power_limit: object = None  # t, gpu -> watts
    forced: object = None  # t, gpu -> {reason: clock factor}
    heat: object = None  # t, gpu -> extra degrees
    accept: object = None  # t -> draft-token acceptance probability
    down: object = None  # t -> None or "stopped" / "loading" / "warmup"
    slow_rank: object = None  # t, gpu -> factor >= 1 on that rank's compute
    config: object = None  # (t, serving) -> None: change the engine's settings (a restart)


class Serving:
    def __init__(self, kind, model: Model, boards: list[Board], tick: float, rng, hooks: Hooks, *,
                 max_seqs=256, budget=8192, pool_tokens=None, mem_util=0.9, eager=False,
                 spec_k=0, new_sglang=True, block=16, slots=4, max_len=32768, mfu=False,
                 port=8000, ebpf=False, cpus=64, gpu_index0=0, other_host_procs=()):
        self.kind, self.m, self.boards, self.dt, self.rng, self.h = kind, model, boards, tick, rng, hooks
        self.tp = len(boards)
        self.max_seqs = slots if kind == "llamacpp" else max_seqs
        self.budget = 2048 if kind == "llamacpp" else budget
        self.eager, self.spec_k, self.new_sglang, self.block = eager, spec_k, new_sglang, block
        self.max_len, self.mfu, self.ebpf = max_len, mfu, ebpf
        self.url = f"http://127.0.0.1:{port}/metrics"
        spec = boards[0].spec
        w = model.weights(self.tp)
        self.kvb = model.kv_per_token(self.tp)
        if pool_tokens is None:
            pool_bytes = mem_util * spec.mem_total - w - 3.5e9
            pool_tokens = int(pool_bytes / self.kvb)
        if kind == "llamacpp":
            pool_tokens = max_len  # -c: the context is allocated whole at start
        self.pool = int(pool_tokens) // block * block
        self.engine_mem = int(w + self.pool * self.kvb + 2.6e9) if kind != "llamacpp" else \
            int(w + self.pool * self.kvb + 0.9e9)
        self.w = w
        self.waiting: list[Req] = []
        self.prefilling: list[Req] = []
        self.running: list[Req] = []
        self.carry = 0.0
        self.cpus = cpus
        self.host = F.Host(cpus, rng)
        self.reset_counters()
        self.last_act = [Act() for _ in boards]
        self.t0_wall = 0.0
        base_pid = 2000 + int(rng.random() * 30000)
        self.base_pid = base_pid
        self.tree = F.Tree({"vllm": f"{base_pid + 2} VLLM::EngineCor", "sglang": f"{base_pid + 3} sglang::schedul",
                            "llamacpp": f"{base_pid} llama-server"}[kind], rng)
        self.procs = []
        for r, b in enumerate(boards):
            if kind == "vllm":
                name = "VLLM::EngineCore" if self.tp == 1 else f"VLLM::Worker_TP{r}"
                cmd = "vllm serve " + model.name + (f" --tensor-parallel-size {self.tp}" if self.tp > 1 else "")
            elif kind == "sglang":
                name = f"sglang::scheduler_TP{r}"
                cmd = f"python -m sglang.launch_server --model-path {model.name} --tp {self.tp}"
            else:
                name = "llama-server"
                cmd = f"llama-server -m /models/{model.name} -ngl 99 -c {max_len} -np {slots} --metrics"
            self.procs.append(F.Proc(base_pid + 2 + r if self.tp > 1 or kind != "llamacpp" else base_pid,
                                     b.index, name, cmd, 1.8e9 - 5000, ppid=base_pid))
        self.other_procs = {}
        self.state = "up"
        self.other_host = other_host_procs

    def reset_counters(self):
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pref_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rbytes=0.0, wbytes=0.0, gen_fin=0.0, prompt_fin=0.0)
        if self.kind == "vllm":
            names = [("ttft", F.VLLM_TTFT), ("itl", F.VLLM_ITL), ("tpot", F.VLLM_ITL), ("e2e", F.VLLM_E2E),
                     ("queue", F.VLLM_E2E), ("params_n", F.VLLM_N),
                     ("params_max_tokens", F.one_two_five(self.max_len)),
                     ("max_generation_tokens", F.one_two_five(self.max_len))]
        elif self.kind == "sglang":
            names = [("ttft", F.SGL_TTFT), ("itl", F.SGL_ITL), ("e2e", F.SGL_E2E), ("queue", F.SGL_QUEUE)]
        else:
            names = []
        self.hist = {n: F.Hist(n, b) for n, b in names}

    # ------------------------------------------------------------ physics

    def step_cost(self, B: int, ctx_sum: float, P: float, p_ctx: float, f: float, slow: float):
        """(busy seconds, bytes read, FLOPs) of one step on one rank."""
        s, m = self.boards[0].spec, self.m
        bw = s.hbm_gbps * 1e9 * 0.82 * (0.7 + 0.3 * f)
        t_mem = (self.w + ctx_sum * self.kvb + P * self.kvb) / bw
        fl = 2 * m.params / self.tp * (B + P) + 4 * m.layers * m.hidden / self.tp * P * p_ctx
        fl += 4 * m.layers * m.hidden / self.tp * ctx_sum  # decode attention
        eff = 0.62 if P > 512 else 0.45
        t_c = fl / (s.tflops * 1e12 * eff * f) * slow
        t = max(t_mem, t_c) + 0.15 * min(t_mem, t_c) + m.layers * 7e-6
        if self.tp > 1:
            t += 2 * m.layers * (10e-6 + (B + P) * m.hidden * 2 * 2 / (s.nvlink_gbps * 1e9 or 25e9))
        if self.kind == "llamacpp":
            t *= 1.25  # ggml's quantized matmuls reach less of the peak
        return t, self.w + ctx_sum * self.kvb + P * self.kvb, fl

    def mix(self, t_busy, bytes_, fl, B, f, P):
        s = self.boards[0].spec
        dram = min(0.93, bytes_ / (s.hbm_gbps * 1e9) / max(t_busy, 1e-9))
        tensor = min(0.95, fl / (s.tflops * 1e12 * f) / max(t_busy, 1e-9))
        fill = min(1.0, self.w / 3e9 + (B + P / 8) / 96)
        sm = max(tensor + 0.05, 0.18 + 0.72 * fill)
        return Act(1.0, min(0.99, sm), 0.16 + 0.3 * dram, dram, tensor)

    # ------------------------------------------------------------ one tick

    def tick(self, t: float):
        h, rng, dt = self.h, self.rng, self.dt
        if h.config:
            h.config(t, self)
        down = h.down(t) if h.down else None
        if down:
            return self._down(t, down)
        if self.state != "up":
            self.state = "up"
        rate = h.rate(t)
        for _ in range(_poisson(rate * dt, rng)):
            p = max(16, int(h.prompt(t) * math.exp(rng.gauss(0, 0.55))))
            p = min(p, self.max_len - 64)
            o = max(2, int(h.out(t) * math.exp(rng.gauss(0, 0.6))))
            cf = h.cached(t) if h.cached else 0.0
            cached = int(p * min(0.98, max(0.0, cf + rng.gauss(0, 0.05)))) // self.block * self.block
            self.waiting.append(Req(t + rng.random() * dt, p, cached, o, 1, max(o, 256 * (1 + int(rng.random() * 8)))))
        if h.inject:
            for spec in h.inject(t) or ():
                self.waiting.append(Req(t, **spec))
        used = self._kv_used()
        # admission (FCFS)
        while self.waiting and len(self.running) + len(self.prefilling) < self.max_seqs:
            r = self.waiting[0]
            need = self._blocks(r.prompt + r.gen + 1)
            if used + need > self.pool * (0.97 if self.kind == "sglang" else 1.0):
                break
            self.waiting.pop(0)
            used += need
            if r.t_sched is None:
                r.t_sched = max(r.arr, t)
            self.prefilling.append(r)
        B = len(self.running)
        ctx_sum = float(sum(r.prompt + r.gen for r in self.running))
        P = float(sum(r.prompt + r.recompute - r.cached - r.done for r in self.prefilling))
        p_ctx = (sum(r.prompt for r in self.prefilling) / len(self.prefilling) / 2) if self.prefilling else 0
        # clocks from the previous tick's work (the power controller acts within milliseconds)
        fs, slows = [], []
        for g, b in enumerate(self.boards):
            if h.power_limit:
                b.power_limit = h.power_limit(t, g)
            b.forced = h.forced(t, g) if h.forced else {}
            b.extra_heat = h.heat(t, g) if h.heat else 0.0
            fs.append(b.clock_for(self.last_act[g]))
            slows.append(h.slow_rank(t, g) if h.slow_rank else 1.0)
        share = [0.0] * self.tp
        if h.neighbor:
            for g in range(self.tp):
                nb = h.neighbor(t, g)
                share[g] = nb[0] if nb else 0.0
        extra = sum(r.extra for r in self.running) + sum(r.extra for r in self.prefilling) * 0.5

        def cost(Bx, Px):
            per = []
            for g in range(self.tp):
                tb, by, fl = self.step_cost(Bx, ctx_sum if Bx else 0, Px, p_ctx, fs[g], slows[g])
                tb = (tb + extra) / (1 - share[g])
                per.append((tb, by, fl))
            return per

        # host time between steps
        cpu = h.cpu_share(t) if h.cpu_share else 1.0
        jit = h.jitter(t) if h.jitter else (0.0, 0.0)
        kernels = self.m.layers * 14 if self.eager else 24
        launch_us = 4.5 if self.eager else 6.0
        t_host = 0.00035 + 9e-6 * B + kernels * launch_us * 1e-6 * (0.0 if self.eager else 0.3)
        if self.kind == "llamacpp":
            t_host = 0.0006 + 4e-6 * B
        if self.spec_k:
            t_host += 0.0004
        t_host = t_host / max(cpu, 0.05) + (1 - cpu) * 0.004
        t_host += kernels * jit[0] * jit[1] * 1e-6
        if extra:
            t_host += 0.2 * extra  # logprob tensors serialised on the host as well

        mixed = self.kind != "sglang"
        chunk = max(256, self.budget - B) if mixed else self.budget
        launch_wall = kernels * launch_us * 1e-6 if self.eager else 0.0
        per_d = cost(B, 0) if B else None
        t_d = max(max(x[0] for x in per_d), launch_wall) + t_host if B else 0.0
        m_steps = 0.0
        t_m = 0.0
        per_m = None
        if P > 0:
            c_eff = min(chunk, P)
            per_m = cost(B if mixed else 0, c_eff)
            t_m = max(max(x[0] for x in per_m), launch_wall) + t_host
            need = math.ceil(P / c_eff)
            m_steps = min(float(need), dt / t_m)
        t_left = dt - m_steps * t_m
        pure = t_left / t_d if B and t_left > 0 else 0.0
        # spec decode
        acc_per_step = 0.0
        if self.spec_k and B:
            a = h.accept(t) if h.accept else 0.7
            acc_per_step = sum(a ** i for i in range(1, self.spec_k + 1))
            draft_cost = 1 + 0.09 * self.spec_k
            t_d = t_d * draft_cost
            pure = t_left / t_d if t_left > 0 else 0.0
        steps = (m_steps if mixed else 0.0) + pure
        # prefill progress
        done_tok = min(P, m_steps * (min(chunk, P) if P else 0))
        finished_prefill = []
        left = done_tok
        tm_total = m_steps * t_m
        acc_done = 0.0
        for r in list(self.prefilling):
            need = r.prompt + r.recompute - r.cached - r.done
            take = min(need, left)
            r.done += int(take)
            left -= take
            acc_done += take
            if r.done >= r.prompt + r.recompute - r.cached:
                when = t + tm_total * (acc_done / max(done_tok, 1))
                finished_prefill.append((r, when))
                self.prefilling.remove(r)
            if left <= 0:
                break
        # decode progress
        self.carry += steps
        whole = int(self.carry)
        self.carry -= whole
        tps = 1.0 + acc_per_step
        gen = 0.0
        done_reqs = []
        for r in self.running:
            gain = min(r.out - r.gen, int(round(whole * tps + rng.random() - 0.5)) if acc_per_step else whole)
            gain = max(0, gain)
            r.gen += gain
            gen += gain
            if r.gen >= r.out:
                done_reqs.append(r)
        for r, when in finished_prefill:
            ttft = max(0.005, when - r.arr)
            r.t_first = r.arr + ttft
            if r.recompute == 0:
                if "ttft" in self.hist:
                    self.hist["ttft"].observe(ttft)
                self.c["prompt"] += r.prompt
                self.c["cached"] += r.cached
                r.gen = max(r.gen, 1)
                gen += 1
            r.recompute = 0
            r.done = 0
            self.running.append(r)
        self.c["gen"] += gen
        # ITL: one observation per step per decoding request
        if "itl" in self.hist and B:
            n_pure = B * pure
            if mixed:
                self.hist["itl"].spread(t_m, B * m_steps, rng)
                self.hist["itl"].spread(t_d, n_pure, rng)
            else:
                # a decode step that follows a prefill batch waits for it
                n_hit = min(n_pure, B * m_steps)
                self.hist["itl"].spread(t_d + t_m, n_hit, rng)
                self.hist["itl"].spread(t_d, n_pure - n_hit, rng)
        if self.spec_k and B:
            d = B * pure
            self.c["drafts"] += d
            self.c["dtok"] += d * self.spec_k
            self.c["acc"] += d * acc_per_step
            self.spec_gauge = (acc_per_step / self.spec_k, 1 + acc_per_step)
        # finished
        for r in done_reqs:
            self.running.remove(r)
            e2e = t + dt - r.arr
            self.c["fin"] += 1
            self.c["gen_fin"] += r.gen
            self.c["prompt_fin"] += r.prompt
            ttft = (r.t_first or t) - r.arr
            q = (r.t_sched or r.arr) - r.arr
            self.c["pref_s"] += max(0.001, ttft - q)
            self.c["dec_s"] += max(0.001, e2e - ttft)
            if self.hist:
                self.hist["e2e"].observe(e2e)
                self.hist["queue"].observe(max(0.0, q))
                if "tpot" in self.hist and r.gen > 1:
                    self.hist["tpot"].observe((e2e - ttft) / (r.gen - 1))
                if "params_n" in self.hist:
                    self.hist["params_n"].observe(r.n)
                    self.hist["params_max_tokens"].observe(r.max_tokens or r.out)
                    self.hist["max_generation_tokens"].observe(r.max_tokens or r.out)
        # KV: preempt (vLLM) / retract (SGLang) while the pool overflows
        used = self._kv_used()
        while used > self.pool and self.running:
            r = self.running.pop()
            used -= self._blocks(r.prompt + r.gen)
            r.recompute = r.gen
            r.done = 0
            self.waiting.insert(0, r)
            if self.kind == "sglang":
                self.c["retr"] += 1
                self.c["retr_tok"] += r.prompt
            else:
                self.c["pre"] += 1
        # GPU work per rank
        acts = []
        busy_s = 0.0
        wait_mix = Act(1.0, 0.12, 0.5, 0.05, 0.0)
        for g in range(self.tp):
            busy = 0.0
            a = Act(0.0, 0.0, 0.2, 0.0, 0.0)
            parts = []
            for per, n_st, Pm in ((per_d, pure if B else 0.0, 0), (per_m, m_steps, min(chunk, P))):
                if not n_st or per is None:
                    continue
                tb, by, fl = per[g]
                slowest = max(x[0] for x in per)
                k = (1 + 0.09 * self.spec_k) if (self.spec_k and Pm == 0) else 1.0
                mx = self.mix(tb, by, fl, B, fs[g], Pm)
                if self.eager:
                    # launch-bound: each tiny kernel holds the GPU ~4.2 us; SMs mostly idle
                    occupied = max(slowest, kernels * 4.2e-6)
                    mx.sm *= slowest / occupied
                    mx.tensor *= slowest / occupied
                    mx.dram *= slowest / occupied
                    slowest = occupied
                if slowest > tb * 1.02:
                    # a faster rank waits for the slowest inside the all-reduce (NCCL spins)
                    mx = mx.blend(wait_mix, (slowest - tb) / slowest)
                parts.append((n_st * slowest * k, mx))
            for dur, mx in parts:
                busy += dur
            if busy > 0:
                a = parts[0][1]
                if len(parts) > 1:
                    a = parts[0][1].blend(parts[1][1], parts[1][0] / busy)
            a.duty = min(1.0, busy / dt)
            if share[g]:
                nb = 1 - share[g]
                a.duty = min(1.0, a.duty + share[g] * 0.9)
                a.sm = a.sm * nb + 0.85 * share[g]
                a.tensor = a.tensor * nb + 0.5 * share[g]
                a.dram = a.dram * nb + 0.3 * share[g]
            if self.tp > 1:
                a.nvlink_gbps = (B * pure + m_steps * min(chunk, P)) * self.m.hidden * 2 * 2 * self.m.layers / dt / 1e9 * 2
            acts.append(a)
            busy_s = max(busy_s, busy)
        self.c["fwd_s"] += busy_s * (1 - max(share))
        self.c["steps"] += whole + (m_steps if not mixed else 0)
        if self.mfu:
            self.c["flops"] += (per_d[0][2] * pure if B else 0) + (per_m[0][2] * m_steps if per_m else 0)
            self.c["rbytes"] += (per_d[0][1] * pure if B else 0) + (per_m[0][1] * m_steps if per_m else 0)
            self.c["wbytes"] += (gen + done_tok) * self.kvb
        self.last_act = acts
        # CPU: the engine's busy-polling thread, workers, API server
        active = bool(B or P)
        want_main = 0.97 if active else 0.04
        got_main = want_main * cpu
        workers = (0.93 if active else 0.03) * (self.tp if self.tp > 1 else 0) * cpu
        api = 0.12 + gen / dt * 4e-5
        invol = 120 + 25 * self.tp + (1 - cpu) * 5200 + jit[0] * 2500
        self.tree.advance(got_main + workers + api, got_main, invol, dt, rng)
        self.cpu_now = dict(main=got_main, workers=workers, api=api, active=active, jit=jit,
                            steps=steps, kernels=kernels, cpu=cpu)
        return acts

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.block) * self.block

    def _kv_used(self) -> int:
        return sum(self._blocks(r.prompt + r.gen) for r in self.running) + \
            sum(self._blocks(r.prompt + r.gen) for r in self.prefilling)

    def _down(self, t, state):
        """Stopped, loading weights or warming up (profile run, graph capture)."""
        if state == "stopped" and self.state != "stopped":
            self.waiting.clear(), self.prefilling.clear(), self.running.clear()
            self.reset_counters()
            self.tree = F.Tree(self.tree.busiest, self.rng)
            self.tree.cpu_s = self.tree.busy_s = 1.0
            self.tree.invol = 10
        self.state = state
        acts = []
        for g, b in enumerate(self.boards):
            b.forced = {}
            if state == "stopped":
                a = Act(0.0, 0.0, 0.2, 0.0, 0.0, ctx=False)
            elif state == "loading":
                a = Act(0.02, 0.05, 0.2, 0.4, 0.0, pcie_mibs=11000)
            else:  # warmup: profile run then graph capture
                a = Act(0.55, 0.35, 0.2, 0.2, 0.15)
            b.clock_for(a)
            acts.append(a)
        self.last_act = acts
        self.tree.advance(1.1 if state != "stopped" else 0.0, 0.9 if state != "stopped" else 0.0, 60, self.dt, self.rng)
        self.cpu_now = dict(main=0.9 if state != "stopped" else 0, workers=0, api=0.1, active=False,
                            jit=(0, 0), steps=0, kernels=0, cpu=1.0)
        return acts

    # ------------------------------------------------------------ readings

    def engine_sample(self, wall: float, mono: float) -> EngineSample:
        c, k = self.c, self.kind
        common = dict(kind=k, url=self.url, model=self.m.name, time_mono_s=mono + 0.012,
                      time_wall_s=wall + 0.012, kv_config=self.m.kv_config(),
                      weights_bytes=self.w, tensor_parallel=self.tp, data_parallel=1,
                      pids=tuple([self.base_pid] + [p.pid for p in self.procs]),
                      cpu_s=round(self.tree.cpu_s, 2), ctx_involuntary=self.tree.invol,
                      busiest_thread_cpu_s=round(self.tree.busy_s, 2),
                      busiest_thread=self.tree.busiest, requests_running=float(len(self.running) + len(self.prefilling)),
                      requests_waiting=float(len(self.waiting)),
                      weights_source="metadata.total_size of model.safetensors.index.json")
        used = self._kv_used()
        hists = tuple(hh.freeze() for hh in self.hist.values())
        if k == "vllm":
            spec = {}
            if self.spec_k:
                spec = dict(spec_drafts_total=float(int(c["drafts"])), spec_draft_tokens_total=float(int(c["dtok"])),
                            spec_accepted_tokens_total=float(int(c["acc"])))
            mfu = dict(flops_total=c["flops"], read_bytes_total=c["rbytes"], write_bytes_total=c["wbytes"]) if self.mfu else {}
            return EngineSample(
                **common, generation_tokens_total=float(int(c["gen"])), prompt_tokens_total=float(int(c["prompt"])),
                prompt_tokens_cached_total=float(int(c["cached"])), requests_finished_total=c["fin"],
                kv_usage_ratio=min(1.0, used / self.pool), num_gpu_blocks=self.pool // self.block,
                block_size=self.block, kv_pool_tokens=self.pool, kv_pool_bytes=self.pool * self.kvb,
                cache_dtype="auto", histograms=hists, preemptions_total=c["pre"],
                waiting_by_reason={"capacity": float(len(self.waiting)), "deferred": 0.0},
                prefill_seconds_total=c["pref_s"], decode_seconds_total=c["dec_s"],
                corrupted_requests_total=0.0, **spec, **mfu)
        if k == "sglang":
            # the radix cache keeps finished requests' KV until the pool needs it back
            evict = int(0.02 * self.pool + 0.3 * c["cached"] + 0.05 * c["prompt_fin"])
            evict = max(0, min(evict, int(0.95 * (self.pool - used))))
            if self.new_sglang:
                gen, prompt = c["gen"], c["prompt"]
            else:
                gen, prompt = c["gen_fin"], c["prompt_fin"]
            spec = {}
            if self.spec_k:
                ratio, length = getattr(self, "spec_gauge", (0.0, 1.0))
                spec = dict(spec_accept_ratio=ratio, spec_accept_length=length)
            return EngineSample(
                **common, generation_tokens_total=float(int(gen)), prompt_tokens_total=float(int(prompt)),
                prompt_tokens_cached_total=float(int(c["cached"])), requests_finished_total=c["fin"],
                kv_usage_ratio=(used) / self.pool, kv_pool_tokens=self.pool, cache_dtype="auto",
                kv_used_tokens=float(used), kv_free_tokens=float(self.pool - used - evict),
                kv_evictable_tokens=float(evict), retracted_requests_total=c["retr"],
                retracted_input_tokens_total=c["retr_tok"], histograms=hists,
                forward_seconds_total=c["fwd_s"] if self.new_sglang else None, **spec)
        # llama.cpp: no histograms, no KV gauge, counters at prompt end / slot release
        spec = {}
        if self.spec_k:
            spec = dict(spec_drafts_total=float(int(c["drafts"])), spec_draft_tokens_total=float(int(c["dtok"])),
                        spec_accepted_tokens_total=float(int(c["acc"])))
        return EngineSample(
            **common, generation_tokens_total=float(int(c["gen_fin"])),
            prompt_tokens_total=float(int(c["prompt"])), prompt_tokens_cached_total=float(int(c["cached"])),
            kv_pool_tokens=self.pool, cache_dtype="f16", prefill_seconds_total=c["pref_s"],
            decode_seconds_total=c["dec_s"], decode_steps_total=float(int(c["steps"])), **spec)


def _poisson(lam: float, rng) -> int:
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
