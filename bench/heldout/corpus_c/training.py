"""Training jobs (DDP / FSDP over NCCL) and plain CUDA programs, as segments of GPU time.

A step on each rank: wait for the batch (the DataLoader's workers prepare it on the CPU),
forward and backward (tensor-heavy), then the gradient all-reduce: a rank that finished
its compute early spins inside the NCCL kernel until the slowest arrives (resident, a
kernel running, few SMs busy), then the exposed part of the collective and the optimizer
step (memory-bound).  Compute time scales with each rank's own SM clock.  Every segment
is cut at tick and NVML-sample boundaries, so GPU-Util and its 1/6 s samples are the
busy time of each window.
"""

from __future__ import annotations

from gputop.schema import EngineSample, SourceStatus

from corpus_c.hw import GIB, SAMPLE_S, Activity
from corpus_c.world import Contribution, Proc

# (busy, sm, tensor, dram, nvlink share) of each kind of segment
KINDS = {
    "idle": (0.0, 0.0, 0.0, 0.0, 0.0),
    "exit": (0.0, 0.0, 0.0, 0.0, 0.0),
    "compute": (1.0, 0.93, 0.62, 0.33, 0.05),
    "spin": (1.0, 0.12, 0.0, 0.01, 0.02),
    "comm": (1.0, 0.22, 0.0, 0.18, 1.0),
    "optim": (1.0, 0.85, 0.04, 0.72, 0.0),
    "tiny": (1.0, 0.025, 0.0, 0.01, 0.0),
    "eval": (1.0, 0.9, 0.55, 0.38, 0.0),
    "h2d": (0.15, 0.05, 0.0, 0.05, 0.0),
    "matmul": (1.0, 0.956, 0.93, 0.17, 0.0),
    "copy": (1.0, 0.99, 0.0, 0.885, 0.0),
    "graph": (1.0, 0.0031, 0.0, 0.0, 0.0),
    "loop": (0.25, 0.0003, 0.0, 0.0, 0.0),  # a Python loop launching tiny kernels
}


class Segments:
    """Per-rank segments laid end to end; cut into ticks and NVML samples."""

    def __init__(self, ranks: int):
        self.ranks = ranks
        self.queue: list = []  # (duration, (kind per rank))
        self.t = 0.0  # where the queue starts
        self.offset = 0.0  # consumed part of the first segment

    def push(self, dur: float, kinds) -> None:
        if dur > 1e-6:
            self.queue.append((dur, kinds))

    def end(self) -> float:
        return self.t + sum(d for d, _ in self.queue) - self.offset

    def take(self, dt: float):
        """Activities per rank over the next dt, with the busy fraction per NVML sample."""
        acc = [[0.0] * 5 for _ in range(self.ranks)]
        nsamp = max(1, int(round(dt / SAMPLE_S)))
        samp = [[0.0] * nsamp for _ in range(self.ranks)]
        pos = 0.0
        while pos < dt - 1e-9 and self.queue:
            dur, kinds = self.queue[0]
            left = dur - self.offset
            use = min(left, dt - pos)
            for r in range(self.ranks):
                v = KINDS[kinds[r] if isinstance(kinds, tuple) else kinds]
                a = acc[r]
                for j in range(5):
                    a[j] += v[j] * use
                if v[0]:
                    s0, s1 = pos / dt * nsamp, (pos + use) / dt * nsamp
                    i = int(s0)
                    while i < nsamp and i < s1:
                        lo, hi = max(s0, i), min(s1, i + 1)
                        samp[r][i] += v[0] * (hi - lo)
                        i += 1
            pos += use
            if use >= left - 1e-12:
                self.queue.pop(0)
                self.offset = 0.0
            else:
                self.offset += use
        self.t += dt
        out = []
        for r in range(self.ranks):
            a = acc[r]
            out.append(Activity(busy=a[0] / dt, sm=a[1] / dt, tensor=a[2] / dt, dram=a[3] / dt,
                                occ=a[1] / dt * 0.35, busy_samples=samp[r],
                                nvlink_mib_s=a[4] / dt * 90_000))
        return out


class TrainingJob:
    """``step_s``: forward+backward at full clock; ``data_s(t)``: seconds the loader needs
    per batch; ``counter``: None (no metrics page), "tokens" or "samples"."""

    def __init__(self, world, gpus, step_s=0.9, comm_s=0.08, optim_s=0.05, tokens=8 * 4096,
                 samples=8, counter="tokens", data_s=None, workers=8, ckpt=None, evals=None,
                 tiny=None, sharded=False, jitter_s=0.02, rank_var=0.01, model="llama-7b", mem_frac=0.82):
        self.w, self.gpus = world, list(gpus)
        self.n = len(self.gpus)
        self.step_s, self.comm_s, self.optim_s = step_s, comm_s, optim_s
        self.tokens, self.samples, self.counter = tokens, samples, counter
        self.data_s = data_s or (lambda t: 0.2)
        self.workers = workers
        self.ckpt, self.evals, self.tiny, self.sharded = ckpt, evals, tiny, sharded
        self.jitter_s = jitter_s
        self.rank_var = rank_var
        self.seg = Segments(self.n)
        self.steps = 0
        self.work = 0.0
        self.ready = 0.0  # when the loader's next batch is ready
        self.next_ckpt = ckpt[0] if ckpt else None
        self.next_eval = evals[0] if evals else None
        start = world.t0_wall - 1800
        cmd = (f"/opt/conda/bin/python -u train.py --model {model} --bf16 "
               f"--nproc {self.n}")
        self.parent = Proc(world.pid(), "torchrun", "torchrun --nproc-per-node "
                           f"{self.n} train.py --model {model}", start=start)
        self.ranks = [Proc(world.pid(), "python", cmd, g, ppid=self.parent.pid, start=start,
                           mem=int(world.spec.mem_bytes * mem_frac), rss=18 * GIB)
                      for g in self.gpus]
        self.loaders = [Proc(world.pid(), "pt_data_worker", cmd, None, ppid=r.pid, start=start)
                        for r in self.ranks for _ in range(workers)]
        self.boards = [world.boards[g] for g in self.gpus]

    def _plan(self, t):
        """Lay out segments until they cover t."""
        while self.seg.end() <= t + 4.0:
            now = self.seg.end()
            if self.next_ckpt is not None and now >= self.next_ckpt:
                every, dur = self.ckpt
                self.next_ckpt += every
                self.seg.push(0.6, "h2d")
                if self.sharded:
                    self.seg.push(dur, "idle")
                else:  # rank 0 serialises and writes; the others wait in a NCCL barrier
                    self.seg.push(dur, tuple("idle" if r == 0 else "spin"
                                             for r in range(self.n)))
                self.ready = self.seg.end()
                continue
            if self.next_eval is not None and now >= self.next_eval:
                every, dur = self.evals
                self.next_eval += every
                self.seg.push(dur, "eval")
                self.ready = self.seg.end()
                continue
            data = self.data_s(now)
            wait = max(0.0, self.ready - now)
            self.seg.push(wait, "idle")
            start = now + wait
            # the loader (workers in parallel) starts on the next batch at once
            self.ready = start + data
            rng = self.w.rng
            comp = [self.step_s / max(0.3, b.clock_frac) ** 0.92 * max(0.5, 1 + rng.gauss(0, self.rank_var))
                    for b in self.boards]
            slow = max(comp)
            # forward/backward, then spin for the slowest rank, then the exposed collective
            fast = min(comp)
            self.seg.push(fast, "compute")
            order = sorted(range(self.n), key=lambda r: comp[r])
            prev = fast
            for r in order[1:]:
                d = comp[r] - prev
                self.seg.push(d, tuple("compute" if comp[i] >= comp[r] - 1e-12 else "spin"
                                       for i in range(self.n)))
                prev = comp[r]
            self.seg.push(self.comm_s if self.n > 1 else 0.0, "comm")
            self.seg.push(self.optim_s, "optim")
            tiny = self.tiny(start) if self.tiny else 0.0
            self.seg.push(tiny, "tiny")
            self.seg.push(max(0.002, self.jitter_s * (0.5 + rng.random())), "idle")
            self._ends.append(self.seg.end())
            del slow

    def tick(self, t, dt, w) -> Contribution:
        if not hasattr(self, "_ends"):
            self._ends = []
        self._plan(t + dt)
        acts = self.seg.take(dt)
        done = [e for e in self._ends if e <= t + dt]
        self._ends = [e for e in self._ends if e > t + dt]
        self.steps += len(done)
        c = Contribution()
        for g, a in zip(self.gpus, acts):
            c.acts[g] = a
        for r, a in zip(self.ranks, acts):
            r.cpu_s += dt * (0.55 + 0.4 * a.busy) * min(1.0, w.share * 1.1)
            r.sm_util = float(round(100 * a.sm)) if w.spec.gpm else float(round(90 * a.busy))
        loader_busy = min(1.0, self.data_s(t) / max(0.2, self.step_s + self.comm_s))
        for p in self.loaders:
            p.cpu_s += dt * loader_busy * w.share
        c.cores = self.n * 0.95 + len(self.loaders) * loader_busy
        c.procs = list(self.ranks)
        if self.counter:
            self.work += len(done) * (self.tokens if self.counter == "tokens" else self.samples)
            name = "trainer_tokens_total" if self.counter == "tokens" else "trainer_samples_total"
            c.engine = EngineSample(kind="trainer", url="http://127.0.0.1:9100/metrics",
                                    generation_tokens_total=float(self.work),
                                    requests_finished_total=float(self.steps),
                                    work_unit=self.counter,
                                    pids=tuple(p.pid for p in [self.parent, *self.ranks]),
                                    note=f"{name} read as the job's progress")
            c.engine_status = SourceStatus(True, age_s=0.0, poll_s=0.003)
        return c


class CudaProgram:
    """A plain CUDA program (no metrics page): phases of one kind of kernel work."""

    def __init__(self, world, gpu, phases, name="bench", cmdline="./bench", mem=8 * GIB,
                 user="alice"):
        self.w, self.gpu, self.phases = world, gpu, list(phases)  # (start_s, kind, mem)
        self.proc = Proc(world.pid(), name, cmdline, gpu, start=world.t0_wall - 30, mem=mem,
                         user=user)
        self.seg = Segments(1)
        self.laid = 0.0

    def kind_at(self, t):
        kind, mem = "idle", self.proc.mem
        for start, k, m in self.phases:
            if t >= start:
                kind, mem = k, m
        return kind, mem

    def tick(self, t, dt, w) -> Contribution:
        while self.laid < t + dt:
            kind, _ = self.kind_at(self.laid)
            self.seg.push(0.05, kind)
            self.laid += 0.05
        kind, mem = self.kind_at(t)
        c = Contribution()
        (a,) = self.seg.take(dt)
        if kind == "exit":
            return c
        self.proc.mem = mem
        c.acts[self.gpu] = a
        self.proc.cpu_s += dt * 0.98
        self.proc.sm_util = float(round(100 * a.sm))
        c.procs = [self.proc]
        c.cores = 1.0
        return c


class IdleProc:
    """A process holding a context (and memory) on a GPU, doing little or nothing."""

    def __init__(self, world, gpu, name, cmdline, mem, appear=0.0, leave=None, util=0.0,
                 user="bob"):
        self.p = Proc(world.pid(), name, cmdline, gpu, mem=mem, user=user,
                      start=world.t0_wall + appear)
        self.appear, self.leave, self.util = appear, leave, util

    def tick(self, t, dt, w) -> Contribution:
        c = Contribution()
        if t < self.appear or (self.leave is not None and t >= self.leave):
            return c
        u = self.util(t) if callable(self.util) else self.util
        self.p.sm_util = float(round(100 * u))
        self.p.cpu_s += dt * (0.02 + 0.9 * min(1.0, u * 2))
        c.procs = [self.p]
        c.cores = 0.02 + 0.9 * min(1.0, u * 2)
        return c
