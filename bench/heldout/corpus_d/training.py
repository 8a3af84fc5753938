"""Data-parallel training (DDP or FSDP) as per-rank timelines of segments: wait for the
batch (the DataLoader is a producer with a bounded prefetch queue), copy it in, forward and
backward, then the gradient all-reduce that no rank leaves before the last one arrives (an
early rank spins in the NCCL kernel: busy, few SMs), then the optimizer.  Eval passes run
forward only and count no steps; checkpoints hold rank 0 on the host while the others wait
in a barrier (or, async, copy out briefly).  Progress counters move when a step finishes."""

from __future__ import annotations

from bisect import bisect_right

from corpus_d.hw import Act

KINDS = {  # busy, sm, occ, dram, tensor
    "compute": (1.0, 0.93, 0.18, 0.32, 0.62),
    "eval": (1.0, 0.90, 0.20, 0.36, 0.55),
    "wait": (1.0, 0.13, 0.02, 0.01, 0.0),
    "xfer": (1.0, 0.22, 0.04, 0.30, 0.0),
    "opt": (1.0, 0.76, 0.30, 0.80, 0.0),
    "copy": (0.0, 0.0, 0.0, 0.05, 0.0),
    "idle": (0.0, 0.0, 0.0, 0.0, 0.0),
    "tiny": (1.0, 0.025, 0.004, 0.01, 0.0),
}


class Trainer:
    def __init__(self, gpus, rng, *, compute_s=0.42, comm_s=0.035, opt_s=0.03, h2d_s=0.01,
                 loader_s=0.25, prefetch=4, tokens_per_step=8 * 4 * 8192, fsdp=False,
                 eval_every=0, eval_steps=0, eval_s=0.12, ckpt_every=0, ckpt_s=6.0,
                 ckpt_async=False):
        self.gpus, self.rng = gpus, rng
        self.n = len(gpus)
        self.compute_s, self.comm_s, self.opt_s, self.h2d_s = compute_s, comm_s, opt_s, h2d_s
        self.loader_s = [loader_s] * self.n  # seconds of producer time per batch, per rank
        self.prefetch = prefetch
        self.tokens_per_step = tokens_per_step
        self.fsdp = fsdp
        self.eval_every, self.eval_steps, self.eval_s = eval_every, eval_steps, eval_s
        self.ckpt_every, self.ckpt_s, self.ckpt_async = ckpt_every, ckpt_s, ckpt_async
        self.rank_slow = [1.0] * self.n  # compute multiplier (data imbalance)
        self.h2d_slow = [1.0] * self.n  # a degraded PCIe link
        self.tiny_s = 0.0  # extra seconds of 1-block kernels per step
        self.gap_fn = None  # (rng, rank) -> seconds the rank's GPU starves for launches per step
        self.segs = [[] for _ in range(self.n)]
        self.t_free = 0.3  # when the next step may start
        self.produced = [[] for _ in range(self.n)]  # producer finish times of queued batches
        self.p_last = [0.0] * self.n
        self.consumed = [[] for _ in range(self.n)]
        self.step_ends: list[float] = []
        self.steps = 0
        self.paused_until = 0.0

    def _batch_ready(self, i: int, want: float) -> float:
        """When rank i's next batch is there if it asks at ``want``."""
        cons = self.consumed[i]
        gate = cons[-self.prefetch] if len(cons) >= self.prefetch else 0.0
        p = max(self.p_last[i] + self.loader_s[i] * (1 + self.rng.gauss(0, 0.04)), gate)
        self.p_last[i] = p
        ready = max(want, p)
        cons.append(ready)
        if len(cons) > 64:
            del cons[:-32]
        return ready

    def _one_step(self) -> None:
        s0 = self.t_free
        n, rng = self.n, self.rng
        self.steps += 1
        k = self.steps
        if self.eval_every and k % self.eval_every == 0:
            t = s0
            for _ in range(self.eval_steps):
                ends = []
                for i in range(n):
                    d = self.eval_s * self.gpus[i].compute_slow() * (1 + rng.gauss(0, 0.02))
                    self.segs[i].append((t, t + d, "eval"))
                    ends.append(t + d)
                t = max(ends) + 0.004
            for i in range(n):
                self.segs[i].append((t, t + 0.01, "xfer"))
            s0 = t + 0.05
        arrive = []
        starts = []
        for i in range(n):
            ready = self._batch_ready(i, s0)
            if ready > s0:
                self.segs[i].append((s0, ready, "idle"))
            h = self.h2d_s * self.h2d_slow[i]
            self.segs[i].append((ready, ready + h, "copy"))
            c = (self.compute_s * self.rank_slow[i] * self.gpus[i].compute_slow()
                 * (1 + rng.gauss(0, 0.012)))
            st = ready + h
            if self.tiny_s:
                self.segs[i].append((st, st + self.tiny_s, "tiny"))
                st += self.tiny_s
            if self.gap_fn is not None:
                gap = self.gap_fn(rng, i)
                if gap > 0:  # the queue drained mid-step: compute split around a gap
                    half = c * 0.5
                    self.segs[i].append((st, st + half, "compute"))
                    self.segs[i].append((st + half, st + half + gap, "idle"))
                    st += half + gap
                    c -= half
            starts.append(st)
            arrive.append(st + c)
        last = max(arrive)
        for i in range(n):
            if self.fsdp:  # waits spread over the layers' all-gathers: shown in two parts
                lag = last - arrive[i]
                mid = starts[i] + (arrive[i] - starts[i]) * 0.5
                self.segs[i].append((starts[i], mid, "compute"))
                self.segs[i].append((mid, mid + lag * 0.5, "wait"))
                self.segs[i].append((mid + lag * 0.5, last - lag * 0.5, "compute"))
                if lag > 0:
                    self.segs[i].append((last - lag * 0.5, last, "wait"))
            else:
                self.segs[i].append((starts[i], arrive[i], "compute"))
                if last > arrive[i]:
                    self.segs[i].append((arrive[i], last, "wait"))
            self.segs[i].append((last, last + self.comm_s, "xfer"))
            self.segs[i].append((last + self.comm_s, last + self.comm_s + self.opt_s, "opt"))
        end = last + self.comm_s + self.opt_s
        self.step_ends.append(end)
        self.t_free = end + 0.0015
        if self.ckpt_every and k % self.ckpt_every == 0:
            if self.ckpt_async:
                for i in range(n):
                    self.segs[i].append((end, end + 0.8, "xfer"))
                self.t_free = end + 0.8
            else:
                d = self.ckpt_s * (1 + rng.gauss(0, 0.05))
                self.segs[0].append((end, end + d, "idle"))
                for i in range(1, n):
                    self.segs[i].append((end, end + d, "wait"))
                self.t_free = end + d

    def advance(self, t: float, dt: float) -> list[Act]:
        if t < self.paused_until:
            self.t_free = max(self.t_free, self.paused_until)
            return [Act() for _ in range(self.n)]
        while self.t_free < t + dt:
            self._one_step()
        out = []
        a, b = t, t + dt
        for i in range(self.n):
            acc = [0.0] * 5
            pcie = 0.0
            keep = []
            for s, e, kind in self.segs[i]:
                if e > a:
                    keep.append((s, e, kind))
                ov = min(e, b) - max(s, a)
                if ov > 0:
                    lv = KINDS[kind]
                    for j in range(5):
                        acc[j] += lv[j] * ov
                    if kind == "copy":
                        pcie += ov * 20e9 / self.h2d_slow[i]
            self.segs[i] = keep
            out.append(Act(busy=acc[0] / dt, sm=acc[1] / dt, occ=acc[2] / dt, dram=acc[3] / dt,
                           tensor=acc[4] / dt, pcie=pcie / dt,
                           nvlink=(self.comm_s / max(1e-3, self.t_free - t)) * 40e9 if self.n > 1 else 0.0))
        return out

    def steps_by(self, t: float) -> int:
        return bisect_right(self.step_ends, t)
