"""Jobs without an engine page: diffusion services, embedding servers, notebooks, evaluation
harnesses and unknown CUDA jobs.  Each job is a list of processes whose per-tick work
(kernel time, SM / tensor / DRAM activity, VRAM, host CPU) comes from a small workload
function of its own; GPUs, host and frames are derived as for the other simulators.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineSample

from .common import (BOARDS, GiB, MiB, Activity, BoardState, Clock, Host, Proc, clamp,
                     launch_hist, make_frame, pinned_of, seed_of)


@dataclass
class Work:
    """One process's work on one GPU over a tick."""
    busy: float = 0.0
    sm: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    mem: int = 0
    cpu: float = 0.1  # cores
    clock_cap: float | None = None
    reasons: tuple[str, ...] = ()
    launches: int = 0
    launch_tail: tuple[float, float] = (0.0003, 60.0)
    flicker: float = 0.1


@dataclass
class JobProc:
    pid: int
    name: str
    cmd: str
    gpu: int
    work: Callable[[random.Random, float, float], Work]  # (rng, t, speed) -> Work
    user: str = "app"
    container: str = ""
    since: float = -3600.0
    until: float = 1e18
    threads: tuple[str, ...] = ("python3",)


@dataclass
class Job:
    name: str
    board: str
    ngpu: int
    duration: float
    procs: list[JobProc]
    tick: float = 1.0
    cpus: int = 32
    quota: float | None = None
    psi: bool = True
    ebpf: bool = False
    pin: int | None = 0  # index of the pinned process (None: nothing pinned)
    neighbour: Callable[[float], float] = lambda t: 0.0
    trainer_counter: str | None = None  # a "samples"/"images" counter the job exports
    counter_rate: Callable[[float, list], float] | None = None
    dcgm: bool = False
    power_limit: float | None = None
    ambient: float = 28.0
    heat: dict = field(default_factory=dict)


def simulate(job: Job, start_wall: float):
    rng = random.Random(seed_of(job.name))
    b = BOARDS[job.board]
    boards = [BoardState(b, i, rng, seed_of(job.name), job.power_limit, job.ambient, job.dcgm)
              for i in range(job.ngpu)]
    host = Host(rng, job.cpus, job.quota, job.psi)
    clock = Clock(rng, start_wall, job.tick)
    procs = {jp.pid: Proc(jp.pid, jp.name, jp.cmd, (jp.gpu,), start_wall + jp.since, user=jp.user,
                          container=jp.container) for jp in job.procs}
    counter = 0.0
    frames = []
    for seq, t, dt in clock.times(int(job.duration / job.tick)):
        live = [jp for jp in job.procs if jp.since <= t < jp.until]
        works = {jp.pid: jp.work(rng, t, boards[jp.gpu].speed) for jp in live}
        demand = sum(w.cpu for w in works.values())
        pin = job.procs[job.pin] if job.pin is not None else None
        tree = works[pin.pid].cpu if pin is not None and pin.pid in works else 0.0
        hs, got = host.tick(demand + job.neighbour(t) + 0.8, tree, dt)
        acts = [Activity() for _ in range(job.ngpu)]
        for jp in live:
            w, a = works[jp.pid], acts[jp.gpu]
            a.busy = clamp(a.busy + w.busy * (1 - a.busy))
            a.sm = clamp(a.sm + w.sm)
            a.tensor = clamp(a.tensor + w.tensor)
            a.dram = clamp(a.dram + w.dram)
            a.occ = a.sm * 0.4
            a.mem_used += w.mem
            a.flicker = max(a.flicker, w.flicker)
            if w.clock_cap:
                a.clock_cap_mhz, a.reasons = w.clock_cap, w.reasons
        for g, a in enumerate(acts):
            a.heat_w = job.heat.get(g, 0.0)
            a.pcie_rx, a.pcie_tx = 30 + 300 * a.busy, 10 + 80 * a.busy
        gpus = [bs.read(a, dt) for bs, a in zip(boards, acts)]
        samples, launch = [], []
        nproc_gpu = {}
        for jp in live:
            nproc_gpu[jp.gpu] = nproc_gpu.get(jp.gpu, 0) + 1
        for jp in live:
            p, w = procs[jp.pid], works[jp.pid]
            p.burn(rng, {name: w.cpu * got * dt / len(jp.threads) for name in jp.threads},
                   invol_rate=20 + (1 - got) * 800)
            share = round(100 * w.busy) if nproc_gpu[jp.gpu] > 1 else gpus[jp.gpu].util_gpu_pct
            samples += p.samples({jp.gpu: w.mem}, {jp.gpu: share})
            if job.ebpf and w.launches:
                launch.append(launch_hist(rng, "cudaLaunchKernel", jp.pid, int(w.launches * dt), 3.0,
                                          w.launch_tail[0], w.launch_tail[1]))
        if job.ebpf:
            from dataclasses import replace
            tails = [works[jp.pid].launch_tail[0] * works[jp.pid].launches for jp in live]
            hs = replace(hs, offcpu_switches=int(30 + sum(tails) * 2))
        engine = None
        if job.trainer_counter and job.counter_rate:
            counter += job.counter_rate(t, [works.get(jp.pid) for jp in job.procs]) * dt
            engine = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                                  generation_tokens_total=float(int(counter)), work_unit=job.trainer_counter,
                                  pids=(job.procs[0].pid,), time_wall_s=round(start_wall + t, 6),
                                  time_mono_s=round(clock.mono0 + t, 6))
        pinned = None
        if pin is not None and pin.pid in procs:
            pinned = pinned_of(procs[pin.pid], hs, tuple(range(min(job.cpus, 8))), (), job.quota,
                               host.periods, host.throttled)
        frames.append(make_frame(clock, seq, t, gpus, samples, engine, hs, pinned, launch, None,
                                 job.ebpf))
    return frames


# ------------------------------------------------------------------ work shapes

def steady(busy, sm, tensor, dram, mem_gib, cpu=0.5, noise=0.02):
    def work(rng, t, speed):
        j = rng.gauss(0, noise)
        return Work(clamp(busy + j), clamp(sm + j), clamp(tensor + j * 0.5), clamp(dram + j * 0.5),
                    int(mem_gib * GiB), cpu)
    return work


def idle_holder(mem_gib, cpu=0.02):
    return lambda rng, t, speed: Work(0.0, 0.0, 0.0, 0.0, int(mem_gib * GiB), cpu)


def requests_burst(rate, job_s, busy, sm, tensor, dram, mem_gib, cpu_idle=0.1, cpu_busy=1.0):
    """A request-driven service: Poisson arrivals each holding the GPU for job_s (x 1/speed)."""
    state = {"q": 0.0}

    def work(rng, t, speed):
        if t < 1.5:
            state["q"] = 0.0  # a fresh run of the trace
        r = rate(t) if callable(rate) else rate
        state["q"] += sum(1 for _ in range(int(r * 3)) if rng.random() < 1 / 3)
        cap = 1.0 / (job_s / speed)
        done = min(state["q"], cap)
        state["q"] -= done
        f = clamp(done * job_s / speed)
        return Work(clamp(f * busy), clamp(f * sm), clamp(f * tensor), clamp(f * dram),
                    int(mem_gib * GiB), cpu_idle + f * cpu_busy, flicker=0.3)
    return work
