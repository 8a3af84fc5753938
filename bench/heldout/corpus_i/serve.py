"""A request-level continuous-batching server: vLLM V1, SGLang or llama.cpp.

Time advances in slices of 0.25 s.  In each slice the scheduler admits waiting requests
while seats and KV blocks allow, then runs steps: every running sequence in decode adds
one token per step (1 + accepted drafts with speculative decoding), and the step's token
budget left over goes to prompt chunks.  vLLM (chunked prefill, on by default in V1)
mixes prompt chunks into decode steps, so a long prompt makes the steps it rides in slow;
SGLang runs a prefill batch as its own forward, so the decodes wait for it; llama.cpp
splits a unified batch of n_batch tokens over its slots.  A step's time is a roofline:
weights + KV read from HBM against the 2 x params x tokens FLOPs (compute scales with the
SM clock, HBM does not), tensor-parallel all-reduces over NVLink, plus the host work of
scheduling and launching (overlapped with the GPU in part; it grows when the thread gets
less CPU).  The same numbers give GPU busy time, SM / tensor / DRAM activity and every
counter and histogram, each moved where the engine moves it.
"""

from __future__ import annotations

import math
from collections import deque

from . import hist as H
from .gpu import GIB

SLICE = 0.25

# params, layers, kv heads, head dim, hidden, vocab, bytes per param (GGUF Q4_K_M ~ 0.57)
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": (8.03e9, 32, 8, 128, 4096, 32, 128256, 2.0),
    "meta-llama/Llama-3.1-70B-Instruct": (70.6e9, 80, 8, 128, 8192, 64, 128256, 2.0),
    "Qwen/Qwen2.5-7B-Instruct": (7.6e9, 28, 4, 128, 3584, 28, 152064, 2.0),
    "Qwen/Qwen2.5-32B-Instruct": (32.8e9, 64, 8, 128, 5120, 40, 152064, 2.0),
    "Qwen/Qwen2.5-14B-Instruct": (14.8e9, 48, 8, 128, 5120, 40, 152064, 2.0),
    "mistral-7b-instruct-v0.3.Q4_K_M.gguf": (7.25e9, 32, 8, 128, 4096, 32, 32768, 0.57),
    "meta-llama/Llama-3.3-70B-Instruct-FP8": (70.6e9, 80, 8, 128, 8192, 64, 128256, 1.0),
}


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "n", "done_p", "gen", "t_sched", "t_first",
                 "max_tokens", "heavy", "recompute", "seen")

    def __init__(self, arr, prompt, cached, out, n=1, max_tokens=None, heavy=0.0):
        self.arr, self.prompt, self.cached, self.out, self.n = arr, prompt, cached, out, n
        self.done_p = 0
        self.gen = 0
        self.t_sched = None
        self.t_first = None
        self.max_tokens = max_tokens or max(out, 256)
        self.heavy = heavy
        self.recompute = 0
        self.seen = False

    @property
    def need_p(self):
        return self.prompt - self.cached + self.recompute


class Server:
    def __init__(self, kind, gpus, boards, model, rng, traffic, *, tp=None, url="",
                 gpu_mem_util=0.90, max_batched=None, max_seqs=256, host_ms=5.0,
                 spec_k=0, accept=0.0, realtime=True, slots=8, max_model_len=32768,
                 pids=None, forward_metric=False, name=""):
        self.kind, self.gpus, self.boards, self.rng, self.traffic = kind, gpus, boards, rng, traffic
        self.model_name = model
        (self.params, self.layers, self.kvh, self.hd, self.hidden, self.heads, self.vocab,
         self.wb) = MODELS[model]
        self.tp = tp or len(gpus)
        spec = boards[0].s
        self.bw, self.flops, self.nvl = spec["bw"], spec["flops"], spec["nvlink"] or 32e9
        self.kvb = 2 * self.layers * self.kvh * self.hd * 2 // self.tp  # bytes/token/GPU
        self.weights = int(self.params * self.wb / self.tp)
        total = spec["mem"]
        if kind == "llamacpp":
            self.pool = slots * 8192
            self.mem = self.weights + self.pool * self.kvb + int(1.1 * GIB)
        else:
            free = gpu_mem_util * total - self.weights - 4.5 * GIB
            self.pool = int(free / self.kvb) // 16 * 16
            self.mem = int(gpu_mem_util * total)
        self.max_batched = max_batched or (8192 if total > 70 * GIB else 2048)
        if kind == "llamacpp":
            self.max_batched = 2048
            max_seqs = slots
        self.max_seqs = max_seqs
        self.host_s = host_ms / 1000.0
        self.spec_k, self.accept = spec_k, accept
        self.realtime, self.forward_metric = realtime, forward_metric
        self.max_model_len = max_model_len
        self.url = url
        self.name = name or kind
        self.cmdline = f"llama-server -m /models/{model} --metrics -np {slots} -c {slots * 8192} -ngl 99"
        self.waiting: deque = deque()
        self.running: list = []
        self.up = True
        self.pids = pids
        # what faults and the environment set
        self.cpu_share = 1.0  # of a core, for the thread that schedules and launches
        self.rank_mult = {g: 1.0 + rng.uniform(-0.012, 0.012) for g in gpus}
        self.share = {g: 1.0 for g in gpus}  # GPU time left by a co-tenant
        self.clock = {g: 1.0 for g in gpus}
        self.heavy_extra = 0.0
        self.ov = 0.75  # how much host work hides under the GPU's
        self.base_host = self.host_s
        self.heavy_end = None
        self.reset_counters()

    def reset_counters(self):
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      rt_dec=0.0, rt_pc=0.0, rt_pch=0.0)
        if self.kind == "vllm":
            tok = H.v_tokens(self.max_model_len)
            self.h = {n: H.Hist(n, b) for n, b in (
                ("ttft", H.V_TTFT), ("itl", H.V_ITL), ("tpot", H.V_ITL), ("e2e", H.V_REQ),
                ("queue", H.V_REQ), ("params_n", H.V_N), ("params_max_tokens", tok),
                ("max_generation_tokens", tok))}
        elif self.kind == "sglang":
            self.h = {n: H.Hist(n, b) for n, b in (("ttft", H.S_TTFT), ("itl", H.S_ITL),
                                                   ("e2e", H.S_E2E), ("queue", H.S_QUEUE))}
        else:
            self.h = {}
        self.t_pf_sec = 0.0

    # ------------------------------------------------------------------ physics
    def parts(self, B, C, Np, ctxp):
        """(compute s, HBM s, bytes) of one step at full clock, all of the GPU."""
        flops = 2 * self.params / self.tp * (B + Np) + 4 * self.layers * self.hidden * Np * ctxp / self.tp
        t_c = flops / (self.flops * 0.58)
        byts = self.weights + C * self.kvb + Np * self.kvb
        t_m = byts / (self.bw * 0.86)
        return t_c, t_m, byts

    def step(self, B, C, Np, ctxp, heavy):
        """(step s, per-GPU (gpu s, tensor s, nccl-wait s), bytes, host s)."""
        t_c, t_m, byts = self.parts(B, C, Np, ctxp)
        if self.spec_k:
            t_c = t_c * (1 + self.spec_k) * 0.5 + t_c * 0.5
            t_m *= 1.12  # the draft head's weights and the verification's extra KV
        comm = 0.0
        if self.tp > 1:
            comm = 2 * self.layers * (7e-6 + (B + Np) * self.hidden * 2 * 2 / self.nvl)
        per = {}
        slowest = 0.0
        for g in self.gpus:
            f = self.clock[g]
            sh = self.share[g]
            m = self.rank_mult[g]
            tc, tm = t_c * m / f / sh, t_m * m * (0.62 + 0.38 / f) / sh
            tg = max(tc, tm) + 0.22 * min(tc, tm) + (heavy + self.heavy_extra) / sh
            per[g] = [tg, tc * 0.8]
            slowest = max(slowest, tg)
        host = self.host_s * (1 + 0.012 * B) / max(0.05, self.cpu_share)
        gpu = slowest + comm
        st = max(gpu, host) + (1 - self.ov) * min(gpu, host)
        out = {g: (slowest + comm, min(v[1], v[0]), slowest - v[0]) for g, v in per.items()}
        return st, out, byts, host

    # ------------------------------------------------------------------ one tick
    def advance(self, t0, dt):
        acc = {g: [0.0, 0.0, 0.0, 0.0, 0.0] for g in self.gpus}  # busy, tensor, wait, bytes, heavy
        subs = {g: [] for g in self.gpus}
        self.host_busy = 0.0
        n_sl = max(1, int(round(dt / SLICE)))
        sl = dt / n_sl
        for i in range(n_sl):
            s = t0 + i * sl
            b0 = {g: acc[g][0] for g in self.gpus}
            if self.up:
                self._slice(s, sl, acc)
            for g in self.gpus:
                subs[g].append(min(1.0, (acc[g][0] - b0[g]) / sl))
        self.steps_tick = self.c["steps"] - getattr(self, "_steps0", 0.0)
        self._steps0 = self.c["steps"]
        act = {}
        for g, (busy, ten, wait, byts, heavy) in acc.items():
            b = min(1.0, busy / dt)
            act[g] = dict(busy=b, tensor=min(0.98, ten / dt),
                          sm=min(0.99, (0.9 * (busy - wait - heavy) + 0.16 * wait + 0.55 * heavy) / dt),
                          dram=min(0.97, byts / (self.bw * dt) + 0.1 * heavy / dt),
                          subs=subs[g],
                          nvlink=(busy / dt) * 2 * self.hidden * 2 * 60 / 1e6 * 1000 * (self.tp > 1))
            act[g]["occ"] = act[g]["sm"] * 0.38
        return act

    def _slice(self, s, sl, acc):
        rng = self.rng
        tr = self.traffic
        lam = tr.rate(s) * sl
        n_new = _poisson(rng, lam)
        for _ in range(n_new):
            self.waiting.append(tr.request(s + rng.random() * sl, rng))
        for r in tr.injected(s, sl):
            self.waiting.append(r)
        # admit
        used = sum((r.done_p + r.cached + r.gen * r.n) for r in self.running)
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            if r.arr > s + sl:
                break
            need = r.prompt + r.recompute + r.n * 16
            if used + need > self.pool * 0.97:
                break
            self.waiting.popleft()
            if r.t_sched is None:
                r.t_sched = max(r.arr, s)
            used += need
            self.running.append(r)
        dec = [r for r in self.running if r.done_p >= r.need_p]
        pend = [r for r in self.running if r.done_p < r.need_p]
        B = sum(r.n for r in dec)
        C = sum((r.prompt + r.gen) * r.n for r in dec)
        heavy = sum(r.heavy for r in dec)
        P = sum(r.need_p - r.done_p for r in pend)
        t_d, per_d, by_d, h_d = self.step(B, C, 0, 0, heavy) if B else (0, {}, 0, 0)
        k = m = 0.0
        t_p = 0.0
        per_p = {}
        by_p = 0
        if P > 0:
            sg = self.kind == "sglang"
            b = self.max_batched if sg else max(256, self.max_batched - B)
            k = max(math.ceil(P / b), min(len(pend), 6))
            Np = P / k
            ctxp = sum(r.need_p for r in pend) / len(pend) / 2
            if sg:
                t_p, per_p, by_p, _ = self.step(0, 0, Np, ctxp, 0)
            else:
                t_p, per_p, by_p, _ = self.step(B, C, Np, ctxp, heavy)
                if self.kind == "llamacpp":
                    t_p *= 1.15
            if sg and k * t_p + (t_d if B else 0.0) >= sl:
                k = sl / (t_p + (0.5 * t_d if B else 0.0))
                m = 0.5 * k if B else 0.0
                done = k * Np
            elif not sg and k * t_p >= sl:
                k = sl / t_p
                done = k * Np
            else:
                done = P
                m = (sl - k * t_p) / t_d if B else 0.0
        else:
            done = 0
            m = sl / t_d if B else 0.0
        # GPU time accounting
        for g in self.gpus:
            a = acc[g]
            if B and m:
                tg, ten, wait = per_d[g]
                a[0] += m * tg
                a[1] += m * ten
                a[2] += m * wait
                a[3] += m * by_d
                a[4] += m * (heavy + self.heavy_extra) / self.share[g]
            if k:
                tg, ten, wait = per_p[g]
                a[0] += k * tg
                a[1] += k * ten
                a[2] += k * wait
                a[3] += k * by_p
        self.c["steps"] += k + m
        self.c["fwd_s"] += min(sl, k * t_p + m * t_d)
        self.host_busy += min(sl, (k + m) * h_d) if B else 0.0
        # prefill progress, FCFS
        left = done
        cum = 0.0
        for r in pend:
            if left <= 0:
                break
            need = r.need_p - r.done_p
            take = min(need, left)
            r.done_p += take
            left -= take
            cum += take
            if self.kind == "sglang" and self.realtime:
                self.c["rt_pc"] += take
            if r.done_p >= r.need_p:
                if r.recompute:
                    r.recompute = 0
                    continue
                tf = s + sl * (cum / max(done, 1e-9)) * min(1.0, (k * t_p) / sl if k else 1.0)
                tf = max(tf, r.arr + 0.004)
                r.t_first = tf
                r.gen = max(r.gen, 1)
                self.c["gen"] += r.n if self.kind == "vllm" or (self.kind == "sglang" and self.realtime) else 0
                if self.kind == "vllm":
                    self.c["prompt"] += r.prompt
                    self.c["cached"] += r.cached
                    self.h["ttft"].exact(tf - r.arr)
                elif self.kind == "sglang":
                    self.h["ttft"].exact(tf - r.arr)
                    self.h["queue"].exact(max(0.0, r.t_sched - r.arr))
                    if self.realtime:
                        self.c["rt_pch"] += r.cached
                else:
                    self.c["prompt"] += r.prompt - r.cached
                    self.c["cached"] += r.cached
                    self.c["pf_s"] += tf - r.t_sched
        # decode progress
        tps = 1.0 + (self.accept * self.spec_k if self.spec_k else 0.0)
        if self.spec_k and B:
            nst = (k + m) if self.kind != "sglang" else m
            self.c["drafts"] += nst * B
            self.c["dtok"] += nst * B * self.spec_k
            self.c["acc"] += nst * B * self.accept * self.spec_k
        steps = (k + m) if self.kind != "sglang" else m
        self.last_steps = steps
        if B and steps:
            if self.kind == "vllm":
                self.h["itl"].spread(t_d, m * B, 0.10)
                if k:
                    self.h["itl"].spread(t_p, k * B, 0.15)
            elif self.kind == "sglang":
                stall = min(k, m)
                per_tok = t_d / tps
                self.h["itl"].spread(per_tok, (m - stall) * B * tps, 0.10)
                if stall:
                    self.h["itl"].spread(t_d + t_p, stall * B, 0.15)
        fin = []
        for r in dec:
            add = steps * tps
            before = r.gen
            r.gen = min(r.out, r.gen + add)
            got = (r.gen - before) * r.n
            if self.kind == "vllm" or (self.kind == "sglang" and self.realtime):
                self.c["gen"] += got
            if self.kind == "sglang" and self.realtime:
                self.c["rt_dec"] += got
            if r.gen >= r.out:
                fin.append((r, (r.gen - before) / max(add, 1e-9)))
        for r, frac in fin:
            tend = s + sl * min(1.0, frac)
            self.running.remove(r)
            self._finish(r, tend)
        # KV pressure: vLLM preempts (recompute), SGLang retracts, llama.cpp has fixed slots
        used = sum((r.done_p + r.cached + r.gen * r.n) for r in self.running)
        while self.kind != "llamacpp" and used > self.pool and len(self.running) > 1:
            victim = self.running.pop()
            used -= victim.done_p + victim.cached + victim.gen * victim.n
            victim.recompute = victim.gen * victim.n
            victim.done_p = 0
            self.waiting.appendleft(victim)
            if self.kind == "vllm":
                self.c["pre"] += 1
            else:
                self.c["retr"] += 1
                self.c["retr_tok"] += victim.prompt
        self.kv_used = used

    def _finish(self, r, tend):
        c = self.c
        c["fin"] += 1
        if r.heavy:
            self.heavy_end = tend
        e2e = tend - r.arr
        ttft = (r.t_first or tend) - r.arr
        if self.kind == "vllm":
            h = self.h
            h["e2e"].exact(e2e)
            h["queue"].exact(max(0.0, r.t_sched - r.arr))
            if r.out > 1:
                h["tpot"].exact((e2e - ttft) / (r.out - 1))
            h["params_n"].exact(r.n)
            h["params_max_tokens"].exact(r.max_tokens)
            h["max_generation_tokens"].exact(r.max_tokens)
            c["pf_s"] += (r.t_first or tend) - r.t_sched
            c["dec_s"] += tend - (r.t_first or tend)
        elif self.kind == "sglang":
            self.h["e2e"].exact(e2e)
            if not self.realtime:
                c["gen"] += r.out * r.n
                c["prompt"] += r.prompt
                c["cached"] += r.cached
        else:
            c["gen"] += r.out
            c["dec_s"] += tend - (r.t_first or tend)

    # ------------------------------------------------------------------ gauges
    def gauges(self):
        run = len(self.running)
        wait = sum(1 for r in self.waiting)
        return run, wait, min(1.0, self.kv_used / self.pool) if self.pool else 0.0

    kv_used = 0


def _poisson(rng, lam):
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


class Traffic:
    """Arrivals and request shapes: rate(t) in requests/s; prompt and output lengths
    log-normal around their medians; a prefix-cache share; injected extra requests."""

    def __init__(self, rate, prompt=800, out=220, sig_p=0.7, sig_o=0.8, cached=0.0,
                 max_prompt=30000, max_out=4000):
        self.rate_fn = rate
        self.prompt, self.out, self.sig_p, self.sig_o = prompt, out, sig_p, sig_o
        self.cached = cached
        self.max_prompt, self.max_out = max_prompt, max_out
        self.inject: list = []  # (time, factory)
        self.mods: list = []  # (t_from, t_to, fn(t) -> dict of overrides)

    def rate(self, t):
        return max(0.0, self.rate_fn(t))

    def _cur(self, t):
        o = {}
        for a, b, fn in self.mods:
            if a <= t < b:
                o.update(fn(t))
        return o

    def request(self, t, rng):
        o = self._cur(t)
        p = int(min(o.get("max_prompt", self.max_prompt),
                    max(8, o.get("prompt", self.prompt) * math.exp(rng.gauss(0, self.sig_p)))))
        n = int(min(self.max_out, max(4, o.get("out", self.out) * math.exp(rng.gauss(0, self.sig_o)))))
        cached = int(p * o.get("cached", self.cached) * rng.uniform(0.85, 1.0)) // 16 * 16
        mt = o.get("max_tokens") or rng.choice((256, 512, 1024, 2048, 4096))
        return Req(t, p, min(cached, p - 1), min(n, mt), max_tokens=mt)

    def injected(self, s, sl):
        out = []
        while self.inject and self.inject[0][0] < s + sl:
            when, make = self.inject.pop(0)
            out.append(make(when))
        return out
