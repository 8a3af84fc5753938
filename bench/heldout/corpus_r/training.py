"""A data-parallel training job, step by step.

Each step: take a batch from the DataLoader's prefetch queue (waiting when it is empty),
run forward/backward (the GPU at ``duty`` with the host launching ahead unless launching
is slower than the kernels run), wait in the collective for the slowest rank (NCCL
kernel resident: GPU-Util stays up, ~12% of SMs active), then the exposed part of the
gradient all-reduce.  The progress counter (``trainer_tokens_total`` or
``trainer_samples_total``) and the step counter move when the optimizer step has
finished on rank 0, once per step: with 3.5 s steps a 1 s tick sees it move every
third or fourth tick.

Calibration from the real H200 lab (data/h200/lab/train.gputop, Qwen2.5-0.5B, batch 8 x
512, 4 DataLoader workers): 13 steps/s, 47k tokens/s, GPU-Util 55-87%, SM 45-66%,
occupancy 21-31%, DRAM 21-30%, tensor 12-18%, 380-500 W; the main thread at 1.0 core.
DataLoader workers asleep (stall phase): 4 steps per 2 s, GPU-Util alternating 0 and
3-40%, the tree's CPU at 0.3 core.  CUDA-graph phase of one-element kernels: GPU-Util
99%, SM 0.3%, 123 W, 12-16k tokens/s.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .hw import Activity, GpuSpec

SLICE = 0.2


@dataclass
class TEnv:
    clk: dict = field(default_factory=dict)
    rank_factor: dict = field(default_factory=dict)
    cpu_avail: float = 1.0  # share of CPU the job's threads get (main threads)
    worker_avail: float = 1.0  # share the DataLoader workers get
    io_mult: float = 1.0  # storage slower: seconds of I/O per batch multiplied
    cpu_mult: float = 1.0  # decoding/augmenting a batch costs more CPU
    mode: str = "train"  # train | eval | ckpt
    tiny_s: float = 0.0  # extra per step of one-element kernels (CUDA graph replay)
    tiny_sm: float = 0.003
    jitter_p: float = 0.0
    jitter_s: float = 0.0
    host_mult: float = 1.0  # more kernels per step launched from Python
    share: dict = field(default_factory=dict)


class Trainer:
    def __init__(self, spec: GpuSpec, gpus: list[int], rng: random.Random, duration: float, *,
                 work_per_step: float, unit: str = "tokens", compute_s: float, comm_s: float = 0.0,
                 duty: float = 0.96, sm_fill: float = 0.85, tensor: float = 0.45, dram: float = 0.3,
                 occ: float = 0.45, workers: int = 8, batch_cpu_s: float = 0.2,
                 batch_io_s: float = 0.0, prefetch: int = 2, host_s: float = 0.01,
                 launches_per_step: int = 2000, nvl_gb_per_step: float = 0.0,
                 eval_s: float = 0.0, step_jitter: float = 0.03, mem_bytes: int = 60 * 2**30,
                 url: str = "http://127.0.0.1:9400/metrics", counter: str = "trainer_tokens_total",
                 wait_sm: float = 0.12, main_cpu: float = 0.95):
        self.spec, self.gpus, self.rng = spec, gpus, rng
        self.work, self.unit = work_per_step, unit
        self.compute_s, self.comm_s, self.duty = compute_s, comm_s, duty
        self.sm_fill, self.tensor, self.dram, self.occ = sm_fill, tensor, dram, occ
        self.workers, self.batch_cpu_s, self.batch_io_s = workers, batch_cpu_s, batch_io_s
        self.q = workers * prefetch
        self.host_s = host_s
        self.launches = launches_per_step
        self.nvl = nvl_gb_per_step
        self.step_jitter = step_jitter
        self.mem_bytes = mem_bytes
        self.url, self.counter = url, counter
        self.wait_sm = wait_sm
        self.main_cpu = main_cpu
        self.nslices = int(math.ceil((duration + 120.0) / SLICE)) + 400  # + the unrecorded warm-up
        self.bins = {g: [[0.0] * 7 for _ in range(self.nslices)] for g in gpus}
        self.cpu_bins = [[0.0, 0.0, 0.0] for _ in range(self.nslices)]  # main, autograd, workers
        self.cursor = None  # the next step's start (set on the first tick)
        self.credit = float(self.q)
        self.events: list[tuple[float, float]] = []  # (step end, work)
        self.ev_i = 0
        self.steps = 0.0
        self.done_work = 0.0
        self.cpu = dict(main=0.0, workers=0.0, autograd=0.0)
        self.launch_acc = dict(kernel=0.0, driver=0.0, graph=0.0)
        self.jit_acc = [0.0, 0.0]
        self.up = True

    # --------------------------------------------------------------- painting
    def _paint(self, g: int, a: float, b: float, busy: float, sm: float, occ: float, dram: float,
               tensor: float, nvl: float = 0.0):
        if b <= a:
            return
        i0, i1 = int(a / SLICE), int(b / SLICE)
        bins = self.bins[g]
        for i in range(i0, min(i1 + 1, self.nslices)):
            lo, hi = max(a, i * SLICE), min(b, (i + 1) * SLICE)
            w = hi - lo
            if w <= 0:
                continue
            row = bins[i]
            row[0] += w * busy
            row[1] += w * sm
            row[2] += w * occ
            row[3] += w * dram
            row[4] += w * tensor
            row[5] += w * nvl

    def _paint_cpu(self, a: float, b: float, main: float, autograd: float, workers: float):
        """CPU seconds spent over [a, b), spread evenly."""
        if b <= a:
            return
        span = b - a
        for i in range(int(a / SLICE), min(int(b / SLICE) + 1, self.nslices)):
            w = min(b, (i + 1) * SLICE) - max(a, i * SLICE)
            if w > 0:
                row = self.cpu_bins[i]
                row[0] += main * w / span
                row[1] += autograd * w / span
                row[2] += workers * w / span

    # --------------------------------------------------------------- one step
    def _loader_rate(self, env: TEnv) -> float:
        per_batch = self.batch_cpu_s * env.cpu_mult / max(0.05, env.worker_avail) + self.batch_io_s * env.io_mult
        return self.workers / max(per_batch, 1e-6)

    def _step(self, t: float, env: TEnv, rel0: float):
        rng = self.rng
        rate = self._loader_rate(env)
        start = t
        if env.mode == "ckpt":
            # writing a checkpoint: the GPU copies tensors out, then idles; nothing counted
            end = t + 1.0
            for g in self.gpus:
                self._paint(g, start - rel0, end - rel0, 0.05, 0.01, 0.002, 0.02, 0.0)
            self._paint_cpu(start - rel0, end - rel0, 1.0 + 0.05 * len(self.gpus), 0.0, 0.0)
            self.cursor = end
            self.credit = min(self.q, self.credit + rate * 1.0)
            return
        # the batch
        wait = 0.0
        if self.credit >= 1.0:
            self.credit -= 1.0
        else:
            wait = (1.0 - self.credit) / rate
            self.credit = 0.0
        noise = 1 + rng.gauss(0, self.step_jitter)
        host = self.host_s * env.host_mult / max(0.05, env.cpu_avail)
        if env.jitter_p:
            host += self.launches * env.jitter_p * env.jitter_s
        walls, comps = {}, {}
        evalm = env.mode == "eval"
        for g in self.gpus:
            c = env.clk.get(g, 1.0)
            comp = self.compute_s * noise * env.rank_factor.get(g, 1.0) / (c ** 0.9)
            if evalm:
                comp *= 0.34  # forward only
            share = env.share.get(g, 0.0)
            comps[g] = comp
            walls[g] = max(comp / max(0.05, 1 - share), host) + env.tiny_s
        slowest = max(walls.values())
        comm = 0.0 if evalm else self.comm_s
        c0 = start + wait
        for g in self.gpus:
            comp, wall = comps[g], walls[g]
            busy_frac = min(1.0, comp / max(wall - env.tiny_s, 1e-9)) * self.duty
            fill = self.sm_fill * (0.75 if evalm else 1.0)
            self._paint(g, c0 - rel0, c0 + wall - env.tiny_s - rel0, busy_frac, busy_frac * fill,
                        busy_frac * self.occ, busy_frac * self.dram, busy_frac * self.tensor * (0.6 if evalm else 1.0))
            if env.tiny_s:
                self._paint(g, c0 + wall - env.tiny_s - rel0, c0 + wall - rel0, 0.99, env.tiny_sm, 0.0,
                            0.002, 0.0)
            # waiting in the collective for the slowest rank, then the exposed all-reduce
            self._paint(g, c0 + wall - rel0, c0 + slowest - rel0, 1.0, self.wait_sm, 0.03, 0.01, 0.0,
                        0.0)
            if comm:
                self._paint(g, c0 + slowest - rel0, c0 + slowest + comm - rel0, 1.0, 0.18, 0.05, 0.08,
                            0.0, self.nvl * 2**30 / 2**20 / max(comm, 1e-3))
        end = c0 + slowest + comm
        dur = end - start
        self.credit = min(float(self.q), self.credit + rate * dur)
        # CPU: each rank's main thread spins in launches and syncs; workers make batches
        made = min(rate * dur, 1.0 + (self.q - self.credit))
        self._paint_cpu(start - rel0, end - rel0,
                        dur * min(1.0, env.cpu_avail) * len(self.gpus) * self.main_cpu * ((slowest + comm) / dur + 0.05 if wait else 1.0),
                        comps[self.gpus[0]] * 0.45 * len(self.gpus) * min(1.0, env.cpu_avail),
                        made * self.batch_cpu_s * env.cpu_mult * len(self.gpus))
        self.launch_acc["kernel"] += self.launches * 0.75 * env.host_mult
        self.launch_acc["driver"] += self.launches * 0.25
        if env.tiny_s:
            self.launch_acc["graph"] += 1
        self.cursor = end
        if not evalm:
            self.events.append((end, self.work))

    def advance(self, t0: float, dt: float, env: TEnv, rel0: float) -> dict:
        """Simulate steps that start before t0+dt; return the GPUs' activity for [t0, t0+dt)."""
        self.cpu = dict(main=0.0, workers=0.0, autograd=0.0)
        self.launch_acc = dict(kernel=0.0, driver=0.0, graph=0.0)
        if self.cursor is None:
            self.cursor = t0
        if self.cursor < t0:
            # idle gap (a paused job): the loader refills meanwhile
            self.credit = min(self.q, self.credit + self._loader_rate(env) * (t0 - self.cursor))
            self.cursor = t0
        while self.up and self.cursor < t0 + dt:
            self._step(self.cursor, env, rel0)
        n = max(1, int(round(dt / SLICE)))
        i0 = int(round((t0 - rel0) / SLICE))
        acts = {}
        for g in self.gpus:
            busy, sm, occ, dram, ten, nvl = [], 0.0, 0.0, 0.0, 0.0, 0.0
            for i in range(i0, i0 + n):
                row = self.bins[g][i] if i < self.nslices else [0.0] * 7
                busy.append(min(1.0, row[0] / SLICE))
                sm += row[1]
                occ += row[2]
                dram += row[3]
                ten += row[4]
                nvl += row[5]
            acts[g] = Activity(busy=busy, sm=sm / dt, occ=occ / dt, dram=dram / dt, tensor=ten / dt,
                               nvl_rx=nvl / dt, nvl_tx=nvl / dt, pcie_rx=300 + 50 * sum(busy) / n,
                               pcie_tx=20, ctx=self.up)
        cpu = [0.0, 0.0, 0.0]
        for i in range(i0, min(i0 + n, self.nslices)):
            for k in range(3):
                cpu[k] += self.cpu_bins[i][k]
        self.cpu = dict(main=cpu[0], autograd=cpu[1], workers=cpu[2])
        while self.ev_i < len(self.events) and self.events[self.ev_i][0] <= t0 + dt:
            self.done_work += self.events[self.ev_i][1]
            self.steps += 1
            self.ev_i += 1
        return dict(acts=acts, cpu=dict(self.cpu), launches=dict(self.launch_acc))

    def sample(self, t_wall: float, mono: float, pids: tuple, cpu: dict) -> EngineSample:
        return EngineSample(kind="trainer", url=self.url, generation_tokens_total=float(self.done_work),
                            requests_finished_total=float(self.steps), work_unit=self.unit,
                            pids=pids, time_wall_s=t_wall, time_mono_s=mono,
                            cpu_s=cpu.get("cpu_s"), ctx_involuntary=cpu.get("ctx_inv"),
                            busiest_thread_cpu_s=cpu.get("busiest"),
                            busiest_thread=cpu.get("busiest_name", ""))
