"""One machine over time: boards, the jobs on them, the host's CPUs; emits a Frame per tick."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from gputop.schema import Frame, HostSample, ProcSample, SourceStatus

from corpus_c.hw import SPECS, Activity, Board, uuid_for

GPM_NOTE = "GPM needs a second sample"


@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    gpu: int | None = None  # the GPU it holds a context on (None: host only)
    mem: int = 0
    ppid: int | None = None
    user: str = "svc"
    start: float = 0.0
    rss: int = 2 << 30
    container: str = ""
    cgroup: str = ""
    cpu_s: float = 0.0
    sm_util: float | None = None
    mig_index: int | None = None

    def sample(self) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name[:15],
                          cmdline=self.cmdline, user=self.user, ppid=self.ppid,
                          start_time_s=round(self.start, 2), mem_bytes=self.mem,
                          sm_util_pct=self.sm_util, cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container, cgroup=self.cgroup, mig_index=self.mig_index)


@dataclass
class Contribution:
    acts: dict = field(default_factory=dict)  # gpu -> Activity
    procs: list = field(default_factory=list)  # Proc on a GPU (host-only ones are left out)
    engine: object = None
    engine_status: SourceStatus | None = None
    launch: tuple = ()
    ebpf_status: SourceStatus | None = None
    offcpu_switches: int | None = None
    cores: float = 0.0  # CPU cores the job wanted this tick


class World:
    def __init__(self, name: str, gpu_model: str, n_gpus: int, tick: float, length: float,
                 cpus: int = 64, seed: str | None = None):
        self.name, self.tick_s, self.length, self.cpus = name, tick, length, cpus
        self.rng = random.Random(seed or name)
        self.spec = SPECS[gpu_model]
        self.boards = [Board(self.spec, i, uuid_for(self.rng, i), self.rng) for i in range(n_gpus)]
        self.jobs: list = []
        self.events: list = []  # (t, world) -> None, every tick before the jobs
        self.background = lambda t: 4.0  # cores other host processes want
        self.t0_wall = 1_796_000_000.0 + self.rng.randrange(0, 30 * 86400)
        self.t0_mono = 3000.0 + self.rng.random() * 5e5
        self.share = 1.0  # CPU share a runnable thread gets (host-wide)
        self.psi = 0.5
        self.pid_next = 1000 + self.rng.randrange(0, 60000)
        self.no_engine_reason = "no engine found (pass --engine URL)"

    def pid(self) -> int:
        self.pid_next += 1 + self.rng.randrange(0, 40)
        return self.pid_next

    def frames(self):
        dt, out = self.tick_s, []
        n = int(round(self.length / dt))
        demand = 0.0
        for k in range(n):
            t = k * dt
            for ev in self.events:
                ev(t, self)
            bg = self.background(t)
            want = demand + bg
            self.share = min(1.0, self.cpus / want) if want > 0 else 1.0
            acts = {b.index: Activity(context=False) for b in self.boards}
            procs, engine, launch = [], None, []
            status = {}
            switches = None
            demand = 0.0
            engine_status = SourceStatus(False, self.no_engine_reason)
            ebpf_status = None
            for job in self.jobs:
                c = job.tick(t, dt, self)
                acts.update(c.acts)
                procs.extend(c.procs)
                demand += c.cores
                if c.engine is not None or c.engine_status is not None:
                    engine = c.engine if c.engine is not None else engine
                    if c.engine_status is not None:
                        engine_status = c.engine_status
                launch.extend(c.launch)
                if c.ebpf_status is not None:
                    ebpf_status = c.ebpf_status
                if c.offcpu_switches is not None:
                    switches = (switches or 0) + c.offcpu_switches
            mem = {}
            for p in procs:
                if p.gpu is not None:
                    mem[p.gpu] = mem.get(p.gpu, 0) + p.mem
            for g in mem:  # a process holds a context there even when no kernel runs
                if not acts[g].context:
                    acts[g] = Activity(context=True)
            gpus = tuple(b.tick(dt, acts[b.index], mem.get(b.index, 0)) for b in self.boards)
            if k == 0:  # GPM needs two samples
                gpus = tuple(_first_gpm(g) for g in gpus)
            # host: PSI some avg10 follows the share of time a runnable task waited
            load = demand + bg
            over = load / self.cpus
            if over < 0.8:
                inst = 0.5 + 6 * over ** 3
            elif over < 1.0:
                inst = 3.6 + (over - 0.8) / 0.2 * 31
            else:
                inst = min(99.0, 35 + 60 * (1 - 1 / over))
            inst += getattr(self, "psi_extra", lambda t: 0.0)(t)
            self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
            host = HostSample(cpu_pct=round(min(100.0, 100 * load / self.cpus)
                                            * (1 + self.rng.gauss(0, 0.02)), 1),
                              offcpu_switches=switches,
                              cpu_pressure_some_pct=round(max(0.0, self.psi), 2),
                              run_queue=max(1, int(round(load * (1 + self.rng.gauss(0, 0.05))))),
                              cpus=self.cpus,
                              ctx_switches_total=int(2e8 + (t + 1) * (8000 + 400 * load)))
            status["nvml"] = SourceStatus(True, age_s=0.0, poll_s=0.004 * len(self.boards) + 0.003)
            status["engine"] = engine_status
            status["host"] = SourceStatus(True, age_s=0.0, poll_s=0.0004)
            if ebpf_status is not None:
                status["ebpf"] = ebpf_status
            wall = self.t0_wall + t + self.rng.random() * 0.002
            mono = self.t0_mono + t + self.rng.random() * 0.002
            if engine is not None:
                lag = 0.006 + self.rng.random() * 0.02
                engine = _stamp(engine, mono - lag, wall - lag)
            out.append(Frame(seq=k + 1, time_wall_s=wall, time_mono_s=mono,
                             gpus=gpus, processes=tuple(p.sample() for p in procs
                                                        if p.gpu is not None),
                             engine=engine, launch=tuple(launch), host=host, sources=status))
        return out


def _stamp(engine, mono, wall):
    import dataclasses
    return dataclasses.replace(engine, time_mono_s=mono, time_wall_s=wall)


def _first_gpm(g):
    import dataclasses
    if g.sm_active_pct is None:
        return g
    missing = dict(g.missing)
    for name in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
        missing[name] = GPM_NOTE
    return dataclasses.replace(g, sm_active_pct=None, sm_occupancy_pct=None, tensor_pct=None,
                               dram_bw_pct=None, pcie_rx_mib_per_s=None, pcie_tx_mib_per_s=None,
                               nvlink_rx_mib_per_s=None, nvlink_tx_mib_per_s=None,
                               missing=missing)
