"""The simulator behind corpus P: a request-level serving engine (continuous batching with a
KV pool, chunked or separate prefill, speculative decoding), a per-step training loop
(input, compute, collective), plain CUDA jobs, and the GPU / host / eBPF readings they
produce, sliced at 1/6 s (NVML's GPU-Util sample period on data-centre boards).

Physics (see README): a step's kernel time is max(bytes / (bandwidth x 0.8), FLOPs / (peak x
clock factor x 0.6)) plus small-kernel and collective time; GPU-Util is the fraction of each
1/6-s slice during which any kernel ran; GPM SM activity, DRAM and tensor activity are the
slice's time-weighted coverage, achieved bytes / peak and achieved FLOPs / peak.
"""

from __future__ import annotations

import bisect
import math
import random

from gputop.buckets import bucket_index
from gputop.schema import EngineHistogram, EngineSample, LaunchHist

SLICE = 1.0 / 6.0

# histogram layouts, as the engines' pages write them (tests/data/metrics)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_REQ_OLD = VLLM_REQ[:15]
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06,
           0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0,
             2500.0, 3000.0)


class Hist:
    __slots__ = ("bounds", "counts", "total", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.total = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.total += n
        self.sum += value * n

    def warm(self, rng, sampler, n: int, scale: float) -> None:
        """Steady-state history before gputop attached: n draws, each worth ``scale``."""
        for _ in range(n):
            self.observe(sampler(rng), scale)

    def sample(self, name: str) -> EngineHistogram:
        cum, acc = [], 0.0
        for c in self.counts[:-1]:
            acc += c
            cum.append(float(round(acc)))
        return EngineHistogram(name, tuple(float(b) for b in self.bounds), tuple(cum),
                               float(round(self.total)), round(self.sum, 4))


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


# ------------------------------------------------------------------ GPU activity

class Act:
    """Time-weighted activity of one GPU in one slice (seconds of the slice)."""

    __slots__ = ("busy", "sm", "occ", "tensor", "dram", "nvlink", "pcie", "by_pid")

    def __init__(self):
        self.busy = self.sm = self.occ = self.tensor = self.dram = 0.0
        self.nvlink = self.pcie = 0.0  # bytes
        self.by_pid = {}

    def kernels(self, pid, t, sm=0.93, occ=0.3, tensor_s=0.0, dram_s=0.0):
        self.busy += t
        self.sm += t * sm
        self.occ += t * occ
        self.tensor += tensor_s
        self.dram += dram_s
        self.by_pid[pid] = self.by_pid.get(pid, 0.0) + t


# ------------------------------------------------------------------ serving engine

class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "n", "gen", "pf_left", "sched", "first",
                 "extra_ms", "max_tokens", "special", "pf_start", "lora")

    def __init__(self, arr, prompt, cached, out, n=1, extra_ms=0.0, max_tokens=None,
                 special=False, lora=""):
        self.arr = arr
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.n = n
        self.gen = 0.0
        self.pf_left = prompt - cached
        self.sched = None
        self.first = None
        self.extra_ms = extra_ms
        self.max_tokens = max_tokens or out
        self.special = special
        self.pf_start = None
        self.lora = lora


def const(v):
    return lambda t: v


class Engine:
    """One serving engine (one data-parallel replica) on ``gpus`` (tensor parallel)."""

    def __init__(self, rng, kind, version, model, gpu, gpus, pid, url, *, rate, prompt_fn,
                 out_fn, hit_fn=const(0.0), max_seqs=256, budget=None, pool_tokens=None,
                 block_size=16, gpu_mem_util=0.9, spec_k=0, alpha_fn=const(0.7),
                 spec_eagle=False, speed_fn=None, cf_fn=const(1.0), cpu_share_fn=const(1.0),
                 jitter_fn=const(0.0), tiny_fn=const(0.0), specials=(), lora=(),
                 mfu=False, replica="", name_hint="", async_sched=True, warm_s=600.0,
                 n_fn=None, share_fn=None, extra_gpu_frac=0.6):
        self.rng = rng
        self.kind, self.version, self.m, self.g = kind, version, model, gpu
        self.gpus = tuple(gpus)
        self.tp = len(self.gpus)
        self.pid = pid
        self.url = url
        self.rate, self.prompt_fn, self.out_fn, self.hit_fn = rate, prompt_fn, out_fn, hit_fn
        self.n_fn = n_fn
        self.max_seqs = max_seqs
        hopper = gpu.flops > 500e12
        if budget is None:
            budget = {"vllm": 8192 if hopper else 2048, "sglang": 8192 if hopper else 4096,
                      "llamacpp": 2048}[kind]
        self.budget = budget
        self.kvbpt = model.kv_bytes_per_token(self.tp)
        self.wbytes = model.weights_bytes(self.tp)
        if pool_tokens is None:
            free = gpu.mem_bytes * gpu_mem_util - self.wbytes - 4.5 * (1 << 30)
            pool_tokens = int(free // self.kvbpt)
        self.block = block_size if kind == "vllm" else 1
        self.pool = int(pool_tokens // self.block * self.block)
        self.mem_bytes = int(gpu.mem_bytes * gpu_mem_util) if kind != "llamacpp" else int(
            self.wbytes + self.pool * self.kvbpt + 0.8 * (1 << 30))
        self.spec_k, self.alpha_fn, self.spec_eagle = spec_k, alpha_fn, spec_eagle
        self.speed_fn = speed_fn or (lambda t, g: 1.0)
        self.share_fn = share_fn or (lambda t, g: 1.0)
        self.extra_gpu_frac = extra_gpu_frac
        self.special_log = []
        self.cf_fn, self.cpu_share_fn, self.jitter_fn, self.tiny_fn = (cf_fn, cpu_share_fn,
                                                                       jitter_fn, tiny_fn)
        self.specials = sorted(specials, key=lambda s: s[0])
        self.lora = lora
        self.mfu = mfu
        self.replica = replica
        self.async_sched = async_sched
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.kv_used = 0.0
        old = kind == "vllm" and version < "0.11"
        if kind == "vllm":
            self.h = {"ttft": Hist(VLLM_TTFT), "itl": Hist(VLLM_ITL), "tpot": Hist(VLLM_ITL),
                      "e2e": Hist(VLLM_REQ_OLD if old else VLLM_REQ),
                      "queue": Hist(VLLM_REQ_OLD if old else VLLM_REQ),
                      "params_n": Hist(VLLM_N), "params_max_tokens": Hist(VLLM_TOK),
                      "max_generation_tokens": Hist(VLLM_TOK)}
        elif kind == "sglang":
            self.h = {"ttft": Hist(SGL_TTFT), "itl": Hist(SGL_ITL), "e2e": Hist(SGL_E2E),
                      "queue": Hist(SGL_QUEUE)}
        else:
            self.h = {}
        self.c = {k: 0.0 for k in ("gen", "prompt", "cached", "fin", "pre", "retr", "retr_tok",
                                   "drafts", "draft_tok", "acc", "pf_s", "dec_s", "fwd_s",
                                   "steps", "flops", "rbytes", "wbytes")}
        self.cpu_s = rng.uniform(2000, 20000)
        self.thread_cpu_s = self.cpu_s * 0.55
        self.invol = int(rng.uniform(2e5, 2e6))
        self.last_itl = 0.015
        self.name_hint = name_hint
        self._warm(warm_s)

    # -- steady state before gputop attached (counters and histograms already moving)
    def _warm(self, seconds):
        rng = self.rng
        r0 = max(0.05, self.rate(0.0))
        reqs = int(r0 * seconds)
        scale = max(1.0, reqs / 400.0)
        draws = int(reqs / scale)
        mean_out = sum(self.out_fn(rng, 0.0) for _ in range(30)) / 30
        mean_prompt = sum(self.prompt_fn(rng, 0.0) for _ in range(30)) / 30
        itl0 = 0.012 + self.wbytes / (self.g.bw * 0.8)
        for _ in range(draws):
            out = self.out_fn(rng, 0.0)
            ttft = max(0.01, rng.lognormvariate(math.log(0.08 + mean_prompt / 30000), 0.6))
            itl = itl0 * rng.uniform(1.0, 1.6)
            e2e = ttft + out * itl
            if "ttft" in self.h:
                self.h["ttft"].observe(ttft, scale)
                self.h["e2e"].observe(e2e, scale)
                self.h["queue"].observe(rng.expovariate(1 / 0.02), scale)
                self.h["itl"].observe(itl, out * scale * 0.8)
                self.h["itl"].observe(itl * rng.uniform(2, 8), out * scale * 0.2)
            if "tpot" in self.h:
                self.h["tpot"].observe(itl * 1.2, scale)
                self.h["params_n"].observe(1, scale)
                self.h["params_max_tokens"].observe(max(out, 256), scale)
                self.h["max_generation_tokens"].observe(max(out, 256), scale)
        self.c["fin"] = float(reqs)
        self.c["gen"] = float(int(reqs * mean_out))
        hit = self.hit_fn(0.0)
        self.c["prompt"] = float(int(reqs * mean_prompt))
        self.c["cached"] = float(int(reqs * mean_prompt * hit))
        self.c["pf_s"] = reqs * 0.1
        self.c["dec_s"] = reqs * mean_out * itl0 * 1.2
        self.c["fwd_s"] = seconds * 0.8
        self.c["steps"] = seconds / itl0 * 0.7
        if self.spec_k:
            a = self.alpha_fn(0.0)
            acc_per = sum(a ** i for i in range(1, self.spec_k + 1))
            drafts = self.c["gen"] / (1 + acc_per)
            self.c["drafts"], self.c["draft_tok"] = drafts, drafts * self.spec_k
            self.c["acc"] = drafts * acc_per
        # requests in flight at attach time: ramp the batch with a short pre-roll
        t = -40.0
        while t < 0:
            self.step(t, SLICE, {})
            t += SLICE

    def _new_request(self, t):
        rng = self.rng
        prompt = max(8, int(self.prompt_fn(rng, t)))
        out = max(1, int(self.out_fn(rng, t)))
        hit = self.hit_fn(t)
        cached = int(prompt * hit * rng.uniform(0.7, 1.0)) // 16 * 16 if hit > 0 else 0
        cached = min(cached, prompt - 1)
        n = self.n_fn(rng, t) if self.n_fn else 1
        lora = rng.choice(self.lora) if self.lora else ""
        return Req(t, prompt, cached, out, n=n, max_tokens=max(out, rng.choice(
            (256, 512, 1024, 2048, 4096))), lora=lora)

    def _step_cost(self, dec_tokens, ctx_tokens, chunk, pf_ctx, cf):
        """(kernel seconds, bytes, flops, nccl seconds) of one forward pass."""
        m, g = self.m, self.g
        act_w = m.active / m.params
        if act_w < 0.99:  # MoE: experts touched grow with the tokens in the step
            wfrac = min(1.0, act_w * (1.0 + 0.35 * math.sqrt(dec_tokens + chunk)))
        else:
            wfrac = 1.0
        w_bytes = self.wbytes * wfrac + (dec_tokens + chunk) * m.hidden * 24 / self.tp
        kv_bytes = ctx_tokens * self.kvbpt + chunk * self.kvbpt
        nbytes = w_bytes + kv_bytes
        flops = 2.0 * m.active / self.tp * (dec_tokens + chunk)
        flops += 4.0 * m.layers * m.heads * m.head_dim / self.tp * chunk * pf_ctx
        t_mem = (w_bytes / (g.bw * 0.8) + kv_bytes / (g.bw * 0.93)) * (0.8 + 0.2 / cf)
        t_cmp = flops / (g.flops * cf * 0.6)
        small = 0.00012 * m.layers / 32
        nccl = 0.0
        if self.tp > 1:
            per = 2 * m.layers * (9e-6 + (dec_tokens + chunk) * m.hidden * 2 / (
                (300e9 if g.nvlink else 20e9)))
            nccl = per
        return max(t_mem, t_cmp) + small, nbytes, flops, nccl

    def _tokens_per_step(self, t):
        if not self.spec_k:
            return 1.0, 0.0
        a = self.alpha_fn(t)
        acc = sum(a ** i for i in range(1, self.spec_k + 1))
        return 1.0 + acc, acc

    def step(self, t, dt, acts):
        """Advance one slice; add this engine's GPU activity to ``acts`` (gpu -> Act)."""
        rng = self.rng
        c = self.c
        # arrivals
        for _ in range(poisson(rng, self.rate(t) * dt)):
            self.waiting.append(self._new_request(t + rng.uniform(0, dt)))
        while self.specials and self.specials[0][0] <= t:
            _, spec = self.specials.pop(0)
            r = Req(t, spec["prompt"], 0, spec["out"], n=spec.get("n", 1),
                    extra_ms=spec.get("extra_ms", 0.0), max_tokens=spec.get("max_tokens"),
                    special=True)
            r.lora = spec.get("label", "special")
            self.special_log.append([t, None])
            self.waiting.append(r)
        # admission (FCFS; a request needs blocks for its prompt)
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            need = r.prompt + r.gen * r.n + self.block
            if self.kv_used + need > self.pool * 0.99 and self.running:
                break
            self.waiting.pop(0)
            self.kv_used += r.prompt + r.gen * r.n
            if r.sched is None:
                r.sched = t
                if "queue" in self.h:
                    self.h["queue"].observe(max(0.0, t - r.arr + rng.uniform(0, 0.02)))
            self.running.append(r)
        running = self.running
        cf = self.cf_fn(t)
        speeds = {g: self.speed_fn(t, g) for g in self.gpus}
        shares = {g: self.share_fn(t, g) for g in self.gpus}
        speed = min(speeds[g] * shares[g] for g in self.gpus)
        s_min = min(speeds.values())
        share = self.cpu_share_fn(t)
        dec = [r for r in running if r.pf_left <= 0]
        pf = [r for r in running if r.pf_left > 0]
        tps, acc_per = self._tokens_per_step(t)
        k1 = 1 + self.spec_k
        n_seqs = sum(r.n for r in dec)
        dec_tokens = n_seqs * k1
        ctx = sum(r.prompt + r.gen for r in dec for _ in range(1)) + sum(
            (r.n - 1) * (r.prompt + r.gen) for r in dec if r.n > 1)
        pf_pending = sum(r.pf_left for r in pf)
        extra = sum(r.extra_ms * r.n for r in dec if r.extra_ms) / 1000.0
        # one decode step and one mixed step
        t_d, b_d, f_d, n_d = self._step_cost(dec_tokens, ctx, 0, 0, cf)
        if self.spec_k and self.spec_eagle:
            t_d *= 1.12
        if self.kind == "vllm" or self.kind == "llamacpp":
            cap = max(256, self.budget - dec_tokens)
        else:
            cap = self.budget
        chunk = min(cap, pf_pending)
        pf_ctx = (pf[0].prompt - pf[0].pf_left + chunk / 2) if pf else 0
        t_c, b_c, f_c, n_c = self._step_cost(dec_tokens if self.kind != "sglang" else 0,
                                             ctx if self.kind != "sglang" else 0,
                                             chunk, pf_ctx, cf)
        if self.kind == "sglang" and pf:
            t_c += t_d  # a prefill batch, then the decode batch it held back
            b_c += b_d
            f_c += f_d
        tiny = self.tiny_fn(t)
        gpu_d = (t_d + n_d + tiny) / speed + extra
        gpu_c = (t_c + n_c + n_d + tiny) / speed + extra
        if self.kind == "llamacpp":  # sampling on the CPU, per slot, every token
            cpu_step = 0.0008 + 0.00035 * (len(dec) + len(pf))
        else:
            cpu_step = (0.0025 + 0.00004 * (n_seqs + len(pf))) * (1.0 if self.kind == "vllm"
                                                                   else 0.8)
        cpu_step += extra * 0.3
        jit = self.jitter_fn(t)
        cpu_wall = cpu_step / max(0.05, share)

        def gap(gpu_t):
            if self.kind == "llamacpp":
                g = cpu_wall
            elif self.async_sched == "partial":
                g = cpu_wall * 0.45
            elif self.async_sched:
                g = max(0.0, cpu_wall - gpu_t * 0.92)
            else:
                g = cpu_wall * 0.8
            return g + 0.00015 + jit

        if not running:
            wall_d = wall_c = None
            steps_c = steps_d = 0.0
        else:
            wall_d = gpu_d + gap(gpu_d)
            wall_c = gpu_c + gap(gpu_c)
            need_c = math.ceil(pf_pending / max(1, cap)) if pf_pending else 0
            steps_c = min(float(need_c), dt / wall_c) if need_c else 0.0
            rest = dt - steps_c * wall_c
            steps_d = rest / wall_d if dec else 0.0
            if not dec and steps_c < need_c:
                steps_c = dt / wall_c
        steps = steps_c + steps_d
        # prefill progress, FCFS
        pf_done = min(pf_pending, steps_c * cap)
        left = pf_done
        for r in pf:
            if left <= 0:
                break
            if r.pf_start is None:
                r.pf_start = t
            take = min(r.pf_left, left)
            r.pf_left -= take
            left -= take
            if r.pf_left <= 0:
                r.first = t + dt
                if "ttft" in self.h:
                    self.h["ttft"].observe(max(0.001, r.first - r.arr))
                if r.gen == 0:
                    c["prompt"] += r.prompt
                    c["cached"] += r.cached
                c["pf_s"] += r.first - (r.sched or r.arr)
        # decode progress
        gained = steps * tps
        finished = []
        if dec and steps > 0:
            for r in dec:
                r.gen += gained
                self.kv_used += gained * r.n
            c["gen"] += gained * n_seqs
            if self.spec_k:
                c["drafts"] += steps * n_seqs
                c["draft_tok"] += steps * n_seqs * self.spec_k
                c["acc"] += steps * n_seqs * acc_per
            if "itl" in self.h:
                itl_d = wall_d / tps if self.kind == "vllm" and False else wall_d
                obs_n = steps_d * n_seqs
                self.h["itl"].observe(itl_d * rng.uniform(0.95, 1.08), obs_n * 0.7)
                self.h["itl"].observe(itl_d * rng.uniform(1.05, 1.35), obs_n * 0.3)
                if steps_c > 0:
                    self.h["itl"].observe(wall_c * rng.uniform(0.95, 1.1), steps_c * n_seqs)
            self.last_itl = (steps_d * wall_d + steps_c * (wall_c or 0)) / max(steps, 1e-9)
            for r in dec:
                if r.gen >= r.out:
                    finished.append(r)
        for r in finished:
            if r.special:
                for rec in self.special_log:
                    if rec[1] is None:
                        rec[1] = t + dt
                        break
            self.running.remove(r)
            self.kv_used -= r.prompt + r.gen * r.n
            end = t + dt
            c["fin"] += 1
            if r.first is not None:
                c["dec_s"] += end - r.first
            if "e2e" in self.h:
                self.h["e2e"].observe(end - r.arr)
            if "tpot" in self.h and r.first is not None:
                self.h["tpot"].observe((end - r.first) / max(1.0, r.gen - 1))
                self.h["params_n"].observe(r.n)
                self.h["params_max_tokens"].observe(r.max_tokens)
                self.h["max_generation_tokens"].observe(r.max_tokens)
        self.kv_used = max(0.0, self.kv_used)
        # KV pool overflow: preempt (vLLM, recompute) or retract (SGLang), newest first
        while self.kv_used > self.pool and len(self.running) > 1:
            r = self.running.pop()
            self.kv_used -= r.prompt + r.gen * r.n
            if self.kind == "sglang":
                c["retr"] += 1
                c["retr_tok"] += r.prompt
            else:
                c["pre"] += 1
            r.prompt = int(r.prompt + r.gen)
            r.out = max(1, int(r.out - r.gen))
            r.gen = 0.0
            r.pf_left = r.prompt
            r.cached = 0
            self.waiting.insert(0, r)
        # GPU activity per TP rank: kernel time unstretched, a slow rank stretches its own
        # kernels, a time-sliced rank loses wall time to the other process, and the ranks
        # that are ready first spin in the all-reduce (NCCL kernels, few SMs)
        kern = steps_d * (t_d + n_d + tiny) + steps_c * (t_c + n_c + n_d + tiny)
        ex = steps * extra * self.extra_gpu_frac
        nccl0 = steps * (n_d + (n_c if steps_c else 0))
        tiny0 = steps * tiny
        bytes_ = steps_d * b_d + steps_c * b_c
        flops = steps_d * f_d + steps_c * f_c
        wall_kern = kern / speed if speed > 0 else 0.0
        busy_gpu = min(dt * 0.998, kern / s_min + ex)
        if kern > 0:
            cmp_share = min(1.0, flops / (self.g.flops * cf * 0.6) / max(kern, 1e-9))
            for gi in self.gpus:
                a = acts.get(gi)
                if a is None:
                    continue
                sp = speeds[gi]
                own_main = max(0.0, kern - nccl0 - tiny0) / sp
                own = own_main + (nccl0 + tiny0) / sp + ex
                scale = min(1.0, dt * 0.998 / max(own, 1e-9))
                a.kernels(self.pid + gi, own_main * scale, sm=0.9 + 0.06 * cmp_share,
                          occ=0.2 + 0.22 * cmp_share,
                          tensor_s=min(own_main * scale, flops / (self.g.flops * cf) * 1.25),
                          dram_s=min(own_main * scale * 0.97, bytes_ / self.g.bw))
                if nccl0:
                    a.kernels(self.pid + gi, nccl0 / sp * scale, sm=0.2, occ=0.03,
                              dram_s=nccl0 * 0.1)
                    a.nvlink += nccl0 * 120e9
                t_small = (tiny0 / sp + ex) * scale
                if t_small:
                    a.kernels(self.pid + gi, t_small, sm=0.05, occ=0.01, dram_s=t_small * 0.02)
                if self.tp > 1:
                    wait = min(dt * 0.998, (wall_kern + ex) * shares[gi]) - own * scale
                    if wait > 0:
                        a.kernels(self.pid + gi, wait, sm=0.2, occ=0.03, dram_s=wait * 0.1)
                        a.nvlink += wait * 40e9
                a.pcie += steps * 2e5
        c["fwd_s"] += busy_gpu
        c["steps"] += steps
        c["flops"] += flops * 1.0
        c["rbytes"] += bytes_
        c["wbytes"] += bytes_ * 0.05
        # CPU of the engine tree
        core = min(1.0, steps * cpu_step / dt + 0.08) * min(1.0, share * 1.15)
        self.thread_cpu_s += core * dt
        self.cpu_s += (core + 0.15 + 0.02 * self.rate(t)) * dt * (1 + 0.15 * (self.tp - 1))
        inv_rate = 25 + 400 * (1 - share) + 1500 * min(1.0, jit / 0.002)
        self.invol += int(inv_rate * dt * rng.uniform(0.7, 1.3))
        self._steps_slice = steps
        self._busy_slice = busy_gpu
        return steps

    def sample(self, t_wall, t_mono, t):
        """The engine's page as gputop's engine source would read it."""
        c = self.c
        kind, v = self.kind, self.version
        run = float(sum(r.n for r in self.running)) if kind == "vllm" else float(len(self.running))
        wait = float(len(self.waiting))
        kv = min(1.0, self.kv_used / self.pool) if self.pool else None
        hists = ()
        if self.h:
            names = list(self.h)
            hists = tuple(self.h[n].sample(n) for n in names)
        kw = dict(kind=kind, url=self.url, model=self.m.name,
                  generation_tokens_total=float(int(c["gen"])),
                  prompt_tokens_total=float(int(c["prompt"])),
                  requests_running=run, requests_waiting=wait,
                  tensor_parallel=self.tp, data_parallel=1, pids=self.pids(),
                  time_wall_s=t_wall, time_mono_s=t_mono, histograms=hists,
                  kv_config=self.m.kv_config(), weights_bytes=self.wbytes,
                  weights_source="size of safetensors files" if kind != "llamacpp" else
                  "GGUF file size",
                  cpu_s=round(self.cpu_s, 2), ctx_involuntary=self.invol,
                  busiest_thread_cpu_s=round(self.thread_cpu_s, 2),
                  busiest_thread=f"{self.pid + 1} " + {"vllm": "VLLM::EngineCor",
                                                       "sglang": "sglang::schedul",
                                                       "llamacpp": "llama-server"}[kind],
                  replica=self.replica)
        if kind == "vllm":
            kw.update(requests_finished_total=float(int(c["fin"])), kv_usage_ratio=kv,
                      preemptions_total=float(int(c["pre"])), num_gpu_blocks=self.pool // self.block,
                      block_size=self.block, cache_dtype="auto")
            if v >= "0.11":
                kw.update(prompt_tokens_cached_total=float(int(c["cached"])))
            if v >= "0.2":
                kw.update(kv_pool_bytes=int(self.pool * self.kvbpt), kv_pool_tokens=self.pool,
                          waiting_by_reason={"capacity": float(sum(
                              1 for r in self.waiting if r.sched is not None or
                              self.kv_used > 0.95 * self.pool)), "deferred": 0.0},
                          prefill_seconds_total=round(c["pf_s"], 3),
                          decode_seconds_total=round(c["dec_s"], 3))
            if self.spec_k:
                kw.update(spec_drafts_total=float(int(c["drafts"])),
                          spec_draft_tokens_total=float(int(c["draft_tok"])),
                          spec_accepted_tokens_total=float(int(c["acc"])))
            if self.mfu:
                kw.update(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                          write_bytes_total=c["wbytes"])
            if self.lora:
                active = sorted({r.lora for r in self.running if r.lora})
                kw.update(lora_running=tuple(active), lora_waiting=tuple(sorted(
                    {r.lora for r in self.waiting if r.lora} - set(active))), lora_max=4)
        elif kind == "sglang":
            used = int(self.kv_used)
            evict = int(min(self.pool - used, self.pool * 0.2 * self.hit_fn(t) + 2000)) \
                if self.pool > used else 0
            kw.update(requests_finished_total=float(int(c["fin"])), kv_usage_ratio=kv,
                      kv_pool_tokens=self.pool, prompt_tokens_cached_total=float(int(c["cached"])),
                      retracted_requests_total=float(int(c["retr"])),
                      retracted_input_tokens_total=float(int(c["retr_tok"])),
                      kv_used_tokens=float(used), kv_free_tokens=float(max(0, self.pool - used)),
                      kv_evictable_tokens=float(evict),
                      forward_seconds_total=round(c["fwd_s"], 3))
            if self.spec_k:
                a = self.alpha_fn(t)
                acc = sum(a ** i for i in range(1, self.spec_k + 1))
                kw.update(spec_accept_ratio=round(acc / self.spec_k, 4),
                          spec_accept_length=round(1 + acc, 3))
        else:  # llama.cpp
            kw.update(prompt_tokens_cached_total=float(int(c["cached"])),
                      prefill_seconds_total=round(c["pf_s"], 3),
                      decode_seconds_total=round(c["dec_s"], 3),
                      decode_steps_total=float(int(c["steps"])), kv_pool_tokens=self.pool,
                      cache_dtype="f16")
            if self.spec_k:
                kw.update(spec_drafts_total=float(int(c["drafts"])),
                          spec_draft_tokens_total=float(int(c["draft_tok"])),
                          spec_accepted_tokens_total=float(int(c["acc"])))
        return EngineSample(**kw)

    def pids(self):
        if self.kind == "llamacpp":
            return (self.pid,)
        return (self.pid, self.pid + 1) + tuple(self.pid + 10 + g for g in self.gpus)

    def proc_pid(self, gpu):
        if self.kind == "llamacpp":
            return self.pid
        return self.pid + 10 + gpu if self.tp > 1 else self.pid + 1

    def proc_name(self, gpu):
        i = self.gpus.index(gpu)
        if self.kind == "vllm":
            return ("VLLM::EngineCore" if self.tp == 1 else f"VLLM::Worker_TP{i}",
                    f"python3 -m vllm.entrypoints.openai.api_server --model {self.m.name} "
                    f"--tensor-parallel-size {self.tp}" + self.name_hint)
        if self.kind == "sglang":
            return (f"sglang::scheduler_TP{i}",
                    f"python3 -m sglang.launch_server --model-path {self.m.name} --tp {self.tp}"
                    + self.name_hint)
        return ("llama-server", f"llama-server -m /models/{self.m.name} -c {self.pool} -ngl 99 "
                f"--metrics --port 8080" + self.name_hint)


# ------------------------------------------------------------------ training loop

class Trainer:
    """Synchronous data-parallel training: each step every rank waits for its input,
    computes, then all ranks meet in the gradient all-reduce (NCCL kernels spin on the
    ranks that arrive first)."""

    def __init__(self, rng, gpu, gpus, pid, *, comp_s, data_s_fn=None, slow_fn=None,
                 comm_s=0.02, batch=32, unit="samples", counter=True, cf_fn=const(1.0),
                 eval_windows=(), ckpt_windows=(), ckpt_barrier=True, tiny_fn=const(0.0),
                 bw_fn=const(0.0), jitter_fn=const(0.0), cpu_share_fn=const(1.0),
                 tensor_eff=0.55, dram_eff=0.3, launches_per_step=3000, url="",
                 name="python", cmdline="torchrun train.py", mem_frac=0.7, speed_fn=None):
        self.rng = rng
        self.g = gpu
        self.gpus = tuple(gpus)
        self.pid = pid
        self.comp_s, self.comm_s, self.batch, self.unit = comp_s, comm_s, batch, unit
        self.data_s_fn = data_s_fn or (lambda t: 0.0)
        self.slow_fn = slow_fn or (lambda t, g: 1.0)
        self.speed_fn = speed_fn or (lambda t, g: 1.0)
        self.counter = counter
        self.cf_fn = cf_fn
        self.eval_windows, self.ckpt_windows, self.ckpt_barrier = (eval_windows, ckpt_windows,
                                                                   ckpt_barrier)
        self.tiny_fn, self.bw_fn, self.jitter_fn, self.cpu_share_fn = (tiny_fn, bw_fn, jitter_fn,
                                                                       cpu_share_fn)
        self.tensor_eff, self.dram_eff = tensor_eff, dram_eff
        self.launches = launches_per_step
        self.url = url or "http://127.0.0.1:9100/metrics"
        self.name, self.cmdline = name, cmdline
        self.mem_bytes = int(gpu.mem_bytes * mem_frac)
        self.phase = rng.uniform(0, 1)
        self.tokens = float(int(rng.uniform(1e9, 5e10))) if unit == "tokens" else float(
            int(rng.uniform(1e6, 2e7)))
        self.steps = float(int(rng.uniform(2000, 60000)))
        self.cpu_s = rng.uniform(5000, 50000)
        self.thread_cpu_s = self.cpu_s * 0.4
        self.invol = int(rng.uniform(1e5, 1e6))
        self.step_s = comp_s

    def _in(self, windows, t):
        return any(a <= t < b for a, b in windows)

    def layout(self, t):
        """(step seconds, per rank: (data idle, compute, tiny, nccl)), kind."""
        cf = self.cf_fn(t)
        if self._in(self.ckpt_windows, t):
            return None
        ev = self._in(self.eval_windows, t)
        data = self.data_s_fn(t)
        tiny = self.tiny_fn(t)
        bw = self.bw_fn(t)
        jit = self.jitter_fn(t)
        share = self.cpu_share_fn(t)
        ranks = []
        for g in self.gpus:
            comp = self.comp_s * (0.35 if ev else 1.0) / (self.slow_fn(t, g) * self.speed_fn(t, g))
            comp = comp * (0.85 + 0.15 / cf) if cf < 1 else comp
            comp_c = comp * (1 / cf - 1) * 0.85 if cf < 1 else 0.0
            comp += comp_c
            comp += bw
            cpu_launch = self.launches * 4.5e-6 / max(0.05, share)
            gapt = max(0.0, cpu_launch - comp * 0.9) + jit * self.launches / 1000.0
            ranks.append([data * self.rng.uniform(0.9, 1.1), comp, tiny, gapt])
        arrive = [r[0] + r[1] + r[2] + r[3] for r in ranks]
        last = max(arrive)
        comm = 0.0 if ev or len(self.gpus) == 1 else self.comm_s
        step = last + comm
        out = []
        for r, a in zip(ranks, arrive):
            out.append((r[0], r[1], r[2], r[3], (last - a) + comm))
        return step, out, ev

    def step(self, t, dt, acts):
        lay = self.layout(t)
        if lay is None:  # checkpoint: rank 0 writes, the others wait in a barrier
            for i, g in enumerate(self.gpus):
                a = acts.get(g)
                if a is not None and i > 0 and self.ckpt_barrier:
                    a.kernels(self.pid + i, dt * 0.99, sm=0.02, occ=0.005, dram_s=0.0)
                if a is not None and i == 0:
                    a.pcie += dt * 20e9
            self.cpu_s += dt * 1.2
            return 0.0
        step_s, ranks, ev = lay
        self.step_s = step_s
        n_steps = dt / step_s
        bwfrac = self.bw_fn(t)
        for i, g in enumerate(self.gpus):
            a = acts.get(g)
            if a is None:
                continue
            data, comp, tiny, gapt, wait = ranks[i]
            # fraction of wall time per phase over the slice (long steps: integrate phases)
            fr = self._phase_fracs(t, dt, step_s, (data, gapt, comp, tiny, wait))
            busy_c = fr[2] * dt
            cf = self.cf_fn(t)
            bwshare = min(1.0, bwfrac / comp) if comp else 0.0
            a.kernels(self.pid + i, busy_c, sm=0.9 + 0.07 * (1 - bwshare), occ=0.35,
                      tensor_s=busy_c * self.tensor_eff * cf ** 0.3 * (1 - 0.8 * bwshare),
                      dram_s=busy_c * (self.dram_eff + (0.93 - self.dram_eff) * bwshare))
            if fr[3]:
                a.kernels(self.pid + i, fr[3] * dt, sm=0.05, occ=0.01, dram_s=fr[3] * dt * 0.03)
            if fr[4]:
                a.kernels(self.pid + i, fr[4] * dt, sm=0.2, occ=0.03, dram_s=fr[4] * dt * 0.1)
                a.nvlink += fr[4] * dt * 150e9 if self.g.nvlink else 0
            a.pcie += fr[0] * dt * 3e9
        if not ev:
            self.steps += n_steps
            self.tokens += n_steps * self.batch
        share = self.cpu_share_fn(t)
        self.cpu_s += dt * (1.0 + 2.5 * len(self.gpus)) * min(1.0, share * 1.2)
        self.thread_cpu_s += dt * 0.9 * min(1.0, share * 1.1)
        self.invol += int((30 + 600 * (1 - share) + 2000 * min(1.0, self.jitter_fn(t) / 2e-5))
                          * dt * self.rng.uniform(0.7, 1.3))
        return n_steps

    def _phase_fracs(self, t, dt, step_s, parts):
        total = sum(parts)
        if step_s < 3 * dt:  # many steps a slice: the average layout, a little noise
            return [p / total * self.rng.uniform(0.97, 1.03) if p else 0.0 for p in parts]
        # one step spans slices: integrate the periodic schedule over [t, t+dt)
        out = [0.0] * len(parts)
        x0 = (t + self.phase * step_s) % step_s
        x1 = x0 + dt
        bounds, acc = [], 0.0
        for p in parts:
            bounds.append((acc, acc + p))
            acc += p
        for k in (0, 1):
            off = k * step_s
            for j, (lo, hi) in enumerate(bounds):
                ov = min(x1, hi + off) - max(x0, lo + off)
                if ov > 0:
                    out[j] += ov / dt
        return out

    def sample(self, t_wall, t_mono):
        if not self.counter:
            return None
        fam = "tokens" if self.unit == "tokens" else "samples"
        return EngineSample(kind="trainer", url=self.url, model="",
                            generation_tokens_total=float(int(self.tokens)),
                            requests_finished_total=float(int(self.steps)), work_unit=fam,
                            pids=self.pids(), time_wall_s=t_wall, time_mono_s=t_mono,
                            data_parallel=1, cpu_s=round(self.cpu_s, 2),
                            ctx_involuntary=self.invol,
                            busiest_thread_cpu_s=round(self.thread_cpu_s, 2),
                            busiest_thread=f"{self.pid} pt_main_thread")

    def pids(self):
        return tuple(self.pid + i for i in range(len(self.gpus)))


class CudaJob:
    """Any other CUDA process: a benchmark, a notebook, an eval script; ``shape(t)``
    returns (busy, sm, occ, tensor, dram) fractions of its GPU while it runs."""

    _t = 0.0

    def __init__(self, rng, gpu_index, pid, name, cmdline, shape, mem_bytes, user="alice",
                 container="", alive=(-1e9, 1e9)):
        self.alive = alive
        self.rng = rng
        self.gpu = gpu_index
        self.pid = pid
        self.name, self.cmdline = name, cmdline
        self.shape = shape
        self.mem_bytes = mem_bytes
        self.user = user
        self.container = container
        self.cpu_s = rng.uniform(10, 3000)

    def step(self, t, dt, acts):
        s = self.shape(t)
        if s is None:
            return
        busy, sm, occ, tensor, dram = s
        a = acts.get(self.gpu)
        if a is None or busy <= 0:
            self.cpu_s += dt * 0.05
            return
        j = self.rng.uniform(0.95, 1.05)
        tb = min(dt, busy * dt * j)
        a.kernels(self.pid, tb, sm=sm / max(busy, 1e-6), occ=occ / max(busy, 1e-6),
                  tensor_s=tensor * dt * j, dram_s=dram * dt * j)
        self.cpu_s += dt * 0.9


# ------------------------------------------------------------------ eBPF launch histograms

def launch_hist(rng, api, pid, count, median_us, sigma, tail_frac=0.0, tail_ms=(0.5, 8.0)):
    """A per-tick histogram of host-side call durations: a lognormal body and an optional
    tail of calls during which the thread was preempted."""
    count = int(count)
    if count <= 0:
        return None
    buckets: dict[int, int] = {}
    body_draws = 48
    sum_ns = 0.0
    max_ns = 0
    n_tail = 0
    if tail_frac > 0:
        n_tail = min(count, int(count * tail_frac + rng.random()))
    n_body = count - n_tail
    per = n_body / body_draws
    carry = 0.0
    for _ in range(body_draws):
        v = int(rng.lognormvariate(math.log(median_us * 1000), sigma))
        carry += per
        k = int(carry)
        carry -= k
        if k:
            b = bucket_index(v)
            buckets[b] = buckets.get(b, 0) + k
            sum_ns += v * k
            max_ns = max(max_ns, v)
    for _ in range(min(n_tail, 60)):
        v = int(math.exp(rng.uniform(math.log(tail_ms[0]), math.log(tail_ms[1]))) * 1e6)
        w = n_tail / min(n_tail, 60)
        k = int(round(w))
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0) + k
        sum_ns += v * k
        max_ns = max(max_ns, v)
    total = sum(buckets.values())
    if total <= 0:
        return None
    return LaunchHist(api=api, pid=pid, count=total, sum_ns=int(sum_ns), max_ns=int(max_ns),
                      buckets=buckets)
