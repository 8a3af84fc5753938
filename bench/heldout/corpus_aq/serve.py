"""Request-level serving engine: arrivals, continuous batching over a KV pool in blocks,
prefix caching, chunked (or whole-prompt) prefill, decode time from max(bytes, FLOPs) at the
clock, CUDA graphs vs eager launches, scheduler host time, logprobs, speculative decoding,
preemption.  Its counters and histograms are rendered as the engine's own /metrics text."""
from __future__ import annotations

import math

from .node import SIG

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
            20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
            240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0)
SG_E2E = SG_TTFT + (600.0, 1200.0, 1800.0, 2400.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1,
          0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0,
            30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0,
            700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)
TGI_DUR = tuple(round(0.0001 * 1.5 ** (i + 1), 10) for i in range(35))   # guessed (README)
TGI_TOK = tuple(float(2 ** i) for i in range(0, 16))                       # guessed (README)


class Hist:
    __slots__ = ("bounds", "counts", "sum", "count")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0.0] * len(bounds)
        self.sum = 0.0
        self.count = 0.0

    def obs(self, v, n=1):
        if n <= 0:
            return
        self.sum += v * n
        self.count += n
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.counts[i] += n
                return

    def lines(self, name, labels):
        out = []
        c = 0.0
        lab = labels + "," if labels else ""
        for b, k in zip(self.bounds, self.counts):
            c += k
            out.append(f'{name}_bucket{{{lab}le="{b}"}} {c}')
        out.append(f'{name}_bucket{{{lab}le="+Inf"}} {self.count}')
        out.append(f"{name}_sum{{{labels}}} {self.sum}" if labels else f"{name}_sum {self.sum}")
        out.append(f"{name}_count{{{labels}}} {self.count}" if labels else f"{name}_count {self.count}")
        return out


class Req:
    __slots__ = ("arr", "prompt", "cached", "out", "gen", "pre", "n", "lp", "cls", "t_first",
                 "t_admit", "blocks", "last")

    def __init__(self, arr, prompt, cached, out, n, lp, cls):
        self.arr = arr
        self.prompt = prompt
        self.cached = cached
        self.out = out
        self.gen = 0
        self.pre = cached
        self.n = n
        self.lp = lp
        self.cls = cls
        self.t_first = None
        self.t_admit = None
        self.blocks = 0
        self.last = None


class Klass:
    """A traffic class: rate(t) requests/s, prompt and output lengths, n, logprobs."""

    def __init__(self, rate, prompt, out, n=1, lp=0, prefix=0, spread=0.35):
        self.rate = rate
        self.prompt = prompt
        self.out = out
        self.n = n
        self.lp = lp
        self.prefix = prefix
        self.spread = spread


class Engine:
    def __init__(self, rng, kind, model, gpus, board, *, params_b, layers, kv_per_tok,
                 hidden, blocks, block_size=16, max_seqs=256, max_batched=8192, chunked=True,
                 graphs=True, prefix_caching=True, classes=(), spec_k=0, spec_alpha=None,
                 sched_ms=1.2, host_per_req_us=25.0, structured=False, url="",
                 mem_frac=0.9, tp=1, vocab=128256, eager_kernels=None):
        self.rng = rng
        self.kind = kind
        self.model = model
        self.gpus = tuple(gpus)
        self.b = board
        self.tp = tp
        self.params = params_b * 1e9
        self.wbytes = self.params * 2 / tp
        self.layers = layers
        self.kvpt = kv_per_tok / tp
        self.hidden = hidden
        self.blocks = blocks
        self.bs = block_size
        self.max_seqs = max_seqs
        self.max_batched = max_batched
        self.chunked = chunked
        self.graphs = graphs
        self.prefix_caching = prefix_caching
        self.classes = list(classes)
        self.spec_k = spec_k
        self.spec_alpha = spec_alpha          # callable t -> acceptance per token
        self.sched_ms = sched_ms
        self.host_per_req_us = host_per_req_us
        self.structured = structured
        self.url = url
        self.mem_frac = mem_frac
        self.vocab = vocab
        self.eager_kernels = eager_kernels or layers * 14
        self.waiting = []
        self.running = []
        self.used_blocks = 0
        self.prefix_blocks = {}
        self.injections = []                  # (t, Req-args)
        self.carry = 0.0
        self.carry_sig = None
        self.up = True
        # counters
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, drafts=0.0,
                      dtok=0.0, acc=0.0, pre_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      queries=0.0, rtok=0.0, fwd_pre=0.0, fwd_dec=0.0, reqs=0.0)
        if kind == "vllm":
            self.h = dict(ttft=Hist(VLLM_TTFT), itl=Hist(VLLM_ITL), e2e=Hist(VLLM_E2E),
                          queue=Hist(VLLM_E2E), n=Hist(VLLM_N), tpot=Hist(VLLM_ITL))
        elif kind == "sglang":
            self.h = dict(ttft=Hist(SG_TTFT), itl=Hist(SG_ITL), e2e=Hist(SG_E2E), queue=Hist(SG_QUEUE))
        elif kind == "tgi":
            self.h = dict(tpot=Hist(TGI_DUR), e2e=Hist(TGI_DUR), queue=Hist(TGI_DUR),
                          gen=Hist(TGI_TOK), inp=Hist(TGI_TOK), fwd_prefill=Hist(TGI_DUR),
                          fwd_decode=Hist(TGI_DUR))
        else:
            self.h = {}
        self.cpu_demand = 1.2
        self.launches = 0
        self.graph_launches = 0
        self.last_gen_rate = 0.0
        self.accept_now = None

    # ---------------------------------------------------------------- helpers
    def inject(self, t, prompt, out, n=1, lp=0, cls=-1):
        self.injections.append((t, prompt, out, n, lp, cls))
        self.injections.sort(key=lambda x: x[0])

    def _poisson(self, lam):
        if lam <= 0:
            return 0
        if lam > 30:
            return max(0, int(round(self.rng.gauss(lam, math.sqrt(lam)))))
        L = math.exp(-lam)
        k, p = 0, 1.0
        while True:
            p *= self.rng.random()
            if p <= L:
                return k
            k += 1

    def _need_blocks(self, r):
        own = r.prompt - (r.cached if self.prefix_caching else 0) + r.gen * r.n + r.n
        return -(-own // self.bs)

    def free_blocks(self):
        return self.blocks - self.used_blocks - sum(self.prefix_blocks.values())

    # ---------------------------------------------------------------- one slice
    def step(self, t, dt, clocks, avails, share, lshare, acts):
        rng = self.rng
        clock = min(clocks)
        avail = min(avails)
        share = min(share, lshare)
        for ci, k in enumerate(self.classes):
            lam = k.rate(t) * dt
            for _ in range(self._poisson(lam)):
                p = max(16, int(k.prompt * math.exp(rng.gauss(0, k.spread))))
                o = max(4, int(k.out * math.exp(rng.gauss(0, k.spread))))
                cached = min(k.prefix, p - 1) if (self.prefix_caching and k.prefix) else 0
                self.waiting.append(Req(t, p, cached, o, k.n, k.lp, ci))
                self.c["reqs"] += 1
        while self.injections and self.injections[0][0] <= t:
            _, p, o, n, lp, ci = self.injections.pop(0)
            self.waiting.append(Req(t, p, 0, o, n, lp, ci))
            self.c["reqs"] += 1
        self.launches = 0
        self.graph_launches = 0
        if not self.up:
            return
        u = 0.0
        if self.carry > 0:
            d = min(self.carry, dt)
            for a in acts:
                a.add(d, *self.carry_sig)
            self.carry -= d
            u = d
        gen_before = self.c["gen"]
        while u < dt - 1e-9:
            self._admit(t + u)
            if not self.running:
                break
            st, sig, k = self._one(t + u, dt - u, clock, avail, share)
            use = min(st * k, dt - u)
            for a in acts:
                a.add(use, *sig)
            if st * k > dt - u:
                self.carry = st * k - (dt - u)
                self.carry_sig = sig
            u += st * k
        self.last_gen_rate = (self.c["gen"] - gen_before) / dt
        busy = 1.0 if self.running or self.waiting else 0.15
        self.cpu_demand = 0.25 + busy * (1.0 + 0.6 * (self.tp - 1)) + 0.02 * len(self.waiting) ** 0.5

    def _admit(self, now):
        while self.waiting and len(self.running) < self.max_seqs:
            r = self.waiting[0]
            need = self._need_blocks(r)
            pref = 0
            if self.prefix_caching and r.cached and r.cls not in self.prefix_blocks:
                pref = -(-r.cached // self.bs)
            if need + pref > self.free_blocks() - max(1, int(0.01 * self.blocks)):
                # a request that can never fit is admitted alone (it will preempt others)
                if not self.running and need + pref <= self.blocks:
                    pass
                else:
                    break
            self.waiting.pop(0)
            if pref:
                self.prefix_blocks[r.cls] = pref
            r.blocks = need
            self.used_blocks += need
            if r.t_admit is None:
                r.t_admit = now
                self._queue_obs(now - r.arr)
            self.running.append(r)
            self.c["queries"] += r.prompt
            if r.pre == r.cached:
                self.c["cached"] += r.cached
                self.c["prompt"] += r.prompt

    def _queue_obs(self, q):
        h = self.h.get("queue")
        if h is not None:
            h.obs(q)

    def _one(self, now, room, clock, avail, share):
        """One engine step (or k identical decode steps): (seconds, activity, k)."""
        b = self.b
        dec = [r for r in self.running if r.pre >= r.prompt]
        pf = [r for r in self.running if r.pre < r.prompt]
        spec = self.spec_k if self.spec_k and dec else 0
        seqs = sum(r.n for r in dec)
        ptoks = 0
        plan = []
        if pf:
            if self.chunked:
                budget = max(0, self.max_batched - seqs * (1 + spec))
                for r in pf:
                    if budget <= 0:
                        break
                    take = min(budget, r.prompt - r.pre)
                    plan.append((r, take))
                    budget -= take
                    ptoks += take
            else:
                budget = max(self.max_batched, pf[0].prompt - pf[0].pre)
                for r in pf:
                    take = r.prompt - r.pre
                    if take > budget and plan:
                        break
                    plan.append((r, take))
                    budget -= take
                    ptoks += take
                dec = []  # whole-prompt prefill runs as its own step (TGI, chunking off)
                seqs = 0
                spec = 0
        ctx = sum((r.prompt + r.gen) * r.n for r in dec)
        # GPU time at this clock and availability (time-slicing with another tenant)
        cf = clock * avail
        t_mem = (self.wbytes + ctx * self.kvpt) / (b.bw * 0.82) / avail if (dec or ptoks) else 0
        flops_dec = 2 * self.params / self.tp * seqs * (1 + spec)
        att = sum(take * (r.pre + take / 2) for r, take in plan) * 4 * self.hidden * self.layers / self.tp
        flops_pf = 2 * self.params / self.tp * ptoks + att
        t_cmp = (flops_dec / 0.45 + flops_pf / 0.62) / (b.tflops * 1e12 * cf)
        t_gpu = max(t_mem, t_cmp) + (0.00035 if self.tp > 1 else 0.0) * (1 if dec or ptoks else 0)
        if spec:
            t_gpu += spec * (0.07 * t_mem + 0.0006)          # draft model steps
        lp_seqs = sum(r.n for r in dec if r.lp)
        lp_host = sum(r.n * (0.0004 + r.lp * 0.00004) for r in dec if r.lp)
        t_gpu += lp_seqs * self.vocab * 4e-10 / cf
        eff = max(0.05, share)
        sched = (self.sched_ms * 1e-3 + self.host_per_req_us * 1e-6 * len(self.running)
                 + (0.00002 * len(self.running) if self.structured else 0)) / eff + lp_host / eff
        if self.graphs and not ptoks:
            kernels = 24
            launch_host = 0.0006 / eff
            self.graph_launches_step = 1
        else:
            kernels = self.eager_kernels
            launch_host = kernels * 9e-6 / eff
            self.graph_launches_step = 0
        span = max(t_gpu, launch_host)
        st = sched * 0.6 + span
        fr_gpu = t_gpu / span if span > 0 else 0
        if ptoks and ptoks >= seqs:
            sg = SIG["attn"] if att > 2 * self.params / self.tp * ptoks else SIG["gemm"]
        else:
            sg = SIG["decode"]
        busy_frac = span / st
        sig = (busy_frac, sg[1] * fr_gpu * busy_frac + SIG["tiny"][1] * (1 - fr_gpu) * busy_frac,
               sg[2] * fr_gpu * busy_frac, sg[3] * fr_gpu * busy_frac,
               (max(sg[4], t_mem / span * 0.9) if span else 0) * fr_gpu * busy_frac)
        k = 1
        if not plan and not (self.waiting and len(self.running) < self.max_seqs
                             and self._need_blocks(self.waiting[0]) <= self.free_blocks()):
            k = max(1, int(room / st))
            if dec:
                k = max(1, min(k, min(r.out - r.gen for r in dec) // (1 + spec) + 1))
        # progress
        self.c["steps"] += k
        self.launches += k * (kernels if not self.graph_launches_step else 24)
        self.graph_launches += k * self.graph_launches_step
        end = now + st * k
        for r, take in plan:
            r.pre += take
            self.c["rtok"] += take
            if r.pre >= r.prompt:
                r.t_first = end
                r.last = end
                r.gen = 1
                self.c["gen"] += r.n
                self._first(end - r.arr)
        if plan:
            self.c["pre_s"] += st * len(plan)
            self.c["fwd_pre"] += st
            if "fwd_prefill" in self.h:
                self.h["fwd_prefill"].obs(st)
        acc_tokens = 0.0
        if spec:
            alpha = self.spec_alpha(now) if self.spec_alpha else 0.7
            acc_tokens = sum(alpha ** i for i in range(1, spec + 1))
            self.accept_now = alpha
        per_step = 1 + acc_tokens
        done = []
        for r in dec:
            steps = min(k, max(1, math.ceil((r.out - r.gen) / per_step)))
            add = min(r.out - r.gen, int(round(steps * per_step)))
            r.gen += add
            self.c["gen"] += add * r.n
            itl = self.h.get("itl")
            if itl is not None:
                itl.obs(st, steps * r.n)
            if spec:
                self.c["drafts"] += steps * r.n
                self.c["dtok"] += steps * r.n * spec
                self.c["acc"] += steps * r.n * acc_tokens
            if r.gen >= r.out:
                done.append(r)
        if dec:
            self.c["dec_s"] += st * k * len(dec)
            self.c["fwd_dec"] += st * k
            if "fwd_decode" in self.h:
                self.h["fwd_decode"].obs(st, k)
        self.c["fwd_s"] += t_gpu * k
        for r in done:
            self._finish(r, end)
        # KV growth and preemption (recompute: back to the waiting queue's head)
        self.used_blocks = 0
        for r in self.running:
            r.blocks = self._need_blocks(r)
            self.used_blocks += r.blocks
        while self.free_blocks() < 0 and len(self.running) > 1:
            victim = self.running.pop()
            self.used_blocks -= victim.blocks
            victim.pre = victim.cached
            victim.prompt += victim.gen
            victim.out -= victim.gen
            victim.gen = 0
            self.waiting.insert(0, victim)
            self.c["pre"] += 1
        return st, sig, k

    def _first(self, ttft):
        h = self.h.get("ttft")
        if h is not None:
            h.obs(ttft)

    def _finish(self, r, end):
        self.running.remove(r)
        self.used_blocks -= r.blocks
        if self.prefix_caching and r.cls in self.prefix_blocks and not any(
                x.cls == r.cls for x in self.running):
            pass  # stays cached (evictable), counted as free by the engines: drop it
        if r.cls in self.prefix_blocks and not any(x.cls == r.cls for x in self.running):
            del self.prefix_blocks[r.cls]
        self.c["fin"] += 1
        e2e = end - r.arr
        if "e2e" in self.h:
            self.h["e2e"].obs(e2e)
        if self.kind == "vllm":
            self.h["n"].obs(r.n)
            if r.out > 1 and r.t_first is not None:
                self.h["tpot"].obs((end - r.t_first) / (r.out - 1))
        if self.kind == "tgi":
            self.h["gen"].obs(r.out)
            self.h["inp"].obs(r.prompt)
            if r.out > 1 and r.t_first is not None:
                self.h["tpot"].obs((end - r.t_first) / max(1, r.out - 1))

    # ---------------------------------------------------------------- views
    def kv_usage(self):
        return min(1.0, (self.used_blocks + sum(self.prefix_blocks.values())) / self.blocks)

    def mem_bytes(self):
        return int(self.b.mem_bytes * self.mem_frac + 0.45 * (1 << 30))

    def render(self):
        m = self.model
        c = self.c
        run = float(len(self.running))
        wait = float(len(self.waiting))
        L = []
        if self.kind == "vllm":
            lab = f'engine="0",model_name="{m}"'
            def g(n, v, t="gauge"):
                L.append(f"# TYPE vllm:{n} {t}")
                L.append(f"vllm:{n}{{{lab}}} {float(v)}")
            g("num_requests_running", run)
            g("num_requests_waiting", wait)
            L.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
            cap = float(sum(1 for r in self.waiting if r.t_admit is not None or True)) if self.waiting else 0.0
            L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="capacity"}} {cap}')
            L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="deferred"}} 0.0')
            g("kv_cache_usage_perc", self.kv_usage())
            g("prefix_cache_queries_total", c["queries"], "counter")
            g("prefix_cache_hits_total", c["cached"], "counter")
            g("num_preemptions_total", c["pre"], "counter")
            g("prompt_tokens_total", c["prompt"], "counter")
            g("prompt_tokens_cached_total", c["cached"], "counter")
            g("generation_tokens_total", c["gen"], "counter")
            L.append("# TYPE vllm:request_success_total counter")
            L.append(f'vllm:request_success_total{{{lab},finished_reason="stop"}} {float(int(c["fin"] * 0.8))}')
            L.append(f'vllm:request_success_total{{{lab},finished_reason="length"}} {float(c["fin"] - int(c["fin"] * 0.8))}')
            if self.spec_k:
                g("spec_decode_num_drafts_total", round(c["drafts"]), "counter")
                g("spec_decode_num_draft_tokens_total", round(c["dtok"]), "counter")
                g("spec_decode_num_accepted_tokens_total", round(c["acc"]), "counter")
            for name, key in (("time_to_first_token_seconds", "ttft"), ("inter_token_latency_seconds", "itl"),
                              ("e2e_request_latency_seconds", "e2e"), ("request_queue_time_seconds", "queue"),
                              ("request_time_per_output_token_seconds", "tpot"), ("request_params_n", "n")):
                L.append(f"# TYPE vllm:{name} histogram")
                L += self.h[key].lines("vllm:" + name, lab)
            L.append("# TYPE vllm:request_prefill_time_seconds histogram")
            L.append(f'vllm:request_prefill_time_seconds_bucket{{{lab},le="+Inf"}} {c["fin"]}')
            L.append(f"vllm:request_prefill_time_seconds_sum{{{lab}}} {c['pre_s']}")
            L.append(f"vllm:request_prefill_time_seconds_count{{{lab}}} {c['fin']}")
            L.append("# TYPE vllm:request_decode_time_seconds histogram")
            L.append(f'vllm:request_decode_time_seconds_bucket{{{lab},le="+Inf"}} {c["fin"]}')
            L.append(f"vllm:request_decode_time_seconds_sum{{{lab}}} {c['dec_s']}")
            L.append(f"vllm:request_decode_time_seconds_count{{{lab}}} {c['fin']}")
            L.append("# TYPE vllm:cache_config_info gauge")
            L.append(f'vllm:cache_config_info{{block_size="{self.bs}",cache_dtype="auto",engine="0",'
                     f'enable_prefix_caching="{self.prefix_caching}",gpu_memory_utilization="{self.mem_frac}",'
                     f'kv_cache_size_tokens="{self.blocks * self.bs}",num_cpu_blocks="None",'
                     f'num_gpu_blocks="{self.blocks}",sliding_window="None"}} 1.0')
        elif self.kind == "sglang":
            lab = f'engine_type="unified",model_name="{m}",moe_ep_rank="0",pp_rank="0",tp_rank="0",dp_rank="0"'
            tl = f'model_name="{m}"'
            pool = self.blocks * self.bs
            used = (self.used_blocks + sum(self.prefix_blocks.values())) * self.bs
            def g(n, v, t="gauge", lb=lab):
                L.append(f"# TYPE sglang:{n} {t}")
                L.append(f"sglang:{n}{{{lb}}} {float(v)}")
            g("num_running_reqs", run)
            g("num_queue_reqs", wait)
            g("num_used_tokens", used)
            g("token_usage", self.kv_usage())
            g("gen_throughput", round(self.last_gen_rate, 2))
            g("max_total_num_tokens", pool)
            g("kv_used_tokens", used)
            g("kv_available_tokens", pool - used)
            g("kv_evictable_tokens", 0.0)
            q = c["queries"]
            g("cache_hit_rate", c["cached"] / q if q else 0.0)
            if self.spec_k:
                a = self.accept_now or 0.0
                acc = sum(a ** i for i in range(1, self.spec_k + 1))
                g("spec_accept_length", 1 + acc)
                g("spec_accept_rate", acc / self.spec_k)
            else:
                g("spec_accept_length", 0.0)
                g("spec_accept_rate", 0.0)
            g("num_retracted_requests_total", c["pre"], "counter")
            L.append("# TYPE sglang:realtime_tokens counter")
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="prefill_compute"}} {float(c["rtok"])}')
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="prefill_cache"}} {float(c["cached"])}')
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="decode"}} {float(c["gen"])}')
            L.append("# TYPE sglang:forward_execution_seconds counter")
            L.append(f'sglang:forward_execution_seconds_total{{{lab},category="forward"}} {c["fwd_s"]}')
            g("prompt_tokens_total", c["prompt"], "counter", tl)
            g("generation_tokens_total", c["gen"], "counter", tl)
            g("num_requests_total", c["fin"], "counter", tl)
            L.append("# TYPE sglang:cached_tokens counter")
            L.append(f'sglang:cached_tokens_total{{{tl},cache_source="device"}} {float(c["cached"])}')
            for name, key in (("time_to_first_token_seconds", "ttft"), ("inter_token_latency_seconds", "itl"),
                              ("e2e_request_latency_seconds", "e2e")):
                L.append(f"# TYPE sglang:{name} histogram")
                L += self.h[key].lines("sglang:" + name, tl)
            L.append("# TYPE sglang:queue_time_seconds histogram")
            L += self.h["queue"].lines("sglang:queue_time_seconds", lab)
        elif self.kind == "tgi":
            def g(n, v, t="gauge"):
                L.append(f"# TYPE tgi_{n} {t}")
                L.append(f"tgi_{n} {float(v) if t == 'gauge' else int(v)}")
            g("batch_current_size", run)
            g("batch_current_max_tokens", sum(r.prompt + r.out for r in self.running))
            g("queue_size", wait)
            g("request_count", c["reqs"], "counter")
            g("request_success", c["fin"], "counter")
            for name, key in (("request_generated_tokens", "gen"), ("request_input_length", "inp"),
                              ("request_mean_time_per_token_duration", "tpot"),
                              ("request_duration", "e2e"), ("request_queue_duration", "queue")):
                L.append(f"# TYPE tgi_{name} histogram")
                L += self.h[key].lines("tgi_" + name, "")
            L.append("# TYPE tgi_batch_forward_duration histogram")
            L += self.h["fwd_prefill"].lines("tgi_batch_forward_duration", 'method="prefill"')
            L += self.h["fwd_decode"].lines("tgi_batch_forward_duration", 'method="decode"')
        else:  # llama.cpp
            def g(n, v, t="counter"):
                L.append(f"# TYPE llamacpp:{n} {t}")
                L.append(f"llamacpp:{n} {round(float(v), 6)}")
            g("prompt_tokens_total", c["prompt"] - c["cached"])
            g("prompt_tokens_cached_total", c["cached"])
            g("prompt_seconds_total", c["fwd_pre"])
            g("tokens_predicted_total", c["gen"])
            g("tokens_predicted_seconds_total", c["fwd_dec"])
            g("n_decode_total", c["steps"])
            if self.spec_k:
                g("spec_decode_num_draft_tokens_total", round(c["dtok"]))
                g("spec_decode_num_accepted_tokens_total", round(c["acc"]))
                g("spec_decode_num_drafts_total", round(c["drafts"]))
            g("prompt_tokens_seconds", 0.0, "gauge")
            g("predicted_tokens_seconds", round(self.last_gen_rate, 3), "gauge")
            g("requests_processing", run, "gauge")
            g("requests_deferred", wait, "gauge")
        return "\n".join(L) + "\n"
