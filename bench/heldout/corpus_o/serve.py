"""A serving engine, simulated request by request: arrivals, a continuous-batching scheduler
over a paged KV pool, step times from bytes and FLOPs at the GPU's clock, and the engine's
own counters and histograms (cumulative, moving only when work is done).

Time advances in substeps of ``DT`` seconds; inside one, the batch is taken as fixed and
the number of forward steps is what fits in the GPU time available (a fluid model of
steps, an exact model of requests)."""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from .metrics import (SGL_E2E, SGL_ITL, SGL_QUEUE, SGL_TTFT, VLLM_E2E, VLLM_ITL, VLLM_N, VLLM_TTFT,
                      Hist, ModelCfg, vllm_1_2_5)

DT = 0.5


class Req:
    __slots__ = ("arrive", "prompt", "cached", "out", "n", "gen", "left", "admit", "first",
                 "blocks", "heavy", "maxtok", "fin", "pre", "frac", "tag")

    def __init__(self, arrive, prompt, cached, out, n=1, heavy=0.0, maxtok=None, tag=""):
        self.arrive = arrive
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.n = n
        self.gen = 0
        self.left = 0
        self.admit = None
        self.first = None
        self.blocks = 0
        self.heavy = heavy  # extra per-step sampler work (s) while it decodes
        self.maxtok = maxtok or out
        self.fin = None
        self.pre = 0  # times preempted
        self.frac = 0.0
        self.tag = tag


def poisson(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(rng.gauss(lam, math.sqrt(lam)) + 0.5))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


class Server:
    """One engine (or one data-parallel engine of a page) on its tensor-parallel GPUs."""

    def __init__(self, world, kind, model: ModelCfg, gpus, *, version=0.11, url=None,
                 replica="", max_seqs=256, max_batched=8192, gmu=0.9, block_size=16,
                 pool_tokens=None, load=None, prompt=None, output=None, events=(),
                 eager=False, slots=4, ctx=32768, spec_k=0, accept=None, mfu_metrics=False,
                 cpu_share=None, stall=None, other_tenant=None, heavy_fn=None,
                 host_base_ms=1.2, host_req_ms=0.05, pids=None, fault_fn=None,
                 serving_from=0.0, kv_dtype_bytes=2, max_len=32768, mixed=None, up=None):
        self.w = world
        self.rng = world.rng
        self.kind = kind
        self.version = version
        self.m = model
        self.gpus = gpus
        self.tp = len(gpus)
        self.url = url or "http://127.0.0.1:8000/metrics"
        self.replica = replica
        self.max_seqs = max_seqs if kind != "llamacpp" else slots
        self.max_batched = max_batched
        self.block = block_size if kind == "vllm" else 1
        self.eager = eager
        self.spec_k = spec_k
        self.accept = accept
        self.mfu_metrics = mfu_metrics
        self.cpu_share = cpu_share or (lambda t: 1.0)
        self.stall = stall or (lambda t: (0.0, 0.0))  # (probability per step, mean seconds)
        self.other = other_tenant or (lambda t: 0.0)
        self.heavy_fn = heavy_fn
        self.host_base = host_base_ms / 1000
        self.host_req = host_req_ms / 1000
        self.fault_fn = fault_fn
        self.mixed = (kind != "sglang") if mixed is None else mixed
        self.up = up or (lambda t: True)
        spec = world.gpus[gpus[0]].spec
        self.spec = spec
        self.kv_bpt = model.kv_bytes_per_token(self.tp, kv_dtype_bytes)
        self.w_gpu = model.weight_bytes / self.tp
        if kind == "llamacpp":
            self.pool_tokens = ctx
        elif pool_tokens is None:
            free = spec.mem_total * gmu - self.w_gpu - 2.5e9 - 0.9e9
            self.pool_tokens = int(max(2e9, free) / self.kv_bpt)
        else:
            self.pool_tokens = pool_tokens
        self.pool_tokens -= self.pool_tokens % max(1, self.block)
        self.blocks_total = self.pool_tokens // max(1, self.block)
        self.pool_bytes = self.pool_tokens * self.kv_bpt
        self.kv_dtype = "auto" if kind == "vllm" else ("f16" if kind == "llamacpp" else "auto")
        self.load = load or (lambda t: 4.0)
        self.prompt_fn = prompt or (lambda rng, t: (int(rng.lognormvariate(6.5, 0.8)) + 16, 0))
        self.output_fn = output or (lambda rng, t: min(4000, int(rng.lognormvariate(5.3, 0.7)) + 8))
        self.events = sorted(events, key=lambda e: e[0])
        self.cpu_demand = 1.0  # (t, dict of Req kwargs)
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.carry = 0.0
        self.c = dict(gen=0, prompt=0, cached=0, fin=0, pre=0, retr=0, retr_tok=0,
                      drafts=0, dtoks=0, acc=0, pre_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0,
                      flops=0.0, rbytes=0.0, wbytes=0.0, cpu=0.0, invol=0, busiest=0.0)
        self.c["cpu"] = 3000 + self.rng.random() * 4000  # it has been up a while
        self.c["busiest"] = self.c["cpu"] * 0.62
        self.c["invol"] = int(self.c["cpu"] * 90)
        self.pids = pids or tuple(1000 + 37 * gpus[0] + i for i in range(3 + self.tp))
        if kind == "vllm":
            mt = vllm_1_2_5(max_len)
            self.h = {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
                      "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
                      "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
                      "params_max_tokens": Hist("params_max_tokens", mt),
                      "max_generation_tokens": Hist("max_generation_tokens", mt)}
        elif kind == "sglang":
            self.h = {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
                      "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
        else:
            self.h = {}
        self.fault_marks: list[float] = []
        self.kv_used_tok = 0
        self.last_steps_per_s = 0.0
        self.spec_len = 0.0
        self.restart_at = None
        # warm start: a steady state before the recording begins
        self._warm()

    # ------------------------------------------------------------ warm start

    def _warm(self):
        """Counters and histograms as after a long run at the opening load."""
        rng = self.rng
        hours = 1.5 + rng.random() * 20
        reqs = int(self.load(0.0) * 3600 * hours)
        if reqs <= 0:
            return
        out_mean = 250
        self.c["fin"] = reqs
        self.c["gen"] = int(reqs * out_mean)
        self.c["prompt"] = int(reqs * 900)
        self.c["cached"] = int(self.c["prompt"] * 0.2)
        self.c["steps"] = int(hours * 3600 * 30)
        self.c["pre_s"] = reqs * 0.08
        self.c["dec_s"] = reqs * 6.0
        self.c["fwd_s"] = hours * 3600 * 0.6
        self.c["flops"] = self.c["gen"] * 2 * self.m.params / self.tp
        self.c["rbytes"] = self.c["steps"] * self.w_gpu
        self.c["wbytes"] = self.c["gen"] * self.kv_bpt
        if self.spec_k:
            self.c["drafts"] = int(self.c["gen"] / 2.5)
            self.c["dtoks"] = self.c["drafts"] * self.spec_k
            self.c["acc"] = int(self.c["dtoks"] * 0.6)
        # histograms: a few synthetic shapes at the scale of a healthy steady state
        for name, hist in self.h.items():
            base = {"ttft": 0.09, "itl": 0.022, "tpot": 0.024, "e2e": 7.0, "queue": 0.004,
                    "params_n": 1.0, "params_max_tokens": 1024.0,
                    "max_generation_tokens": 260.0}[name]
            n = reqs * (out_mean if name == "itl" else 1)
            for f, share in ((0.5, 0.2), (1.0, 0.5), (1.6, 0.25), (4.0, 0.05)):
                v = base if name == "params_n" else base * f
                hist.observe(v, int(n * share))

    # ------------------------------------------------------------ physics of one step

    def step_time(self, t, B, chunk, ctx_sum, chunk_ctx, tok_per_seq=1):
        """(wall seconds of a step, GPU-busy seconds, (sm, occ, dram, tensor) while busy,
        flops, bytes)."""
        spec = self.spec
        cf = min(self.w.gpus[g].clock_factor for g in self.gpus)
        bwf = min(1.0, 0.5 + 0.5 * cf)
        kvb = ctx_sum * self.kv_bpt + chunk * chunk_ctx * self.kv_bpt * 0.02
        nbytes = self.w_gpu + kvb
        t_mem = nbytes / (spec.bw * 0.8 * bwf)
        tok = B * tok_per_seq + chunk
        flops = 2 * self.m.params / self.tp * tok + \
            4 * self.m.layers * self.m.hidden / self.tp * chunk * max(1, chunk_ctx)
        eff = 0.68 * tok / (tok + 160.0)
        t_cmp = flops / (spec.flops * max(0.04, eff) * max(0.2, cf))
        fixed = (0.0004 if not self.eager else 0.0) + self.m.layers * 0.000012 / max(0.3, cf)
        t_k = max(t_mem, t_cmp) + fixed
        if self.tp > 1:
            bw_link = (spec.nvlink_gbs or 25) * 1e9
            t_k += 2 * self.m.layers * (9e-6 + tok * self.m.hidden * 2 / bw_link)
        heavy, heavy_host = self.heavy_fn(t, self) if self.heavy_fn else (0.0, 0.0)
        if self.spec_k and tok_per_seq > 1:
            heavy += self.spec_k * 0.00045  # the drafter's own forward passes
        t_gpu = t_k + 0.0002 + 0.000004 * B + heavy
        host = (self.host_base + self.host_req * B + heavy_host) / max(0.05, self.cpu_share(t))
        if self.eager:  # every kernel launched from Python: the GPU waits for the CPU
            host += self.m.layers * 9 * 6e-6 / max(0.05, self.cpu_share(t))
        if self.kind == "llamacpp":
            host += 0.0006 * B / max(0.05, self.cpu_share(t))  # sampling on the CPU, per slot
            gap = host + 0.0003
        elif self.eager:
            gap = max(0.0002, host - 0.25 * t_gpu)
        else:
            gap = max(0.0002, host - t_gpu)
        step = t_gpu + gap
        dram = min(0.97, nbytes / (t_gpu * spec.bw))
        ten = min(0.95, flops / (t_gpu * spec.flops * max(0.2, cf)) * 1.15)
        pf = chunk / max(1, tok)
        sm = 0.86 + 0.1 * pf - (0.5 * heavy / t_gpu)
        occ = 0.2 + 0.18 * pf + 0.1 * min(1.0, B / 128)
        return step, t_gpu, (max(0.2, sm), occ, dram, ten), flops, nbytes

    # ------------------------------------------------------------ the substep

    def advance(self, s0, s1):
        t = s0
        while t < s1 - 1e-9:
            self._sub(t, min(s1, t + DT))
            t += DT

    def _sub(self, s0, s1):
        rng = self.rng
        dt = s1 - s0
        w = self.w
        if not self.up(s0):
            self.waiting.clear()
            self.running.clear()
            self.was_down = True
            self.cpu_demand = 0.0
            self.last_steps_per_s = 0.0
            self.kv_used_tok = 0
            return
        if getattr(self, "was_down", False):
            self.was_down = False
            self.restart(s0)
        # arrivals
        lam = self.load(s0) * dt
        for _ in range(poisson(rng, lam)):
            p, cached = self.prompt_fn(rng, s0)
            self.waiting.append(Req(s0 + rng.random() * dt, p, cached, self.output_fn(rng, s0)))
        while self.events and self.events[0][0] < s1:
            at, kw = self.events.pop(0)
            self.waiting.append(Req(at, **kw))
        # admission (FCFS, by KV blocks for the prompt)
        free_blocks = self.blocks_total - sum(r.blocks for r in self.running)
        while self.waiting and self._seqs() < self.max_seqs:
            r = self.waiting[0]
            need = self._blocks_for(r.prompt + r.gen + 1) * (r.n if self.kind != "llamacpp" else 1)
            if self.kind == "llamacpp":
                need = 0  # a slot has its own context
            if need > free_blocks - int(0.01 * self.blocks_total):
                break
            self.waiting.pop(0)
            r.admit = max(r.arrive, s0)
            r.left = (r.prompt - r.cached) + (r.gen if r.pre else 0)
            r.left = max(1, r.left)
            r.blocks = need
            free_blocks -= need
            self.running.append(r)
        # the step mix
        decs = [r for r in self.running if r.left == 0]
        pres = [r for r in self.running if r.left > 0]
        B = sum(r.n for r in decs)
        ctx_sum = sum((r.prompt + r.gen) * r.n for r in decs)
        pre_total = sum(r.left for r in pres)
        share = 1.0 - self.other(s0)
        T = dt * share
        acc = self.accept(s0) if (self.spec_k and self.accept) else None
        tps = 1.0
        if acc is not None:
            k = self.spec_k
            tps = (1 - acc ** (k + 1)) / (1 - acc) if acc < 1 else k + 1
        n_mix = n_dec = 0.0
        t_mix = t_dec = 0.0
        busy = 0.0
        acts_w = [0.0, 0.0, 0.0, 0.0]
        flops = nbytes = 0.0
        stall_p, stall_s = self.stall(s0)
        if pre_total > 0:
            chunk = min(max(64, self.max_batched - (B if self.mixed else 0)), pre_total)
            bm = B if self.mixed else 0
            cctx = sum(r.prompt for r in pres) / max(1, len(pres))
            st, tg, a, fl, nb = self.step_time(s0, bm, chunk, ctx_sum if self.mixed else 0, cctx,
                                               (self.spec_k + 1) if acc is not None else 1)
            need = pre_total / chunk
            n_mix = min(need, T / st)
            t_mix = st
            busy += n_mix * tg
            for i in range(4):
                acts_w[i] += n_mix * tg * a[i]
            flops += n_mix * fl
            nbytes += n_mix * nb
            done_tokens = n_mix * chunk
            rate = chunk / st
            cum = 0.0
            for r in pres:
                if done_tokens <= 0:
                    break
                take = min(r.left, done_tokens)
                cum += take
                done_tokens -= take
                r.left -= int(take)
                if r.left <= 0 or take >= r.left:
                    r.left = 0
                    ft = max(r.arrive + 0.4 * st, s0 + cum / rate)
                    if r.first is None:
                        r.first = ft
                        r.gen = max(r.gen, 1)
                        self.c["gen"] += r.n
                        if "ttft" in self.h:
                            self.h["ttft"].observe(ft - r.arrive)
                    self.c["prompt"] += r.prompt
                    self.c["cached"] += r.cached
            rem = T - n_mix * st
        else:
            rem = T
        if B > 0 and rem > 0:
            st, tg, a, fl, nb = self.step_time(s0, B, 0, ctx_sum, 0,
                                               (self.spec_k + 1) if acc is not None else 1)
            if stall_p > 0:
                st += stall_p * stall_s
            n_dec = rem / st
            t_dec = st
            busy += n_dec * tg
            for i in range(4):
                acts_w[i] += n_dec * tg * a[i]
            flops += n_dec * fl
            nbytes += n_dec * nb
        # decode progress
        if self.mixed:
            steps = n_mix + n_dec
        else:
            steps = n_dec
        steps_i = int(steps + self.carry)
        self.carry = steps + self.carry - steps_i
        self.c["steps"] += int(n_mix + n_dec)
        self.last_steps_per_s = (n_mix + n_dec) / dt
        if acc is not None and B:
            self.c["drafts"] += int(B * steps)
            self.c["dtoks"] += int(B * steps * self.spec_k)
            self.c["acc"] += int(B * steps * (tps - 1))
            self.spec_len = tps
        finished = []
        step_len = (dt / steps) if steps > 0 else dt
        for r in decs:
            give = steps_i * tps + r.frac
            gi = int(give)
            r.frac = give - gi
            want = r.out - r.gen
            if gi >= want:
                gi = want
                r.fin = s0 + (want / max(1e-9, steps * tps)) * T + (dt - T) * rng.random()
                finished.append(r)
            r.gen += gi
            self.c["gen"] += gi * r.n
        # latency observations
        if "itl" in self.h and B:
            itl = self.h["itl"]
            if self.mixed:
                itl.spread(t_mix, int(B * n_mix), rng)
                nd = int(B * n_dec)
                ns = int(nd * stall_p)
                itl.spread(t_dec - stall_p * stall_s, nd - ns, rng, 0.1)
                if ns:
                    itl.spread(t_dec - stall_p * stall_s + stall_s * 1.6, ns, rng, 0.4)
            else:  # SGLang: a prefill batch runs alone; the decodes wait for it
                nd = int(B * n_dec)
                npf = int(B * min(n_mix, n_dec)) if n_mix else 0
                itl.spread(t_dec, nd - npf, rng, 0.1)
                if npf:
                    itl.spread(t_dec + t_mix, npf, rng, 0.2)
        for r in finished:
            self.running.remove(r)
            self._finish(r)
        # KV: grow, preempt when the pool is full
        used = 0
        for r in self.running:
            if self.kind != "llamacpp":
                r.blocks = self._blocks_for(r.prompt + r.gen + 1) * r.n
            used += r.blocks
        while used > self.blocks_total and self.running:
            victim = max(self.running, key=lambda x: x.admit)
            self.running.remove(victim)
            used -= victim.blocks
            victim.blocks = 0
            victim.pre += 1
            victim.left = 0
            self.waiting.insert(0, victim)
            if self.kind == "sglang":
                self.c["retr"] += 1
                self.c["retr_tok"] += victim.prompt
            else:
                self.c["pre"] += 1
        self.kv_used_tok = used * max(1, self.block) if self.kind != "llamacpp" else \
            sum(r.prompt + r.gen for r in self.running)
        # the GPU: own work and, when shared, the other tenant's
        for g in self.gpus:
            gpu = w.gpus[g]
            if busy > 0:
                d = min(1.0, busy / dt)
                sm, occ, dram, ten = (acts_w[i] / busy for i in range(4))
                self._write(gpu, s0, s1, d, sm, occ, dram, ten, self.tp > 1)
            o = self.other(s0)
            if o > 0:
                gpu.add(s0, s1, o, 0.93, 0.45, 0.35, 0.55)
        self.c["fwd_s"] += busy
        self.c["flops"] += flops
        self.c["rbytes"] += nbytes
        self.c["wbytes"] += B * steps * self.kv_bpt
        # the engine's CPU (cumulative): the core busy-loops while it has work
        sharecpu = self.cpu_share(s0)
        demand = (0.25 + (0.95 if self.running or self.waiting else 0.05)) * min(1.0, sharecpu * 1.05)
        self.c["cpu"] += demand * dt + 0.02 * self.load(s0) * dt
        self.c["busiest"] += (0.9 if self.running else 0.03) * min(1.0, sharecpu) * dt
        self.c["invol"] += int((60 + 20 * len(self.running)) * dt * (1 + 25 * (1 - sharecpu)))
        self.cpu_demand = demand + 0.02 * self.load(s0)
        if s0 >= 0 and self.fault_fn is not None and self.fault_fn(s0, self):
            self.fault_marks.append(s0)

    def _write(self, gpu, s0, s1, d, sm, occ, dram, ten, link):
        """The substep on the GPU, split into its 1/6-s slots with a little unevenness."""
        rng = self.rng
        n = 3
        h = (s1 - s0) / n
        if d >= 0.985:
            gpu.add(s0, s1, d, sm, occ, dram, ten, 900.0 if link else 0.0)
            return
        ws = [0.7 + 0.6 * rng.random() for _ in range(n)]
        tot = sum(ws)
        rest = 0.0
        for i in range(n):
            di = d * ws[i] * n / tot + rest
            rest = max(0.0, di - 1.0)
            di = min(1.0, di)
            gpu.add(s0 + i * h, s0 + (i + 1) * h, di, sm, occ, dram, ten,
                    900.0 * di if link else 0.0)

    def _blocks_for(self, tokens):
        return (tokens + self.block - 1) // self.block if self.block > 1 else tokens

    def _seqs(self):
        return sum(r.n for r in self.running) if self.kind != "llamacpp" else len(self.running)

    def _finish(self, r):
        self.c["fin"] += 1
        e2e = r.fin - r.arrive
        ttft = (r.first or r.fin) - r.arrive
        h = self.h
        if "e2e" in h:
            h["e2e"].observe(e2e)
        if "queue" in h:
            h["queue"].observe(max(0.0, r.admit - r.arrive))
        if "tpot" in h and r.out > 1:
            h["tpot"].observe((e2e - ttft) / (r.out - 1))
        if "params_n" in h:
            h["params_n"].observe(r.n)
            h["params_max_tokens"].observe(r.maxtok)
            h["max_generation_tokens"].observe(r.out)
        pre_s = max(0.0, (r.first or r.fin) - r.admit)
        self.c["pre_s"] += pre_s
        self.c["dec_s"] += max(0.0, r.fin - (r.first or r.fin))

    # ------------------------------------------------------------ what /metrics says

    def restart(self, t):
        """The process came back: every counter and histogram starts from zero."""
        for k in self.c:
            self.c[k] = 0 if isinstance(self.c[k], int) else 0.0
        for name, hist in list(self.h.items()):
            self.h[name] = Hist(hist.name, hist.bounds)
        self.pids = tuple(p + 400 for p in self.pids)

    def sample(self, t_wall, t_mono) -> EngineSample:
        c = self.c
        v = self.version
        running = float(self._seqs())
        waiting = float(sum(r.n for r in self.waiting))
        kv = min(1.0, self.kv_used_tok / max(1, self.pool_tokens))
        common = dict(url=self.url, model=self.m.name, tensor_parallel=self.tp, data_parallel=1,
                      pids=self.pids, time_mono_s=t_mono, time_wall_s=t_wall,
                      cpu_s=round(c["cpu"], 2), ctx_involuntary=int(c["invol"]),
                      busiest_thread_cpu_s=round(c["busiest"], 2),
                      kv_config=self.m.kv_config(), replica=self.replica,
                      weights_bytes=int(self.w_gpu),
                      weights_source="size of %d .safetensors file(s)" % max(1, int(self.m.weight_bytes / 5e9)))
        if self.kind == "vllm":
            extra = {}
            if v >= 0.20:
                extra.update(prompt_tokens_cached_total=float(c["cached"]),
                             kv_pool_tokens=self.pool_tokens, kv_pool_bytes=int(self.pool_bytes))
            if v >= 0.25:
                cap = waiting if self.waiting and self.running and kv > 0.9 else 0.0
                extra["waiting_by_reason"] = {"capacity": cap, "deferred": waiting - cap}
            if self.spec_k:
                extra.update(spec_drafts_total=float(c["drafts"]),
                             spec_draft_tokens_total=float(c["dtoks"]),
                             spec_accepted_tokens_total=float(c["acc"]))
            if self.mfu_metrics and v >= 0.28:
                extra.update(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                             write_bytes_total=c["wbytes"])
            return EngineSample(
                kind="vllm", generation_tokens_total=float(c["gen"]),
                prompt_tokens_total=float(c["prompt"]), requests_finished_total=float(c["fin"]),
                requests_running=running, requests_waiting=waiting, kv_usage_ratio=round(kv, 6),
                num_gpu_blocks=self.blocks_total, block_size=self.block, cache_dtype="auto",
                histograms=tuple(h.snapshot() for h in self.h.values()),
                preemptions_total=float(c["pre"]), prefill_seconds_total=round(c["pre_s"], 4),
                decode_seconds_total=round(c["dec_s"], 4),
                busiest_thread="%d VLLM::EngineCore" % (self.pids[1] if len(self.pids) > 1 else self.pids[0]),
                **extra, **common)
        if self.kind == "sglang":
            extra = {}
            if self.spec_k:
                acc_len = self.spec_len or 1.0
                extra.update(spec_accept_length=round(acc_len, 3),
                             spec_accept_ratio=round((acc_len - 1) / self.spec_k, 4))
            used = float(self.kv_used_tok)
            return EngineSample(
                kind="sglang", generation_tokens_total=float(c["gen"]),
                prompt_tokens_total=float(c["prompt"]),
                prompt_tokens_cached_total=float(c["cached"]),
                requests_finished_total=float(c["fin"]), requests_running=running,
                requests_waiting=waiting, kv_usage_ratio=round(kv, 6),
                kv_pool_tokens=self.pool_tokens, kv_used_tokens=used,
                kv_free_tokens=float(self.pool_tokens - used), kv_evictable_tokens=0.0,
                retracted_requests_total=float(c["retr"]),
                retracted_input_tokens_total=float(c["retr_tok"]),
                forward_seconds_total=round(c["fwd_s"], 4),
                histograms=tuple(h.snapshot() for h in self.h.values()),
                busiest_thread="%d sglang::scheduler" % self.pids[-1], **extra, **common)
        # llama.cpp llama-server --metrics (no histograms, no KV gauges)
        extra = {}
        if self.spec_k:
            extra.update(spec_drafts_total=float(c["drafts"]),
                         spec_draft_tokens_total=float(c["dtoks"]),
                         spec_accepted_tokens_total=float(c["acc"]))
        return EngineSample(
            kind="llamacpp", generation_tokens_total=float(c["gen"]),
            prompt_tokens_total=float(c["prompt"]),
            prompt_tokens_cached_total=float(c["cached"]), requests_running=running,
            requests_waiting=waiting, kv_pool_tokens=self.pool_tokens, cache_dtype="f16",
            prefill_seconds_total=round(c["pre_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
            decode_steps_total=float(c["steps"]),
            busiest_thread="%d llama-server" % self.pids[0], **extra, **common)
