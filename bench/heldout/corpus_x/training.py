"""Synchronous data-parallel training (DDP/FSDP), LoRA fine-tuning and RL jobs, simulated
step by step.  Each rank waits for its batch (the loader's prefetch hides a fetch shorter
than the step), runs forward+backward (its own clock sets the pace; a rank with more work
takes longer), then every rank meets in the gradient all-reduce: the early ones sit in
NCCL kernels that spin (GPU-Util counts them, SMs barely), then the transfer runs, then
the optimizer.  Phases that are not training steps (evaluation, checkpoint writes, RL
rollout generation, reward scoring) put their own kind of activity on the GPUs and move
no training counter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrainCfg:
    ranks: int
    params: float  # trainable+frozen parameters touched by fwd/bwd
    tokens_per_step: int  # global
    t_compute: float  # fwd+bwd seconds per step per rank at full clock
    t_opt: float = 0.02
    grad_bytes: float = 0.0  # all-reduce payload per rank
    link_bw: float = 150e9  # bytes/s per rank for the collective
    overlap: float = 0.7  # share of the collective hidden behind backward
    workers: int = 8  # loader workers per rank
    fetch_s: float = 0.3  # seconds for one worker to produce one batch
    tiny_kernels: int = 0  # extra small kernels per step
    tiny_us: float = 15.0
    launch_per_step: int = 2000
    work_unit: str = "tokens"
    step_gap: float = 0.012  # host work between steps (Python, logging, the next batch handed over)


class Training:
    """``phase(t)`` -> 'train' | 'eval' | 'ckpt' | 'rollout' | 'score' | 'idle' | 'done'.
    ``slow(t, rank)``: extra compute factor (1 = none); ``fetch(t)``: loader seconds per
    batch per worker; ``tiny(t)``: extra tiny kernels per step; ``host_share(t, rank)``."""

    def __init__(self, cfg: TrainCfg, rng, phase, slow=None, fetch=None, tiny=None,
                 host_share=None, clock_of=None, other_gpu=None, jitter=None):
        self.cfg, self.rng = cfg, rng
        self.phase = phase
        self.slow = slow or (lambda t, r: 1.0)
        self.fetch = fetch or (lambda t: cfg.fetch_s)
        self.tiny = tiny or (lambda t: cfg.tiny_kernels)
        self.host_share = host_share or (lambda t, r: 1.0)
        self.clock_of = clock_of
        self.other_gpu = other_gpu or (lambda t, r: 0.0)
        self.jitter = jitter or (lambda t, r: (0.0, 0.0))  # (preemptions/s, seconds each)
        self.t = 0.0
        self.segs: list[tuple] = []  # (rank, start, dur, kind, bytes, flops, duty, nvlink)
        self.tokens = 0.0
        self.steps = 0
        self.samples = 0.0
        self.ready_at = 0.0  # when the next batch is ready (prefetch pipeline)
        self.main_cpu = [0.0] * cfg.ranks
        self.worker_cpu = [0.0] * cfg.ranks
        self.io_wait = 0.0
        self.launches = 0.0
        self.step_times: list[float] = []

    def _seg(self, r, start, dur, kind, nbytes=0.0, flops=0.0, duty=1.0, nvl=0.0, other=False):
        if dur > 0:
            self.segs.append((r, start, dur, kind, nbytes, flops, duty, nvl, other))

    def advance(self, t1: float, spec):
        c, rng = self.cfg, self.rng
        guard = 0
        while self.t < t1 and guard < 5000:
            guard += 1
            t = self.t
            ph = self.phase(t)
            if ph in ("idle", "done"):
                nxt = min(t1, t + 0.25)
                self.t = nxt
                continue
            if ph == "ckpt":
                # rank 0 gathers the state, every rank copies its shard to host: short
                # D2H bursts, the rest waiting on storage
                dur = 0.5
                for r in range(c.ranks):
                    self._seg(r, t, dur, "elementwise", nbytes=2e9 * 0.5, duty=0.04)
                    self.main_cpu[r] += dur * 0.35
                self.io_wait += dur
                self.t = t + dur
                continue
            if ph in ("eval", "score"):
                dur = c.t_compute * 0.38 * (1 + 0.03 * rng.random())
                for r in range(c.ranks):
                    rc, rm = self.clock_of(r)
                    d = dur / rc
                    self._seg(r, t, d, "gemm", flops=2 * c.params * c.tokens_per_step / c.ranks,
                              nbytes=0.25 * spec.bw * d, duty=0.82)
                    self.main_cpu[r] += d * 0.9
                self.t = t + dur / min(self.clock_of(r)[0] for r in range(c.ranks)) + 0.01
                continue
            if ph == "rollout":
                # in-process generation: decode steps streaming weights and KV, batched
                dur = 1.0
                for r in range(c.ranks):
                    rc, rm = self.clock_of(r)
                    self._seg(r, t, dur, "decode", nbytes=spec.bw * 0.58 * dur * rm,
                              flops=spec.flops * 0.07 * dur * rc, duty=0.91)
                    self.main_cpu[r] += dur * 0.97
                self.launches += 40 * dur
                self.t = t + dur
                continue
            # a training step
            fetch = self.fetch(t)
            per_batch = fetch / max(1, c.workers)  # the pipeline's rate
            arrive = []
            comp = []
            starts = []
            for r in range(c.ranks):
                rc, rm = self.clock_of(r)
                share = self.host_share(t, r)
                other = self.other_gpu(t, r)
                data_ready = max(t, self.ready_at)
                base = c.t_compute * self.slow(t, r) * (1 + rng.gauss(0, 0.012))
                # 80% of fwd/bwd time is compute-bound, the rest memory-bound kernels
                tc = (base * 0.8 / rc + base * 0.2 / rm)
                # a starved launch thread cannot keep the GPU queue full
                launch_s = c.launch_per_step * 6e-6 / max(share, 0.02)
                busy_frac = min(1.0, tc / max(tc, launch_s))  # launch-bound: gaps between kernels
                tc = max(tc, launch_s)
                jr, jd = self.jitter(t, r)
                tc += jr * tc * jd * 0.5  # the GPU queue runs dry in some preemptions
                tc = tc / (1 - other)
                tiny = self.tiny(t)
                tt = tiny * c.tiny_us * 1e-6
                s = data_ready
                starts.append(s)
                comp.append((tc, tt, other, busy_frac))
                arrive.append(s + tc + tt)
            sync = max(arrive)
            comm = c.grad_bytes / c.link_bw * (1 - c.overlap) + 0.004 if c.ranks > 1 else 0.0
            end = sync + comm + c.t_opt + c.step_gap * (1 + 0.2 * rng.random())
            for r in range(c.ranks):
                tc, tt, other, busy_frac = comp[r]
                s = starts[r]
                work = 6 * c.params * c.tokens_per_step / c.ranks
                self._seg(r, s, tc, "gemm", flops=work, nbytes=0.3 * spec.bw * tc * (1 - other),
                          duty=0.93 * (1 - other) * busy_frac)
                if other:
                    self._seg(r, s, tc, "gemm", duty=other, other=True,
                              flops=spec.flops * 0.45 * other * tc)
                if tt:
                    self._seg(r, s + tc, tt, "tiny", nbytes=tt * spec.bw * 0.02, duty=0.97)
                if c.ranks > 1:
                    wait = sync - arrive[r]
                    self._seg(r, arrive[r], wait + comm, "nccl", nbytes=c.grad_bytes * 0.1,
                              duty=1.0, nvl=c.grad_bytes * 2 * (c.ranks - 1) / c.ranks)
                self._seg(r, sync + comm, c.t_opt, "elementwise",
                          nbytes=c.params / max(1, c.ranks) * 16, duty=0.95)
                # the main thread launches and then spins in cudaStreamSynchronize
                share = self.host_share(t, r)
                self.main_cpu[r] += (end - t) * min(1.0, share) * 0.96
                self.worker_cpu[r] += c.fetch_s  # CPU per batch; the rest is I/O wait
            # loader: the next batch is ready one pipeline period after this one was taken
            self.ready_at = max(self.ready_at, t) + per_batch
            self.launches += c.launch_per_step + self.tiny(t)
            self.step_times.append(end - t)
            self.tokens += c.tokens_per_step
            self.samples += c.tokens_per_step / 4096
            self.steps += 1
            self.t = end

    def take(self, acts, t0: float, t1: float):
        """Put the segments overlapping [t0, t1) on each rank's Activity."""
        keep = []
        for seg in self.segs:
            rr, s, d, kind, nb, fl, duty, nvl, other = seg
            if s + d > t1:
                keep.append(seg)
            if s >= t1 or s + d <= t0:
                continue
            act = acts[rr]
            act.add(s, d, kind, nbytes=nb, flops=fl, duty=duty, other=other)
            if nvl:
                lo, hi = max(s, t0), min(s + d, t1)
                act.nvlink_bytes += nvl * (hi - lo) / d
        self.segs = keep
