"""A request-level serving engine: continuous batching over a KV pool of blocks, chunked
prefill, decode step time from HBM bytes (weights + KV) and FLOPs, kernel-launch cost with
and without CUDA graphs, the scheduler's host time stretched when its CPU is taken,
speculative decoding with k drafts and an acceptance rate, preemption when the pool
overflows.  Every step writes GPU activity into the Node and counters into the engine's
/metrics state; the frames follow from those."""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field

from corpus_aj.hw import MODELS, MiB, GiB
from corpus_aj.node import Proc
from corpus_aj.pages import EngineRecorder, EngineState


@dataclass
class Req:
    arrive: float
    prompt: int
    out: int
    n: int = 1               # request_params_n of the parent (for the histogram)
    shared: int = 0          # prompt tokens shared with a sibling (prefix cache, KV shared)
    cached: int = 0          # prompt tokens found in the prefix cache (not computed)
    host_ms: float = 0.0     # extra host time per step while it decodes (logprobs, detokenise)
    gpu_ms: float = 0.0      # extra GPU time per step while it decodes
    max_tokens: int = 0
    tag: str = ""
    # state
    id: int = 0
    admitted: float = -1.0
    first: float = -1.0
    done_pf: int = 0
    gen0: int = 0
    startG: float = 0.0
    alive: bool = True
    preempted: int = 0


@dataclass
class Spec:
    k: int
    alpha: object            # fn(t) -> per-token acceptance probability
    kind: str = "draft"      # "ngram", "eagle", "draft"
    draft_model: str = "llama3.2-1b"


class Serve:
    def __init__(self, node, kind: str, model: str, gpus: tuple[int, ...], *, pool_tokens: int | None = None,
                 max_seqs: int = 256, max_batched: int = 8192, graphs: bool = True, sched_ms: float = 2.5,
                 spec: Spec | None = None, dequant_read: float = 1.0, kv_dtype: float = 2.0,
                 scrape_s: float = 2.0, port: int = 8000, pid: int = 4100, gpu_mem_util: float = 0.9,
                 launch_us: float = 5.0, kmin_us: float = 2.6, user: str = "svc-rl", miss_p: float = 0.01,
                 block: int = 16, cmd_extra: str = "", start_t: float = 0.0, label_model: str | None = None,
                 pin: bool = True, hostpid_base: int | None = None):
        self.node = node
        self.kind = kind
        self.m = MODELS[model]
        self.gpus = gpus
        self.tp = len(gpus)
        sp = node.spec
        self.bw = sp.hbm_tb_s * 1e12
        self.peak = sp.bf16_tflops * 1e12
        self.W = self.m.weight_bytes / self.tp
        self.kvb = self.m.kv_bytes_per_token(kv_dtype) / self.tp
        self.dequant_read = dequant_read
        mem_total = sp.mem_mib * MiB
        if pool_tokens is None:
            avail = mem_total * gpu_mem_util - self.W - 2.5 * GiB
            pool_tokens = int(avail / self.kvb) // block * block
        self.pool = pool_tokens
        self.block = block
        self.max_seqs = max_seqs
        self.max_batched = max_batched
        self.graphs = graphs
        self.sched_ms = sched_ms
        self.spec = spec
        self.launch_us = launch_us
        self.kmin_us = kmin_us
        self.mem_engine = self.W + self.pool * self.kvb + 1.6 * GiB
        self.t = start_t
        self.G = 0.0
        self.S_ctx = 0.0
        self.S_kv = 0.0
        self.running: dict[int, Req] = {}
        self.heap: list = []
        self.prefilling: deque[Req] = deque()
        self.waiting: deque[Req] = deque()
        self.arrivals: list = []
        self.extra_host = 0.0
        self.extra_gpu = 0.0
        self.nid = 0
        self.on_finish = None
        self.sleeping = False
        self.paused = False
        self.wanted_cpu = 1.6
        self.pf_kv = 0.0
        url = f"http://10.{20 + (port % 7)}.{(pid // 256) % 250}.{pid % 250}:{port}/metrics"
        name = label_model or self.m.name
        self.state = EngineState(kind, name, url, pool_tokens=self.pool, block=block,
                                 gpu_mem_util=gpu_mem_util, tp=self.tp, spec=spec is not None,
                                 cache_dtype="fp8_e4m3" if kv_dtype == 1 else "auto")
        # processes: the API server (no GPU) and one GPU process per rank
        t0w = node.start_wall - node.rng.uniform(600, 20000)
        cmd = {"vllm": f"python3 -m vllm.entrypoints.openai.api_server --model {name} --port {port} "
                       f"--tensor-parallel-size {self.tp} --max-num-seqs {max_seqs} --max-num-batched-tokens {max_batched}",
               "sglang": f"python3 -m sglang.launch_server --model-path {name} --port {port} --tp {self.tp} --enable-metrics",
               "tgi": f"text-generation-launcher --model-id {name} --port {port} --num-shard {self.tp}",
               "llamacpp": f"llama-server -m /models/{name.split('/')[-1]}.gguf --port {port} --metrics -ngl 999 -c 32768 --parallel 8"}[kind]
        cmd += (" " + cmd_extra if cmd_extra else "") + ("" if graphs or kind != "vllm" else " --enforce-eager")
        api = Proc(pid, cmd.split()[0] if kind in ("tgi", "llamacpp") else "python3", cmd, (), user=user,
                   start_time_s=t0w, base_cpu=0.5)
        node.procs.append(api)
        self.pids = [pid]
        wname = {"vllm": "VLLM::Worker_TP{}" if self.tp > 1 else "VLLM::EngineCore", "sglang": "sglang::scheduler_TP{}",
                 "tgi": "text-generation-server", "llamacpp": "llama-server"}[kind]
        for i, g in enumerate(gpus):
            if kind == "llamacpp":
                wp = api
                wp.gpus = tuple(gpus)
            else:
                wp = Proc(pid + 7 + i, wname.format(i), cmd if kind != "tgi" else f"/usr/src/.venv/bin/python /usr/src/.venv/bin/text-generation-server serve {name} --sharded {str(self.tp > 1).lower()} --rank {i}",
                          (g,), user=user, ppid=pid, start_time_s=t0w + 8, base_cpu=1.0 if i == 0 else 0.4)
                node.procs.append(wp)
                self.pids.append(wp.pid)
            node.set_mem(g, 0.0, wp.pid, self.mem_engine)
        self.gpu_pids = [pid + 7 + i if kind != "llamacpp" else pid for i in range(self.tp)]
        node.launch_pid = self.gpu_pids[0]
        if pin:
            node.pin_roots = (pid,)
            node.pin_label = cmd[:60] + "…"
        self.rec = EngineRecorder(self.state, node, scrape_s, self.tp, gpus, self.pids, miss_p=miss_p)
        node.host.tree_demand = self.wanted_cpu
        self._acc = None
        self.gpu_slow = lambda t: 1.0   # another context time-slicing the GPU
        self.jitter = lambda t: 0.0     # ms per step the launching thread loses to preemption

    # ----------------------------------------------------------------- workload
    def submit(self, r: Req):
        self.nid += 1
        r.id = self.nid
        if not r.max_tokens:
            r.max_tokens = max(r.out, 256)
        heapq.heappush(self.arrivals, (r.arrive, r.id, r))

    def idle(self) -> bool:
        return not (self.running or self.prefilling or self.waiting)

    # ----------------------------------------------------------------- the loop
    def advance(self, until: float):
        node = self.node
        until = min(until, node.duration)
        while self.t < until:
            while self.arrivals and self.arrivals[0][0] <= self.t:
                _, _, r = heapq.heappop(self.arrivals)
                self.waiting.append(r)
            self.rec.maybe_scrape(self.t, self._miss_boost())
            if self.paused or self.sleeping or self.idle():
                nxt = self.arrivals[0][0] if self.arrivals and not (self.paused or self.sleeping) else until
                nxt = min(max(nxt, self.t + 1e-3), until, self.rec.next + 1e-6)
                self._flush()
                self.state.running = len(self.running) + len(self.prefilling)
                self.state.waiting = len(self.waiting)
                node.cpu(self.t, 0.05 * (nxt - self.t))
                self.t = nxt
                continue
            self._step()
        self._flush()

    def _miss_boost(self) -> float:
        s = self.node.host.share(self.t, self.wanted_cpu)
        return 0.0 if s > 0.9 else min(0.3, (1 - s) * 0.4)

    def _admit(self):
        kv_used = self.S_kv + self.G * len(self.running) + self.pf_kv
        while self.waiting and len(self.running) + len(self.prefilling) < self.max_seqs:
            r = self.waiting[0]
            need = r.prompt + r.gen0 - r.shared
            if kv_used + need + len(self.running) * self.block > self.pool * 0.99:
                break
            self.waiting.popleft()
            if r.admitted < 0:
                r.admitted = self.t
                self.state.h("queue", self.t - r.arrive)
            r.done_pf = r.cached if not r.preempted else 0
            self.prefilling.append(r)
            self.pf_kv += need
            kv_used += need

    def _step(self):
        node, m, st = self.node, self.m, self.state
        self._admit()
        B = len(self.running)
        spec = self.spec
        k = spec.k if spec else 0
        q = k + 1
        budget = max(0, self.max_batched - B * q)
        pf_tok = 0
        pf_pairs = 0.0
        done_pf = []
        for r in self.prefilling:
            if budget <= 0:
                break
            total = r.prompt + r.gen0
            take = min(budget, total - r.done_pf)
            pf_pairs += take * (r.done_pf + take / 2)
            r.done_pf += take
            pf_tok += take
            budget -= take
            if r.done_pf >= total:
                done_pf.append(r)
        clk = min(node.clock(g, self.t) for g in self.gpus)
        ctx = self.S_ctx + self.G * B
        W = self.W * self.dequant_read
        kvbytes = ctx * self.kvb
        slow = 1 + 0.25 * max(0.0, 1 / clk - 1)
        t_mem = (W + kvbytes) / (self.bw * 0.82) * slow if B else 0.0
        fl_dec = (2 * m.active_b * 1e9 * B * q + 4 * m.layers * m.hidden * ctx * q) / self.tp
        t_cmp = fl_dec / (self.peak * clk * 0.45)
        fl_pf = (2 * m.active_b * 1e9 * pf_tok + 4 * m.layers * m.hidden * pf_pairs) / self.tp
        t_pf = fl_pf / (self.peak * clk * 0.62)
        if pf_tok and not B:
            t_pf += W / (self.bw * 0.82)
        if spec:
            a = spec.alpha(self.t)
            E = (1 - a ** (k + 1)) / (1 - a) if a < 0.999 else k + 1
            if spec.kind == "draft":
                dm = MODELS[spec.draft_model]
                t_draft = k * (dm.weight_bytes / self.tp / (self.bw * 0.7) + 0.00018)
            elif spec.kind == "eagle":
                t_draft = k * (0.06 * t_mem + 0.00012)
            else:
                t_draft = 0.0
        else:
            a, E, t_draft = 0.0, 1.0, 0.0
        kernels = m.layers * 14 + (m.layers * 10 if pf_tok else 0) + 30
        t_floor = kernels * self.kmin_us * 1e-6
        t_comm = (2 * m.layers * (9e-6 + (B * q + pf_tok) * m.hidden * 2 / 150e9)) if self.tp > 1 else 0.0
        work = max(t_mem, t_cmp) + t_pf + t_draft
        t_gpu = max(work, t_floor) + t_comm + self.extra_gpu / 1000 + 0.00015
        slow = self.gpu_slow(self.t)
        t_gpu_own = t_gpu
        t_gpu = t_gpu * slow
        share = node.host.share(self.t, self.wanted_cpu)
        if self.graphs and not pf_tok:
            launch = 0.00025 + 30 * self.launch_us * 1e-6
            n_launch, n_graph = 30, 1
        else:
            n_launch = kernels * (k + 1 if spec and spec.kind != "ngram" else 1)
            launch = n_launch * self.launch_us * 1e-6
            n_graph = 0
        host = (self.sched_ms * (1 + (B + len(self.prefilling)) / 200) / 1000 + self.extra_host / 1000 + launch) / share
        host += self.jitter(self.t) / 1000
        step = max(t_gpu, host) + 0.15 * min(t_gpu, host)
        busy = min(1.0, t_gpu_own / step)
        # activity while kernels run
        if work >= t_floor:
            sm_dec = min(0.92, 0.35 + 0.6 * min(1.0, self.W / 4e9))
        else:
            sm_dec = 0.04 + 0.3 * work / t_floor * min(1.0, 0.35 + 0.6 * min(1.0, self.W / 4e9))
        sm = (sm_dec * (t_gpu - t_pf) + 0.95 * t_pf) / t_gpu
        tensor = min(0.9, ((fl_dec + fl_pf) / (self.peak * clk)) / t_gpu)
        dram = min(0.95, ((W + kvbytes) * (1 if B else 0) + (W if pf_tok and not B else 0) + pf_tok * self.kvb) / self.bw / t_gpu)
        occ = 0.12 + 0.25 * tensor + 0.1 * sm
        t0 = self.t
        t1 = t0 + step
        self._activity(t0, t1, busy, sm, tensor, dram, occ)
        if self.tp > 1:
            for g in self.gpus:
                node.link(g, t0, nvlink_bytes=2 * m.layers * (B * q + pf_tok) * m.hidden * 2 * 2)
        node.cpu(t0, (host * share + 0.3 * step * 0.6), launch_thread=min(step, host * share),
                 launches=n_launch, graphs=n_graph)
        # ---- counters
        st.steps += 1
        st.flops += fl_dec + fl_pf
        st.rbytes += (W + kvbytes) * (1 if B else 0)
        st.wbytes += (B * q + pf_tok) * self.kvb
        if B:
            st.fwd_decode_s += t_gpu - t_pf
            st.h("itl", step, B)
            gen = B * E
            st.gen += gen
            if spec:
                st.drafts += B
                st.draft_tok += B * k
                st.accepted += B * (E - 1)
                st.accept_rate_now = a
                st.accept_len_now = E
            self.G += E
        if pf_tok:
            st.fwd_extend_s += t_pf
        self.t = t1
        # ---- finished prompts join decode
        for r in done_pf:
            self.prefilling.remove(r)
            self.pf_kv -= r.prompt + r.gen0 - r.shared
            if r.first < 0:
                r.first = self.t
                st.h("ttft", self.t - r.arrive)
                st.prefill_s += self.t - r.admitted
                st.prompt += r.prompt
                st.cached += r.cached
            self._join(r)
        # ---- finished generations
        while self.heap and self.heap[0][0] <= self.G:
            _, rid, r = heapq.heappop(self.heap)
            if not r.alive or rid != r.id:
                continue
            self._leave(r)
            st.finished += 1
            if r.out >= r.max_tokens:
                st.finished_len += 1
            st.h("e2e", self.t - r.arrive)
            st.h("tpot", (self.t - r.first) / max(1, r.out - 1))
            st.h("n", r.n)
            st.h("maxtok", r.max_tokens)
            st.h("gentok", r.out)
            st.h("inlen", r.prompt)
            st.decode_s += self.t - r.first
            if self.on_finish:
                self.on_finish(self, r)
        # ---- KV overflow: preempt the newest (recompute)
        kv_used = self.S_kv + self.G * len(self.running) + self.pf_kv + len(self.running) * self.block / 2
        while kv_used > self.pool and len(self.running) > 1:
            rid = next(reversed(self.running))
            r = self.running[rid]
            self._leave(r)
            done = int(self.G - r.startG) + r.gen0
            st.preempt += 1
            st.retract_tok += r.prompt
            nr = Req(r.arrive, r.prompt, r.out, r.n, 0, 0, r.host_ms, r.gpu_ms, r.max_tokens, r.tag)
            nr.id = r.id
            nr.admitted, nr.first, nr.gen0, nr.preempted = r.admitted, r.first, done, r.preempted + 1
            self.waiting.appendleft(nr)
            kv_used = self.S_kv + self.G * len(self.running) + self.pf_kv + len(self.running) * self.block / 2
        st.running = len(self.running) + len(self.prefilling)
        st.waiting = len(self.waiting)
        st.kv_used = min(self.pool, kv_used)
        st.gen_tput = (B * E / step) if B else 0.0
        st.evictable = min(self.pool - st.kv_used, st.cached * 0.02)

    def _join(self, r: Req):
        r.startG = self.G
        r.alive = True
        self.running[r.id] = r
        self.S_ctx += r.prompt + r.gen0 - self.G
        self.S_kv += r.prompt + r.gen0 - r.shared - self.G
        self.extra_host += r.host_ms
        self.extra_gpu += r.gpu_ms
        heapq.heappush(self.heap, (self.G + max(1, r.out - r.gen0), r.id, r))

    def _leave(self, r: Req):
        r.alive = False
        del self.running[r.id]
        self.S_ctx -= r.prompt + r.gen0 - r.startG
        self.S_kv -= r.prompt + r.gen0 - r.shared - r.startG
        self.extra_host -= r.host_ms
        self.extra_gpu -= r.gpu_ms
        if not self.running:
            self.S_ctx = self.S_kv = self.extra_host = self.extra_gpu = 0.0

    def _activity(self, t0, t1, busy, sm, tensor, dram, occ):
        node = self.node
        b0 = int(t0 / node.bw)
        if int(t1 / node.bw) == b0 and t1 < node.duration:
            a = self._acc
            if a is not None and a[0] == b0:
                dt = (t1 - t0) * busy
                a[1] += dt
                a[2] += dt * sm
                a[3] += dt * tensor
                a[4] += dt * dram
                a[5] += dt * occ
                a[6] = t1
                return
            self._flush()
            dt = (t1 - t0) * busy
            self._acc = [b0, dt, dt * sm, dt * tensor, dt * dram, dt * occ, t1, t0]
            return
        self._flush()
        for i, g in enumerate(self.gpus):
            node.add(g, t0, t1, busy, sm, tensor, dram, occ, pid=self.gpu_pids[i])

    def _flush(self):
        a = self._acc
        if a is None:
            return
        self._acc = None
        node = self.node
        b0, busy_s = a[0], a[1]
        if busy_s <= 0:
            return
        span = max(1e-9, a[6] - a[7])
        for i, g in enumerate(self.gpus):
            node.add(g, a[7], a[6], busy_s / span, a[2] / busy_s, a[3] / busy_s, a[4] / busy_s, a[5] / busy_s,
                     pid=self.gpu_pids[i])

    # ----------------------------------------------------------------- sleep / wake (RL colocate)
    def sleep(self, t: float):
        self.advance(t)
        self.sleeping = True
        self.state.sleeping = 1
        for i, g in enumerate(self.gpus):
            self.node.set_mem(g, t, self.gpu_pids[i], 1.1 * GiB)

    def wake(self, t: float, load_s: float = 1.0):
        self.t = max(self.t, t)
        for i, g in enumerate(self.gpus):
            self.node.add(g, t, t + load_s, 0.6, 0.05, 0.0, 0.15, pid=self.gpu_pids[i])
            self.node.link(g, t, pcie_bytes=self.W)
            self.node.set_mem(g, t + 0.3, self.gpu_pids[i], self.mem_engine)
        self.t = t + load_s
        self.sleeping = False
        self.state.sleeping = 0


# ---------------------------------------------------------------------- workloads
def poisson(serve: Serve, rng, t0: float, t1: float, rate, prompt, out, n: int = 1, **kw):
    """Open-loop arrivals at rate(t) per second (thinning)."""
    t = t0
    rmax = max(rate(t0 + (t1 - t0) * i / 50) for i in range(51)) * 1.05 + 1e-9
    while True:
        t += rng.expovariate(rmax)
        if t >= t1:
            break
        if rng.random() * rmax > rate(t):
            continue
        p = prompt(rng)
        for j in range(n):
            serve.submit(Req(t, p, out(rng), n=n, shared=p if j else 0, cached=p if j else 0, **kw))


def closed_loop(serve: Serve, rng, t0: float, conc: int, prompt, out, total: int | None = None,
                until: float = 1e18, think=lambda rng: 0.0, n: int = 1):
    """An eval harness: conc requests in flight; each finish sends the next prompt."""
    left = [total if total is not None else 10**9]
    tag = f"cl{id(left)}"

    def send(t):
        if left[0] <= 0 or t >= until:
            return
        left[0] -= 1
        p = prompt(rng)
        for j in range(n):
            serve.submit(Req(t, p, out(rng), n=n, shared=p if j else 0, cached=p if j else 0, tag=tag))

    prev = serve.on_finish

    def fin(s, r):
        if prev:
            prev(s, r)
        if r.tag == tag:
            send(s.t + think(rng))
    serve.on_finish = fin
    for i in range(conc):
        send(t0 + i * 0.01)
    return left


def lognorm(mu_tokens: float, sigma: float, lo: int = 1, hi: int = 10**6):
    return lambda rng: int(min(hi, max(lo, rng.lognormvariate(math.log(mu_tokens), sigma))))
