"""Trace drivers: a box of boards and a host, and what runs on it (serving engines, a
training job, a plain CUDA program), turned into gputop Frames tick by tick."""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field, replace

from gputop.schema import (EngineSample, Frame, HostSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .phys import SPECS, Board, Host, Work, launch_hist, offcpu_hist
from .serving import MODELS, Server, Traffic

T0_WALL = 1796400000.0  # 2026-12-04 UTC, a plausible recording date
EBPF_NO_ROOT = "eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo"
NO_ENGINE = "no engine found (pass --engine URL)"


def seeded(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


@dataclass
class Box:
    """The machine: boards, host CPUs, what gputop could read."""

    name: str
    gpu: str
    n_gpus: int
    cpus: int = 64
    tick: float = 1.0
    duration: float = 420.0
    ebpf: str = "absent"  # absent | noroot | on
    rng: random.Random = None
    start_wall: float = 0.0
    boards: list = field(default_factory=list)
    pinned_label: str = ""

    def __post_init__(self):
        self.rng = seeded(self.name)
        self.start_wall = T0_WALL + (zlib.crc32(self.name.encode()) % 86400) * 7.0
        spec = SPECS[self.gpu]
        self.boards = [Board(spec, i, self.rng, bus=0x18 + 0x11 * i) for i in range(self.n_gpus)]
        self.host = Host(self.cpus, self.rng)
        self.mono0 = 3000.0 + self.rng.uniform(0, 5e5)
        self.seq0 = self.rng.randrange(0, 50)

    @property
    def n_ticks(self) -> int:
        return int(round(self.duration / self.tick))


def sources(box: Box, engine_ok: bool | None, engine_reason: str = NO_ENGINE,
            ebpf_detail: str = "", pinned: bool = False) -> dict[str, SourceStatus]:
    rng = box.rng
    out = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.003 + 0.0012 * box.n_gpus
                                                               + rng.uniform(0, 0.002), 6),
                                poll_median_s=round(0.004 + 0.0012 * box.n_gpus, 6))}
    if engine_ok is None:
        out["engine"] = SourceStatus(False, engine_reason, poll_median_s=3.1e-05)
    elif engine_ok:
        out["engine"] = SourceStatus(True, age_s=0.0, poll_s=round(rng.uniform(0.004, 0.03), 6),
                                     poll_median_s=0.012)
    else:
        out["engine"] = SourceStatus(False, engine_reason, poll_median_s=0.012)
    out["host"] = SourceStatus(True, age_s=0.0, poll_s=round(rng.uniform(2e-4, 7e-4), 6),
                               poll_median_s=0.00045)
    if box.ebpf == "noroot":
        out["ebpf"] = SourceStatus(False, EBPF_NO_ROOT)
    elif box.ebpf == "on":
        out["ebpf"] = SourceStatus(True, detail=ebpf_detail or "full mode; libcudart.so.12: "
                                   "cudaLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync; "
                                   "libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch",
                                   age_s=0.0, poll_s=round(rng.uniform(0.001, 0.004), 6),
                                   poll_median_s=0.002)
    if pinned:
        out["pin"] = SourceStatus(True, age_s=0.0, poll_s=2e-05, poll_median_s=2e-05)
    return out


class Proc:
    """A GPU process as NVML + /proc see it (cumulative CPU)."""

    def __init__(self, pid, gpu, name, cmdline, start, mem=0, ppid=1, user="svc", container=""):
        self.pid, self.gpu, self.name, self.cmdline = pid, gpu, name, cmdline
        self.start, self.mem, self.ppid, self.user, self.container = start, mem, ppid, user, container
        self.cpu_s = random.Random(pid).uniform(20, 400)
        self.sm = 0.0
        self.rss = random.Random(pid + 1).randint(2, 9) * 2**30

    def sample(self) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start,
                          mem_bytes=int(self.mem), sm_util_pct=float(int(self.sm)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container,
                          cgroup=f"/kubepods.slice/pod-{self.container[-8:]}" if self.container else
                          f"/system.slice/{self.name.split(':')[0].lower()}.service")


def frame(box: Box, i: int, gpus, procs, engine, host, srcs, launch=(), pinned=None) -> Frame:
    t = box.start_wall + i * box.tick + box.rng.uniform(0, 0.004)
    return Frame(seq=box.seq0 + i, time_wall_s=t, time_mono_s=box.mono0 + i * box.tick,
                 gpus=tuple(gpus), processes=tuple(p.sample() for p in procs), engine=engine,
                 launch=tuple(x for x in launch if x is not None), host=host, sources=srcs,
                 pinned=pinned)


def merge(samples: list[EngineSample]) -> EngineSample:
    """Several engines found on one box, as gputop's engine source merges them (sums,
    means, each one a replica of its own)."""
    if len(samples) == 1:
        return samples[0]
    first = samples[0]

    def tot(name):
        vals = [getattr(s, name) for s in samples]
        return None if any(v is None for v in vals) else sum(vals)

    def mean(name):
        vals = [getattr(s, name) for s in samples]
        return None if any(v is None for v in vals) else sum(vals) / len(vals)

    summed = {n: tot(n) for n in ("generation_tokens_total", "prompt_tokens_total",
                                  "requests_finished_total", "requests_running",
                                  "requests_waiting", "preemptions_total", "cpu_s",
                                  "ctx_involuntary", "prompt_tokens_cached_total",
                                  "retracted_requests_total", "retracted_input_tokens_total",
                                  "spec_drafts_total", "spec_draft_tokens_total",
                                  "spec_accepted_tokens_total", "prefill_seconds_total",
                                  "decode_seconds_total", "forward_seconds_total",
                                  "corrupted_requests_total", "kv_used_tokens", "kv_free_tokens",
                                  "kv_evictable_tokens")}
    means = {n: mean(n) for n in ("kv_usage_ratio", "flops_total", "read_bytes_total",
                                  "write_bytes_total", "spec_accept_ratio", "spec_accept_length")}
    hists = []
    from gputop.schema import EngineHistogram
    for h in first.histograms:
        same = [next((x for x in s.histograms if x.name == h.name), None) for s in samples]
        if any(x is None for x in same):
            continue
        hists.append(EngineHistogram(h.name, h.upper_bounds,
                                     tuple(sum(v) for v in zip(*(x.cumulative for x in same))),
                                     sum(x.count for x in same), sum(x.sum for x in same)))
    reasons: dict = {}
    for s in samples:
        for k, v in s.waiting_by_reason.items():
            reasons[k] = reasons.get(k, 0.0) + v
    return replace(first, **summed, **means, histograms=tuple(hists), waiting_by_reason=reasons,
                   busiest_thread_cpu_s=None, busiest_thread="",
                   url=" + ".join(s.url for s in samples),
                   pids=tuple(sorted({p for s in samples for p in s.pids})),
                   time_mono_s=sum(s.time_mono_s for s in samples) / len(samples),
                   time_wall_s=sum(s.time_wall_s for s in samples) / len(samples),
                   data_parallel=len(samples),
                   replicas=tuple(replace(s, replica=s.url) for s in samples))


# =============================================================== serving


@dataclass
class Deployment:
    """One engine on some GPUs of the box, its clients, and what happens to it."""

    server: Server
    gpus: tuple[int, ...]
    traffic: Traffic
    procs: list = field(default_factory=list)  # GPU processes (one per rank)
    api_pid: int = 0
    down_until: float = -1.0  # restarting: unreachable until then
    load_from: float = -1.0  # (re)loading: VRAM filling from here


def deploy(box: Box, kind: str, model: str, gpus: tuple[int, ...], traffic: Traffic,
           port: int = 8000, **kw) -> Deployment:
    rng = box.rng
    spec = SPECS[box.gpu]
    pid0 = 4000 + 1000 * gpus[0] + rng.randrange(0, 900)
    srv = Server(kind, MODELS[model], spec, len(gpus), seeded(box.name + str(port)), port, pid0,
                 **kw)
    srv.warm_start(seeded(box.name + "warm" + str(port)))
    start = box.start_wall - rng.uniform(3600, 5 * 86400)
    dep = Deployment(srv, gpus, traffic, api_pid=pid0)
    mname = MODELS[model].name
    tp = len(gpus)
    for rank, g in enumerate(gpus):
        if kind == "vllm":
            name = "VLLM::EngineCore" if tp == 1 else f"VLLM::Worker_TP{rank}"
            cmd = name
        else:
            name = f"sglang::scheduler_TP{rank}" if tp > 1 else "sglang::scheduler"
            cmd = name
        p = Proc(pid0 + 1 + rank, g, name, cmd, start + 20 + rank, mem=srv.mem_used, ppid=pid0,
                 container=f"containerd:{rng.getrandbits(48):012x}" if port % 2 else "")
        dep.procs.append(p)
    dep.cmdline = (f"python3 -m vllm.entrypoints.openai.api_server --model {mname} --port {port}"
                   f"{' --tensor-parallel-size %d' % tp if tp > 1 else ''}" if kind == "vllm" else
                   f"python3 -m sglang.launch_server --model-path {mname} --port {port}"
                   f"{' --tp %d' % tp if tp > 1 else ''} --enable-metrics")
    return dep


@dataclass
class Foreign:
    """Another process on a GPU: its share of GPU time and its activity while it runs."""

    gpu: int
    proc: Proc
    share: float = 0.0  # fraction of GPU time it takes when active
    sm: float = 0.9
    tensor: float = 0.5
    dram: float = 0.3
    active: bool = False
    when: object = None  # t -> active, for drivers that precompute a timeline


def run_serving(box: Box, deps: list[Deployment], hook=None, slices: int = 4,
                other_cpu=lambda t: 4.0, foreign: list[Foreign] = (),
                launch_tail=lambda t: (0.0, 0.0), idle_gpus_procs: bool = True) -> list[Frame]:
    """``hook(t, box, deps, foreign)`` changes the situation before each tick;
    ``other_cpu(t)``: cores the rest of the host wants; ``launch_tail(t)``: (share of launch
    calls held off-CPU, for how long in us) when eBPF is on."""
    frames = []
    rng = box.rng
    dt = box.tick / slices
    finished_by: dict[int, list] = {id(d): [] for d in deps}
    psi_engine_gap = 0.0
    served = 1.0
    for i in range(box.n_ticks):
        t = i * box.tick
        if hook:
            hook(t, box, deps, foreign)
        works = [Work() for _ in box.boards]
        mem = [0] * box.n_gpus
        has_proc = [False] * box.n_gpus
        samples, procs, launch = [], [], []
        engine_cpu = 0.0
        engines_down = []
        for d in deps:
            srv = d.server
            srv.work = Work()
            if t < d.down_until:
                engines_down.append(d)
                # loading: weights then KV pool fill the memory, a profile run and graph capture
                if d.load_from >= 0 and t >= d.load_from:
                    frac = min(1.0, (t - d.load_from) / max(1.0, d.down_until - d.load_from))
                    loaded = int(srv.weights * min(1.0, frac / 0.5) + 1.5e9 if frac < 0.55
                                 else srv.mem_used)
                    for rank, g in enumerate(d.gpus):
                        mem[g] += loaded
                        has_proc[g] = True
                        d.procs[rank].mem = loaded
                        w = works[g]
                        if 0.55 < frac < 0.95:  # profile run + CUDA graph capture
                            w.busy += 0.7 * box.tick
                            w.sm += 0.35 * box.tick
                            w.tensor += 0.1 * box.tick
                            w.dram += 0.15 * box.tick
                        elif frac <= 0.55:
                            w.busy += 0.03 * box.tick
                            w.pcie_gbs += 8.0
                    procs.extend(d.procs)
                continue
            clock = min(box.boards[g].clock_factor for g in d.gpus)
            srv.cpu_served = served
            srv.extra_gap_s = psi_engine_gap
            fin_total = []
            for s in range(slices):
                now = t + s * dt
                for r in d.traffic.arrivals(now, dt, finished_by[id(d)]):
                    srv.waiting.append(r)
                finished_by[id(d)] = []
                fin = srv.advance(now, dt, clock)
                fin_total.extend(fin)
                finished_by[id(d)] = fin
            # requests arrive with wall-clock times in the traffic model's frame: keep them
            engine_cpu += max(0.0, srv.c["cpu_s"] - getattr(srv, "_last_cpu", srv.c["cpu_s"]))
            srv._last_cpu = srv.c["cpu_s"]
            w = srv.work
            for rank, g in enumerate(d.gpus):
                jit = 1.0 + rng.gauss(0, 0.01)
                bw = works[g]
                # lockstep ranks: a faster one finishes its share and spins in the all-reduce
                ratio = clock / max(clock, box.boards[g].clock_factor) if len(d.gpus) > 1 else 1.0
                bw.busy += w.busy * jit
                bw.sm += w.sm * jit * (ratio + (1 - ratio) * 0.2)
                bw.occ += w.occ * (ratio + (1 - ratio) * 0.1)
                bw.tensor += w.tensor * jit * ratio
                bw.dram += w.dram * jit * (ratio + (1 - ratio) * 0.1)
                bw.nvlink_gbs += w.nvlink_gbs / box.tick
                bw.pcie_gbs += 0.05
                mem[g] += srv.mem_used
                has_proc[g] = True
                p = d.procs[rank]
                p.mem = srv.mem_used
                p.sm = min(100.0, w.sm / box.tick * 100)
                p.cpu_s = srv.c["cpu_s"] / len(d.gpus)
            procs.extend(d.procs)
            srv.c["ctx_inv"] += box.tick * (35 + 3500 * (1 - served) + 12 * box.host.psi) \
                * (1 + rng.gauss(0, 0.1))
            if box.ebpf == "on":
                steps = w.busy / max(1e-3, 0.015) if w.busy else 0
                tail, tail_us = launch_tail(t)
                launch.append(launch_hist(rng, "cudaGraphLaunch", d.procs[0].pid,
                                          int(steps * 2 * (1 + rng.gauss(0, .05))), 9.0,
                                          tail_frac=tail, tail_us=tail_us))
                launch.append(launch_hist(rng, "cuLaunchKernel", d.procs[0].pid,
                                          int(steps * 60 * (1 + rng.gauss(0, .05))), 3.6,
                                          tail_frac=tail, tail_us=tail_us))
                launch.append(launch_hist(rng, "cudaMemcpyAsync", d.procs[0].pid,
                                          int(steps * 3), 6.0, tail_frac=tail, tail_us=tail_us))
                sw = int(tail * steps * 60 + rng.randint(0, 20))
                launch.append(offcpu_hist(rng, d.procs[0].pid, sw, max(40.0, tail_us)))
            wall = box.start_wall + t
            samples.append(srv.sample(wall, box.mono0 + t, (d.api_pid, *(p.pid for p in d.procs)),
                                      d.gpus, rng))
        for f in foreign:
            if f.active:
                w = works[f.gpu]
                free = max(0.0, box.tick - w.busy)
                take = f.share * box.tick
                w.busy = min(box.tick, w.busy + take)
                w.sm += take * f.sm
                w.tensor += take * f.tensor
                w.dram += take * f.dram
                w.occ += take * 0.4
                mem[f.gpu] += f.proc.mem
                has_proc[f.gpu] = True
                f.proc.sm = take / box.tick * f.sm * 100
                f.proc.cpu_s += 0.9 * box.tick
                procs.append(f.proc)
                del free
        gpus = []
        for g, b in enumerate(box.boards):
            w = works[g]
            k = 1.0 / box.tick
            ww = Work(busy=min(1.0, w.busy * k), sm=min(1.0, w.sm * k), occ=min(1.0, w.occ * k),
                      tensor=min(1.0, w.tensor * k), dram=min(0.95, w.dram * k),
                      nvlink_gbs=w.nvlink_gbs, pcie_gbs=w.pcie_gbs)
            gpus.append(b.sample(ww, mem[g] + (500 * 2**20 if has_proc[g] else 0), box.tick,
                                 has_proc[g]))
        # the host: engine cores + whatever else runs there
        demand = engine_cpu / box.tick + other_cpu(t)
        cpu_pct, psi, rq, ctx, served_h = box.host.tick(box.tick, demand)
        # a latency-sensitive busy loop loses more than its average share
        served = max(0.15, served_h ** 2.2) if psi > 15 else 1.0
        psi_engine_gap = 0.0 if psi < 15 else (psi - 15) / 100 * 0.010
        switches = None
        if box.ebpf == "on":
            switches = sum(x.count for x in launch if x is not None and x.api == "off-cpu")
        host = HostSample(cpu_pct=cpu_pct, offcpu_switches=switches, cpu_pressure_some_pct=psi,
                          run_queue=rq, cpus=box.cpus, ctx_switches_total=ctx)
        up = [s for s in samples]
        if up:
            engine = merge(up)
            srcs = sources(box, True)
        elif deps:
            engine = None
            d = engines_down[0]
            srcs = sources(box, False, f"engine unreachable: <urlopen error [Errno 111] "
                                       f"Connection refused> (retry in {rng.choice((2, 4, 8))}s)")
        else:
            engine, srcs = None, sources(box, None)
        frames.append(frame(box, i, gpus, procs, engine, host, srcs, launch))
    return frames


# =============================================================== training and programs

PHASES = {  # busy, sm, occ, tensor, dram (fractions of the time in that phase)
    "fwd": (0.985, 0.93, 0.38, 0.66, 0.30),
    "bwd": (0.985, 0.94, 0.36, 0.70, 0.34),
    "opt": (0.97, 0.86, 0.55, 0.02, 0.86),
    "wait": (1.0, 0.14, 0.03, 0.0, 0.01),  # inside an NCCL kernel, waiting for a peer
    "comm": (1.0, 0.22, 0.05, 0.0, 0.22),
    "idle": (0.0, 0.0, 0.0, 0.0, 0.0),
    "load": (0.02, 0.01, 0.0, 0.0, 0.01),  # waiting for a batch: a stray H2D copy
    "ckpt": (0.08, 0.02, 0.01, 0.0, 0.05),  # D2H copies of the state
    "eval": (0.93, 0.82, 0.30, 0.52, 0.28),
    "tiny": (0.97, 0.06, 0.02, 0.01, 0.03),
    "graph_tiny": (1.0, 0.004, 0.001, 0.0, 0.001),
    "hbm": (0.99, 0.62, 0.45, 0.01, 0.93),
    "matmul": (0.995, 0.96, 0.14, 0.93, 0.17),
    "mixed": (0.98, 0.85, 0.40, 0.35, 0.55),
    "sync": (0.30, 0.24, 0.05, 0.04, 0.05),  # host round trips (.item()): the GPU mostly waits
}


@dataclass
class Rank:
    gpu: int
    pid: int
    segs: list = field(default_factory=list)  # (t0, t1, phase, busy_scale)


def _integrate(segs, start_idx, t0, t1):
    """Phase time over [t0, t1) from a sorted segment list; a segment's scale below 1 leaves
    the GPU idle for the rest of it (the launching thread was away).  Returns (acc, idx)."""
    acc = {}
    j = start_idx
    while j < len(segs) and segs[j][1] <= t0:
        j += 1
    k = j
    while k < len(segs) and segs[k][0] < t1:
        a, b, ph, sc = segs[k]
        ov = min(b, t1) - max(a, t0)
        if ov > 0:
            acc[ph] = acc.get(ph, 0.0) + ov * sc
            if sc < 1.0:
                acc["idle"] = acc.get("idle", 0.0) + ov * (1.0 - sc)
        k += 1
    return acc, j


def work_of(acc: dict, span: float, busy_scale: float = 1.0, nvlink=0.0, pcie=0.0) -> Work:
    w = Work()
    for ph, tm in acc.items():
        b, sm, occ, ten, dr = PHASES[ph]
        f = tm / span
        bs = 1.0
        w.busy += f * b * bs
        w.sm += f * sm * bs
        w.occ += f * occ * bs
        w.tensor += f * ten * bs
        w.dram += f * dr * bs
        if ph in ("comm", "bwd"):
            w.nvlink_gbs += f * nvlink * (1.0 if ph == "comm" else 0.35)
        if ph in ("ckpt", "load"):
            w.pcie_gbs += f * pcie
    return w


@dataclass
class TrainPlan:
    n_ranks: int
    fwd_s: float  # per-step forward seconds on a healthy rank at full clock
    bwd_ratio: float = 2.0
    opt_s: float = 0.05
    comm_s: float = 0.08  # the non-overlapped tail of the gradient collective
    tokens_per_step: int = 0  # per step, whole job (trainer counter)
    samples_per_step: int = 0
    workers: int = 8  # DataLoader workers per rank
    batch_load_s: float = 0.0  # one worker's time to make one batch
    prefetch: int = 2
    noise: float = 0.02
    nvlink_gbs: float = 120.0
    ckpt_every_s: float = 0.0
    ckpt_s: float = 25.0
    ckpt_rank0_only: bool = False
    eval_every_s: float = 0.0
    eval_s: float = 30.0
    mem_frac: float = 0.82


def run_training(box: Box, plan: TrainPlan, slow=lambda t, r: 1.0, loader=lambda t, r: 1.0,
                 extra=lambda t, r: None, gap=lambda t, r: 0.0, clock_cap=None,
                 trainer_counter: bool = False, pinned: bool = False, cmd="python train.py",
                 other_cpu=lambda t: 2.0, launch_tail=lambda t: (0.0, 0.0),
                 start_at: float = 0.0, foreign: list[Foreign] = (), share=lambda t: 1.0,
                 cooling=None, workers=None, loader_cpu_bound: bool = True) -> list[Frame]:
    """A data-parallel job: every rank runs load -> fwd -> bwd -> (wait) -> comm -> opt per step.
    ``slow(t, r)``: factor on rank r's compute time; ``loader(t, r)``: factor on its batch
    making time; ``extra(t, r)``: (phase, seconds) inserted after bwd on rank r; ``gap(t, r)``:
    share of compute time the launching thread leaves the GPU idle (host trouble);
    ``clock_cap(t, r)``: forced clock factor and reasons; ``share(t)``: GPU time share."""
    rng = box.rng
    n = plan.n_ranks
    ranks = [Rank(g, 20000 + 37 * g + rng.randrange(0, 30)) for g in range(n)]
    t = start_at
    step = 0
    produced = [[t - 5.0] for _ in range(n)]  # when each rank's newest batch is ready
    consumed = [[] for _ in range(n)]
    step_ends = []
    next_ckpt = plan.ckpt_every_s or 1e18
    next_eval = plan.eval_every_s or 1e18
    base_busy = {}
    gap_of = {}
    while t < box.duration + 5:
        starts = []
        for r in ranks:
            nw = workers(t) if workers else plan.workers
            interval = plan.batch_load_s * loader(t, r.gpu) / max(1, nw)
            avail = produced[r.gpu]
            if interval > 0:
                # the workers run ahead of the step by at most prefetch x workers batches
                cap = consumed[r.gpu][0] if len(consumed[r.gpu]) >= plan.prefetch * nw else -1e9
                ready = max(avail[0] + interval, cap)
                avail[0] = ready
                s0 = max(t, ready)
            else:
                s0 = t
            consumed[r.gpu].append(s0)
            while len(consumed[r.gpu]) > plan.prefetch * max(1, nw):
                consumed[r.gpu].pop(0)
            if s0 > t + 1e-4:
                r.segs.append((t, s0, "load", 1.0))
            starts.append(s0)
        ends = []
        for r, s0 in zip(ranks, starts):
            f = slow(s0, r.gpu) * (1 + rng.gauss(0, plan.noise))
            cap = clock_cap(s0, r.gpu)[0] if clock_cap else 1.0
            g = gap(s0, r.gpu)
            sh = share(s0) if r.gpu == 0 else 1.0
            fwd = plan.fwd_s * f / cap / (1 - g) / sh
            bwd = fwd * plan.bwd_ratio
            r.segs.append((s0, s0 + fwd, "fwd", (1 - g) * sh))
            r.segs.append((s0 + fwd, s0 + fwd + bwd, "bwd", (1 - g) * sh))
            e = s0 + fwd + bwd
            ex = extra(s0, r.gpu)
            if ex:
                ph, dur = ex
                r.segs.append((e, e + dur, ph, 1.0))
                e += dur
            ends.append(e)
        sync = max(ends)
        comm = plan.comm_s * (1 + rng.gauss(0, 0.05)) if n > 1 else 0.0
        for r, e in zip(ranks, ends):
            if n > 1:
                if sync - e > 1e-4:
                    r.segs.append((e, sync, "wait", 1.0))
                r.segs.append((sync, sync + comm, "comm", 1.0))
            o0 = sync + comm
            g = gap(o0, r.gpu)
            r.segs.append((o0, o0 + plan.opt_s / (1 - g), "opt", 1 - g))
        t = sync + comm + plan.opt_s / (1 - gap(sync, 0))
        step += 1
        step_ends.append(t)
        if t >= next_ckpt:
            for r in ranks:
                if plan.ckpt_rank0_only and r.gpu != 0:
                    r.segs.append((t, t + 3.0, "ckpt", 1.0))
                    r.segs.append((t + 3.0, t + plan.ckpt_s, "wait", 1.0))
                else:
                    r.segs.append((t, t + plan.ckpt_s, "ckpt", 1.0))
            t += plan.ckpt_s + 0.5
            next_ckpt = t + plan.ckpt_every_s
        if t >= next_eval:
            for r in ranks:
                r.segs.append((t, t + plan.eval_s, "eval", 1.0))
            t += plan.eval_s
            next_eval = t + plan.eval_every_s
    # ---- frames
    spec = SPECS[box.gpu]
    mem = int((spec.mem_total - spec.reserved) * plan.mem_frac)
    start = box.start_wall - rng.uniform(600, 40000)
    procs = [Proc(r.pid, r.gpu, "pt_main_thread", f"{cmd} --local_rank {r.gpu}" if n > 1 else cmd,
                  start + 5 + 0.3 * r.gpu, mem=mem * rng.uniform(0.97, 1.0),
                  ppid=19990, user="trainer") for r in ranks]
    frames = []
    idx = [0] * n
    done_steps = 0
    tokens = 0.0
    tree_cpu = rng.uniform(500, 4000)
    ctx_vol = rng.randrange(10**5, 10**6)
    ctx_inv = rng.randrange(10**4, 10**5)
    thr_cpu = [rng.uniform(100, 900) for _ in range(3)]
    for i in range(box.n_ticks):
        t0 = i * box.tick
        t1 = t0 + box.tick
        gpus, launch = [], []
        while done_steps < len(step_ends) and step_ends[done_steps] <= t1:
            done_steps += 1
            tokens += plan.tokens_per_step or plan.samples_per_step
        for f in foreign:
            if f.when is not None:
                f.active = f.when(t0)
        for r, p in zip(ranks, procs):
            if t1 <= start_at:
                acc = {"idle": box.tick}
            else:
                acc, idx[r.gpu] = _integrate(r.segs, idx[r.gpu], t0, t1)
            w = work_of(acc, box.tick, nvlink=plan.nvlink_gbs if n > 1 else 0.0, pcie=10.0)
            b = box.boards[r.gpu]
            if clock_cap:
                cap, reasons = clock_cap(t0, r.gpu)
                b.clock_cap, b.forced = cap, reasons
            if cooling:
                b.r_factor = cooling(t0, r.gpu)
            for f in foreign:
                if f.active and f.gpu == r.gpu:
                    take = f.share
                    w.busy = min(1.0, w.busy + take * 0.98)
                    w.sm += take * f.sm
                    w.tensor += take * f.tensor
                    w.dram += take * f.dram
                    f.proc.sm = take * f.sm * 100
                    f.proc.cpu_s += 0.8 * box.tick
            w.sm, w.tensor, w.dram = min(1.0, w.sm), min(1.0, w.tensor), min(0.95, w.dram)
            p.sm = w.sm * 100 * (1.0 if not foreign else 0.9)
            gpus.append(b.sample(w, p.mem + 520 * 2**20 + sum(f.proc.mem for f in foreign
                                                              if f.active and f.gpu == r.gpu),
                                 box.tick, True))
            g = gap(t0, r.gpu)
            busy_cpu = 0.25 + 0.75 * min(1.0, w.busy + 0.2)
            p.cpu_s += busy_cpu * box.tick * (1 - 0.6 * g)
            if box.ebpf == "on":
                tail, tail_us = launch_tail(t0)
                calls = int(w.busy * 2600 * (1 + rng.gauss(0, 0.05)))
                launch.append(launch_hist(rng, "cudaLaunchKernel", p.pid, calls, 4.2,
                                          tail_frac=tail, tail_us=tail_us))
                launch.append(launch_hist(rng, "cuLaunchKernel", p.pid, int(calls * 0.45), 3.1,
                                          tail_frac=tail, tail_us=tail_us))
                launch.append(launch_hist(rng, "cudaMemcpyAsync", p.pid, int(w.busy * 40) + 2,
                                          7.0, tail_frac=tail, tail_us=tail_us))
                launch.append(offcpu_hist(rng, p.pid, int(tail * calls * 1.3) + rng.randint(0, 6),
                                          max(60.0, tail_us)))
        # host
        nw = workers(t0) if workers else plan.workers
        period = max(1e-3, (step_ends[min(len(step_ends) - 1, done_steps)] -
                            step_ends[max(0, done_steps - 5)]) / 5) if len(step_ends) > 5 else 1.0
        per_batch = plan.batch_load_s * (loader(t0, 0) if loader_cpu_bound else 1.0) * 0.9
        loader_cpu = n * min(nw, per_batch / period) if plan.batch_load_s else 0.1 * n
        g0 = max(gap(t0, r.gpu) for r in ranks)
        demand = n * 1.1 + min(loader_cpu, n * plan.workers) + other_cpu(t0)
        cpu_pct, psi, rq, ctx, served = box.host.tick(box.tick, demand)
        tree_cpu += (n * 1.0 * (1 - 0.5 * g0) + loader_cpu * served) * box.tick
        ctx_vol += int(n * 900 * box.tick)
        ctx_inv += int(box.tick * n * (40 + 3000 * (1 - served) + 60 * psi + 2500 * g0)
                       * (1 + rng.gauss(0, 0.08)))
        for j in range(3):
            thr_cpu[j] += box.tick * (0.95 - 0.4 * g0 - 0.2 * j) * (1 + rng.gauss(0, .02))
        switches = None
        if box.ebpf == "on":
            switches = sum(x.count for x in launch if x is not None and x.api == "off-cpu")
        host = HostSample(cpu_pct=cpu_pct, offcpu_switches=switches, cpu_pressure_some_pct=psi,
                          run_queue=rq, cpus=box.cpus, ctx_switches_total=ctx)
        engine = None
        if trainer_counter:
            lat = rng.uniform(0.001, 0.004)
            unit = "tokens" if plan.tokens_per_step else "samples"
            engine = EngineSample(kind="trainer", url="http://127.0.0.1:9108/metrics",
                                  generation_tokens_total=float(tokens),
                                  requests_finished_total=float(done_steps), work_unit=unit,
                                  time_mono_s=box.mono0 + t0 + lat,
                                  time_wall_s=box.start_wall + t0 + lat, pids=(19990,) + tuple(
                                      p.pid for p in procs))
        pin = None
        if pinned:
            pin = PinnedSample(label=cmd.split()[-1] if n == 1 else f"torchrun ({n} ranks)",
                               pattern=cmd.split()[1] if len(cmd.split()) > 1 else cmd,
                               root_pids=(19990,),
                               tree_pids=(19990,) + tuple(p.pid for p in procs) + tuple(
                                   30000 + k for k in range(min(64, n * plan.workers))),
                               cpu_s=round(tree_cpu, 2), ctx_voluntary=ctx_vol,
                               ctx_involuntary=ctx_inv,
                               threads=tuple(ThreadSample(procs[0].pid + j, procs[0].pid,
                                                          ("pt_main_thread", "pt_autograd_0",
                                                           "pin_memory")[j], round(thr_cpu[j], 2))
                                             for j in range(3)),
                               cores=tuple(range(box.cpus)), cpu_pressure_some_pct=psi,
                               run_queue=rq)
        srcs = sources(box, True if trainer_counter else None, pinned=pinned)
        plist = list(procs) + [f.proc for f in foreign if f.active]
        frames.append(frame(box, i, gpus, plist, engine, host, srcs, launch, pin))
    return frames


def run_program(box: Box, phases, gpus=(0,), cmd="./app", pinned=False,
                other_cpu=lambda t: 2.0, launch_tail=lambda t: (0.0, 0.0), clock_cap=None,
                cooling=None, launches_per_s=20000.0, mem_frac=0.5, graph=False) -> list[Frame]:
    """A plain CUDA program: ``phases`` is [(t0, t1, phase, busy_scale)] (the same on each GPU),
    gaps between them idle; no engine."""
    rng = box.rng
    segs = []
    for a, b, ph, sc in phases:
        # jitter each phase into sub-segments so the noise looks like a real run
        x = a
        while x < b:
            y = min(b, x + rng.uniform(0.3, 1.7))
            segs.append((x, y, ph, max(0.0, min(1.0, sc * (1 + rng.gauss(0, 0.015))))))
            x = y
    spec = SPECS[box.gpu]
    start = box.start_wall - rng.uniform(30, 3000)
    procs = [Proc(7700 + g, g, cmd.split()[0].split("/")[-1], cmd, start,
                  mem=int((spec.mem_total - spec.reserved) * mem_frac), ppid=7650, user="hpc")
             for g in gpus]
    frames = []
    cpu = rng.uniform(5, 50)
    inv = rng.randrange(1000, 50000)
    idx = 0
    for i in range(box.n_ticks):
        t0, t1 = i * box.tick, (i + 1) * box.tick
        acc, idx = _integrate(segs, idx, t0, t1)
        busy_t = sum(acc.values())
        if busy_t < box.tick:
            acc["idle"] = acc.get("idle", 0.0) + box.tick - busy_t
        out, launch = [], []
        for p in procs:
            w = work_of(acc, box.tick)
            b = box.boards[p.gpu]
            if clock_cap:
                b.clock_cap, b.forced = clock_cap(t0, p.gpu)
            if cooling:
                b.r_factor = cooling(t0, p.gpu)
            p.sm = w.sm * 100
            out.append(b.sample(w, p.mem + 480 * 2**20, box.tick, True))
            if box.ebpf == "on":
                tail, tail_us = launch_tail(t0)
                calls = int(launches_per_s * box.tick * w.busy * (1 + rng.gauss(0, 0.04)))
                api = "cudaGraphLaunch" if graph else "cudaLaunchKernel"
                launch.append(launch_hist(rng, api, p.pid, calls, 3.8 if not graph else 8.5,
                                          tail_frac=tail, tail_us=tail_us))
                launch.append(launch_hist(rng, "cudaStreamSynchronize", p.pid,
                                          int(w.busy * 50) + 1, 900.0, sigma=0.8))
                launch.append(offcpu_hist(rng, p.pid, int(tail * calls * 1.2) + rng.randint(0, 5),
                                          max(50.0, tail_us)))
        g = launch_tail(t0)[0]
        demand = len(procs) * 1.0 + other_cpu(t0)
        cpu_pct, psi, rq, ctx, served = box.host.tick(box.tick, demand)
        cpu += len(procs) * box.tick * served
        inv += int(box.tick * (30 + 4000 * (1 - served) + 40 * psi + 20000 * g))
        for p in procs:
            p.cpu_s += box.tick * served
        switches = None
        if box.ebpf == "on":
            switches = sum(x.count for x in launch if x is not None and x.api == "off-cpu")
        host = HostSample(cpu_pct=cpu_pct, offcpu_switches=switches, cpu_pressure_some_pct=psi,
                          run_queue=rq, cpus=box.cpus, ctx_switches_total=ctx)
        pin = None
        if pinned:
            pin = PinnedSample(label=cmd.split()[0], pattern=cmd.split()[0].split("/")[-1],
                               root_pids=(7650,), tree_pids=(7650,) + tuple(p.pid for p in procs),
                               cpu_s=round(cpu, 2), ctx_voluntary=int(cpu * 400),
                               ctx_involuntary=inv,
                               threads=(ThreadSample(procs[0].pid, procs[0].pid,
                                                     procs[0].name[:15], round(cpu, 2)),),
                               cores=tuple(range(box.cpus)), cpu_pressure_some_pct=psi,
                               run_queue=rq)
        frames.append(frame(box, i, out, procs, None, host, sources(box, None, pinned=pinned),
                            launch, pin))
    return frames


def ramp(t, a, b, v0, v1):
    """v0 before a, v1 after b, linear between."""
    if t <= a:
        return v0
    if t >= b:
        return v1
    return v0 + (v1 - v0) * (t - a) / (b - a)


def diurnal(t, base, amp, period, phase=0.0):
    return base * (1 + amp * math.sin(2 * math.pi * (t / period) + phase))
