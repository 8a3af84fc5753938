"""A request-level serving engine: continuous batching, chunked prefill, a KV pool with
preemption, prefix caching, speculative decoding, tensor parallelism; its /metrics as
vLLM V1 0.32, SGLang or llama.cpp export them, and what NVML and /proc read meanwhile."""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from ._core import (GIB, SGLANG_BOUNDS, VLLM_BOUNDS, GpuState, Hist, Host, Tree, launch_hists,
                    make_frame, poisson, proc, rng_for, sources)


class Req:
    __slots__ = ("arrival", "prompt", "cached", "out", "n", "max_tokens", "gen", "admitted",
                 "pf_left", "first", "step_ms", "pf_done_at", "preempted")

    def __init__(self, arrival, prompt, cached, out, n=1, max_tokens=None, step_ms=0.0):
        self.arrival, self.prompt, self.cached, self.out, self.n = arrival, prompt, cached, out, n
        self.max_tokens = max_tokens or max(out, 1024)
        self.gen = 0.0
        self.admitted = None
        self.pf_left = 0
        self.first = None
        self.step_ms = step_ms
        self.pf_done_at = None
        self.preempted = 0


DEFAULT_KNOBS = dict(rate=4.0, clock=None, cpu_share=1.0, gpu_share=1.0, extra_ms=0.0,
                     accept=None, psi=0.8, runnable=None, inv_rate=4.0, quota=None,
                     throttle=(), temp_boost=0.0, power_limit=None, clock_cap=None,
                     other_sm=0.0, other_mem=0, stall_frac=0.0, fan=None, mix=None,
                     down=False, reload=0.0, jitter=False, prefill_scale=1.0)


class ServeSim:
    def __init__(self, name: str, *, engine="vllm", gpu="H100", tp=1, gpu_offset=0,
                 model="meta-llama/Llama-3.1-8B-Instruct", params_b=8.03, kv_kib=128,
                 gpu_mem_util=0.9, max_seqs=256, budget=8192, host_ms=3.0, host_seq_ms=0.035,
                 cpus=64, base_host_cores=3.0, chat_prompt=700, chat_out=260, rag_frac=0.15,
                 cache_frac=0.45, spec_k=0, block=16, slots=None, port=8000, container="",
                 ebpf=False, scrape_miss=0.01, all_gpus=None, mla=False):
        self.name, self.engine, self.tp = name, engine, tp
        self.rng = rng_for(name, "serve")
        self.arng = rng_for(name, "arrivals")
        self.spec_key = gpu
        from ._core import GPU_SPECS
        self.spec = GPU_SPECS[gpu]
        self.model, self.params_b = model, params_b
        self.weights = params_b * 1e9 * 2 / tp
        self.kvb = kv_kib * 1024 / tp
        mem = self.spec["mem"]
        other = 2.2 * GIB + 0.6 * GIB * (tp > 1)
        self.pool_bytes = mem * gpu_mem_util - self.weights - other
        self.pool_tokens = int(self.pool_bytes // self.kvb // block * block)
        self.num_blocks = self.pool_tokens // block
        self.block = block
        self.mem_used = int(self.weights + other + self.pool_bytes)
        self.max_seqs = slots or max_seqs
        self.budget = budget
        self.host_ms, self.host_seq_ms = host_ms, host_seq_ms
        self.chat_prompt, self.chat_out, self.rag_frac, self.cache_frac = chat_prompt, chat_out, rag_frac, cache_frac
        self.spec_k = spec_k
        self.ebpf = ebpf
        self.scrape_miss = scrape_miss
        self.port = port
        self.gpu_indices = tuple(range(gpu_offset, gpu_offset + tp))
        n_all = all_gpus or tp + gpu_offset
        self.gpus = [GpuState(rng_for(name, f"gpu{i}"), gpu, i) for i in range(n_all)]
        self.host = Host(rng_for(name, "host"), cpus, base_host_cores)
        pid0 = 2000 + self.rng.randrange(1000, 60000)
        self.api_pid, self.core_pid = pid0, pid0 + 97
        self.worker_pids = [pid0 + 140 + 9 * i for i in range(tp)] if tp > 1 else [self.core_pid]
        threads = [(pid0, pid0, "python3"), (pid0 + 11, pid0, "uvloop"), (pid0 + 12, pid0, "detok"),
                   (self.core_pid, self.core_pid, "VLLM::EngineCor" if engine == "vllm" else
                    ("sglang::schedul" if engine == "sglang" else "llama-server")),
                   (self.core_pid + 5, self.core_pid, "pt_main_thread"),
                   (self.core_pid + 6, self.core_pid, "cuda-EvtHandlr")]
        if tp > 1:
            for i, wp in enumerate(self.worker_pids):
                threads.append((wp, wp, f"VllmWorker-{i}" if engine == "vllm" else f"sglang::TP{i}"))
        if engine == "llamacpp":
            threads = [(pid0, pid0, "llama-server"), (pid0 + 1, pid0, "llama-srv-http"),
                       (pid0 + 2, pid0, "llama-srv-http"), (pid0 + 3, pid0, "cuda-EvtHandlr")]
            self.core_pid = pid0
            self.worker_pids = [pid0]
        ncores = max(4, min(cpus, 8 * tp))
        first = self.rng.randrange(0, max(1, cpus - ncores))
        cores = tuple(range(first, first + ncores))
        cmd = self._cmd()
        self.tree = Tree(rng_for(name, "tree"), cmd, self._pattern(), pid0, threads, cores, (port,))
        self.start_time = None
        self.container = container
        self.cmd = cmd
        # state
        self.waiting: list[Req] = []
        self.running: list[Req] = []
        self.c = dict(gen=0.0, prompt=0.0, cached=0.0, fin=0.0, pre=0.0, retr=0.0, retr_tok=0.0,
                      drafts=0.0, dtok=0.0, acc=0.0, pf_s=0.0, dec_s=0.0, fwd_s=0.0, steps=0.0,
                      flops=0.0, rbytes=0.0, wbytes=0.0)
        self.c["gen"] = float(self.rng.randrange(10**6, 10**8))
        self.c["prompt"] = self.c["gen"] * self.rng.uniform(2, 5)
        self.c["cached"] = self.c["prompt"] * self.rng.uniform(0.1, 0.4)
        self.c["fin"] = float(int(self.c["gen"] / 250))
        B = VLLM_BOUNDS if engine == "vllm" else SGLANG_BOUNDS
        names = ("ttft", "itl", "tpot", "e2e", "queue") if engine == "vllm" else ("ttft", "itl", "e2e", "queue")
        self.h = {k: Hist(k, B[k]) for k in names} if engine != "llamacpp" else {}
        if engine == "vllm":
            self.h["params_n"] = Hist("params_n", VLLM_BOUNDS["params_n"])
            from ._core import _series125
            self.h["params_max_tokens"] = Hist("params_max_tokens", _series125(131072))
            self.h["max_generation_tokens"] = Hist("max_generation_tokens", _series125(131072))
        self._prime()
        self.injected: list[Req] = []
        self.metrics = []  # per tick truth: (t, tokens, itl_p99, ttft_p99, util, sm)
        self.engine_down = False

    def _cmd(self):
        if self.engine == "vllm":
            return (f"/opt/venv/bin/python3 -m vllm.entrypoints.openai.api_server --model {self.model} "
                    f"--tensor-parallel-size {self.tp} --port {self.port} --max-num-seqs {self.max_seqs} "
                    f"--max-num-batched-tokens {self.budget} --enable-prefix-caching")
        if self.engine == "sglang":
            return (f"python3 -m sglang.launch_server --model-path {self.model} --tp {self.tp} "
                    f"--port {self.port} --enable-metrics")
        return (f"/usr/local/bin/llama-server -m /models/{self.model} -ngl 99 -np {self.max_seqs} "
                f"-c {self.max_seqs * 16384} --port {self.port} --metrics")

    def _pattern(self):
        return {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama-server"}[self.engine]

    def _prime(self):
        """Histograms as a server that has been up for hours has them."""
        rng = self.rng
        n_req = int(self.c["fin"])
        for k, h in self.h.items():
            if k == "ttft":
                h.observe_many(rng, n_req, lambda r: r.lognormvariate(math.log(0.25), 0.7))
            elif k == "itl":
                h.observe_many(rng, int(self.c["gen"]), lambda r: r.lognormvariate(math.log(0.028), 0.3))
            elif k == "tpot":
                h.observe_many(rng, n_req, lambda r: r.lognormvariate(math.log(0.03), 0.25))
            elif k == "e2e":
                h.observe_many(rng, n_req, lambda r: r.lognormvariate(math.log(8.0), 0.8))
            elif k == "queue":
                h.observe_many(rng, n_req, lambda r: r.lognormvariate(math.log(0.02), 1.0))
            elif k == "params_n":
                h.observe(1.0, n_req)
            elif k in ("params_max_tokens", "max_generation_tokens"):
                h.observe_many(rng, n_req, lambda r: r.choice([256, 512, 1024, 2048, 4096]))

    # -------------------------------------------------------------- workload
    def new_request(self, t, mix=None):
        r = self.arng
        rag = r.random() < (mix if mix is not None else self.rag_frac)
        if rag:
            prompt = int(min(30000, r.lognormvariate(math.log(5200), 0.45)))
            out = int(min(2048, r.lognormvariate(math.log(220), 0.6)) + 1)
        else:
            prompt = int(min(12000, r.lognormvariate(math.log(self.chat_prompt), 0.8)) + 8)
            out = int(min(4096, r.lognormvariate(math.log(self.chat_out), 0.85)) + 1)
        cached = 0
        if r.random() < self.cache_frac:
            cached = int(prompt * r.uniform(0.3, 0.9)) // self.block * self.block
        n = 1
        if r.random() < 0.02:
            n = r.choice([2, 2, 3, 4])
        max_tokens = r.choice([512, 1024, 1024, 2048, 4096]) if r.random() > 0.03 else 32768
        out = min(out, max_tokens)
        return Req(t, prompt, cached, out, n, max_tokens)

    def inject(self, req: Req):
        self.injected.append(req)

    # -------------------------------------------------------------- physics of one step
    def gpu_time(self, B, ctx, pf, k):
        bw = self.spec["bw"] * 0.82
        fl = self.spec["flops"] * 0.55
        t_w = self.weights / bw
        t_kv = ctx * self.kvb / bw
        spec_tok = (self.spec_k + 1) if (self.spec_k and k["accept"] is not None) else 1
        t_dec_c = 2 * self.params_b * 1e9 / self.tp * B * spec_tok / fl
        t_pf = 2 * self.params_b * 1e9 / self.tp * pf / fl * k["prefill_scale"]
        t_draft = 0.18 * t_w if spec_tok > 1 else 0.0
        t_fix = 0.0012 + (0.00035 * math.log2(self.tp) * 4 if self.tp > 1 else 0.0)
        extra = k["extra_ms"] / 1000.0
        clk = k["clock"] if k["clock"] is not None else 1.0
        mem_part = (t_w + t_kv + t_draft) / min(1.0, 0.55 + 0.45 * clk)
        cmp_part = (t_dec_c + t_pf + extra * 0.4) / clk
        t = mem_part + cmp_part + t_fix + extra * 0.6
        return t, mem_part, cmp_part, t_fix

    def host_time(self, B, k):
        return (self.host_ms + self.host_seq_ms * B) / 1000.0 / max(0.02, k["cpu_share"])

    # -------------------------------------------------------------- one tick
    def tick(self, t, dt, k):
        rng = self.rng
        lam = k["rate"] * dt
        for _ in range(poisson(self.arng, lam)):
            self.waiting.append(self.new_request(t, k["mix"]))
        for req in [q for q in self.injected if q.arrival <= t]:
            self.injected.remove(req)
            self.waiting.append(req)
        if k["down"]:
            return None
        # admission (FCFS, KV-aware)
        kv_used = sum((q.prompt + q.gen / q.n) * q.n for q in self.running)
        B = sum(q.n for q in self.running)
        while self.waiting:
            q = self.waiting[0]
            need = q.prompt * q.n
            if B + q.n > self.max_seqs or kv_used + need > self.pool_tokens * 1.0:
                break
            self.waiting.pop(0)
            if q.admitted is None:
                q.admitted = t
            q.pf_left = max(1, q.prompt - q.cached) if q.first is None else int(q.prompt + q.gen / q.n)
            self.running.append(q)
            B += q.n
            kv_used += need
        ctx = sum((q.prompt + q.gen / q.n) * q.n for q in self.running if q.first is not None)
        dec = [q for q in self.running if q.pf_left <= 0]
        Bd = sum(q.n for q in dec)
        pending = sum(q.pf_left for q in self.running if q.pf_left > 0)
        extra_ms = k["extra_ms"] + sum(q.step_ms for q in dec)
        kk = dict(k, extra_ms=extra_ms)
        room = max(256, self.budget - Bd)
        t0, *_ = self.gpu_time(Bd, ctx, 0, kk)
        steps0 = dt / max(t0, self.host_time(Bd, k))
        pf_step = min(room, pending / max(1.0, steps0)) if pending else 0.0
        tg, mem_p, cmp_p, fix_p = self.gpu_time(Bd, ctx, pf_step, kk)
        tg /= max(0.05, k["gpu_share"])
        th = self.host_time(Bd + (1 if pending else 0), k)
        idle = Bd == 0 and pending == 0
        step = max(tg, th) + 0.0002
        steps = dt / step
        busy = 0.0 if idle else min(1.0, tg * k["gpu_share"] / step + 0.01) if k["gpu_share"] < 1 else min(0.995, tg / step)
        # prefill progress
        pf_done_total = min(pending, steps * pf_step) if pending else 0.0
        budget_left = pf_done_total
        first_ttfts = []
        for q in self.running:
            if q.pf_left > 0 and budget_left > 0:
                take = min(q.pf_left, budget_left)
                q.pf_left -= take
                budget_left -= take
                if q.pf_left <= 0:
                    frac = 1.0 - budget_left / max(1.0, pf_done_total)
                    when = t + frac * dt
                    if q.first is None:
                        q.first = when
                        first_ttfts.append(when - q.arrival)
                        self.c["prompt"] += q.prompt
                        self.c["cached"] += q.cached
                        q.gen += q.n
                        self.c["gen"] += q.n
                        q.pf_done_at = when
                        self.c["pf_s"] += when - q.admitted
                        if "queue" in self.h:
                            self.h["queue"].observe(max(0.0, q.admitted - q.arrival))
        # decode progress
        acc = k["accept"]
        per_step = 1.0
        if self.spec_k and acc is not None:
            per_step = 1.0 + acc * (1 - acc ** self.spec_k) / (1 - acc) if acc < 1 else 1.0 + self.spec_k
            nd = steps * Bd
            self.c["drafts"] += nd
            self.c["dtok"] += nd * self.spec_k
            self.c["acc"] += nd * (per_step - 1)
        new_tokens = 0.0
        for q in dec:
            tok = min(steps * per_step * q.n, q.out * q.n - q.gen)
            q.gen += tok
            new_tokens += tok
        self.c["gen"] += new_tokens
        self.c["steps"] += steps
        self.c["dec_s"] += dt * len(dec)
        self.c["fwd_s"] += dt * busy
        self.c["flops"] += 2 * self.params_b * 1e9 / self.tp * (new_tokens + pf_done_total)
        self.c["rbytes"] += steps * (self.weights + ctx * self.kvb)
        self.c["wbytes"] += (new_tokens + pf_done_total) * self.kvb
        # latency observations
        f_pf = min(1.0, (pending / room) / max(1.0, steps)) if pending else 0.0
        t_chunk = step * 0 + (2 * self.params_b * 1e9 / self.tp * room / (self.spec["flops"] * 0.55)) * k["prefill_scale"] / (k["clock"] or 1.0)
        base_itl = max(tg, th) / per_step
        stall = k["stall_frac"]

        def itl_draw(r):
            v = base_itl * r.lognormvariate(0, 0.12)
            if r.random() < f_pf:
                v = (tg - pf_step * t_chunk / room + t_chunk) / per_step * r.lognormvariate(0, 0.08)
            if stall and r.random() < stall:
                v += r.uniform(0.05, 0.4)
            return v
        itl_obs = int(new_tokens)
        if "itl" in self.h:
            self.h["itl"].observe_many(rng, itl_obs, itl_draw)
        for v in first_ttfts:
            if "ttft" in self.h:
                self.h["ttft"].observe(v)
        # finish
        done = [q for q in dec if q.gen >= q.out * q.n - 1e-6]
        for q in done:
            self.running.remove(q)
            e2e = t + dt - q.arrival
            self.c["fin"] += q.n
            if "e2e" in self.h:
                self.h["e2e"].observe(e2e, q.n)
            if "tpot" in self.h and q.out > 1:
                self.h["tpot"].observe((t + dt - q.first) / (q.out - 1), q.n)
            if "params_n" in self.h:
                self.h["params_n"].observe(float(q.n))
                self.h["params_max_tokens"].observe(float(q.max_tokens))
                self.h["max_generation_tokens"].observe(float(q.out), q.n)
        # KV pressure: preempt the newest (vLLM recompute) / retract (SGLang)
        kv_used = sum((q.prompt + q.gen / q.n) * q.n for q in self.running)
        while kv_used > self.pool_tokens * 0.998 and len(self.running) > 1:
            q = self.running.pop()
            kv_used -= (q.prompt + q.gen / q.n) * q.n
            q.preempted += 1
            if self.engine == "sglang":
                self.c["retr"] += 1
                self.c["retr_tok"] += q.prompt
            else:
                self.c["pre"] += 1
            q.pf_left = 0
            self.waiting.insert(0, q)
        self.kv_used = kv_used
        # truth metrics
        itl_p99 = None
        self.last = dict(tokens=new_tokens + len(first_ttfts), busy=busy, step=step, tg=tg, th=th,
                         mem_p=mem_p, cmp_p=cmp_p, fix_p=fix_p, pf_step=pf_step, Bd=Bd,
                         pending=pending, ctx=ctx, ttfts=first_ttfts, base_itl=base_itl,
                         f_pf=f_pf, per_step=per_step, steps=steps)
        return self.last

    # -------------------------------------------------------------- readings
    def gpu_activity(self, k, rank=0):
        L = self.last
        if L is None or L["busy"] <= 0:
            return 0.0, 0.0, 0.0, 0.0, 0.0
        busy = L["busy"]
        tg = max(1e-6, L["mem_p"] + L["cmp_p"] + L["fix_p"])
        f_mem, f_cmp = L["mem_p"] / tg, L["cmp_p"] / tg
        bfill = min(1.0, L["Bd"] / 48.0)
        sm = busy * (0.62 + 0.2 * bfill) * f_mem + busy * 0.93 * f_cmp + busy * 0.35 * (1 - f_mem - f_cmp)
        occ = sm * (0.22 + 0.1 * f_cmp)
        ten = busy * (f_mem * (0.04 + 0.14 * bfill) + f_cmp * 0.58)
        dram = busy * (f_mem * 0.78 + f_cmp * 0.22)
        return busy, sm * 100, occ * 100, ten * 100, dram * 100


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))]
