"""Workloads that lay GPU activity onto a fine timeline: step-based jobs (training, MD, docking,
cryo-EM, structure prediction) and request-level serving engines (engines.py)."""
from __future__ import annotations

from corpus_ap.hw import DT


class Bins:
    """Per-GPU activity sums per grain (seconds of busy / SM / tensor / DRAM time)."""

    def __init__(self, ngpu, seconds):
        n = int(seconds / DT) + 400
        self.n = n
        self.a = [[[0.0] * n for _ in range(4)] for _ in range(ngpu)]

    def dep(self, g, t0, t1, busy, sm, ten, dram):
        if t1 <= t0:
            return
        arr = self.a[g]
        i = int(t0 / DT)
        while t0 < t1 and i < self.n:
            edge = (i + 1) * DT
            w = min(t1, edge) - t0
            if w > 0:
                arr[0][i] += w * busy
                arr[1][i] += w * sm
                arr[2][i] += w * ten
                arr[3][i] += w * dram
            t0 = edge
            i += 1

    def get(self, g, i):
        a = self.a[g]
        return (min(1.0, a[0][i] / DT), min(1.0, a[1][i] / DT), min(1.0, a[2][i] / DT),
                min(1.0, a[3][i] / DT))


class Env:
    """What a job sees of the node when it schedules work: clocks, GPU time left to it by
    other tenants, and the CPU its threads and launch thread get."""

    def __init__(self, node):
        self.node = node

    def r(self, g):
        return self.node.gpus[g].r

    def avail(self, g):
        return self.node.avail[g]

    @property
    def grant(self):
        return self.node.host.grant

    @property
    def grant_launch(self):
        return self.node.host.grant_launch


def kernel_time(spec, r, flops, nbytes, fill=0.9):
    """(seconds, sm, tensor, dram) of GPU work: max of FLOPs at this clock and bytes at HBM speed."""
    tc = flops / (spec.flops * 0.72 * max(r, 0.3)) if flops else 0.0
    tm = nbytes / (spec.bw * 0.85) if nbytes else 0.0
    t = max(tc, tm) + 0.15 * min(tc, tm)
    if t <= 0:
        return 0.0, 0.0, 0.0, 0.0
    ten = min(0.95, tc / t * 0.9)
    dram = min(0.97, tm / t * 0.95 + 0.05)
    sm = fill * (0.55 + 0.45 * min(1.0, tc / t))
    return t, min(1.0, sm), ten, dram


class StepJob:
    """A step loop on one or more GPUs (ranks).  Per macro-step, per rank: wait for the input
    queue (loader workers x CPU cost per batch + storage time), launch K kernels from one host
    thread (launch cost / CPU grant) while the GPU runs them (time from FLOPs and bytes at this
    GPU's clock and share), then a collective that starts when the last rank arrives (early
    ranks spin in an NCCL kernel: busy, SM low), then the optimizer.  Phases (checkpoint,
    evaluation, CPU-only MSA search) come from ``phase(t)`` or every N steps."""

    def __init__(self, rng, gpus, spec, *, flops, nbytes, kernels, launch_us=5.0, host_ms=2.0,
                 fill=0.9, inner=1, workers=0, batch_cpu_s=0.0, io_s=lambda t: 0.0, prefetch=2,
                 coll_bytes=0.0, link_bw=200e9, coll_lat=30e-6, opt_bytes=0.0, accum=1,
                 ckpt_every=0, ckpt_s=0.0, eval_every=0, eval_steps=0, samples=1, tokens=0,
                 phase=None, msa_threads=0.0, jitter=0.03, graphs=False, sync_ms=0.0):
        self.rng, self.gpus, self.spec = rng, gpus, spec
        self.flops, self.nbytes, self.kernels = flops, nbytes, kernels
        self.launch_us, self.host_ms, self.fill, self.inner = launch_us, host_ms, fill, inner
        self.workers, self.batch_cpu_s, self.io_s, self.prefetch = workers, batch_cpu_s, io_s, prefetch
        self.coll_bytes, self.link_bw, self.coll_lat = coll_bytes, link_bw, coll_lat
        self.opt_bytes, self.accum = opt_bytes, accum
        self.ckpt_every, self.ckpt_s, self.eval_every, self.eval_steps = ckpt_every, ckpt_s, eval_every, eval_steps
        self.samples, self.tokens = samples, tokens
        self.phase = phase or (lambda t: "train")
        self.msa_threads = msa_threads
        self.jitter, self.graphs = jitter, graphs
        self.sync_ms = sync_ms  # host-only work per macro-step with the GPU idle (MD pair search / DD)
        n = len(gpus)
        self.t = 0.0
        self.q = [float(prefetch * max(workers, 1))] * n  # batches ready per rank
        self.steps = 0
        self.done_samples = 0.0
        self.done_tokens = 0.0
        self.micro = 0
        self.eval_left = 0
        self.mods = {}  # fault knobs: name -> fn(t) -> value
        self.demand = 1.0
        self.launch_demand = 0.5
        self.launches = 0.0  # cumulative kernel launches (eBPF)
        self.graph_launches = 0.0
        self.slow_rank = {}  # rank -> fn(t) extra factor on its host time (straggler host)
        self.link_slow = {}  # rank -> fn(t) factor on its link bandwidth
        self.pcie = [0.0] * n
        self.nvlink = [0.0] * n
        self.threads = 2 + workers

    def m(self, name, t, default=1.0):
        fn = self.mods.get(name)
        return fn(t) if fn else default

    def advance(self, until, env, bins):
        rng = self.rng
        while self.t < until:
            t = self.t
            ph = self.phase(t)
            if ph in ("msa", "idle", "reload"):
                dt = DT
                self.demand = (self.msa_threads if ph == "msa" else 0.2) * self.m("cpu", t)
                self.launch_demand = 0.05
                self.t += dt
                continue
            if self.ckpt_every and self.steps and self.steps % self.ckpt_every == 0 and not getattr(self, "_ck", False):
                self._ck = True
                dur = self.ckpt_s * (1 + rng.gauss(0, 0.05))
                self.demand = 1.2 + 0.2 * self.workers
                self.launch_demand = 0.9
                self.t += dur
                continue
            self._ck = False
            evaluating = False
            if self.eval_every and self.steps and self.steps % self.eval_every == 0 and self.eval_left == 0 \
                    and not getattr(self, "_ev", False):
                self.eval_left = self.eval_steps
                self._ev = True
            if self.eval_left > 0:
                evaluating = True
            n = len(self.gpus)
            g_cpu, g_l = env.grant, env.grant_launch
            # per-rank input wait
            ready = []
            worker_busy = 0.0
            kscale = self.m("kernels", t)
            fscale = self.m("flops", t)
            bscale = self.m("bytes", t)
            fill = self.fill * self.m("fill", t)
            inner = self.inner
            for k, g in enumerate(self.gpus):
                w = int(round(self.workers * self.m("workers", t)))
                wait = 0.0
                if self.workers:
                    per = self.batch_cpu_s * self.m("batch_cpu", t) / max(g_cpu, 0.05) + self.io_s(t)
                    rate = w / max(per, 1e-6) * inner  # batches per second (inner steps consume one each)
                    worker_busy += min(1.0, self.batch_cpu_s * self.m("batch_cpu", t) / max(per, 1e-6)) * w
                    need = float(inner)
                    if self.q[k] < need:
                        wait = (need - self.q[k]) / rate * inner
                        self.q[k] = need
                    self.q[k] -= need
                    self._rate = rate
                # host launch time vs GPU time for this rank's compute
                sh = self.slow_rank.get(k)
                hf = sh(t) if sh else 1.0
                gl = g_l / hf
                K = self.kernels * kscale * (0.35 if evaluating else 1.0)
                if self.graphs:
                    host = inner * (self.host_ms * 1e-3 + 20e-6) / max(g_cpu / hf, 0.02)
                else:
                    host = inner * (K * self.launch_us * 1e-6 / max(gl, 0.02)
                                    + self.host_ms * 1e-3 / max(g_cpu / hf, 0.02))
                fl = self.flops * fscale * (0.33 if evaluating else 1.0)
                kt, sm, ten, dram = kernel_time(self.spec, env.r(g), fl, self.nbytes * bscale, fill)
                # device time per small kernel: the 4.2-us floor, times a job's own factor where its
                # kernels are tiny but not empty (e.g. batch-1 GNN gathers/scatters with atomics)
                if "kdev" in self.mods:
                    kdev = 4.2e-6 * self.m("kdev", t)
                    w = kt / max(kt + K * kdev, 1e-12)  # the floor time does no tensor math and moves few bytes
                    ten, dram = ten * w, dram * w
                else:
                    kdev = 4.2e-6
                gpu = inner * (kt + K * kdev) / max(env.avail(g), 0.05)
                jit = 1 + rng.gauss(0, self.jitter)
                gpu *= jit
                span = max(host, gpu)
                if self.sync_ms:
                    wait += self.sync_ms * 1e-3 / max(g_cpu / hf, 0.02)
                ready.append((wait, span, gpu, sm, ten, dram))
            # lay it down; collective when all ranks arrive
            ends = []
            for k, g in enumerate(self.gpus):
                wait, span, gpu, sm, ten, dram = ready[k]
                s0 = t + wait
                b = gpu / span if span > 0 else 0.0
                bins.dep(g, s0, s0 + span, b, b * sm, b * ten, b * dram)
                ends.append(s0 + span)
                self.pcie[k] += 2e8 * (gpu + 0.01)
            last = max(ends)
            do_coll = n > 1 and not evaluating and (self.micro + 1) % self.accum == 0 and self.coll_bytes > 0
            end = last
            if do_coll:
                lf = min((self.link_slow[k](t) if k in self.link_slow else 1.0) for k in range(n))
                x = inner * (self.coll_lat + 2 * (n - 1) / n * self.coll_bytes / (self.link_bw * lf))
                for k, g in enumerate(self.gpus):
                    bins.dep(g, ends[k], last, 1.0, 0.08, 0.0, 0.02)  # spinning in NCCL
                    bins.dep(g, last, last + x, 1.0, 0.18, 0.0, 0.3)
                    self.nvlink[k] += self.coll_bytes * inner
                end = last + x
            if not evaluating and (self.micro + 1) % self.accum == 0 and self.opt_bytes:
                to = self.opt_bytes * bscale / (self.spec.bw * 0.85)
                for g in self.gpus:
                    bins.dep(g, end, end + to, 1.0, 0.7, 0.0, 0.9)
                end += to
            step_s = max(end - t, 1e-4)
            # CPU demand of the tree: launch threads + python + workers (+ MSA)
            host_share = min(1.0, ready[0][1] and (sum(r[1] for r in ready) / n) / step_s)
            self.launch_demand = min(1.0, 0.15 + 0.85 * host_share * (1.0 if not self.graphs else 0.2))
            self.demand = n * (0.25 + self.launch_demand) + worker_busy + self.msa_threads * (ph == "msa_gpu")
            self.demand *= self.m("cpu", t)
            self.launches += n * inner * self.kernels * kscale * (0.35 if evaluating else 1.0) * (0 if self.graphs else 1)
            self.graph_launches += n * inner if self.graphs else 0
            if self.workers:  # workers refill while the step runs
                for k in range(n):
                    self.q[k] = min(self.prefetch * max(1, self.workers) * inner, self.q[k] + self._rate * step_s)
            self.t = end
            self.micro += 1
            if evaluating:
                self.eval_left -= 1
                continue
            self._ev = False
            if self.micro % self.accum == 0:
                self.steps += inner
                self.done_samples += self.samples * n * inner
                self.done_tokens += self.tokens * n * inner

    def gpu_mem(self, k):
        return getattr(self, "mem", 20 * 2**30)


class Tenant:
    """Another process on a GPU (outside the job's tree): wants ``demand`` of the GPU's time."""

    def __init__(self, gpu, t0, t1, demand, sm, ten, dram, mem, pid, name, cmdline, user,
                 ramp=0.0, inside=False, cpu=0.3):
        self.gpu, self.t0, self.t1, self.demand = gpu, t0, t1, demand
        self.sm, self.ten, self.dram, self.mem = sm, ten, dram, mem
        self.pid, self.name, self.cmdline, self.user = pid, name, cmdline, user
        self.ramp = ramp
        self.cpu = cpu
        self.inside = inside  # True: one of the job's own processes (a sweep member)

    def want(self, t):
        if t < self.t0 or t >= self.t1:
            return 0.0
        if self.ramp and t < self.t0 + self.ramp:
            return self.demand * (t - self.t0) / self.ramp
        return self.demand

    def present(self, t):
        return self.t0 - 5 <= t < self.t1 + 3
