"""The simulated machine: boards, power/thermal governor, host CPU, processes, frames.

Workloads (serve.py, job.py) add what they did to the GPUs (kernel-resident seconds, SM-active
seconds, bytes, tensor FLOPs) and to the host (CPU demand); the World turns that into the
readings a sampler would have taken, one Frame per tick."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

GiB = 2**30


@dataclass(frozen=True)
class Board:
    key: str
    name: str
    tflops: float  # dense bf16, FLOP/s
    hbm: float  # bytes/s
    power_limit: float
    idle_w: float  # no context
    ctx_w: float  # context held, nothing running
    max_clock: float
    mem_total: int
    reserved: int
    gpm: bool
    fan: bool
    mem_clock: float
    t_inlet: float
    r_th: float  # degC per W


BOARDS = {
    "H100": Board("H100", "NVIDIA H100 80GB HBM3", 989e12, 3.35e12, 700, 70, 115, 1980,
                  85520809984, 530579456, True, False, 2619, 30, 0.045),
    "H200": Board("H200", "NVIDIA H200", 989e12, 4.8e12, 700, 78, 122, 1980,
                  150754820096, 644939776, True, False, 3201, 34, 0.034),
    "A100": Board("A100", "NVIDIA A100-SXM4-80GB", 312e12, 2.04e12, 400, 55, 85, 1410,
                  85899345920, 0, False, False, 1593, 30, 0.08),
    "L40S": Board("L40S", "NVIDIA L40S", 362e12, 0.864e12, 350, 34, 78, 2520,
                  48305799168, 0, False, True, 9001, 28, 0.13),
}
NO_GPM = {"sm_active_pct": "needs Hopper+ (GPM)", "sm_occupancy_pct": "needs Hopper+ (GPM)",
          "dram_bw_pct": "needs Hopper+ (GPM)", "tensor_pct": "needs Hopper+ (GPM)",
          "pcie_rx_mib_per_s": "needs Hopper+ (GPM)", "pcie_tx_mib_per_s": "needs Hopper+ (GPM)",
          "nvlink_rx_mib_per_s": "needs Hopper+ (GPM)", "nvlink_tx_mib_per_s": "needs Hopper+ (GPM)"}


def seed_of(name: str, salt: str = "") -> int:
    return int.from_bytes(hashlib.sha256(f"corpus_y/{name}/{salt}".encode()).digest()[:8], "big")


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    L, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= L:
            return k
        k += 1


class Hist:
    """A Prometheus histogram counted from events: per-bucket counts, +Inf last."""

    def __init__(self, bounds):
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.total = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        lo, hi = 0, len(self.bounds)
        while lo < hi:  # first bound >= value
            mid = (lo + hi) // 2
            if self.bounds[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        self.counts[lo] += n
        self.total += n
        self.sum += value * n

    def snap(self, name):
        from gputop.schema import EngineHistogram
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(round(run)))
        return EngineHistogram(name, self.bounds, tuple(cum), float(round(self.total)),
                               round(self.sum, 6))


@dataclass
class Proc:
    pid: int
    gpus: tuple[int, ...]
    name: str
    cmdline: str
    user: str = "ubuntu"
    ppid: int = 1
    start_time_s: float = 0.0
    mem: dict = field(default_factory=dict)  # gpu -> bytes (may be replaced over time)
    rss: int = 2 * GiB
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    alive: tuple[int, int] = (0, 10**9)  # ticks
    cpu_s: float = 0.0
    cpu_per_tick: list = field(default_factory=list)
    gpu_share: dict = field(default_factory=dict)  # gpu -> per-tick busy seconds list


class World:
    def __init__(self, name, board, ngpu, tick_s, duration_s, start_wall_s, cpus=64,
                 bg_cores=1.5, power_limit=None, ebpf=False, pinned=False):
        self.name = name
        self.rng = random.Random(seed_of(name))
        self.board = BOARDS[board]
        self.ngpu = ngpu
        self.tick = tick_s
        self.n = int(round(duration_s / tick_s))
        self.start_wall = start_wall_s
        self.start_mono = 20000.0 + (seed_of(name, "mono") % 900000) / 10.0
        n = self.n
        self.busy = [[0.0] * (n + 64) for _ in range(ngpu)]
        self.sm = [[0.0] * (n + 64) for _ in range(ngpu)]
        self.bytes = [[0.0] * (n + 64) for _ in range(ngpu)]
        self.flops = [[0.0] * (n + 64) for _ in range(ngpu)]
        self.nvlink = [[0.0] * (n + 64) for _ in range(ngpu)]  # bytes
        self.occ = [0.35] * ngpu
        self.power_limit = [power_limit or self.board.power_limit] * ngpu
        self.cooling = [1.0] * ngpu  # thermal resistance multiplier (a fault raises it)
        self.cap_fn = None  # (g, t) -> (f_max, reasons)
        self.speed = [1.0] * ngpu  # clock factor in force during the next tick
        self.temp = [self.board.t_inlet + 8 + self.rng.uniform(-1.5, 1.5) for _ in range(ngpu)]
        self.gstate = [[None] * n for _ in range(ngpu)]  # (power, temp, clock_f, reasons)
        self.procs: list[Proc] = []
        self.cpus = cpus
        self.bg_cores = bg_cores
        self.demand = [0.0] * (n + 64)  # our processes' runnable cores wanted
        self.got = [0.0] * (n + 64)  # achieved
        self.hog = [0.0] * (n + 64)  # other host load beyond background (cores runnable)
        self.contended = [0.0] * (n + 64)  # 0..1: waiting fraction of our runnable threads
        self.quota = [None] * (n + 64)  # cgroup quota cores, per tick
        self.engine_samples = [None] * n
        self.engine_status = [None] * n
        self.pinned_list = None
        self.ebpf = ebpf
        self.launch = [()] * n
        self.offcpu = [None] * n
        self.intensity = [0.0] * n
        self.pinned_on = pinned
        self.next_pid = 1000 + seed_of(name, "pid") % 300000
        self.ctx_total = 10**9 + seed_of(name, "ctx") % 10**9
        self.psi = 0.3
        self.host_samples = [None] * n
        self.extra_sources: dict = {}

    # ------------------------------------------------------------ helpers
    def t(self, i):
        return i * self.tick

    def wall(self, i):
        return round(self.start_wall + (i + 1) * self.tick, 6)

    def pid(self):
        self.next_pid += 1 + self.rng.randrange(40)
        return self.next_pid

    def add_proc(self, name, cmdline, gpus, mem, **kw) -> Proc:
        p = Proc(self.pid(), tuple(gpus), name, cmdline, mem=dict(mem), **kw)
        p.ppid = kw.get("ppid", p.pid - 1 - self.rng.randrange(5))
        if not p.start_time_s:
            p.start_time_s = round(self.start_wall - self.rng.uniform(600, 40000), 2)
        p.cpu_per_tick = [0.0] * (self.n + 64)
        p.gpu_share = {g: [0.0] * (self.n + 64) for g in gpus}
        self.procs.append(p)
        return p

    def add(self, g, i, busy, fill, nbytes=0.0, flops=0.0, proc=None):
        """Kernel-resident seconds on GPU g in tick i, with the SM-active fraction while resident."""
        if i >= len(self.busy[g]):
            return
        self.busy[g][i] += busy
        self.sm[g][i] += busy * fill
        self.bytes[g][i] += nbytes
        self.flops[g][i] += flops
        if proc is not None and g in proc.gpu_share:
            proc.gpu_share[g][i] += busy

    def add_span(self, g, a, b, fill, bps=0.0, fps=0.0, proc=None, duty=1.0):
        """Kernels resident over [a, b) seconds (a fraction ``duty`` of it), spread over ticks;
        ``bps`` and ``fps`` are bytes and FLOPs per second while resident."""
        if b <= a:
            return
        i = int(a // self.tick)
        while a < b and i < len(self.busy[g]):
            end = min(b, (i + 1) * self.tick)
            d = (end - a) * duty
            self.add(g, i, d, fill, bps * d, fps * d, proc)
            a = end
            i += 1

    def cpu(self, i, proc, want, got=None):
        """CPU cores a process wanted and got over tick i."""
        got = want if got is None else got
        self.demand[i] += want
        self.got[i] += got
        if proc is not None:
            proc.cpu_per_tick[i] += got * self.tick

    # ------------------------------------------------------------ governor
    def govern(self, i):
        b = self.board
        scale = b.power_limit / 700.0
        t = self.t(i)
        for g in range(self.ngpu):
            f_used = self.speed[g]
            sm = min(1.0, self.sm[g][i] / self.tick)
            dram = min(1.0, self.bytes[g][i] / (b.hbm * self.tick))
            ten = min(1.0, self.flops[g][i] / (b.tflops * self.tick))
            ctx = any(g in p.gpus and p.alive[0] <= i < p.alive[1]
                      and (p.mem[g](i) if callable(p.mem.get(g)) else p.mem.get(g, 0)) > 0
                      for p in self.procs)
            idle = b.ctx_w if ctx else b.idle_w
            dyn = (73 * sm + 920 * ten) * scale
            d = 200 * dram * scale
            limit = self.power_limit[g]
            p_now = idle + d + dyn
            if dyn > 1:
                f_pow = f_used * max(0.05, (limit - idle - d) / dyn) ** (1 / 2.8)
            else:
                f_pow = 1.0
            f_pow = max(0.55, min(1.0, f_used + 0.6 * (f_pow - f_used)))
            f_cap, reasons = 1.0, []
            if self.cap_fn is not None:
                f_cap, reasons = self.cap_fn(g, t)
                reasons = list(reasons)
            # thermal: first-order toward inlet + R * P
            target = b.t_inlet + b.r_th * self.cooling[g] * min(p_now, limit * 1.02)
            self.temp[g] += (target - self.temp[g]) * (1 - math.exp(-self.tick / 45.0))
            f_th = 1.0
            if self.temp[g] > 87.0:
                f_th = max(0.45, 1.0 - 0.06 * (self.temp[g] - 86.0))
                reasons.append("thermal (sw)")
            if self.temp[g] > 92.0:
                f_th = min(f_th, 0.5)
                reasons.append("hw slowdown")
            f_new = min(f_pow, f_cap, f_th)
            if f_pow < 0.995 and f_pow <= min(f_cap, f_th):
                reasons.append("power cap")
            self.speed[g] = f_new
            p_rep = idle + d + dyn * (f_new / f_used) ** 2.8 if f_used > 0 else idle
            p_rep = p_rep * (1 + self.rng.gauss(0, 0.012)) + self.rng.gauss(0, 1.5)
            if "power cap" in reasons:
                p_rep = min(p_rep, limit * (1 + self.rng.uniform(-0.02, 0.004)))
            clock = f_new * b.max_clock
            if not ctx:
                clock = 345.0 if b.key in ("H100", "H200") else 210.0
            self.gstate[g][i] = (max(idle * 0.95, p_rep), self.temp[g], clock,
                                 tuple(r for r in ("power cap", "hw slowdown", "sync boost",
                                                   "thermal (sw)", "thermal (hw)", "power brake")
                                       if r in reasons))

    # ------------------------------------------------------------ host
    def host_tick(self, i):
        rng = self.rng
        bg = max(0.2, self.bg_cores * (1 + 0.25 * rng.gauss(0, 1)))
        ours, hog = self.got[i], self.hog[i]
        busy = min(self.cpus, bg + ours + hog)
        cpu_pct = round(100.0 * busy / self.cpus + rng.uniform(-0.3, 0.3), 1)
        target = 100.0 * self.contended[i] + max(0.0, rng.gauss(0.4, 0.4))
        self.psi += (target - self.psi) * (1 - math.exp(-self.tick / 10.0))
        runnable = bg + self.demand[i] + hog
        rq = int(round(min(runnable, self.cpus * 3) + rng.uniform(0, 3))) + 1
        self.ctx_total += int(self.tick * (4000 * self.cpus ** 0.5 + 2000 * runnable
                                           + rng.uniform(0, 3000)))
        self.host_samples[i] = HostSample(cpu_pct=max(0.0, min(100.0, cpu_pct)),
                                          offcpu_switches=self.offcpu[i] if self.ebpf else None,
                                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2),
                                          run_queue=rq, cpus=self.cpus,
                                          ctx_switches_total=self.ctx_total)

    # ------------------------------------------------------------ launch histograms
    def launch_hist(self, i, pid, api, count, median_ns, tail_frac=0.0, tail_ns=(3e5, 4e6)):
        """One tick of a launch API's host-side call durations: a lognormal body around the
        median plus a tail of calls whose thread was switched out inside the call."""
        if count <= 0:
            return None
        rng = self.rng
        buckets: dict[int, int] = {}
        total_ns, mx = 0, 0
        n_tail = min(count, poisson(rng, count * tail_frac)) if tail_frac > 0 else 0
        n_body = count - n_tail
        # body: 24 quantile points, weights spread evenly
        pts = 24
        per = n_body / pts
        carry = 0.0
        for k in range(pts):
            z = _NORM_Q[k]
            v = int(median_ns * math.exp(0.35 * z))
            carry += per
            c = int(carry)
            carry -= c
            if c:
                idx = bucket_index(v)
                buckets[idx] = buckets.get(idx, 0) + c
                total_ns += v * c
                mx = max(mx, v)
        body_assigned = sum(buckets.values())
        if body_assigned < n_body:
            idx = bucket_index(int(median_ns))
            buckets[idx] = buckets.get(idx, 0) + (n_body - body_assigned)
            total_ns += int(median_ns) * (n_body - body_assigned)
        for _ in range(min(n_tail, 400)):
            v = int(math.exp(rng.uniform(math.log(tail_ns[0]), math.log(tail_ns[1]))))
            w = max(1, n_tail // 400)
            idx = bucket_index(v)
            buckets[idx] = buckets.get(idx, 0) + w
            total_ns += v * w
            mx = max(mx, v)
        cnt = sum(buckets.values())
        return LaunchHist(api=api, pid=pid, count=cnt, sum_ns=int(total_ns), max_ns=int(mx),
                          buckets=dict(sorted(buckets.items())))

    # ------------------------------------------------------------ frames
    def frames(self):
        b = self.board
        rng = random.Random(seed_of(self.name, "frames"))
        out = []
        uuids = [f"GPU-{hashlib.sha256(f'{self.name}{g}'.encode()).hexdigest()[:8]}-"
                 f"{hashlib.sha256(f'{self.name}{g}x'.encode()).hexdigest()[:4]}-"
                 f"{hashlib.sha256(f'{self.name}{g}y'.encode()).hexdigest()[:4]}-"
                 f"{hashlib.sha256(f'{self.name}{g}z'.encode()).hexdigest()[:4]}-"
                 f"{hashlib.sha256(f'{self.name}{g}w'.encode()).hexdigest()[:12]}"
                 for g in range(self.ngpu)]
        bus = [f"00000000:{[0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][g % 8]:02X}:00.0"
               for g in range(self.ngpu)]
        ecc = [0] * self.ngpu
        for i in range(self.n):
            gpus = []
            for g in range(self.ngpu):
                power, temp, clock, reasons = self.gstate[g][i]
                util = min(1.0, self.busy[g][i] / self.tick)
                sm = min(1.0, self.sm[g][i] / self.tick)
                dram = min(1.0, self.bytes[g][i] / (b.hbm * self.tick))
                ten = min(1.0, self.flops[g][i] / (b.tflops * self.tick))
                # NVML's util window and GPM's sample differ a little in phase and period
                u = max(0.0, min(100.0, util * 100 + rng.gauss(0, 1.2 + 4 * util * (1 - util))))
                k = 5 if self.tick >= 1 else max(1, int(self.tick * 6))
                samples = tuple(float(max(0, min(100, round(u + rng.gauss(0, 2.5 + 6 * util * (1 - util))))))
                                for _ in range(k))
                mem_used = 0
                for p in self.procs:
                    if p.alive[0] <= i < p.alive[1] and g in p.gpus:
                        mem_used += p.mem.get(g, 0) if not callable(p.mem.get(g)) else p.mem[g](i)
                used = mem_used + (9437184 if mem_used else 0)
                missing = {} if b.gpm else dict(NO_GPM)
                if not b.fan:
                    missing["fan_pct"] = "not supported on this GPU"
                mu = float(round(min(100.0, dram * 100 * 0.85 + rng.gauss(0, 0.6)))) if util > 0.02 else 0.0
                gs = GpuSample(
                    index=g, name=b.name, uuid=uuids[g], util_gpu_pct=float(round(u)),
                    util_gpu_samples_pct=samples, util_mem_pct=max(0.0, mu),
                    sm_active_pct=(max(0.0, sm * 100 + rng.gauss(0, 0.4)) if b.gpm else None),
                    sm_occupancy_pct=(max(0.0, sm * 100 * self.occ[g] * (1 + rng.gauss(0, 0.03))) if b.gpm else None),
                    dram_bw_pct=(max(0.0, dram * 100 + rng.gauss(0, 0.25)) if b.gpm else None),
                    tensor_pct=(max(0.0, 66 * ten + rng.gauss(0, 0.2)) if b.gpm else None),
                    mem_total_bytes=b.mem_total, mem_used_bytes=used,
                    mem_reserved_bytes=b.reserved or None,
                    power_w=round(power, 3), temp_c=float(round(temp)),
                    sm_clock_mhz=float(round(clock / 15) * 15), throttle=reasons,
                    bus_id=bus[g], fan_pct=(float(round(30 + 0.6 * max(0, temp - 40)))
                                            if b.fan else None),
                    pstate=0, power_limit_w=float(self.power_limit[g]),
                    mem_clock_mhz=b.mem_clock,
                    pcie_rx_mib_per_s=(max(0.0, 20 + 300 * util * rng.random()) if b.gpm else None),
                    pcie_tx_mib_per_s=(max(0.0, 4 + 40 * util * rng.random()) if b.gpm else None),
                    nvlink_rx_mib_per_s=(self.nvlink[g][i] / 2**20 / self.tick if b.gpm else None),
                    nvlink_tx_mib_per_s=(self.nvlink[g][i] / 2**20 / self.tick if b.gpm else None),
                    ecc_corrected=ecc[g], ecc_uncorrected=0, xid_count=0, xid_last=None,
                    mig_mode=False, missing=missing)
                gpus.append(gs)
            procs = []
            for p in self.procs:
                if not (p.alive[0] <= i < p.alive[1]):
                    continue
                p.cpu_s += p.cpu_per_tick[i]
                for g in p.gpus:
                    m = p.mem.get(g, 0)
                    m = m(i) if callable(m) else m
                    share = p.gpu_share[g][i] / self.tick
                    procs.append(ProcSample(
                        pid=p.pid, gpu_index=g, name=p.name, cmdline=p.cmdline, user=p.user,
                        ppid=p.ppid, start_time_s=p.start_time_s, mem_bytes=m,
                        sm_util_pct=float(round(min(100, share * 100 + rng.gauss(0, 1))))
                        if share > 0.005 else 0.0,
                        cpu_s=round(p.cpu_s, 2), rss_bytes=p.rss, container=p.container,
                        pod=p.pod, cgroup=p.cgroup,
                        mem_util_pct=float(round(min(100, self.bytes[g][i] / (b.hbm * self.tick) * 85 * min(1, share / max(1e-9, self.busy[g][i] / self.tick)))))
                        if share > 0.005 else 0.0))
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.0006 * self.ngpu + rng.uniform(0, 0.002), 6),
                                            poll_median_s=round(0.005 + 0.0006 * self.ngpu, 6)),
                       "host": SourceStatus(True, age_s=0.0, poll_s=round(0.0008 + rng.uniform(0, 0.0004), 6), poll_median_s=0.00085),
                       "procfs": SourceStatus(True, detail="/proc", age_s=0.0, poll_s=round(0.0002 + rng.uniform(0, 0.0003), 6), poll_median_s=0.0002)}
            est = self.engine_status[i]
            if est is not None:
                sources["engine"] = est
            else:
                sources["engine"] = SourceStatus(False, reason="no engine found (pass --engine URL)",
                                                 poll_median_s=3e-05)
            pinned = self.pinned_list[i] if self.pinned_list else None
            if pinned is not None:
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=round(0.012 + rng.uniform(0, 0.01), 6), poll_median_s=0.015)
            if self.ebpf:
                sources["ebpf"] = SourceStatus(True, detail="uprobes on libcudart.so.12, libcuda.so.1",
                                               age_s=0.0, poll_s=round(0.002 + rng.uniform(0, 0.002), 6), poll_median_s=0.0025)
            for k, v in self.extra_sources.items():
                sources[k] = v
            out.append(Frame(seq=i + 1, time_wall_s=self.wall(i),
                             time_mono_s=round(self.start_mono + (i + 1) * self.tick, 6),
                             sources=sources, gpus=tuple(gpus), processes=tuple(procs),
                             engine=self.engine_samples[i], launch=tuple(self.launch[i]),
                             host=self.host_samples[i], pinned=pinned))
        return out


_NORM_Q = [-2.04, -1.64, -1.38, -1.15, -0.97, -0.81, -0.67, -0.52, -0.39, -0.26, -0.13, -0.04,
           0.04, 0.13, 0.26, 0.39, 0.52, 0.67, 0.81, 0.97, 1.15, 1.38, 1.64, 2.04]


def measure_window(world: World, series, base_ticks: int, rel: float, absolute: float,
                   span: int = 5, gap_s: float = 25.0, above: bool = True):
    """When a simulated quantity was materially beyond its healthy baseline: the ticks whose
    centred ``span``-tick mean differs from the baseline mean by more than
    max(absolute, rel * |baseline|); runs closer than ``gap_s`` are merged and the longest
    merged run is the window (wall-clock seconds of its first and last tick)."""
    n = len(series)
    base = sum(series[:base_ticks]) / max(1, base_ticks)
    thr = max(absolute, rel * abs(base))
    half = span // 2
    on = []
    for i in range(n):
        lo, hi = max(0, i - half), min(n, i + half + 1)
        m = sum(series[lo:hi]) / (hi - lo)
        on.append((m - base) > thr if above else (base - m) > thr)
    runs, start = [], None
    for i, v in enumerate(on + [False]):
        if v and start is None:
            start = i
        if not v and start is not None:
            runs.append([start, i - 1])
            start = None
    gap = int(round(gap_s / world.tick))
    merged = []
    for r in runs:
        if merged and r[0] - merged[-1][1] <= gap:
            merged[-1][1] = r[1]
        else:
            merged.append(r)
    merged = [r for r in merged if r[0] >= base_ticks // 2]
    if not merged:
        return None
    best = max(merged, key=lambda r: r[1] - r[0])
    return (world.wall(best[0]) - world.tick, world.wall(best[1]))


def run(world: World, workloads, pin=None, cores=()):
    """Step every workload through every tick; the governor and host follow each tick."""
    if pin is not None:
        world.pinned_list = [None] * world.n
    for i in range(world.n):
        for wl in workloads:
            wl.step_tick(i)
        world.govern(i)
        world.host_tick(i)
        if pin is not None:
            world.pinned_list[i] = pin.pinned(i, cores)
