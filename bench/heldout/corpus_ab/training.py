"""Step-driven GPU jobs: training (DDP / FSDP / ZeRO-3), batch inference, transcription,
diffusion, embedding services.  A step is: wait for input -> compute on every rank (the
slowest rank sets the pace; the others spin in NCCL) -> collective -> optimizer / offload.
Per tick each rank's busy / SM / tensor / DRAM time is the sum of what its phases did;
progress counters (when the job exports any) count finished steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

from gputop.schema import EngineSample

from .common import (EPOCH0, GiB, Act, Clock, Host, Pin, Proc, base_sources, engine_status, fail,
                     launch_hist, make_boards, rng_for)


def const(v):
    return lambda t: v


@dataclass
class Job:
    name: str
    board: str
    gpus: int = 1
    minutes: float = 8.0
    step_s: float = 0.5  # compute per step per rank at full clock
    comm_s: float = 0.0  # collective per step (gradient all-reduce / reduce-scatter)
    opt_s: float = 0.03
    mfu: float = 0.45  # tensor-active share of compute time
    sm_fill: float = 0.9  # SM-active share of compute time (tiny kernels: low)
    dram_fill: float = 0.35
    work_per_step: float = 0.0  # tokens or samples, whole job
    unit: str = ""  # "tokens" | "samples": exported as trainer_<unit>_total; "" none
    data_wait: Callable = lambda t, r: 0.0  # seconds per step waiting for input
    loader_cpu: float = 0.3  # CPU-seconds of loader work per step (all workers)
    workers: int = 4
    io_bound: bool = False  # loader waits on storage (low CPU) rather than decoding
    host_step: float = 0.01  # launch-thread CPU per step (eager python)
    async_launch: float = 0.95  # share of it hidden behind the GPU queue
    slow: Callable = lambda t, g: 1.0  # a rank's own slowdown (factor on compute)
    forced: Callable = lambda t, g: ((), 1.0)
    cooling: Callable = lambda t, g: 1.0
    tenant: Callable = lambda t, g: None
    phases: tuple = ()  # (t0, t1, kind): "ckpt" | "eval" | "load" | "idle"
    cpu_share: Callable = const(1.0)
    intruder_cores: Callable = const(0.0)
    quota: float | None = None
    jitter: Callable = const((0.0, 0.0))
    ebpf: bool = False
    psi: bool = True
    cpus: int = 96
    host_load: float = 2.0
    mem: float = 60 * GiB  # per GPU
    power_limit: float | None = None
    cmd: str = "torchrun --nproc-per-node 8 train.py"
    proc_name: str = "python"
    user: str = "ml-research"
    pod: str = ""
    offload_s: float = 0.0  # per step, GPU idle while the CPU runs the optimizer (ZeRO offload)
    nvlink_mib: float = 0.0  # per second of collective
    tick: float = 1.0
    start: float = 0.0
    extra_procs: tuple = ()  # (gpu, name, cmdline, mem, user)
    idle: Callable | None = None  # t -> True when the job has nothing to do (a notebook)
    seed: str = ""
    dcgm: bool = False


def simulate(cfg: Job):
    r = rng_for(cfg.name + cfg.seed)
    boards = make_boards(cfg.board, cfg.gpus, r, power_limit=cfg.power_limit, dcgm=cfg.dcgm)
    host = Host(cfg.cpus, r, psi=cfg.psi, base_load=cfg.host_load)
    t0 = EPOCH0 + cfg.start
    clock = Clock(t0, cfg.tick, r)
    base_pid = 3000 + r.randrange(50000)
    cg = (f"/kubepods.slice/kubepods-pod{r.getrandbits(32):08x}.slice/cri-containerd-"
          f"{r.getrandbits(48):012x}.scope") if cfg.pod else f"/user.slice/user-1001.slice/session-{r.randrange(900)}.scope"
    container = f"containerd:{r.getrandbits(48):012x}" if cfg.pod else ""
    procs = [Proc(base_pid + 1 + g, g, cfg.proc_name, cfg.cmd, cfg.user, t0 - 600 - r.random() * 900,
                  0, 100.0 + r.random() * 50, 12 * GiB, container, cfg.pod, cg, base_pid)
             for g in range(cfg.gpus)]
    workers = [base_pid + 100 + i for i in range(cfg.workers * min(cfg.gpus, 2))]
    threads = [[p.pid, p.pid, cfg.proc_name, 50.0] for p in procs[:4]]
    threads += [[base_pid + 40, procs[0].pid, "pt_autograd_0", 20.0]]
    threads += [[w, w, "pt_data_worker", 5.0] for w in workers[:6]]
    pin = Pin(cfg.cmd[:60], (base_pid,), (base_pid, *[p.pid for p in procs], *workers),
              tuple(range(min(cfg.cpus, 48))), threads, (9090,) if cfg.unit else (), cfg.quota)
    work = steps_total = 0.0
    ticks = int(cfg.minutes * 60 / cfg.tick)
    for k in range(ticks):
        t = k * cfg.tick
        phase = next((p[2] for p in cfg.phases if p[0] <= t < p[1]), None)
        share = max(0.05, cfg.cpu_share(t))
        jfrac, jms = cfg.jitter(t)
        clocks = [b.clock_f for b in boards]
        acts: list[Act] = []
        cpu_main = cpu_loader = 0.0
        invol = 0.0
        steps = 0.0
        idle = cfg.idle(t) if cfg.idle else False
        if phase in ("ckpt", "load", "idle") or idle:
            # checkpoint write / checkpoint load: GPUs hold memory, no kernels (short copies)
            for g, b in enumerate(boards):
                cp = phase in ("ckpt", "load")
                acts.append(Act(busy=0.04 if cp else 0.0, sm=0.01 if cp else 0.0, dram=0.02 if cp else 0.0,
                                mem_used=int(cfg.mem * (0.5 if phase == "load" and t < 20 else 1.0)),
                                pattern="bursty", pcie_tx=2400.0 if phase == "ckpt" else 0.0,
                                pcie_rx=2400.0 if phase == "load" else 0.0))
            cpu_main = 0.9 if phase else 0.02
        else:
            ev = phase == "eval"
            comp = [cfg.step_s * (0.35 if ev else 1.0) * cfg.slow(t, g) / max(0.3, clocks[g]) ** 0.9
                    for g in range(cfg.gpus)]
            ten = [cfg.tenant(t, g) for g in range(cfg.gpus)]
            comp = [c * (1 + 0.9 * x.busy) if x is not None else c for c, x in zip(comp, ten)]
            wait = max(0.0, cfg.data_wait(t, r)) if not ev else 0.0
            calls = max(1.0, cfg.host_step / 20e-6)
            stall = calls * jfrac * jms / 1000
            gap = cfg.host_step * (1 - cfg.async_launch) / share + stall
            if share < 1:
                gap += cfg.host_step * cfg.async_launch * (1 / share - 1)
            slowest = max(comp)
            comm = 0.0 if ev else cfg.comm_s
            step = wait + slowest + comm + (0 if ev else cfg.opt_s + cfg.offload_s) + gap
            steps = cfg.tick / step
            for g in range(cfg.gpus):
                spin = slowest - comp[g]
                busy_t = comp[g] + spin + comm + (0 if ev else cfg.opt_s) * 0.9
                a = Act(busy=busy_t / step,
                        sm=(comp[g] * cfg.sm_fill + (spin + comm) * 0.14 + (0 if ev else cfg.opt_s) * 0.6) / step,
                        tensor=comp[g] * cfg.mfu / step,
                        dram=(comp[g] * cfg.dram_fill + (0 if ev else cfg.opt_s) * 0.85 + comm * 0.08) / step,
                        occ=comp[g] * cfg.sm_fill * 0.4 / step,
                        mem_used=int(cfg.mem), pattern="bursty" if step > 0.35 else "smooth",
                        nvlink=cfg.nvlink_mib * (comm + spin) / step if cfg.gpus > 1 else 0.0,
                        pcie_rx=200.0 + 40 * cfg.workers)
                acts.append(a)
            cpu_main = min(cfg.tick * share, steps * cfg.host_step * cfg.gpus) + steps * cfg.offload_s * 6
            cpu_loader = steps * cfg.loader_cpu if not cfg.io_bound else steps * cfg.loader_cpu * 0.3
            if wait and not cfg.io_bound:
                cpu_loader = min(cfg.workers * min(cfg.gpus, 2) * 0.98, cpu_loader + wait * steps * cfg.workers)
            invol = steps * (1 - share) * 6 + steps * calls * jfrac * 0.5
            steps_total += steps
            work += steps * cfg.work_per_step
        for g, (b, a) in enumerate(zip(boards, acts)):
            fr, fc = cfg.forced(t, g)
            a.forced, a.forced_clock, a.cooling = fr, fc, cfg.cooling(t, g)
            x = cfg.tenant(t, g)
            if x is not None:
                a.busy = min(1.0, a.busy + x.busy * (1 - a.busy * 0.5))
                a.sm, a.tensor = min(a.busy, a.sm + x.sm), min(a.busy, a.tensor + x.tensor)
                a.dram = min(1.0, a.dram + x.dram)
        demand = cpu_main + cpu_loader
        throttled = 0
        if cfg.quota is not None and demand / share > cfg.quota * 0.85:
            throttled = int(round(10 * min(1.0, (demand / share - cfg.quota * 0.85) / (demand / share) * 3)))
        intr = cfg.intruder_cores(t)
        hs = host.sample(demand + min(intr, cfg.cpus - demand), demand + 1 + intr
                         + (cfg.workers * 0.5 if cfg.io_bound else 0))
        if cfg.ebpf:
            hs = dataclasses.replace(hs, offcpu_switches=int(invol + r.randrange(4)))
        rates = {cfg.proc_name: cpu_main * 0.7 / max(1, min(4, cfg.gpus)) * min(4, cfg.gpus) / len(procs[:4]),
                 "pt_autograd_0": cpu_main * 0.3, "pt_data_worker": cpu_loader / max(1, len(workers[:6]))}
        pin.add(rates, invol + r.randrange(3), 50 + steps * (40 if cfg.io_bound else 5))
        pin.throttled += throttled
        for p in procs:
            p.cpu_s += demand / len(procs)
            p.mem = acts[p.gpu].mem_used
            p.sm_util = float(round(acts[p.gpu].busy * 100))
            p.mem_util = float(round(acts[p.gpu].dram * 100))
        ps = [p.sample() for p in procs]
        for g, name, cmd, mem, user in cfg.extra_procs:
            ps.append(Proc(95000 + g * 11 + len(name), g, name, cmd, user, t0 - 86400, mem,
                           12.0, GiB).sample())
            acts[g].mem_used += mem
        for g in range(cfg.gpus):
            x = cfg.tenant(t, g)
            if x is not None:
                ps.append(Proc(81000 + g, g, "python", x.label, "intern", t0 + 30,
                               x.mem_used, 5 + t * 0.95, 5 * GiB, pod=x.pod).sample())
                acts[g].mem_used += x.mem_used
        gpus = tuple(b.sample(a) for b, a in zip(boards, acts))
        eng = None
        if cfg.unit:
            bt = pin.busiest()
            eng = EngineSample(kind="trainer", url="http://127.0.0.1:9090/metrics",
                               generation_tokens_total=float(round(work)),
                               requests_finished_total=float(int(steps_total)),
                               work_unit=cfg.unit, tensor_parallel=1, data_parallel=1,
                               pids=pin.tree[:8], time_wall_s=round(t0 + t + 0.02, 6),
                               cpu_s=round(pin.cpu_s, 2), ctx_involuntary=pin.invol,
                               busiest_thread_cpu_s=round(bt[3], 2), busiest_thread=f"{bt[0]} {bt[2]}",
                               cpu_quota_cores=cfg.quota,
                               cpu_periods=pin.periods if cfg.quota else None,
                               cpu_throttled_periods=pin.throttled if cfg.quota else None)
        src = base_sources(r, f"uprobes on libcudart.so.12, libcuda.so.1 (pid {procs[0].pid})"
                           if cfg.ebpf else None)
        src["engine"] = engine_status(r, eng) if cfg.unit else fail(
            "no engine found (pass --engine URL)")
        launch = ()
        if cfg.ebpf and steps:
            per = max(1.0, cfg.host_step / 20e-6)
            launch = tuple(h for h in (
                launch_hist("cudaLaunchKernel", procs[0].pid, int(steps * per), r, 4.2, jfrac, jms),
                launch_hist("cuLaunchKernel", procs[0].pid, int(steps * per * 0.4), r, 3.6, jfrac, jms),
                launch_hist("cudaMemcpyAsync", procs[0].pid, int(steps * 6), r, 7.0, jfrac, jms))
                if h is not None)
        f = clock.frame(k, dict(gpus=gpus, processes=tuple(ps), engine=eng, host=hs,
                                pinned=pin.sample(hs), launch=launch), src)
        if f:
            yield f
