"""A serving engine, request by request: arrivals, continuous batching, a KV pool in blocks,
prefix caching, chunked (or whole-prompt) prefill, decode steps timed from bytes and FLOPs
at the GPU's clock, CUDA graphs or eager launches, scheduler host time, logprobs work,
speculative decoding with acceptance, preemption (retraction) when blocks run out.

To stay fast the engine advances in macro-steps: k identical scheduler iterations at a
time, k bounded so that no request finishes, no prefill completes and no arrival lands
inside one; the histograms get each iteration's observations exactly.
"""
from __future__ import annotations

import math

from corpus_ar.pages import (Hist, SG_E2E, SG_ITL, SG_QUEUE, SG_TTFT, TGI_DUR, TGI_TOK,
                             TGI_TPOT, V0_E2E, V0_TPOT, V0_TTFT, V1_ITL, V1_LONG, V1_N, V1_TOK,
                             V1_TTFT)

GIB = 1 << 30


class Stream:
    """One kind of traffic: a rate over time and the shape of its requests."""

    def __init__(self, rate, prompt=(200, 80), out=(120, 60), personas=0, persona_len=(0, 0),
                 n=1, logprobs=0, structured=0.0, loras=(), accept=0.75, tag="", cap_out=4096,
                 prompt_max=None, clients=None):
        self.rate = rate  # t -> requests/s
        self.prompt = prompt
        self.out = out
        self.personas = personas
        self.persona_len = persona_len
        self.n = n
        self.logprobs = logprobs
        self.structured = structured
        self.loras = loras
        self.accept = accept  # float or t -> float: draft-token acceptance for this traffic
        self.tag = tag
        self.cap_out = cap_out
        self.prompt_max = prompt_max
        self.clients = clients  # t -> concurrent clients (closed loop) instead of a rate
        self.outstanding = 0


class Req:
    __slots__ = ("arr", "prompt", "shared", "persona", "out", "n", "lp", "struct", "lora",
                 "accept", "pf_left", "ctx", "gen", "blocks", "t_sched", "t_first", "stream",
                 "computed", "genf", "max_tokens")


class Engine:
    def __init__(self, node, ctx_id, rng, kind, model, params_b, wbytes, layers, hidden, kvb,
                 gpus, streams, gmu=0.9, block=16, max_seqs=256, max_batched=8192,
                 chunked=True, graphs=True, graph_max_bs=512, spec=None, prefix_caching=True,
                 max_len=32768, loras=(), cache_dtype="auto", vocab=128256, pool_tokens=None,
                 act_gib=2.0, launch_us=5.5, extra_mem_gib=0.0):
        self.node = node
        self.ctx = ctx_id
        self.rng = rng
        self.kind = kind
        self.model = model
        self.P = params_b * 1e9
        self.tp = len(gpus)
        self.gpus = gpus
        self.W = params_b * 1e9 * wbytes / self.tp
        self.L = layers
        self.hidden = hidden
        self.kvb = kvb / self.tp
        self.streams = streams
        self.gmu = gmu
        self.block = block
        self.max_seqs = max_seqs
        self.max_batched = max_batched
        self.chunked = chunked
        self.graphs = graphs
        self.graph_max_bs = graph_max_bs
        self.spec = spec  # dict(k=, draft_bytes=, kind="draft"|"eagle")
        self.prefix_caching = "True" if prefix_caching else "False"
        self.max_len = max_len
        self.loras = list(loras)
        self.max_lora = max(1, len(loras))
        self.lora_stamp = 1.7e9
        self.cache_dtype = cache_dtype
        self.vocab = vocab
        self.launch_us = launch_us
        board = node.gpus[gpus[0]].b
        total = board.mem_total
        if pool_tokens is None:
            pool_bytes = total * gmu - self.W - act_gib * GIB - 0.6 * GIB
            pool_tokens = int(pool_bytes / self.kvb)
        self.pool_tokens = pool_tokens // block * block
        self.blocks = self.pool_tokens // block
        self.pool_bytes = int(self.pool_tokens * self.kvb)
        self.mem_bytes = int(self.W + self.pool_bytes + (act_gib + 0.6 + extra_mem_gib) * GIB)
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.pending: list[Req] = []  # arrived in the future (this slot)
        self.used_blocks = 0
        self.personas_held: dict[tuple, int] = {}
        self.t = 0.0
        self.stall = 0.0
        self.gen_rate = 0.0
        self.pp_rate = 0.0
        self.tg_rate = 0.0
        self.busy_slots = 1.0
        self.accept_len_gauge = 0.0
        self.accept_rate_gauge = 0.0
        self.c = {k: 0.0 for k in ("prompt", "cached", "gen", "preempt", "prefix_q", "prefix_h",
                                   "fin_stop", "fin_len", "fin_abort", "drafts", "draft_tok",
                                   "accepted", "retract_tok", "prefill_compute", "fwd_decode",
                                   "fwd_extend", "finished", "arrived", "n_prefill", "n_decode",
                                   "prefill_s", "decode_s")}
        if kind == "sglang":
            lay = dict(ttft=SG_TTFT, itl=SG_ITL, e2e=SG_E2E, queue=SG_QUEUE)
        elif kind == "vllm0":
            lay = dict(ttft=V0_TTFT, itl=V0_TPOT, e2e=V0_E2E)
        elif kind == "tgi":
            lay = dict(tpot=TGI_TPOT, e2e=TGI_DUR, queue=TGI_DUR, gen_tokens=TGI_TOK,
                       input_len=TGI_TOK + (16000.0, 32000.0, 64000.0, 128000.0))
        else:
            lay = dict(ttft=V1_TTFT, itl=V1_ITL, tpot=V1_ITL, e2e=V1_LONG, queue=V1_LONG,
                       prefill=V1_LONG, decode=V1_LONG, n=V1_N, max_tokens=V1_TOK)
        self.h = {k: Hist(v) for k, v in lay.items()}
        # per-tick accounting for eBPF and the host
        self.tick_steps = 0
        self.tick_launches = 0
        self.tick_graphs = 0
        self.tick_host_s = 0.0
        self.tick_active_s = 0.0
        self.tick_gen = 0.0
        self.tick_prompt = 0.0
        self.mods = {}  # scenario knobs: name -> t -> value
        self.threads = []

    # ------------------------------------------------------------- gauges
    def n_running(self):
        return float(len(self.running))

    def n_waiting(self):
        return float(len(self.waiting))

    def kv_usage(self):
        return min(1.0, self.used_blocks / self.blocks)

    def used_tokens(self):
        return float(self.used_blocks * self.block)

    def evictable(self):
        return float(max(0, min(self.pool_tokens - self.used_tokens(), 0.15 * self.pool_tokens)))

    def hit_rate(self):
        return self.c["cached"] / self.c["prompt"] if self.c["prompt"] else 0.0

    def lora_running(self):
        names = sorted({r.lora for r in self.running if r.lora})
        return names

    def mod(self, name, default):
        f = self.mods.get(name)
        return default if f is None else f(self.t)

    # ------------------------------------------------------------- traffic
    def arrivals(self, t0, t1):
        rng = self.rng
        out = []
        for s in self.streams:
            if s.clients is not None:
                n = int(s.clients(t0)) - s.outstanding
                for j in range(max(0, n)):
                    out.append(self._make(s, t0 + (t1 - t0) * rng.random()))
                continue
            rate = s.rate(t0)
            if rate <= 0:
                continue
            t = t0
            while True:
                t += rng.expovariate(rate)
                if t >= t1:
                    break
                out.append(self._make(s, t))
        out.sort(key=lambda r: r.arr)
        self.pending.extend(out)
        self.c["arrived"] += len(out)

    def _make(self, s, t):
        rng = self.rng
        r = Req()
        r.arr = t
        r.stream = s
        s.outstanding += 1
        user = max(8, int(rng.gauss(*s.prompt))) if s.prompt[1] else int(s.prompt[0])
        if s.prompt_max:
            user = min(user, s.prompt_max)
        if s.personas:
            pid = rng.randrange(s.personas)
            plen = int(s.persona_len[0] + (s.persona_len[1] - s.persona_len[0]) * ((pid * 7919) % 97) / 96)
            r.persona = (s.tag, pid)
        else:
            plen = 0
            r.persona = None
        r.shared = plen if (plen and self.prefix_caching == "True") else 0
        r.prompt = user + plen
        r.out = max(1, min(s.cap_out, int(rng.expovariate(1.0 / s.out[0])) if s.out[1] < 0
                        else max(1, int(rng.gauss(*s.out)))))
        r.max_tokens = max(r.out, int(s.out[0] * 2))
        r.n = s.n
        r.lp = s.logprobs
        r.struct = rng.random() < s.structured
        r.lora = s.loras[rng.randrange(len(s.loras))] if s.loras else ""
        r.accept = s.accept
        r.pf_left = r.prompt - r.shared
        r.ctx = 0
        r.gen = 0
        r.genf = 0.0
        r.blocks = 0
        r.t_sched = None
        r.t_first = None
        r.computed = 0
        return r

    # ------------------------------------------------------------- KV
    def _own_blocks(self, r, ctx_tokens):
        own = max(0, ctx_tokens - r.shared)
        extra = (r.n - 1) * max(0, ctx_tokens - r.prompt)
        return -(-(own + extra) // self.block)

    def _hold_persona(self, r):
        if r.persona is None or not r.shared:
            return 0
        n = self.personas_held.get(r.persona, 0)
        self.personas_held[r.persona] = n + 1
        return -(-r.shared // self.block) if n == 0 else 0

    def _drop_persona(self, r):
        if r.persona is None or not r.shared:
            return 0
        n = self.personas_held.get(r.persona, 0) - 1
        if n <= 0:
            self.personas_held.pop(r.persona, None)
            return -(-r.shared // self.block)
        self.personas_held[r.persona] = n
        return 0

    def _admit(self):
        cap = self.mod("max_seqs", self.max_seqs)
        while self.waiting and len(self.running) < cap:
            r = self.waiting[0]
            need = self._own_blocks(r, r.prompt + r.gen) + 1
            pers = 0 if (r.persona is None or not r.shared or self.personas_held.get(r.persona)) \
                else -(-r.shared // self.block)
            if self.used_blocks + need + pers > self.blocks * 0.99:
                break
            self.waiting.pop(0)
            self.used_blocks += self._hold_persona(r)
            r.blocks = self._own_blocks(r, r.prompt + r.gen)
            self.used_blocks += r.blocks
            if r.t_sched is None:
                r.t_sched = self.t
                if "queue" in self.h:
                    self.h["queue"].add(self.t - r.arr)
                self.c["prompt"] += r.prompt
                self.c["cached"] += r.shared
                self.c["prefix_q"] += r.prompt
                self.c["prefix_h"] += r.shared
                if "n" in self.h:
                    self.h["n"].add(r.n)
                    self.h["max_tokens"].add(r.max_tokens)
            self.running.append(r)

    # ------------------------------------------------------------- one macro-step
    def run_until(self, t_end):
        node = self.node
        self.arrivals(self.t if self.t > t_end - node.slot_s else t_end - node.slot_s, t_end)
        guard = 0
        while self.t < t_end and guard < 400:
            guard += 1
            while self.pending and self.pending[0].arr <= self.t:
                self.waiting.append(self.pending.pop(0))
            self._admit()
            if not self.running:
                nxt = self.pending[0].arr if self.pending else t_end
                self._idle(self.t, min(nxt, t_end))
                self.t = min(nxt, t_end) if nxt > self.t else self.t + 1e-4
                continue
            self._step(t_end)
        self.running_gauge = len(self.running)

    def _idle(self, t0, t1):
        self.tick_host_s += 0.02 * (t1 - t0)

    def _step(self, t_end):
        node = self.node
        gpu = node.gpus[self.gpus[0]]
        share = max(0.05, node.host.share)
        dec = [r for r in self.running if r.pf_left == 0]
        pre = [r for r in self.running if r.pf_left > 0]
        seqs = sum(r.n for r in dec)
        spec = self.spec
        k_spec = spec["k"] if spec else 0
        # prefill tokens in this iteration
        if pre and not self.chunked:
            p_tok = 0
            batch_pre = []
            for r in pre:
                if p_tok + r.pf_left > max(self.max_batched, r.pf_left if not batch_pre else 0):
                    break
                p_tok += r.pf_left
                batch_pre.append(r)
            dec_now = []
            seqs_now = 0
        else:
            budget = max(0, self.max_batched - seqs * (1 + k_spec))
            p_tok = min(budget, sum(r.pf_left for r in pre))
            batch_pre = pre
            dec_now = dec
            seqs_now = seqs
        ctx_read = 0
        for r in dec_now:
            ctx_read += r.n * r.ctx
        pre_ctx = 0.0
        left = p_tok
        for r in batch_pre:
            take = min(left, r.pf_left)
            if take <= 0:
                break
            pre_ctx += take * (r.prompt - r.pf_left + take / 2)
            ctx_read += r.prompt - r.pf_left
            left -= take
        b = gpu.b
        slow_ts = gpu.slowdown_for(self.ctx)
        dec_tok = seqs_now * (1 + k_spec)
        kv_bytes = ctx_read * self.kvb * self.mod("kv_read_mult", 1.0)
        t_mem = (self.W + kv_bytes) / (b.bw * 0.82) * gpu.mem_speed()
        flops = 2 * self.P / self.tp * (dec_tok + p_tok) + 4 * self.L * self.hidden / self.tp * pre_ctx
        flops *= self.mod("flops_mult", 1.0)
        t_cmp = flops / (b.flops * 0.55) * gpu.speed()
        lp_seqs = sum(r.n for r in dec_now if r.lp)
        lp_k = max([r.lp for r in dec_now if r.lp] or [0])
        t_fix = (0.5e-3 + self.L * 12e-6) * gpu.speed() + lp_seqs * 0.25e-3 * (self.vocab / 128000)
        t_ar = 0.0
        nvl = 0.0
        if self.tp > 1:
            link = b.nvlink or b.pcie * 0.8
            bytes_ar = 2 * self.L * (dec_tok + p_tok) * self.hidden * 2 * 2 * (self.tp - 1) / self.tp
            t_ar = bytes_ar / link + 2 * self.L * 9e-6
            nvl = bytes_ar
        t_draft = 0.0
        if spec and seqs_now:
            t_draft = k_spec * (spec["draft_bytes"] / (b.bw * 0.7) + spec.get("draft_fix", 0.35e-3))
        t_gpu = (max(t_mem, t_cmp) + t_fix + t_ar + t_draft) * slow_ts
        # launches: CUDA graphs for decode-only batches up to the captured size
        use_graph = self.graphs and seqs_now <= self.mod("graph_max_bs", self.graph_max_bs) and \
            (p_tok == 0 or self.kind in ("vllm",))
        n_kern = self.L * 16 + 30
        if use_graph:
            launches = 30 + (self.L * 2 if p_tok else 0)
            t_launch = (0.08e-3 + launches * self.launch_us * 1e-6)
            graphs = 1 + (1 if spec else 0)
        else:
            launches = n_kern * (1 + (1 if spec and spec.get("kind") == "draft" else 0))
            t_launch = launches * self.launch_us * 4.0e-6  # eager: Python dispatch + launch per kernel
            graphs = 0
        jitter = self.mod("jitter_s", 0.0)
        t_launch = t_launch / share
        n_new = sum(1 for r in batch_pre if r.computed == 0)
        struct = sum(1 for r in dec_now if r.struct)
        t_host = (1.1e-3 + 9e-6 * len(self.running) + 25e-6 * n_new + 3e-6 * seqs_now
                  + 12e-6 * struct * (1 + k_spec) + 0.55e-3 * lp_seqs * lp_k / 20.0)
        # the engine thread preempted inside its launch/prepare path: serial, the GPU drains
        t_host = t_host * self.mod("host_mult", 1.0) / share + self.mod("host_extra_s", 0.0) + \
            jitter * (1 + launches / 500.0)
        span = max(t_gpu, t_launch)
        tau = span + t_host
        # how many identical iterations fit
        k = max(1, int((t_end - self.t) / tau) + 1)
        k = min(k, max(1, int(self.mod("macro_s", 0.1) / tau)))
        if batch_pre and p_tok:
            r0 = batch_pre[0]
            k = min(k, max(1, math.ceil(r0.pf_left / p_tok))) if self.chunked else 1
        growth = (seqs_now * (1 + (self._acc_mean(dec_now) if spec else 0))) / self.block
        free = self.blocks - self.used_blocks
        if growth > 0:
            k = min(k, max(1, int(free / max(growth, 1e-9))))
        k = max(1, min(k, 200))
        dur = k * tau
        t0 = self.t
        # GPU activity over the span of these iterations
        busy_frac = (t_gpu + (0.85 * (t_launch - t_gpu) if t_launch > t_gpu else 0.0)) / tau
        busy_frac = min(1.0, busy_frac)
        mem_part = t_mem * slow_ts / tau
        cmp_part = t_cmp * slow_ts / tau
        fix_part = (t_fix + t_ar + t_draft) * slow_ts / tau
        small = (0.04 if not use_graph else 0.3)
        if t_launch > t_gpu:
            sm = min(busy_frac, 0.06 * busy_frac + (max(t_mem, t_cmp) * slow_ts / tau) * 0.5)
            occ = sm * 0.25
        else:
            sm = min(busy_frac, max(mem_part, cmp_part) * (0.62 + 0.33 * min(1.0, (dec_tok + p_tok) / 96.0))
                     + fix_part * small + (busy_frac - max(mem_part, cmp_part) - fix_part) * 0.1)
            occ = sm * (0.25 + 0.3 * min(1.0, (dec_tok + p_tok) / 256.0))
        tensor = min(sm, (flops / (b.flops / gpu.speed())) * slow_ts / tau * 0.9 / slow_ts)
        dram = min(0.97, (self.W + kv_bytes) / b.bw / tau * (1.0 / slow_ts) * slow_ts)
        dram = min(dram, busy_frac)
        for g in self.gpus:
            node.gpus[g].deposit(t0, t0 + dur, busy_frac, max(0.0, sm), tensor, dram, self.ctx,
                                 occ=occ, pcie=2e6 + 1e4 * seqs_now / max(tau, 1e-3),
                                 nvl=nvl / tau)
        # advance requests
        self.t = t0 + dur
        itl_first = tau + self.stall
        self.stall = 0.0
        if not dec_now and batch_pre and not self.chunked:
            self.stall += dur  # decodes waited for a whole-prompt prefill
        gen_step = 0.0
        acc_tot = 0.0
        for r in dec_now:
            a = self._acc_exp(r)
            tok = k * (1 + a)
            r.genf += tok
            newgen = min(r.out, int(r.genf))
            d = newgen - r.gen
            r.gen = newgen
            r.ctx += d
            gen_step += d * r.n
            acc_tot += a * r.n
        if spec and seqs_now:
            self.c["drafts"] += k * seqs_now
            self.c["draft_tok"] += k * seqs_now * k_spec
            self.c["accepted"] += k * acc_tot
            self.accept_len_gauge = 1 + acc_tot / seqs_now
            self.accept_rate_gauge = acc_tot / seqs_now / k_spec
        if seqs_now:
            ih = self.h.get("itl")
            if ih is not None:
                ih.add(itl_first, seqs_now)
                if k > 1:
                    ih.add(tau, (k - 1) * seqs_now)
        self.c["gen"] += gen_step
        self.tick_gen += gen_step
        # prefill progress
        left = p_tok * (k if self.chunked else 1)
        for r in batch_pre:
            if left <= 0:
                break
            take = min(left, r.pf_left)
            r.pf_left -= take
            r.computed += take
            left -= take
            r.ctx = r.prompt - r.pf_left
            self.c["prefill_compute"] += take
            self.tick_prompt += take
            if r.pf_left == 0:
                r.ctx = r.prompt + r.gen
                if r.t_first is None:
                    r.t_first = self.t
                    if "ttft" in self.h:
                        self.h["ttft"].add(self.t - r.arr)
                    r.gen += 1
                    r.genf = float(r.gen)
                    r.ctx += 1
                    self.c["gen"] += r.n
                    self.tick_gen += r.n
        self.c["fwd_decode" if dec_now else "fwd_extend"] += t_gpu * k
        if p_tok:
            self.c["n_prefill"] += k
            self.c["prefill_s"] += dur * max(1, len(batch_pre))
        if dec_now:
            self.c["n_decode"] += k
            self.c["decode_s"] += dur * len(dec_now)
        self.tick_steps += k
        self.tick_launches += k * launches
        self.tick_graphs += k * graphs
        self.tick_host_s += k * (t_host + (t_launch if t_launch < t_gpu else t_launch * 0.9))
        self.tick_active_s += dur
        # KV growth and finishing
        keep = []
        for r in self.running:
            if r.pf_left == 0 and r.gen >= r.out:
                self._finish(r)
            else:
                keep.append(r)
        self.running = keep
        newb = [self._own_blocks(r, r.prompt + r.gen if r.pf_left == 0 else r.prompt)
                for r in self.running]
        pers = sum(-(-p[1] // self.block) for p in self._persona_sizes())
        while sum(newb) + pers > self.blocks and len(self.running) > 1:
            v = self.running.pop()
            newb.pop()
            v.blocks = 0
            v.pf_left = v.prompt + v.gen - v.shared
            v.ctx = 0
            self.c["preempt"] += 1
            self.c["retract_tok"] += v.prompt
            self.waiting.insert(0, v)
            if self.personas_held.get(v.persona):
                self._drop_persona(v)
            pers = sum(-(-p[1] // self.block) for p in self._persona_sizes())
        for r, nb in zip(self.running, newb):
            r.blocks = nb
        self.used_blocks = sum(newb) + pers

    def _persona_sizes(self):
        sizes = {}
        for r in self.running:
            if r.persona is not None and r.shared:
                sizes[r.persona] = r.shared
        return sorted(sizes.items(), key=lambda kv: (str(kv[0]), kv[1]))

    def _acc_exp(self, r):
        if not self.spec:
            return 0.0
        a = r.accept(self.t) if callable(r.accept) else r.accept
        a *= self.mod("accept_mult", 1.0)
        a = min(0.98, max(0.0, a))
        k = self.spec["k"]
        return a * (1 - a ** k) / (1 - a)

    def _acc_mean(self, dec):
        if not dec:
            return 0.0
        return sum(self._acc_exp(r) for r in dec) / len(dec)

    def _finish(self, r):
        r.stream.outstanding -= 1
        self.used_blocks -= r.blocks + self._drop_persona(r)
        e2e = self.t - r.arr
        self.c["finished"] += 1
        if r.gen >= r.max_tokens:
            self.c["fin_len"] += 1
        else:
            self.c["fin_stop"] += 1
        dec_t = max(1e-3, self.t - (r.t_first or self.t))
        h = self.h
        if "e2e" in h:
            h["e2e"].add(e2e)
        if "tpot" in h:
            h["tpot"].add(dec_t / max(1, r.gen - 1))
        if "prefill" in h:
            h["prefill"].add(max(0.0, (r.t_first or self.t) - (r.t_sched or r.arr)))
            h["decode"].add(dec_t)
        if "gen_tokens" in h:
            h["gen_tokens"].add(r.gen)
            h["input_len"].add(r.prompt)

    # ------------------------------------------------------------- per tick
    def take_tick(self, tick_s):
        out = dict(steps=self.tick_steps, launches=self.tick_launches, graphs=self.tick_graphs,
                   host_s=self.tick_host_s, active_s=self.tick_active_s)
        a = 0.3
        self.gen_rate = (1 - a) * self.gen_rate + a * self.tick_gen / tick_s
        self.pp_rate = self.tick_prompt / tick_s
        self.tg_rate = self.tick_gen / tick_s
        self.busy_slots = max(1.0, float(len(self.running)))
        self.tick_steps = self.tick_launches = self.tick_graphs = 0
        self.tick_host_s = self.tick_active_s = 0.0
        self.tick_gen = self.tick_prompt = 0.0
        return out
