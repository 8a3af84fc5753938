"""Request-level serving simulation: arrivals, a continuous-batching scheduler over a
KV pool in blocks, chunked prefill, decode steps priced from HBM bytes and FLOPs, launch
overhead with and without CUDA graphs, host time stretched when the scheduler's CPU is
taken, speculative decoding, preemption; and each engine's /metrics page rendered as
text with the engine's real metric names and bucket layouts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from corpus_an.hw import Activity
from corpus_an.sim import LaunchStat, Proc
from corpus_an.timeline import Timeline

# real bucket layouts (data/metrics)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
             20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
            40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
            480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2,
           0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0,
           400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0,
             40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0,
             900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)
# TGI (metrics-exporter-prometheus, buckets set in its launcher): 0.0001*1.5^k, 35 of them (guessed)
TGI_DUR = tuple(round(0.0001 * 1.5 ** (k + 1), 8) for k in range(35))


class Hist:
    __slots__ = ("bounds", "counts", "count", "sum")

    def __init__(self, bounds):
        self.bounds = bounds
        self.counts = [0] * len(bounds)
        self.count = 0
        self.sum = 0.0

    def observe(self, v, n=1):
        if n <= 0:
            return
        self.count += n
        self.sum += v * n
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.counts[i] += n
                return

    def lines(self, name, labels):
        out = [f"# TYPE {name} histogram"]
        c = 0
        for b, k in zip(self.bounds, self.counts):
            c += k
            out.append(f'{name}_bucket{{{labels}le="{b}"}} {float(c)}')
        out.append(f'{name}_bucket{{{labels}le="+Inf"}} {float(self.count)}')
        lab = "{" + labels.rstrip(",") + "}" if labels else ""
        out.append(f"{name}_count{lab} {float(self.count)}")
        out.append(f"{name}_sum{lab} {self.sum!r}")
        return out


@dataclass
class Model:
    name: str
    params: float           # parameters
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    wbytes: float = 2.0     # bytes per parameter as stored (0.55 for 4-bit + scales)
    kv_bytes: int = 2
    active: float | None = None  # active parameters (MoE); None: all


@dataclass
class Req:
    arrival: float
    prompt: int
    max_out: int
    n: int = 1
    logprobs: int = 0
    prompt_logprobs: bool = False
    image_tokens: int = 0   # vision encoder work (document scans)
    cached: int = 0
    prefilled: int = 0
    generated: int = 0
    blocks: int = 0
    first_sched: float | None = None
    first_tok: float | None = None
    prefill_done_t: float | None = None
    preempted: int = 0
    stop_len: int = 0


@dataclass
class ServeCfg:
    kind: str = "vllm"
    url: str = "http://127.0.0.1:8000/metrics"
    tp: int = 1
    block_size: int = 16
    mem_util: float = 0.9
    num_blocks: int | None = None
    max_seqs: int = 256
    max_batched: int = 8192
    max_model_len: int = 32768
    chunked: bool = True
    graphs: bool = True
    kernels_per_layer: int = 14
    host_base_ms: float = 1.6
    host_per_seq_ms: float = 0.025
    api_cores: float = 0.35
    prefix_hit: float = 0.25
    spec_k: int = 0
    spec_alpha: float = 0.0
    draft_frac: float = 0.0   # draft model cost relative to target, per draft token
    sm_eff: float = 0.9       # SMs covered by the model's kernels (small models use fewer)
    parallel_slots: int = 4   # llama.cpp --parallel
    pid: int = 4100
    user: str = "svc-docai"
    container: str = ""
    pod: str = ""
    port: int = 8000


class Serving:
    """One engine on ``tp`` GPUs (tensor parallel)."""

    def __init__(self, model: Model, cfg: ServeCfg, rate, gen, rng, spec, gpu0=0, n_gpus=None):
        self.m = model
        self.c = cfg
        self.rate = rate        # t -> requests/s
        self.gen = gen          # (rng, t) -> Req
        self.rng = rng
        self.spec = spec
        self.gpu0 = gpu0
        self.n_gpus = n_gpus or cfg.tp
        self.tl = Timeline(self.n_gpus)
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.cursor = 0.0
        self.next_arrival = None
        self.injected: list[Req] = []
        self.alive = True
        self.neighbor = None    # (pid, share of GPU time wanted, sm, tensor, dram) time-slicing in
        self.extra_step_ms = 0.0
        self.bw_eff = 0.82
        self.mem_mult = 1.0     # extra bytes per step (a dequantising fallback, a dense layout)
        self.launch_tail = (0.0, 0.0)
        self.host_extra_cores = 0.0
        self.down_until = -1.0  # restarting
        w_per_gpu = model.params * model.wbytes / cfg.tp
        self.weights = int(w_per_gpu)
        self.kvb = 2 * model.layers * model.kv_heads * model.head_dim * model.kv_bytes // max(1, min(cfg.tp, model.kv_heads))
        if cfg.num_blocks is None:
            avail = spec.mem_total * cfg.mem_util - w_per_gpu - 3.0 * 2**30
            cfg.num_blocks = max(64, int(avail // (self.kvb * cfg.block_size)))
        self.free = cfg.num_blocks
        # counters
        self.gen_tokens = 0
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.finished = {"stop": 0, "length": 0, "abort": 0}
        self.preemptions = 0
        self.prefill_s = 0.0
        self.decode_s = 0.0
        self.forward_s = 0.0
        self.steps = 0
        self.spec_drafts = 0
        self.spec_draft_tokens = 0
        self.spec_accepted = 0
        self.flops = 0.0
        self.read_bytes = 0.0
        self.write_bytes = 0.0
        self.retracted_input = 0
        self.cpu_tree_s = 0.0
        self.busy_thread_s = 0.0
        self.launches = 0
        self.graph_launches = 0
        k = cfg.kind
        if k == "sglang":
            self.h = {"ttft": Hist(SGL_TTFT), "itl": Hist(SGL_ITL), "e2e": Hist(SGL_E2E), "queue": Hist(SGL_QUEUE)}
        elif k == "tgi":
            self.h = {"tpot": Hist(TGI_DUR), "e2e": Hist(TGI_DUR), "queue": Hist(TGI_DUR)}
        else:
            self.h = {"ttft": Hist(VLLM_TTFT), "itl": Hist(VLLM_ITL), "tpot": Hist(VLLM_ITL),
                      "e2e": Hist(VLLM_REQ), "queue": Hist(VLLM_REQ), "prefill": Hist(VLLM_REQ),
                      "decode": Hist(VLLM_REQ), "n": Hist(VLLM_N), "maxtok": Hist(VLLM_TOK),
                      "maxgen": Hist(VLLM_TOK)}
        self.window_gen = []  # (t, tokens) for SGLang's gen_throughput gauge
        self.procs = []
        self.demand = 1.0
        self.last_share = 1.0
        self.scrape_miss = 0.0

    # ---------------------------------------------------------------- processes
    def init(self, w):
        c = self.c
        start = w.s.start_wall - self.rng.uniform(3600, 86400 * 3)
        cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {self.m.name} --port {c.port} "
                       f"--tensor-parallel-size {c.tp} --max-num-seqs {c.max_seqs} --max-num-batched-tokens {c.max_batched}"
                       + ("" if c.chunked else " --no-enable-chunked-prefill") + ("" if c.graphs else " --enforce-eager"),
               "sglang": f"python3 -m sglang.launch_server --model-path {self.m.name} --port {c.port} --tp {c.tp} --enable-metrics",
               "tgi": f"text-generation-launcher --model-id {self.m.name} --port {c.port} --num-shard {c.tp}",
               "llamacpp": f"llama-server -m /models/{self.m.name.split('/')[-1]}.gguf --port {c.port} --metrics -ngl 99 --parallel {c.parallel_slots}"}[c.kind]
        name = {"vllm": "python3", "sglang": "python3", "tgi": "text-generation", "llamacpp": "llama-server"}[c.kind]
        for r in range(c.tp):
            pid = c.pid + (r * 37 if r else 0)
            p = Proc(pid, self.gpu0 + r, name if r == 0 else ("VllmWorker" if c.kind == "vllm" else name),
                     cmd, c.user, c.container, c.pod, f"/kubepods.slice/{c.pod.replace('/', '_')}" if c.pod else "",
                     start_time_s=start, mem=self.weights + c.num_blocks * c.block_size * self.kvb + int(2.2 * 2**30))
            self.procs.append(p)

    # ---------------------------------------------------------------- step pricing
    def _price(self, w, dec_seqs, ctx, pre_tok, pre_ctx_sum, extra_flops=0.0, extra_bytes=0.0, spec_k=0):
        m, c, sp = self.m, self.c, self.spec
        act = (m.active or m.params) / c.tp
        fac = w.gpus[self.gpu0].factor if c.tp == 1 else min(w.gpus[self.gpu0 + r].factor for r in range(c.tp))
        tok = pre_tok + dec_seqs * (1 + spec_k)
        bytes_ = (self.weights * self.mem_mult if tok else 0) + ctx * self.kvb * (1 + 0.15 * spec_k) + pre_tok * self.kvb + extra_bytes
        flops = 2 * act * tok + 4 * m.layers * m.hidden / c.tp * (pre_ctx_sum + ctx * (1 + spec_k)) + extra_flops
        if spec_k and c.draft_frac:
            flops += 2 * act * c.draft_frac * dec_seqs * spec_k
            bytes_ += self.weights * c.draft_frac * spec_k
        t_mem = bytes_ / (sp.bw * self.bw_eff)
        eff = 0.62 if pre_tok > 256 else 0.45
        t_cmp = flops / (sp.flops * eff * fac)
        t_gpu = max(t_mem, t_cmp) + 0.12 * min(t_mem, t_cmp)
        n_k = m.layers * c.kernels_per_layer + 20
        if spec_k:
            n_k *= 1 + 0.3 * spec_k * (1 if c.draft_frac else 0)
        if c.tp > 1:
            t_gpu += m.layers * 2 * 18e-6 * (1 + tok / 4096)
        t_gpu += n_k * (1.2e-6 if c.graphs and pre_tok == 0 else 2.5e-6)
        host = (c.host_base_ms + c.host_per_seq_ms * dec_seqs) * 1e-3
        if not c.graphs or pre_tok:
            host += n_k * (5.5e-6 if not c.graphs else 1.5e-6)
        host += self.extra_step_ms * 1e-3
        # utilisation shape while kernels run
        pre_share = pre_tok / max(1, tok)
        sm = c.sm_eff * (0.97 if pre_tok > 256 else 0.55 + 0.35 * min(1.0, tok / 64))
        tensor_busy = min(0.85, flops / (sp.flops * fac * max(t_gpu, 1e-6)))
        dram_busy = min(0.95, bytes_ / (sp.bw * max(t_gpu, 1e-6)))
        return t_gpu, host, n_k, sm, tensor_busy, dram_busy, flops, bytes_

    # ---------------------------------------------------------------- scheduling
    def _blocks_for(self, tokens):
        return -(-tokens // self.c.block_size)

    def _preempt_one(self, t):
        victim = self.running.pop()  # the most recently admitted
        self.free += victim.blocks
        victim.blocks = 0
        victim.prefilled = 0
        victim.preempted += 1
        victim.generated_keep = victim.generated
        self.preemptions += 1
        self.retracted_input += victim.prompt
        self.waiting.insert(0, victim)

    def _admit_arrivals(self, until):
        while self.next_arrival is not None and self.next_arrival <= until:
            r = self.gen(self.rng, self.next_arrival)
            r.arrival = self.next_arrival
            self.waiting.append(r)
            self._draw_next(self.next_arrival)
        while self.injected and self.injected[0].arrival <= until:
            self.waiting.append(self.injected.pop(0))

    def _draw_next(self, t):
        rate = max(1e-4, self.rate(t))
        self.next_arrival = t + self.rng.expovariate(rate)
        # thinning against the rate a little later (the rate varies slowly)
        if self.rng.random() > min(1.0, self.rate(self.next_arrival) / rate * 1.0):
            self._draw_next(self.next_arrival)

    def inject(self, req: Req):
        self.injected.append(req)
        self.injected.sort(key=lambda r: r.arrival)

    def restart(self, t, down_s):
        for r in self.running:
            self.finished["abort"] += 1
        self.running = []
        self.waiting = []
        self.free = self.c.num_blocks
        self.down_until = t + down_s

    def advance(self, t, dt, w):
        end = t + dt
        c = self.c
        if self.next_arrival is None:
            self._draw_next(t)
        host_need = 0.0  # core-seconds the scheduler thread needs this tick at full speed
        share = w.host.share(self.demand)
        self.last_share = share
        busy_time = 0.0
        cur = max(self.cursor, t)
        while cur < end:
            if cur < self.down_until:
                self.waiting = []
                self._admit_arrivals(self.down_until)
                self.waiting = []
                cur = min(end, self.down_until)
                continue
            self._admit_arrivals(cur)
            step = self._one_step(cur, end, w, share)
            if step is None:
                nxt = min(self.next_arrival, self.injected[0].arrival if self.injected else math.inf)
                cur = min(end, max(cur + 1e-3, nxt))
                continue
            dur, host_s = step
            host_need += host_s
            busy_time += dur
            cur += dur
        self.cursor = cur
        # CPU: the engine-core thread runs the host part of each step; the API server
        # (tokenise, detokenise, HTTP) scales with tokens
        api = c.api_cores + 0.00002 * (self.tok_rate if hasattr(self, "tok_rate") else 0)
        sched_core = min(1.0, host_need / dt + (0.08 if busy_time > 0 else 0.02))
        self.demand = sched_core + api + self.host_extra_cores
        used = self.demand * share
        w.host.account(self.demand, used, dt, threads=6 + c.tp)
        self.cpu_tree_s += used * dt
        self.busy_thread_s += sched_core * share * dt
        self.procs[0].cpu_s = self.cpu_tree_s
        acts = []
        for g in range(self.n_gpus):
            a = self.tl.collect(g, t, end)
            acts.append(a)
        if self.neighbor is not None:
            npid, want, nsm, nten, ndram = self.neighbor
            for g in range(min(1, self.n_gpus)) if c.tp == 1 else range(self.n_gpus):
                a = acts[g]
                got = min(want, 1.0 - a.busy * 0.0)  # time-sliced: the neighbour gets its slices
                got = min(got, max(0.0, 1.0 - a.busy) + want * a.busy)
                got = min(got, 1.0 - 0.5 * a.busy) if a.busy > 0 else want
                a.procs[npid] = (got, 0)
                a.busy = min(1.0, a.busy + got)
                a.sm = min(a.busy, a.sm + got * nsm)
                a.occ = min(a.sm, a.occ + got * nsm * 0.5)
                a.tensor = min(a.sm, a.tensor + got * nten)
                a.dram = min(1.0, a.dram + got * ndram)
        toks = self.gen_tokens - getattr(self, "_last_gen", 0)
        self._last_gen = self.gen_tokens
        self.tok_rate = toks / dt
        self.window_gen.append((end, toks))
        self.window_gen = [(a, b) for a, b in self.window_gen if a > end - 10]
        lt = self.launch_tail
        tail = max(lt[0], (1 - share) * 0.3)
        ls = [LaunchStat("cudaGraphLaunch" if c.graphs else "cudaLaunchKernel", c.pid,
                         self.graph_launches if c.graphs else self.launches,
                         9.0 if c.graphs else 4.2, tail, max(lt[1], 400.0))]
        if c.graphs and self.launches:
            ls.append(LaunchStat("cudaLaunchKernel", c.pid, self.launches, 4.0, tail, max(lt[1], 400.0)))
        self.launches = self.graph_launches = 0
        tree = {"pids": tuple(p.pid for p in self.procs if p.in_tree), "tp": c.tp, "label": self.procs[0].cmdline[:60] + "…",
                "busiest": f"{c.pid + 31} {'VLLM::EngineCor' if c.kind == 'vllm' else self.procs[0].name}",
                "busiest_s": self.busy_thread_s, "ports": (c.port,),
                "threads": ((c.pid + 31, c.pid, "VLLM::EngineCor" if c.kind == "vllm" else "scheduler", self.busy_thread_s),
                            (c.pid, c.pid, self.procs[0].name, self.cpu_tree_s - self.busy_thread_s)),
                "launch": ls, "offcpu": int(w.host.tree_inv), "scrape_miss": self.scrape_miss,
                "scrape_slow": 1 - share}
        for p in self.procs:
            if not p.in_tree:
                continue  # a tenant outside the engine's tree keeps its own memory
            p.mem = self.weights + c.num_blocks * c.block_size * self.kvb + int(2.2 * 2**30)
        return acts, tree

    def _one_step(self, cur, end, w, share):
        c = self.c
        bs = c.block_size
        k = c.spec_k
        # 1. decodes (running requests whose prefill is done): grow KV, preempt on overflow
        dec = [r for r in self.running if r.prefilled >= r.prompt]
        for r in list(dec):
            need = self._blocks_for(r.prompt + r.generated + (1 + k)) * (1 if r.n == 1 else 1) + \
                (self._blocks_for(r.generated + 1 + k) * (r.n - 1) if r.n > 1 else 0)
            grow = need - r.blocks
            while grow > self.free and self.running:
                if self.running[-1] is r and len(self.running) == 1:
                    break
                self._preempt_one(cur)
                if r not in self.running:
                    break
            if r not in self.running:
                continue
            if grow > 0:
                if grow > self.free:
                    continue
                self.free -= grow
                r.blocks += grow
        dec = [r for r in self.running if r.prefilled >= r.prompt]
        budget = c.max_batched - sum(r.n * (1 + k) for r in dec)
        pre = []  # (req, chunk)
        if c.chunked or not dec or True:
            for r in self.running:
                if r.prefilled < r.prompt and budget > 0:
                    chunk = min(r.prompt - r.prefilled, budget if c.chunked else r.prompt - r.prefilled)
                    if not c.chunked and chunk > budget and budget < c.max_batched:
                        break
                    blocks = self._blocks_for(r.prefilled + chunk) - r.blocks
                    if blocks > self.free:
                        chunk = max(0, (r.blocks + self.free) * bs - r.prefilled)
                        blocks = self.free
                    if chunk <= 0:
                        continue
                    self.free -= max(0, blocks)
                    r.blocks += max(0, blocks)
                    pre.append((r, chunk))
                    budget -= chunk
            while self.waiting and len(self.running) < c.max_seqs and budget > 0:
                r = self.waiting[0]
                if r.prefilled == 0 and r.cached == 0 and c.prefix_hit and r.preempted == 0:
                    hit = int(min(r.prompt - 1, r.prompt * c.prefix_hit * self.rng.uniform(0.5, 1.5)) // bs * bs)
                    r.cached = max(0, hit)
                    r.prefilled = r.cached
                if not c.chunked and r.prompt - r.prefilled > budget:
                    if budget < c.max_batched and (dec or pre):
                        break
                chunk = min(r.prompt - r.prefilled, budget) if c.chunked else r.prompt - r.prefilled
                blocks = self._blocks_for(r.prefilled + chunk)
                watermark = int(0.01 * c.num_blocks)
                if blocks + watermark > self.free:
                    if r.prompt + r.max_out > c.num_blocks * bs * 0.98 and not self.running:
                        # can never fit: rejected by the engine
                        self.waiting.pop(0)
                        self.finished["abort"] += 1
                        continue
                    break
                self.waiting.pop(0)
                self.free -= blocks
                r.blocks = blocks
                if r.first_sched is None:
                    r.first_sched = cur
                    q = cur - r.arrival
                    self.h["queue"].observe(q)
                    if "n" in self.h:
                        self.h["n"].observe(r.n)
                        self.h["maxtok"].observe(r.max_out)
                self.running.append(r)
                pre.append((r, chunk))
                budget -= chunk
        if not c.chunked and pre:
            dec = []  # prefill-only step (no mixing): the decodes wait for it
        if not dec and not pre:
            return None
        dec_seqs = sum(r.n for r in dec)
        ctx = sum(r.prompt + r.generated * 1 for r in dec) + sum((r.n - 1) * r.generated for r in dec)
        pre_tok = sum(ch for _, ch in pre)
        pre_ctx = sum(ch * (r.prefilled + ch / 2) for r, ch in pre)
        extra_f = extra_b = 0.0
        host_extra = 0.0
        for r in dec:
            if r.logprobs or r.n > 1:
                # full-vocabulary log-softmax in fp32 per sample, top-k, copy to host, detokenise
                extra_b += r.n * self.m.vocab * 4 * 3
                host_extra += r.n * (0.35e-3 + 0.12e-3 * r.logprobs)
        for r, ch in pre:
            if r.prompt_logprobs:
                extra_b += ch * self.m.vocab * 4 * 3
                extra_f += 2 * ch * self.m.vocab * self.m.hidden
                host_extra += ch * 0.02e-3 * max(1, r.logprobs)
            if r.image_tokens and r.prefilled == r.cached:
                # vision encoder on the whole document, in the same forward pass
                extra_f += 2 * 0.6e9 * r.image_tokens * 4 + 4 * 24 * 1280 * r.image_tokens * r.image_tokens / 8
        t_gpu, host, n_k, sm, ten, dram, flops, bytes_ = self._price(w, dec_seqs, ctx, pre_tok, pre_ctx,
                                                                      extra_f, extra_b, k if dec else 0)
        host += host_extra
        host_s = host
        host_eff = host / max(0.02, share)
        # async scheduling overlaps host and GPU work of consecutive steps
        step = max(t_gpu, host_eff) + 0.1 * min(t_gpu, host_eff)
        if self.neighbor is not None:
            want = self.neighbor[1]
            step = step / max(0.2, 1 - want * 0.5) + want * 0.002  # time slices to the other context
        # how many identical decode steps can be taken at once
        mult = 1
        if not pre and dec and not self.waiting:
            left = min(r.max_out - r.generated for r in dec) // (1 + k)
            nxt = min(self.next_arrival, self.injected[0].arrival if self.injected else math.inf)
            room = min(end, nxt) - cur
            mult = int(max(1, min(left, room // step if step > 0 else 1, 64)))
        dur = step * mult
        for g in range(c.tp):
            self.tl.add(g, cur, dur, busy=t_gpu / step, sm=sm * t_gpu / step, occ=sm * 0.45 * t_gpu / step,
                        tensor=ten * t_gpu / step, dram=dram * t_gpu / step,
                        nvlink=(2 * self.m.hidden * 2 * (pre_tok + dec_seqs) * self.m.layers * 2 / max(step, 1e-6) / 2**20) if c.tp > 1 else 0.0,
                        pid=c.pid + (g * 37 if g else 0))
        self.steps += mult
        self.forward_s += t_gpu * mult
        self.flops += flops * mult
        self.read_bytes += bytes_ * mult
        self.write_bytes += (pre_tok + dec_seqs) * self.kvb * mult
        if c.graphs:
            self.graph_launches += mult * (1 if not pre else 0)
            self.launches += (n_k if pre else 8) * mult
        else:
            self.launches += int(n_k) * mult
        t_done = cur + dur
        # prefill progress
        for r, ch in pre:
            r.prefilled += ch
            self.prompt_tokens += ch
            if r.prefilled >= r.prompt:
                self.cached_tokens += r.cached
                self.prompt_tokens += r.cached
                r.prefill_done_t = t_done
                if r.first_tok is None:
                    r.first_tok = t_done
                    if "ttft" in self.h:
                        self.h["ttft"].observe(t_done - r.arrival)
                if r.preempted == 0:
                    r.generated = 1
                    self.gen_tokens += r.n
                else:
                    r.generated = max(1, getattr(r, "generated_keep", 1))
                r.stop_len = r.stop_len or self._stop_len(r)
        # decode progress
        if dec:
            acc_total = 0
            for r in dec:
                if k:
                    # accepted prefix of k drafts with per-token acceptance alpha, plus one bonus
                    a = self.c.spec_alpha
                    exp_acc = a * (1 - a ** k) / (1 - a) if a < 1 else k
                    acc = exp_acc * mult
                    acc_i = int(acc) + (1 if self.rng.random() < acc - int(acc) else 0)
                    gained = mult + acc_i
                    self.spec_drafts += mult * r.n
                    self.spec_draft_tokens += mult * k * r.n
                    self.spec_accepted += acc_i * r.n
                else:
                    gained = mult
                gained = min(gained, r.stop_len - r.generated)
                r.generated += gained
                self.gen_tokens += gained * r.n
                acc_total += gained
                per_tok = dur / max(1, gained)
                if "itl" in self.h:
                    self.h["itl"].observe(per_tok, gained * r.n)
            for r in [r for r in dec if r.generated >= r.stop_len]:
                self._finish(r, t_done)
        self.decode_s += dur * len(dec)
        self.prefill_s += dur * len(pre)
        return dur, host_s * mult

    def _stop_len(self, r):
        if self.rng.random() < 0.25:
            return r.max_out
        return max(1, min(r.max_out, int(r.max_out * self.rng.uniform(0.35, 1.0))))

    def _finish(self, r, t):
        self.running.remove(r)
        self.free += r.blocks
        r.blocks = 0
        self.finished["length" if r.generated >= r.max_out else "stop"] += 1
        e2e = t - r.arrival
        self.h["e2e"].observe(e2e)
        dec_t = t - (r.prefill_done_t or t)
        if "tpot" in self.h:
            self.h["tpot"].observe(dec_t / max(1, r.generated - 1))
        if "prefill" in self.h:
            self.h["prefill"].observe((r.prefill_done_t or t) - (r.first_sched or r.arrival))
            self.h["decode"].observe(dec_t)
            self.h["maxgen"].observe(r.generated)

    # ---------------------------------------------------------------- the page
    def page(self, t, w):
        if t < self.down_until:
            return None
        c = self.c
        kv_used_blocks = c.num_blocks - self.free
        usage = kv_used_blocks / c.num_blocks
        running = len(self.running)
        waiting = len(self.waiting)
        M = self.m.name
        L = []
        if c.kind == "vllm":
            lab = f'engine="0",model_name="{M}"'

            def g(name, v, typ="gauge", extra=""):
                L.append(f"# TYPE {name} {typ}")
                L.append(f"{name}{{{extra}{lab}}} {float(v)!r}")
            g("vllm:num_requests_running", running)
            g("vllm:num_requests_waiting", waiting)
            L.append("# TYPE vllm:num_requests_waiting_by_reason gauge")
            L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="capacity"}} {float(waiting)}')
            L.append(f'vllm:num_requests_waiting_by_reason{{{lab},reason="deferred"}} 0.0')
            g("vllm:kv_cache_usage_perc", usage)
            g("vllm:prefix_cache_queries_total", self.prompt_tokens, "counter")
            g("vllm:prefix_cache_hits_total", self.cached_tokens, "counter")
            g("vllm:num_preemptions_total", self.preemptions, "counter")
            g("vllm:prompt_tokens_total", self.prompt_tokens, "counter")
            g("vllm:prompt_tokens_cached_total", self.cached_tokens, "counter")
            g("vllm:generation_tokens_total", self.gen_tokens, "counter")
            L.append("# TYPE vllm:request_success_total counter")
            for reason in ("stop", "length", "abort"):
                L.append(f'vllm:request_success_total{{{lab},finished_reason="{reason}"}} {float(self.finished[reason])}')
            g("vllm:estimated_flops_per_gpu_total", self.flops, "counter")
            g("vllm:estimated_read_bytes_per_gpu_total", self.read_bytes, "counter")
            g("vllm:estimated_write_bytes_per_gpu_total", self.write_bytes, "counter")
            if c.spec_k:
                g("vllm:spec_decode_num_drafts_total", self.spec_drafts, "counter")
                g("vllm:spec_decode_num_draft_tokens_total", self.spec_draft_tokens, "counter")
                g("vllm:spec_decode_num_accepted_tokens_total", self.spec_accepted, "counter")
            names = {"ttft": "vllm:time_to_first_token_seconds", "itl": "vllm:inter_token_latency_seconds",
                     "tpot": "vllm:request_time_per_output_token_seconds", "e2e": "vllm:e2e_request_latency_seconds",
                     "queue": "vllm:request_queue_time_seconds", "prefill": "vllm:request_prefill_time_seconds",
                     "decode": "vllm:request_decode_time_seconds", "n": "vllm:request_params_n",
                     "maxtok": "vllm:request_params_max_tokens", "maxgen": "vllm:request_max_num_generation_tokens"}
            for key, name in names.items():
                L += self.h[key].lines(name, lab + ",")
            L.append("# TYPE vllm:cache_config_info gauge")
            L.append(f'vllm:cache_config_info{{block_size="{c.block_size}",cache_dtype="auto",enable_prefix_caching="True",'
                     f'engine="0",gpu_memory_utilization="{c.mem_util}",kv_cache_memory_bytes="{c.num_blocks * c.block_size * self.kvb}",'
                     f'kv_cache_size_tokens="{c.num_blocks * c.block_size}",num_cpu_blocks="None",num_gpu_blocks="{c.num_blocks}",'
                     f'sliding_window="None"}} 1.0')
        elif c.kind == "sglang":
            lab = f'model_name="{M}"'
            pool = c.num_blocks * c.block_size
            used = kv_used_blocks * c.block_size
            evict = int(min(self.free * c.block_size, pool * 0.15 * min(1.0, self.cached_tokens / max(1, self.prompt_tokens) * 3)))

            def g(name, v, typ="gauge", extra=""):
                L.append(f"# TYPE {name} {typ}")
                L.append(f"{name}{{{lab}{extra}}} {float(v)!r}")
            gen10 = sum(b for _, b in self.window_gen) / 10.0
            g("sglang:num_running_reqs", running)
            g("sglang:num_queue_reqs", waiting)
            g("sglang:num_grammar_queue_reqs", 0)
            g("sglang:gen_throughput", gen10)
            g("sglang:cache_hit_rate", self.cached_tokens / max(1, self.prompt_tokens))
            g("sglang:token_usage", used / pool)
            g("sglang:num_used_tokens", used)
            g("sglang:kv_used_tokens", used)
            g("sglang:kv_available_tokens", pool - used - evict)
            g("sglang:kv_evictable_tokens", evict)
            g("sglang:max_total_num_tokens", pool)
            if c.spec_k:
                a = self.spec_accepted / max(1, self.spec_draft_tokens)
                g("sglang:spec_accept_rate", a)
                g("sglang:spec_accept_length", 1 + self.spec_accepted / max(1, self.spec_drafts))
            else:
                g("sglang:spec_accept_rate", 0)
                g("sglang:spec_accept_length", 0)
            g("sglang:num_retracted_requests_total", self.preemptions, "counter")
            g("sglang:num_retracted_input_tokens_total", self.retracted_input, "counter")
            L.append("# TYPE sglang:realtime_tokens_total counter")
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="decode"}} {float(self.gen_tokens)}')
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="prefill_compute"}} {float(self.prompt_tokens - self.cached_tokens)}')
            L.append(f'sglang:realtime_tokens_total{{{lab},mode="prefill_cache"}} {float(self.cached_tokens)}')
            g("sglang:forward_execution_seconds_total", self.forward_s, "counter")
            g("sglang:prompt_tokens_total", self.prompt_tokens, "counter")
            g("sglang:generation_tokens_total", self.gen_tokens, "counter")
            g("sglang:cached_tokens_total", self.cached_tokens, "counter")
            g("sglang:num_requests_total", sum(self.finished.values()), "counter")
            for key, name in {"ttft": "sglang:time_to_first_token_seconds", "itl": "sglang:inter_token_latency_seconds",
                              "e2e": "sglang:e2e_request_latency_seconds", "queue": "sglang:queue_time_seconds"}.items():
                L += self.h[key].lines(name, lab + ",")
        elif c.kind == "tgi":
            L += ["# TYPE tgi_batch_current_size gauge", f"tgi_batch_current_size {running}",
                  "# TYPE tgi_batch_current_max_tokens gauge",
                  f"tgi_batch_current_max_tokens {sum(r.prompt + r.max_out for r in self.running)}",
                  "# TYPE tgi_queue_size gauge", f"tgi_queue_size {waiting}",
                  "# TYPE tgi_request_count counter", f"tgi_request_count {sum(self.finished.values()) + running + waiting}",
                  "# TYPE tgi_request_success counter", f"tgi_request_success {self.finished['stop'] + self.finished['length']}",
                  "# TYPE tgi_request_generated_tokens histogram",
                  f'tgi_request_generated_tokens_bucket{{le="+Inf"}} {sum(self.finished.values())}',
                  f"tgi_request_generated_tokens_sum {self.gen_tokens}",
                  f"tgi_request_generated_tokens_count {sum(self.finished.values())}",
                  "# TYPE tgi_request_input_length histogram",
                  f'tgi_request_input_length_bucket{{le="+Inf"}} {sum(self.finished.values())}',
                  f"tgi_request_input_length_sum {self.prompt_tokens}",
                  f"tgi_request_input_length_count {sum(self.finished.values())}",
                  "# TYPE tgi_batch_forward_duration histogram",
                  f'tgi_batch_forward_duration_sum{{method="prefill"}} {self.prefill_s!r}',
                  f'tgi_batch_forward_duration_sum{{method="decode"}} {self.decode_s!r}']
            for key, name in {"tpot": "tgi_request_mean_time_per_token_duration", "e2e": "tgi_request_duration",
                              "queue": "tgi_request_queue_duration"}.items():
                L += self.h[key].lines(name, "")
        elif c.kind == "llamacpp":
            def g(name, v, typ="counter"):
                L.append(f"# TYPE {name} {typ}")
                L.append(f"{name} {v}")
            g("llamacpp:prompt_tokens_total", self.prompt_tokens - self.cached_tokens)
            g("llamacpp:prompt_tokens_cached_total", self.cached_tokens)
            g("llamacpp:prompt_seconds_total", round(self.prefill_s, 6))
            g("llamacpp:tokens_predicted_total", self.gen_tokens)
            g("llamacpp:tokens_predicted_seconds_total", round(self.decode_s, 6))
            g("llamacpp:n_decode_total", self.steps)
            g("llamacpp:n_tokens_max", max([r.prompt + r.generated for r in self.running] or [0]))
            if c.spec_k:
                g("llamacpp:spec_decode_num_draft_tokens_total", self.spec_draft_tokens)
                g("llamacpp:spec_decode_num_accepted_tokens_total", self.spec_accepted)
                g("llamacpp:spec_decode_num_drafts_total", self.spec_drafts)
            g("llamacpp:prompt_tokens_seconds", 0, "gauge")
            g("llamacpp:predicted_tokens_seconds", round(self.tok_rate if hasattr(self, "tok_rate") else 0, 3), "gauge")
            g("llamacpp:requests_processing", running, "gauge")
            g("llamacpp:requests_deferred", waiting, "gauge")
            g("llamacpp:n_busy_slots_per_decode", round(max(1, running) * 1.0, 4), "gauge")
        return "\n".join(L) + "\n"
