"""Helpers the catalogue's trace builders share."""

from __future__ import annotations

import math
import random
import zlib

from ._gpu import GIB, boards
from ._run import Ebpf, Host, Proc, Trace, smooth
from ._serve import MODELS, Engine, Req, Workload
from ._train import Job, ddp_step
from ._wl import JobWL, ServeWL, StaticWL

# a night in the fleet: 2026-12-01 03:00 UTC
BASE_WALL = 1796083200 + 3 * 3600


def seed(name: str) -> int:
    return zlib.crc32(name.encode())


def new(name: str, model: str, n: int, minutes: float, tick: float = 1.0, cpus: int = 64,
        first_gpu: int = 0, total_gpus: int | None = None) -> Trace:
    rng = random.Random(seed(name))
    start = BASE_WALL + (seed(name) % 5400) - 2700 + round(rng.random(), 3)
    host = Host(cpus=cpus, base_pct=3 + 4 * rng.random(), psi=0.2 + 0.6 * rng.random(),
                runq=2 + 3 * rng.random(), ctx_rate=8000 + 300 * cpus,
                ctx_total=6e9 + rng.random() * 4e9)
    total = total_gpus if total_gpus is not None else n
    bs = boards(model, total, rng)
    tr = Trace(name, tick, minutes * 60, start, bs, host, rng,
               mono0=1e5 + rng.random() * 5e5)
    return tr


def ln(med: float, sig: float, lo: float = 1, hi: float = 1e9):
    return lambda r, t: min(hi, max(lo, med * math.exp(r.gauss(0, sig))))


def mix(*parts):
    """A mixture of samplers: (weight or weight(t), sampler) pairs."""
    def f(r, t):
        ws = [w(t) if callable(w) else w for w, _ in parts]
        x = r.random() * sum(ws)
        for w, (_, s) in zip(ws, parts):
            if x < w:
                return s(r, t)
            x -= w
        return parts[-1][1](r, t)
    return f


def diurnal(base: float, amp: float = 0.08, period: float = 400.0, phase: float = 0.0):
    """A rate with slow wander (users) and +-amp ripple: what a night's traffic looks like."""
    return lambda t: base * (1 + amp * math.sin(2 * math.pi * (t / period + phase))
                             + 0.5 * amp * math.sin(2 * math.pi * (t / (period * 0.37) + phase)))


def ramp(a: float, b: float, t0: float, t1: float, wall0: float):
    return lambda t: smooth(t - wall0, a, b, t0, t1)


def serve(tr: Trace, kind: str, model: str, gpus: list[int], wl: Workload, pid: int,
          version: str = "0.11", ready_at: float = -1.0, **kw) -> ServeWL:
    m = MODELS[model]
    spec = tr.boards[gpus[0]].spec
    eng = Engine(kind, m, spec, len(gpus), tr.rng, wl, **kw)
    s = ServeWL(eng, gpus, pid, start=tr.start_wall - 3600 * (1 + tr.rng.random() * 20),
                version=version, ready_at=ready_at)
    tr.workloads.append(s)
    return s


def wall(tr: Trace, off: float) -> float:
    return tr.start_wall + off


def chat_wl(tr: Trace, rate, prompt=None, out=None, hit=None, users=None, think=2.0) -> Workload:
    return Workload(rate=rate, users=users, think_s=think,
                    prompt=prompt or ln(700, 0.8, 16, 12000), out=out or ln(220, 0.7, 4, 2000),
                    cache_hit=hit or (lambda t: 0.3))


def train_job(tr: Trace, gpus: list[int], pid: int, cmd: str, mem_gib: float, counter=None,
              unit: float = 1.0, name: str = "python3", user: str = "ml", **step_kw) -> JobWL:
    step = ddp_step(gpus, tr.rng, **step_kw)
    job = Job(gpus, step, tr.rng)
    start = tr.start_wall - 600 - tr.rng.random() * 7200
    procs = [Proc(pid + i, g, name, cmd + (f" --local_rank={i}" if len(gpus) > 1 else ""), start,
                  ppid=pid - 1, user=user) for i, g in enumerate(gpus)]
    mem = {g: int(mem_gib * GIB * (1 + 0.01 * tr.rng.random())) for g in gpus}
    w = JobWL(job, procs, mem, counter=counter, unit_per_work=unit)
    job.work_total = job.steps_total = float(int((tr.start_wall - start) / 1.6))
    tr.workloads.append(w)
    return w


def program(tr: Trace, gpu: int, pid: int, cmd: str, mem_gib: float, step, name="python3",
            user="ml") -> JobWL:
    job = Job([gpu], step, tr.rng)
    start = tr.start_wall - 300 - tr.rng.random() * 3000
    p = Proc(pid, gpu, name, cmd, start, ppid=pid - 1, user=user)
    w = JobWL(job, [p], {gpu: int(mem_gib * GIB)})
    tr.workloads.append(w)
    return w


def win(tr: Trace, a: float, b: float) -> tuple[float, float]:
    return (round(tr.start_wall + a, 3), round(tr.start_wall + b, 3))


__all__ = ["BASE_WALL", "Ebpf", "GIB", "Job", "JobWL", "Proc", "Req", "ServeWL", "StaticWL",
           "Workload", "chat_wl", "ddp_step", "diurnal", "ln", "mix", "new", "program", "ramp",
           "serve", "smooth", "train_job", "wall", "win", "seed"]
