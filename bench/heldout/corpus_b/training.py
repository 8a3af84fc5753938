"""Training jobs, plain CUDA processes and co-tenant GPU processes.

Training (per rank, per step): the main thread takes the next batch from the DataLoader
(workers each build one batch at a time, in order, with prefetch_factor x workers batches in
flight), copies it to the GPU, runs forward and backward (2x forward) at the model FLOPs /
(peak x clock x MFU), then the gradient all-reduce (DDP; the last bucket cannot overlap the
backward) or the FSDP reduce-scatter/all-gather tail, then the optimizer (HBM-bound: Adam
reads and writes ~16 B of state per parameter).  Ranks meet in the collective: a rank that
arrives early waits inside the NCCL kernel, which keeps GPU-Util at 100% on a few SMs.
Checkpoints: rank 0 serializes while the others spin in ``dist.barrier()`` (an NCCL
all-reduce of one element), or every rank writes its own shard (DCP) with the GPUs idle.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Callable

from gputop.schema import EngineSample, ProcSample, ThreadSample

from .hw import PROFILE_NCCL_WAIT, PROFILE_TINY, Device
from .util import lognormal

P_FWD = (0.93, 0.18, 0.30, None)  # tensor filled from the MFU
P_OPT = (0.86, 0.52, 0.74, 0.0)
P_COMM = (0.20, 0.03, 0.10, 0.0)
P_BARRIER = (0.011, 0.0004, 0.00005, 0.0)  # one-element all-reduce spinning on 1-2 SMs
P_COPY = (0.0, 0.0, 0.02, 0.0)


class Raster:
    """Per-device queue of timed phases, consumed quantum by quantum."""

    def __init__(self, dev: Device):
        self.dev = dev
        self.phases: deque = deque()  # (t0, t1, sm, occ, dram, tensor, busy)

    def push(self, t0: float, t1: float, prof, busy: bool = True, nvlink_bps: float = 0.0):
        if t1 > t0:
            self.phases.append((t0, t1, prof[0], prof[1], prof[2], prof[3], busy, nvlink_bps))

    def consume(self, t: float, q: float) -> None:
        end = t + q
        dev = self.dev
        while self.phases:
            t0, t1, sm, occ, dram, ten, busy, nvl = self.phases[0]
            if t0 >= end:
                break
            a, b = max(t0, t), min(t1, end)
            if b > a:
                d = b - a
                if busy:
                    dev.add(d, d * sm, d * occ, d * dram, d * ten, nvlink_bytes=d * nvl)
                else:
                    dev.add(0.0, 0.0, 0.0, d * dram, 0.0)
            if t1 <= end:
                self.phases.popleft()
            else:
                break


@dataclass
class TrainCfg:
    label: str
    params: float
    tokens_per_rank: float  # tokens (or image-equivalents) per rank per step
    samples_per_rank: int
    mode: str = "ddp"  # ddp | fsdp | single
    mfu: float = 0.42
    flops_per_token: float | None = None  # fwd+bwd; default 6 x params
    workers: int = 8
    worker_s: Callable[[float], float] = lambda t: 0.6  # median seconds per batch per worker
    worker_sigma: float = 0.22
    prefetch: int = 2
    host_gap_s: float = 0.006  # Python between steps with the GPU idle
    ckpt_every: float = 0.0
    ckpt_s: float = 20.0
    ckpt_style: str = "rank0"
    ckpt_first: float = 0.0
    eval_every: float = 0.0
    eval_s: float = 30.0
    eval_first: float = 0.0
    work_unit: str = "samples"
    mem_bytes: float = 62e9
    cmdline: str = "python -u train.py"
    user: str = "research"
    hollow: tuple = ()  # (t0, t1): the step is replaced by a captured graph of tiny kernels
    profile: tuple | None = None  # (sm, occ, dram, tensor) of forward/backward kernels
    worker_factor: Callable[[int, float], float] = lambda r, t: 1.0  # per-rank loader slowdown


class Trainer:
    def __init__(self, cfg: TrainCfg, devices: list[Device], rng: random.Random, pid0: int,
                 start_wall: float):
        self.cfg = cfg
        self.devs = devices
        self.rng = rng
        self.n = len(devices)
        self.raster = [Raster(d) for d in devices]
        self.pid_launcher = pid0 if self.n > 1 else None
        self.pid_ranks = [pid0 + 1 + i * 40 for i in range(self.n)] if self.n > 1 else [pid0]
        self.pid_workers = [[p + 3 + w for w in range(cfg.workers)] for p in self.pid_ranks]
        self.start_wall = start_wall
        self.frontier = 0.0  # time up to which steps are simulated
        self.step_ends: list[float] = []
        self.samples_done = 0.0
        self.next_ckpt = cfg.ckpt_first or cfg.ckpt_every
        self.next_eval = cfg.eval_first or cfg.eval_every
        W = cfg.workers
        self.wfree = [[0.0] * W for _ in range(self.n)]
        self.consumed = [deque() for _ in range(self.n)]  # consumption times, recent
        self.kbatch = [0] * self.n
        self.ready_q = [deque() for _ in range(self.n)]
        # cpu accounting (cumulative seconds)
        self.cpu_main = [0.0] * self.n
        self.cpu_autograd = [0.0] * self.n
        self.cpu_pin = [0.0] * self.n
        self.cpu_workers = [[0.0] * W for _ in range(self.n)]
        self.busy_workers_tick = [[0.0] * W for _ in range(self.n)]
        self.gpu_time_tick = [0.0] * self.n
        self.wait_time_tick = [0.0] * self.n
        self.invol = 0
        self.vol = 0
        self.phase_now = "train"
        self.stopped_at = math.inf
        self.steps_before = int(rng.uniform(2000, 40000))

    def start_at(self, t0: float) -> None:
        """Begin simulating at ``t0`` (before the first frame: the job is already running)."""
        self.frontier = t0
        self.wfree = [[t0] * self.cfg.workers for _ in range(self.n)]
        if self.cfg.ckpt_every and not self.cfg.ckpt_first:
            self.next_ckpt = self.cfg.ckpt_every
        if self.cfg.eval_every and not self.cfg.eval_first:
            self.next_eval = self.cfg.eval_every

    # ---------------------------------------------------------------- data loader
    def _next_batch_ready(self, r: int, now: float) -> float:
        """When rank r's next batch is ready (its workers produce batches in order)."""
        cfg = self.cfg
        W = cfg.workers
        q = self.ready_q[r]
        # keep the prefetch window filled: batch k can start once batch k - pW is consumed
        while len(q) < cfg.prefetch * W:
            k = self.kbatch[r]
            w = k % W
            cons = self.consumed[r]
            gate = cons[-(cfg.prefetch * W)] if len(cons) >= cfg.prefetch * W else 0.0
            start = max(self.wfree[r][w], gate)
            dur = lognormal(self.rng, cfg.worker_s(start) * cfg.worker_factor(r, start),
                            cfg.worker_sigma, 0.01)
            self.wfree[r][w] = start + dur
            self._worker_busy(r, w, start, start + dur)
            q.append(start + dur)
            self.kbatch[r] += 1
        return q[0]

    def _worker_busy(self, r: int, w: int, a: float, b: float) -> None:
        self._wb = getattr(self, "_wb", [])
        self._wb.append((r, w, a, b))

    def _consume(self, r: int, when: float) -> None:
        self.ready_q[r].popleft()
        c = self.consumed[r]
        c.append(when)
        if len(c) > 4 * self.cfg.prefetch * self.cfg.workers:
            c.popleft()

    # ---------------------------------------------------------------- steps
    def _simulate_until(self, horizon: float) -> None:
        cfg = self.cfg
        while self.frontier < horizon and self.frontier < self.stopped_at:
            t = self.frontier
            if cfg.ckpt_every and t >= self.next_ckpt:
                self._checkpoint(t)
                self.next_ckpt += cfg.ckpt_every
                continue
            if cfg.eval_every and t >= self.next_eval:
                self._eval(t)
                self.next_eval += cfg.eval_every
                continue
            if cfg.hollow and cfg.hollow[0] <= t < cfg.hollow[1]:
                for ras in self.raster:
                    ras.push(t, cfg.hollow[1], PROFILE_TINY)
                self.frontier = cfg.hollow[1]
                continue
            self._train_step(t)

    def _rank_times(self, r: int):
        cfg = self.cfg
        dev = self.devs[r]
        cf, mf = dev.clock_factor(), dev.mem_factor()
        share = getattr(dev, "victim_share", 1.0)
        fpt = cfg.flops_per_token or 6 * cfg.params
        t_fb = fpt * cfg.tokens_per_rank / (dev.spec.flops * cf * cfg.mfu) / share
        t_fwd = t_fb / 3
        shard = self.n if cfg.mode == "fsdp" else 1
        t_opt = cfg.params / shard * 16 * 2 / (dev.spec.hbm_bw * 0.8 * mf) / share
        return t_fwd, t_fb - t_fwd, t_opt

    def _train_step(self, t: float) -> None:
        cfg = self.cfg
        n = self.n
        starts, ends_c, times = [], [], []
        for r in range(n):
            ready = self._next_batch_ready(r, t)
            s = max(t, ready) + cfg.host_gap_s * self.rng.uniform(0.7, 1.4)
            if ready > t:
                self.wait_time_tick[r] += ready - t
            self._consume(r, s)
            t_fwd, t_bwd, t_opt = self._rank_times(r)
            # per-step noise: kernel timing varies a little
            jit = math.exp(self.rng.gauss(0, 0.012))
            starts.append(s)
            times.append((t_fwd * jit, t_bwd * jit, t_opt))
            ends_c.append(s + (t_fwd + t_bwd) * jit)
        spec = self.devs[0].spec
        tensor = min(0.95, cfg.mfu * 1.25)
        prof = cfg.profile or (P_FWD[0], P_FWD[1], P_FWD[2], tensor)
        if n > 1:
            grad_bytes = cfg.params * 2
            if cfg.mode == "fsdp":
                t_ar = 3 * grad_bytes * (n - 1) / n / spec.nvlink_bw
                exposed = max(0.04 * (times[0][0] + times[0][1]), t_ar - 0.9 * (times[0][0] + times[0][1]))
            else:
                t_ar = 2 * grad_bytes * (n - 1) / n / spec.nvlink_bw
                tail = 25e6 * 2 * 2 * (n - 1) / n / spec.nvlink_bw + 60e-6
                exposed = max(tail, t_ar - 0.8 * times[0][1])
            sync = max(ends_c)
            nvl_rate = grad_bytes * 2 * (n - 1) / n / max(1e-3, times[0][1] + exposed)
        else:
            exposed = 0.0
            sync = ends_c[0]
            nvl_rate = 0.0
        end = 0.0
        for r in range(n):
            ras = self.raster[r]
            s = starts[r]
            t_fwd, t_bwd, t_opt = times[r]
            ras.push(t, s, P_COPY, busy=False)
            ras.push(s, s + t_fwd, prof)
            ras.push(s + t_fwd, s + t_fwd + t_bwd, prof, nvlink_bps=nvl_rate)
            if n > 1:
                ras.push(s + t_fwd + t_bwd, sync, PROFILE_NCCL_WAIT)
                ras.push(sync, sync + exposed, P_COMM, nvlink_bps=nvl_rate)
            ras.push(sync + exposed, sync + exposed + t_opt, P_OPT)
            end = max(end, sync + exposed + t_opt)
            self.gpu_time_tick[r] += (sync + exposed + t_opt) - s
        self.frontier = end
        self.step_ends.append(end)

    def _eval(self, t: float) -> None:
        cfg = self.cfg
        t_end = t + cfg.eval_s
        tensor = min(0.95, cfg.mfu * 1.1)
        prof = cfg.profile or (0.90, 0.2, 0.34, tensor)
        cur = t
        while cur < t_end:
            s_max = cur
            for r in range(self.n):
                ready = self._next_batch_ready(r, cur)
                s = max(cur, ready) + 0.004
                self._consume(r, s)
                t_fwd, _, _ = self._rank_times(r)
                self.raster[r].push(s, s + 2 * t_fwd, prof)
                s_max = max(s_max, s + 2 * t_fwd)
            cur = s_max + 0.003
        self.frontier = cur

    def _checkpoint(self, t: float) -> None:
        cfg = self.cfg
        d = cfg.ckpt_s * self.rng.uniform(0.85, 1.15)
        if cfg.ckpt_style == "rank0" and self.n > 1:
            for r in range(self.n):
                if r == 0:
                    self.raster[r].push(t, t + 0.12 * d, P_COPY, busy=False)
                else:
                    self.raster[r].push(t, t + d, P_BARRIER)
        else:
            for r in range(self.n):
                self.raster[r].push(t, t + 0.15 * d, P_COPY, busy=False)
        self.frontier = t + d
        self._ckpt_window = (t, t + d)

    # ---------------------------------------------------------------- per quantum
    def quantum(self, t: float, q: float) -> None:
        self._simulate_until(t + q)
        for ras in self.raster:
            ras.consume(t, q)

    def gpu_mem(self, t: float = 0.0):
        return [(d, p, int(self.cfg.mem_bytes * (1 + 0.002 * i)))
                for i, (d, p) in enumerate(zip(self.devs, self.pid_ranks))]

    def samples_at(self, t: float) -> float:
        """Samples seen so far: the job had run for a while before gputop looked."""
        import bisect
        k = bisect.bisect_right(self.step_ends, t)
        return (k + self.steps_before) * self.cfg.samples_per_rank * self.n

    # ---------------------------------------------------------------- host side
    def cpu_tick(self, t: float, dt: float, share: float = 1.0) -> dict:
        """CPU used this tick by the training tree; returns busy threads (for the host)."""
        cfg = self.cfg
        busy_threads = 0.0
        wb = getattr(self, "_wb", [])
        keep = []
        per_worker = [[0.0] * cfg.workers for _ in range(self.n)]
        for (r, w, a, b) in wb:
            x0, x1 = max(a, t - dt), min(b, t)
            if x1 > x0:
                per_worker[r][w] += x1 - x0
            if b > t:
                keep.append((r, w, a, b))
        self._wb = keep
        for r in range(self.n):
            gpu = min(1.0, self.gpu_time_tick[r] / dt) if dt else 0.0
            wait = min(1.0, self.wait_time_tick[r] / dt) if dt else 0.0
            main = (0.05 + 0.93 * (1 - wait)) * share
            self.cpu_main[r] += main * dt
            self.cpu_autograd[r] += 0.35 * gpu * dt * share
            self.cpu_pin[r] += 0.06 * dt
            busy_threads += main + 0.35 * gpu + 0.06
            for w in range(cfg.workers):
                u = min(1.0, per_worker[r][w] / dt) * share
                self.cpu_workers[r][w] += u * dt
                busy_threads += u
            self.gpu_time_tick[r] = 0.0
            self.wait_time_tick[r] = 0.0
        self.vol += int(dt * self.n * (400 + 60 * cfg.workers))
        self.invol += int(dt * self.n * (8 + 3 * cfg.workers) * (1 + 30 * (1 - share)))
        return {"busy": busy_threads}

    def procs(self, wall: float) -> list[ProcSample]:
        out = []
        for r, (dev, pid) in enumerate(zip(self.devs, self.pid_ranks)):
            cpu = self.cpu_main[r] + self.cpu_autograd[r] + self.cpu_pin[r]
            u = dev.last_util
            out.append(ProcSample(pid=pid, gpu_index=dev.index, name="python", cmdline=self.cfg.cmdline,
                                  user=self.cfg.user, ppid=self.pid_launcher or 1,
                                  start_time_s=self.start_wall - 600, mem_bytes=int(self.cfg.mem_bytes),
                                  sm_util_pct=None if u is None else float(round(u)),
                                  cpu_s=round(cpu, 3), rss_bytes=int(18e9 + 0.2e9 * r)))
        return out

    def tree(self) -> list[int]:
        pids = ([self.pid_launcher] if self.pid_launcher else []) + list(self.pid_ranks)
        for ws in self.pid_workers:
            pids += ws
        return pids

    def threads(self) -> list[ThreadSample]:
        th = []
        for r, pid in enumerate(self.pid_ranks):
            th.append(ThreadSample(pid, pid, "pt_main_thread", round(self.cpu_main[r], 3)))
            th.append(ThreadSample(pid + 1, pid, "pt_autograd_0", round(self.cpu_autograd[r], 3)))
            th.append(ThreadSample(pid + 2, pid, "pt_data_pin", round(self.cpu_pin[r], 3)))
            for w, wp in enumerate(self.pid_workers[r]):
                th.append(ThreadSample(wp, wp, "pt_data_worker", round(self.cpu_workers[r][w], 3)))
        th.sort(key=lambda x: -x.cpu_s)
        return th[:12]

    def tree_cpu(self) -> float:
        return (sum(self.cpu_main) + sum(self.cpu_autograd) + sum(self.cpu_pin)
                + sum(sum(w) for w in self.cpu_workers))

    def trainer_sample(self, t: float, mono: float, wall: float, port: int = 9100) -> EngineSample:
        per_sample = self.cfg.tokens_per_rank / max(1, self.cfg.samples_per_rank)
        value = self.samples_at(t)
        if self.cfg.work_unit == "tokens":
            value *= per_sample
        return EngineSample(kind="trainer", url=f"http://127.0.0.1:{port}/metrics",
                            generation_tokens_total=float(value), work_unit=self.cfg.work_unit,
                            pids=tuple(self.tree()), time_mono_s=mono, time_wall_s=wall)


class PlainProc:
    """A plain CUDA program: a schedule of phases (t0, t1, profile, busy share)."""

    def __init__(self, dev: Device, pid: int, name: str, cmdline: str, user: str, mem: float,
                 phases: list, rng: random.Random, start_wall: float, ppid: int = 1):
        self.dev = dev
        self.pid = pid
        self.name = name
        self.cmdline = cmdline
        self.user = user
        self.mem = mem
        self.phases = phases
        self.rng = rng
        self.start_wall = start_wall
        self.ppid = ppid
        self.cpu = 0.0
        self.alive = (phases[0][0], phases[-1][1]) if phases else (0, 0)

    def _phase(self, t: float):
        for ph in self.phases:
            if ph[0] <= t < ph[1]:
                return ph
        return None

    def quantum(self, t: float, q: float) -> None:
        ph = self._phase(t)
        if ph is None:
            return
        _, _, prof, busy = ph[:4]
        b = min(1.0, max(0.0, busy + self.rng.gauss(0, 0.01)))
        self.dev.add_phase(q * b, *prof)

    def running(self, t: float) -> bool:
        return self.alive[0] <= t < self.alive[1]

    def gpu_mem(self, t: float):
        return [(self.dev, self.pid, int(self.mem))] if self.running(t) else []

    def cpu_tick(self, t: float, dt: float) -> dict:
        if not self.running(t):
            return {"busy": 0.0}
        self.cpu += dt * 0.98
        return {"busy": 0.98}

    def procs(self, t: float):
        if not self.running(t):
            return []
        u = self.dev.last_util
        return [ProcSample(pid=self.pid, gpu_index=self.dev.index, name=self.name, cmdline=self.cmdline,
                           user=self.user, ppid=self.ppid, start_time_s=self.start_wall + self.alive[0],
                           mem_bytes=int(self.mem), sm_util_pct=None if u is None else float(round(u)),
                           cpu_s=round(self.cpu, 3), rss_bytes=int(3.1e9))]


class Hog:
    """Another process time-slicing the same GPU (no MPS): while both have work the GPU
    alternates between contexts, so the victim's kernels take 1/share as long; the hog
    also runs in the victim's idle gaps.  ``duty(t)`` is how much of the time it has work."""

    def __init__(self, dev: Device, pid: int, name: str, cmdline: str, user: str, mem: float,
                 t0: float, t1: float, duty: Callable[[float], float], prof, rng: random.Random,
                 start_wall: float):
        self.dev = dev
        self.pid = pid
        self.name = name
        self.cmdline = cmdline
        self.user = user
        self.mem = mem
        self.t0, self.t1 = t0, t1
        self.duty = duty
        self.prof = prof
        self.rng = rng
        self.start_wall = start_wall
        self.cpu = 0.0
        self.own_busy = 0.0

    def running(self, t: float) -> bool:
        return self.t0 <= t < self.t1

    def pre_quantum(self, t: float) -> None:
        """Set the victim's share of the GPU before the victims simulate the quantum."""
        if self.running(t):
            d = max(0.0, min(1.0, self.duty(t)))
            self.dev.victim_share = 1.0 / (1.0 + d)
        else:
            self.dev.victim_share = 1.0

    def quantum(self, t: float, q: float) -> None:
        dev = self.dev
        if not self.running(t):
            dev.stretch = 0.0
            return
        d = max(0.0, min(1.0, self.duty(t)))
        stretch = getattr(dev, "stretch", 0.0)
        free = max(0.0, q - dev.q_busy)
        mine = min(q, stretch + d * free)
        sm, occ, dram, ten = self.prof
        dev.add(mine, mine * sm, mine * occ, mine * dram, mine * ten)
        self.own_busy += mine
        dev.stretch = 0.0

    def gpu_mem(self, t: float):
        return [(self.dev, self.pid, int(self.mem))] if self.running(t) else []

    def cpu_tick(self, t: float, dt: float) -> dict:
        if not self.running(t):
            return {"busy": 0.0}
        self.cpu += dt * 1.0
        return {"busy": 1.0}

    def procs(self, t: float, dt: float = 1.0):
        if not self.running(t):
            return []
        u = min(100.0, self.own_busy * 100 / dt)
        self.own_busy = 0.0
        return [ProcSample(pid=self.pid, gpu_index=self.dev.index, name=self.name, cmdline=self.cmdline,
                           user=self.user, ppid=1, start_time_s=self.start_wall + self.t0,
                           mem_bytes=int(self.mem), sm_util_pct=float(round(min(100.0, u))),
                           cpu_s=round(self.cpu, 3), rss_bytes=int(6.2e9))]
