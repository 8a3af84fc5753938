"""A node: GPUs, host, components (engines, trainers, bystanders) and the frame loop."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from . import common as C


@dataclass
class Out:
    loads: dict = field(default_factory=dict)        # gpu -> Load
    procs: list = field(default_factory=list)        # (Proc, gpu, mem_bytes)
    cores: float = 0.0                               # CPU cores busy
    runnable: float = 0.0                            # runnable threads (incl. waiting)
    psi: float = 0.0                                 # % of time some task of it waited for CPU
    ctx_rate: float = 0.0
    engine: object = None
    engine_status: tuple | None = None               # (ok, reason) when it has an endpoint
    engine_age: float = 0.0
    pinned: object = None
    launch: list = field(default_factory=list)
    offcpu: int | None = None


class Component:
    gpus: tuple = ()
    pinned = False

    def demand(self, t):
        return {}

    def advance(self, t, dt, speed) -> Out:
        raise NotImplementedError


class Node:
    def __init__(self, name, board_key, n_gpus, cpus, start_wall, tick, style="sxm", envs=None, psi=True):
        self.rng = C.rng_for(name)
        self.board = C.BOARDS[board_key]
        buses = C.bus_ids(n_gpus, self.rng, style)
        self.gpus = [C.GpuSim(self.board, i, self.rng, buses[i], i) for i in range(n_gpus)]
        self.host = C.Host(self.rng, cpus)
        self.start, self.tick = start_wall, tick
        self.comps: list[Component] = []
        self.env_fn = envs  # t -> {gpu: Env}
        self.psi_ok = psi
        self.ebpf = None
        self.base_cores = 0.5 + self.rng.random()

    def add(self, comp):
        self.comps.append(comp)
        return comp

    def run(self, seconds):
        rng = self.rng
        n = int(seconds / self.tick)
        clock = C.Clock(rng, self.start, self.tick, 86400 * (3 + rng.random() * 40))
        frames = []
        prev_t = None
        for seq, (wall, mono) in enumerate(clock.times(n)):
            t = wall - self.start
            dt = self.tick if prev_t is None else t - prev_t
            prev_t = t
            if self.env_fn:
                envs = self.env_fn(t) or {}
                for g in self.gpus:
                    g.env = envs.get(g.i, C.Env())
            dem = {}
            for c in self.comps:
                for g, d in c.demand(t).items():
                    dem[g] = dem.get(g, 0.0) + d
            speed = {}
            for g in self.gpus:
                share = 1.0 if dem.get(g.i, 0) <= 1.0 else 1.0 / dem[g.i]
                speed[g.i] = (g.clock_factor(), share)
            outs = [c.advance(t, dt, speed) for c in self.comps]
            loads = {}
            mem = {}
            procs = []
            cores = self.base_cores
            runnable = 1.0 + self.base_cores
            psi = 0.0
            ctx = 2000.0 + 300 * len(self.gpus)
            engine = None
            est = None
            age = 0.0
            pinned = None
            launch = []
            offcpu = None
            for o in outs:
                for g, ld in o.loads.items():
                    if g in loads:
                        a = loads[g]
                        loads[g] = C.Load(min(1, a.busy + ld.busy), min(1, a.sm + ld.sm), min(1, a.occ + ld.occ),
                                          min(1, a.tensor + ld.tensor), min(1, a.dram + ld.dram),
                                          a.pcie_rx + ld.pcie_rx, a.pcie_tx + ld.pcie_tx, a.nvl_rx + ld.nvl_rx,
                                          a.nvl_tx + ld.nvl_tx, max(a.burst_s, ld.burst_s))
                    else:
                        loads[g] = ld
                for p, g, m in o.procs:
                    procs.append((p, g, m))
                    mem[g] = mem.get(g, 0) + m
                cores += o.cores
                runnable += o.runnable
                psi += o.psi
                ctx += o.ctx_rate
                if o.engine_status is not None and est is None:
                    engine, est, age = o.engine, o.engine_status, o.engine_age
                if o.pinned is not None and pinned is None:
                    pinned = o.pinned
                launch += o.launch
                if o.offcpu is not None:
                    offcpu = o.offcpu
            cpus = self.host.cpus
            if cores > cpus:
                cores = cpus * (0.97 + 0.02 * rng.random())
            if runnable > cpus:
                psi += (runnable - cpus) / runnable * 100
            psi = min(100.0, psi)
            gsamples = []
            for g in self.gpus:
                here = any(pg == g.i for _, pg, _ in procs)
                d = g.render(loads.get(g.i, C.Load()), dt, here)
                gsamples.append(C.finish_gpu(d, mem.get(g.i, 0), g.b))
            psamples = [p.sample(gi, m, self.board.old_driver) for p, gi, m in procs]
            host = self.host.sample(cores, runnable, psi if self.psi_ok else None, ctx, dt, offcpu)
            if pinned is not None and not self.psi_ok:
                pinned = dataclasses.replace(pinned, cpu_pressure_some_pct=None)
            srcs = C.sources(engine=est, pin=pinned is not None, ebpf=self.ebpf, rng=rng,
                             tick=self.tick, engine_age=age)
            frames.append(C.make_frame(seq + 1, wall, mono, gsamples, psamples, engine, host, pinned,
                                       launch, srcs))
        return frames


class Steady(Component):
    """Someone else's job on other GPUs of a shared node (a bystander), or an idle holder."""

    def __init__(self, rng, gpus, user, job, name, cmdline, mem_gib, busy, sm, tensor, dram,
                 cores=1.0, start=0.0, pids=None, burst_s=0.0, on=None, nvl=0.0, proc_name="python"):
        self.rng, self.gpus = rng, tuple(gpus)
        self.levels = (busy, sm, tensor, dram)
        self.mem = mem_gib * C.GiB
        self.on = on or (lambda t: True)
        self.burst_s, self.nvl = burst_s, nvl
        self.cores_each = cores
        self.procs = []
        base = pids or rng.randint(100000, 3000000)
        for k, g in enumerate(self.gpus):
            p = C.Proc(base + k * 7, proc_name, cmdline, user, start - 3600 * rng.random(),
                       ppid=base - 1, gpu=g, slurm=(job, "0") if job else ("", ""))
            p.rss = int((3 + rng.random() * 6) * C.GiB)
            self.procs.append(p)

    def demand(self, t):
        return {g: self.levels[0] for g in self.gpus} if self.on(t) else {}

    def advance(self, t, dt, speed):
        o = Out()
        active = self.on(t)
        busy, sm, tensor, dram = self.levels if active else (0, 0, 0, 0)
        r = self.rng
        for p, g in zip(self.procs, self.gpus):
            share = speed[g][1]
            j = 1 + r.gauss(0, 0.02)
            o.loads[g] = C.Load(C.clip(busy * share * j), C.clip(sm * share * j), C.clip(sm * 0.5 * share),
                                C.clip(tensor * share * j), C.clip(dram * share * j), 50 * busy, 20 * busy,
                                self.nvl * busy, self.nvl * busy, self.burst_s)
            p.sm_util = busy * 100 * share if active else 0
            p.mem_util = dram * 100 if active else 0
            p.tick(self.cores_each if active else 0.02, dt)
            o.procs.append((p, g, self.mem))
            o.cores += self.cores_each if active else 0.02
            o.runnable += self.cores_each if active else 0
        return o
