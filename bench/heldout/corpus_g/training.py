"""Training jobs and plain CUDA programs: one step-time model per rank.

A step on rank g is its compute (forward + backward; scaled by the clock its board
allows and by how heavy its shard is) followed by the gradient all-reduce (NCCL): a rank
that finishes first waits inside the collective, its NCCL kernel resident and spinning
(GPU-Util stays high, few SMs, little power), so every rank steps at the slowest's pace.
Then the next batch: if the DataLoader has not produced it yet the main thread blocks
and the GPU idles.  Host delays (CPU lost to other work, delayed launches) leave gaps.
Progress (tokens or samples) advances when a step ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .hw import Act, Board

COMPUTE = Act(1.0, 0.93, 0.34, 0.33, 0.62)
NCCL = Act(1.0, 0.14, 0.5, 0.06, 0.0)
EVAL = Act(1.0, 0.88, 0.3, 0.38, 0.45)
TINY = Act(1.0, 0.07, 0.12, 0.02, 0.004)


@dataclass
class THooks:
    phase: object = None  # t -> "train" | "checkpoint" | "eval" | "tiny" | "done" | "start"
    slow_rank: object = None  # t, g -> compute factor (>= 1)
    link: object = None  # t -> all-reduce time factor (degraded link)
    data_wait: object = None  # t -> seconds per step the next batch is late
    loader_cores: object = None  # t -> cores the DataLoader workers burn
    cpu_share: object = None  # t -> share of CPU the trainer's threads get
    host_busy: object = None  # t -> cores other work burns on the host
    jitter: object = None  # t -> (share of launches delayed, delay us)
    neighbor: object = None  # t, g -> (SM share, bytes, label) or None
    power_limit: object = None
    forced: object = None
    heat: object = None


class Training:
    def __init__(self, boards: list[Board], tick: float, rng, hooks: THooks, *, step_s=0.8,
                 comm_s=0.12, overlap=0.7, tokens_per_step=524288, mem_frac=0.78,
                 compute=COMPUTE, launches_per_step=3000, host_frac=0.05, tiny_step_s=0.004):
        self.boards, self.dt, self.rng, self.h = boards, tick, rng, hooks
        self.n = len(boards)
        self.step_s, self.comm_s, self.overlap = step_s, comm_s, overlap
        self.tokens_per_step = tokens_per_step
        self.mem = [int(b.spec.mem_total * mem_frac * (1 + rng.uniform(-0.01, 0.01))) for b in boards]
        self.compute = compute
        self.launches_per_step = launches_per_step
        self.host_frac = host_frac
        self.tiny_step_s = tiny_step_s
        self.progress = 0.0
        self.steps = 0.0
        self.phase_t = 0.0  # position inside the step cycle (for GPU-Util samples)
        self.last_act = [Act() for _ in boards]
        self.step_now = step_s
        self.phase_now = "train"

    def tick(self, t: float):
        h, dt, rng = self.h, self.dt, self.rng
        phase = h.phase(t) if h.phase else "train"
        self.phase_now = phase
        fs, slow = [], []
        for g, b in enumerate(self.boards):
            if h.power_limit:
                b.power_limit = h.power_limit(t, g)
            b.forced = h.forced(t, g) if h.forced else {}
            b.extra_heat = h.heat(t, g) if h.heat else 0.0
            fs.append(b.clock_for(self.last_act[g]))
            slow.append(h.slow_rank(t, g) if h.slow_rank else 1.0)
        share = [(h.neighbor(t, g) or (0.0,))[0] if h.neighbor else 0.0 for g in range(self.n)]
        cpu = h.cpu_share(t) if h.cpu_share else 1.0
        jit = h.jitter(t) if h.jitter else (0.0, 0.0)
        if phase in ("done", "start", "checkpoint"):
            acts = []
            for g in range(self.n):
                if phase == "done":
                    a = Act(0.0, 0.0, 0.2, 0.0, 0.0, ctx=False)
                elif phase == "start":
                    a = Act(0.03, 0.1, 0.2, 0.1, 0.0, pcie_mibs=6000)
                else:
                    a = Act(0.04, 0.3, 0.2, 0.5, 0.0, pcie_mibs=9000 if g == 0 or rng.random() < 0.5 else 2000)
                self.boards[g].clock_for(a)
                acts.append(a)
            self.last_act = acts
            self.step_now = None
            return acts
        if phase == "tiny":
            comp = [self.tiny_step_s * slow[g] for g in range(self.n)]
            mix = TINY
            launch_bound = 0.9
        else:
            k = 0.55 if phase == "eval" else 1.0
            # the tensor-bound share of a step scales with the clock
            comp = [self.step_s * k * slow[g] * (0.25 + 0.75 / fs[g]) / (1 - share[g]) for g in range(self.n)]
            mix = EVAL if phase == "eval" else self.compute
            launch_bound = 0.0
        slowest = max(comp)
        link = h.link(t) if h.link else 1.0
        comm = 0.0 if self.n == 1 or phase == "eval" else self.comm_s * link
        exposed = comm * (1 - self.overlap) if phase != "tiny" else 0.0
        wait = h.data_wait(t) if h.data_wait else 0.0
        host_extra = (slowest * (self.host_frac + launch_bound)) * (1 / max(cpu, 0.05) - 1) + \
            self.launches_per_step * jit[0] * jit[1] * 1e-6
        step = slowest + exposed + wait + host_extra
        self.step_now = step
        n_steps = dt / step
        if phase == "train":
            self.steps += n_steps
            self.progress += n_steps * self.tokens_per_step
        acts = []
        for g in range(self.n):
            busy_c = comp[g]
            nccl = slowest - comp[g] + comm * (1 - self.overlap) + (comm * self.overlap if self.n > 1 else 0) * 0.0
            duty = (busy_c + nccl) / step
            w = nccl / max(busy_c + nccl, 1e-9)
            a = mix.blend(NCCL, w) if self.n > 1 and phase != "tiny" else Act(1.0, mix.sm, mix.occ, mix.dram, mix.tensor)
            a.duty = min(1.0, duty)
            if share[g]:
                a.duty = min(1.0, a.duty + share[g] * 0.8)
                a.sm = a.sm * (1 - share[g]) + 0.8 * share[g]
            if self.n > 1 and phase != "tiny":
                a.nvlink_gbps = 2 * self.comm_s * 0.8 * self.boards[g].spec.nvlink_gbps / step if self.boards[g].spec.nvlink_gbps else 0
                a.pcie_mibs = 0 if self.boards[g].spec.nvlink_gbps else 20000 * comm / step
            a.sub = self._subsamples(step, a.duty, dt)
            acts.append(a)
        self.last_act = acts
        self.cpu_now = dict(cpu=cpu, jit=jit, steps=n_steps, launches=self.launches_per_step * n_steps)
        return acts

    def _subsamples(self, step: float, duty: float, dt: float):
        """GPU-Util per driver sample (1/6 s): a step's busy part then its idle gap."""
        n = max(1, int(6 * dt))
        if step < 0.5 or duty > 0.97:
            self.phase_t = (self.phase_t + dt) % max(step, 1e-6)
            return None
        out = []
        period = 1.0 / 6
        busy_len = duty * step
        for _ in range(n):
            a = self.phase_t
            # busy share of [a, a + period) within the cycle [0, step)
            busy = 0.0
            x = a
            end = a + period
            while x < end - 1e-9:
                pos = x % step
                seg_end = min(end, x + (step - pos))
                if pos < busy_len:
                    busy += min(seg_end, x + (busy_len - pos)) - x
                x = seg_end
            out.append(100.0 * busy / period)
            self.phase_t = (self.phase_t + period) % step
        return tuple(out)
