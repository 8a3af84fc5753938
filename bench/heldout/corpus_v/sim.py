"""The physics under corpus_v: GPUs, a host seen from /proc, a pinned process tree, a
training job's step timeline, a continuous-batching server, and the frames gputop
would record of them.  Pure Python, deterministic (every random stream is seeded by
the caller from the trace name), no clock."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, EngineSample, Frame, GpuSample, HostSample,
                           LaunchHist, PinnedSample, ProcSample, SourceStatus, ThreadSample)

GIB = 2**30


def seeded(name: str, salt: str = "") -> random.Random:
    digest = hashlib.sha256(f"corpus_v:{name}:{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# ------------------------------------------------------------------ GPU models
@dataclass(frozen=True)
class GpuModel:
    name: str
    total: int
    reserved: int
    idle_w: float  # P0 with a CUDA context, no kernels
    tdp: float
    clock: float
    mem_clock: float
    gpm: bool  # SM activity readable (Hopper+ GPM)
    samples_per_s: int
    fan: bool = False


H200 = GpuModel("NVIDIA H200", 150754820096, 644939776, 121.0, 700.0, 1980.0, 3201.0, True, 5)
H100 = GpuModel("NVIDIA H100 80GB HBM3", 85520809984, 553648128, 98.0, 700.0, 1980.0, 2619.0,
                True, 5)
A100 = GpuModel("NVIDIA A100-SXM4-80GB", 85899345920, 567279616, 62.0, 400.0, 1410.0, 1593.0,
                False, 6)
L40S = GpuModel("NVIDIA L40S", 48305799168, 520093696, 36.0, 350.0, 2520.0, 9001.0, False, 6,
                fan=True)


# ------------------------------------------------------------------ histograms
VLLM_BOUNDS = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "tpot": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "queue": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
              120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0,
                          5000.0),
    "max_generation_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
                              2000.0, 5000.0),
}
SGLANG_BOUNDS = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
             100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
            0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
              100.0, 200.0, 400.0),
}


def _lognorm_cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0 or median <= 0:
        return 0.0
    return 0.5 * (1.0 + math.erf(math.log(x / median) / (sigma * math.sqrt(2.0))))


class Hist:
    """A cumulative Prometheus histogram fed with expected counts of a lognormal mixture;
    reported bucket counts are floors of the cumulative expectation (monotone in le and in
    time, as the real counters are)."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.expected = [0.0] * len(bounds)
        self.total = 0.0
        self.sum = 0.0

    def observe(self, n: float, parts: list[tuple[float, float, float]]) -> None:
        """parts: (weight, median, sigma), weights summing to 1."""
        if n <= 0:
            return
        self.total += n
        for w, med, sig in parts:
            if w <= 0:
                continue
            self.sum += n * w * med * math.exp(sig * sig / 2)
            for i, b in enumerate(self.bounds):
                self.expected[i] += n * w * _lognorm_cdf(b, med, sig)

    def observe_values(self, n: float, value: float) -> None:
        if n <= 0:
            return
        self.total += n
        self.sum += n * value
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.expected[i] += n

    def sample(self) -> EngineHistogram:
        cum = tuple(float(math.floor(v + 1e-9)) for v in self.expected)
        count = float(math.floor(self.total + 1e-9))
        return EngineHistogram(self.name, self.bounds, cum, max(count, cum[-1] if cum else 0.0),
                               round(self.sum, 6))


# ------------------------------------------------------------------ the tick's inputs
@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    mem: int
    start: float
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    slurm_job: str = ""
    slurm_step: str = ""
    user: str = "root"
    ppid: int = 1
    rss: int = 2 * GIB
    cpu_s: float = 0.0  # cumulative, advanced by the builder from cpu_rate


@dataclass
class GpuIn:
    """What one GPU did this tick: busy fraction per driver sample, and activity
    per busy second (SM active, occupancy, DRAM, tensor as fractions of busy time)."""
    busy: list[float]
    sm_eff: float = 0.7
    occ_eff: float = 0.45
    dram_eff: float = 0.3
    tensor_eff: float = 0.3
    clock_factor: float = 1.0
    throttle: tuple[str, ...] = ()
    temp_target: float | None = None
    power_limit: float | None = None
    procs: list[tuple[Proc, float, float]] = field(default_factory=list)  # proc, sm share, cpu
    nvlink_mib_s: float = 0.0
    pcie_mib_s: float = 30.0
    sm_override: float | None = None  # a time-weighted SM active fraction, when known


@dataclass
class HostIn:
    cpus: int
    busy_cores: float
    run_queue: int
    pressure: float  # instantaneous "some" share 0..100 (avg10 is smoothed here)


@dataclass
class TreeIn:
    thread_rates: dict[int, float]  # tid -> cores used this tick
    vol_rate: float
    invol_rate: float
    throttled_frac: float | None = None  # of this tick's CFS periods
    quota: float | None = None
    active_frac: float = 1.0  # share of periods with runnable tasks


@dataclass
class Thread:
    tid: int
    pid: int
    name: str
    cpu_s: float = 0.0


class Builder:
    """Turns per-tick physical state into gputop Frames, holding every cumulative counter."""

    def __init__(self, name: str, model: GpuModel, ngpus: int, tick_s: float, start_wall: float,
                 threads: list[Thread] | None = None, cores: tuple[int, ...] = (),
                 label: str = "", root_pids: tuple[int, ...] = (), ports: tuple[int, ...] = (),
                 gpu_indices: tuple[int, ...] | None = None, host_cpus: int = 64):
        self.name = name
        self.rng = seeded(name, "frames")
        self.model = model
        self.tick = tick_s
        self.start = start_wall
        self.mono0 = 86400.0 * 3 + self.rng.random() * 1000
        self.seq = 0
        self.gpu_indices = gpu_indices if gpu_indices is not None else tuple(range(ngpus))
        self.temps = {i: 33.0 + self.rng.random() * 4 for i in self.gpu_indices}
        self.uuids = {i: "GPU-" + hashlib.md5(f"{name}{i}".encode()).hexdigest()[:8] + "-"
                      + hashlib.md5(f"{name}{i}x".encode()).hexdigest()[:4] + "-4c1e-9a2b-"
                      + hashlib.md5(f"{name}{i}y".encode()).hexdigest()[:12]
                      for i in self.gpu_indices}
        self.threads = threads or []
        self.cores = cores
        self.label = label
        self.root_pids = root_pids
        self.ports = ports
        self.vol = 1000 + self.rng.randrange(5000)
        self.invol = 50 + self.rng.randrange(500)
        self.periods = 0
        self.throttled = 0
        self.ctx_total = 10**9 + self.rng.randrange(10**9)
        self.psi = 0.5
        self.host_cpus = host_cpus
        self.tree_pids: tuple[int, ...] = tuple(sorted({t.pid for t in self.threads}))
        self.xid = {i: 0 for i in self.gpu_indices}

    # --- parts
    def gpu(self, index: int, g: GpuIn) -> GpuSample:
        m, rng = self.model, self.rng
        per = max(1, round(m.samples_per_s * self.tick))
        busy = list(g.busy)
        if len(busy) != per:  # resample to the driver's period
            busy = [busy[min(len(busy) - 1, int(k * len(busy) / per))] for k in range(per)]
        samples = tuple(float(max(0, min(100, round(100 * b + rng.gauss(0, 2.0))))) if b > 0.005
                        else 0.0 for b in busy)
        mean_busy = sum(busy) / len(busy)
        last = busy[-1]
        util = float(max(0, min(100, round(100 * (0.5 * last + 0.5 * mean_busy)
                                           + rng.gauss(0, 3.0))))) if mean_busy > 0.005 else 0.0
        n = 1 + rng.gauss(0, 0.025)
        if g.sm_override is not None:
            sm = 100 * g.sm_override * n
        else:
            sm = 100 * mean_busy * g.sm_eff * n
        sm = max(0.0, min(100.0, sm))
        occ = sm * g.occ_eff
        dram = max(0.0, min(100.0, 100 * mean_busy * g.dram_eff * (1 + rng.gauss(0, 0.03))))
        tensor = max(0.0, min(100.0, 100 * mean_busy * g.tensor_eff * (1 + rng.gauss(0, 0.03))))
        if g.sm_override is not None:
            tensor = min(tensor, sm * 0.95)
        limit = g.power_limit or m.tdp
        act = 0.1 * mean_busy + 0.75 * sm / 100 + 0.3 * dram / 100 + 0.3 * tensor / 100
        power = m.idle_w + (m.tdp - m.idle_w) * min(1.0, act) * g.clock_factor ** 1.5
        power *= 1 + rng.gauss(0, 0.01)
        throttle = tuple(g.throttle)
        clock = m.clock * g.clock_factor
        if power >= limit * 0.985:
            power = limit * (0.975 + 0.02 * rng.random())
            if "power cap" not in throttle:
                throttle = ("power cap",) + throttle
            clock = min(clock, m.clock * (0.86 + 0.06 * rng.random()))
        elif g.clock_factor >= 0.999:
            clock = m.clock
        target = g.temp_target if g.temp_target is not None else 30 + power * 0.072
        self.temps[index] += (target - self.temps[index]) * (1 - math.exp(-self.tick / 25.0))
        temp = float(round(self.temps[index] + rng.gauss(0, 0.3)))
        procs_mem = sum(p.mem for p, _, _ in g.procs)
        missing = {} if m.fan else {"fan_pct": "not supported on this GPU"}
        if not m.gpm:
            for key in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                missing[key] = "needs Hopper+ (GPM)"
            missing["pcie_rx_mib_per_s"] = "needs Hopper+ (GPM)"
        gpm = m.gpm
        return GpuSample(
            index=index, name=m.name, uuid=self.uuids[index], util_gpu_pct=util,
            util_gpu_samples_pct=samples,
            util_mem_pct=float(round(dram * 0.92 + rng.gauss(0, 0.5))) if dram > 0.3 else 0.0,
            sm_active_pct=sm if gpm else None, sm_occupancy_pct=occ if gpm else None,
            dram_bw_pct=dram if gpm else None, tensor_pct=tensor if gpm else None,
            mem_total_bytes=m.total, mem_used_bytes=procs_mem + (0 if not g.procs else 0),
            mem_reserved_bytes=m.reserved, power_w=round(power, 3), temp_c=temp,
            sm_clock_mhz=float(round(clock / 15) * 15), throttle=throttle,
            bus_id=f"00000000:{0x18 + 0x10 * index:02X}:00.0",
            fan_pct=(float(round(30 + max(0, temp - 40) * 1.5))) if m.fan else None,
            pstate=0 if g.procs else 8,
            power_limit_w=limit, mem_clock_mhz=m.mem_clock,
            pcie_rx_mib_per_s=(g.pcie_mib_s * (1 + rng.gauss(0, 0.1))) if gpm else None,
            pcie_tx_mib_per_s=(g.pcie_mib_s * 0.2 * (1 + rng.gauss(0, 0.1))) if gpm else None,
            nvlink_rx_mib_per_s=max(0.0, g.nvlink_mib_s * (1 + rng.gauss(0, 0.05))) if gpm else None,
            nvlink_tx_mib_per_s=max(0.0, g.nvlink_mib_s * (1 + rng.gauss(0, 0.05))) if gpm else None,
            ecc_corrected=0, ecc_uncorrected=0, xid_count=self.xid[index], xid_last=None,
            mig_mode=False, missing=missing)

    def procs(self, index: int, g: GpuIn, util_pct: float) -> list[ProcSample]:
        out = []
        for p, share, cpu_rate in g.procs:
            p.cpu_s += cpu_rate * self.tick
            out.append(ProcSample(
                pid=p.pid, gpu_index=index, name=p.name, cmdline=p.cmdline, user=p.user,
                ppid=p.ppid, start_time_s=p.start, mem_bytes=p.mem,
                sm_util_pct=float(round(util_pct * share)), cpu_s=round(p.cpu_s, 2),
                rss_bytes=p.rss, container=p.container, pod=p.pod, cgroup=p.cgroup,
                slurm_job=p.slurm_job, slurm_step=p.slurm_step,
                mem_util_pct=float(round(util_pct * share * 0.3))))
        return out

    def host(self, h: HostIn) -> HostSample:
        rng = self.rng
        a = 1 - math.exp(-self.tick / 10.0)
        self.psi += (h.pressure - self.psi) * a
        self.ctx_total += int(h.busy_cores * 9000 * self.tick + h.cpus * 400 * self.tick)
        return HostSample(cpu_pct=round(100 * h.busy_cores / h.cpus + rng.gauss(0, 0.3), 1),
                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2),
                          run_queue=max(1, h.run_queue), cpus=h.cpus,
                          ctx_switches_total=self.ctx_total)

    def tree(self, t: TreeIn, host: HostSample, rq_jitter: int) -> PinnedSample:
        total = 0.0
        for th in self.threads:
            rate = t.thread_rates.get(th.tid, 0.0)
            th.cpu_s += max(0.0, rate) * self.tick * (1 + self.rng.gauss(0, 0.01))
        total = sum(th.cpu_s for th in self.threads)
        self.vol += max(0, int(t.vol_rate * self.tick * (1 + self.rng.gauss(0, 0.05))))
        self.invol += max(0, int(t.invol_rate * self.tick * (1 + self.rng.gauss(0, 0.15))))
        if t.quota is not None:
            per = int(round(10 * self.tick * t.active_frac))
            self.periods += per
            frac = min(1.0, max(0.0, t.throttled_frac or 0.0))
            thr = int(math.floor(per * frac + self.rng.random()))
            self.throttled += min(per, thr)
        busiest = sorted(self.threads, key=lambda x: -x.cpu_s)[:24]
        return PinnedSample(
            label=self.label, root_pids=self.root_pids, tree_pids=self.tree_pids,
            cpu_s=round(total, 2), ctx_voluntary=self.vol, ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(x.tid, x.pid, x.name, round(x.cpu_s, 2)) for x in busiest),
            cores=self.cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
            run_queue=max(1, (host.run_queue or 1) + rq_jitter), listening_ports=self.ports,
            cpu_quota_cores=t.quota, cpu_periods=self.periods if t.quota is not None else None,
            cpu_throttled_periods=self.throttled if t.quota is not None else None)

    def frame(self, gpus: dict[int, GpuIn], host: HostIn, tree: TreeIn | None,
              engine: EngineSample | None, engine_status: SourceStatus | None = None,
              launch: tuple[LaunchHist, ...] = (), tree_visible: bool = True) -> Frame:
        rng = self.rng
        wall = self.start + self.seq * self.tick + rng.uniform(0.0, 0.004)
        mono = self.mono0 + self.seq * self.tick + rng.uniform(0.0, 0.004)
        samples, procs = [], []
        for i in self.gpu_indices:
            s = self.gpu(i, gpus[i])
            samples.append(s)
            procs += self.procs(i, gpus[i], s.util_gpu_pct or 0.0)
        hs = self.host(host)
        ps = self.tree(tree, hs, rng.randint(-2, 1)) if tree is not None and tree_visible else None
        if tree is not None and not tree_visible:
            ps = PinnedSample(label=self.label, waiting="no process matches", cores=self.cores,
                              cpu_pressure_some_pct=hs.cpu_pressure_some_pct,
                              run_queue=hs.run_queue)
        sources = {
            "nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.002 * rng.random()
                                                               * len(samples), 6)),
            "host": SourceStatus(True, age_s=0.0, poll_s=0.0008),
            "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=0.0002),
        }
        if tree is not None:
            sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=round(0.03 + 0.02 * rng.random(), 6))
        if engine_status is not None:
            sources["engine"] = engine_status
        elif engine is not None:
            sources["engine"] = SourceStatus(True, age_s=0.0,
                                             poll_s=round(0.03 + 0.03 * rng.random(), 6))
        if launch:
            sources["ebpf"] = SourceStatus(True, detail="uprobes on libcuda.so.1, libcudart.so.12",
                                           age_s=0.0)
        if engine is not None and ps is not None:
            busiest = max(self.threads, key=lambda x: x.cpu_s) if self.threads else None
            engine = _replace_engine(engine, cpu_s=ps.cpu_s, ctx_involuntary=ps.ctx_involuntary,
                                     busiest_thread_cpu_s=round(busiest.cpu_s, 2) if busiest else None,
                                     busiest_thread=f"{busiest.tid} {busiest.name}" if busiest else "",
                                     cpu_quota_cores=ps.cpu_quota_cores,
                                     cpu_periods=ps.cpu_periods,
                                     cpu_throttled_periods=ps.cpu_throttled_periods,
                                     pids=self.tree_pids,
                                     time_mono_s=round(mono + 0.04 + 0.02 * rng.random(), 6),
                                     time_wall_s=round(wall + 0.04 + 0.02 * rng.random(), 6))
        f = Frame(gpus=tuple(samples), processes=tuple(procs), engine=engine, launch=launch,
                  host=hs, pinned=ps, seq=self.seq, time_wall_s=round(wall, 6),
                  time_mono_s=round(mono, 6), sources=sources)
        self.seq += 1
        return f


def _replace_engine(e: EngineSample, **kw) -> EngineSample:
    import dataclasses
    return dataclasses.replace(e, **kw)


# ------------------------------------------------------------------ launch histograms (eBPF)
def launch_hist(rng: random.Random, api: str, pid: int, count: int, median_ns: float,
                sigma: float, tail_frac: float = 0.0, tail_ns: float = 0.0) -> LaunchHist:
    """Host-side call durations of one API over a tick, bucketed as the BPF program does."""
    if count <= 0:
        return LaunchHist(api=api, pid=pid)
    draws = min(count, 400)
    scale = count / draws
    buckets: dict[int, float] = {}
    total = 0.0
    mx = 0
    for _ in range(draws):
        if tail_frac and rng.random() < tail_frac:
            v = tail_ns * math.exp(rng.gauss(0, 0.6))
        else:
            v = median_ns * math.exp(rng.gauss(0, sigma))
        v = int(max(200, v))
        mx = max(mx, v)
        total += v
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0.0) + scale
    ib = {k: int(round(c)) for k, c in buckets.items() if round(c) > 0}
    n = sum(ib.values())
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total * scale), max_ns=mx, buckets=ib)


# ------------------------------------------------------------------ training step timeline
@dataclass
class Seg:
    start: float
    end: float
    density: float = 1.0  # fraction of the segment's time kernels run
    sm: float = 0.8  # SM active per busy second
    own: float = 1.0  # share of the busy time that is this job's own kernels (time-slicing)


class Timeline:
    """Busy segments of one GPU over the whole trace; sampled per driver period."""

    def __init__(self):
        self.segs: list[Seg] = []
        self._i = 0

    def add(self, seg: Seg) -> None:
        if seg.end > seg.start:
            self.segs.append(seg)

    def window(self, a: float, b: float) -> tuple[float, float, float]:
        """(busy seconds, SM-active seconds, own busy seconds) in [a, b)."""
        while self._i < len(self.segs) and self.segs[self._i].end <= a:
            self._i += 1
        busy = sm = own = 0.0
        j = self._i
        while j < len(self.segs) and self.segs[j].start < b:
            s = self.segs[j]
            ov = min(b, s.end) - max(a, s.start)
            if ov > 0:
                busy += ov * s.density
                sm += ov * s.density * s.sm
                own += ov * s.density * s.own
            j += 1
        return busy, sm, own

    def sample(self, t: float, tick: float, per: int) -> tuple[list[float], float, float]:
        """busy fraction per driver sample in [t, t+tick), SM-active and own-busy fractions."""
        out, sm_total, own_total = [], 0.0, 0.0
        width = tick / per
        for k in range(per):
            b, s, o = self.window(t + k * width, t + (k + 1) * width)
            out.append(min(1.0, b / width))
            sm_total += s
            own_total += o
        return out, min(1.0, sm_total / tick), min(1.0, own_total / tick)


def steps_until(rng: random.Random, t_end: float, step_fn, t0: float = 0.0):
    """Run a training loop: step_fn(t, i, rng) -> (gap_s, gpu_s, extra) per step; yields
    (start, gap_end, end, i, extra)."""
    t, i = t0, 0
    out = []
    while t < t_end:
        gap, gpu, extra = step_fn(t, i, rng)
        out.append((t, t + gap, t + gap + gpu, i, extra))
        t = t + gap + gpu
        i += 1
    return out
