"""Training jobs, step by step: a DataLoader feeding ranks that meet in collectives.

A step is ``micro`` forward/backward passes (gradient accumulation), then the gradient
all-reduce (DDP: overlapped with the last backward except the last buckets; FSDP: an
all-gather / reduce-scatter per layer in every pass), then the optimizer (memory-bound:
Adam reads and writes ~16 bytes per parameter).  A collective finishes only when every
rank has reached it, so a rank that computes slowly (clock held low, throttled, sharing
its GPU) makes the others wait *inside the NCCL kernel*: it spins with a few thread blocks
resident, so GPU-Util stays ~100% while SM activity and tensor work collapse.

The DataLoader is modelled as PyTorch's: ``workers`` processes each build whole batches in
turn (batch j by worker j mod W), each at most ``prefetch`` batches ahead, and batches are
consumed in order.  When building a batch costs more CPU than the GPU needs to eat one,
the trainer waits at the start of each micro-step (GPU idle): the saw-tooth.  Worker CPU
time goes to the workers' threads ("pt_data_worker") so a pinned view sees them at 100% of
a core; with ``workers=0`` the main thread builds batches itself.

Compute fractions while fwd/bwd kernels run: SM ~93%, tensor ~45-65% (MFU 35-50% is what
well-tuned LLM training reaches), DRAM ~30%; optimizer: SM ~85%, DRAM ~75%, no tensor.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass
class TrainConfig:
    gpus: tuple[int, ...]
    mode: str = "ddp"  # "single" | "ddp" | "fsdp"
    compute_s: float = 1.2  # fwd+bwd GPU time per step at max clock (all micro-steps)
    clock_bound: float = 0.85  # share of compute time that scales with 1/clock
    micro: int = 4
    tensor: float = 0.55
    sm: float = 0.93
    occ: float = 0.32
    dram: float = 0.30
    opt_s: float = 0.06
    comm_exposed_s: float = 0.05  # the part of the gradient all-reduce not hidden
    fsdp_layers: int = 0  # FSDP: collectives per pass (ranks meet at every layer)
    samples_per_step: int = 512
    work_unit: str = "samples"
    workers: int = 8
    batch_cpu_s: float = 0.4  # CPU seconds to build one micro-batch (one worker)
    prefetch: int = 2
    host_launch_s: float = 0.02  # main thread per micro-step outside the GPU's shadow
    eval_every: int = 0  # steps between evaluations
    eval_batches: int = 20
    eval_batch_s: float = 0.25
    ckpt_every_s: float = 0.0
    ckpt_s: float = 20.0
    ckpt_rank0_only: bool = True  # other ranks spin in a barrier's all-reduce meanwhile
    mem_bytes: int = 60 * 2 ** 30
    model_name: str = ""
    cmdline: str = "python3 -u train.py"
    user: str = "ml"


class DataLoaderSim:
    """Batches in order from W workers, each up to ``prefetch`` ahead."""

    def __init__(self, cfg: TrainConfig, rng: random.Random, cost_fn):
        self.cfg = cfg
        self.rng = rng
        self.cost_fn = cost_fn  # t -> CPU seconds per batch (one worker)
        self.w = max(1, cfg.workers)
        self.free = [0.0] * self.w
        self.consumed: list[float] = []
        self.ready: list[float] = []
        self.busy: list[list[tuple[float, float]]] = [[] for _ in range(self.w)]
        self.next_j = 0

    def _produce(self, j: int) -> None:
        w = j % self.w
        start = self.free[w]
        lag = j - self.w * self.cfg.prefetch
        if lag >= 0:
            start = max(start, self.consumed[lag])
        cost = self.cost_fn(start) * math.exp(self.rng.gauss(0.0, 0.15))
        end = start + cost
        self.free[w] = end
        self.ready.append(end)
        self.busy[w].append((start, end))

    def take(self, j: int, t: float) -> float:
        """When batch j is available to a trainer asking for it at t; afterwards the
        workers' next batches (up to prefetch ahead) are started, as PyTorch does."""
        while len(self.ready) <= j:
            self._produce(len(self.ready))
        got = max(t, self.ready[j])
        if len(self.consumed) == j:
            self.consumed.append(got)
        horizon = j + self.w * self.cfg.prefetch
        while len(self.ready) <= horizon:
            self._produce(len(self.ready))
        return got

    def worker_cpu(self, w: int, t0: float, t1: float) -> float:
        s = 0.0
        for a, b in self.busy[w][-64:]:
            lo, hi = max(a, t0), min(b, t1)
            if hi > lo:
                s += hi - lo
        return s


class Trainer:
    """One training job on cfg.gpus (one rank per GPU)."""

    def __init__(self, scene, cfg: TrainConfig, pid: int, rng: random.Random,
                 batch_cost_fn=None, t_start: float = 0.0):
        self.scene = scene
        self.cfg = cfg
        self.rng = rng
        self.pid = pid  # torchrun (or the python process itself when single)
        n = len(cfg.gpus)
        self.rank_pids = (pid,) if cfg.mode == "single" else tuple(pid + 1 + i for i in range(n))
        self.worker_pids = [tuple(rp + 100 + k for k in range(cfg.workers)) for rp in self.rank_pids]
        self.t = t_start + 5.0  # after start-up
        self.t_start = t_start
        self.step = 0
        self.samples = 0
        self.counter_t = []  # (t, samples) at each step end
        cost = batch_cost_fn or (lambda t: cfg.batch_cpu_s)
        self.loader = DataLoaderSim(cfg, rng, cost) if cfg.workers > 0 else None
        self.cost_fn = cost
        self.batch_j = 0
        self.main_cpu_s = [0.0] * n
        self.main_busy: list[tuple[float, float, float]] = []  # (t0, t1, cores) main thread
        self.next_ckpt = cfg.ckpt_every_s if cfg.ckpt_every_s else None
        self.launch_scale = None  # t -> multiplier on host launch time (host contention)
        self.phase = "train"
        self.inv_ctx = 0

    # ------------------------------------------------------------------ the loop

    def run_until(self, t_stop: float) -> None:
        while self.t < t_stop:
            if self.next_ckpt is not None and self.t >= self.t_start + self.next_ckpt:
                self._checkpoint()
                self.next_ckpt += self.cfg.ckpt_every_s
                continue
            if self.cfg.eval_every and self.step > 0 and self.step % self.cfg.eval_every == 0 \
                    and self.phase != "evaluated":
                self._eval()
                self.phase = "evaluated"
                continue
            self._train_step()
            self.phase = "train"

    def _rank_speed(self, gi: int, t: float) -> tuple[float, float]:
        """(time multiplier for compute on this GPU, share another process takes)."""
        g = self.scene.gpus[gi]
        cb = self.cfg.clock_bound
        slow = cb * g.spec.max_clock / max(1.0, g.clock) + (1 - cb)
        s = g.share(t)
        return slow / (1.0 - s), s

    def _next_batch(self, t: float) -> float:
        """Time the trainer has its next micro-batch (input wait included)."""
        if self.loader is None:  # the main thread builds it: CPU, GPU idle
            cost = self.cost_fn(t) * math.exp(self.rng.gauss(0.0, 0.1))
            self.main_busy.append((t, t + cost, 1.0))
            return t + cost
        got = self.loader.take(self.batch_j, t)
        self.batch_j += 1
        return got

    def _train_step(self) -> None:
        cfg = self.cfg
        gpus = self.scene.gpus
        n = len(cfg.gpus)
        micro_c = cfg.compute_s / cfg.micro
        tr = {gi: self.t for gi in cfg.gpus}
        for m in range(cfg.micro):
            ready = self._next_batch(min(tr.values()))
            host = cfg.host_launch_s * (self.launch_scale(ready) if self.launch_scale else 1.0)
            last = m == cfg.micro - 1
            starts, durs = {}, {}
            for gi in cfg.gpus:
                starts[gi] = max(tr[gi], ready) + host
                mult, _share = self._rank_speed(gi, starts[gi])
                durs[gi] = micro_c * mult * (1.0 + self.rng.gauss(0.0, 0.01))
            if cfg.mode == "fsdp" and n > 1:
                # ranks meet at every layer's all-gather: the slowest sets the pace
                s0 = max(starts.values())
                slowest = max(durs.values())
                comm = cfg.comm_exposed_s / cfg.micro
                for gi in cfg.gpus:
                    self._put(gi, s0, durs[gi], slowest - durs[gi], comm)
                    tr[gi] = s0 + slowest + comm
            elif cfg.mode == "ddp" and n > 1 and last:
                ends = {gi: starts[gi] + durs[gi] for gi in cfg.gpus}
                meet = max(ends.values())
                for gi in cfg.gpus:
                    self._put(gi, starts[gi], durs[gi], meet - ends[gi], cfg.comm_exposed_s)
                    tr[gi] = meet + cfg.comm_exposed_s
            else:  # no collective (one GPU, or accumulation under no_sync): run ahead
                for gi in cfg.gpus:
                    self._put(gi, starts[gi], durs[gi], 0.0, 0.0)
                    tr[gi] = starts[gi] + durs[gi]
            lo = min(starts.values()) - host
            self.main_busy.append((lo, lo + host, 1.0))
            self.main_busy.append((lo + host, max(tr.values()), 0.85))
        t = max(tr.values())
        for gi in cfg.gpus:
            gpus[gi].add(t, cfg.opt_s, 0.85, 0.40, 0.0, 0.74)
        self.main_busy.append((t, t + cfg.opt_s, 0.9))
        t += cfg.opt_s + 0.004
        self.step += 1
        self.samples += cfg.samples_per_step
        self.counter_t.append((t, self.samples))
        self.t = t

    def _put(self, gi: int, t: float, compute: float, wait: float, comm: float) -> None:
        cfg = self.cfg
        g = self.scene.gpus[gi]
        s = g.share(t)
        if s > 0:  # another context's kernels fill the slices this rank lost
            i_sm, i_occ, i_t, i_d = g.intruder_mix(t)
            sm = (1 - s) * cfg.sm + s * i_sm
            occ = (1 - s) * cfg.occ + s * i_occ
            ten = (1 - s) * cfg.tensor + s * i_t
            dr = (1 - s) * cfg.dram + s * i_d
        else:
            sm, occ, ten, dr = cfg.sm, cfg.occ, cfg.tensor, cfg.dram
        g.add(t, compute, sm, occ, ten, dr)
        if wait > 0:  # spinning inside the collective: resident, but a few SMs only
            g.add(t + compute, wait, 0.11, 0.015, 0.0, 0.008)
        if comm > 0:
            g.add(t + compute + wait, comm, 0.22, 0.05, 0.0, 0.16)

    def _eval(self) -> None:
        cfg = self.cfg
        t = self.t
        for _ in range(cfg.eval_batches):
            t = self._next_batch(t)
            durs = []
            for gi in cfg.gpus:
                mult, _ = self._rank_speed(gi, t)
                durs.append(cfg.eval_batch_s * mult)
            slowest = max(durs)
            for gi, d in zip(cfg.gpus, durs):
                g = self.scene.gpus[gi]
                g.add(t, d, 0.88, 0.30, cfg.tensor * 0.8, 0.35)
                if slowest > d and len(cfg.gpus) > 1:
                    g.add(t + d, slowest - d, 0.11, 0.015, 0.0, 0.008)
            t += slowest + 0.01
            self.main_busy.append((t - 0.01, t, 1.0))
        self.t = t

    def _checkpoint(self) -> None:
        """Rank 0 copies weights and optimizer state to host memory and writes them; the
        other ranks wait in a barrier (an NCCL all-reduce that spins) - or every rank
        writes its own shard (torch.distributed.checkpoint) and all GPUs idle."""
        cfg = self.cfg
        t = self.t
        dur = cfg.ckpt_s * (1.0 + self.rng.uniform(-0.1, 0.1))
        if cfg.ckpt_rank0_only and len(cfg.gpus) > 1:
            for gi in cfg.gpus[1:]:
                self.scene.gpus[gi].add(t, dur, 0.11, 0.015, 0.0, 0.008)
        self.main_busy.append((t, t + dur, 1.0))
        self.t = t + dur + 0.5

    # ------------------------------------------------------------------ readings

    def samples_at(self, t: float) -> int:
        """The job's counter as its exporter would show it at t (jumps per step)."""
        lo, hi = 0, len(self.counter_t)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.counter_t[mid][0] <= t:
                lo = mid + 1
            else:
                hi = mid
        return self.counter_t[lo - 1][1] if lo else 0

    def main_cpu(self, t0: float, t1: float) -> float:
        """Main-thread CPU seconds in [t0, t1): launch work plus spin-waiting syncs
        (CUDA's default spin keeps the launching thread near 100% while the GPU runs)."""
        s = 0.0
        for a, b, c in self.main_busy[-400:]:
            lo, hi = max(a, t0), min(b, t1)
            if hi > lo:
                s += (hi - lo) * c
        return s
