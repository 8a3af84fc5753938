"""A serving engine (vLLM V1, SGLang, llama.cpp) with continuous batching over a KV pool,
stepped in 0.1 s slices; every counter and histogram is counted from simulated events."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import EngineSample, SourceStatus, PinnedSample, ThreadSample

from .sim import GiB, Hist, poisson

VLLM_B = dict(
    ttft=(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
          10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    itl=(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
         20.0, 40.0, 80.0),
    e2e=(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
         240.0, 480.0, 960.0, 1920.0, 7680.0),
    n=(1.0, 2.0, 5.0, 10.0, 20.0),
    tok=(1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0),
)
VLLM_B["tpot"] = VLLM_B["itl"]
VLLM_B["queue"] = VLLM_B["e2e"]
SGL_B = dict(
    ttft=(0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
          200.0, 400.0),
    itl=(0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1,
         0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    e2e=(0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
         200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    queue=(0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0,
           30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0,
           700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0),
)


@dataclass(frozen=True)
class Model:
    name: str
    active: float  # parameters touched per token
    weights: float  # bytes, all ranks
    kvb: float  # KV bytes per token, all ranks
    layers: int
    hidden: int
    moe: bool = False


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 16.06e9, 131072, 32, 4096),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 141.1e9, 327680, 80, 8192),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 65.5e9, 262144, 64, 5120),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 15.2e9, 57344, 28, 3584),
    "qwen3moe": Model("Qwen/Qwen3-30B-A3B-Instruct-2507", 3.3e9, 61.1e9, 98304, 48, 2048, True),
    "mixtral": Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 12.9e9, 93.4e9, 131072, 32, 4096, True),
    "llama3b_q4": Model("bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M", 3.2e9, 2.02e9, 114688, 28, 3072),
    "qwen1.5b": Model("Qwen/Qwen2.5-1.5B-Instruct", 1.54e9, 3.09e9, 28672, 28, 1536),
    "gemma27b": Model("google/gemma-3-27b-it", 27.4e9, 54.8e9, 253952, 62, 5376),
}


class Req:
    __slots__ = ("arr", "prompt", "cached", "pre", "out", "n", "gen", "t_sched", "t_first",
                 "heavy", "max_tokens", "tag")

    def __init__(self, arr, prompt, cached, out, n=1, heavy=0.0, max_tokens=None, tag=""):
        self.arr, self.prompt, self.cached, self.out, self.n = arr, prompt, cached, out, n
        self.pre = prompt - cached
        self.gen = 0.0
        self.t_sched = None
        self.t_first = None
        self.heavy = heavy
        self.max_tokens = max_tokens or out
        self.tag = tag


class Serve:
    """One engine on ``gpus`` (tensor parallel over them)."""

    def __init__(self, world, kind, model, gpus, pool_tokens, rate_fn, req_fn, max_seqs=256,
                 budget=8192, base_over=0.004, per_seq_over=6.0e-5, overlap=0.5,
                 spec=None, up_fn=None, cpu_fn=None, shared_fn=None, jitter_fn=None,
                 scrape_miss=0.015, url=None, container="", pod="", eff=1.0, evictable=True,
                 launch_pid_workers=True, data_parallel=1, api_cpu=0.15):
        self.w = world
        self.kind = kind
        self.m = MODELS[model]
        self.gpus = tuple(gpus)
        self.tp = len(self.gpus)
        self.pool = float(pool_tokens)
        self.rate_fn, self.req_fn = rate_fn, req_fn
        self.max_seqs, self.budget = max_seqs, budget
        self.base_over, self.per_seq_over, self.overlap = base_over, per_seq_over, overlap
        self.spec = spec  # (k, alpha_fn(t), draft weights bytes)
        self.up_fn = up_fn or (lambda t: True)
        self.cpu_fn = cpu_fn or (lambda i: dict(phi=1.0))
        self.shared_fn = shared_fn
        self.jitter_fn = jitter_fn
        self.scrape_miss = scrape_miss
        self.eff = eff
        self.evictable = evictable
        self.api_cpu = api_cpu
        b = world.board
        self.Fe = b.tflops * 0.55 * eff
        self.BWe = b.hbm * 0.70
        self.small_k = 1.5e-3 * self.m.layers / 32 * (0.8e12 / max(0.8e12, b.hbm * 0.25))
        port = {"vllm": 8000, "sglang": 30000, "llamacpp": 8080}[kind]
        self.url = url or f"http://127.0.0.1:{port}/metrics"
        self.port = port
        self.container, self.pod = container, pod
        self.data_parallel = data_parallel
        self.reset_counters()
        wshard = self.m.weights / self.tp
        self.wshard = wshard
        self.kvb_g = self.m.kvb / self.tp
        mem = wshard + self.pool * self.kvb_g + 2.6 * GiB
        self.mem_bytes = int(mem)
        names = {"vllm": ("python3", "vllm serve {m} --tensor-parallel-size {tp} --max-num-seqs {ms}"
                          " --gpu-memory-utilization 0.90 --enable-prefix-caching"),
                 "sglang": ("python3", "python3 -m sglang.launch_server --model-path {m} --tp {tp}"
                            " --enable-metrics --port 30000"),
                 "llamacpp": ("llama-server", "/app/llama-server -m /models/{m}.gguf -ngl 99 -c 32768"
                              " -np {ms} --metrics --port 8080")}
        pname, cmd = names[kind]
        cmd = cmd.format(m=self.m.name, tp=self.tp, ms=max_seqs)
        cg = f"/kubepods/burstable/pod{world.rng.getrandbits(32):08x}" if pod else (
            f"/system.slice/docker-{world.rng.getrandbits(48):012x}.scope" if container else
            "/user.slice/user-1000.slice/session-3.scope")
        self.api = world.add_proc(pname, cmd, (), {}, container=container, pod=pod, cgroup=cg,
                                  rss=3 * GiB)
        self.workers = []
        for r, g in enumerate(self.gpus):
            wname = {"vllm": "VLLM::EngineCore" if self.tp == 1 else f"VLLM::Worker_TP{r}",
                     "sglang": f"sglang::scheduler_TP{r}", "llamacpp": "llama-server"}[kind]
            if kind == "llamacpp":
                p = self.api
                p.gpus = self.gpus
                p.gpu_share = {gg: [0.0] * (world.n + 64) for gg in self.gpus}
                p.mem = {gg: self.mem_bytes for gg in self.gpus}
                self.workers = [p]
                break
            p = world.add_proc(wname, cmd if kind != "vllm" else wname, (g,), {g: self.mem_bytes},
                               ppid=self.api.pid, container=container, pod=pod, cgroup=cg,
                               rss=int(5.5 * GiB), start_time_s=self.api.start_time_s + 4.0)
            self.workers.append(p)
        self.launch_pid_workers = launch_pid_workers
        self.ctx_inv = 200 + world.rng.randrange(2000)
        self.ctx_vol = 5000 + world.rng.randrange(20000)
        self.busiest = 50.0 + world.rng.uniform(0, 3000)
        self.periods = 0
        self.throttled = 0
        self.last_sample = None
        self.last_taken = None
        self.base_itl = None
        self.stat = []  # per tick dict for the sanity table
        self.shared_proc = {}
        self.cpu_hist = []
        self.cpu_total = world.rng.uniform(50, 4000)

    def reset_counters(self):
        k = self.kind
        B = VLLM_B if k == "vllm" else SGL_B
        self.h = {}
        if k in ("vllm", "sglang"):
            self.h = {"ttft": Hist(B["ttft"]), "itl": Hist(B["itl"]), "e2e": Hist(B["e2e"]),
                      "queue": Hist(B["queue"])}
            if k == "vllm":
                self.h.update(tpot=Hist(B["tpot"]), params_n=Hist(B["n"]),
                              params_max_tokens=Hist(B["tok"]),
                              max_generation_tokens=Hist(B["tok"]))
        self.itl_tick = Hist(VLLM_B["itl"])
        self.ttft_tick = Hist(VLLM_B["ttft"])
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pre_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rb=0.0, wb=0.0)
        self.waiting: list[Req] = []
        self.prefilling: list[Req] = []
        self.decoding: list[Req] = []
        self.kv_used = 0.0
        self.evict = 0.0
        self.time = None
        self.cursor = 0.0

    # ------------------------------------------------------------------ costs
    def kernel(self, B, ctx, p, f, plen):
        m = self.m
        wread = self.wshard * (min(1.0, 0.3 + B / 48.0) if m.moe else 1.0)
        t_mem = (wread + ctx * self.kvb_g) / self.BWe
        mult = 1 + (self.spec[0] if self.spec else 0)
        t_cmp = 2 * m.active / self.tp * B * mult / self.Fe
        dec = (max(t_mem, t_cmp / f) + 0.15 * min(t_mem, t_cmp / f) + self.small_k / f) if B else 0.0
        pre = 0.0
        if p:
            pre = (2 * m.active / self.tp * p + 4 * m.layers * m.hidden * p * plen / 2 / self.tp) / (self.Fe * f)
            pre += (wread if not B else 0) / self.BWe
        comm = 0.0
        if self.tp > 1:
            comm = 2 * m.layers * (7e-6 + (B + p) * m.hidden * 2 / 300e9)
        draft = 0.0
        if self.spec and B:
            draft = self.spec[0] * (self.spec[2] / self.tp / self.BWe + 2.5e-4)
        return dec, pre, comm, draft, t_mem, t_cmp

    # ------------------------------------------------------------------ one tick
    def step_tick(self, i):
        w = self.w
        tick = w.tick
        t0 = w.t(i)
        if not self.up_fn(t0):
            self.time = None
            if self.decoding or self.prefilling or self.waiting or self.c["gen"]:
                self.reset_counters()
            w.engine_status[i] = SourceStatus(False, reason=f"{self.url}: connection refused",
                                              poll_median_s=0.002)
            self.last_sample = None
            self.cpu_hist.append(round(self.cpu_total, 2))
            self.stat.append(dict(steps=0, heavy=0.0, kvshare=0.0, pre_dec=0.0))
            return
        env = self.cpu_fn(i)
        phi = env.get("phi", 1.0)
        macro = 0.1
        nm = max(1, int(round(tick / macro)))
        dt = tick / nm
        busy = [0.0] * self.tp
        smx = [0.0] * self.tp
        byt = 0.0
        flo = 0.0
        steps_tick = 0
        graph_launch = 0
        eager_launch = 0
        tail_frac = 0.0
        other = [self.shared_fn(g, t0) if self.shared_fn else 0.0 for g in self.gpus]
        stretch = 1.0 + max(other)
        jit = self.jitter_fn(t0) if self.jitter_fn else (0.0, 0.0)
        f = min(w.speed[g] for g in self.gpus)
        heavy_active_s = 0.0
        kv_rd = 0.0
        pre_dec = 0.0
        all_rd = 0.0
        for mi in range(nm):
            ts = t0 + mi * dt
            end = ts + dt
            lam = self.rate_fn(ts) * dt
            arrivals = sorted(ts + w.rng.random() * dt for _ in range(poisson(w.rng, lam)))
            for a in arrivals:
                r = self.req_fn(w.rng, a)
                self.waiting.append(r)
            t = max(ts, self.cursor)
            guard = 0
            hiccup = w.rng.random() < 0.012
            while t < end - 1e-9 and guard < 60:
                guard += 1
                self.admit(t)
                B = sum(r.n for r in self.decoding)
                if B == 0 and not self.prefilling:
                    nxt = [r.arr for r in self.waiting if r.arr > t]
                    if self.waiting and self.waiting[0].arr <= t:
                        break  # blocked on capacity: nothing to run
                    t = min(end, nxt[0]) if nxt else end
                    continue
                ctx = 0.0
                heavy = 0.0
                for r in self.decoding:
                    ctx += r.prompt + r.gen * r.n
                    heavy = max(heavy, r.heavy)
                head = self.prefilling[0] if self.prefilling else None
                p = 0
                if head is not None:
                    p = max(0, min(self.budget - B, sum(r.pre for r in self.prefilling)))
                    if p == 0:
                        p = min(256, head.pre)
                    heavy = max(heavy, head.heavy * 0.5)
                dec, pre, comm, draft, t_mem, t_cmp = self.kernel(B, ctx, p, f,
                                                                   head.prompt if head else 0)
                kern = (dec + pre + comm + draft)
                over = (self.base_over + self.per_seq_over * B) / phi
                gap = max(0.0, over - self.overlap * kern)
                heavy_gpu, heavy_cpu = 0.3 * heavy, 0.7 * heavy / phi
                s = kern * stretch + gap + heavy_gpu + heavy_cpu + jit[1]
                if hiccup:
                    s += w.rng.uniform(0.02, 0.06)
                    hiccup = False
                # how many identical steps
                k_time = max(1, int((end - t) / s))
                k = k_time
                if head is not None and p > 0:
                    k = min(k, max(1, int(head.pre // p)))
                nxt = next((r.arr for r in self.waiting if r.arr > t), None)
                if nxt is not None and len(self.decoding) + len(self.prefilling) < self.max_seqs:
                    k = min(k, max(1, int(math.ceil((nxt - t) / s))))
                e = 1.0
                if self.spec and B:
                    kk, afn, _ = self.spec
                    a = max(0.0, min(0.99, afn(t)))
                    e = (1 - a ** (kk + 1)) / (1 - a)
                    self.c["drafts"] += B * k
                    self.c["dtok"] += B * k * kk
                    self.c["acc"] += B * k * (e - 1)
                # KV for the coming steps: preempt the newest when the pool cannot hold them
                need = B * k * e
                while self.decoding and self.kv_used + need > self.pool:
                    self.preempt(t)
                    B = sum(r.n for r in self.decoding)
                    need = B * k * e
                t += k * s
                steps_tick += k
                graph_launch += k
                eager_launch += k * (40 + (self.m.layers * 12 if p else 0))
                for g in range(self.tp):
                    busy[g] += k * (kern + heavy_gpu)
                    smx[g] += k * (dec * 0.72 + pre * 0.93 + comm * 0.15 + draft * 0.55 + heavy_gpu * 0.3)
                byt += k * (t_mem * self.BWe if B else 0) + k * p * 2 * self.m.hidden * 4 * self.m.layers / self.tp
                fl = k * (2 * self.m.active / self.tp * (B * (1 + (self.spec[0] if self.spec else 0)) + p))
                flo += fl
                self.c["flops"] += fl
                self.c["rb"] += k * (t_mem * self.BWe)
                kv_rd += k * ctx * self.kvb_g
                if B and p:
                    pre_dec += k * pre * stretch
                all_rd += k * t_mem * self.BWe
                self.c["wb"] += k * (B + p) * self.kvb_g
                self.c["fwd_s"] += k * kern
                self.c["steps"] += k
                if heavy:
                    heavy_active_s += k * s
                if B:
                    step_obs = s
                    # vLLM observes one ITL per output token after the first
                    for frac, mult in ((0.3, 0.9), (0.55, 1.0), (0.15, 1.22)):
                        self.h_obs("itl", step_obs * mult, B * k * frac)
                    if e > 1:
                        self.h_obs("itl", 0.0005, B * k * (e - 1))
                    self.c["gen"] += B * k * e
                    self.kv_used += B * k * e
                    fin = []
                    for r in self.decoding:
                        r.gen += k * e
                        if r.gen >= r.out:
                            fin.append(r)
                    for r in fin:
                        over_steps = (r.gen - r.out) / e
                        tf = t - over_steps * s
                        self.finish(r, tf)
                if p:
                    left = k * p
                    while left > 0 and self.prefilling:
                        r = self.prefilling[0]
                        use = min(left, r.pre)
                        r.pre -= use
                        left -= use
                        if r.pre <= 0:
                            self.prefilling.pop(0)
                            r.t_first = t
                            self.h_obs("ttft", r.t_first - r.arr, 1)
                            self.ttft_tick.observe(r.t_first - r.arr)
                            self.c["pre_s"] += r.t_first - r.t_sched
                            r.gen = 1
                            self.c["gen"] += r.n
                            self.kv_used += r.n
                            self.decoding.append(r)
            self.cursor = t
        # GPU activity
        for r_, g in enumerate(self.gpus):
            u = min(busy[r_], tick)
            w.add(g, i, u, smx[r_] / max(busy[r_], 1e-9), byt, flo, self.workers[min(r_, len(self.workers) - 1)])
            if other[r_] > 0:
                oth = min(other[r_] * tick, tick - u)
                w.add(g, i, oth, 0.85, oth * w.board.hbm * 0.35, oth * w.board.tflops * 0.45, self.shared_proc.get(g))
            if self.tp > 1:
                w.nvlink[g][i] += steps_tick * 2 * self.m.layers * 4096 * 2 * 8
        # CPU: the engine core thread spins while it has work; the API server tokenizes
        active = 1.0 if steps_tick else 0.05
        want_core = active * (1.0 if self.kind != "llamacpp" else 0.6) + 0.03
        want_api = self.api_cpu + 0.004 * self.rate_fn(t0)
        quota = env.get("quota")
        want = want_core * max(1, len(self.workers) if self.kind != "llamacpp" else 1) + want_api
        got = want * phi
        thr = 0
        if quota is not None:
            self.periods += int(round(tick * 10))
            if want > quota * 0.9:
                thr = int(round(tick * 10 * min(1.0, 0.55 + 0.5 * (want - quota) / quota)))
            elif want > quota * 0.6:
                thr = int(round(tick * 10 * w.rng.uniform(0.0, 0.15)))
            self.throttled += thr
        self.cpu_total += got * tick
        w.cpu(i, self.api, want_api, want_api * phi)
        for p in self.workers if self.kind != "llamacpp" else []:
            w.cpu(i, p, want_core, want_core * phi)
        if self.kind == "llamacpp":
            w.cpu(i, self.api, want_core, want_core * phi)
        w.contended[i] = max(w.contended[i], env.get("psi", 0.0))
        w.hog[i] += env.get("hog", 0.0)
        self.busiest += want_core * phi * tick
        self.ctx_inv += int(tick * (3 + 400 * (1 - phi) + (40 if jit[0] else 0)) * (1 + 0.3 * w.rng.random()))
        self.ctx_vol += int(tick * (300 + 20 * steps_tick / tick) * (0.8 + 0.4 * w.rng.random()))
        # eBPF launch histograms of the first worker
        if w.ebpf:
            pid = self.workers[0].pid
            hs = []
            if graph_launch:
                hs.append(w.launch_hist(i, pid, "cudaGraphLaunch", graph_launch, 9000, jit[0]))
            h2 = w.launch_hist(i, pid, "cudaLaunchKernel", eager_launch, 4200, jit[0])
            if h2:
                hs.append(h2)
            w.launch[i] = tuple(h for h in hs if h)
            w.offcpu[i] = int(tick * (40 + 3000 * jit[0] * 10 + 200 * (1 - phi)) * (0.8 + 0.4 * w.rng.random()))
        self.time = t0 + tick
        self.stat.append(dict(steps=steps_tick, heavy=heavy_active_s / tick, kvshare=kv_rd / all_rd if all_rd else 0.0, pre_dec=pre_dec / tick))
        self.cpu_hist.append(round(self.cpu_total, 2))
        self.sample(i, env, quota)

    def h_obs(self, name, v, n):
        if name == "itl":
            self.itl_tick.observe(v, n)
        h = self.h.get(name)
        if h is not None:
            h.observe(v, n)

    def admit(self, t):
        while self.waiting and self.waiting[0].arr <= t:
            seqs = sum(r.n for r in self.decoding) + sum(r.n for r in self.prefilling)
            r = self.waiting[0]
            if seqs + r.n > self.max_seqs:
                return
            need = r.prompt + r.n * 16
            if self.kv_used + need > self.pool * 0.99:
                return
            self.waiting.pop(0)
            if r.t_sched is None:
                r.t_sched = t
                self.h_obs("queue", t - r.arr, 1)
                self.c["prompt"] += r.prompt
                self.c["cached"] += r.cached
                if self.kind == "vllm":
                    self.h["params_n"].observe(r.n)
                    self.h["params_max_tokens"].observe(r.max_tokens)
            self.kv_used += r.prompt
            self.prefilling.append(r)

    def preempt(self, t):
        r = self.decoding.pop()  # the newest
        self.kv_used -= r.prompt + r.gen * r.n
        self.kv_used = max(0.0, self.kv_used)
        if self.kind == "sglang":
            self.c["retr"] += 1
            self.c["retr_tok"] += r.prompt
        else:
            self.c["pre"] += 1
        # recompute: prompt and what was generated go back through prefill
        r.pre = r.prompt + int(r.gen)
        r.cached = 0
        self.waiting.insert(0, r)

    def finish(self, r, tf):
        self.decoding.remove(r)
        self.kv_used -= r.prompt + r.gen * r.n
        self.kv_used = max(0.0, self.kv_used)
        if self.evictable:
            self.evict = min(self.pool * 0.6, self.evict + r.prompt * 0.5)
        self.c["fin"] += 1
        e2e = tf - r.arr
        self.h_obs("e2e", e2e, 1)
        if self.kind == "vllm":
            self.h["tpot"].observe((tf - r.t_first) / max(1, r.out - 1))
            self.h["max_generation_tokens"].observe(r.out)
        self.c["dec_s"] += tf - r.t_first

    # ------------------------------------------------------------------ scrape
    def sample(self, i, env, quota):
        w = self.w
        rng = w.rng
        if self.last_sample is not None and rng.random() < self.scrape_miss:
            age = round(w.tick + rng.uniform(0.05, 0.6), 3)
            w.engine_samples[i] = self.last_sample
            w.engine_status[i] = SourceStatus(True, age_s=age, poll_s=round(1.0 + rng.uniform(0, 0.8), 4),
                                              poll_median_s=0.03)
            return
        c = self.c
        kind = self.kind
        running = float(len(self.decoding) + len(self.prefilling))
        waiting = float(len(self.waiting))
        kvu = min(1.0, self.kv_used / self.pool)
        taken = w.t(i) + w.tick - rng.uniform(0.01, 0.05)
        mono = round(w.start_mono + taken, 6)
        wall = round(w.start_wall + taken, 6)
        cpu_s = round(self.cpu_total, 2)
        common = dict(url=self.url, model=self.m.name, time_mono_s=mono, time_wall_s=wall,
                      pids=tuple([self.api.pid] + [p.pid for p in self.workers if p is not self.api]),
                      tensor_parallel=self.tp, data_parallel=self.data_parallel,
                      cpu_s=cpu_s, ctx_involuntary=self.ctx_inv,
                      busiest_thread_cpu_s=round(self.busiest, 2),
                      busiest_thread=f"{self.workers[0].pid} {self.workers[0].name[:15]}",
                      cpu_quota_cores=quota, cpu_periods=self.periods if quota else None,
                      cpu_throttled_periods=self.throttled if quota else None)
        if kind == "vllm":
            blocks = int(self.pool // 16)
            sp = {}
            if self.spec:
                sp = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtok"]),
                          spec_accepted_tokens_total=round(c["acc"]))
            es = EngineSample(
                kind="vllm", generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                requests_finished_total=float(c["fin"]), requests_running=running,
                requests_waiting=waiting, kv_usage_ratio=round(kvu, 6), num_gpu_blocks=blocks,
                block_size=16, kv_pool_bytes=int(blocks * 16 * self.kvb_g),
                kv_pool_tokens=blocks * 16, cache_dtype="auto",
                histograms=tuple(h.snap(n) for n, h in self.h.items()),
                preemptions_total=float(c["pre"]),
                waiting_by_reason={"capacity": waiting if kvu > 0.9 else 0.0, "deferred": 0.0},
                flops_total=float(round(c["flops"])), read_bytes_total=float(round(c["rb"])),
                write_bytes_total=float(round(c["wb"])),
                prefill_seconds_total=round(c["pre_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                **sp, **common)
        elif kind == "sglang":
            used = self.kv_used
            ev = min(self.evict, self.pool - used)
            sp = {}
            if self.spec:
                kk, afn, _ = self.spec
                a = max(0.0, min(0.99, afn(w.t(i))))
                e = (1 - a ** (kk + 1)) / (1 - a)
                sp = dict(spec_accept_ratio=round((e - 1) / kk, 4), spec_accept_length=round(e, 4))
            es = EngineSample(
                kind="sglang", generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                requests_finished_total=float(c["fin"]), requests_running=running,
                requests_waiting=waiting, kv_usage_ratio=round(kvu, 6),
                kv_pool_tokens=int(self.pool), kv_used_tokens=float(round(used)),
                kv_free_tokens=float(round(self.pool - used - ev)),
                kv_evictable_tokens=float(round(ev)),
                retracted_requests_total=float(c["retr"]),
                retracted_input_tokens_total=float(c["retr_tok"]),
                forward_seconds_total=round(c["fwd_s"], 4),
                histograms=tuple(h.snap(n) for n, h in self.h.items()), **sp, **common)
        else:
            sp = {}
            if self.spec:
                sp = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtok"]),
                          spec_accepted_tokens_total=round(c["acc"]))
            es = EngineSample(
                kind="llamacpp", generation_tokens_total=float(round(c["gen"])),
                prompt_tokens_total=float(round(c["prompt"])),
                prompt_tokens_cached_total=float(round(c["cached"])),
                requests_running=running, requests_waiting=waiting,
                prefill_seconds_total=round(c["pre_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
                decode_steps_total=float(c["steps"]), **sp, **common)
        self.last_sample = es
        w.engine_samples[i] = es
        w.engine_status[i] = SourceStatus(True, age_s=0.0, poll_s=round(0.02 + rng.uniform(0, 0.02) / max(0.2, env.get("phi", 1.0)), 5),
                                          poll_median_s=0.027)

    def pinned(self, i, cores):
        """The pin source's view of the engine's tree (only where the customer pinned it)."""
        w = self.w
        procs = [self.api] + [p for p in self.workers if p is not self.api]
        cpu = self.cpu_hist[i] if i < len(self.cpu_hist) else self.cpu_total
        threads = [ThreadSample(tid=self.workers[0].pid + 35, pid=self.workers[0].pid,
                                name=self.workers[0].name[:15], cpu_s=round(self.busiest, 2)),
                   ThreadSample(tid=self.api.pid, pid=self.api.pid, name=self.api.name[:15],
                                cpu_s=round(self.api.cpu_s * 0.8, 2)),
                   ThreadSample(tid=self.workers[0].pid + 3, pid=self.workers[0].pid,
                                name="cuda-EvtHandlr", cpu_s=round(0.01 * w.t(i), 2))]
        env = self.cpu_fn(i)
        quota = env.get("quota")
        return PinnedSample(label=self.api.cmdline[:60] + "…", root_pids=(self.api.pid,),
                            tree_pids=tuple(p.pid for p in procs), cpu_s=round(cpu, 2),
                            ctx_voluntary=self.ctx_vol, ctx_involuntary=self.ctx_inv,
                            threads=tuple(threads), cores=tuple(cores),
                            cpu_pressure_some_pct=round(w.psi, 2),
                            run_queue=w.host_samples[i].run_queue if w.host_samples[i] else None,
                            listening_ports=(self.port,), cpu_quota_cores=quota,
                            cpu_periods=self.periods if quota else None,
                            cpu_throttled_periods=self.throttled if quota else None)
