"""A serving engine as a fluid of requests, one step-time model driving everything.

Per tick: arrivals join the queue; the scheduler admits them while seats and KV blocks last;
each engine step decodes one token (1 + accepted drafts with speculative decoding) for every
running request and, when prompt tokens are pending, a chunk of prefill.  The step time is
the slowest rank's GPU time (weights + KV streamed from HBM, or FLOPs, whichever binds, at the
clock the board allows) plus the tensor-parallel all-reduces plus what the host adds between
steps.  GPU-Util, SM/DRAM/tensor activity, tokens/s, the counters and every histogram come
from those step times.

When counters move (checked in the engines' sources):
  vLLM V1: generation/prompt tokens per iteration (IterationStats: prompt_len counted when the
  prefill completes), ITL per iteration, TTFT at first token; e2e, queue, TPOT, params_n,
  max_tokens, prefill/decode time at request finish.
  SGLang: realtime_tokens_total{mode} per forward step (newer releases); the tokenizer's
  prompt/generation_tokens_total and num_requests_total only when a request finishes.
  llama.cpp server: prompt counters when a slot's prompt is evaluated (on_prompt_eval),
  tokens_predicted and draft counters when the slot finishes (on_prediction), n_decode_total
  per llama_decode call.
"""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from . import hist as H
from .hw import PROF, Act, mix
from .models import Model

GiB = 2**30


def poisson(rng, lam: float) -> int:
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


class Serving:
    def __init__(self, rng, kind: str, model: Model, spec, tp: int = 1, gpus=(0,),
                 rate=lambda t: 5.0, prompt: float = 800, out: float = 250, max_seqs: int = 256,
                 budget: int = 8192, gmu: float = 0.9, graphs: bool = True, max_len: int = 32768,
                 host_ms: float = 1.5, hit: float = 0.0, spec_k: int = 0, accept: float = 0.7,
                 realtime: bool = True, mfu: bool = False, slots: int = 4, url: str = "",
                 pids: tuple = (), kv_pool_tokens: int | None = None, version_new: bool = True):
        self.rng, self.kind, self.m, self.spec, self.tp = rng, kind, model, spec, tp
        self.gpus = tuple(gpus)
        self.rate_fn, self.prompt, self.out = rate, prompt, out
        self.max_seqs = slots if kind == "llamacpp" else max_seqs
        self.budget, self.graphs, self.host_ms, self.hit = budget, graphs, host_ms, hit
        self.spec_k, self.accept, self.realtime, self.mfu = spec_k, accept, realtime, mfu
        self.url, self.pids, self.version_new = url, pids, version_new
        self.max_len = max_len
        usable = spec.total - spec.reserved
        self.proc_mem = int(usable * gmu) if kind != "llamacpp" else 0
        act_bytes = 2.5 * GiB if kind != "llamacpp" else 1.0 * GiB
        kv_rank = model.kv_per_token / tp
        if kind == "llamacpp":
            self.pool = kv_pool_tokens or 32768
            self.proc_mem = int(model.wbytes + self.pool * model.kv_per_token + act_bytes
                                + 0.45 * GiB)
        else:
            pool_bytes = usable * gmu - model.wbytes / tp - act_bytes
            self.pool = kv_pool_tokens or int(pool_bytes / kv_rank)
        self.block = 16 if kind == "vllm" else 1
        self.gmu = gmu
        self.pool = int(self.pool // self.block * self.block)
        self.pool_bytes = int(self.pool * kv_rank)
        # state
        self.R = self.W = self.Qp = self.Qreq = 0.0
        self.W_re = self.redo_q = 0.0  # preempted requests waiting / being recomputed
        self.ctx = prompt + out / 2
        self.admit_ema = 1.0
        self.t_itl = 0.02
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pre_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rbytes=0.0, wbytes=0.0)
        self.fin_carry = 0.0
        self._llama_pending_gen = 0.0
        self.h = {}
        if kind == "vllm":
            mt = H.one_two_five(max_len)
            for name, b in (("ttft", H.VLLM_TTFT), ("itl", H.VLLM_ITL), ("tpot", H.VLLM_ITL),
                            ("e2e", H.VLLM_E2E), ("queue", H.VLLM_E2E), ("params_n", H.VLLM_N),
                            ("params_max_tokens", mt), ("max_generation_tokens", mt)):
                self.h[name] = H.Hist(name, b)
        elif kind == "sglang":
            for name, b in (("ttft", H.SGL_TTFT), ("itl", H.SGL_ITL), ("e2e", H.SGL_E2E),
                            ("queue", H.SGL_QUEUE)):
                self.h[name] = H.Hist(name, b)
        self.restarted_at = None
        self.last = None

    def reset(self) -> None:
        """An engine restart: counters, histograms and the queue start again from zero."""
        self.R = self.W = self.Qp = self.Qreq = 0.0
        self.W_re = self.redo_q = 0.0
        for key in self.c:
            self.c[key] = 0.0
        for key in list(self.c):
            if key.startswith("llama_"):
                del self.c[key]
        self.fin_carry = 0.0
        for h in self.h.values():
            h.cum = [0.0] * len(h.bounds)
            h.count = h.sum = h._carry = 0.0

    # ------------------------------------------------------------------ one tick
    def step(self, t: float, dt: float, clks: list[float], m: dict) -> tuple[list[Act], dict]:
        rng, mod, spec = self.rng, self.m, self.spec
        tp = self.tp
        P = m.get("prompt", self.prompt)
        O = m.get("out", self.out)
        hit = m.get("hit", self.hit)
        lam = self.rate_fn(t) * m.get("rate", 1.0)
        arr = poisson(rng, lam * dt)
        self.W += arr
        pool = self.pool * m.get("pool", 1.0)
        # admission: seats and KV blocks for the prompt
        # the scheduler sees the blocks allocated now (prompts and what was generated so
        # far), not what running requests will still need: it over-commits, as vLLM does
        seen = self.R * min(self.ctx, P + 0.4 * O) + self.Qreq * P
        seats = max(0.0, self.max_seqs - self.R - self.Qreq)
        room = max(0.0, pool * 0.99 - seen) / max(P, 1.0)
        if self.kind == "llamacpp":  # fixed slots, each with its share of -c
            room = seats
        admit = min(self.W, seats, room)
        redo = admit * min(1.0, self.W_re / self.W) if self.W > 0 else 0.0
        self.W_re = max(0.0, self.W_re - redo)
        self.W -= admit
        self.redo_q += redo
        self.Qreq += admit
        self.Qp += admit * P * (1 - hit)
        cached_new = admit * P * hit
        self.admit_ema += (admit / dt - self.admit_ema) * 0.2
        # step times per rank
        R = self.R
        k = self.spec_k
        a = m.get("accept", self.accept)
        acc_step = a * (1 - a ** k) / (1 - a) if k else 0.0
        f_min = min(clks[g] for g in range(len(self.gpus)))
        share = m.get("share", {})
        Rb = max(R, 1.0) if R > 0.01 else 0.0
        ctx = self.ctx
        t_dec, t_pre, t_extra = [], [], []
        chunk = min(self.Qp, max(256.0, self.budget - Rb))
        if self.kind == "llamacpp":
            chunk = min(self.Qp, 2048.0)
        for i, g in enumerate(self.gpus):
            f = clks[i] * m.get("slow", {}).get(g, 1.0)
            kvb = Rb * ctx * mod.kv_per_token / tp
            t_mem = (mod.wbytes / tp + kvb) / (spec.bw * 0.8) * (1 + 0.25 * (1 / f - 1))
            t_cmp = 2 * mod.params / tp * Rb * (1 + k) / (spec.flops * 0.45 * f)
            over = 0.0004 if self.graphs else mod.layers * 0.00009
            t_dec.append((max(t_mem, t_cmp) + over) if Rb else 0.0)
            t_pre.append(2 * mod.params / tp * chunk / (spec.flops * 0.55 * f)
                         * (1 + (P / (1 - hit + 1e-9) if hit < 1 else 0) / 60000))
            t_extra.append(m.get("extra_s", 0.0) / f)
        link = spec.nvlink or 20e9
        t_comm = 0.0
        if tp > 1:
            t_comm = 2 * mod.layers * (14e-6 + (Rb + chunk * 0) * mod.hidden * 2 / link)
            t_comm_pre = 2 * mod.layers * chunk * mod.hidden * 2 / link
        else:
            t_comm_pre = 0.0
        comp0 = [(t_dec[i] + t_extra[i]) / (1 - share.get(g, 0.0))
                 for i, g in enumerate(self.gpus)]
        comp1 = [(t_dec[i] + t_pre[i] + t_extra[i]) / (1 - share.get(g, 0.0))
                 for i, g in enumerate(self.gpus)]
        host_share = m.get("host", 1.0)
        t_host = self.host_ms / 1000 * (1 + 0.004 * Rb) / host_share
        # a launch delayed on the host delays the kernels it feeds: never hidden by overlap
        t_launch = m.get("launch_s", 0.0) + (1 / host_share - 1) * 0.0015
        overlap = 0.0 if self.kind == "llamacpp" else 0.75
        T0g = max(comp0) + t_comm
        T1g = max(comp1) + t_comm + t_comm_pre
        T0 = T0g + max(0.0, t_host - overlap * T0g) + t_launch if Rb else 0.0
        T1 = T1g + max(0.0, t_host - overlap * T1g) + t_launch
        work = self.Qp > 0.5 or Rb > 0
        duty = 0.0
        n0 = n1 = 0.0
        if work:
            duty = 1.0 if (R >= 1 or self.Qp > 0.5) else R
            avail = duty * dt
            if self.Qp > 0.5 and chunk > 0:
                need = self.Qp / chunk
                n1 = min(need, avail / T1)
                n0 = (avail - n1 * T1) / T0 if Rb and T0 > 0 else 0.0
                if not Rb:
                    duty = min(1.0, n1 * T1 / dt)
            else:
                n0 = avail / T0 if T0 > 0 else 0.0
        steps = n0 + n1
        tok_per = 1 + acc_step
        gen = steps * Rb * tok_per if Rb else 0.0
        done_pre_tok = min(self.Qp, n1 * chunk)
        self.Qp -= done_pre_tok
        pre_reqs = 0.0
        if self.Qreq > 0:
            per = max(P * (1 - hit), 1.0)
            pre_reqs = min(self.Qreq, done_pre_tok / per) if hit < 0.999 else self.Qreq
        self.Qreq -= pre_reqs
        gen = min(gen, (self.R + pre_reqs) * O)  # a request stops after its O tokens
        fin = min(self.R + pre_reqs, gen / max(O, 1.0))
        if m.get("stuck", 0):
            fin *= 0.0
        self.R += pre_reqs - fin
        self.ctx += ((P + O / 2) - self.ctx) * min(1.0, dt / max(8.0, O * self.t_itl))
        # KV growth and preemption
        kv_used = self.R * self.ctx + self.Qreq * P
        pre_n = 0.0
        if kv_used > pool and self.kind != "llamacpp":
            pre_n = (kv_used - pool) / max(self.ctx, 1.0)
            self.R -= pre_n
            self.W += pre_n
            self.W_re += pre_n
        self.R = max(0.0, self.R)
        kv_used = min(pool, self.R * self.ctx + self.Qreq * P)
        # latencies
        itl0 = T0 / tok_per if T0 else self.t_itl
        itl1 = T1 / tok_per
        if steps:
            self.t_itl = (n0 * itl0 + n1 * itl1) / steps
        pre_rate = chunk / T1 if T1 else 1e4
        queue_s = self.W / max(self.admit_ema, 0.05) if self.W > 0.5 else 0.002 * rng.random()
        ttft = queue_s + (self.Qp / max(pre_rate, 1.0)) + T1 + 0.01
        e2e = ttft + O * self.t_itl
        # ---- counters
        c = self.c
        c["gen"] += gen
        redone = min(self.redo_q, pre_reqs * (self.redo_q / max(self.Qreq + pre_reqs, 1e-9)))
        self.redo_q -= redone
        # vLLM V1 counts a prompt once (when its first token comes); a preempted request's
        # recomputation is not counted again.  SGLang's prefill_compute counts the work.
        prompt_tok = (pre_reqs - (redone if self.kind == "vllm" else 0.0)) * P
        c["prompt"] += prompt_tok
        c["cached"] += pre_reqs * P * hit
        c["fin"] += fin
        c["steps"] += steps
        c["fwd_s"] += steps and (n0 * T0g + n1 * T1g)
        c["pre_s"] += fin * (ttft - queue_s)
        c["dec_s"] += fin * O * self.t_itl
        if self.kind == "sglang":
            c["retr"] += pre_n
            c["retr_tok"] += pre_n * P
        else:
            c["pre"] += pre_n
        if k and Rb:
            c["drafts"] += steps * Rb
            c["dtok"] += steps * Rb * k
            c["acc"] += steps * Rb * acc_step
        c["flops"] += 2 * mod.params / tp * (gen + done_pre_tok)
        c["rbytes"] += steps * (mod.wbytes / tp + Rb * ctx * mod.kv_per_token / tp)
        c["wbytes"] += (gen + done_pre_tok) * mod.kv_per_token / tp
        big = m.get("big_done")
        if self.kind == "vllm":
            h = self.h
            if Rb:  # one observation per request per iteration (all its new tokens)
                h["itl"].observe(n0 * Rb, T0, 0.12)
                h["itl"].observe(n1 * Rb, T1, 0.15)
            h["ttft"].observe(pre_reqs, ttft, 0.35)
            h["e2e"].observe(fin, e2e, 0.3)
            h["queue"].observe(fin, max(queue_s, 1e-4), 0.5)
            h["tpot"].observe(fin, self.t_itl, 0.15)
            h["params_n"].observe(fin, 1.0, 0.001)
            h["params_max_tokens"].observe(fin, m.get("max_tokens", 1024), 0.3)
            h["max_generation_tokens"].observe(fin, m.get("max_tokens", 1024), 0.3)
            if big:
                h["params_n"].observe_value(big.get("n", 1))
                h["params_max_tokens"].observe_value(big.get("max_tokens", 16))
                h["max_generation_tokens"].observe_value(big.get("max_tokens", 16))
        elif self.kind == "sglang":
            h = self.h
            if Rb:
                h["itl"].observe(n0 * Rb * tok_per, itl0, 0.12)
                h["itl"].observe(n1 * Rb * tok_per, itl1, 0.15)
            h["ttft"].observe(pre_reqs, ttft, 0.35)
            h["e2e"].observe(fin, e2e, 0.3)
            h["queue"].observe(pre_reqs, max(queue_s, 1e-4), 0.5)
        elif self.kind == "llamacpp":
            c["llama_pred"] = c.get("llama_pred", 0.0)
            c["llama_pred_s"] = c.get("llama_pred_s", 0.0)
            self.fin_carry += fin
            whole = int(self.fin_carry)
            if whole:
                self.fin_carry -= whole
                c["llama_pred"] += whole * O
                c["llama_pred_s"] += whole * O * self.t_itl
                c["llama_dtok"] = c.get("llama_dtok", 0.0) + whole * O / tok_per * k
                c["llama_acc"] = c.get("llama_acc", 0.0) + whole * O / tok_per * acc_step
                c["llama_drafts"] = c.get("llama_drafts", 0.0) + (whole * O / tok_per if k else 0)
        # ---- GPU activity per rank
        acts = []
        per_rank_busy = []
        for i, g in enumerate(self.gpus):
            sh = share.get(g, 0.0)
            busy_own = (n0 * comp0[i] + n1 * comp1[i]) * (1 - sh) / dt
            wait = (n0 * (T0g - comp0[i] - t_comm) + n1 * (T1g - comp1[i] - t_comm - t_comm_pre)) / dt
            comm = (steps * t_comm + n1 * t_comm_pre) / dt if tp > 1 else 0.0
            busy_own, wait, comm = max(0, busy_own), max(0, wait), max(0, comm)
            dec_s = n0 * t_dec[i] + n1 * t_dec[i]
            parts = [(n1 * t_pre[i] / dt, PROF["prefill"]),
                     (steps * t_extra[i] / dt, PROF["sampler"])]
            long_ctx = ctx > 6000 and Rb > 8
            dprof = PROF["attn_long"] if long_ctx else (PROF["decode_big"] if Rb > 48 else PROF["decode"])
            if not self.graphs:
                dprof = tuple(v * 0.7 for v in dprof)
            parts.append((dec_s / dt, dprof))
            parts.append((wait * 1.0, PROF["nccl_wait"]))
            parts.append((comm, PROF["nccl_xfer"]))
            sm, occ, dram, ten = mix(parts)
            busy = min(1.0, busy_own + wait + comm)
            per_rank_busy.append(busy)
            acts.append(Act(busy=[], sm=sm, occ=occ, dram=dram, tensor=ten, own=1 - sh,
                            mem_used=self.proc_mem,
                            nvlink=(comm * link * 0.5) if tp > 1 else 0.0,
                            pcie=2e6 + 400 * (gen + prompt_tok) / dt))
        cpu = dict(busy_thread=0.04 + 0.92 * min(1.0, duty * 1.2) * host_share,
                   tree=0.15 + (0.95 + 0.45 * (tp - 1)) * min(1.0, duty * 1.2) * host_share
                   + 0.002 * lam, duty=duty)
        self.last_state = dict(R=self.R, W=self.W, kv=kv_used / pool, itl=self.t_itl, ttft=ttft,
                               gen_rate=gen / dt, prompt_rate=prompt_tok / dt, T0=T0, steps=steps,
                               queue=queue_s, busy=per_rank_busy, spec_acc=a, acc_len=tok_per,
                               arr=arr, fin=fin)
        return acts, cpu

    # ------------------------------------------------------------------ the scrape
    def sample(self, wall: float, mono: float, cpu_s: float, invol: int, busiest_s: float,
               busiest: str) -> EngineSample:
        c, m, st = self.c, self.m, self.last_state
        common = dict(url=self.url, model=m.name if self.kind != "llamacpp" else "",
                      time_wall_s=wall, time_mono_s=mono, cpu_s=round(cpu_s, 2),
                      ctx_involuntary=invol, busiest_thread_cpu_s=round(busiest_s, 2),
                      busiest_thread=busiest, pids=self.pids, tensor_parallel=self.tp,
                      data_parallel=1)
        if self.kind != "llamacpp":
            common.update(kv_config=m.kv_config(), weights_bytes=int(m.wbytes / self.tp),
                          weights_source=f"size of {m.files} .safetensors file(s)")
        R, W = float(round(st["R"])), float(round(st["W"]))
        if self.kind == "vllm":
            return EngineSample(
                kind="vllm", generation_tokens_total=float(int(c["gen"])),
                prompt_tokens_total=float(int(c["prompt"])),
                prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(int(c["fin"])), requests_running=R,
                requests_waiting=W, kv_usage_ratio=min(1.0, st["kv"]),
                num_gpu_blocks=self.pool // self.block, block_size=self.block,
                kv_pool_bytes=self.pool_bytes if self.version_new else None,
                kv_pool_tokens=self.pool if self.version_new else None, cache_dtype="auto",
                histograms=tuple(h.sample() for h in self.h.values()),
                preemptions_total=float(int(c["pre"])),
                waiting_by_reason={"capacity": W if st["kv"] > 0.95 else 0.0,
                                   "deferred": 0.0} if self.version_new else {},
                flops_total=c["flops"] if self.mfu else None,
                read_bytes_total=c["rbytes"] if self.mfu else None,
                write_bytes_total=c["wbytes"] if self.mfu else None,
                spec_drafts_total=float(int(c["drafts"])) if self.spec_k else None,
                spec_draft_tokens_total=float(int(c["dtok"])) if self.spec_k else None,
                spec_accepted_tokens_total=float(int(c["acc"])) if self.spec_k else None,
                prefill_seconds_total=c["pre_s"], decode_seconds_total=c["dec_s"],
                corrupted_requests_total=0.0 if self.version_new else None, **common)
        if self.kind == "sglang":
            used = st["kv"] * self.pool
            gen = c["gen"] if self.realtime else self._sgl_fin_tokens()
            return EngineSample(
                kind="sglang", generation_tokens_total=float(int(gen)),
                prompt_tokens_total=float(int(c["prompt"])),
                prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(int(c["fin"])), requests_running=R,
                requests_waiting=W, kv_usage_ratio=min(1.0, st["kv"]),
                kv_pool_tokens=self.pool, retracted_requests_total=float(int(c["retr"])),
                retracted_input_tokens_total=float(int(c["retr_tok"])),
                kv_used_tokens=float(int(used)), kv_free_tokens=float(int(self.pool - used)),
                kv_evictable_tokens=float(int((self.pool - used) * 0.3 * (self.hit > 0))),
                spec_accept_ratio=st["spec_acc"] if self.spec_k else None,
                spec_accept_length=st["acc_len"] if self.spec_k else None,
                forward_seconds_total=c["fwd_s"] if self.realtime else None,
                histograms=tuple(h.sample() for h in self.h.values()), **common)
        k = self.spec_k
        return EngineSample(
            kind="llamacpp", generation_tokens_total=float(int(c.get("llama_pred", 0.0))),
            prompt_tokens_total=float(int(c["prompt"])),
            prompt_tokens_cached_total=float(int(c["cached"])),
            requests_running=R, requests_waiting=W, kv_pool_tokens=self.pool, cache_dtype="f16",
            prefill_seconds_total=round(c["pre_s"], 3),
            decode_seconds_total=round(c.get("llama_pred_s", 0.0), 3),
            decode_steps_total=float(int(c["steps"])),
            spec_drafts_total=float(int(c.get("llama_drafts", 0))) if k else 0.0,
            spec_draft_tokens_total=float(int(c.get("llama_dtok", 0))) if k else 0.0,
            spec_accepted_tokens_total=float(int(c.get("llama_acc", 0))) if k else 0.0,
            **common)

    def _sgl_fin_tokens(self) -> float:
        return self.c["fin"] * self.out
