"""Plain CUDA processes (no engine) and other contexts sharing a GPU.

Kernel mixes measured on the real H200 (tests/data/h200, FACTS.md 12):
  matmul      util 99-100, SM 95.6, occupancy 14, tensor 93, DRAM 17 (power-capped)
  copy        util 100, SM 99, occupancy 80, tensor 0, DRAM 88 (474 W, 1980 MHz)
  graph_tiny  CUDA-graph replay of one-element kernels: util 99-100, SM 0.3, occ 0.015
  eager_tiny  the same kernels launched one by one from Python: util 20-30 (launch-bound)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# name: (duty, sm, occ, tensor, dram)
MIXES = {
    "matmul": (0.996, 0.956, 0.141, 0.928, 0.172),
    "copy": (0.997, 0.99, 0.80, 0.0, 0.884),
    "graph_tiny": (0.996, 0.0031, 0.00015, 0.00002, 0.000004),
    "eager_tiny": (0.245, 0.0012, 0.00006, 0.0, 0.000004),
    "train": (0.97, 0.92, 0.30, 0.55, 0.32),
    "infer_small": (0.62, 0.55, 0.22, 0.25, 0.35),
    "notebook": (0.45, 0.80, 0.28, 0.45, 0.30),
    "idle": (0.0, 0.0, 0.0, 0.0, 0.0),
}


@dataclass
class Phase:
    t0: float
    t1: float
    mix: str
    duty: float | None = None  # override


class CudaProc:
    """One process on one GPU running a list of phases (its context open throughout)."""

    def __init__(self, scene, gpu: int, pid: int, phases: list[Phase], name: str, cmdline: str,
                 user: str, mem_bytes: int, t_start: float = 0.0, t_end: float | None = None,
                 ppid: int | None = None, cpu_busy: float = 1.0, rng: random.Random | None = None):
        self.scene = scene
        self.gpu = gpu
        self.pid = pid
        self.phases = phases
        self.name = name
        self.cmdline = cmdline
        self.user = user
        self.mem_bytes = mem_bytes
        self.t_start = t_start
        self.t_end = t_end if t_end is not None else scene.duration + 10
        self.ppid = ppid
        self.cpu_busy = cpu_busy  # cores while running (a launching loop spins one core)
        self.rng = rng or random.Random(pid)
        self.t = t_start
        self.cpu_s = 0.0

    def alive(self, t: float) -> bool:
        return self.t_start <= t < self.t_end

    def run_until(self, t_stop: float) -> None:
        g = self.scene.gpus[self.gpu]
        t = max(self.t, self.t_start)
        t_stop = min(t_stop, self.t_end)
        while t < t_stop:
            seg_end = min(t_stop, t + 0.5)
            for ph in self.phases:
                lo, hi = max(t, ph.t0), min(seg_end, ph.t1)
                if hi > lo:
                    duty, sm, occ, ten, dram = MIXES[ph.mix]
                    if ph.duty is not None:
                        duty = ph.duty
                    if duty > 0:
                        j = 1.0 + self.rng.gauss(0.0, 0.01)
                        g.add(lo, hi - lo, min(1.0, sm * j), occ, min(1.0, ten * j), dram,
                              min(1.0, duty * (1.0 + self.rng.gauss(0.0, 0.002))))
            t = seg_end
        self.t = max(self.t, t_stop)

    def cpu_tick(self, t0: float, t1: float) -> float:
        lo, hi = max(t0, self.t_start), min(t1, self.t_end)
        cores = 0.0
        if hi > lo:
            cores = self.cpu_busy * (hi - lo) / (t1 - t0)
            self.cpu_s += self.cpu_busy * (hi - lo)
        return cores


class Intruder:
    """Another process's context on a GPU a job uses: the GPU time-slices between the
    contexts, so the job's kernels wait while the other's run (FACTS.md 7 gpu_shared)."""

    def __init__(self, scene, gpu: int, t0: float, t1: float, mix: str, pid: int, name: str,
                 cmdline: str, user: str, mem_bytes: int, duty: float | None = None,
                 container: str = "", pod: str = ""):
        self.scene = scene
        self.gpu = gpu
        self.t0, self.t1 = t0, t1
        d, sm, occ, ten, dram = MIXES[mix]
        self.duty = d if duty is None else duty
        self.act = (sm, occ, ten, dram)
        self.pid = pid
        self.name = name
        self.cmdline = cmdline
        self.user = user
        self.mem_bytes = mem_bytes
        self.container = container
        self.pod = pod
        self.cpu_s = 0.0
        scene.gpus[gpu].intruders.append(self)

    def alive(self, t: float) -> bool:
        return self.t0 <= t < self.t1

    def share(self, t: float) -> float:
        return 0.5 * self.duty if self.t0 <= t < self.t1 else 0.0

    def run_until(self, t_stop: float) -> None:
        pass  # its kernels fill the GPU's idle time at tick end (Scene)

    def cpu_tick(self, t0: float, t1: float) -> float:
        lo, hi = max(t0, self.t0), min(t1, self.t1)
        if hi <= lo:
            return 0.0
        self.cpu_s += 0.9 * (hi - lo)
        return 0.9 * (hi - lo) / (t1 - t0)
