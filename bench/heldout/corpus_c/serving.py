"""A serving engine as gputop sees it: its processes, its /metrics page, its launches."""

from __future__ import annotations

import math

from gputop.buckets import bucket_index
from gputop.schema import EngineSample, LaunchHist, SourceStatus

from corpus_c.hw import GIB, MIB
from corpus_c.serve import EngineCfg, Knobs, Req, ServeSim
from corpus_c.world import Contribution, Proc

EBPF_DETAIL = ("full mode; libcudart.so.12: cudaLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync, "
               "cudaStreamSynchronize; libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx")


def pool_tokens(spec, lm, tp, gmu=0.9, block=16, activations=3.0, cap=None):
    free = spec.mem_bytes * gmu - lm.weights_per_rank(tp) - activations * GIB - 0.9 * GIB
    tokens = int(max(0, free) // lm.kv_bytes_per_token(tp))
    if cap:
        tokens = min(tokens, cap)
    return tokens // block * block


class ServingJob:
    def __init__(self, world, kind, lm, gpus, knobs: Knobs, cfg: EngineCfg | None = None,
                 gmu=0.9, ebpf=False, jitter=None, down=(), port=8000, weights_known=True,
                 ctx_size=None, slots=None, container=""):
        self.w, self.kind, self.lm, self.gpus, self.k = world, kind, lm, list(gpus), knobs
        self.tp = len(self.gpus)
        spec = world.spec
        self.cfg = cfg or EngineCfg(kind=kind)
        self.cfg.kind = kind
        if kind == "llamacpp":
            self.cfg.pool_tokens = ctx_size or 32768
            self.cfg.max_seqs = slots or 4
            self.cfg.block = 1
            self.cfg.budget = 2048
            self.cfg.host_ms = 0.9
        elif not self.cfg.pool_tokens or self.cfg.pool_tokens == 200_000:
            self.cfg.pool_tokens = pool_tokens(spec, lm, self.tp, gmu, self.cfg.block)
        self.gmu = gmu
        self.ebpf, self.jitter, self.down = ebpf, jitter, list(down)
        self.port, self.weights_known, self.container = port, weights_known, container
        self.boards = [world.boards[g] for g in self.gpus]
        self.sim = None
        self.life = 0
        self.ready_at = 0.0
        self._spawn(0.0, warm=True)

    # ------------------------------------------------------------ processes
    def _spawn(self, t, warm=False):
        w, lm, kind = self.w, self.lm, self.kind
        start = w.t0_wall + t - (3600 * 5 if warm else 0)
        self.life += 1
        model = lm.name
        cg = f"/kubepods/pod{w.rng.randrange(1 << 30):x}" if self.container else \
            f"/system.slice/{kind}-serve.service"
        mk = lambda name, cmd, gpu=None, ppid=None: Proc(
            w.pid(), name, cmd, gpu, ppid=ppid, start=start, container=self.container, cgroup=cg)
        mem_rank = int(w.spec.mem_bytes * self.gmu) + 480 * MIB
        if kind == "vllm":
            self.api = mk("vllm", f"/opt/venv/bin/python3 /opt/venv/bin/vllm serve {model} "
                          f"--tensor-parallel-size {self.tp} --port {self.port}"
                          + (" --speculative-config {...}" if self.cfg.spec_k else ""))
            self.core = mk("VLLM::EngineCore", "VLLM::EngineCore",
                           self.gpus[0] if self.tp == 1 else None, self.api.pid)
            self.workers = [self.core] if self.tp == 1 else [
                mk(f"VLLM::Worker_TP{i}", f"VLLM::Worker_TP{i}", g, self.core.pid)
                for i, g in enumerate(self.gpus)]
            self.tree = [self.api, self.core] + ([] if self.tp == 1 else self.workers)
        elif kind == "sglang":
            self.api = mk("python3", f"python3 -m sglang.launch_server --model-path {model} "
                          f"--tp {self.tp} --port {self.port} --enable-metrics")
            self.workers = [mk("sglang::schedul", f"sglang::scheduler_TP{i}", g, self.api.pid)
                            for i, g in enumerate(self.gpus)]
            self.core = self.workers[0]
            detok = mk("sglang::detoken", "sglang::detokenizer", None, self.api.pid)
            self.tree = [self.api, *self.workers, detok]
            mem_rank = int(w.spec.mem_bytes * 0.88) + 520 * MIB
        else:
            pool = self.cfg.pool_tokens
            self.api = mk("llama-server", f"/usr/local/bin/llama-server -m /models/{model} "
                          f"-ngl 99 -c {pool} -np {self.cfg.max_seqs} --metrics "
                          f"--port {self.port}", self.gpus[0])
            self.core = self.api
            self.workers = [self.api]
            self.tree = [self.api]
            mem_rank = int(lm.weights_per_rank(1) + pool * lm.kv_bytes_per_token(1)
                           + 1.1 * GIB)
        for p in self.workers:
            p.mem = mem_rank
            p.rss = 6 * GIB
        self.api.rss = 3 * GIB
        self.invol = 0
        self.busiest = 0.0
        self.sim = ServeSim(self.lm, self.cfg, self.boards, self.tp, self.k, w.rng, t)
        self.specials = []

    def inject(self, req: Req) -> None:
        """A request that arrives at req.arrival (seconds from the start)."""
        self.sim.specials.append(req)
        self.sim.specials_sorted = False

    # ------------------------------------------------------------ a tick
    def tick(self, t, dt, w) -> Contribution:
        for a, b in self.down:
            if a <= t < b:
                return self._restarting(t, dt, a, b)
            if b <= t < b + dt and self.life < 2 + self.down.index((a, b)):
                self._spawn(t)
                self.ready_at = t
        share = w.share
        if self.jitter is not None:
            share *= 1 - self.jitter(t)[2]
        self.k.cpu_share = (lambda t, s=share: s)
        acts, stats = self.sim.tick(dt)
        busy_work = self.sim.N > 0 or bool(self.sim.prefill) or bool(self.sim.waiting)
        c = Contribution()
        for g, a in zip(self.gpus, acts):
            c.acts[g] = a
        # CPU: the engine core (and each TP worker) busy-polls while there is work
        cores_core = (0.97 if busy_work else 0.04)
        got = cores_core * share
        gen_rate = stats["steps"] * max(1, self.sim.N) / dt
        api_cpu = 0.06 + 0.00011 * gen_rate
        self.api.cpu_s += api_cpu * dt * min(1.0, share * 1.2)
        for p in self.workers:
            if p is not self.api:
                p.cpu_s += got * dt
        if self.kind == "llamacpp":
            self.api.cpu_s += got * dt
        self.busiest += got * 0.93 * dt
        self.invol += int((25 + (1 - share) * 1400 * len(self.workers)) * dt
                          * (1 + w.rng.gauss(0, 0.05)))
        c.cores = cores_core * len(self.workers) + api_cpu
        for p, a in zip(self.workers, acts):
            p.sm_util = float(round(100 * a.sm)) if w.spec.gpm else float(round(100 * a.busy * 0.8))
        c.procs = [p for p in self.tree if p.gpu is not None]
        c.engine = self._sample()
        c.engine_status = SourceStatus(True, age_s=0.0, poll_s=0.012 + 0.02 * (1 - share))
        if self.ebpf:
            c.launch, c.offcpu_switches = self._launches(t, dt, stats)
            c.ebpf_status = SourceStatus(True, detail=EBPF_DETAIL, poll_s=0.002)
        return c

    def _restarting(self, t, dt, a, b) -> Contribution:
        """Down for a restart: nothing listens, then the new engine loads weights, profiles
        memory and captures CUDA graphs (tiny kernels back to back) before it answers."""
        c = Contribution()
        span = b - a
        c.engine_status = SourceStatus(False, "engine unreachable: connection refused "
                                       f"(127.0.0.1:{self.port})")
        phase = (t - a) / span
        if phase < 0.15:
            return c  # the old processes are gone, the new ones not yet on the GPU
        load = min(1.0, (phase - 0.15) / 0.5)
        for p in self.workers:
            p.mem = int((self.lm.weights_per_rank(self.tp) + 0.5 * GIB) * load)
            if phase > 0.7:
                p.mem = int(self.w.spec.mem_bytes * self.gmu) + 480 * MIB
            p.cpu_s += 0.9 * dt
        for g in self.gpus:
            from corpus_c.hw import Activity
            if phase < 0.65:
                c.acts[g] = Activity(busy=0.02, sm=0.01, dram=0.01, pcie_mib_s=2400)
            elif phase < 0.72:  # memory profiling run: one big forward
                c.acts[g] = Activity(busy=0.7, sm=0.65, tensor=0.45, dram=0.3)
            else:  # CUDA graph capture: many tiny kernels
                c.acts[g] = Activity(busy=0.97, sm=0.04, occ=0.01, tensor=0.0, dram=0.02)
        c.procs = [p for p in self.tree if p.gpu is not None]
        c.cores = 1.0 * len(self.workers)
        return c

    # ------------------------------------------------------------ the page
    def _sample(self) -> EngineSample:
        s, cfg, lm = self.sim, self.cfg, self.lm
        c = s.c
        pool = cfg.pool_tokens
        used = min(pool, max(0.0, s.kv_used()))
        running = len(s.running) + len(s.prefill)
        waiting = len(s.waiting)
        pids = tuple(sorted(p.pid for p in self.tree))
        url = f"http://127.0.0.1:{self.port}/metrics"
        hists = tuple(h.sample() for h in s.h.values())
        common = dict(url=url, model=lm.name, pids=pids, tensor_parallel=self.tp,
                      data_parallel=1, cpu_s=round(sum(p.cpu_s for p in self.tree), 2),
                      ctx_involuntary=self.invol, busiest_thread_cpu_s=round(self.busiest, 2),
                      busiest_thread=f"{self.core.pid} {self.core.name[:15]}",
                      kv_config=lm.kv_config() if self.weights_known else {},
                      weights_bytes=lm.weights_per_rank(self.tp) if self.weights_known else None,
                      weights_source=(f"size of {lm.files} .safetensors file(s)"
                                      if self.weights_known else ""),
                      note="" if self.weights_known else
                      f"model {lm.name}: no local config.json (served from a remote cache)")
        f = math.floor
        if self.kind == "vllm":
            spec = {}
            if cfg.spec_k:
                spec = dict(spec_drafts_total=float(f(c["drafts"])),
                            spec_draft_tokens_total=float(f(c["draft_tok"])),
                            spec_accepted_tokens_total=float(f(c["accepted"])))
            mfu = {}
            if cfg.mfu_metrics:
                mfu = dict(flops_total=c["flops"], read_bytes_total=c["rbytes"],
                           write_bytes_total=c["wbytes"])
            return EngineSample(
                kind="vllm", generation_tokens_total=float(f(c["gen"])),
                prompt_tokens_total=float(f(c["prompt"])),
                prompt_tokens_cached_total=float(f(c["cached"])),
                requests_finished_total=c["finished"], requests_running=float(running),
                requests_waiting=float(waiting), kv_usage_ratio=used / pool if pool else 0.0,
                num_gpu_blocks=pool // cfg.block, block_size=cfg.block,
                kv_pool_bytes=pool * lm.kv_bytes_per_token(self.tp), kv_pool_tokens=pool,
                cache_dtype="auto", histograms=hists, preemptions_total=c["preempt"],
                waiting_by_reason={"capacity": float(waiting), "deferred": 0.0},
                prefill_seconds_total=c["prefill_s"], decode_seconds_total=c["decode_s"],
                **spec, **mfu, **common)
        if self.kind == "sglang":
            evictable = min(pool - used, 0.35 * pool * self._prefix_share())
            spec = {}
            if cfg.spec_k and s.last_accept is not None:
                a = s.last_accept
                length = 1 + sum(a ** j for j in range(1, cfg.spec_k + 1))
                spec = dict(spec_accept_ratio=(length - 1) / cfg.spec_k,
                            spec_accept_length=length)
            return EngineSample(
                kind="sglang", generation_tokens_total=float(f(c["gen_done"])),
                prompt_tokens_total=float(f(c["prompt_done"])),
                prompt_tokens_cached_total=float(f(c["cached_done"])),
                requests_finished_total=c["finished"], requests_running=float(running),
                requests_waiting=float(waiting), kv_usage_ratio=used / pool,
                kv_pool_tokens=pool, kv_used_tokens=float(int(used)),
                kv_free_tokens=float(int(pool - used - evictable)),
                kv_evictable_tokens=float(int(evictable)), histograms=hists,
                retracted_requests_total=c["retract"],
                retracted_input_tokens_total=c["retract_tok"],
                forward_seconds_total=c["forward_s"], **spec, **common)
        # llama.cpp: tokens_predicted_total moves when a request (slot) finishes
        spec = {}
        if cfg.spec_k:
            spec = dict(spec_drafts_total=float(f(c["drafts"])),
                        spec_draft_tokens_total=float(f(c["draft_tok"])),
                        spec_accepted_tokens_total=float(f(c["accepted"])))
        common.update(tensor_parallel=1, kv_config=lm.kv_config() if self.weights_known else {},
                      weights_bytes=None, weights_source="")
        return EngineSample(
            kind="llamacpp", generation_tokens_total=float(f(c["gen_done"])),
            prompt_tokens_total=float(f(c["prompt"])),
            prompt_tokens_cached_total=float(f(c["cached"])),
            requests_running=float(running), requests_waiting=float(waiting),
            kv_pool_tokens=pool, cache_dtype="f16",
            prefill_seconds_total=round(c["prefill_s"], 6),
            decode_seconds_total=round(c["decode_s"], 4),
            decode_steps_total=float(f(c["steps"])), **spec, **common)

    def _prefix_share(self) -> float:
        c = self.sim.c
        return c["cached"] / c["prompt"] if c["prompt"] else 0.0

    # ------------------------------------------------------------ eBPF
    def _launches(self, t, dt, stats):
        """Host-side durations of the launcher's CUDA calls this tick, and its off-CPU
        intervals.  A launch call is microseconds; one the thread was preempted in lasts
        as long as the thread waited for its core."""
        rng = self.w.rng
        steps, pf = stats["steps"], stats["pf_steps"]
        dec = max(0.0, steps - pf)
        layers = self.lm.layers
        per = {"cudaGraphLaunch": (dec + pf * (layers + 1), 11000, 0.25),
               "cudaLaunchKernel": (dec * 14 + pf * layers * 4, 3600, 0.3),
               "cuLaunchKernel": (dec * 9 + pf * layers * 2, 3100, 0.3),
               "cudaMemcpyAsync": (steps * 4, 5200, 0.35)}
        jit = self.jitter(t) if self.jitter else (0.0, 0.0, 0.0)
        rate, mean_ms = jit[0], jit[1]
        out, switches = [], 0
        total_calls = sum(v[0] for v in per.values()) or 1.0
        p_hit = min(0.4, rate * 0.25 / (total_calls / dt)) if rate else 0.0
        for w_proc in self.workers:
            for api, (n, med, sig) in per.items():
                n = int(n)
                if n <= 0:
                    continue
                buckets, total, mx = {}, 0, 0
                draws = min(n, 48)
                scale = n / draws
                hit = _binom(rng, n, p_hit)
                for _ in range(draws):
                    v = int(med * math.exp(rng.gauss(0, sig)))
                    i = bucket_index(v)
                    buckets[i] = buckets.get(i, 0) + scale
                    total += v * scale
                    mx = max(mx, v)
                for _ in range(hit):
                    v = int(med + rng.expovariate(1 / (mean_ms * 1e6)))
                    i = bucket_index(v)
                    buckets[i] = buckets.get(i, 0) + 1
                    total += v
                    mx = max(mx, v)
                b = {i: int(round(x)) for i, x in buckets.items() if round(x) > 0}
                cnt = sum(b.values())
                out.append(LaunchHist(api=api, pid=w_proc.pid, count=cnt, sum_ns=int(total),
                                      max_ns=mx, buckets=b))
            # off-CPU: short voluntary sleeps (waiting on the GPU, on sockets); preemptions
            vol = int((150 if steps else 8) * dt)
            inv = _poisson_small(rng, (4 + rate) * dt)
            switches += inv
            ob, tot, mx = {}, 0, 0
            for _ in range(min(vol, 40)):
                v = int(rng.expovariate(1 / 60e3)) + 2000
                i = bucket_index(v)
                ob[i] = ob.get(i, 0) + max(1, vol // 40)
                tot += v * max(1, vol // 40)
                mx = max(mx, v)
            for _ in range(inv):
                v = int(rng.expovariate(1 / ((mean_ms or 0.05) * 1e6))) + 5000
                i = bucket_index(v)
                ob[i] = ob.get(i, 0) + 1
                tot += v
                mx = max(mx, v)
            if ob:
                out.append(LaunchHist(api="off-cpu", pid=w_proc.pid, count=sum(ob.values()),
                                      sum_ns=tot, max_ns=mx, buckets=ob))
        return tuple(out), switches


def _binom(rng, n, p):
    if p <= 0 or n <= 0:
        return 0
    mean = n * p
    if mean > 20:
        return max(0, int(round(rng.gauss(mean, math.sqrt(mean * (1 - p))))))
    return _poisson_small(rng, mean)


def _poisson_small(rng, mean):
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, int(round(rng.gauss(mean, math.sqrt(mean)))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1
