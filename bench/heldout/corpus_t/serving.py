"""A request-level continuous-batching engine (vLLM V1, SGLang, llama.cpp) on one or more GPUs.

Each tick is split into sub-intervals; in each the scheduler admits waiting requests into the
KV pool, mixes prefill chunks into decode steps (vLLM chunked prefill) or runs separate extend
batches (SGLang), and every running sequence advances by the number of steps that fit.  Step
time comes from the roofline: weights + KV reads over HBM bandwidth, prefill FLOPs over the
tensor cores (scaled by the SM clock), the host's per-step work, TP all-reduces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import LaunchHist

from .physics import (GIB, GPUS, MODELS, SGLANG_BUCKETS, SGLANG_HISTS, VLLM_BUCKETS,
                      VLLM_HISTS, Hist)


class Req:
    __slots__ = ("arr", "prompt", "out", "n", "lp", "cached", "done_p", "gen", "sched",
                 "first", "client", "tag", "recompute")

    def __init__(self, arr, prompt, out, n=1, lp=0, cached=0, client=-1, tag=""):
        self.arr, self.prompt, self.out, self.n, self.lp = arr, prompt, out, n, lp
        self.cached, self.done_p, self.gen, self.sched, self.first = cached, 0, 0.0, None, None
        self.client, self.tag, self.recompute = client, tag, 0

    def need(self) -> int:  # prompt tokens still to compute
        return max(0, self.prompt + self.recompute - self.cached - self.done_p)

    def kv(self) -> float:
        return self.cached + self.done_p + self.n * self.gen


@dataclass
class ServeCfg:
    engine: str = "vllm"
    model: str = "llama8b"
    gpu: str = "H100"
    tp: int = 1
    gpus: tuple[int, ...] = (0,)
    max_seqs: int = 256
    budget: int = 8192
    mem_util: float = 0.9
    block: int = 16
    mode: str = "open"  # open (Poisson rate) or closed (clients)
    rate: object = 4.0  # req/s, or f(t)
    clients: object = 32  # or f(t)
    think_s: float = 0.5
    prompt: tuple = (900, 0.8, 8000)  # median, sigma, cap
    out: tuple = (220, 0.7, 2000)
    prefix_hit: object = 0.15  # fraction of prompt served from the prefix cache, or f(t)
    spec_k: int = 0
    accept: object = 0.7  # acceptance per draft token, or f(t)
    host_ms: float = 2.2  # engine core's serial CPU work per step (async scheduling overlaps)
    host_per_seq_ms: float = 0.012
    scrape_s: float = 1.0
    mfu_metrics: bool = True
    ebpf: bool = False
    url_port: int = 8000
    injections: list = field(default_factory=list)  # (t, dict(prompt, out, n, lp, count))
    slots: int = 4  # llama.cpp parallel slots
    uptime_h: float = 9.0
    pid0: int = 41200


def _f(v, t):
    return v(t) if callable(v) else v


class Serving:
    def __init__(self, cfg: ServeCfg, rng, fault, t0_wall: float):
        self.c, self.r, self.fault = cfg, rng, fault
        m, g = MODELS[cfg.model], GPUS[cfg.gpu]
        self.m, self.g = m, g
        self.t0_wall = t0_wall
        tp = cfg.tp
        self.w_gpu = m.weights / tp
        self.kvb = m.kv_per_token / tp
        act_b = 2.6 * GIB + 0.4 * GIB * (m.hidden / 4096)
        pool = g.mem_total * cfg.mem_util - self.w_gpu - act_b - 0.6 * GIB
        self.pool_bytes = int(pool)
        self.pool_tok = int(pool / self.kvb) // cfg.block * cfg.block
        if cfg.engine == "llamacpp":
            self.pool_tok = min(self.pool_tok, cfg.slots * 16384)
        self.blocks = self.pool_tok // cfg.block
        self.mem_used = int(g.mem_total * cfg.mem_util - 0.25 * GIB + rng.uniform(0, 0.2) * GIB)
        if cfg.engine == "llamacpp":
            self.mem_used = int(self.w_gpu * 0.55 + self.pool_tok * self.kvb * 0.5 + 1.2 * GIB)
            self.max_seqs = cfg.slots
        else:
            self.max_seqs = cfg.max_seqs
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.clients_busy = 0
        self.client_ready: list[float] = []
        up = cfg.uptime_h * 3600
        # counters scaled so the process looks up for hours
        base_rate = 900.0 * r_scale(cfg)
        self.gen = base_rate * up * rng.uniform(0.6, 1.1)
        self.prompt_c = self.gen * rng.uniform(2.5, 5.0)
        self.cached_c = self.prompt_c * rng.uniform(0.05, 0.3)
        self.finished = self.gen / rng.uniform(180, 320)
        self.preempt = float(rng.choice((0, 0, 3, 17, 120)))
        self.retract = float(rng.choice((0, 0, 2, 40)))
        self.retract_tok = self.retract * 2500.0
        self.prefill_s = self.finished * 0.18
        self.decode_s = self.finished * 6.5
        self.forward_s = up * 0.55
        self.steps_c = self.gen / 40.0
        self.flops = self.gen * 2 * m.active / tp * 1.35
        self.readb = self.steps_c * self.w_gpu * 1.6
        self.writeb = self.gen * self.kvb * 1.3
        self.drafts = self.draft_tok = self.accepted = 0.0
        if cfg.spec_k:
            self.drafts = self.steps_c * 30
            self.draft_tok = self.drafts * cfg.spec_k
            self.accepted = self.draft_tok * 0.55
        buckets = SGLANG_BUCKETS if cfg.engine == "sglang" else VLLM_BUCKETS
        names = SGLANG_HISTS if cfg.engine == "sglang" else VLLM_HISTS
        self.h = {n: Hist(n, buckets[n]) for n in names} if cfg.engine != "llamacpp" else {}
        fin = self.finished
        pre = {"ttft": (0.18, 0.9, fin), "itl": (0.022, 0.35, self.gen * 0.9),
               "tpot": (0.024, 0.3, fin), "e2e": (6.0, 0.9, fin), "queue": (0.02, 1.2, fin),
               "params_n": (1.0, 0.05, fin), "params_max_tokens": (512, 0.8, fin),
               "max_generation_tokens": (220, 0.9, fin)}
        for n, h in self.h.items():
            med, sig, cnt = pre[n]
            h.spread(med, sig, cnt)
        self.host_cpu = {"core": 0.0, "api": 0.0, "workers": 0.0}
        self.inv = int(up * 1.5)
        self.vol = int(up * 900)
        self.last = None  # the last scraped EngineSample
        self.last_scrape_t = -1e9
        self.tick_stats: dict = {}
        self.pending_inj = sorted(cfg.injections, key=lambda x: x[0])
        self.itl_recent = 0.0
        self.spec_rate = 0.0
        self.spec_len = 0.0
        self.launch_acc: dict[str, list] = {}
        self.cur_share = 1.0

    # ---------------------------------------------------------------- model of one step
    def step_time(self, D, C, p, pctx, fx):
        g, m, c = self.g, self.m, self.c
        clockf = fx.get("clock", 1.0)
        memf = fx.get("memf", 1.0)
        bw = g.bw * 0.82 * memf
        fl = g.flops * 0.55 * clockf
        k = c.spec_k
        w = self.w_gpu if m.active == m.params else self.w_gpu * min(1.0, 0.3 + D / 24)
        t_mem = (w + C * self.kvb) / bw
        t_comp = 2 * m.active / c.tp * (D * (1 + k) + p) / fl + \
            4 * m.layers * m.hidden * p * pctx / c.tp / fl
        t_gpu = max(t_mem, t_comp) + 0.25 * min(t_mem, t_comp) + m.layers * 1.4e-5 / clockf
        if c.tp > 1:
            t_gpu += m.layers * 2 * 9e-6 * (1 + 0.3 * (p > 0))
        if k:
            t_gpu += 0.09 * t_mem * k  # draft proposals (EAGLE head / small draft model)
        t_gpu += fx.get("tiny_ms", 0.0) * 1e-3
        extra_host = fx.get("step_host_ms", 0.0) * 1e-3
        t_host = (c.host_ms + c.host_per_seq_ms * D + 0.0004 * p / 100) * 1e-3 + extra_host
        share = fx.get("cpu_share", 1.0)
        t_host /= share
        shared = fx.get("shared", 0.0)
        t_gpu_eff = t_gpu / (1.0 - shared) if shared else t_gpu
        t_step = max(t_gpu_eff, t_host) + 0.15e-3 + fx.get("jitter_ms", 0.0) * 1e-3
        if c.engine == "llamacpp":  # no overlap: host and GPU take turns
            t_step = t_gpu_eff + t_host
        comp_frac = t_comp / max(t_comp + t_mem, 1e-9)
        return t_step, t_gpu, t_mem, t_comp, comp_frac

    # ---------------------------------------------------------------- arrivals
    def _new_req(self, t, client=-1):
        c, r = self.c, self.r
        fx = self.fx
        pmed, psig, pcap = fx.get("prompt", c.prompt)
        omed, osig, ocap = fx.get("out", c.out)
        prompt = int(min(pcap, max(8, r.lognormvariate(math.log(pmed), psig))))
        out = int(min(ocap, max(2, r.lognormvariate(math.log(omed), osig))))
        hit = _f(fx.get("prefix_hit", c.prefix_hit), t)
        cached = int(prompt * min(0.98, max(0.0, r.gauss(hit, 0.08)))) // c.block * c.block
        return Req(t, prompt, out, 1, 0, cached, client)

    def _arrivals(self, t, dt):
        c, r = self.c, self.r
        if c.mode == "open":
            lam = _f(self.fx.get("rate", c.rate), t) * dt
            n = _poisson(r, lam)
            for _ in range(n):
                self.waiting.append(self._new_req(t + r.uniform(0, dt)))
        else:
            want = int(round(_f(self.fx.get("clients", c.clients), t)))
            while len(self.client_ready) < want:
                self.client_ready.append(t + r.uniform(0, 2.0))
            del self.client_ready[want:]
            for i, ready in enumerate(self.client_ready):
                if ready is not None and ready <= t + dt:
                    self.waiting.append(self._new_req(max(t, ready), client=i))
                    self.client_ready[i] = None
        for extra in self.fx.get("burst", ()):  # (count per s, prompt, out)
            rate, prompt, out = extra
            for _ in range(_poisson(r, rate * dt)):
                p = int(prompt * r.uniform(0.7, 1.3))
                hit = self.fx.get("burst_hit", 0.0)
                self.waiting.append(Req(t + r.uniform(0, dt), p, int(out * r.uniform(0.5, 1.5)),
                                        cached=int(p * hit) // 16 * 16, tag="burst"))
        while self.pending_inj and self.pending_inj[0][0] < t + dt:
            ti, spec = self.pending_inj.pop(0)
            for _ in range(spec.get("count", 1)):
                self.waiting.append(Req(ti, spec["prompt"], spec["out"], spec.get("n", 1),
                                        spec.get("lp", 0), spec.get("cached", 0), tag="big"))

    # ---------------------------------------------------------------- one tick
    def tick(self, t, dt, fx):
        self.fx = fx
        c, r = self.c, self.r
        nsub = max(1, round(dt / 0.5))
        sd = dt / nsub
        busy = sm_t = tensor_t = dram_b = 0.0
        gen0, steps_tot = self.gen, 0.0
        itl_obs = []  # (value, count)
        ttft_list, e2e_list = [], []
        preempt0 = self.preempt
        prefill_time = 0.0
        launches = {"cudaGraphLaunch": 0.0, "cuLaunchKernel": 0.0, "cudaMemcpyAsync": 0.0}
        for si in range(nsub):
            ts = t + si * sd
            self._arrivals(ts, sd)
            self._admit(ts)
            dec = [q for q in self.running if q.need() == 0]
            pre = [q for q in self.running if q.need() > 0]
            D = sum(q.n for q in dec)
            C = sum(q.kv() for q in dec)
            P = sum(q.need() for q in pre)
            big = [q for q in dec if q.tag == "big"]
            fx2 = dict(fx)
            if big:  # logprobs over the vocabulary for n sequences, pythonised per step
                lp_cost = sum(q.n * (1 + q.lp) for q in big if q.lp)
                fx2["step_host_ms"] = fx.get("step_host_ms", 0.0) + 0.16 * lp_cost
                fx2["tiny_ms"] = fx.get("tiny_ms", 0.0) + 0.004 * sum(q.n for q in big) * \
                    self.m.vocab / 32000 * (1 + (max(q.lp for q in big) > 0))
            if D == 0 and P == 0:
                continue
            pctx = (sum(q.prompt for q in pre) / len(pre)) if pre else 0
            if c.engine == "sglang":
                chunk = min(P, c.budget)
            else:
                chunk = min(P, max(0, c.budget - D)) if P else 0
            t_dec, g_dec, m_dec, k_dec, cf_dec = self.step_time(D, C, 0, 0, fx2) if D else \
                (0, 0, 0, 0, 0)
            if chunk:
                Dm = D if c.engine != "sglang" else 0
                t_mix, g_mix, m_mix, k_mix, cf_mix = self.step_time(Dm, C if Dm else 0, chunk,
                                                                     pctx * 0.5, fx2)
            else:
                t_mix = g_mix = m_mix = k_mix = cf_mix = 0
            n_mix_need = P / chunk if chunk else 0.0
            if n_mix_need * t_mix >= sd or D == 0:
                n_mix = sd / t_mix if t_mix else 0.0
                n_dec = 0.0
            else:
                n_mix = n_mix_need
                n_dec = (sd - n_mix * t_mix) / t_dec if t_dec else 0.0
            # GPU time and activity
            gt = n_mix * g_mix + n_dec * g_dec
            shared = fx.get("shared", 0.0)
            busy += min(sd, gt / (1 - shared) if shared else gt)
            sm_dec = 0.42 + 0.33 * min(1.0, D / 64)
            tiny = fx2.get("tiny_ms", 0.0) * 1e-3
            for n_, g_, cf_, tq in ((n_dec, g_dec, cf_dec, sm_dec), (n_mix, g_mix, cf_mix, 0.9)):
                if not n_:
                    continue
                real = max(0.0, g_ - tiny)
                sm_t += n_ * (real * (tq * (1 - cf_) + 0.93 * cf_) + tiny * 0.04)
                tensor_t += n_ * real * (0.06 + 0.22 * min(1, D / 128) + 0.55 * cf_)
            dram_b += n_dec * (self.w_gpu + C * self.kvb) + n_mix * (self.w_gpu + C * self.kvb
                                                                      + chunk * self.kvb * 2)
            steps = n_mix + n_dec
            steps_tot += steps
            launches["cudaGraphLaunch"] += n_dec * (2 if c.spec_k else 1)
            launches["cuLaunchKernel"] += n_mix * self.m.layers * 6 + n_dec * 4
            launches["cudaMemcpyAsync"] += steps * 3
            # spec decode: tokens per step per sequence
            if c.spec_k:
                a = _f(fx.get("accept", c.accept), ts)
                acc = sum(a ** i for i in range(1, c.spec_k + 1))
                per = 1 + acc
                self.drafts += steps * D
                self.draft_tok += steps * D * c.spec_k
                self.accepted += steps * D * acc
                self.spec_rate = acc / c.spec_k
                self.spec_len = per
            else:
                per = 1.0
            # decode progress
            if c.engine == "sglang" and chunk:
                dec_steps = n_dec
                if n_mix:
                    itl_obs.append((t_dec + t_mix * min(1.0, n_mix / max(1.0, n_dec)) if n_dec
                                    else sd, D * min(n_mix, max(1.0, n_dec))))
                    itl_obs.append((t_dec, D * max(0.0, n_dec - n_mix)))
                else:
                    itl_obs.append((t_dec, D * n_dec))
            else:
                dec_steps = steps
                if D:
                    itl_obs.append((t_dec, D * n_dec))
                    itl_obs.append((t_mix, D * n_mix))
            step_avg = sd / max(steps, 1e-9)
            for q in dec:
                adv = dec_steps * per
                rem = q.out - q.gen
                if adv >= rem:
                    tf = ts + rem / max(adv, 1e-9) * sd
                    q.gen = q.out
                    self.gen += rem * q.n
                    self._finish(q, tf, e2e_list)
                else:
                    q.gen += adv
                    self.gen += adv * q.n
            # prefill progress, FCFS
            done_tok = n_mix * chunk
            rate = done_tok / sd if sd else 0
            acc_t = 0.0
            for q in pre:
                if done_tok <= 0:
                    break
                need = q.need()
                take = min(need, done_tok)
                q.done_p += take
                done_tok -= take
                acc_t += take
                if q.need() == 0:
                    tf = ts + (acc_t / rate if rate else sd) + step_avg
                    q.first = tf
                    ttft_list.append(tf - q.arr)
                    prefill_time += tf - (q.sched or q.arr)
                    self.prompt_c += q.prompt
                    self.cached_c += q.cached
                    q.gen = max(q.gen, 1.0)
                    self.gen += q.n if q.recompute == 0 else 0
            self.running = [q for q in self.running if q.gen < q.out]
            self._kv_check(ts + sd)
            self.steps_c += steps
            self.forward_s += gt
            self.flops += steps * 2 * self.m.active / c.tp * (D + chunk * (n_mix / max(steps, 1e-9)))
            self.readb += dram_b
        # -------- histograms
        sig = 0.07 + fx.get("itl_sigma", 0.0)
        for v, cnt in itl_obs:
            if cnt >= 0.5 and v > 0:
                self.h["itl"].spread(v, sig, cnt) if "itl" in self.h else None
        for v in ttft_list:
            if "ttft" in self.h:
                self.h["ttft"].observe(v)
        for v, q in e2e_list:
            if "e2e" in self.h:
                self.h["e2e"].observe(v)
            if "tpot" in self.h and q.out > 1 and q.first is not None:
                self.h["tpot"].observe(max(0.001, (v - (q.first - q.arr)) / (q.out - 1)))
            if "params_n" in self.h:
                self.h["params_n"].observe(q.n)
                self.h["params_max_tokens"].observe(q.out)
                self.h["max_generation_tokens"].observe(q.out)
            self.decode_s += max(0.0, v - ((q.first or q.arr) - q.arr))
        self.prefill_s += prefill_time
        itl_w = sum(cn for _, cn in itl_obs)
        self.itl_recent = sum(v * cn for v, cn in itl_obs) / itl_w if itl_w else 0.0
        # -------- host CPU of the tree
        share = fx.get("cpu_share", 1.0)
        active = 1.0 if (self.running or self.waiting) else 0.0
        core = min(share, 0.05 + 0.92 * active) if c.engine != "llamacpp" else \
            min(share, 0.05 + 0.95 * active * (1 - busy / dt * 0.7))
        toks = self.gen - gen0
        api = min(share, 0.04 + toks / dt * 2.2e-5 + len(ttft_list) / dt * 0.004 +
                  fx.get("api_extra", 0.0))
        workers = 0.03 * (c.tp if c.tp > 1 else 0) + (0.6 * active * c.tp if c.tp > 1 else 0)
        self.host_cpu = {"core": core * dt, "api": api * dt, "workers": workers * dt}
        inv_rate = 1.5 + 40 * active
        if share < 1.0:
            inv_rate += (1 - share) * 2600
        inv_rate += fx.get("inv_extra", 0.0)
        self.inv += int(inv_rate * dt * r.uniform(0.8, 1.2))
        self.vol += int((steps_tot * 2.1 + 30) * r.uniform(0.9, 1.1))
        self.cur_share = share
        u = busy / dt
        act = {"busy": u, "sm": sm_t / dt, "tensor": min(0.95, tensor_t / dt),
               "dram": min(0.97, dram_b / (self.g.bw * dt)),
               "occ": sm_t / dt * (0.28 if c.spec_k == 0 else 0.22),
               "mem_used": self.mem_used, "steps": steps_tot}
        if c.tp > 1:
            act["nvl"] = steps_tot / dt * self.m.layers * 2 * self.m.hidden * 2 * max(
                1, sum(q.n for q in self.running)) / 2**20 * 1.5
        self.tick_stats = {"gen_rate": toks / dt, "steps": steps_tot, "u": u,
                           "preempt": self.preempt - preempt0, "launches": launches}
        return act

    def _finish(self, q, tf, e2e_list):
        self.finished += 1
        e2e_list.append((tf - q.arr, q))
        if q.client >= 0 and q.client < len(self.client_ready):
            self.client_ready[q.client] = tf + self.r.expovariate(1 / self.c.think_s)

    def _admit(self, t):
        c = self.c
        used = sum(q.kv() for q in self.running)
        free = self.pool_tok - used
        wm = 0.01 * self.pool_tok
        while self.waiting and len(self.running) < self.max_seqs:
            q = self.waiting[0]
            need = q.prompt + q.recompute - q.cached + q.n * 16
            if c.engine == "sglang":
                need += 0.25 * q.out * q.n
            if need > free - wm:
                break
            self.waiting.pop(0)
            if q.sched is None:
                q.sched = t
                if "queue" in self.h:
                    self.h["queue"].observe(max(0.0, t - q.arr))
            self.running.append(q)
            free -= need

    def _kv_check(self, t):
        used = sum(q.kv() for q in self.running)
        while used > self.pool_tok and len(self.running) > 1:
            q = self.running.pop()  # the newest: preempted (vLLM recompute) or retracted
            used -= q.kv()
            if self.c.engine == "sglang":
                self.retract += 1
                self.retract_tok += q.prompt
            else:
                self.preempt += 1
            q.recompute += int(q.gen * q.n) // 1
            q.done_p = 0
            self.waiting.insert(0, q)

    # ---------------------------------------------------------------- what a scrape reads
    def kv_used_tok(self):
        return sum(q.kv() for q in self.running)

    def scrape(self, t, tick_wall, pids, tree_cpu, inv, busiest, pool_only=False):
        from gputop.schema import EngineSample
        c = self.c
        used = self.kv_used_tok()
        waiting = len(self.waiting)
        cap_wait = sum(1 for q in self.waiting if q.sched is None or q.recompute) \
            if used > 0.9 * self.pool_tok else 0
        mono = 5000.0 + c.uptime_h * 3600 + t
        common = dict(url=f"http://127.0.0.1:{c.url_port}/metrics", model=self.m.name,
                      time_mono_s=round(mono, 4), time_wall_s=round(tick_wall - 0.02, 4),
                      pids=pids, cpu_s=round(tree_cpu, 2), ctx_involuntary=inv,
                      busiest_thread_cpu_s=round(busiest[1], 2), busiest_thread=busiest[0],
                      tensor_parallel=c.tp, data_parallel=1)
        running = float(len(self.running))
        if c.engine == "vllm":
            es = EngineSample(
                kind="vllm", generation_tokens_total=float(int(self.gen)),
                prompt_tokens_total=float(int(self.prompt_c)),
                prompt_tokens_cached_total=float(int(self.cached_c)),
                requests_finished_total=float(int(self.finished)),
                requests_running=running, requests_waiting=float(waiting),
                kv_usage_ratio=round(min(1.0, used / self.pool_tok), 6),
                num_gpu_blocks=self.blocks, block_size=c.block,
                kv_pool_bytes=int(self.blocks * c.block * self.kvb), kv_pool_tokens=self.pool_tok,
                cache_dtype="auto",
                histograms=tuple(h.snapshot() for h in self.h.values()),
                preemptions_total=float(self.preempt),
                waiting_by_reason={"capacity": float(cap_wait),
                                   "deferred": float(waiting - cap_wait)},
                flops_total=float(int(self.flops)) if c.mfu_metrics else None,
                read_bytes_total=float(int(self.readb)) if c.mfu_metrics else None,
                write_bytes_total=float(int(self.writeb + self.gen * self.kvb))
                if c.mfu_metrics else None,
                prefill_seconds_total=round(self.prefill_s, 4),
                decode_seconds_total=round(self.decode_s, 4),
                spec_drafts_total=float(int(self.drafts)) if c.spec_k else None,
                spec_draft_tokens_total=float(int(self.draft_tok)) if c.spec_k else None,
                spec_accepted_tokens_total=float(int(self.accepted)) if c.spec_k else None,
                **common)
        elif c.engine == "sglang":
            evict = max(0.0, min(self.pool_tok - used, self.pool_tok * 0.35 *
                                 _f(c.prefix_hit, t) * 2))
            es = EngineSample(
                kind="sglang", generation_tokens_total=float(int(self.gen)),
                prompt_tokens_total=float(int(self.prompt_c)),
                prompt_tokens_cached_total=float(int(self.cached_c)),
                requests_finished_total=float(int(self.finished)),
                requests_running=running, requests_waiting=float(waiting),
                kv_usage_ratio=round(min(1.0, used / self.pool_tok), 6),
                kv_pool_tokens=self.pool_tok, cache_dtype="auto",
                kv_used_tokens=float(int(used)), kv_free_tokens=float(int(self.pool_tok - used
                                                                           - evict)),
                kv_evictable_tokens=float(int(evict)),
                histograms=tuple(h.snapshot() for h in self.h.values()),
                retracted_requests_total=float(self.retract),
                retracted_input_tokens_total=float(int(self.retract_tok)),
                forward_seconds_total=round(self.forward_s, 4),
                spec_accept_ratio=round(self.spec_rate, 4) if c.spec_k else None,
                spec_accept_length=round(self.spec_len, 4) if c.spec_k else None,
                waiting_by_reason={"grammar": 0.0},
                flops_total=float(int(self.flops)) if c.mfu_metrics else None,
                read_bytes_total=float(int(self.readb)) if c.mfu_metrics else None,
                **common)
        else:
            es = EngineSample(
                kind="llamacpp", generation_tokens_total=float(int(self.gen)),
                prompt_tokens_total=float(int(self.prompt_c)),
                prompt_tokens_cached_total=float(int(self.cached_c)),
                requests_running=running, requests_waiting=float(waiting),
                prefill_seconds_total=round(self.prefill_s * 0.6, 4),
                decode_seconds_total=round(self.decode_s, 4),
                decode_steps_total=float(int(self.steps_c)),
                spec_drafts_total=float(int(self.drafts)) if c.spec_k else None,
                spec_draft_tokens_total=float(int(self.draft_tok)) if c.spec_k else None,
                spec_accepted_tokens_total=float(int(self.accepted)) if c.spec_k else None,
                **common)
        return es

    def launch_hists(self, pid, dt, fx):
        """eBPF host-side call durations of the engine core's launching thread this tick."""
        r = self.r
        out = []
        base = {"cudaGraphLaunch": 14e3, "cuLaunchKernel": 3.6e3, "cudaMemcpyAsync": 6.5e3}
        jitter_frac = fx.get("launch_tail_frac", 0.0)
        jitter_ms = fx.get("launch_tail_ms", 0.0)
        share = fx.get("cpu_share", 1.0)
        for api, cnt in self.tick_stats.get("launches", {}).items():
            n = int(cnt)
            if n <= 0:
                continue
            k = min(n, 300)
            scale = n / k
            buckets: dict[int, int] = {}
            total = 0.0
            mx = 0
            for _ in range(k):
                v = r.lognormvariate(math.log(base[api]), 0.35)
                if jitter_frac and r.random() < jitter_frac:
                    v += r.lognormvariate(math.log(jitter_ms * 1e6), 0.6)
                elif share < 1.0 and r.random() < (1 - share) * 0.05:
                    v += r.uniform(0.5e6, 6e6)  # descheduled mid-call
                elif r.random() < 0.0008:
                    v += r.uniform(40e3, 250e3)
                iv = int(v)
                b = bucket_index(iv)
                buckets[b] = buckets.get(b, 0) + 1
                total += v
                mx = max(mx, iv)
            buckets = {b: max(1, int(round(cn * scale))) for b, cn in buckets.items()}
            out.append(LaunchHist(api=api, pid=pid, count=sum(buckets.values()),
                                  sum_ns=int(total * scale), max_ns=mx, buckets=buckets))
        return tuple(out)


def r_scale(cfg) -> float:
    return {"llamacpp": 0.05}.get(cfg.engine, 1.0)


def _poisson(r, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(r.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= r.random()
        if p <= L:
            return k
        k += 1
