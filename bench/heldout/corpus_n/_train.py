"""Training jobs and plain CUDA programs as per-rank timelines of phases.

A job is a sequence of steps; each step gives every rank a list of (seconds, phase).  Ranks
of a data-parallel job meet in their collectives: a rank that finishes its backward early
waits inside the NCCL kernel (the GPU reads busy, SMs nearly idle) until the slowest rank
arrives.  Each tick integrates the phases that overlap it into one Activity per GPU.
"""

from __future__ import annotations

from collections import deque

from ._gpu import Activity

PHASES = {
    "idle": Activity(),
    "data": Activity(),  # waiting for the DataLoader: nothing queued on the GPU
    "gap": Activity(),  # host-side gap between launches
    "h2d": Activity(busy=0.3, sm=0.01, dram=0.05, copy=0.8, pcie_gbs=18.0),
    "fwd": Activity(busy=0.99, sm=0.88, tensor=0.60, dram=0.34, occ=0.19, nvlink_gbs=20.0),
    "bwd": Activity(busy=0.99, sm=0.90, tensor=0.64, dram=0.40, occ=0.21, nvlink_gbs=60.0),
    "nccl": Activity(busy=0.99, sm=0.15, tensor=0.0, dram=0.05, occ=0.03, nvlink_gbs=8.0),
    "comm": Activity(busy=0.99, sm=0.24, tensor=0.0, dram=0.20, occ=0.05, nvlink_gbs=280.0),
    "opt": Activity(busy=0.97, sm=0.58, tensor=0.01, dram=0.80, occ=0.26),
    "gemm": Activity(busy=1.0, sm=0.96, tensor=0.93, dram=0.17, occ=0.14),
    "copy": Activity(busy=1.0, sm=0.45, tensor=0.0, dram=0.91, occ=0.10),
    "graph_tiny": Activity(busy=0.99, sm=0.003, tensor=0.0, dram=0.0004, occ=0.0002),
    "small_ops": Activity(busy=0.95, sm=0.05, tensor=0.01, dram=0.02, occ=0.01),
    "eval": Activity(busy=0.98, sm=0.84, tensor=0.55, dram=0.33, occ=0.18),
    "embed": Activity(busy=0.99, sm=0.62, tensor=0.05, dram=0.93, occ=0.30),
    "ckpt": Activity(busy=0.12, sm=0.02, dram=0.03, copy=0.6, pcie_gbs=22.0),
    "lora_fwd": Activity(busy=0.98, sm=0.80, tensor=0.50, dram=0.40, occ=0.17),
    "lora_bwd": Activity(busy=0.98, sm=0.82, tensor=0.52, dram=0.45, occ=0.18),
}


class Job:
    """``step(t, clocks)`` -> (per-rank [(seconds, phase)], work units done at the step's end)."""

    def __init__(self, gpus: list[int], step, rng):
        self.gpus = gpus
        self.step_fn = step
        self.rng = rng
        self.segs = {g: deque() for g in gpus}
        self.t_next = None
        self.work_total = 0.0
        self.steps_total = 0.0
        self.pending: deque = deque()  # (time, work)
        self.running = True

    def _extend(self, until: float, clocks: dict) -> None:
        while self.t_next < until and self.running:
            plan, work = self.step_fn(self.t_next, clocks)
            longest = 0.0
            for g in self.gpus:
                t = self.t_next
                for dur, phase in plan[g]:
                    if dur > 0:
                        self.segs[g].append((t, t + dur, phase))
                        t += dur
                longest = max(longest, t - self.t_next)
            longest = max(longest, 0.001)
            self.t_next += longest
            if work:
                self.pending.append((self.t_next, work))

    def tick(self, a: float, b: float, clocks: dict) -> dict:
        if self.t_next is None:
            self.t_next = a
        self._extend(b, clocks)
        out = {}
        for g in self.gpus:
            act = Activity()
            q = self.segs[g]
            while q and q[0][1] <= a:
                q.popleft()
            for s, e, phase in q:
                if s >= b:
                    break
                ov = min(e, b) - max(s, a)
                if ov > 0:
                    act.add(PHASES[phase], ov / (b - a))
            out[g] = act
        while self.pending and self.pending[0][0] <= b:
            _, w = self.pending.popleft()
            self.work_total += w
            self.steps_total += 1
        return out


def ddp_step(gpus, rng, *, fwd_s, mult=None, loader_s=None, comm_s=0.08, opt_s=0.05,
             gap=None, work=1.0, jitter=0.02, events=None, phases=("fwd", "bwd")):
    """A synchronous data-parallel step: each rank's compute scaled by its clock and its
    own multiplier; ranks meet in the gradient all-reduce (waiting in NCCL); then optimizer."""
    mult = mult or (lambda t, g: 1.0)
    loader_s = loader_s or (lambda t: 0.0)
    gap = gap or (lambda t, g: 0.0)
    events = events or (lambda t: None)

    def step(t, clocks):
        special = events(t)
        if special is not None:
            return special
        f = fwd_s(t) if callable(fwd_s) else fwd_s
        comp = {}
        for g in gpus:
            c = f * mult(t, g) / max(0.3, clocks.get(g, 1.0)) * (1 + rng.gauss(0, jitter))
            comp[g] = c
        wait_data = loader_s(t)
        ends = {}
        plan = {}
        for g in gpus:
            gf = gap(t, g)
            segs = []
            if wait_data > 0:
                segs.append((wait_data * (1 + rng.gauss(0, 0.1)), "data"))
            segs.append((0.01, "h2d"))
            fw, bw = comp[g] / 3, comp[g] * 2 / 3
            if gf > 0:  # host gaps stretch the compute phases: (1 + gf) as long, idle inside
                segs += [(fw, phases[0]), (fw * gf, "gap"), (bw, phases[1]), (bw * gf, "gap")]
            else:
                segs += [(fw, phases[0]), (bw, phases[1])]
            plan[g] = segs
            ends[g] = sum(d for d, _ in segs)
        meet = max(ends.values())
        for g in gpus:
            if len(gpus) > 1:
                if meet - ends[g] > 0:
                    plan[g].append((meet - ends[g], "nccl"))
                plan[g].append((comm_s, "comm"))
            plan[g].append((opt_s * (1 + rng.gauss(0, 0.02)), "opt"))
        return plan, work

    return step
