"""A serving engine's scheduler as a per-tick fluid model, one instance per data-parallel
replica over its tensor-parallel GPUs.

Every tick: arrivals (Poisson on the traffic curve) queue; requests are admitted while
the KV pool has free blocks for their prompts and the batch is below max_num_seqs;
running requests' KV grows with their output, and when the pool overflows requests are
preempted (vLLM) / retracted (SGLang) and recomputed.  The GPU steps continuously while
anything runs.  A step's GPU time on each rank is max(memory time, compute time) plus a
fixed kernel cost: memory = the rank's weights + the batch's KV read (HBM bandwidth),
compute = 2 x params x tokens (tensor peak, slowed by the clock); prefill chunks (up to
the token budget) make some steps long; TP ranks wait for the slowest in each all-reduce;
host time per step (scheduling, sampling) is not overlapped.  The same step times give
the tokens, the latency histograms, the GPU's busy / SM / DRAM / tensor fractions and
through them the power and clocks (physics.py).

When counters move follows each engine's source: vLLM V1 counts prompt and generation
tokens every step (IterationStats), request histograms (e2e, queue, params) at finish;
SGLang's tokenizer counts prompt / generation tokens and requests only when a request
finishes, its scheduler's realtime_tokens_total every log interval (40 decode steps);
llama.cpp's tokens_predicted_total / _seconds_total at slot release (on_prediction),
prompt tokens when the prompt is done (on_prompt_eval), n_decode_total per batch.
"""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from . import hist as H
from .effects import curve, mult
from .specs import GIB, MODELS


def poisson(rng, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    threshold, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= threshold:
            return k
        k += 1


class Replica:
    def __init__(self, p: dict, board, gpus: list[int], rng, label: str, pid0: int):
        self.p, self.b, self.gpus, self.rng, self.label = p, board, gpus, rng, label
        self.kind = p["engine"]
        self.m = MODELS[p["model"]]
        self.tp = len(gpus)
        self.wr = self.m.weights_bytes(self.tp)
        self.nr = self.m.params_b * 1e9 / self.tp
        self.kvb = self.m.kv_bytes_per_token(self.tp, p.get("kv_bytes", 2.0))
        big = board.key in ("H100", "H200", "B200")
        self.budget = p.get("budget", 8192 if big else 2048)
        if self.kind == "llamacpp":
            self.budget = p.get("budget", 2048)
            self.pool = p.get("ctx", 32768)
            self.mem_used = int(self.wr + self.pool * self.kvb + 1.1 * GIB)
        else:
            gmu = p.get("gmu", 0.9 if self.kind == "vllm" else 0.88)
            act = (1.2 + self.budget / 4096 + 0.02 * self.m.layers / 8) * GIB
            self.mem_used = int(gmu * board.mem_bytes)
            pool_bytes = max(0.5 * GIB, gmu * board.mem_bytes - self.wr - act)
            self.pool = int(pool_bytes // self.kvb // 16 * 16)
        self.max_seqs = p.get("max_seqs", 256 if self.kind != "llamacpp" else 8)
        self.fixed_s = p.get("fixed_ms", (1.2 if p.get("graphs", True) else 5.5)
                             * self.m.layers / 32) / 1000
        self.host_s = p.get("host_ms", 0.9 if self.kind == "vllm" else 0.7) / 1000
        # state
        self.R = self.W = self.backlog = self.pend = 0.0
        self.wait_s = 0.0
        self.fin_carry = 0.0
        self.rt_steps = 0.0
        self.rt_pending = [0.0, 0.0, 0.0]
        self.last_itl = 0.02
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, preempt=0.0, retract_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      rt_dec=0.0, rt_pc=0.0, rt_pcache=0.0, cpu=0.0, invol=0.0, busiest=0.0)
        self.used = 0.0
        self.accept_now = 0.0
        self.accept_len = 0.0
        self.pid0 = pid0
        self.down = False
        self.extra = 0.0
        self.loading = 0.0
        self.start_wall = 0.0
        self._new_hists()

    def _new_hists(self):
        maxlen = self.p.get("max_model_len", 32768)
        if self.kind == "vllm":
            self.h = {"ttft": H.CumHist("ttft", H.VLLM_TTFT), "itl": H.CumHist("itl", H.VLLM_ITL),
                      "tpot": H.CumHist("tpot", H.VLLM_ITL), "e2e": H.CumHist("e2e", H.VLLM_E2E),
                      "queue": H.CumHist("queue", H.VLLM_E2E),
                      "params_n": H.CumHist("params_n", H.VLLM_N),
                      "params_max_tokens": H.CumHist("params_max_tokens", H.buckets_125(maxlen)),
                      "max_generation_tokens": H.CumHist("max_generation_tokens",
                                                         H.buckets_125(maxlen))}
        elif self.kind == "sglang":
            self.h = {"ttft": H.CumHist("ttft", H.SGL_TTFT), "itl": H.CumHist("itl", H.SGL_ITL),
                      "e2e": H.CumHist("e2e", H.SGL_E2E), "queue": H.CumHist("queue", H.SGL_QUEUE)}
        else:
            self.h = {}

    def restart(self):
        """A new engine process: counters and histograms from zero, nothing running."""
        self.__init__(self.p, self.b, self.gpus, self.rng, self.label, self.pid0 + 977)

    # ------------------------------------------------------------------ the step model
    def _step_gpu(self, B, pf, ctx, e, rs, g_verify):
        """(per-rank GPU seconds of the engine's own kernels, their memory bytes, flops)."""
        m, tp = self.m, self.tp
        mem = self.wr + B * ctx * self.kvb + pf * self.kvb * 2
        flops = 2 * self.nr * (B * g_verify + pf) + 2 * m.layers * m.hidden / tp * pf * ctx
        out = []
        for gpu, r in zip(self.gpus, rs):
            t_mem = mem / (self.b.bw_gbs * 1e9 * 0.9)
            t_comp = flops * e["heavy"].get(gpu, 1.0) / (self.b.tflops * 1e12 * 0.6 * r)
            t = max(t_mem, t_comp) + self.fixed_s / r
            t /= max(0.05, 1.0 - e["share"].get(gpu, 0.0))
            out.append((t, t_mem, t_comp))
        return out, mem, flops

    def _comm(self, B, pf, e):
        if self.tp == 1:
            return 0.0, []
        bw = (self.b.nvlink_gbs or 22) * 1e9
        per = [2 * self.m.layers * (14e-6 + (B + pf) * self.m.hidden * 2 * (self.tp - 1) / self.tp / bw)
               * e["link"].get(g, 1.0) for g in self.gpus]
        return max(per), per

    def step(self, B, pf, ctx, e, rs, gv, draft_s):
        ranks, mem, flops = self._step_gpu(B, pf, ctx, e, rs, gv)
        comm, _ = self._comm(B, pf, e)
        slow = max(t for t, _, _ in ranks)
        sampler = e["sampler_s"] * max(1.0, B / 32) ** 0.3 / min(rs)
        host = (self.host_s + 4e-6 * B) * mult(e, "host_mult") * (1 + 6 * e["contention"]
                                                                  + 5 * e["jitter"])
        total = slow + comm + sampler + draft_s + host
        return total, dict(ranks=ranks, mem=mem, flops=flops, comm=comm, slow=slow,
                           sampler=sampler, draft=draft_s, host=host)

    # ------------------------------------------------------------------ one tick
    def tick(self, t: float, dt: float, e: dict, rs: list[float]):
        p, rng = self.p, self.rng
        if e["down"] > 0.5:
            if not self.down:
                self.down = True
            return None
        if self.down:  # back up: a fresh process loads weights, captures graphs, serves
            self.restart()
            self.loading = p.get("load_s", 40.0)
            self.start_wall = t
        if self.loading > 0:
            self.loading -= dt
            frac = 1 - max(0.0, self.loading) / p.get("load_s", 40.0)
            busy = 0.5 if 0.75 < frac < 0.95 else 0.02
            return {"loading": frac, "acts": {g: dict(busy=busy, sm=busy * 0.2, occ=0.02,
                                                      dram=0.03 * busy, tensor=0.0,
                                                      mem_used=self.mem_used * min(1, frac * 1.25))
                                              for g in self.gpus}}
        lam = p["rate"] * curve(p.get("curve"), t) * mult(e, "rate_mult")
        if p.get("clients"):  # closed loop: a client sends again only after its answer
            base = p.get("_r0", 1.0)
            lam *= max(0.0, p["clients"] - self.R - self.W) / max(1.0, p["clients"] - base)
        lam *= max(0.0, 1 + rng.gauss(0, p.get("rate_noise", 0.08)))
        P = max(8.0, p["prompt"] * mult(e, "prompt_mult") * math.exp(rng.gauss(0, 0.12)))
        O = max(4.0, p["out"] * mult(e, "out_mult"))
        hit = min(0.995, max(0.0, p.get("hit", 0.1) + e.get("hit_add", 0.0)))
        A = poisson(rng, lam * dt)
        self.W += A
        # preemption / retraction when the running requests' KV outgrows the pool
        foot = P + O / 2
        self.used = self.R * foot
        preempted = 0.0
        if self.used > 0.985 * self.pool and self.R > 1:
            preempted = min(self.R - 1, (self.used - 0.985 * self.pool) / foot + rng.random() * 0.6)
            share = preempted / max(self.R, 1e-9)
            self.pend -= self.pend * share
            self.backlog -= self.backlog * share
            self.R -= preempted
            self.W += preempted  # recomputed from the prompt when admitted again
            self.backlog += preempted * O / 2  # the output so far is recomputed too
            self.c["preempt"] += preempted
            self.c["retract_tok"] += preempted * P
            self.used = self.R * foot
        free = 0.985 * self.pool - self.used
        room = min(self.max_seqs + e["extra_seqs"] - self.R, free / (1.25 * P + 0.5 * O))
        # the scheduler takes new prompts only as far as its token budget reaches: the rest
        # wait in the queue (not counted as running)
        per_new = max(1.0, P * (1 - hit))
        pf_rate = self.b.tflops * 1e12 * 0.6 * min(rs) / (2 * self.nr)  # prompt tokens/s
        room = min(room, (pf_rate * dt * 0.85 + 3 * self.budget) / per_new - self.pend)
        k = max(0.0, min(self.W, room)) if not preempted else 0.0
        self.W -= k
        self.R += k
        self.pend += k
        self.backlog += k * P * (1 - hit)
        self.wait_s = self.W / max(k / dt, lam, 0.05) if self.W > 0.5 else 0.02 * rng.random()
        self.extra = e["extra_seqs"]
        B = self.R + self.extra
        ctx = foot
        spec = p.get("spec")
        gv, g, draft_s = 1.0, 1.0, 0.0
        if spec:
            a = min(0.97, max(0.01, spec["accept"] + e.get("accept_add", 0.0)))
            kd = spec["k"]
            g = (1 - a ** (kd + 1)) / (1 - a)
            gv = kd + 1
            draft_s = kd * spec.get("draft_ms", 0.9) / 1000
            self.accept_now, self.accept_len = a, g
        if B < 0.02 and self.backlog < 1:
            return self._idle(dt)
        active = min(1.0, B + (1.0 if self.backlog > 0 else 0.0))
        chunk = max(1.0, self.budget - B)
        t_d, info_d = self.step(B, 0.0, ctx, e, rs, gv, draft_s)
        t_p, info_p = self.step(B, chunk, ctx, e, rs, gv, draft_s)
        gpu_time = active * dt
        per_req = P * (1 - hit)
        t_guess = dt / max(1.0, gpu_time / t_d)
        chunk = min(chunk, max(per_req, self.backlog * t_guess / dt), max(1.0, self.backlog))
        t_p, info_p = self.step(B, chunk, ctx, e, rs, gv, draft_s)
        n_pf = min(self.backlog / chunk, gpu_time / t_p)
        n_d = max(0.0, (gpu_time - n_pf * t_p) / t_d)
        steps = n_pf + n_d
        done_pf = n_pf * chunk
        self.backlog = max(0.0, self.backlog - done_pf)
        prefill_lat = (self.backlog / max(1.0, done_pf / dt) if done_pf else 0.0) \
            + math.ceil(max(1.0, per_req) / max(1.0, chunk)) * t_p
        first = self.pend if per_req < 1 or self.backlog < 1 else min(self.pend, done_pf / per_req)
        self.pend -= first
        decoding = max(0.0, B - self.pend)
        gen = steps * decoding * g
        itl = (n_pf * t_p + n_d * t_d) / max(steps, 1e-9)
        self.last_itl = itl
        fin = min(self.R, gen / O + self.fin_carry)
        nfin = int(fin)
        self.fin_carry = fin - nfin
        self.R = max(0.0, self.R - nfin)
        ttft = self.wait_s + prefill_lat
        self._count(dt, first, nfin, gen, P, O, hit, itl, ttft, steps, n_pf, n_d, t_p, t_d,
                    decoding, spec, g, e)
        acts = self._acts(dt, active, steps, n_pf, n_d, info_p, info_d, t_p, t_d, e, B, chunk)
        return {"acts": acts, "active": active, "itl": itl, "gen_rate": gen / dt}

    def _idle(self, dt):
        self.c["cpu"] += dt * (0.35 + 0.05 * self.tp)
        self.c["busiest"] += dt * 0.2
        self.c["invol"] += dt * 15
        return {"acts": {g: dict(busy=0.0, sm=0.0, occ=0.0, dram=0.0, tensor=0.0,
                                 mem_used=self.mem_used) for g in self.gpus}, "active": 0.0,
                "itl": self.last_itl, "gen_rate": 0.0}

    def _count(self, dt, first, nfin, gen, P, O, hit, itl, ttft, steps, n_pf, n_d, t_p, t_d,
               decoding, spec, g, e):
        c, h, rng, kind = self.c, self.h, self.rng, self.kind
        c["steps"] += steps
        c["fwd_s"] += steps * (0.9 * itl)
        if spec and kind == "llamacpp":  # counted at slot release, with the output
            if nfin:
                c["drafts"] += nfin * O / g
                c["dtok"] += nfin * O / g * spec["k"]
                c["acc"] += nfin * O * (g - 1) / g
        elif spec:
            kd = spec["k"]
            c["drafts"] += steps * decoding
            c["dtok"] += steps * decoding * kd
            c["acc"] += steps * decoding * (g - 1)
        if kind == "vllm":
            c["gen"] += gen
            c["prompt"] += first * P
            c["cached"] += first * P * hit
        elif kind == "sglang":
            self.rt_steps += steps
            self.rt_pending[0] += gen
            self.rt_pending[1] += first * P * (1 - hit)
            self.rt_pending[2] += first * P * hit
            if self.rt_steps >= 40:  # the scheduler logs every decode_log_interval steps
                c["rt_dec"] += self.rt_pending[0]
                c["rt_pc"] += self.rt_pending[1]
                c["rt_pcache"] += self.rt_pending[2]
                self.rt_steps %= 40
                self.rt_pending = [0.0, 0.0, 0.0]
        else:  # llama.cpp: prompt counted when the prompt is done, output at release
            c["prompt"] += first * P * (1 - hit)
            c["cached"] += first * P * hit
            c["pf_s"] += first * min(ttft, 60.0) * 0.8
        if nfin:
            c["fin"] += nfin
            e2e = ttft + O * itl / g
            if kind == "sglang":
                c["gen"] += nfin * O
                c["prompt"] += nfin * P
                c["cached"] += nfin * P * hit
            elif kind == "llamacpp":
                c["gen"] += nfin * O
                c["dec_s"] += nfin * O * itl / g
            else:
                c["pf_s"] += nfin * min(ttft, 600)
                c["dec_s"] += nfin * O * itl / g
        itl_spread = 0.12 + (0.5 if n_pf > 0.05 * (n_pf + n_d) else 0.0)
        if kind == "vllm":
            h["ttft"].observe(ttft, first, 0.35, rng)
            obs = steps * decoding - first
            if n_pf and n_d:
                h["itl"].observe(t_p, n_pf * decoding, 0.12, rng)
                h["itl"].observe(t_d, max(0.0, obs - n_pf * decoding), 0.1, rng)
            else:
                h["itl"].observe(itl, obs, 0.1, rng)
            if nfin:
                h["e2e"].observe(ttft + O * itl / g, nfin, 0.45, rng)
                h["tpot"].observe(itl / g, nfin, 0.15, rng)
                h["queue"].observe(max(1e-3, self.wait_s), nfin, 0.5, rng)
                h["params_n"].observe_value(1.0, nfin)
                mt = float(self.p.get("max_tokens", 2048))
                h["params_max_tokens"].observe_value(mt, nfin)
                h["max_generation_tokens"].observe_value(mt, nfin)
        elif kind == "sglang":
            h["ttft"].observe(ttft, first, 0.35, rng)
            h["itl"].observe(itl / g, gen, itl_spread, rng)
            h["queue"].observe(max(1e-3, self.wait_s), first, 0.5, rng)
            if nfin:
                h["e2e"].observe(ttft + O * itl / g, nfin, 0.45, rng)
        cont = e["contention"]
        cores = 0.3 + 0.04 * self.tp + 0.97 + 0.92 * (self.tp - 1 if self.tp > 1 else 0)
        c["cpu"] += dt * cores * (1 - 0.45 * cont) * (1 + rng.gauss(0, 0.02))
        c["busiest"] += dt * 0.97 * (1 - 0.4 * cont)
        c["invol"] += dt * (40 + 35 * self.tp) * (1 + 120 * cont + 15 * e["jitter"])

    def _acts(self, dt, active, steps, n_pf, n_d, info_p, info_d, t_p, t_d, e, B, chunk):
        """Each rank's busy / SM / DRAM / tensor fractions over the tick."""
        acts = {}
        total_t = n_pf * t_p + n_d * t_d
        if total_t <= 0:
            return self._idle(dt)["acts"]
        for i, gpu in enumerate(self.gpus):
            busy = sm = dram = tensor = 0.0
            for n, info, t_step in ((n_pf, info_p, t_p), (n_d, info_d, t_d)):
                if n <= 0:
                    continue
                t_own, t_mem, t_comp = info["ranks"][i]
                s = e["share"].get(gpu, 0.0)
                own = t_own * (1 - s)
                core = max(t_mem, t_comp)
                fill = 0.5 + 0.42 * min(1.0, core / max(1e-9, own))
                wait = info["slow"] - t_own + info["comm"]
                kern = t_own + wait + info["sampler"] + info["draft"]
                busy += n * kern
                sm += n * (own * fill + wait * 0.16 + info["sampler"] * 0.45
                           + info["draft"] * 0.5 + t_own * s * 0.85)
                dram += n * (info["mem"] / (self.b.bw_gbs * 1e9) + info["sampler"] * 0.2)
                tensor += n * (info["flops"] / (self.b.tflops * 1e12) + t_own * s * 0.25)
            f = active / total_t
            nv = 0.0
            if self.tp > 1:
                nv = steps / dt * 2 * self.m.layers * (B + n_pf * chunk / max(steps, 1e-9)) \
                    * self.m.hidden * 2 * (self.tp - 1) / self.tp / 2**20
                nv *= 1.0 / e["link"].get(gpu, 1.0)
            acts[gpu] = dict(busy=min(1.0, busy * f), sm=min(0.995, sm * f),
                             occ=min(0.9, sm * f * 0.32), dram=min(0.97, dram * f),
                             tensor=min(0.95, tensor * f), nvlink=nv, mem_used=self.mem_used,
                             pcie_rx=6 + 40 * active, pcie_tx=4 + 25 * active)
        return acts

    def finish_big(self, n: int, max_tokens: int, seconds: float):
        """The oversized request ends: its request-level histograms move only now."""
        self.c["fin"] += 1
        if self.kind == "vllm":
            self.h["params_n"].observe_value(float(n))
            self.h["params_max_tokens"].observe_value(float(max_tokens))
            self.h["max_generation_tokens"].observe_value(float(max_tokens))
            self.h["e2e"].observe_value(seconds)
            self.h["tpot"].observe_value(self.last_itl)
            self.h["queue"].observe_value(0.01)
        elif self.kind == "sglang":
            self.h["e2e"].observe_value(seconds)
        self.c["gen"] += 0 if self.kind == "vllm" else n * max_tokens * 0.3

    # ------------------------------------------------------------------ the engine page
    def sample(self, url: str, pids, wall: float, mono: float) -> EngineSample:
        c, p, kind = self.c, self.p, self.kind
        used = min(self.pool, self.used)
        common = dict(kind=kind, url=url, model=self.m.name, time_wall_s=wall, time_mono_s=mono,
                      pids=tuple(pids), tensor_parallel=self.tp, data_parallel=1,
                      cpu_s=round(c["cpu"], 2), ctx_involuntary=int(c["invol"]),
                      busiest_thread_cpu_s=round(c["busiest"], 2), replica=self.label)
        R, W = float(round(self.R + self.extra)), float(round(self.W))
        if kind == "vllm":
            spec = p.get("spec")
            return EngineSample(
                **common, generation_tokens_total=float(int(c["gen"])),
                prompt_tokens_total=float(int(c["prompt"])),
                prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(int(c["fin"])), requests_running=R,
                requests_waiting=W, kv_usage_ratio=round(used / self.pool, 6),
                num_gpu_blocks=self.pool // 16, block_size=16, cache_dtype="auto",
                kv_pool_bytes=self.pool * self.kvb, kv_pool_tokens=self.pool,
                preemptions_total=float(int(c["preempt"])),
                waiting_by_reason={"capacity": W if self.used > 0.95 * self.pool else 0.0,
                                   "deferred": 0.0},
                histograms=tuple(hh.snapshot() for hh in self.h.values()),
                prefill_seconds_total=round(c["pf_s"], 3), decode_seconds_total=round(c["dec_s"], 3),
                spec_drafts_total=float(int(c["drafts"])) if spec else None,
                spec_draft_tokens_total=float(int(c["dtok"])) if spec else None,
                spec_accepted_tokens_total=float(int(c["acc"])) if spec else None,
                busiest_thread=f"{self.pid0} VLLM::EngineCore" if self.tp == 1
                else f"{self.pid0 + 2} VLLM::Worker_TP0")
        if kind == "sglang":
            old = p.get("sglang_old", False)
            spec = p.get("spec")
            evict = max(0.0, min(self.pool - used, self.pool * 0.35 * p.get("hit", 0.1)))
            return EngineSample(
                **common,
                generation_tokens_total=float(int(c["gen"] if old else c["rt_dec"])),
                prompt_tokens_total=float(int(c["prompt"] if old else c["rt_pc"] + c["rt_pcache"])),
                prompt_tokens_cached_total=float(int(c["cached"])),
                requests_finished_total=float(int(c["fin"])), requests_running=R,
                requests_waiting=W, kv_usage_ratio=round(used / self.pool, 6),
                kv_pool_tokens=self.pool, kv_used_tokens=float(int(used)),
                kv_free_tokens=float(int(self.pool - used - evict)),
                kv_evictable_tokens=float(int(evict)),
                retracted_requests_total=float(int(c["preempt"])),
                retracted_input_tokens_total=float(int(c["retract_tok"])),
                forward_seconds_total=round(c["fwd_s"], 3),
                spec_accept_ratio=round(self.accept_now, 4) if spec else None,
                spec_accept_length=round(self.accept_len, 4) if spec else None,
                histograms=tuple(hh.snapshot() for hh in self.h.values()),
                busiest_thread=f"{self.pid0 + 1} sglang::scheduler")
        spec = p.get("spec")
        return EngineSample(
            **common, generation_tokens_total=float(int(c["gen"])),
            prompt_tokens_total=float(int(c["prompt"] + c["cached"])),
            prompt_tokens_cached_total=float(int(c["cached"])),
            requests_running=R, requests_waiting=W, kv_pool_tokens=self.pool,
            prefill_seconds_total=round(c["pf_s"], 3), decode_seconds_total=round(c["dec_s"], 3),
            decode_steps_total=float(int(c["steps"])),
            spec_drafts_total=float(int(c["drafts"])) if spec else None,
            spec_draft_tokens_total=float(int(c["dtok"])) if spec else None,
            spec_accepted_tokens_total=float(int(c["acc"])) if spec else None,
            busiest_thread=f"{self.pid0} llama-server")
