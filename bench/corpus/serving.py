"""Serving engines, request by request: continuous batching like vLLM V1 and SGLang.

vLLM V1 (vllm/v1/core/sched/scheduler.py): every step first gives each running request
its tokens (one per decoding sequence, the next chunk of a partial prefill), then admits
waiting requests while the token budget (max_num_batched_tokens, chunked prefill) and
max_num_seqs allow; KV lives in fixed-size blocks; when a running request cannot get a
block the scheduler preempts the most recently admitted one (recompute: its KV is freed
and it goes back to the front of the queue), and admits nothing new that step.  An
``n`` > 1 request fans out into n child requests.  When any request in the batch asks for
logprobs the sampler computes an fp32 log-softmax over the full vocabulary for every row.

SGLang (python/sglang/srt/managers/scheduler.py, schedule_policy.py): prefill-first: when
requests wait and the token pool (token-granular, ``max_total_num_tokens``) has room after
reserving ``new_token_ratio`` x the remaining max_new_tokens of the running ones, a
prefill ("extend") batch of up to chunked_prefill_size tokens runs and decodes wait; else
one decode step for the whole batch.  The radix cache serves cached prompt tokens without
compute.  new_token_ratio starts at 0.7 and decays towards 0.1; when the pool cannot hold
the next decode tokens the scheduler *retracts* requests (back to the queue, KV freed)
and raises the ratio again.

Step time comes from ``llm.rank_cost`` (roofline) per tensor-parallel rank at that GPU's
clock; the slowest rank sets the step (others wait inside the all-reduce: busy, few SMs).
Between steps the GPU idles for the host's part of the step that CUDA graphs and async
scheduling do not hide.  Steady decode stretches are coalesced (up to 8 steps) to keep
generation fast; nothing observable at 1/6 s resolution changes by it.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

from bench.corpus import hist as H
from bench.corpus.llm import ModelSpec, StepWork, allreduce_time, rank_cost
from bench.corpus.workload import ClientReq

KMAX = 8
LP_ENTRY_S = 45e-6  # engine-core cost per (row x (k+1)) logprob entry, synchronous
PLP_ENTRY_S = 3.0e-6  # per prompt-logprob entry (tensor -> Python lists), synchronous
GIB = 2 ** 30


@dataclass
class EngineConfig:
    kind: str  # "vllm" | "sglang"
    model: ModelSpec
    gpus: tuple[int, ...]
    max_num_seqs: int = 256
    max_batched_tokens: int = 8192  # vLLM max_num_batched_tokens / SGLang chunked_prefill_size
    block_size: int = 16
    mem_fraction: float = 0.90  # vLLM gpu_memory_utilization / SGLang mem_fraction_static
    max_model_len: int = 32768
    kv_pool_tokens: int | None = None  # override the pool (per rank) in tokens
    port: int = 8000
    host_base_s: float = 1.1e-3  # scheduler + input prep per step
    host_per_seq_s: float = 9e-6
    host_per_prefill_tok_s: float = 0.12e-6
    overlap: float = 0.6  # share of host work hidden under the previous step's GPU time
    gap0_s: float = 0.25e-3  # the part never hidden (output sync, launch of the graph)
    recompute_frac: tuple = (0.5, 1.0)  # prefix-cache misses when a preempted request resumes
    served_name: str = ""
    weights_known: bool = True

    @property
    def tp(self) -> int:
        return len(self.gpus)


class Req:
    __slots__ = ("rid", "arrival", "prompt", "cached", "out", "max_tokens", "n", "logprobs",
                 "prompt_logprobs", "first_child", "sys", "need", "done", "gen", "first_sched",
                 "first_token", "last_token", "join_G", "epoch", "state", "resumed",
                 "tag")

    def __init__(self, rid: int, c: ClientReq, first_child: bool):
        self.rid = rid
        self.arrival = c.t
        self.prompt = c.prompt
        self.cached = c.cached
        self.sys = c.shared_prefix
        self.out = max(1, c.out)
        self.max_tokens = c.max_tokens
        self.n = c.n
        self.logprobs = c.logprobs
        self.prompt_logprobs = c.prompt_logprobs
        self.first_child = first_child
        self.need = max(1, c.prompt - c.cached)  # tokens to compute before the next token
        self.done = c.cached  # context already in KV (prefix hit)
        self.gen = 0
        self.first_sched = None
        self.first_token = None
        self.last_token = None
        self.join_G = 0
        self.epoch = 0
        self.state = "waiting"
        self.resumed = False
        self.tag = c.tag


class Engine:
    """One serving engine (one lifetime: a restart is a new Engine with new pids)."""

    def __init__(self, scene, cfg: EngineConfig, reqs: list[ClientReq], pid: int,
                 t_start: float = 0.0, t_stop: float | None = None, rng: random.Random = None,
                 load_s: float = 0.0):
        self.scene = scene
        self.cfg = cfg
        self.rng = rng or random.Random(pid)
        self.kind = cfg.kind
        self.model = cfg.model
        self.t_start = t_start
        self.t_stop = t_stop if t_stop is not None else scene.duration + 1.0
        self.load_s = load_s  # weights load + KV alloc + graph capture before serving
        self.t_ready = t_start + load_s
        self.t = self.t_ready
        self.pid = pid
        tp = cfg.tp
        # process tree: vLLM api server -> EngineCore -> workers; SGLang main -> schedulers
        if self.kind == "vllm":
            self.api_pid = pid
            self.core_pid = pid + 37
            self.gpu_pids = (self.core_pid,) if tp == 1 else tuple(pid + 60 + 3 * i for i in range(tp))
            self.all_pids = (self.api_pid, self.core_pid) + (self.gpu_pids if tp > 1 else ())
        else:
            self.api_pid = pid
            self.gpu_pids = tuple(pid + 20 + 2 * i for i in range(tp))
            self.core_pid = self.gpu_pids[0]
            self.detok_pid = pid + 19
            self.all_pids = (self.api_pid, self.detok_pid) + self.gpu_pids
        self.launch_pids = self.gpu_pids
        # memory and KV pool (per rank)
        spec = scene.gpus[cfg.gpus[0]].spec
        self.spec = spec
        self.weights = int(self.model.weight_bytes / tp)
        usable = spec.mem_total - spec.mem_reserved
        self.proc_mem = int(usable * cfg.mem_fraction) + 530 * 2 ** 20  # + CUDA context
        act = int((1.2 + 0.18 * cfg.max_batched_tokens / 1024 * self.model.hidden / 4096 / tp) * GIB)
        nontorch = int(1.3 * GIB)
        pool_bytes = int(usable * cfg.mem_fraction) - self.weights - act - nontorch
        self.kvb = self.model.kv_bytes_per_token(tp)
        if cfg.kv_pool_tokens:
            self.pool_tokens = cfg.kv_pool_tokens
        else:
            self.pool_tokens = max(4096, pool_bytes // self.kvb)
        self.pool_bytes = self.pool_tokens * self.kvb
        bs = cfg.block_size if self.kind == "vllm" else 1
        self.bs = bs
        self.num_blocks = self.pool_tokens // bs
        # requests
        self.pending = deque()
        rid = pid * 1000
        for c in sorted(reqs, key=lambda c: c.t):
            if c.t < self.t_ready or c.t >= self.t_stop:
                continue
            for i in range(c.n):
                rid += 1
                self.pending.append(Req(rid, c, i == 0))
        self.waiting: deque[Req] = deque()
        self.running: dict[int, Req] = {}  # admission order
        self.prefilling: list[Req] = []
        self.heap: list = []
        self.n_dec = 0
        self.S_dec_ctx = 0
        self.S_join_G = 0
        self.S_kvjoin = 0
        self.S_maxrem_join = 0
        self.used = 0  # KV tokens held by running requests (own, not shared prefixes)
        self.shared = 0
        self.n_lp_dec = 0
        self.S_lp_entries = 0
        self.G = 0
        self.new_token_ratio = 0.7
        self.last_decode_end = None
        # counters
        self.gen_total = 0
        self.prompt_total = 0
        self.cached_total = 0
        self.finished_total = 0
        self.preempt_total = 0
        self.retract_total = 0
        if self.kind == "vllm":
            self.h = {"ttft": H.Hist("ttft", H.VLLM_TTFT), "itl": H.Hist("itl", H.VLLM_ITL),
                      "e2e": H.Hist("e2e", H.VLLM_E2E), "queue": H.Hist("queue", H.VLLM_QUEUE),
                      "params_n": H.Hist("params_n", H.VLLM_N),
                      "params_max_tokens": H.Hist("params_max_tokens",
                                                  H.build_1_2_5_buckets(cfg.max_model_len))}
        else:
            self.h = {"ttft": H.Hist("ttft", H.SGL_TTFT), "itl": H.Hist("itl", H.SGL_ITL),
                      "e2e": H.Hist("e2e", H.SGL_E2E), "queue": H.Hist("queue", H.SGL_QUEUE)}
        if t_start <= 0.0 and load_s <= 0.0:
            self._seed_history()
        # CPU accounting
        self.active_s = 0.0  # wall time with work in the engine
        self.core_cpu_s = 0.0
        self.inv_ctx = 0
        self.api_cpu_s = 0.0
        self.worker_cpu_s = [0.0] * tp
        # eBPF-visible per tick (taken by the scene)
        self.launch = {"decode_steps": 0, "mixed_steps": 0, "sync_s": [], "long": []}
        self.hiccup_at = t_start + load_s + self.rng.expovariate(1 / 35.0)
        self.shared = max((c.shared_prefix for c in reqs), default=0)
        # the scrape: counters as they were at want_snap (set by the scene each tick)
        self.snap = None
        self.snap_t = None
        self.want_snap = None
        self._pre = None
        # pathology hooks (functions of t), set by the trace
        self.wedged = None  # t -> True while the worker spins on a graph of tiny kernels
        self._last_step = 0.02

    def _seed_history(self) -> None:
        """An engine that was already serving when recording began: its counters and
        histograms hold hours of history (values only matter as differences)."""
        rng = random.Random(self.pid * 7 + 1)
        hours = rng.uniform(1.0, 30.0)
        reqs = int(hours * 3600 * rng.uniform(0.5, 4.0))
        out = rng.uniform(120, 260)
        self.finished_total = reqs
        self.gen_total = int(reqs * out)
        self.prompt_total = int(reqs * rng.uniform(400, 1200))
        self.cached_total = int(self.prompt_total * rng.uniform(0.0, 0.4))
        self.preempt_total = self.retract_total = int(reqs * rng.uniform(0.0, 0.002))
        step = 0.004 + self.model.weight_bytes / self.cfg.tp / (self.spec.hbm_bw * 0.8)
        pieces = 400
        for name, median, sigma, total in (("itl", step * 1.2, 0.45, self.gen_total),
                                           ("ttft", 0.06, 1.1, reqs), ("e2e", out * step * 1.3, 0.8, reqs),
                                           ("queue", 0.004, 1.6, reqs)):
            h = self.h[name]
            for _ in range(pieces):
                h.observe(median * math.exp(rng.gauss(0.0, sigma)), total // pieces)
        if self.kind == "vllm":
            self.h["params_n"].observe(1.0, reqs)
            for mt in (256, 512, 1024, 2048, 4096):
                self.h["params_max_tokens"].observe(float(mt), reqs // 5)

    # ------------------------------------------------------------------ helpers

    def alive(self, t: float) -> bool:
        return self.t_start <= t < self.t_stop

    def ready(self, t: float) -> bool:
        return self.t_ready <= t < self.t_stop

    def kv_usage(self) -> float:
        if self.kind == "vllm":
            blocks = (self.used + self.shared) / self.bs + 0.5 * len(self.running)
            return min(1.0, blocks / self.num_blocks)
        return min(1.0, (self.used + self.shared) / self.pool_tokens)

    def _room(self) -> float:
        """KV tokens still free."""
        if self.kind == "vllm":
            blocks = (self.used + self.shared) / self.bs + 0.5 * len(self.running)
            return (self.num_blocks * 0.99 - blocks) * self.bs
        return self.pool_tokens - self.used - self.shared

    def _admit_arrivals(self, t: float) -> None:
        p = self.pending
        while p and p[0].arrival <= t:
            self.waiting.append(p.popleft())

    def next_arrival(self) -> float | None:
        return self.pending[0].arrival if self.pending else None

    def _join_decode(self, r: Req) -> None:
        r.state = "decode"
        r.join_G = self.G
        r.epoch += 1
        remaining = r.out - r.gen
        if remaining <= 0:
            self._finish(r, self.t)
            return
        heapq.heappush(self.heap, (self.G + remaining, r.epoch, r.rid, r))
        self.n_dec += 1
        self.S_dec_ctx += r.done
        self.S_join_G += self.G
        self.S_kvjoin += r.done
        self.S_maxrem_join += max(0, r.max_tokens - r.gen)
        if r.logprobs:
            self.n_lp_dec += 1
            self.S_lp_entries += r.logprobs + 1

    def _leave_decode(self, r: Req) -> int:
        """Remove a decoding request; returns its context length now."""
        steps = self.G - r.join_G
        ctx = r.done + steps
        self.n_dec -= 1
        self.S_dec_ctx -= ctx
        self.S_join_G -= r.join_G
        self.S_kvjoin -= r.done
        self.S_maxrem_join -= max(0, r.max_tokens - r.gen)
        if r.logprobs:
            self.n_lp_dec -= 1
            self.S_lp_entries -= r.logprobs + 1
        r.gen += steps
        r.done = ctx
        r.epoch += 1
        return ctx

    def _finish(self, r: Req, t: float) -> None:
        self.running.pop(r.rid, None)
        self.used -= r.done - r.sys
        r.state = "finished"
        self.finished_total += 1
        self.h["e2e"].observe(t - r.arrival)
        if self.kind == "vllm":
            self.h["params_max_tokens"].observe(r.max_tokens)

    def _admit(self, r: Req, t: float) -> None:
        self.waiting.popleft()
        if r.first_sched is None:
            r.first_sched = t
            self.h["queue"].observe(t - r.arrival)
        r.state = "prefill"
        self.running[r.rid] = r
        self.prefilling.append(r)
        self.used += r.done - r.sys  # cache hits are referenced blocks of the pool

    def _preempt(self) -> bool:
        """Free the most recently admitted running request (recompute)."""
        if not self.running:
            return False
        rid, r = self.running.popitem()
        if r.state == "decode":
            self._leave_decode(r)
        elif r.state == "prefill":
            self.prefilling.remove(r)
        self.used -= r.done - r.sys
        miss = self.rng.uniform(*self.cfg.recompute_frac)
        ctx = r.done
        r.need = max(1, int((ctx - r.sys) * miss))
        r.done = ctx - r.need
        r.state = "waiting"
        r.resumed = r.first_token is not None
        r.first_child = False
        self.waiting.appendleft(r)
        if self.kind == "vllm":
            self.preempt_total += 1
        else:
            self.retract_total += 1
        return True

    # ------------------------------------------------------------------ the loop

    def run_until(self, t_stop: float) -> None:
        t_stop = min(t_stop, self.t_stop)
        while self.t < t_stop:
            self._admit_arrivals(self.t)
            if self.wedged is not None and self.wedged(self.t):
                self._wedged_step(t_stop)
                continue
            if not self.running and not self.waiting:
                nxt = self.next_arrival()
                self.t = t_stop if nxt is None or nxt >= t_stop else nxt
                self.last_decode_end = None
                continue
            if self.kind == "vllm":
                self._step_vllm(t_stop)
            else:
                self._step_sglang(t_stop)

    def _wedged_step(self, t_stop: float) -> None:
        """The worker replays a CUDA graph of one-element kernels in a loop: every SM but
        one idle, the GPU never without a resident kernel, no token comes out."""
        t0 = self.t
        t1 = t_stop
        if self.want_snap is not None:
            self.take_snapshot()
        for gi in self.cfg.gpus:
            self.scene.gpus[gi].add(t0, t1 - t0, 0.0075, 0.0002, 0.0, 0.0004, duty=0.995)
        self.active_s += t1 - t0
        self.t = t1

    def _host_time(self, base: float, k: int, t_gpu: float) -> tuple[float, float]:
        """(host seconds per step, extra never-hidden delay) after CPU starvation.

        The launching thread runs a busy loop (Python scheduling, then a spin-waiting
        synchronize).  With only ``share`` of a CPU its Python part stretches by 1/share,
        and it is descheduled at ``rate`` per second of its running time for CFS slices of
        a few ms; a slice taken during Python work delays the next launch fully, one taken
        while spinning only when it outlasts the GPU's work (counted as half)."""
        share, preempt_rate = self.scene.cpu_share(self.t, self)
        host = base / share
        delay = 0.0
        rate = preempt_rate + (1.0 - share) * 150.0
        if rate > 0:
            lam = rate * (host + 0.5 * t_gpu)
            for _ in range(k):
                hits = 0
                # Poisson draws, small lambda
                L = math.exp(-lam)
                p = 1.0
                while True:
                    p *= self.rng.random()
                    if p < L:
                        break
                    hits += 1
                for _h in range(hits):
                    d = self.rng.expovariate(1.0 / (0.0035 + 0.006 * (1 - share)))
                    delay += d
                    if self.scene.ebpf:
                        self.launch["long"].append(d)
        if self.t >= self.hiccup_at:  # a Python GC pass / tokenizer stall in the engine core
            delay += self.rng.uniform(0.012, 0.05)
            self.hiccup_at = self.t + self.rng.expovariate(1 / 35.0)
        return host, delay / max(1, k)

    def _costs(self, w: StepWork):
        gpus = self.scene.gpus
        costs = []
        for gi in self.cfg.gpus:
            g = gpus[gi]
            sh = g.share(self.t)
            costs.append(rank_cost(self.model, self.cfg.tp, g.spec, g.clock, w, sh,
                                   g.intruder_mix(self.t) if sh > 0 else None))
        t_max = max(c.t for c in costs)
        comm = allreduce_time(self.model, self.cfg.tp, self.spec, w.decodes + w.prefill_tokens)
        return costs, t_max, comm

    def _emit(self, t0: float, dur: float, costs, t_max: float, comm: float, gap: float) -> None:
        """Put k steps (total ``dur``) of GPU work on each rank's GPU."""
        gpus = self.scene.gpus
        t_gpu = t_max + comm
        step = gap + t_gpu
        duty = t_gpu / step if step > 0 else 1.0
        for gi, c in zip(self.cfg.gpus, costs):
            wait = t_max - c.t
            tot = t_gpu
            sm = (c.t * c.sm + comm * 0.22 + wait * 0.10) / tot
            occ = (c.t * c.occ + comm * 0.04 + wait * 0.02) / tot
            tensor = c.t * c.tensor / tot
            dram = (c.t * c.dram + comm * 0.06 + wait * 0.01) / tot
            gpus[gi].add(t0, dur, sm, occ, tensor, dram, duty)

    def _observe_itl(self, value: float, count: int) -> None:
        if count > 0:
            self.h["itl"].observe(value, count)

    def _step_vllm(self, t_stop: float) -> None:
        cfg = self.cfg
        t = self.t
        # 1. decoding requests need a slot each; preempt the newest until they fit
        preempted = False
        while self.n_dec > 0 and self._room() < self.n_dec:
            if not self._preempt():
                break
            preempted = True
        budget = cfg.max_batched_tokens - self.n_dec
        chunks = []
        for r in list(self.prefilling):
            if budget <= 0:
                break
            if r.state != "prefill":
                continue
            c = min(r.need, budget)
            while (self._room() < c + self.n_dec and len(self.running) > 1
                   and next(reversed(self.running)) != r.rid):
                self._preempt()
                preempted = True
            if r.state != "prefill" or self._room() < c + self.n_dec:
                break
            chunks.append((r, c))
            budget -= c
        if not preempted:
            while self.waiting and budget > 0 and len(self.running) < cfg.max_num_seqs:
                r = self.waiting[0]
                c = min(r.need, budget)
                if self._room() < c + (r.done - r.sys) + self.n_dec + self.bs:
                    break
                self._admit(r, t)
                chunks.append((r, c))
                budget -= c
        D = self.n_dec
        w = StepWork(decodes=D, decode_ctx=self.S_dec_ctx, logits=D)
        plp_entries = 0
        for r, c in chunks:
            w.prefill_tokens += c
            w.prefill_attn += c * (r.done + c / 2.0)
            w.prefill_kv_read += r.done
            if c == r.need:
                w.logits += 1
            if r.prompt_logprobs:
                w.prompt_logprob_rows += c
                plp_entries += c * (r.prompt_logprobs + 1)
        lp_entries = 0
        if self.n_lp_dec:
            w.logprob_rows = w.logits
            lp_entries = self.S_lp_entries
        self._run_step(w, chunks, t_stop, lp_entries, plp_entries)

    def _run_step(self, w: StepWork, chunks, t_stop: float, lp_entries: int, plp_entries: int):
        cfg = self.cfg
        t = self.t
        D = w.decodes
        costs, t_max, comm = self._costs(w)
        t_gpu = t_max + comm
        # coalesce a steady decode stretch
        k = 1
        if not chunks and not self.waiting and not plp_entries and D > 0:
            est = t_gpu + cfg.gap0_s + max(0.0, cfg.host_base_s - cfg.overlap * t_gpu)
            k = KMAX
            if self.heap:
                k = min(k, max(1, self.heap[0][0] - self.G))
            nxt = self.next_arrival()
            if nxt is not None:
                k = min(k, max(1, int((nxt - t) / max(est, 1e-4))))
            room = self._room()
            if D:
                k = min(k, max(1, int(room / D) - 1))
        host_base = (cfg.host_base_s + cfg.host_per_seq_s * len(self.running)
                     + cfg.host_per_prefill_tok_s * w.prefill_tokens)
        sync = lp_entries * LP_ENTRY_S + plp_entries * PLP_ENTRY_S
        host, delay = self._host_time(host_base, k, t_gpu)
        if sync:
            share, _ = self.scene.cpu_share(t, self)
            sync = sync / share + 1.5e-3  # D2H copy and a synchronize: nothing overlaps it
        gap = cfg.gap0_s + max(0.0, host - cfg.overlap * t_gpu) + delay + sync
        jitter = 1.0 + self.rng.gauss(0.0, 0.025)
        step = (gap + t_gpu) * max(0.9, jitter)
        self._last_step = step
        dur = step * k
        self._emit(t, dur, costs, t_max, comm, gap)
        t_end = t + dur
        if self.want_snap is not None and t_end > self.want_snap:
            self.take_snapshot()  # the scrape answered while this step ran
        if t_end > t_stop:
            self._pre = self.snapshot_counters()
        # eBPF: what the launching threads called
        if self.scene.ebpf:
            if chunks:
                self.launch["mixed_steps"] += 1
            else:
                self.launch["decode_steps"] += k
            hidden = cfg.overlap * min(host, t_gpu)
            s = max(4e-6, t_gpu - hidden - 0.3 * gap)
            self.launch["sync_s"].extend([s] * k)
        # CPU: the engine core thread runs throughout (busy loop + spin-wait synchronize)
        self.active_s += dur
        # effects
        if D:
            self.G += k
            self.S_dec_ctx += D * k
            self.used += D * k
            self.gen_total += D * k
            if self.kind == "vllm" or self.last_decode_end is not None:
                itl = step if self.kind == "vllm" else (t + step - self.last_decode_end)
                if k == 1:
                    self._observe_itl(itl, D)
                else:
                    for i in range(k):
                        self._observe_itl(step * (1.0 + self.rng.gauss(0.0, 0.02)), D)
            self.last_decode_end = t_end
            self.new_token_ratio = max(0.1, self.new_token_ratio - 0.001 * k)
        self.t = t_end
        for r, c in chunks:
            r.need -= c
            r.done += c
            self.used += c
            if r.need <= 0:
                self.prefilling.remove(r)
                r.gen += 1
                self.gen_total += 1
                if r.resumed:
                    self._observe_itl(t_end - (r.last_token or r.arrival), 1)
                else:
                    r.first_token = t_end
                    self.h["ttft"].observe(t_end - r.arrival)
                    self.prompt_total += r.prompt
                    self.cached_total += r.cached
                    if self.kind == "vllm" and r.first_child:
                        self.h["params_n"].observe(r.n)
                r.last_token = t_end
                self.used += 1
                r.done += 1
                self._join_decode(r)
        # finished decoders
        heap = self.heap
        while heap and heap[0][0] <= self.G:
            _, epoch, _, r = heapq.heappop(heap)
            if r.state != "decode" or epoch != r.epoch:
                continue
            self._leave_decode(r)
            r.last_token = t_end
            self._finish(r, t_end)

    def _step_sglang(self, t_stop: float) -> None:
        cfg = self.cfg
        t = self.t
        chunks = []
        # continue a chunked prefill, else try to form a new prefill batch
        budget = cfg.max_batched_tokens
        for r in list(self.prefilling):
            c = min(r.need, budget)
            if c <= 0:
                break
            chunks.append((r, c))
            budget -= c
        if not chunks and self.waiting and len(self.running) < cfg.max_num_seqs:
            reserve = self.new_token_ratio * (self.S_maxrem_join - (self.n_dec * self.G - self.S_join_G))
            avail = self._room() - reserve
            while self.waiting and budget > 0 and len(self.running) < cfg.max_num_seqs:
                r = self.waiting[0]
                want = r.need + self.new_token_ratio * max(0, r.max_tokens - r.gen)
                if want > avail and self.running:
                    break
                c = min(r.need, budget)
                self._admit(r, t)
                chunks.append((r, c))
                budget -= c
                avail -= want
        if chunks:
            w = StepWork()
            plp = 0
            for r, c in chunks:
                w.prefill_tokens += c
                w.prefill_attn += c * (r.done + c / 2.0)
                w.prefill_kv_read += r.done
                if c == r.need:
                    w.logits += 1
                if r.prompt_logprobs:
                    w.prompt_logprob_rows += c
                    plp += c * (r.prompt_logprobs + 1)
            if self.n_lp_dec:
                w.logprob_rows = w.logits
            self._run_step(w, chunks, t_stop, 0, plp)
            return
        # decode step: retract until the next tokens fit
        retracted = False
        while self.n_dec > 0 and self._room() < self.n_dec:
            if not self._preempt():
                break
            retracted = True
        if retracted:
            self.new_token_ratio = min(1.0, max(self.new_token_ratio, 0.5) + 0.2)
        D = self.n_dec
        if D == 0:
            # nothing can run: wait for memory (should not happen) - idle a little
            self.t += 0.005
            return
        w = StepWork(decodes=D, decode_ctx=self.S_dec_ctx, logits=D)
        lp = 0
        if self.n_lp_dec:
            w.logprob_rows = D
            lp = self.S_lp_entries
        self._run_step(w, [], t_stop, lp, 0)

    # ------------------------------------------------------------------ readings

    def take_snapshot(self) -> None:
        self.snap = self.snapshot_counters()
        self.want_snap = None

    def snapshot_counters(self) -> dict:
        return {"gen": self.gen_total, "prompt": self.prompt_total, "cached": self.cached_total,
                "finished": self.finished_total, "running": len(self.running),
                "waiting": len(self.waiting), "kv": self.kv_usage(),
                "preempt": self.preempt_total, "retract": self.retract_total,
                "hists": tuple(h.sample() for h in self.h.values())}
