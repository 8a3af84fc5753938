"""A serving engine on GPUs, one fluid step-time model per replica per tick.

Each replica (a tensor-parallel group) holds running sequences R with an average context
C, a waiting queue W and prompt tokens still to prefill.  One decode step costs
    GPU:  max(FLOPs / (peak * 0.55 * clock), bytes / (HBM * 0.82)) + TP all-reduce + extras
    host: scheduling + launches (a CUDA-graph replay, or one launch per kernel when eager)
and the step takes the longer of the two plus the part of the host work that never overlaps.
Chunked prefill puts prompt tokens into the same steps (budget ``max_batched``), so long
prompts lengthen every decode step.  From the steps of a tick come tokens, finishes,
KV use and preemption, GPU busy time, SM / tensor / DRAM activity (hence power and clock,
physics.Board), and the latency observations that go into the engine's histograms, each at
the moment the engine observes it (ITL per step, TTFT at the first token, e2e / queue /
params at finish).  Counters move when the engine moves them: vLLM V1 and the newer SGLang
scheduler count generated tokens per step; the older SGLang tokenizer counter and
llama.cpp's tokens_predicted_total only when a request finishes.
"""

from __future__ import annotations

import dataclasses
import math

from gputop.schema import EngineSample, Frame

from . import frames as fr
from .physics import GIB, Act, make_boards

HOST_SPLIT = 0.35  # share of per-step host work that never overlaps the GPU (V1 async)


def level(ev: dict, t: float) -> float:
    """How strongly an event acts at time t (0..1): sudden, ramp, intermittent, decay."""
    a, b = ev["t0"], ev["t1"]
    if t < a or t >= b:
        return 0.0
    onset = ev.get("onset", "sudden")
    if onset == "ramp":
        return min(1.0, (t - a) / max(1.0, ev.get("ramp", (b - a) * 0.6)))
    if onset == "intermittent":
        on, off = ev.get("on", 20.0), ev.get("off", 25.0)
        return 1.0 if ((t - a) % (on + off)) < on else 0.0
    return 1.0


def active(events, kind, t):
    return max((level(e, t) for e in events if e["kind"] == kind), default=0.0)


def ev_of(events, kind):
    return next((e for e in events if e["kind"] == kind), None)


class Replica:
    def __init__(self, cfg, idx, gpus, rng):
        self.cfg, self.idx, self.gpus, self.rng = cfg, idx, gpus, rng
        m = cfg["model"]
        tp = cfg["tp"]
        self.weights = m["params"] * 1e9 * m.get("wbytes", 2) / tp
        kvh = max(1, m["kv_heads"] // tp)
        self.kv_bpt = 2 * m["layers"] * kvh * m["head_dim"] * m.get("kvbytes", 2)
        gpu = cfg["gpu_model"]
        budget = gpu.mem_total * cfg.get("mem_util", 0.9)
        pool = budget - self.weights - cfg.get("activation_gib", 3.0) * GIB - 0.8 * GIB
        self.pool_bytes = max(2 * GIB, pool) * cfg.get("pool_scale", 1.0)
        self.pool = int(self.pool_bytes / self.kv_bpt) // 16 * 16
        self.proc_mem = int(budget)
        self.reset()

    def reset(self):
        self.R = 0.0
        self.C = 0.0
        self.W = 0.0
        self.Pq = 0.0  # prompt tokens admitted, not yet computed
        self.Pn = 0.0  # requests in prefill
        self.recompute = 0.0
        self.carry_fin = 0.0
        self.over = []  # oversized requests: [end_time, n, max_tokens, start]
        self.t_ref = None  # the step time the clients are used to (slow EMA)
        self.t_last = None
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, drafts=0.0,
                      dtoks=0.0, acc=0.0, pfs=0.0, dcs=0.0, fwd=0.0, steps=0.0,
                      rtr=0.0, rtr_tok=0.0, fin_tokens=0.0, spec_fin=(0.0, 0.0, 0.0))
        kind, ml = self.cfg["engine"], self.cfg["model"]["ctx"]
        if kind == "vllm":
            self.h = {n: fr.Hist(n, b) for n, b in (
                ("ttft", fr.VLLM_TTFT), ("itl", fr.VLLM_ITL), ("tpot", fr.VLLM_ITL),
                ("e2e", fr.VLLM_REQ), ("queue", fr.VLLM_REQ), ("params_n", fr.VLLM_N),
                ("params_max_tokens", fr.tokens_buckets(ml)),
                ("max_generation_tokens", fr.tokens_buckets(ml)))}
        elif kind == "sglang":
            self.h = {n: fr.Hist(n, b) for n, b in (
                ("ttft", fr.SGL_TTFT), ("itl", fr.SGL_ITL), ("e2e", fr.SGL_E2E),
                ("queue", fr.SGL_QUEUE))}
        else:
            self.h = {}

    # ------------------------------------------------------------ the step model
    def step_time(self, d, p, plen, f, extra_gpu, host, eager, spec_k):
        cfg, m, gpu = self.cfg, self.cfg["model"], self.cfg["gpu_model"]
        tp = cfg["tp"]
        toks = d * (1 + spec_k) + p
        flops = 2 * m.get("active", m["params"]) * 1e9 / tp * toks
        flops += 4 * m["layers"] * m["hidden"] / tp * p * plen * 0.5  # prefill attention
        byts = self.weights + self.R * self.C * self.kv_bpt + p * self.kv_bpt
        peak = gpu.flops * (2 if m.get("wbytes", 2) == 1 else 1)  # FP8 GEMMs: twice bf16
        t_c = flops / (peak * 0.55 * f)
        t_m = byts / (gpu.bw * 0.88) * (1 + 0.45 * (1 / f - 1))
        t_gpu = max(t_c, t_m) + 0.15 * min(t_c, t_m)
        if spec_k:
            t_gpu += spec_k * 0.06 * (self.weights / (gpu.bw * 0.82))  # the draft model
        if tp > 1:
            link = 1.4e11 if gpu.sxm else 2.2e10
            t_gpu += 2 * m["layers"] * (12e-6 + toks * m["hidden"] * 2 * 2 * (tp - 1) / tp / link)
        t_gpu += extra_gpu
        kernels = (cfg.get("eager_kernels", 14) if eager else 1) * m["layers"] + 20
        if eager:  # unfused kernels: each a few microseconds of GPU time on a few SMs
            t_gpu += kernels * cfg.get("tiny_kernel_s", 7e-6)
        host_scale, delay = host
        t_host = (cfg.get("host_step_s", 0.0015) + kernels * cfg.get("launch_s", 4e-6)) * host_scale
        t_step = max(t_gpu, t_host) + HOST_SPLIT * t_host + delay
        return t_step, t_gpu, t_c, t_m, flops, byts

    def tick(self, t, dt, f, ctx):
        cfg, rng, ev = self.cfg, self.rng, self.cfg["events"]
        out = {}
        share = ctx["share"]  # GPU time another process takes (time slicing)
        host_scale = (ctx["host_scale"], ctx["host_delay"])
        # ---- arrivals
        lam = cfg["rate"] * ctx["load"] / cfg["dp"]
        # closed-loop clients (agents, pipelines with a concurrency limit, users waiting for
        # an answer) send more slowly when answers come slowly
        closed = cfg.get("closed", 0.6)
        if self.t_ref and self.t_last:
            lam *= (1 - closed) + closed * min(1.0, self.t_ref / self.t_last)
        mean = lam * dt
        arr = max(0.0, rng.gauss(mean, math.sqrt(mean + 0.01))) if mean > 0 else 0.0
        mix = cfg["mix"]
        shift = active(ev, "mix_shift", t)
        w = [c[0] * (1 - shift) + c[3] * shift if len(c) > 3 else c[0] for c in mix]
        tw = sum(w)
        plen = sum(wi * c[1] for wi, c in zip(w, mix)) / tw
        hit = sum(wi * c[2] for wi, c in zip(w, mix)) / tw
        hit_ev = ev_of(ev, "hit_change")
        if hit_ev and level(hit_ev, t):
            hit = hit + (hit_ev["to"] - hit) * level(hit_ev, t)
        long_ev = ev_of(ev, "long_prompts")
        long_arr = 0.0
        if long_ev:
            lv = level(long_ev, t)
            if lv:
                lm = long_ev["rate"] * lv * dt / cfg["dp"]
                long_arr = max(0.0, rng.gauss(lm, math.sqrt(lm)))
        out_mean = cfg["out"] * (1 + 0.05 * rng.gauss(0, 1))
        n_req = arr + long_arr
        p_new = (arr * plen + long_arr * (long_ev["tokens"] if long_ev else 0)) / max(n_req, 1e-9)
        h_new = (arr * hit) / max(n_req, 1e-9)
        self.W += n_req
        # oversized requests
        o_ev = ev_of(ev, "oversized")
        if o_ev and level(o_ev, t) and rng.random() < dt / o_ev.get("every", 20.0):
            dur = o_ev.get("lasts", 30.0) * (0.7 + 0.6 * rng.random())
            self.over.append([t + dur, o_ev.get("n", 8), o_ev.get("max_tokens", 4096), t])
        n_over = sum(o[1] for o in self.over)
        # ---- admission (KV permitting)
        used = self.R * self.C + self.Pq
        room_seq = max(0.0, cfg["max_seqs"] - self.R - self.Pn - n_over)
        room_kv = max(0.0, (self.pool * 0.97 - used) / max(64.0, p_new * (1 - h_new) + 16))
        admit = min(self.W, room_seq, room_kv)
        wait_before = self.W
        self.W -= admit
        comp_tokens = admit * p_new * (1 - h_new)
        self.Pq += comp_tokens + self.recompute
        recomputing = self.recompute
        self.recompute = 0.0
        self.Pn += admit
        self.c["prompt_pending"] = self.c.get("prompt_pending", 0.0) + admit * p_new
        self.c["cached_pending"] = self.c.get("cached_pending", 0.0) + admit * p_new * h_new
        # ---- steps of this tick
        eager = ctx["eager"]
        spec = cfg.get("spec")
        k = spec["k"] if spec else 0
        over_lv = level(o_ev, t) if o_ev else 0.0
        extra = o_ev["per_child_s"] * n_over if (o_ev and n_over) else 0.0
        d = self.R + n_over
        budget = cfg.get("max_batched", 8192)
        if d <= 0 and self.Pq <= 0:
            steps, t_step, t_gpu, p_step, t_dec = 0.0, 0.0, 0.0, 0.0, 0.0
            flops = byts = 0.0
        else:
            t_step = self.step_time(d, 0, plen, f, extra, host_scale, eager, k)[0]
            for _ in range(3):
                steps = dt * (1 - share) / max(t_step, 1e-4)
                p_step = min(max(0.0, budget - d * (1 + k)), self.Pq / max(steps, 1e-9))
                t_step, t_gpu, t_c, t_m, flops, byts = self.step_time(
                    d, p_step, p_new if comp_tokens else plen, f, extra, host_scale, eager, k)
                t_step /= (1 - share)
            steps = dt / t_step
            t_dec = self.step_time(d, 0, plen, f, extra, host_scale, eager, k)[0] / (1 - share)
            # fewer than one sequence on average: the GPU works that share of the time
            self.duty = min(1.0, d) if d > 0 else 1.0
            steps *= self.duty
        prefilled = min(self.Pq, steps * p_step)
        frac_done = prefilled / self.Pq if self.Pq > 0 else 0.0
        self.Pq -= prefilled
        first = self.Pn * frac_done if self.Pq > 1 else self.Pn
        self.Pn -= first
        prompt_cnt = self.c.pop("prompt_pending", 0.0)
        cached_cnt = self.c.pop("cached_pending", 0.0)
        # prompt tokens are counted when the prefill finishes (first token)
        done_share = first / max(first + self.Pn, 1e-9)
        self.c["prompt_pending"] = prompt_cnt * (1 - done_share)
        self.c["cached_pending"] = cached_cnt * (1 - done_share)
        prompt_now, cached_now = prompt_cnt * done_share, cached_cnt * done_share
        # ---- decoding
        alpha = ctx["alpha"]
        acc = alpha * (1 - alpha**k) / (1 - alpha) if k else 0.0
        tps = 1 + acc
        duty = getattr(self, "duty", 1.0) if steps else 1.0
        gen = steps * self.R / duty * tps
        gen_over = steps * n_over
        finishing = gen / max(out_mean, 1.0) + self.carry_fin
        fin = min(self.R, float(int(finishing)))
        self.carry_fin = finishing - fin if fin < self.R else 0.0
        total = self.C * self.R - fin * self.C * 1.1 + first * p_new + gen
        self.R += first - fin
        ctx_extra = ctx["ctx_extra"]
        self.C = max(total / self.R, plen * 0.6 + ctx_extra) if self.R > 0.05 else 0.0
        # KV pressure: preempt the newest sequences, recompute them later
        used = self.R * self.C + self.Pq
        pre = 0.0
        if used > self.pool * 0.985 and self.R > 1:
            pre = min(self.R - 1, math.ceil((used - self.pool * 0.94) / max(self.C, 1)))
            self.R -= pre
            self.W += pre
            self.recompute += pre * self.C
            used = self.R * self.C + self.Pq
        # oversized requests finishing
        over_done = [o for o in self.over if o[0] <= t]
        self.over = [o for o in self.over if o[0] > t]
        c = self.c
        c["gen"] += gen + gen_over
        c["prompt"] += prompt_now
        c["cached"] += cached_now
        c["fin"] += fin + len(over_done)
        c["pre"] += pre
        c["steps"] += steps
        c["fwd"] += steps * t_gpu
        if k:
            c["drafts"] += steps * self.R
            c["dtoks"] += steps * self.R * k
            c["acc"] += steps * self.R * acc
        if cfg["engine"] == "sglang":
            c["rtr"] += pre
            c["rtr_tok"] += pre * p_new
        # ---- latencies the engine observes
        t_ttft = (wait_before / max(admit / dt, lam * 0.5, 0.05) if wait_before > admit + 0.5 else 0.0)
        chunk = max(256.0, budget - d * (1 + k))
        if comp_tokens or self.Pq:
            t_full = self.step_time(d, chunk, p_new, f, extra, host_scale, eager, k)[0] / (1 - share)
            prefill_lat = (self.Pq + p_new * (1 - h_new)) / chunk * t_full
        else:
            prefill_lat = 0.0
        ttft_med = max(0.004, t_ttft + min(prefill_lat, 60) + t_step * 1.5 + 0.002)
        per_tok = t_dec / tps if tps else t_dec
        e2e_med = ttft_med + out_mean * per_tok
        q_med = max(0.0005, t_ttft)
        mixed = min(1.0, prefilled / max(steps * max(256.0, min(budget, p_new)), 1e-9)) if steps else 0
        h = self.h
        if h and steps:
            comps = [(1 - mixed, t_dec, 0.10), (mixed, t_step if mixed < 0.999 else t_step, 0.22)]
            if mixed > 0.02:
                comps[1] = (mixed, max(t_dec, (t_step - (1 - mixed) * t_dec) / mixed), 0.22)
            h["itl"].observe(steps * self.R / duty, comps, rng)
            h["ttft"].observe(first, [(1, ttft_med, 0.45)], rng)
            if long_ev and long_arr:
                pass
            h["e2e"].observe(fin, [(1, e2e_med, 0.55)], rng)
            h["queue"].observe(fin, [(1, q_med, 0.9)], rng)
            if "tpot" in h:
                h["tpot"].observe(fin, [(1, per_tok, 0.15)], rng)
                h["params_n"].observe(fin, [(1, 1.0, 0)], rng)
                mt = cfg.get("max_tokens_mix", ((0.6, 1024), (0.3, 2048), (0.1, 4096)))
                h["params_max_tokens"].observe(fin, [(w_, float(v), 0) for w_, v in mt], rng)
                h["max_generation_tokens"].observe(fin, [(w_, float(v), 0) for w_, v in mt], rng)
            for o in over_done:
                h["e2e"].observe(1, [(1, t - o[3], 0)], rng)
                if "tpot" in h:
                    h["params_n"].observe(1, [(1, float(o[1]), 0)], rng)
                    h["params_max_tokens"].observe(1, [(1, float(o[2]), 0)], rng)
                    h["max_generation_tokens"].observe(1, [(1, float(o[2]), 0)], rng)
        c["pfs"] += fin * min(prefill_lat + t_step, 60)
        c["dcs"] += fin * out_mean * per_tok
        c["fin_tokens"] += fin * out_mean
        if k:
            a, b_, s = c["spec_fin"]
            c["spec_fin"] = (a + fin * out_mean / tps, b_ + fin * out_mean / tps * k,
                             s + fin * out_mean / tps * acc)
        if t_dec:
            self.t_last = t_dec / tps
            self.t_ref = self.t_last if self.t_ref is None else \
                self.t_ref + (self.t_last - self.t_ref) * (1 - math.exp(-dt / 900))
        # ---- GPU activity (per GPU of the group)
        busy_t = steps * t_gpu
        busy = min(1.0, busy_t / dt)
        dec_sm = 0.55 + 0.35 * min(1.0, d / 48)
        t_pref = min(busy_t, steps * (t_gpu - self.step_time(d, 0, plen, f, extra, host_scale,
                                                              eager, k)[1])) if p_step else 0.0
        sm_in = (dec_sm * (busy_t - t_pref) + 0.97 * t_pref) / max(busy_t, 1e-9)
        if eager:  # the real work at its SM share, the tiny kernels on a few SMs
            tiny_t = steps * ((cfg.get("eager_kernels", 14) * self.cfg["model"]["layers"] + 20)
                              * cfg.get("tiny_kernel_s", 7e-6))
            sm_in = (sm_in * max(0.0, busy_t - tiny_t) + ctx.get("eager_sm", 0.06) * tiny_t) \
                / max(busy_t, 1e-9)
        if extra and busy_t:
            ex_t = steps * extra
            sm_in = (sm_in * (busy_t - ex_t) + 0.5 * ex_t) / busy_t
        gpu = cfg["gpu_model"]
        tensor = min(0.98, steps * flops / (gpu.flops * f * 0.82) / dt) if steps else 0.0
        dram = min(0.97, steps * byts / (gpu.bw * dt)) if steps else 0.0
        if extra and steps:
            dram = min(0.97, dram + steps * extra * 0.25 / dt)
        nv = 0.0
        if cfg["tp"] > 1 and steps:
            m = cfg["model"]
            nv = steps * 2 * m["layers"] * (d * (1 + k) + p_step) * m["hidden"] * 2 * 2 / 2**20 / dt
        pattern = ()
        if steps and duty < 0.97:
            npat = max(1, int(6 * dt))
            pattern = tuple(busy / duty if rng.random() < duty else 0.0 for _ in range(npat))
        out.update(busy=busy, sm=busy * sm_in, pattern=pattern, tensor=tensor, dram=dram, nvlink=nv,
                   steps=steps, t_step=t_step, t_dec=t_dec, kv_used=used, gen=gen,
                   prompt=prompt_now, admit=admit, pre=pre, over=n_over, mixed=mixed,
                   flops=steps * flops, byts=steps * byts, serving=steps > 0)
        return out

    # ------------------------------------------------------------ what the page says
    def sample(self, t_wall, t_mono, kind, pids, note, ctxs):
        c = self.c
        cfg = self.cfg
        running = self.R + self.Pn + sum(o[1] for o in self.over)
        kv = min(1.0, (self.R * self.C + self.Pq) / self.pool) if self.pool else None
        m = cfg["model"]
        kvc = {"num_hidden_layers": m["layers"], "num_attention_heads": m["heads"],
               "num_key_value_heads": m["kv_heads"], "hidden_size": m["hidden"],
               "head_dim": m["head_dim"], "dtype": "bfloat16"} if cfg.get("config_known", True) else {}
        base = dict(kind=kind, url=cfg["url"], model=m["name"], pids=tuple(pids), note=note,
                    time_mono_s=t_mono, time_wall_s=t_wall, tensor_parallel=cfg["tp"],
                    kv_config=kvc, weights_bytes=int(self.weights) if kvc else None,
                    weights_source="size of %d .safetensors file(s)" % max(1, int(m["params"] / 5))
                    if kvc else "", **ctxs)
        hist = tuple(hh.snap() for hh in self.h.values())
        if kind == "vllm":
            e = dict(generation_tokens_total=round(c["gen"]), prompt_tokens_total=round(c["prompt"]),
                     prompt_tokens_cached_total=round(c["cached"]),
                     requests_finished_total=round(c["fin"]), requests_running=round(running),
                     requests_waiting=round(self.W), kv_usage_ratio=round(kv, 5),
                     num_gpu_blocks=self.pool // 16, block_size=16, kv_pool_tokens=self.pool,
                     kv_pool_bytes=int(self.pool * self.kv_bpt) if cfg.get("new_vllm", True) else None,
                     cache_dtype="auto", histograms=hist, preemptions_total=round(c["pre"]),
                     waiting_by_reason={"capacity": float(round(self.W)) if kv > 0.9 else 0.0,
                                        "deferred": 0.0},
                     prefill_seconds_total=round(c["pfs"], 3), decode_seconds_total=round(c["dcs"], 3),
                     corrupted_requests_total=0.0)
            if cfg.get("spec"):
                e.update(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtoks"]),
                         spec_accepted_tokens_total=round(c["acc"]))
        elif kind == "sglang":
            new = cfg.get("sglang_new", True)
            e = dict(generation_tokens_total=round(c["gen"] if new else c["fin_tokens"]),
                     prompt_tokens_total=round(c["prompt"]), prompt_tokens_cached_total=round(c["cached"]),
                     requests_finished_total=round(c["fin"]), requests_running=round(running),
                     requests_waiting=round(self.W), kv_usage_ratio=round(kv, 4),
                     kv_pool_tokens=self.pool, histograms=hist,
                     retracted_requests_total=round(c["rtr"]),
                     retracted_input_tokens_total=round(c["rtr_tok"]),
                     kv_used_tokens=float(round(self.R * self.C + self.Pq)),
                     kv_free_tokens=float(max(0, round(self.pool - self.R * self.C - self.Pq))),
                     kv_evictable_tokens=float(round(min(self.pool * 0.3, (self.pool - self.R * self.C) * 0.4)))
                     if new else None,
                     forward_seconds_total=round(c["fwd"], 3) if new else None)
            if cfg.get("spec"):
                a = self.cfg["_alpha_now"]
                k = cfg["spec"]["k"]
                acc = a * (1 - a**k) / (1 - a)
                e.update(spec_accept_ratio=round(acc / k, 3), spec_accept_length=round(1 + acc, 3))
        else:  # llama.cpp: generated tokens and decode seconds counted when a slot finishes
            a, b_, s = c["spec_fin"]
            e = dict(generation_tokens_total=round(c["fin_tokens"]),
                     prompt_tokens_total=round(c["prompt"]), prompt_tokens_cached_total=round(c["cached"]),
                     requests_running=round(running), requests_waiting=round(self.W),
                     kv_pool_tokens=self.pool, cache_dtype="f16",
                     prefill_seconds_total=round(c["pfs"], 3), decode_seconds_total=round(c["dcs"], 3),
                     decode_steps_total=round(c["steps"]))
            if cfg.get("spec"):
                e.update(spec_drafts_total=round(a), spec_draft_tokens_total=round(b_),
                         spec_accepted_tokens_total=round(s))
        return EngineSample(**base, **e)


def simulate(spec, rng):
    """Frames of one serving trace (spec: catalogue.Spec)."""
    cfg = dict(spec.knobs)
    gpu = cfg["gpu_model"] = spec.gpu
    tp, dp = cfg.setdefault("tp", 1), cfg.setdefault("dp", 1)
    n_gpu = tp * dp
    ev = cfg["events"] = list(cfg.get("events", ()))
    cfg.setdefault("url", {"vllm": "http://127.0.0.1:8000/metrics",
                           "sglang": "http://127.0.0.1:30000/metrics",
                           "llamacpp": "http://127.0.0.1:8080/metrics"}[cfg["engine"]])
    boards = make_boards(gpu, n_gpu, rng)
    reps = [Replica(cfg, i, list(range(i * tp, (i + 1) * tp)), rng) for i in range(dp)]
    dt = spec.tick_s
    n = int(spec.duration_s / dt)
    t0w = spec.start_wall_s
    mono0 = 5000.0 + rng.random() * 90000
    host = fr.Host(cfg.get("cpus", 64), rng, cfg.get("host_base", 3.0))
    kind = cfg["engine"]
    api, core, workers, gen = _engine_procs(cfg, t0w, rng, boards)
    extra_procs = []  # (Proc, gpu, mem, kind-of-work, event)
    for e in ev:
        if e["kind"] in ("intruder", "neighbour"):
            p = fr.Proc(e.get("pid", 40000 + rng.randrange(9000)), e["name"], e["cmdline"],
                        t0w + e["t0"], user=e.get("user", "alice"))
            extra_procs.append((p, e))
    frames_out = []
    last_engine, last_engine_at = None, None
    ebpf = cfg.get("ebpf", False)
    proc_sm = cfg.get("proc_sm", True)
    restart = ev_of(ev, "restart")
    scrape_every = cfg.get("scrape_every", 1)
    prev_rates = {}
    for i in range(n):
        t = i * dt
        tw = t0w + t + rng.gauss(0, 0.004)
        tm = mono0 + t
        load = _load(cfg, t, spec.duration_s, rng)
        down = restart is not None and restart["t0"] <= t < restart["t1"]
        warm = restart is not None and restart["t1"] <= t < restart["t1"] + restart.get("warm", 25)
        if restart is not None and abs(t - restart["t1"]) < dt / 2:
            for r in reps:
                r.reset()
            api, core, workers, gen = _engine_procs(cfg, tw, rng, boards, generation=gen + 1)
        # host contention: the engine's threads get a share of a core
        cont = active(ev, "host_contention", t)
        jit = active(ev, "launch_jitter", t)
        cev = ev_of(ev, "host_contention") or ev_of(ev, "launch_jitter")
        phi = 1.0 - (cev["steal"] if cev else 0) * max(cont, jit)
        host_scale = 1.0 / max(phi, 0.15)
        host_delay = (cev.get("delay_ms", 0.0) / 1000 * max(cont, jit)) if cev else 0.0
        share = 0.0
        for p, e in extra_procs:
            if e["kind"] == "intruder":
                share = max(share, e["share"] * level(e, t))
            elif e["kind"] == "neighbour" and level(e, t):
                share = max(share, e.get("share", 0.02) * (1 if rng.random() < e.get("duty", 0.3) else 0.2))
        tiny = ev_of(ev, "eager")
        eager = bool(tiny and level(tiny, t))
        spec_cfg = cfg.get("spec")
        alpha = spec_cfg["alpha"] if spec_cfg else 0.0
        rej = ev_of(ev, "spec_reject")
        if rej and level(rej, t):
            alpha = alpha + (rej["alpha"] - alpha) * level(rej, t)
        if spec_cfg:
            alpha = min(0.95, max(0.02, alpha + rng.gauss(0, 0.02)))
            cfg["_alpha_now"] = alpha
        mb = ev_of(ev, "long_context")
        ctx_extra = mb["tokens"] * level(mb, t) if mb else 0.0
        ctxd = dict(load=0.0 if (down or warm) else load, share=share, host_scale=host_scale,
                    host_delay=host_delay,
                    eager=eager, alpha=alpha, ctx_extra=ctx_extra,
                    eager_sm=tiny.get("sm", 0.1) if tiny else 0.1)
        # clocks from last tick's activity (power cap, thermal, forced)
        acts = []
        outs = []
        for r in reps:
            fs = []
            for gi in r.gpus:
                b = boards[gi]
                a = Act(busy=0, power_limit=_power_limit(cfg, ev, t, gi))
                _forced(a, ev, t, gi)
                prev = prev_rates.get(gi)
                if prev is not None:
                    a.sm, a.tensor, a.dram = prev
                cf, rs = b.clock_factor(a)
                fs.append((cf, rs, cf / _work_factor(ev, t, gi)))
            f = min(x[2] for x in fs)  # a TP group runs at its slowest member
            o = r.tick(t, dt, f, ctxd) if not down else dict(
                busy=0, sm=0, tensor=0, dram=0, nvlink=0, steps=0, t_step=0, serving=False,
                gen=0, kv_used=0)
            outs.append(o)
            for j, gi in enumerate(r.gpus):
                own = o["busy"]
                # a member faster than the group waits in the collective (NCCL spins: busy)
                wait = max(0.0, 1 - f / fs[j][2]) * own
                a = Act(busy=own, sm=o["sm"] - wait * (o["sm"] / max(own, 1e-9) - 0.14),
                        tensor=o["tensor"] * (1 - wait / max(own, 1e-9)),
                        dram=o["dram"] * (1 - 0.7 * wait / max(own, 1e-9)),
                        nvlink_mib=o["nvlink"], pcie_mib=20 + 3 * o.get("admit", 0),
                        pattern=o.get("pattern", ()),
                        power_limit=_power_limit(cfg, ev, t, gi),
                        heat=_heat(ev, t, gi))
                _forced(a, ev, t, gi)
                if warm:
                    ph = (t - restart["t1"]) / restart.get("warm", 25)
                    a.busy = 0.9 if rng.random() < 0.6 else 0.3
                    a.sm = a.busy * (0.6 if ph < 0.3 else 0.05)
                    a.tensor = a.busy * (0.5 if ph < 0.3 else 0.0)
                    a.dram = a.busy * 0.2
                for p, e in extra_procs:
                    lv = level(e, t)
                    if lv and gi in e.get("gpus", (0,)):
                        s_ = share
                        a.busy = min(1.0, a.busy + s_)
                        a.sm += s_ * e.get("sm", 0.7)
                        a.tensor += s_ * e.get("tensor", 0.3)
                        a.dram += s_ * e.get("dram", 0.3)
                a.mem_used = _mem_used(cfg, r, gi, t, down, warm, restart, extra_procs, gpu)
                acts.append((gi, a, fs[j][:2]))
        # GPU samples
        gsamples = [None] * n_gpu
        for gi, a, (fc, reasons) in acts:
            b = boards[gi]
            fc2, reasons2 = b.clock_factor(a, a)
            gsamples[gi] = b.sample(a, min(fc, fc2) if a.busy > 0.02 else 1.0,
                                    reasons2 if a.busy > 0.05 else tuple(
                                        x for x in reasons2 if x != "power cap"), dt, rng)
            prev_rates[gi] = (a.sm, a.tensor, a.dram)
        # CPU of the engine's processes
        serving = any(o.get("serving") for o in outs)
        busy_rate = (0.92 if serving else 0.06) * phi
        invol = (40 if serving else 5) + 2500 * max(cont, jit) * (cev["steal"] if cev else 0)
        if not down:
            api.run(0.12 + 0.004 * sum(o.get("admit", 0) for o in outs) / dt, dt, invol * 0.3)
            if core is not api:
                core.run(busy_rate + 0.08, dt, invol)
            else:
                api.run(busy_rate, dt, invol)
            for w_ in workers:
                if w_ is not core and w_ is not api:
                    w_.run(busy_rate * 0.9, dt, invol * 0.8)
        noisy = cev["cores"] * max(cont, jit) if cev else 0.0
        cron = ev_of(ev, "cron")
        if cron and level(cron, t):
            noisy += cron["cores"]
        eng_cores = 0 if down else (1.2 + tp * 0.95) * (1 if serving else 0.2)
        offcpu = None
        launch = ()
        if ebpf and not down:
            launch, offcpu = _launch(cfg, outs, core, workers, dt, max(cont, jit), eager, rng)
        hs = host.sample(dt, eng_cores + noisy * 0.98, extra_runnable=noisy * 0.6, offcpu=offcpu)
        # processes
        procs = []
        if not down:
            for gi in range(n_gpu):
                r = reps[gi // tp]
                owner = workers[gi] if tp > 1 else (workers[gi] if workers else core)
                a = next(a for g_, a, _ in acts if g_ == gi)
                own_sm = None
                if proc_sm:
                    own_sm = float(round(100 * min(1.0, outs[gi // tp]["busy"])))
                procs.append(owner.sample(gi, r.proc_mem - (0 if not warm else 0), own_sm,
                                          float(round(100 * outs[gi // tp]["dram"] * 1.3)) if proc_sm else None))
        for p, e in extra_procs:
            lv = level(e, t) if e["kind"] == "intruder" else (1.0 if e["t0"] <= t < e["t1"] else 0)
            if lv:
                p.run(e.get("cpu", 0.9), dt)
                for gi in e.get("gpus", (0,)):
                    procs.append(p.sample(gi, int(e["mem_gib"] * GIB),
                                          float(round(100 * share)) if proc_sm else None))
        # engine page
        srcs = {"nvml": fr.ok(0.011 * (1 + 0.1 * n_gpu)), "host": fr.ok(0.0004),
                "pin": fr.ok(0.00003)}
        stale = ev_of(ev, "stale_scrape")
        is_stale = stale is not None and stale["t0"] <= t < stale["t1"]
        engine = None
        if down:
            srcs["engine"] = fr.failed("engine unreachable: <urlopen error [Errno 111] Connection refused>")
        elif is_stale and last_engine is not None:
            engine = last_engine
            srcs["engine"] = fr.ok(0.5, age=tm - last_engine_at)
        elif i % scrape_every == 0 or last_engine is None:
            engine = _page(cfg, reps, tw, tm, kind, api, core, workers, rng)
            last_engine, last_engine_at = engine, tm
            srcs["engine"] = fr.ok(0.02 + 0.002 * len(reps))
        else:
            engine = last_engine
            srcs["engine"] = fr.ok(0.02, age=tm - last_engine_at)
        if ebpf:
            srcs["ebpf"] = fr.ok(0.002, detail="full mode; libcudart.so.12: cudaLaunchKernel, "
                                 "cudaGraphLaunch, cudaMemcpyAsync, cudaStreamSynchronize; "
                                 "libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch")
        elif cfg.get("ebpf_refused"):
            srcs["ebpf"] = fr.failed("eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo")
        frames_out.append(Frame(gpus=tuple(gsamples), processes=tuple(procs), engine=engine,
                                launch=launch, host=hs, seq=i, time_wall_s=tw, time_mono_s=tm,
                                sources=srcs))
    return frames_out


def _load(cfg, t, dur, rng):
    shape = cfg.get("shape", "flat")
    x = t / dur
    if shape == "rise":
        v = 0.55 + 0.9 * x
    elif shape == "fall":
        v = 1.0 - 0.85 * min(1, x * 1.3)
    elif shape == "wave":
        v = 0.8 + 0.25 * math.sin(2 * math.pi * x * cfg.get("waves", 1.5))
    elif shape == "bursty":
        period = cfg.get("burst_every", 45)
        v = 0.5 + (3.5 if (t % period) < cfg.get("burst_len", 8) else 0.0)
    else:
        v = 1.0
    for e in cfg["events"]:
        if e["kind"] == "surge":
            v *= 1 + (e["x"] - 1) * level(e, t)
        if e["kind"] == "lull":
            v *= 1 - (1 - e["x"]) * level(e, t)
    return max(0.0, v * (1 + rng.gauss(0, cfg.get("noise", 0.1))))


def _power_limit(cfg, ev, t, gi):
    base = cfg.get("power_limit")
    cap = ev_of(ev, "power_cap")
    if cap and level(cap, t) and gi in cap.get("gpus", range(64)):
        full = base or cfg["gpu_model"].tdp
        return full - (full - cap["watts"]) * level(cap, t)
    return base


def _work_factor(ev, t, gi):
    e = ev_of(ev, "hot_shard")
    if e and gi in e["gpus"] and level(e, t):
        return 1 + (e["factor"] - 1) * level(e, t)
    return 1.0


def _heat(ev, t, gi):
    e = ev_of(ev, "fan_fail")
    if e and gi in e.get("gpus", (0,)) and level(e, t):
        return 1 + (e["heat"] - 1) * level(e, t)
    return 1.0


def _forced(a, ev, t, gi):
    for e in ev:
        if e["kind"] in ("hw_slowdown", "power_brake") and gi in e.get("gpus", range(64)) and level(e, t):
            lv = level(e, t)
            a.forced_clock = 1 - (1 - e["clock"]) * lv
            a.forced_reasons = ("hw slowdown",) if e["kind"] == "hw_slowdown" else ("hw slowdown", "power brake")


def _mem_used(cfg, r, gi, t, down, warm, restart, extra, gpu):
    ctx_mem = 530 * 2**20
    if down:
        return int(0.3 * GIB) if restart and t - restart["t0"] > 3 else int(r.proc_mem * 0.4)
    m = r.proc_mem + ctx_mem
    if warm:
        ph = (t - restart["t1"]) / restart.get("warm", 25)
        m = int(ctx_mem + r.weights + (r.proc_mem - r.weights) * min(1.0, ph * 1.5))
    for p, e in extra:
        if gi in e.get("gpus", (0,)) and e["t0"] <= t < e["t1"]:
            m += int(e["mem_gib"] * GIB) + ctx_mem
    return min(int(m), gpu.mem_total - gpu.reserved)


def _engine_procs(cfg, t0w, rng, boards, generation=0):
    kind, tp, dp = cfg["engine"], cfg["tp"], cfg["dp"]
    base = 3000 + rng.randrange(20000) + generation * 411
    m = cfg["model"]["name"]
    start = t0w - (rng.uniform(3600, 86400 * 6) if generation == 0 else 0)
    cont = cfg.get("container", "")
    if kind == "vllm":
        api = fr.Proc(base, "vllm", f"/usr/bin/python3 /usr/local/bin/vllm serve {m} "
                      f"--tensor-parallel-size {tp}" + (f" --data-parallel-size {dp}" if dp > 1 else "")
                      + cfg.get("extra_args", ""), start, container=cont)
        core = fr.Proc(base + 61, "VLLM::EngineCore", "VLLM::EngineCore", start + 8, ppid=base,
                       container=cont, rss=6 * 2**30)
        n = tp * dp
        workers = ([fr.Proc(base + 90 + j, f"VLLM::Worker_TP{j % tp}", f"VLLM::Worker_TP{j % tp}",
                            start + 12, ppid=core.pid, container=cont) for j in range(n)]
                   if tp > 1 else ([core] if dp == 1 else
                                   [fr.Proc(base + 61 + 7 * j, f"VLLM::EngineCore_DP{j}",
                                            f"VLLM::EngineCore_DP{j}", start + 8, ppid=base,
                                            container=cont) for j in range(dp)]))
    elif kind == "sglang":
        api = fr.Proc(base, "python3", f"python3 -m sglang.launch_server --model-path {m} "
                      f"--tp {tp}" + (f" --dp {dp}" if dp > 1 else "") + " --enable-metrics"
                      + cfg.get("extra_args", ""), start, container=cont)
        core = fr.Proc(base + 40, "sglang::schedul", "sglang::scheduler_TP0", start + 5,
                       ppid=base, container=cont)
        workers = [core] + [fr.Proc(base + 40 + j, "sglang::schedul", f"sglang::scheduler_TP{j}",
                                    start + 5, ppid=base, container=cont) for j in range(1, tp * dp)]
    else:
        api = fr.Proc(base, "llama-server", f"/opt/llama.cpp/build/bin/llama-server -m "
                      f"/models/{m}.gguf -ngl 99 -c {cfg['model']['ctx']} -np {cfg['max_seqs']} "
                      f"--metrics" + cfg.get("extra_args", ""), start, user=cfg.get("user", "dev"))
        core = api
        workers = [api]
    return api, core, workers, generation


def _page(cfg, reps, tw, tm, kind, api, core, workers, rng):
    tp = cfg["tp"]
    pids = sorted({api.pid, core.pid, *(w.pid for w in workers)})
    tree = [api] + ([core] if core is not api else []) + [w for w in workers if w not in (api, core)]
    ctxs = dict(cpu_s=round(sum(p.cpu_s for p in tree), 2),
                ctx_involuntary=sum(p.invol for p in tree),
                busiest_thread_cpu_s=round(core.cpu_s * 0.93, 2),
                busiest_thread=f"{core.pid + 3} {core.name[:15]}")
    note = "" if cfg.get("config_known", True) else \
        f"model {cfg['model']['name']}: no config.json found; pass --model PATH"
    if len(reps) == 1:
        return reps[0].sample(tw, tm, kind, pids, note, ctxs)
    subs = []
    for r in reps:
        label = f"engine={r.idx}" if kind == "vllm" else f"dp_rank={r.idx}"
        own = [w.pid for j, w in enumerate(workers) if j // tp == r.idx]
        s = r.sample(tw, tm, kind, own, "", dict(cpu_s=None, ctx_involuntary=None,
                                               busiest_thread_cpu_s=None, busiest_thread=""))
        subs.append(dataclasses.replace(s, replica=label, data_parallel=1))
    top = subs[0]
    summed = {}
    for fld in ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
                "requests_finished_total", "requests_running", "requests_waiting",
                "preemptions_total", "retracted_requests_total", "prefill_seconds_total",
                "decode_seconds_total", "spec_drafts_total", "spec_draft_tokens_total",
                "spec_accepted_tokens_total", "forward_seconds_total", "kv_used_tokens",
                "kv_free_tokens"):
        vals = [getattr(s, fld) for s in subs]
        summed[fld] = None if any(v is None for v in vals) else sum(vals)
    kvs = [s.kv_usage_ratio for s in subs]
    hists = []
    for hs in zip(*(s.histograms for s in subs)):
        h0 = hs[0]
        hists.append(dataclasses.replace(
            h0, cumulative=tuple(sum(x) for x in zip(*(h.cumulative for h in hs))),
            count=sum(h.count for h in hs), sum=sum(h.sum for h in hs)))
    return dataclasses.replace(top, **summed, kv_usage_ratio=sum(kvs) / len(kvs),
                               histograms=tuple(hists), replicas=tuple(subs), replica="",
                               data_parallel=len(reps), pids=tuple(pids), note=note, **ctxs)


def _launch(cfg, outs, core, workers, dt, lv, eager, rng):
    """eBPF: the launch thread's calls this tick; preempted calls form the tail."""
    steps = sum(o.get("steps", 0) for o in outs)
    jitter = ev_of(cfg["events"], "launch_jitter") or ev_of(cfg["events"], "host_contention")
    tail = (jitter["tail"] if jitter else 0.0) * lv
    tail_med = jitter.get("tail_us", 400) * 1000 if jitter else 200e3
    out = []
    pid = core.pid if cfg["tp"] == 1 else workers[0].pid
    layers = cfg["model"]["layers"]
    if eager:
        calls = steps * (14 * layers + 20)
        h = fr.launch_hist("cudaLaunchKernel", pid, calls, 5500, 0.35, tail + 0.001, tail_med, 0.9, rng)
    else:
        h = fr.launch_hist("cudaGraphLaunch", pid, steps, 14000, 0.3, tail + 0.002, tail_med, 0.9, rng)
    if h:
        out.append(h)
    h2 = fr.launch_hist("cuLaunchKernel", pid, steps * (2 + 0.02 * layers) + 5, 4200, 0.4,
                        tail, tail_med, 0.9, rng)
    if h2:
        out.append(h2)
    h3 = fr.launch_hist("cudaMemcpyAsync", pid, steps * 2, 9000, 0.5, tail * 0.5, tail_med, 0.9, rng)
    if h3:
        out.append(h3)
    sw = int((30 + 2500 * tail * 10) * dt * (1 + 0.2 * rng.random()))
    off = fr.launch_hist("off-cpu", pid, sw, 60e3 if tail else 25e3, 0.9,
                         min(0.9, tail * 8), tail_med * 2, 0.8, rng)
    if off:
        out.append(off)
    return tuple(out), sw
