"""A serving engine on one node: requests, a continuous-batching scheduler, KV pool, step times
from bytes and FLOPs, and the engine's own /metrics as gputop reads them."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from . import common as C
from .world import Component, Out

VLLM_B = dict(
    ttft=(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    itl=(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0),
    e2e=(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    params_n=(1.0, 2.0, 5.0, 10.0, 20.0),
    params_max_tokens=(1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0),
)
VLLM_B["tpot"] = VLLM_B["itl"]
VLLM_B["queue"] = VLLM_B["e2e"]
VLLM_B["max_generation_tokens"] = VLLM_B["params_max_tokens"]
SGL_B = dict(
    ttft=(0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0),
    itl=(0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    e2e=(0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    queue=(0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0),
)
# TGI router: durations on a geometric ladder 1e-4 x 1.5^k (35 buckets)
TGI_DUR = tuple(round(1e-4 * 1.5 ** k, 9) for k in range(1, 36))
TGI_B = dict(tpot=TGI_DUR, e2e=TGI_DUR, queue=TGI_DUR)


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    wbytes: float = 2.0      # bytes per parameter (bf16 2, AWQ/GGUF Q4 ~0.56)
    kv_bytes: int = 2

    def weights(self, tp=1):
        return self.params_b * 1e9 * self.wbytes / tp

    def kv_tok(self, tp=1):
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kv_bytes


MODELS = {
    "llama3-8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 8, 128, 4096, 128256),
    "llama3-70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8, 128, 8192, 128256),
    "qwen-7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 4, 128, 3584, 152064),
    "qwen-14b": Model("Qwen/Qwen2.5-14B-Instruct", 14.8, 48, 8, 128, 5120, 152064),
    "qwen-32b-awq": Model("Qwen/Qwen2.5-32B-Instruct-AWQ", 32.8, 64, 8, 128, 5120, 152064, 0.6),
    "mistral-7b": Model("mistralai/Mistral-7B-Instruct-v0.3", 7.25, 32, 8, 128, 4096, 32768),
    "gemma-9b": Model("google/gemma-2-9b-it", 9.2, 42, 8, 256, 3584, 256000),
    "phi3-mini": Model("microsoft/Phi-3-mini-4k-instruct", 3.8, 32, 32, 96, 3072, 32064),
    "llama3-8b-q4": Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03, 32, 8, 128, 4096, 128256, 0.6),
    "qwen-1.5b-q8": Model("qwen2.5-1.5b-instruct-q8_0.gguf", 1.54, 28, 2, 128, 1536, 151936, 1.07),
}


@dataclass
class Req:
    arrival: float
    prompt: int
    out: int
    n: int = 1
    logprobs: int = 0
    plp: int = 0            # prompt_logprobs
    cached: int = 0
    max_tokens: int = 0
    prefill_left: int = 0
    gen: int = 0
    admitted: float | None = None
    first: float | None = None
    reserve: int = 0
    tag: str = ""


def _pois(rng, lam):
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p < L:
            return k
        k += 1


class Serve(Component):
    """kind: vllm | vllm0 | sglang | llamacpp | tgi."""

    def __init__(self, rng, kind, model: Model, gpus, board: C.Board, *, start_wall, tp=1,
                 max_seqs=256, budget=8192, mem_util=0.9, pool_tokens=None, graphs=True,
                 rate=lambda t: 1.0, lengths=None, specials=(), spec=None, mods=None,
                 user="svc-llm", slurm=None, pod="", port=8000, cores_granted=None, quota=None,
                 prefix_hit=0.0, startup=0.0, restarts=(), mfu=False, eager_ops=1.0, engine_visible=True,
                 cmd_extra=""):
        self.rng, self.kind, self.m, self.gpus, self.b = rng, kind, model, tuple(gpus), board
        self.tp = tp
        self.max_seqs, self.budget, self.graphs = max_seqs, budget, graphs
        self.rate, self.lengths = rate, lengths or (lambda r: (int(r.lognormvariate(6.3, 0.7)), int(r.lognormvariate(5.2, 0.6))))
        self.specials = sorted(specials, key=lambda s: s[0])
        self.spec = spec            # dict(k, accept: t->a, draft_cost)
        self.mods = mods or (lambda t: {})
        self.prefix_hit, self.mfu, self.eager_ops = prefix_hit, mfu, eager_ops
        self.port = port
        self.w = model.weights(tp)
        self.kvt = model.kv_tok(tp)
        total = board.mem_gib * C.GiB
        if kind in ("vllm", "vllm0"):
            act = 1.2 * C.GiB + 0.4 * C.GiB * (budget / 8192)
            pool_b = total * mem_util - self.w - act - 0.6 * C.GiB
            self.block = 16
            self.blocks = int(pool_b // (self.kvt * self.block))
            self.pool = self.blocks * self.block
            self.mem_engine = self.w + act + 0.6 * C.GiB + self.blocks * self.block * self.kvt + 0.5 * C.GiB
        elif kind == "sglang":
            pool_b = total * mem_util - self.w - 2.0 * C.GiB
            self.pool = int(pool_b // self.kvt)
            self.block = 1
            self.blocks = None
            self.mem_engine = self.w + 2.0 * C.GiB + self.pool * self.kvt + 0.5 * C.GiB
        elif kind == "llamacpp":
            self.pool = pool_tokens or 4096 * max_seqs
            self.block = None
            self.blocks = None
            self.mem_engine = self.w + self.pool * self.kvt + 0.4 * C.GiB + 0.25 * C.GiB
        else:  # tgi: max_batch_total_tokens from the memory left
            pool_b = total * mem_util - self.w - 1.5 * C.GiB
            self.pool = pool_tokens or int(pool_b // self.kvt)
            self.block = 16
            self.blocks = None
            self.mem_engine = self.w + 1.5 * C.GiB + self.pool * self.kvt + 0.5 * C.GiB
        if pool_tokens and kind != "tgi":
            self.pool = pool_tokens
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.t_boot = startup
        self.restarts = list(restarts)   # (t_down, down_s)
        self.start_wall = start_wall
        self.cores_granted, self.quota = cores_granted, quota
        job = slurm
        names = {"vllm": "python3", "vllm0": "python3", "sglang": "python3", "llamacpp": "llama-server",
                 "tgi": "text-generation-launcher"}
        self.user, self.job, self.podname = user, job, pod
        self.cmd = {
            "vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {model.name} --port {port} --tensor-parallel-size {tp} --gpu-memory-utilization {mem_util} --max-num-seqs {max_seqs}{cmd_extra}",
            "vllm0": f"python3 -m vllm.entrypoints.openai.api_server --model {model.name} --port {port} -tp {tp} --gpu-memory-utilization {mem_util}{cmd_extra}",
            "sglang": f"python3 -m sglang.launch_server --model-path {model.name} --port {port} --tp {tp} --mem-fraction-static {mem_util} --enable-metrics{cmd_extra}",
            "llamacpp": f"/opt/llama.cpp/build/bin/llama-server -m /scratch/models/{model.name} -ngl 99 -c {self.pool} -np {max_seqs} --metrics --port {port}{cmd_extra}",
            "tgi": f"text-generation-launcher --model-id {model.name} --port {port} --num-shard {tp}{cmd_extra}",
        }[kind]
        self.pname = names[kind]
        self.gen_no = 0
        self._new_process(start_wall - (0 if startup else 3600 * (1 + rng.random() * 20)))
        self.engine_visible = engine_visible
        self.last_eng = None
        self.miss_run = 0
        self.log = []
        self.ebpf = False
        self.prefix_fixed = False

    # ------------------------------------------------------------------ lifecycle
    def _new_process(self, start):
        r = self.rng
        self.gen_no += 1
        base = r.randint(200000, 3900000)
        slurm = (self.job, "0") if self.job else ("", "")
        cg = ""
        cont = ""
        if self.podname:
            cid = "%012x" % r.getrandbits(48)
            cont = f"containerd:{cid}"
            cg = f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{r.getrandbits(32):08x}.slice/cri-containerd-{cid}.scope"
        self.api = C.Proc(base, self.pname, self.cmd, self.user, start, ppid=base - 3, slurm=slurm,
                          pod=self.podname, container=cont, cgroup=cg)
        self.api.rss = int(4.5 * C.GiB)
        self.workers = []
        if self.kind in ("llamacpp",):
            self.workers = [self.api]
        else:
            for k, g in enumerate(self.gpus):
                p = C.Proc(base + 40 + k, "python3" if self.kind != "tgi" else "text-generation-server",
                           self.cmd if self.kind != "tgi" else f"text-generation-server serve {self.m.name} --sharded --rank {k}",
                           self.user, start + 5, ppid=base, slurm=slurm, pod=self.podname, container=cont, cgroup=cg)
                p.rss = int(6 * C.GiB)
                self.workers.append(p)
        tree = [self.api.pid] + [w.pid for w in self.workers if w is not self.api]
        threads = [(self.api.pid, self.api.pid, self.pname)]
        if self.kind in ("vllm", "vllm0", "sglang", "tgi"):
            for w in self.workers:
                threads.append((w.pid, w.pid, "VLLM::Worker" if self.kind == "vllm" and self.tp > 1 else
                                ("EngineCore" if self.kind == "vllm" else "scheduler" if self.kind == "sglang" else "python3")))
        threads += [(self.api.pid + 2, self.api.pid, "uvicorn" if self.kind != "llamacpp" else "llama-server"),
                    (self.api.pid + 5, self.api.pid, "tokenizer")]
        cores = tuple(range(self.cores_granted)) if self.cores_granted else tuple(range(0, 32))
        self.pin = C.Pinned(self.cmd[:60] + "…", self.api.pid, tree, threads, cores,
                            quota=self.quota)
        self.counters = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                             drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                             flops=0.0, rd=0.0, wr=0.0)
        B = {"vllm": VLLM_B, "vllm0": VLLM_B, "sglang": SGL_B, "tgi": TGI_B}.get(self.kind, {})
        self.h = {k: C.Hist(k, v) for k, v in B.items()}
        self.waiting, self.running = [], []
        self.up_at = start + self.t_boot - self.start_wall if self.t_boot else -1e9
        self.t_boot = 0
        self.proc_start = start

    # ------------------------------------------------------------------ model
    def demand(self, t):
        return {g: 0.9 if self.running or self.waiting else 0.0 for g in self.gpus}

    def _is_down(self, t):
        for t0, d in self.restarts:
            if t0 <= t < t0 + d:
                return t0
        return None

    def advance(self, t, dt, speed):
        r = self.rng
        o = Out()
        mods = self.mods(t)
        down = self._is_down(t)
        if down is not None:
            # the process died; a wrapper restarts it after the outage
            if not getattr(self, "_dead", False):
                self._dead = True
            o.engine_status = (False, "connection refused")
            o.cores = 0.1
            if t + dt >= down + [d for t0, d in self.restarts if t0 == down][0]:
                self._dead = False
                self.t_boot = 45.0
                self._new_process(self.start_wall + t + dt)
            for g in self.gpus:
                o.loads[g] = C.Load()
            self._arrivals(t, dt, drop=True)
            return o
        boot_left = self.up_at - t
        # ---- start-up: weights load, profile run, KV allocation, CUDA graph capture
        if boot_left > 0:
            frac = 1 - boot_left / max(1.0, self.up_at - (self.proc_start - self.start_wall))
            mem = self.w * min(1, frac / 0.5) + (0.5 * C.GiB)
            busy = 0.0
            lo = C.Load()
            if frac > 0.55:
                mem = self.mem_engine * 0.98
            if 0.55 < frac < 0.7:
                lo = C.Load(0.9, 0.85, 0.5, 0.6, 0.5)
            elif frac >= 0.7 and self.graphs:
                lo = C.Load(0.55, 0.06, 0.03, 0.02, 0.03, burst_s=0.5)
            elif frac < 0.55:
                lo = C.Load(0.0, 0, 0, 0, 0, pcie_rx=1800 * (1 if frac < 0.5 else 0))
            for w, g in zip(self.workers, self.gpus):
                o.loads[g] = lo
                w.tick(1.0, dt)
                o.procs.append((w, g, mem / len(self.gpus) * (1 if self.tp == 1 else 1)))
            if self.kind != "llamacpp":
                self.api.tick(0.8, dt)
            o.cores = 1.0 + len(self.workers)
            o.runnable = o.cores
            o.engine_status = (False, "connection refused")
            self.pin.tick({self.pname: 0.8}, dt, 5, 200, rng=r)
            o.pinned = self.pin.sample(None, None, (self.port,))
            self._arrivals(t, dt, drop=True)
            return o
        self._arrivals(t, dt)
        f_clock = min(speed[g][0] for g in self.gpus)
        share = min(speed[g][1] for g in self.gpus)
        steal = mods.get("gpu_steal", 0.0)
        share = share * (1 - steal)
        host_delay = mods.get("host_delay", 0.0)     # extra exposed host time per step
        cpu_slow = mods.get("cpu_slow", 1.0)         # host work takes this many times longer
        self._admit(t)
        # ---- step model
        hbm = self.b.hbm_gbs * 1e9 * 0.82 * (0.55 + 0.45 * f_clock) ** 0.3
        flops = self.b.tflops * 1e12 * 0.55 * f_clock
        dec = [q for q in self.running if q.prefill_left == 0]
        pf = [q for q in self.running if q.prefill_left > 0]
        B = sum(q.n for q in dec)
        ctx = sum((q.prompt + q.gen) * q.n for q in dec)
        k = 0
        acc_mean = 0.0
        if self.spec:
            k = self.spec["k"]
            a = self.spec["accept"](t)
            acc_mean = sum(a ** i for i in range(1, k + 1))
        verify = (k + 1) if k else 1
        t_mem = (self.w + ctx * self.kvt * mods.get("kv_read_mult", 1.0)) / hbm
        t_cmp = 2 * self.m.params_b * 1e9 / self.tp * B * verify / flops
        kern = (0.0012 if self.graphs else 0.00018 * self.m.layers * 3 * self.eager_ops)
        t_gpu = max(t_mem, t_cmp) + kern + (0.0004 * self.m.layers / 32 if self.tp > 1 else 0)
        if k:
            t_gpu += self.spec.get("draft_cost", 0.1) * t_gpu
        # logprobs / n>1 sampling work on huge vocab rows (GPU sorts + host serialisation)
        lp_rows = sum(q.n for q in dec if q.logprobs)
        lp_k = max([q.logprobs for q in dec if q.logprobs] or [0])
        t_lp_gpu = lp_rows * self.m.vocab * 2.5e-10 * (1 + lp_k / 10)
        t_lp_host = lp_rows * lp_k * 0.00045
        t_host = (0.0025 + 0.000025 * B) * cpu_slow + t_lp_host
        exposed = max(0.0, t_host - (0.6 * t_gpu if self.kind in ("vllm", "sglang") else 0.15 * t_gpu))
        t_step = (t_gpu + t_lp_gpu) / max(0.05, share) + exposed + host_delay
        # prefill (chunked: pieces of `budget` tokens ride with decode steps)
        pf_tokens = sum(q.prefill_left for q in pf)
        # prompt_logprobs: logits for every prompt position, then top-k objects built and
        # detokenised on the engine-core thread (host time that blocks the loop)
        plp_extra = sum(q.prefill_left * q.plp for q in pf if q.plp) * (self.m.vocab * 1.0e-12 + 2.0e-5)
        avg_ctx = (sum(q.prompt for q in pf) / len(pf)) if pf else 0
        c_tok = 2 * self.m.params_b * 1e9 / self.tp / (flops * 1.1) * (1 + avg_ctx / 24000) / max(0.05, share)
        chunk = max(256, self.budget - B)
        if self.kind == "tgi" or self.kind == "vllm0":
            chunk = max(chunk, pf_tokens)      # whole prompts in one prefill pass
        pf_steps_needed = math.ceil(pf_tokens / chunk) if pf_tokens else 0
        t_chunk_step = t_step + chunk * c_tok + (plp_extra / max(1, pf_steps_needed) if pf_steps_needed else 0)
        if pf_steps_needed * t_chunk_step >= dt:
            n_pf_steps = dt / t_chunk_step
            pf_done = int(n_pf_steps * chunk)
            n_plain = 0.0
            t_pf_steps = dt
        else:
            n_pf_steps = pf_steps_needed
            pf_done = pf_tokens
            t_pf_steps = pf_tokens * c_tok + n_pf_steps * t_step + plp_extra
            n_plain = (dt - t_pf_steps) / t_step if (dec or pf) else 0.0
        steps = n_pf_steps + n_plain if dec else 0.0
        itl_pf = t_pf_steps / n_pf_steps if n_pf_steps else 0
        # ---- advance requests
        left = pf_done
        now = t + dt
        for q in pf:
            take = min(left, q.prefill_left)
            q.prefill_left -= take
            left -= take
            if q.prefill_left == 0:
                q.first = now - r.random() * dt * 0.5
                if self.kind != "tgi":
                    self._obs("ttft", 1, q.first - q.arrival, 0.1)
                self.counters["pf_s"] += q.first - q.admitted
            if left <= 0:
                break
        tok_per_step = 1 + acc_mean
        gen_now = 0.0
        finished = []
        for q in dec:
            g = min(q.out - q.gen, int(round(steps * tok_per_step + r.random() - 0.5)))
            g = max(0, g)
            q.gen += g
            gen_now += g * q.n
            if q.gen >= q.out:
                finished.append(q)
        for q in finished:
            self.running.remove(q)
            if q.tag:
                self.log.append((q.arrival, now))
            e2e = now - q.arrival
            self.counters["fin"] += 1
            dec_t = max(0.001, now - (q.first or now))
            self.counters["dec_s"] += dec_t
            self._obs("e2e", 1, e2e, 0.05)
            self._obs("tpot", 1, dec_t / max(1, q.out - 1), 0.1)
            self._obs("max_generation_tokens", 1, q.out, 0.01)
            self._obs("params_max_tokens", 1, q.max_tokens or max(q.out, 256), 0.01)
            self._obs("params_n", 1, q.n, 0.01)
            if self.kind == "tgi":
                self._obs("ttft", 1, (q.first or now) - q.arrival, 0.1)
        # ITL observations
        if dec and steps > 0:
            n_tok_pf = int(B * n_pf_steps)
            n_tok_plain = int(B * n_plain)
            self._obs("itl", n_tok_pf, itl_pf, 0.2)
            self._obs("itl", n_tok_plain, t_step, 0.12 + (0.4 if host_delay else 0))
        self.counters["gen"] += gen_now
        self.counters["steps"] += steps if dec else n_pf_steps
        if self.spec and dec:
            nd = B * steps
            self.counters["drafts"] += nd
            self.counters["dtok"] += nd * k
            self.counters["acc"] += nd * acc_mean
        # ---- KV accounting, preemption
        used = sum((q.prompt - q.prefill_left + q.gen) * q.n for q in self.running)
        while used > self.pool and len(self.running) > 1 and self.kind != "tgi":
            victim = self.running.pop()
            used -= (victim.prompt - victim.prefill_left + victim.gen) * victim.n
            if self.kind == "sglang":
                self.counters["retr"] += 1
                self.counters["retr_tok"] += victim.prompt
            else:
                self.counters["pre"] += 1
            victim.prefill_left = victim.prompt + victim.gen
            victim.admitted = None
            self.waiting.insert(0, victim)
        self.used = used
        # ---- GPU load
        t_busy_gpu = (steps * (t_gpu + t_lp_gpu) + pf_done * c_tok * share) if (dec or pf) else 0.0
        busy = C.clip(t_busy_gpu / dt * share + (steal if (dec or pf) else 0) + mods.get("extra_busy", 0.0))
        fr_pf = C.clip(pf_done * c_tok * share / dt)
        fr_dec = C.clip(busy - fr_pf - steal)
        bytes_moved = steps * (self.w + ctx * self.kvt * mods.get("kv_read_mult", 1.0)) + pf_done * 0.02 * self.w / 1000
        dram = C.clip(bytes_moved / dt / (self.b.hbm_gbs * 1e9) + 0.05 * fr_pf)
        occ_dec = 0.25 if self.graphs else 0.12
        sm_dec = (0.5 + 0.35 * min(1, B / 96)) if self.graphs else (0.18 + 0.2 * min(1, B / 96)) / self.eager_ops ** 0.5
        tensor_dec = 0.02 + 0.18 * min(1, B * verify / 256)
        sm = C.clip(fr_dec * sm_dec + fr_pf * 0.92 + steal * mods.get("steal_sm", 0.6))
        tensor = C.clip(fr_dec * tensor_dec + fr_pf * 0.55 + steal * mods.get("steal_tensor", 0.3))
        occ = C.clip(fr_dec * occ_dec + fr_pf * 0.45 + steal * 0.3)
        burst = 0.0
        if self.kind in ("tgi", "llamacpp") and exposed > 0.003:
            burst = t_step
        for w, g in zip(self.workers, self.gpus):
            o.loads[g] = C.Load(busy, sm, occ, tensor, dram, pcie_rx=30 + 8 * B, pcie_tx=20 + 10 * B,
                                nvl_rx=(4000 * busy if self.tp > 1 else 0), nvl_tx=(4000 * busy if self.tp > 1 else 0),
                                burst_s=burst)
            w.sm_util = (busy - steal) * 100
            w.mem_util = dram * 100
            o.procs.append((w, g, self.mem_engine if w is not self.api or self.kind == "llamacpp" else 0))
        if self.kind not in ("llamacpp",):
            o.procs.append((self.api, self.gpus[0], 0.5 * C.GiB)) if False else None
        # ---- host CPU
        active = bool(dec or pf)
        eng_core = C.clip((t_host * steps / dt) if active else 0.02, 0, 1.0)
        if mods.get("cpu_starve"):
            eng_core *= (1 - mods["cpu_starve"])
        api_core = 0.05 + 0.002 * self._rate_now * (1 + lp_k / 4)
        for w in self.workers:
            w.tick(eng_core if w is not self.api else eng_core + api_core, dt)
        if self.kind != "llamacpp":
            self.api.tick(api_core, dt)
        o.cores = eng_core * len(self.workers) + api_core + mods.get("other_cores", 0.0)
        o.runnable = o.cores + mods.get("other_runnable", 0.0)
        o.psi = mods.get("psi", 0.0)
        o.ctx_rate = 500 + 30 * steps
        inv = mods.get("invol_rate", 3 + 0.5 * steps * 0.05)
        thr = mods.get("throttled_frac", 0.0)
        rates = {self.pname: api_core, "EngineCore": eng_core, "VLLM::Worker": eng_core * 0.8,
                 "scheduler": eng_core, "python3": eng_core, "uvicorn": api_core * 0.4, "tokenizer": api_core * 0.3,
                 "llama-server": eng_core}
        self.pin.tick(rates, dt, inv, 50 + steps, thr, rng=r)
        psi_v = o.psi + (mods.get("psi_host", 0.0))
        o.pinned = self.pin.sample(round(psi_v, 2), None, (self.port,))
        o.pinned = o.pinned.__class__(**{**_fields(o.pinned), "run_queue": int(max(1, 2 + o.runnable + mods.get("other_runnable", 0) + r.gauss(0, 0.7)))})
        # ---- engine page
        if self.engine_visible:
            o.engine_status = (True, None)
            miss = r.random() < mods.get("scrape_miss", 0.01)
            if miss and self.last_eng is not None and self.miss_run < 2:
                self.miss_run += 1
                o.engine, o.engine_age = self.last_eng, dt * self.miss_run
            elif miss and self.last_eng is not None:
                o.engine_status = (False, "timed out after 2 s")
                o.engine = None
            else:
                self.miss_run = 0
                o.engine = self._engine_sample(t + dt + 0.02 + 0.03 * r.random())
                self.last_eng = o.engine
        if self.mfu:
            self.counters["flops"] += 2 * self.m.params_b * 1e9 / self.tp * (gen_now + pf_done)
            self.counters["rd"] += bytes_moved
            self.counters["wr"] += (gen_now + pf_done) * self.kvt
        self.counters["fwd_s"] += t_busy_gpu
        if self.ebpf and (dec or pf):
            jt = mods.get("jitter", (0.0, 0.0))
            for w in self.workers:
                if self.graphs:
                    o.launch.append(C.launch_hist(r, "cudaGraphLaunch", w.pid, int(steps), 9.0, jt[0], jt[1]))
                    o.launch.append(C.launch_hist(r, "cudaLaunchKernel", w.pid, int(steps * 12 + pf_done / 20), 4.0, jt[0], jt[1]))
                else:
                    o.launch.append(C.launch_hist(r, "cudaLaunchKernel", w.pid, int(steps * self.m.layers * 9), 4.0, jt[0], jt[1]))
            o.offcpu = int(mods.get("offcpu", 4))
        return o

    def _obs(self, name, n, v, sigma):
        h = self.h.get(name)
        if h is not None and n > 0 and v > 0:
            if n == 1:
                h.observe1(v * math.exp(self.rng.gauss(0, sigma)))
            else:
                h.observe(n, v, sigma)

    def _arrivals(self, t, dt, drop=False):
        r = self.rng
        lam = self.rate(t) * dt
        self._rate_now = self.rate(t)
        reqs = []
        for _ in range(_pois(r, lam)):
            p, out = self.lengths(r)
            reqs.append(Req(t + r.random() * dt, max(8, p), max(1, out)))
        while self.specials and self.specials[0][0] < t + dt:
            _, kw = self.specials.pop(0)
            reqs.append(Req(t + r.random() * dt, **kw))
        if drop:
            return
        for q in reqs:
            if self.prefix_fixed:
                q.cached = int(q.prompt * self.prefix_hit * (0.97 + 0.03 * r.random()))
            else:
                q.cached = int(q.prompt * self.prefix_hit * r.random() * 2) if self.prefix_hit else 0
            q.cached = min(q.cached, q.prompt - 1)
            q.prefill_left = q.prompt - q.cached
            q.reserve = q.prompt + (q.max_tokens or max(q.out, 512))
            self.waiting.append(q)
            self.counters["prompt"] += q.prompt
            self.counters["cached"] += q.cached

    def _admit(self, t):
        used = sum((q.prompt - q.prefill_left + q.gen) * q.n + q.prefill_left for q in self.running)
        reserved = sum(q.reserve for q in self.running)
        while self.waiting and len(self.running) < self.max_seqs:
            q = self.waiting[0]
            if self.kind == "tgi":
                if reserved + q.reserve > self.pool:
                    break
            elif used + q.prompt * q.n + 16 > self.pool * 0.995:
                break
            self.waiting.pop(0)
            if q.admitted is None:
                q.admitted = max(t, q.arrival)
                self._obs("queue", 1, max(1e-4, q.admitted - q.arrival), 0.05)
            self.running.append(q)
            used += q.prompt * q.n
            reserved += q.reserve

    def _engine_sample(self, tw) -> EngineSample:
        c = self.counters
        kv = min(1.0, self.used / self.pool) if self.pool else None
        hists = tuple(h.snap() for h in self.h.values())
        base = dict(model=self.m.name, url=f"http://127.0.0.1:{self.port}/metrics",
                    requests_running=float(len(self.running)), requests_waiting=float(len(self.waiting)),
                    tensor_parallel=self.tp, data_parallel=1, pids=tuple(self.pin.tree),
                    time_wall_s=round(tw, 4), time_mono_s=None, cpu_s=round(self.pin.cpu_s, 2),
                    ctx_involuntary=self.pin.invol, busiest_thread_cpu_s=round(self.pin.busiest()[3], 2),
                    busiest_thread=f"{self.pin.busiest()[0]} {self.pin.busiest()[2]}",
                    cpu_quota_cores=self.quota, cpu_periods=self.pin.periods if self.quota else None,
                    cpu_throttled_periods=self.pin.throttled if self.quota else None)
        if self.kind in ("vllm", "vllm0"):
            spec = {}
            if self.spec:
                spec = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtok"]),
                            spec_accepted_tokens_total=round(c["acc"]))
            v1 = self.kind == "vllm"
            return EngineSample(kind="vllm", generation_tokens_total=round(c["gen"]), prompt_tokens_total=round(c["prompt"]),
                                prompt_tokens_cached_total=round(c["cached"]) if v1 else None,
                                requests_finished_total=c["fin"], kv_usage_ratio=kv, num_gpu_blocks=self.blocks,
                                block_size=self.block, kv_pool_bytes=int(self.blocks * self.block * self.kvt) if v1 else None,
                                kv_pool_tokens=self.blocks * self.block if v1 else None, cache_dtype="auto",
                                histograms=tuple(h for h in hists if v1 or h.name in ("ttft", "itl", "e2e", "params_n", "params_max_tokens")),
                                preemptions_total=c["pre"],
                                waiting_by_reason={"capacity": float(len(self.waiting)), "deferred": 0.0} if v1 else {},
                                flops_total=c["flops"] if self.mfu else None, read_bytes_total=c["rd"] if self.mfu else None,
                                write_bytes_total=c["wr"] if self.mfu else None,
                                prefill_seconds_total=round(c["pf_s"], 3) if v1 else None,
                                decode_seconds_total=round(c["dec_s"], 3) if v1 else None, **spec, **base)
        if self.kind == "sglang":
            spec = {}
            if self.spec:
                a = self.spec["accept"](tw - self.start_wall)
                k = self.spec["k"]
                spec = dict(spec_accept_ratio=round(a, 3), spec_accept_length=round(1 + sum(a ** i for i in range(1, k + 1)), 3))
            evict = max(0, int(self.pool * 0.9) - self.used) if self.prefix_hit else 0
            evict = min(evict, self.pool - self.used)
            return EngineSample(kind="sglang", generation_tokens_total=round(c["gen"]), prompt_tokens_total=round(c["prompt"]),
                                prompt_tokens_cached_total=round(c["cached"]), requests_finished_total=c["fin"],
                                kv_usage_ratio=(self.used + evict) / self.pool, kv_pool_tokens=self.pool,
                                retracted_requests_total=c["retr"], retracted_input_tokens_total=c["retr_tok"],
                                kv_used_tokens=float(self.used + evict), kv_free_tokens=float(self.pool - self.used - evict),
                                kv_evictable_tokens=float(evict), forward_seconds_total=round(c["fwd_s"], 3),
                                histograms=hists, **spec, **base)
        if self.kind == "llamacpp":
            spec = {}
            if self.spec:
                spec = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtok"]),
                            spec_accepted_tokens_total=round(c["acc"]))
            return EngineSample(kind="llamacpp", generation_tokens_total=round(c["gen"]),
                                prompt_tokens_total=round(c["prompt"]), prompt_tokens_cached_total=round(c["cached"]),
                                prefill_seconds_total=round(c["pf_s"], 3), decode_seconds_total=round(c["dec_s"], 3),
                                decode_steps_total=round(c["steps"]), **spec, **base)
        return EngineSample(kind="tgi", generation_tokens_total=round(c["gen"]), prompt_tokens_total=round(c["prompt"]),
                            requests_finished_total=c["fin"], histograms=hists, **base)


def _fields(obj):
    import dataclasses
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
