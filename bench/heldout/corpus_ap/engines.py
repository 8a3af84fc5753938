"""Request-level serving engines: arrivals, continuous batching over a KV pool in blocks, prefix
caching, chunked or whole-prompt prefill, step time from max(weights + KV bytes, FLOPs) at the
clock's speed, CUDA graphs vs eager launches, scheduler host time, logprobs work, speculative
decoding, preemption; and each engine's /metrics text with its real names and bucket layouts."""
from __future__ import annotations

import bisect
import heapq
from collections import deque

from corpus_ap.hw import DT
from corpus_ap.jobs import kernel_time

# bucket layouts, from data/metrics (vLLM 0.32, SGLang dp2 page); TGI's and vLLM V0's are guesses
V1_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
           20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
V1_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
          40.0, 80.0)
V1_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
          480.0, 960.0, 1920.0, 7680.0)
V1_N = (1.0, 2.0, 5.0, 10.0, 20.0)
V1_MAXTOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
V0_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)
V0_TPOT = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
SG_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0)
SG_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2,
          0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SG_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0,
          400.0, 600.0, 1200.0, 1800.0, 2400.0)
SG_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0,
            40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0,
            900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)
TGI_DUR = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0)
TGI_TOK = (1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0)


class Hist:
    __slots__ = ("b", "c", "n", "s")

    def __init__(self, bounds):
        self.b = bounds
        self.c = [0.0] * (len(bounds) + 1)
        self.n = 0.0
        self.s = 0.0

    def obs(self, v, k=1.0):
        self.c[bisect.bisect_left(self.b, v)] += k
        self.n += k
        self.s += v * k

    def lines(self, name, labels):
        out = [f"# TYPE {name} histogram"]
        acc = 0.0
        lab = labels + "," if labels else ""
        for bound, c in zip(self.b, self.c):
            acc += c
            out.append(f'{name}_bucket{{{lab}le="{float(bound)}"}} {acc}')
        out.append(f'{name}_bucket{{{lab}le="+Inf"}} {self.n}')
        out.append(f"{name}_count{{{labels}}} {self.n}" if labels else f"{name}_count {self.n}")
        out.append(f"{name}_sum{{{labels}}} {self.s}" if labels else f"{name}_sum {self.s}")
        return out


class Model:
    def __init__(self, name, params, layers, hidden, kv_heads, head_dim, dtype_bytes=2, vocab=128000,
                 wbytes=None):
        self.name, self.params, self.layers, self.hidden = name, params, layers, hidden
        self.kv_tok = 2 * layers * kv_heads * head_dim * 2
        self.wbytes = wbytes or params * dtype_bytes
        self.vocab = vocab


class Serve:
    """One engine on ``gpus`` (tensor parallel across them)."""

    def __init__(self, rng, kind, gpus, spec, model, *, pool_frac=0.9, block=16, max_seqs=256,
                 budget=8192, chunked=True, graphs=True, prefix_hit=0.0, prefix_len=0,
                 rate=lambda t: 2.0, mix=None, spec_dec=None, sched_us=1500, v0=False,
                 pool_tokens=None, url="", pids=(), slots=None):
        self.rng, self.kind, self.gpus, self.spec, self.mdl = rng, kind, gpus, spec, model
        tp = len(gpus)
        self.tp = tp
        self.wg = model.wbytes / tp
        self.kvb = model.kv_tok / tp  # per GPU per token
        if pool_tokens is None:
            free = spec.mem * pool_frac - self.wg - 3 * 2**30
            pool_tokens = int(free / self.kvb)
        self.block = block
        self.blocks = max(64, pool_tokens // block)
        self.pool = self.blocks * block
        self.pool_frac = pool_frac
        self.max_seqs, self.budget, self.chunked, self.graphs = max_seqs, budget, chunked, graphs
        self.prefix_hit, self.prefix_len = prefix_hit, prefix_len
        self.rate, self.mix, self.sd = rate, mix, spec_dec
        self.sched_us, self.v0 = sched_us, v0
        self.slots = slots
        self.t = 0.0
        self.mods = {}
        self.next_arr = None
        self.waiting: deque = deque()
        self.running = []  # requests decoding
        self.prefilling = []  # admitted, prompt in progress
        self.heap = []
        self._seq = 0
        self.G = 0.0  # decode progress per sequence (tokens)
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, fin_len=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, flops=0.0, rbytes=0.0, wbytes=0.0, pf_s=0.0, dec_s=0.0,
                      fw_dec=0.0, fw_ext=0.0, steps=0.0, pq=0.0, ph=0.0, pf_comp=0.0, pf_cache=0.0)
        self.h = {}
        self.capacity_wait = 0
        self.last_tok = 0.0
        self.demand = 1.0
        self.launch_demand = 0.5
        self.launches = 0.0
        self.graph_launches = 0.0
        self.tps = 0.0
        self.used_tokens = 0.0
        self.evictable = 0.0
        self.accept_len = None
        self.url, self.pids = url, pids
        self.threads = 4
        self.pcie = [0.0] * tp
        self.nvlink = [0.0] * tp
        b = self._bounds()
        for k, v in b.items():
            self.h[k] = Hist(v)

    def _bounds(self):
        if self.kind == "vllm" and self.v0:
            return dict(ttft=V0_TTFT, itl=V0_TPOT, e2e=V1_E2E)
        if self.kind == "vllm":
            return dict(ttft=V1_TTFT, itl=V1_ITL, tpot=V1_ITL, e2e=V1_E2E, queue=V1_E2E, pft=V1_E2E,
                        dect=V1_E2E, n=V1_N, maxtok=V1_MAXTOK, maxgen=V1_MAXTOK)
        if self.kind == "sglang":
            return dict(ttft=SG_TTFT, itl=SG_ITL, e2e=SG_E2E, queue=SG_QUEUE)
        if self.kind == "tgi":
            return dict(tpot=TGI_DUR, e2e=TGI_DUR, queue=TGI_DUR, gen=TGI_TOK, inp=TGI_TOK,
                        fwp=TGI_DUR, fwd=TGI_DUR)
        return {}

    def m(self, name, t, default=1.0):
        fn = self.mods.get(name)
        return fn(t) if fn else default

    def _gap(self, t):
        r = max(1e-3, self.rate(t) * self.m("rate", t))
        return t + self.rng.expovariate(r)

    def _new(self, t):
        d = self.mix(t, self.rng)
        extra = self.mods.get("inject")
        if extra:
            e = extra(t, self.rng)
            if e:
                d = e
        p = int(d["prompt"])
        cached = 0
        if self.prefix_len and self.rng.random() < self.prefix_hit * self.m("hit", t):
            cached = min(p - 1, (self.prefix_len // self.block) * self.block)
        return dict(arr=t, p=p, cached=cached, out=int(d["out"]), n=d.get("n", 1), lp=d.get("lp", 0),
                    done=cached, g0=0.0, tf=None, ts=None, maxtok=d.get("maxtok", d["out"]),
                    tag=d.get("tag", ""))

    def kv_used(self):
        u = 0.0
        for r in self.running:
            u += r["p"] + r["n"] * (self.G - r["g0"])
        for r in self.prefilling:
            u += r["done"]
        return u

    def advance(self, until, env, bins):
        rng = self.rng
        g0 = self.gpus[0]
        if self.next_arr is None:
            self.next_arr = self._gap(0.0)
        while self.t < until:
            t = self.t
            while self.next_arr <= t:
                self.waiting.append(self._new(self.next_arr))
                self.next_arr = self._gap(self.next_arr)
            if not self.running and not self.prefilling and not self.waiting:
                self.t = min(self.next_arr, until)
                self.demand = 0.35
                self.launch_demand = 0.05
                continue
            used = self.kv_used()
            free = self.pool - used
            # admission (vLLM V1 / SGLang / llama.cpp chunk; TGI and V0 whole prompts)
            cap = self.slots or self.max_seqs
            blocked = 0
            while self.waiting and len(self.running) + len(self.prefilling) < cap:
                r = self.waiting[0]
                need = r["p"] + 32 * r["n"]
                if need > free:
                    blocked = len(self.waiting)
                    break
                self.waiting.popleft()
                r["ts"] = t
                free -= need
                self.prefilling.append(r)
                self.c["prompt"] += r["p"]
                self.c["cached"] += r["cached"]
                self.c["pq"] += r["p"]
                self.c["ph"] += r["cached"]
                if "queue" in self.h:
                    self.h["queue"].obs(t - r["arr"])
                if "n" in self.h:
                    self.h["n"].obs(r["n"])
                    self.h["maxtok"].obs(r["maxtok"])
                    self.h["maxgen"].obs(r["maxtok"])
            self.capacity_wait = blocked
            k = self.sd["k"] if self.sd else 0
            dec_seqs = sum(r["n"] for r in self.running)
            pf_tokens = 0
            pf_ctx = 0.0
            pf_reqs = []
            prefill_only = False
            if self.prefilling:
                if self.chunked:
                    room = max(0, self.budget - dec_seqs * (k + 1))
                    for r in self.prefilling:
                        if room <= 0:
                            break
                        take = min(room, r["p"] - r["done"])
                        pf_reqs.append((r, take))
                        pf_tokens += take
                        pf_ctx += take * (r["done"] + take / 2)
                        room -= take
                else:
                    room = self.budget
                    prefill_only = True
                    for r in self.prefilling:
                        take = r["p"] - r["done"]
                        if pf_reqs and take > room:
                            break
                        pf_reqs.append((r, take))
                        pf_tokens += take
                        pf_ctx += take * (r["done"] + take / 2)
                        room -= take
            decoding = not prefill_only and dec_seqs > 0
            spec = self.spec
            rr = env.r(g0)
            mdl = self.mdl
            ntok = pf_tokens + (dec_seqs * (k + 1) if decoding else 0)
            flops = 2.0 * mdl.params / self.tp * ntok + 4.0 * mdl.layers * mdl.hidden / self.tp * (
                pf_ctx + (used * (k + 1) if decoding else 0))
            kvread = (used if decoding else 0) * self.kvb + pf_ctx / max(pf_tokens, 1) * self.kvb * 0.2
            nbytes = self.wg * (1 + (0.12 * k if self.sd and self.sd.get("method") == "draft" else 0)) + kvread
            kt, sm, ten, dram = kernel_time(spec, rr, flops, nbytes, 0.92)
            misc = (0.0006 + 0.00002 * dec_seqs) / max(rr, 0.3)  # sampling, norms: clock-bound
            lp_work = sum(r["n"] * r["lp"] for r in self.running) if decoding else 0
            lp_gpu = 0.00006 * lp_work * self.m("lp_cost", t)
            if self.sd and decoding:
                misc += self.sd.get("draft_s", 0.0015) / max(rr, 0.3)
            gpu = (kt + misc + lp_gpu) / max(env.avail(g0), 0.05)
            nker = mdl.layers * 14
            gl, gc = env.grant_launch, env.grant
            if self.graphs and not pf_tokens:
                launch = 25e-6 / max(gl, 0.02)
            else:
                launch = nker * 4.5e-6 / max(gl, 0.02)
            sched = (self.sched_us * 1e-6 + 15e-6 * (len(self.running) + len(self.prefilling))
                     + 0.00009 * lp_work * self.m("lp_cost", t)) / max(gc, 0.02)
            if self.sd and self.sd.get("method") == "ngram":
                sched += 8e-6 * dec_seqs * k / max(gc, 0.02)
            it = max(gpu, launch) + 0.35 * sched + max(0.0, 0.65 * sched - gpu)
            it *= 1 + rng.gauss(0, 0.02)
            # how many identical iterations until something changes
            reps = 1
            if not pf_reqs and decoding:
                horizon = min(self.next_arr, (int(t / DT) + 1) * DT, until + DT) - t
                if self.heap:
                    acc = self._acc(t, k) if self.sd else 1.0
                    horizon = min(horizon, max(0.0, (self.heap[0][0] - self.G) / acc * it))
                reps = max(1, int(horizon / it))
            span = it * reps
            b = gpu / it
            tp_share = 1.0
            for g in self.gpus:
                bins.dep(g, t, t + span, min(1.0, b), min(1.0, b) * sm * 0.97, min(1.0, b) * ten,
                         min(1.0, b) * dram)
            self.c["flops"] += flops * reps
            self.c["rbytes"] += nbytes * reps
            self.c["wbytes"] += (ntok * self.kvb) * reps
            self.c["steps"] += reps
            if self.graphs and not pf_tokens:
                self.graph_launches += reps
            else:
                self.launches += reps * nker
            for i in range(len(self.pcie)):
                self.nvlink[i] += (2 * mdl.hidden * ntok * 2 * mdl.layers * reps) if self.tp > 1 else 0
                self.pcie[i] += 2000 * reps
            tend = t + span
            if pf_tokens:
                (self.c["fw_ext"]) += span * (pf_tokens / max(ntok, 1))
            if decoding:
                self.c["fw_dec"] += span * (1 - pf_tokens / max(ntok, 1))
            # decode progress
            if decoding:
                acc = self._acc(t, k) if self.sd else 1.0
                self.G += acc * reps
                toks = acc * reps * dec_seqs
                self.c["gen"] += toks
                first_gap = (t + it - self.last_tok) if self.last_tok else it
                if "itl" in self.h:
                    self.h["itl"].obs(max(it, first_gap), dec_seqs)
                    if reps > 1:
                        self.h["itl"].obs(it, dec_seqs * (reps - 1))
                self.last_tok = tend
                if self.sd:
                    self.c["drafts"] += reps * dec_seqs
                    self.c["dtok"] += reps * dec_seqs * k
                    self.c["acc"] += reps * dec_seqs * (acc - 1)
                    self.accept_len = acc
                while self.heap and self.heap[0][0] <= self.G + 1e-9:
                    _, _, r = heapq.heappop(self.heap)
                    if r.get("gone"):
                        continue
                    self._finish(r, tend)
            elif not self.running:
                self.last_tok = 0.0
            # prefill progress
            for r, take in pf_reqs:
                r["done"] += take
                self.c["pf_comp"] += take
                if r["done"] >= r["p"]:
                    self.prefilling.remove(r)
                    r["tf"] = tend
                    r["g0"] = self.G
                    self.c["gen"] += r["n"]
                    if "ttft" in self.h:
                        self.h["ttft"].obs(tend - r["arr"])
                    if "pft" in self.h:
                        self.h["pft"].obs(tend - r["ts"])
                    self.c["pf_s"] += tend - r["ts"]
                    self.running.append(r)
                    self._seq += 1  # ties break by admission order (not by id(): addresses vary run to run)
                    heapq.heappush(self.heap, (self.G + r["out"], self._seq, r))
            # preemption when the pool runs out
            while self.running and self.kv_used() > self.pool:
                victim = self.running.pop()
                victim["gone"] = True
                done_tok = int(self.G - victim["g0"])
                nr = dict(victim)
                nr.pop("gone", None)
                nr["p"] = victim["p"] + done_tok
                nr["out"] = max(1, victim["out"] - done_tok)
                nr["done"] = 0
                self.waiting.appendleft(nr)
                self.c["pre"] += 1
                self.c["retr"] += 1
                self.c["retr_tok"] += victim["p"]
            self.t = tend
            # CPU demand: scheduler / API server / detokenizer threads
            busy_host = min(1.0, (sched + (launch if not self.graphs or pf_tokens else 0)) / max(it, 1e-6))
            self.launch_demand = min(1.0, 0.1 + busy_host)
            self.demand = 0.5 + self.launch_demand + 0.00002 * (self.rate(t) * 400) + 0.15 * len(self.gpus)
        self.used_tokens = self.kv_used()

    def _acc(self, t, k):
        a = self.sd["alpha"](t)
        return (1 - a ** (k + 1)) / (1 - a) if a < 0.999 else k + 1.0

    def _finish(self, r, t):
        if r in self.running:
            self.running.remove(r)
        self.c["fin"] += 1
        self.c["fin_len"] += r["out"] >= r["maxtok"]
        e2e = t - r["arr"]
        dec = t - (r["tf"] or t)
        self.c["dec_s"] += dec
        if "e2e" in self.h:
            self.h["e2e"].obs(e2e)
        if "tpot" in self.h:
            self.h["tpot"].obs(dec / max(1, r["out"] - 1))
        if "dect" in self.h:
            self.h["dect"].obs(dec)
        if "gen" in self.h:
            self.h["gen"].obs(r["out"] * r["n"])
            self.h["inp"].obs(r["p"])
        if self.kind == "tgi":
            self.h["queue"].obs(r["ts"] - r["arr"])

    # ------------------------------------------------------------------ /metrics text
    def render(self, t, model_name):
        c, h = self.c, self.h
        run = float(len(self.running) + len(self.prefilling))
        wait = float(len(self.waiting))
        used = self.kv_used()
        usage = min(1.0, used / self.pool)
        out = []
        if self.kind == "vllm":
            L = f'engine="0",model_name="{model_name}"' if not self.v0 else f'model_name="{model_name}"'

            def g(name, v, typ="gauge", lab=L):
                out.append(f"# TYPE vllm:{name} {typ}")
                out.append(f"vllm:{name}{{{lab}}} {float(v)}")
            g("num_requests_running", run)
            g("num_requests_waiting", wait)
            if self.v0:
                g("num_requests_swapped", 0.0)
                g("gpu_cache_usage_perc", usage)
                g("cpu_cache_usage_perc", 0.0)
                g("num_preemptions_total", c["pre"], "counter")
                g("prompt_tokens_total", c["prompt"], "counter")
                g("generation_tokens_total", c["gen"], "counter")
                out.append("# TYPE vllm:request_success_total counter")
                out.append(f'vllm:request_success_total{{finished_reason="stop",{L}}} {c["fin"] - c["fin_len"]}')
                out.append(f'vllm:request_success_total{{finished_reason="length",{L}}} {c["fin_len"]}')
                out += h["ttft"].lines("vllm:time_to_first_token_seconds", L)
                out += h["itl"].lines("vllm:time_per_output_token_seconds", L)
                out += h["e2e"].lines("vllm:e2e_request_latency_seconds", L)
                out.append("# TYPE vllm:cache_config_info gauge")
                out.append(f'vllm:cache_config_info{{block_size="{self.block}",cache_dtype="auto",'
                           f'gpu_memory_utilization="{self.pool_frac}",num_cpu_blocks="2048",'
                           f'num_gpu_blocks="{self.blocks}",sliding_window="None"}} 1.0')
                return "\n".join(out) + "\n"
            out.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
            out.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="capacity"}} {float(self.capacity_wait)}')
            out.append(f'vllm:num_requests_waiting_by_reason{{{L},reason="deferred"}} {float(wait - self.capacity_wait)}')
            g("kv_cache_usage_perc", usage)
            g("prefix_cache_queries_total", c["pq"], "counter")
            g("prefix_cache_hits_total", c["ph"], "counter")
            g("num_preemptions_total", c["pre"], "counter")
            g("prompt_tokens_total", c["prompt"], "counter")
            g("prompt_tokens_cached_total", c["cached"], "counter")
            g("generation_tokens_total", c["gen"], "counter")
            g("estimated_flops_per_gpu_total", c["flops"], "counter")
            g("estimated_read_bytes_per_gpu_total", c["rbytes"], "counter")
            g("estimated_write_bytes_per_gpu_total", c["wbytes"], "counter")
            out.append("# TYPE vllm:request_success_total counter")
            for reason, v in (("stop", c["fin"] - c["fin_len"]), ("length", c["fin_len"]), ("abort", 0.0)):
                out.append(f'vllm:request_success_total{{{L},finished_reason="{reason}"}} {float(v)}')
            if self.sd:
                g("spec_decode_num_drafts_total", c["drafts"], "counter")
                g("spec_decode_num_draft_tokens_total", c["dtok"], "counter")
                g("spec_decode_num_accepted_tokens_total", c["acc"], "counter")
            for key, fam in (("ttft", "time_to_first_token_seconds"), ("itl", "inter_token_latency_seconds"),
                             ("tpot", "request_time_per_output_token_seconds"),
                             ("e2e", "e2e_request_latency_seconds"), ("queue", "request_queue_time_seconds"),
                             ("pft", "request_prefill_time_seconds"), ("dect", "request_decode_time_seconds"),
                             ("n", "request_params_n"), ("maxtok", "request_params_max_tokens"),
                             ("maxgen", "request_max_num_generation_tokens")):
                out += h[key].lines("vllm:" + fam, L)
            out.append("# TYPE vllm:cache_config_info gauge")
            out.append(f'vllm:cache_config_info{{block_size="{self.block}",cache_dtype="auto",'
                       f'enable_prefix_caching="{bool(self.prefix_len)}",engine="0",'
                       f'gpu_memory_utilization="{self.pool_frac}",'
                       f'kv_cache_memory_bytes="{int(self.pool * self.kvb)}",kv_cache_size_tokens="{self.pool}",'
                       f'num_cpu_blocks="None",num_gpu_blocks="{self.blocks}",sliding_window="None"}} 1.0')
        elif self.kind == "sglang":
            L = f'model_name="{model_name}"'
            S = f'engine_type="unified",model_name="{model_name}",moe_ep_rank="0",pp_rank="0",tp_rank="0",dp_rank="0"'

            def g(name, v, typ="gauge", lab=S):
                out.append(f"# TYPE sglang:{name} {typ}")
                out.append(f"sglang:{name}{{{lab}}} {float(v)}")
            evict = min(self.pool - used, self.evictable)
            g("num_running_reqs", run)
            g("num_queue_reqs", wait)
            g("num_grammar_queue_reqs", 0.0)
            g("gen_throughput", self.tps)
            g("cache_hit_rate", c["ph"] / max(c["pq"], 1.0))
            g("token_usage", usage)
            g("num_used_tokens", used)
            g("kv_available_tokens", max(0.0, self.pool - used - evict))
            g("kv_evictable_tokens", evict)
            g("kv_used_tokens", used)
            g("spec_accept_length", self.accept_len if self.sd and self.accept_len else 0.0)
            g("spec_accept_rate", ((self.accept_len - 1) / self.sd["k"]) if self.sd and self.accept_len else 0.0)
            g("num_retracted_requests_total", c["retr"], "counter")
            g("num_retracted_input_tokens_total", c["retr_tok"], "counter")
            g("max_total_num_tokens", float(self.pool))
            out.append("# TYPE sglang:realtime_tokens_total counter")
            for mode, v in (("prefill_compute", c["pf_comp"]), ("prefill_cache", c["cached"]), ("decode", c["gen"])):
                out.append(f'sglang:realtime_tokens_total{{{S},mode="{mode}"}} {float(v)}')
            out.append("# TYPE sglang:forward_execution_seconds_total counter")
            for cat, v in (("decode", c["fw_dec"]), ("extend", c["fw_ext"])):
                out.append(f'sglang:forward_execution_seconds_total{{{S},category="{cat}"}} {float(v)}')
            out += h["queue"].lines("sglang:queue_time_seconds", S)
            g("prompt_tokens_total", c["prompt"], "counter", L)
            g("generation_tokens_total", c["gen"], "counter", L)
            out.append("# TYPE sglang:cached_tokens_total counter")
            out.append(f'sglang:cached_tokens_total{{{L},cache_source="device"}} {float(c["cached"])}')
            g("num_requests_total", c["fin"], "counter", L)
            out += h["ttft"].lines("sglang:time_to_first_token_seconds", L)
            out += h["itl"].lines("sglang:inter_token_latency_seconds", L)
            out += h["e2e"].lines("sglang:e2e_request_latency_seconds", L)
        elif self.kind == "tgi":
            def g(name, v, typ="gauge"):
                out.append(f"# TYPE {name} {typ}")
                out.append(f"{name} {v:g}" if isinstance(v, float) else f"{name} {v}")
            g("tgi_batch_current_size", int(run))
            g("tgi_batch_current_max_tokens", int(used))
            g("tgi_queue_size", int(wait))
            g("tgi_request_count", int(c["fin"] + run + wait), "counter")
            g("tgi_request_success", int(c["fin"]), "counter")
            out += h["gen"].lines("tgi_request_generated_tokens", "")
            out += h["inp"].lines("tgi_request_input_length", "")
            out += h["tpot"].lines("tgi_request_mean_time_per_token_duration", "")
            out += h["e2e"].lines("tgi_request_duration", "")
            out += h["queue"].lines("tgi_request_queue_duration", "")
            out.append("# TYPE tgi_batch_forward_duration histogram")
            for meth, v in (("prefill", c["fw_ext"]), ("decode", c["fw_dec"])):
                out.append(f'tgi_batch_forward_duration_bucket{{method="{meth}",le="+Inf"}} {c["steps"]:g}')
                out.append(f'tgi_batch_forward_duration_sum{{method="{meth}"}} {v:g}')
                out.append(f'tgi_batch_forward_duration_count{{method="{meth}"}} {c["steps"]:g}')
        else:  # llama.cpp
            def g(name, v, typ="counter"):
                out.append(f"# TYPE llamacpp:{name} {typ}")
                out.append(f"llamacpp:{name} {v:g}")
            g("prompt_tokens_total", c["pf_comp"])
            g("prompt_tokens_cached_total", c["cached"])
            g("prompt_seconds_total", c["pf_s"])
            g("tokens_predicted_total", c["gen"])
            g("tokens_predicted_seconds_total", c["dec_s"])
            g("n_decode_total", c["steps"])
            if self.sd:
                g("spec_decode_num_draft_tokens_total", c["dtok"])
                g("spec_decode_num_accepted_tokens_total", c["acc"])
                g("spec_decode_num_drafts_total", c["drafts"])
            g("prompt_tokens_seconds", 0.0 if not c["pf_s"] else c["pf_comp"] / c["pf_s"], "gauge")
            g("predicted_tokens_seconds", 0.0 if not c["dec_s"] else c["gen"] / max(c["dec_s"], 1e-9), "gauge")
            g("requests_processing", run, "gauge")
            g("requests_deferred", wait, "gauge")
            g("n_busy_slots_per_decode", run, "gauge")
        return "\n".join(out) + "\n"
