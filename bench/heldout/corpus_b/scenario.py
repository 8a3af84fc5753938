"""A trace: GPUs, workloads, host, what gputop is pointed at, events; run it into frames."""

from __future__ import annotations

from dataclasses import dataclass, field

from gputop.schema import Frame, PinnedSample, SourceStatus

from .host import Host
from .hw import SPECS, Device
from .serving import Engine, EngineCfg, Stream
from .training import Hog, PlainProc, TrainCfg, Trainer
from .util import rng_for

Q = 1.0 / 6.0  # the quantum: NVML's utilization sample period on these parts


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    engine: str | None
    gpus: int
    gpu_model: str
    tick_s: float
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None  # wall seconds
    note: str
    duration_s: float
    start_wall_s: float = 0.0


@dataclass
class Scenario:
    name: str
    gpu: str = "h100"
    n_gpus: int = 1
    tick: float = 1.0
    duration: float = 360.0
    cpus: int = 64
    ebpf: bool = False
    base_cpu: float = 1.2
    wall0: float = 1_796_400_000.0
    mono0: float = 86_400.0
    engines: list = field(default_factory=list)
    trainers: list = field(default_factory=list)
    plains: list = field(default_factory=list)
    hogs: list = field(default_factory=list)
    view: object = None  # the Engine or Trainer gputop reads (None: none)
    trainer_counter: bool = False
    pinned: object = None  # a Trainer pinned with -p
    events: list = field(default_factory=list)
    mark: object = None  # callable(scn, t) -> bool: when the pathology is materially on
    warmup: float = 75.0  # simulated before the first frame: gputop attaches to a running system
    drivers: list = field(default_factory=list)  # callables(scn, t) run every quantum

    def __post_init__(self):
        self.rng = rng_for(self.name, "scenario")
        self.wall0 = self.wall0 + rng_for(self.name, "wall").randint(0, 30 * 86400)
        spec = SPECS[self.gpu]
        self.devs = [Device(i, spec, rng_for(self.name, "gpu", i)) for i in range(self.n_gpus)]
        self.host = Host(self.cpus, rng_for(self.name, "host"), self.base_cpu)
        self.marks: list[float] = []
        self._pid = rng_for(self.name, "pid").randint(1800, 40000)

    # ---------------------------------------------------------------- builders
    def next_pid(self, span: int = 40) -> int:
        self._pid += span + self.rng.randint(1, 60)
        return self._pid

    def add_engine(self, cfg: EngineCfg, gpus: list[int], streams: list[Stream]) -> Engine:
        base = self.next_pid(80)
        if cfg.kind == "vllm":
            api, core = base, base + 41
            workers = [base + 60 + 3 * i for i in range(cfg.tp)] if cfg.tp > 1 else []
            other = []
        else:
            api = base
            workers = [base + 30 + 2 * i for i in range(cfg.tp)]
            core = workers[0]
            other = [base + 29]
        eng = Engine(cfg, [self.devs[g] for g in gpus], streams,
                     rng_for(self.name, "engine", len(self.engines)),
                     (api, core, workers, other), env=self.host.env, start_wall=self.wall0)
        self.engines.append(eng)
        return eng

    def add_trainer(self, cfg: TrainCfg, gpus: list[int]) -> Trainer:
        tr = Trainer(cfg, [self.devs[g] for g in gpus], rng_for(self.name, "trainer", len(self.trainers)),
                     self.next_pid(200), self.wall0)
        self.trainers.append(tr)
        return tr

    def add_plain(self, gpu: int, name: str, cmdline: str, user: str, mem: float, phases) -> PlainProc:
        p = PlainProc(self.devs[gpu], self.next_pid(), name, cmdline, user, mem, phases,
                      rng_for(self.name, "plain", len(self.plains)), self.wall0)
        self.plains.append(p)
        return p

    def add_hog(self, gpu: int, name: str, cmdline: str, user: str, mem: float, t0: float,
                t1: float, duty, prof) -> Hog:
        h = Hog(self.devs[gpu], self.next_pid(), name, cmdline, user, mem, t0, t1, duty, prof,
                rng_for(self.name, "hog", len(self.hogs)), self.wall0)
        self.hogs.append(h)
        return h

    def at(self, t: float, fn) -> None:
        self.events.append((t, fn))

    # ---------------------------------------------------------------- running
    def _memory(self, t: float) -> None:
        for d in self.devs:
            d.mem_by_pid = {}
        for e in self.engines:
            for dev, pid, mem in e.gpu_mem():
                dev.mem_by_pid[pid] = mem
        for tr in self.trainers:
            for dev, pid, mem in tr.gpu_mem(t):
                dev.mem_by_pid[pid] = mem
        for w in (*self.plains, *self.hogs):
            for dev, pid, mem in w.gpu_mem(t):
                dev.mem_by_pid[pid] = mem
        for d in self.devs:
            d.has_ctx = bool(d.mem_by_pid)

    def run(self) -> list[Frame]:
        per_tick = int(round(self.tick / Q))
        n_q = int(round(self.duration / Q))
        n_w = int(round(self.warmup / Q))
        events = sorted(self.events, key=lambda e: e[0])
        frames: list[Frame] = []
        trng = rng_for(self.name, "ticks")
        poll_med = {"nvml": 0.0045 * len(self.devs) ** 0.5, "engine": 0.0021, "host": 0.0005}
        for d in self.devs:  # start near the thermal steady state of a loaded part
            d.temp = d.spec.t_amb + d.spec.r_th * 0.6 * d.spec.power_limit
        for tr in self.trainers:
            tr.start_at(-self.warmup)
        for k in range(-n_w, n_q):
            t = k * Q
            if k == 0:
                frames.clear()
                self.marks.clear()
                for d in self.devs:
                    d.gpm_ready = False
            while events and events[0][0] <= t + 1e-9:
                events.pop(0)[1](self)
            for drive in self.drivers:
                drive(self, t)
            for h in self.hogs:
                h.pre_quantum(t)
            self._memory(t)
            for e in self.engines:
                e.quantum(t, Q)
            for tr in self.trainers:
                tr.quantum(t, Q)
            for p in self.plains:
                p.quantum(t, Q)
            for h in self.hogs:
                h.quantum(t, Q)
            for d in self.devs:
                d.end_quantum(Q)
            if (k + 1) % per_tick == 0:
                frames.append(self._frame(len(frames), t + Q, trng, poll_med))
        return frames

    def _frame(self, seq: int, t: float, trng, poll_med) -> Frame:
        dt = self.tick
        jitter = trng.uniform(0.0003, 0.004)
        mono = self.mono0 + t + jitter
        wall = self.wall0 + t + jitter
        # host side first: the workloads' CPU this tick
        busy = 0.0
        for e in self.engines:
            busy += e.cpu_tick(dt)["busy"]
        share = self.host.env(t)[0]
        for tr in self.trainers:
            busy += tr.cpu_tick(t, dt, share)["busy"]
        for w in (*self.plains, *self.hogs):
            busy += w.cpu_tick(t, dt)["busy"]
        self.host.workload_busy = busy
        host = self.host.sample(t, dt)
        gpus = tuple(d.sample() for d in self.devs)
        procs = []
        for e in self.engines:
            procs += e.procs(wall)
        for tr in self.trainers:
            procs += tr.procs(wall)
        for p in self.plains:
            procs += p.procs(t)
        for h in self.hogs:
            procs += h.procs(t, dt)
        procs.sort(key=lambda p: (p.gpu_index, p.pid))
        sources = {"nvml": SourceStatus(True, age_s=0.0,
                                        poll_s=round(poll_med["nvml"] * trng.uniform(0.7, 1.8), 6),
                                        poll_median_s=round(poll_med["nvml"], 6))}
        engine = None
        if isinstance(self.view, Engine):
            engine = self.view.scrape(t, mono + 0.0021, wall + 0.0021)
            if engine is None:
                sources["engine"] = SourceStatus(False, reason=f"http://127.0.0.1:{self.view.cfg.port}"
                                                 "/metrics: connection refused")
            else:
                sources["engine"] = SourceStatus(True, age_s=0.0,
                                                 poll_s=round(0.0021 * trng.uniform(0.8, 3.0), 6),
                                                 poll_median_s=0.0021)
        elif isinstance(self.view, Trainer) and self.trainer_counter:
            engine = self.view.trainer_sample(t, mono + 0.0012, wall + 0.0012)
            sources["engine"] = SourceStatus(True, age_s=0.0, poll_s=0.0012, poll_median_s=0.0012)
        else:
            sources["engine"] = SourceStatus(False, reason="no engine found (pass --engine URL)")
        sources["host"] = SourceStatus(True, age_s=0.0, poll_s=0.0005, poll_median_s=0.0005)
        pinned = None
        if self.pinned is not None:
            tr = self.pinned
            root = tr.pid_launcher or tr.pid_ranks[0]
            pinned = PinnedSample(label="train.py", pattern="train.py", root_pids=(root,),
                                  tree_pids=tuple(tr.tree()), cpu_s=round(tr.tree_cpu(), 3),
                                  ctx_voluntary=tr.vol, ctx_involuntary=tr.invol,
                                  threads=tuple(tr.threads()), cores=tuple(range(self.cpus)),
                                  cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                  run_queue=host.run_queue,
                                  listening_ports=(9100,) if self.trainer_counter else ())
        sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.00003, poll_median_s=0.00003)
        launch = ()
        if self.ebpf:
            hists = []
            for e in self.engines:
                if e.state == "up":
                    hists += e.launch_hists(dt)
            launch = tuple(hists)
            sources["ebpf"] = SourceStatus(True, detail="uprobes: libcudart.so.12, libcuda.so.1")
        for e in self.engines:
            e.end_tick()
        if self.mark is not None and self.mark(self, t):
            self.marks.append(wall)
        return Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=gpus,
                     processes=tuple(procs), engine=engine, launch=launch, host=host,
                     pinned=pinned, sources=sources, launch_armed_s=None)
