"""A request-level serving engine: arrivals, a continuous-batching scheduler with a KV
pool, chunked prefill, decode steps timed from bytes and FLOPs, launch overhead with and
without CUDA graphs, the scheduler's host time stretched when its CPU is taken,
speculative decoding, preemption when the pool overflows."""
from __future__ import annotations
import heapq
import math
from collections import deque

from corpus_ai.enginepage import EngineStats

LINKS = {  # (all-reduce latency s, GB/s): TP collectives
    "nvlink": (9e-6, 150.0), "pcie": (22e-6, 18.0), "pcie-x8": (24e-6, 9.0),
    "pcie-x4": (30e-6, 4.5), "pcie-x1": (45e-6, 1.2), "none": (0.0, 1.0)}


class Req:
    __slots__ = ("arr", "prompt", "out", "n", "lp", "cached", "done_p", "admit", "g0", "first",
                 "fixed", "dead", "lora", "max_tokens")

    def __init__(self, arr, prompt, out, n=1, lp=0, cached=0, lora=""):
        self.arr, self.prompt, self.out, self.n, self.lp = arr, int(prompt), max(1, int(out)), n, lp
        self.cached = int(min(cached, prompt - 1))
        self.done_p = self.cached
        self.admit = None
        self.first = None
        self.g0 = 0.0
        self.fixed = 0
        self.dead = False
        self.lora = lora
        self.max_tokens = max(self.out, int(self.out * 1.6))


class ServeSim:
    def __init__(self, rng, board, model, *, kind="vllm", tp=1, gpus=(0,), pid=1000, max_seqs=128,
                 budget=2048, pool_tokens=None, block_size=16, graphs=True, host_ms=2.5,
                 spec_k=0, spec_draft_cost=0.0, link="nvlink", max_len=8192, mem_util=0.9,
                 arrivals=None, accept=None, bytes_factor=None, kv_factor=None, host_extra=None, launch_jitter=None,
                 mfu=0.55, bw_eff=0.8, kv_dtype="auto", extra_kernels=0):
        self.rng, self.b, self.m = rng, board, model
        self.kind, self.tp, self.gpus, self.pid = kind, tp, tuple(gpus), pid
        self.max_seqs, self.budget, self.graphs, self.host_ms = max_seqs, budget, graphs, host_ms
        self.spec_k, self.spec_cost = spec_k, spec_draft_cost
        self.link = LINKS[link if tp > 1 else "none"]
        self.kvpt = model.kv_bytes_per_token(tp)
        self.w_bytes = model.weights_bytes(tp)
        mem = board.mem_gib * 2**30
        if pool_tokens is None:
            avail = mem * mem_util - self.w_bytes - 1.5 * 2**30 - 0.04 * mem
            pool_tokens = int(max(2048, avail / self.kvpt) // block_size * block_size)
        self.pool = pool_tokens
        self.mem_used = self.w_bytes + pool_tokens * self.kvpt + 1.2 * 2**30 + 0.03 * mem
        self.d_model = math.sqrt(model.params_b * 1e9 / (12 * model.layers))
        self.arrivals = arrivals
        self.accept = accept or (lambda t: 0.7)
        self.bytes_factor = bytes_factor or (lambda t: 1.0)
        self.kv_factor = kv_factor or (lambda t: 1.0)
        self.host_extra = host_extra or (lambda t: 0.0)
        self.launch_jitter = launch_jitter or (lambda t: 0.0)
        self.mfu, self.bw_eff, self.extra_kernels = mfu, bw_eff, extra_kernels
        self.stats = EngineStats(kind, model.name, max_len=max_len, pool_tokens=pool_tokens,
                                 block_size=block_size, spec=spec_k > 0, gpu_mem_util=mem_util,
                                 kv_bytes_per_token=self.kvpt, cache_dtype=kv_dtype)
        self.now = 0.0
        self.pending = deque()      # arrived in the future
        self.waiting = deque()
        self.prefilling = []        # admitted, prompt not finished
        self.heap = []              # (finish G, id, req) decoding
        self.stack = []             # decoding in admission order (preemption victims)
        self.G = 0.0
        self.N = 0                  # decoding sequences (sum of n)
        self.S_fixed = 0.0
        self.S_nG0 = 0.0
        self.S_pref = 0.0
        self.nreq_dec = 0
        self.lp_seqs = 0.0
        self.counter = 0
        self.cpu_share = 1.0
        self.max_len = max_len

    # ---------------------------------------------------------------- helpers
    def kv_used(self):
        return self.S_fixed + self.N * self.G - self.S_nG0 + self.S_pref

    def _start_decode(self, r):
        r.g0 = self.G
        r.fixed = r.prompt + 0
        self.S_fixed += r.prompt * 1.0 + (r.n - 1) * 0.0
        self.S_nG0 += r.n * self.G
        self.N += r.n
        self.nreq_dec += 1
        if r.lp:
            self.lp_seqs += r.n * (1 + r.lp / 5.0)
        self.counter += 1
        heapq.heappush(self.heap, (self.G + r.out, self.counter, r))
        self.stack.append(r)

    def _stop_decode(self, r):
        r.dead = True
        self.S_fixed -= r.prompt
        self.S_nG0 -= r.n * r.g0
        self.N -= r.n
        self.nreq_dec -= 1
        if r.lp:
            self.lp_seqs -= r.n * (1 + r.lp / 5.0)

    def _preempt_one(self, now):
        while self.stack:
            r = self.stack.pop()
            if r.dead:
                continue
            gen = int(self.G - r.g0)
            self._stop_decode(r)
            s = self.stats
            s.preemptions += 1
            s.retracted += 1
            s.retracted_tokens += r.prompt
            nr = Req(r.arr, r.prompt + gen, max(1, r.out - gen), r.n, r.lp, 0, r.lora)
            nr.first = r.first
            nr.admit = r.admit
            self.waiting.appendleft(nr)
            return True
        return False

    # ---------------------------------------------------------------- one tick
    def advance(self, t0, dt, clock, avail, cpu_share, out):
        """Run the engine from t0 to t0+dt.  clock/avail: min over its GPUs of the clock ratio
        and of the GPU time left to it.  Fills ``out`` (per-tick accumulators)."""
        rng, s, m, b = self.rng, self.stats, self.m, self.b
        end = t0 + dt
        if self.arrivals is not None:
            for r in self.arrivals(t0, dt, rng):
                self.pending.append(r)
        now = max(self.now, t0)
        peak = b.tflops * 1e12 * clock * self.mfu
        bw = b.bw_gbs * 1e9 * self.bw_eff * (0.55 + 0.45 * clock)
        lat, lbw = self.link
        jit = self.launch_jitter(t0)
        bf = self.bytes_factor(t0)
        hx = self.host_extra(t0) / 1000.0
        alpha = self.accept(t0)
        gen0 = s.gen
        while now < end:
            while self.pending and self.pending[0].arr <= now:
                self.waiting.append(self.pending.popleft())
            if not self.nreq_dec and not self.prefilling and not self.waiting:
                nxt = self.pending[0].arr if self.pending else end
                now = min(max(nxt, now + 1e-4), end)
                continue
            # -------- schedule
            k = self.spec_k
            dec_tokens = self.N * (1 + k)
            left = max(0, self.budget - dec_tokens)
            free = self.pool - self.kv_used()
            chunks = []
            running_reqs = self.nreq_dec + len(self.prefilling)
            for r in self.prefilling:
                if left <= 0:
                    break
                c = min(r.prompt - r.done_p, left, int(max(0, free)))
                if c > 0:
                    chunks.append((r, c))
                    left -= c
                    free -= c
            while left > 0 and self.waiting and running_reqs < self.max_seqs:
                r = self.waiting[0]
                need = r.prompt - r.done_p
                if free < min(need, left) + 16 * self.N * 0 + 32:
                    break
                self.waiting.popleft()
                if r.admit is None:
                    r.admit = now
                    s.obs("queue", now - r.arr)
                self.prefilling.append(r)
                running_reqs += 1
                self.S_pref += r.done_p
                c = min(need, left, int(free))
                chunks.append((r, c))
                left -= c
                free -= c
            pre_tokens = sum(c for _, c in chunks)
            if not self.nreq_dec and not pre_tokens:
                # nothing fits: wait a little (should not happen often)
                if self.nreq_dec == 0 and self.prefilling and self.kv_used() > self.pool * 0.98:
                    self._preempt_one(now)
                now = min(end, now + 0.005)
                continue
            # -------- time the step
            ctx_dec = self.kv_used() - self.S_pref
            kv_read = max(0.0, ctx_dec) * self.kvpt * self.kv_factor(t0) + sum(r.done_p * c / max(1, r.prompt) for r, c in chunks) * self.kvpt * 0.2
            tokens = dec_tokens + pre_tokens
            bytes_ = self.w_bytes * bf + kv_read + tokens * self.d_model * 2 * m.layers * 4 / self.tp
            attn = 4 * m.layers * self.d_model / self.tp * (
                sum(c * (r.done_p + c / 2) for r, c in chunks) + dec_tokens * (ctx_dec / max(1, self.N)))
            flops = 2 * m.params_b * 1e9 / self.tp * tokens + attn
            if k and self.spec_cost:
                flops += 2 * m.params_b * 1e9 / self.tp * self.N * k * self.spec_cost
                bytes_ += self.w_bytes * self.spec_cost * k
            t_mem = bytes_ / bw
            t_cmp = flops / peak
            gpu_t = max(t_mem, t_cmp) + 0.15 * min(t_mem, t_cmp)
            comm = 0.0
            if self.tp > 1:
                comm = 2 * m.layers * (lat + tokens * self.d_model * 2 / (lbw * 1e9) * 2 * (self.tp - 1) / self.tp)
            n_k = m.layers * 14 + 40 + self.extra_kernels
            eager = (not self.graphs) or pre_tokens > 0
            launch_us = 4.5 + (self.extra_kernels and 0)
            if eager:
                host_launch = n_k * launch_us * 1e-6 / max(0.05, cpu_share)
                kern_floor = n_k * 2.5e-6
            else:
                host_launch = (40 + k * 10) * launch_us * 1e-6 / max(0.05, cpu_share)
                kern_floor = m.layers * 1.5e-6
            gpu_t = max(gpu_t, kern_floor) + self.lp_seqs * 0.12e-3
            gpu_t = gpu_t / max(0.05, avail) if avail < 1 else gpu_t
            host_t = (self.host_ms * 1e-3 + 1.2e-5 * (running_reqs + len(self.waiting) * 0.1)
                      + 2e-7 * pre_tokens + self.lp_seqs * 0.33e-3 + hx) / max(0.05, cpu_share)
            calls = (n_k if eager else 41 + k * 10)
            jt = 0.0
            if jit > 0:
                nj = calls * jit
                hits = int(nj) + (1 if rng.random() < nj - int(nj) else 0)
                for _ in range(hits):
                    d = rng.lognormvariate(math.log(1.2e-3), 0.8)
                    jt += d
                    out["jitter"].append(d)
            wall_gpu = max(gpu_t + comm, host_launch + jt)
            step = max(wall_gpu + 0.4 * host_t, host_t + jt)
            step *= 1 + rng.gauss(0, 0.02)
            step = max(step, 2e-4)
            # activity
            busy = min(step, gpu_t + comm)
            out["busy"] += busy
            out["sm"] += gpu_t * (0.88 if tokens > 8 or m.params_b > 5 else 0.35) + comm * 0.12
            out["tensor"] += min(busy, flops / (b.tflops * 1e12 * max(0.2, clock)) * 1.05)
            out["dram"] += bytes_
            out["nvlink"] += comm and tokens * self.d_model * 2 * m.layers * 2
            out["host_busy"] += min(step, host_t + host_launch)
            out["calls_graph" if not eager else "calls_kernel"] += 1 if not eager else calls
            out["calls_kernel"] += 0 if eager else 40 + k * 10
            s.flops += flops
            s.read_bytes += bytes_
            s.write_bytes += tokens * self.kvpt
            s.forward_s += gpu_t
            s.decode_steps += 1
            now += step
            # -------- outcomes
            if self.N:
                if k:
                    e = (1 - alpha ** (k + 1)) / (1 - alpha) if alpha < 1 else k + 1
                    g = max(1.0, min(k + 1.0, e * (1 + rng.gauss(0, 0.05))))
                    s.spec_drafts += self.N
                    s.spec_draft_tokens += self.N * k
                    s.spec_accepted += self.N * (g - 1)
                    s.spec_rate_now = (g - 1) / k
                    s.spec_len_now = g
                else:
                    g = 1.0
                s.obs("itl", step, self.N)
                s.gen += self.N * g
                s.decode_s += step * self.nreq_dec
                self.G += g
                while self.heap and self.heap[0][0] <= self.G:
                    _, _, r = heapq.heappop(self.heap)
                    if r.dead:
                        continue
                    self._stop_decode(r)
                    e2e = now - r.arr
                    s.obs("e2e", e2e)
                    dec = now - (r.first or now)
                    s.obs("decode", dec)
                    s.obs("tpot", dec / max(1, r.out - 1))
                    s.obs("n", r.n)
                    s.obs("max_tokens", r.max_tokens)
                    s.obs("gen_tokens", r.out)
                    s.obs("input", r.prompt)
                    if rng.random() < 0.85:
                        s.finished_stop += 1
                    else:
                        s.finished_length += 1
                if self.stack and len(self.stack) > 4 * max(1, self.nreq_dec) + 64:
                    self.stack = [r for r in self.stack if not r.dead]
            still = []
            for r in self.prefilling:
                pass
            done_ids = set()
            for r, c in chunks:
                r.done_p += c
                self.S_pref += c
                s.prompt += c
                if r.done_p >= r.prompt:
                    done_ids.add(id(r))
                    self.S_pref -= r.done_p
                    s.cached += r.cached
                    s.prompt += r.cached
                    if r.first is None:
                        r.first = now
                        s.obs("ttft", now - r.arr)
                        s.obs("prefill", now - (r.admit or now))
                        s.prefill_s += now - (r.admit or now)
                    s.gen += r.n
                    r.out = max(1, r.out - 1)
                    self._start_decode(r)
            if done_ids:
                self.prefilling = [r for r in self.prefilling if id(r) not in done_ids]
            # -------- KV growth: preempt when the pool overflows
            while self.kv_used() > self.pool and self.nreq_dec > 1:
                if not self._preempt_one(now):
                    break
        self.now = now
        s.running = self.nreq_dec + len(self.prefilling)
        s.waiting = len(self.waiting)
        s.kv_used_tokens = max(0.0, self.kv_used())
        s.gen_rate_now = (s.gen - gen0) / dt
        out["gen"] += s.gen - gen0
