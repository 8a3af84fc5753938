"""Boards, hosts, processes, histograms and the frame builder shared by every trace.

Everything is derived from per-tick work quantities the simulations compute (kernel-busy
fraction, SM / tensor / DRAM activity); power, clocks, temperature and clock-event reasons
follow from those and from the board's limits.  No signal is set to look like a cause.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)
from gputop.buckets import bucket_index

GiB = 2**30
MiB = 2**20


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


def clamp(x, lo, hi):
    return lo if x < lo else hi if x > hi else x


@dataclass(frozen=True)
class Board:
    name: str
    mem_gib: float
    tdp_w: float
    idle_w: float
    max_mhz: float
    mem_mhz: float
    hbm_gbs: float       # DRAM bandwidth, GB/s
    tflops: float        # dense bf16/fp16 tensor TFLOP/s at max clock
    gpm: bool            # Hopper+: NVML GPM gives SM / tensor / DRAM / PCIe / NVLink
    fan: bool
    slowdown_c: float    # where the thermal slowdown starts (GPU core)
    rth: float           # degC per watt over the inlet air at full airflow
    reserved_mib: int = 520
    sxm: bool = False


BOARDS = {
    "A100-SXM4-40GB": Board("NVIDIA A100-SXM4-40GB", 40, 400, 52, 1410, 1215, 1555, 312, False, False, 86, 0.085, 470, True),
    "A100-SXM4-80GB": Board("NVIDIA A100-SXM4-80GB", 80, 400, 60, 1410, 1593, 2039, 312, False, False, 86, 0.085, 470, True),
    "H100-SXM": Board("NVIDIA H100 80GB HBM3", 79.6, 700, 72, 1980, 2619, 3350, 989, True, False, 87, 0.062, 590, True),
    "H100-NVL": Board("NVIDIA H100 NVL", 93.6, 400, 60, 1785, 2619, 3900, 835, True, False, 87, 0.10, 590),
    "H100-PCIe": Board("NVIDIA H100 PCIe", 79.6, 350, 48, 1755, 1593, 2000, 756, True, False, 87, 0.12, 590),
    "L40S": Board("NVIDIA L40S", 45.0, 350, 35, 2520, 9001, 864, 362, False, False, 88, 0.13, 400),
    "L4": Board("NVIDIA L4", 22.5, 72, 16, 2040, 6251, 300, 121, False, False, 86, 0.55, 300),
    "A30": Board("NVIDIA A30", 24, 165, 31, 1440, 1215, 933, 165, False, False, 88, 0.25, 380),
    "A10": Board("NVIDIA A10", 22.5, 150, 22, 1695, 6251, 600, 125, False, False, 88, 0.28, 380),
    "RTX A4000": Board("NVIDIA RTX A4000", 16, 140, 12, 1560, 7001, 448, 76, False, True, 90, 0.33, 300),
    "RTX A5000": Board("NVIDIA RTX A5000", 24, 230, 20, 1695, 8001, 768, 111, False, True, 90, 0.22, 300),
    "RTX A6000": Board("NVIDIA RTX A6000", 48, 300, 22, 1800, 8001, 768, 155, False, True, 90, 0.19, 300),
    "RTX 4000 Ada": Board("NVIDIA RTX 4000 Ada Generation", 20, 130, 11, 2175, 9001, 360, 107, False, True, 90, 0.36, 300),
    "RTX 6000 Ada": Board("NVIDIA RTX 6000 Ada Generation", 48, 300, 24, 2505, 10001, 960, 364, False, True, 90, 0.19, 300),
    "RTX 4090": Board("NVIDIA GeForce RTX 4090", 24, 450, 25, 2520, 10501, 1008, 330, False, True, 88, 0.11, 300),
    "V100-SXM2-32GB": Board("Tesla V100-SXM2-32GB", 32, 300, 40, 1530, 877, 900, 125, False, False, 85, 0.14, 310, True),
    "T4": Board("Tesla T4", 15, 70, 10, 1590, 5001, 320, 65, False, False, 85, 0.62, 250),
}

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct")
LINK_FIELDS = ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s")


@dataclass
class Load:
    """What one GPU did during a tick (fractions of the tick, 0..1)."""
    busy: float = 0.0        # >= 1 kernel running (NVML GPU-Util's meaning)
    sm: float = 0.0          # SM active (cycles with a warp resident), over all SMs
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0        # bytes moved / (tick x board bandwidth)
    pcie_mib_s: float = 5.0
    nvlink_mib_s: float = 0.0
    burst: float = 0.3       # how bursty busy time is within the tick (for NVML aliasing)


class GpuState:
    """One board: temperature lag, power, clocks and clock-event reasons."""

    def __init__(self, board: Board, index: int, rng: random.Random, *, inlet_c=24.0,
                 power_limit_w=None, prof="auto", bus=None, ecc_corr=0, uuid_seed=""):
        self.b, self.i, self.rng = board, index, rng
        self.inlet = inlet_c
        self.limit = power_limit_w or board.tdp_w
        self.temp = inlet_c + board.idle_w * board.rth + 6
        self.prof = ("gpm" if board.gpm else None) if prof == "auto" else prof
        self.bus = bus or f"00000000:{0x07 + 0x10 * index:02X}:00.0"
        u = zlib.crc32(f"{uuid_seed}{board.name}{index}".encode())
        v = zlib.crc32(f"{index}{uuid_seed}".encode())
        self.uuid = f"GPU-{u:08x}-{v >> 16:04x}-{v & 0xffff:04x}-{(u ^ v) & 0xffff:04x}-{u:08x}{v & 0xffff:04x}"
        self.ecc_corr = ecc_corr
        self.clock_cap = 1.0      # external cap (power brake, application clocks, aged board)
        self.cap_reasons: tuple[str, ...] = ()
        self.airflow = 1.0        # <1: cooling fault
        self.power = board.idle_w
        self.factor = 1.0         # clock / max clock, used by the simulation for speed
        self.demand = 0.0
        self.last_util = 0.0

    def speed(self, intensity: float) -> float:
        """Clock factor for this tick given how hard the work pushes the board (0..1)."""
        b = self.b
        demand = b.idle_w + (b.tdp_w * 1.12 - b.idle_w) * intensity
        f = 1.0
        self.reasons = []
        if demand > self.limit:
            f = (max(self.limit - b.idle_w, 1) / (demand - b.idle_w)) ** 0.55
            self.reasons.append("power cap")
        hot = self.temp - b.slowdown_c
        if hot > 0:
            f = min(f, max(0.45, 1.0 - 0.09 * hot))
            self.reasons.append("thermal (sw)")
            if hot > 4:
                self.reasons.append("hw slowdown")
                self.reasons.append("thermal (hw)")
        if self.clock_cap < 0.999:
            f = min(f, self.clock_cap)
            self.reasons.extend(self.cap_reasons)
        self.factor = f
        return f

    def sample(self, dt: float, ld: Load, procs_mem: int, extra_missing=None) -> GpuSample:
        b, rng = self.b, self.rng
        f = self.factor
        act = 0.22 * ld.busy + 0.28 * ld.sm + 0.32 * ld.tensor + 0.18 * ld.dram
        p = b.idle_w + (b.tdp_w * 1.12 - b.idle_w) * act * (0.35 + 0.65 * f ** 2.2)
        if ld.busy > 0.02:
            p = max(p, b.idle_w * 1.6)
        p = min(p, self.limit * (1.0 + rng.uniform(-0.004, 0.012)))
        p *= 1 + rng.gauss(0, 0.015)
        self.power = p
        target = self.inlet + p * b.rth / max(self.airflow, 0.2) + 4
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 45.0))
        mhz = b.max_mhz * f
        if ld.busy < 0.02 and not self.reasons:
            mhz = b.max_mhz * (0.7 if b.gpm else 0.55) if rng.random() < 0.5 else b.max_mhz
        mhz = round(mhz / 15) * 15
        # NVML GPU-Util: driver samples over 1/6 s windows; tick value is the latest period
        nsamp = 6 if b.gpm or b.sxm else 1
        spread = ld.burst * math.sqrt(max(ld.busy * (1 - ld.busy), 0.0))
        samples = tuple(float(round(100 * clamp(ld.busy + rng.gauss(0, spread), 0, 1)))
                        for _ in range(nsamp))
        util = round(sum(samples[-2:]) / len(samples[-2:])) if nsamp > 1 else samples[0]
        if nsamp == 1:
            samples = ()
        missing = {}
        vals = {}
        if self.prof:
            vals = dict(sm_active_pct=100 * clamp(ld.sm * (1 + rng.gauss(0, 0.02)), 0, 1),
                        sm_occupancy_pct=100 * clamp(ld.occ * (1 + rng.gauss(0, 0.03)), 0, 1),
                        dram_bw_pct=100 * clamp(ld.dram * (1 + rng.gauss(0, 0.03)), 0, 1),
                        tensor_pct=100 * clamp(ld.tensor * (1 + rng.gauss(0, 0.03)), 0, 1))
        else:
            for k in GPM_FIELDS:
                missing[k] = "needs Hopper+ (GPM) or a DCGM exporter with profiling fields"
        if self.prof == "gpm":
            vals.update(pcie_rx_mib_per_s=ld.pcie_mib_s * rng.uniform(0.8, 1.2),
                        pcie_tx_mib_per_s=ld.pcie_mib_s * 0.3 * rng.uniform(0.8, 1.2),
                        nvlink_rx_mib_per_s=ld.nvlink_mib_s * rng.uniform(0.9, 1.1),
                        nvlink_tx_mib_per_s=ld.nvlink_mib_s * rng.uniform(0.9, 1.1))
        else:
            for k in LINK_FIELDS:
                missing[k] = "needs Hopper+ (GPM)"
        if not b.fan:
            missing["fan_pct"] = "not supported on this GPU"
        if extra_missing:
            missing.update(extra_missing)
        fan = None
        if b.fan:
            fan = float(round(clamp(30 + (self.temp - 40) * 1.8, 30, 100)))
        used = procs_mem + (int(0.25 * GiB) if procs_mem else 0)
        if self.rng.random() < 0.02:
            self.ecc_corr += 1 if self.ecc_corr else 0
        return GpuSample(
            index=self.i, name=b.name, uuid=self.uuid, util_gpu_pct=float(util),
            util_gpu_samples_pct=samples,
            util_mem_pct=float(round(100 * clamp(ld.dram * 1.05, 0, 1))),
            mem_total_bytes=int(b.mem_gib * GiB) - b.reserved_mib * MiB,
            mem_used_bytes=min(used, int(b.mem_gib * GiB) - b.reserved_mib * MiB),
            mem_reserved_bytes=b.reserved_mib * MiB,
            power_w=round(p, 3), temp_c=float(round(self.temp)), sm_clock_mhz=float(mhz),
            throttle=tuple(dict.fromkeys(self.reasons)) if ld.busy > 0.02 or self.clock_cap < 1 else (),
            bus_id=self.bus, fan_pct=fan, pstate=0 if ld.busy > 0.01 or procs_mem else 8,
            power_limit_w=float(self.limit), mem_clock_mhz=float(b.mem_mhz),
            ecc_corrected=self.ecc_corr, ecc_uncorrected=0, xid_count=0, xid_last=None,
            mig_mode=False if b.sxm or b.gpm else None, missing=missing, **vals)


class Hist:
    """A cumulative Prometheus histogram fed by lognormal batches of observations."""

    def __init__(self, name, bounds):
        self.name, self.bounds = name, tuple(float(b) for b in bounds)
        self.cum = [0] * len(self.bounds)
        self.count = 0
        self.sum = 0.0

    def reset(self):
        self.cum = [0] * len(self.bounds)
        self.count, self.sum = 0, 0.0

    def add(self, median: float, sigma: float, n: int, rng: random.Random):
        if n <= 0 or median <= 0:
            return
        mu = math.log(median)
        prev = 0
        acc = 0.0
        for j, ub in enumerate(self.bounds):
            if ub <= 0:
                c = 0.0
            else:
                c = 0.5 * (1 + math.erf((math.log(ub) - mu) / (sigma * math.sqrt(2))))
            k = int(n * c + rng.random() * 0.999) if c < 1 else n
            k = max(prev, min(n, k))
            self.cum[j] += k
            prev = k
        self.count += n
        self.sum += n * median * math.exp(sigma * sigma / 2) * rng.uniform(0.97, 1.03)

    def add_value(self, v: float, n: int = 1):
        for j, ub in enumerate(self.bounds):
            if v <= ub:
                self.cum[j] += n
        self.count += n
        self.sum += v * n

    def snap(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(float(c) for c in self.cum),
                               float(self.count), round(self.sum, 6))


VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_MAXTOK = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0)
# TGI (metrics-exporter-prometheus defaults as TGI configures them): guessed exponential layout
TGI_TPOT = tuple(round(0.001 * 1.5 ** i, 6) for i in range(20))
TGI_E2E = tuple(round(0.01 * 1.7 ** i, 5) for i in range(20))


class HostModel:
    """A host's CPUs: utilisation, run queue, PSI (avg10 lag), context switches."""

    def __init__(self, cpus: int, rng: random.Random, psi=True):
        self.cpus, self.rng, self.psi_on = cpus, rng, psi
        self.psi = 0.5
        self.ctx = rng.randrange(10**8, 9 * 10**8)

    def sample(self, dt, busy_cores: float, runnable: float, offcpu=None) -> HostSample:
        rng = self.rng
        over = max(0.0, runnable - self.cpus)
        some = 100 * clamp(over / max(runnable, 1) * 1.4 + 0.004 * runnable / self.cpus, 0, 1)
        self.psi += (some - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctx += int((runnable * 900 + 4000) * dt * rng.uniform(0.9, 1.1))
        return HostSample(
            cpu_pct=round(100 * clamp(busy_cores / self.cpus * rng.uniform(0.96, 1.04), 0, 1), 1),
            offcpu_switches=offcpu,
            cpu_pressure_some_pct=round(max(self.psi + rng.gauss(0, 0.05), 0), 2) if self.psi_on else None,
            run_queue=max(1, int(round(runnable + rng.gauss(0, 1.0)))),
            cpus=self.cpus, ctx_switches_total=self.ctx)


@dataclass
class Proc:
    """A long-lived process: cumulative CPU and context-switch counters."""
    pid: int
    name: str
    cmdline: str
    user: str
    start: float
    container: str = ""
    cgroup: str = ""
    slurm_job: str = ""
    slurm_step: str = ""
    ppid: int = 1
    rss: int = 3 * GiB
    cpu_s: float = 0.0
    thread_cpu: dict = field(default_factory=dict)   # tid -> [name, cpu_s]
    invol: int = 0
    vol: int = 0
    quota: float | None = None
    periods: int = 0
    throttled: int = 0

    def run(self, dt, cores, threads: dict, invol_rate=20.0, demand_cores=None):
        self.cpu_s += cores * dt
        for tid, (name, c) in threads.items():
            ent = self.thread_cpu.setdefault(tid, [name, 0.0])
            ent[1] += c * dt
        self.invol += int(invol_rate * dt)
        self.vol += int(300 * dt)
        if self.quota is not None:
            per = int(dt / 0.1)
            self.periods += per
            want = demand_cores if demand_cores is not None else cores
            if want > self.quota * 0.97:
                self.throttled += int(per * clamp((want - self.quota * 0.9) / max(want, 0.01) * 2.5, 0.05, 1))

    def busiest(self):
        if not self.thread_cpu:
            return None, ""
        tid, (name, c) = max(self.thread_cpu.items(), key=lambda kv: kv[1][1])
        return round(c, 2), f"{tid} {name}"

    def pinned(self, host: HostSample, ports=(), cores=()) -> PinnedSample:
        ths = sorted(self.thread_cpu.items(), key=lambda kv: -kv[1][1])[:12]
        return PinnedSample(
            label=self.cmdline[:60] + ("\u2026" if len(self.cmdline) > 60 else ""),
            root_pids=(self.pid,), tree_pids=(self.pid,), cpu_s=round(self.cpu_s, 2),
            ctx_voluntary=self.vol, ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(tid, self.pid, n, round(c, 2)) for tid, (n, c) in ths),
            cores=tuple(cores), cpu_pressure_some_pct=host.cpu_pressure_some_pct,
            run_queue=host.run_queue, listening_ports=tuple(ports),
            cpu_quota_cores=self.quota, cpu_periods=self.periods if self.quota else None,
            cpu_throttled_periods=self.throttled if self.quota else None)

    def gpu_proc(self, gpu, mem, sm=None, mem_util=None) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start,
                          mem_bytes=int(mem), sm_util_pct=None if sm is None else float(round(sm)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss, container=self.container,
                          cgroup=self.cgroup, slurm_job=self.slurm_job, slurm_step=self.slurm_step,
                          mem_util_pct=None if mem_util is None else float(round(mem_util)))


def launch_hist(api, pid, count, median_us, sigma, rng, tail_frac=0.0, tail_ms=0.0):
    """eBPF host-side call durations for one tick, on gputop's log-linear buckets."""
    buckets: dict[int, int] = {}
    total = 0
    mx = 0
    n_tail = int(count * tail_frac + rng.random())
    draws = min(count, 60)
    weight = count / draws if draws else 0
    acc = 0.0
    for k in range(draws):
        v = int(median_us * 1000 * math.exp(rng.gauss(0, sigma)))
        acc += weight
        w = int(acc)
        acc -= w
        if w:
            buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + w
            total += v * w
            mx = max(mx, v)
    for _ in range(n_tail):
        v = int(tail_ms * 1e6 * math.exp(rng.gauss(0, 0.6)))
        buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + 1
        total += v
        mx = max(mx, v)
    n = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total), max_ns=int(mx), buckets=buckets)


def status(ok=True, reason=None, detail=None, poll=0.004, rng=None, age=0.0):
    jitter = rng.uniform(0.8, 1.3) if rng else 1.0
    return SourceStatus(ok=ok, reason=reason, detail=detail, age_s=age if ok else None,
                        poll_s=round(poll * jitter, 6) if ok else None, poll_median_s=poll)


def make_frame(seq, t_wall, t_mono, gpus, procs, engine, host, pinned, sources, launch=()):
    return Frame(gpus=tuple(gpus), processes=tuple(procs), engine=engine, launch=tuple(launch),
                 host=host, pinned=pinned, seq=seq, time_wall_s=round(t_wall, 6),
                 time_mono_s=round(t_mono, 6), sources=sources)


def in_window(t, w):
    return w is not None and w[0] <= t < w[1]


def ramp(t, t0, t1, rise=20.0):
    """0..1 on-ness of an event window with soft edges (seconds)."""
    if t < t0 or t >= t1:
        return 0.0
    return clamp(min((t - t0) / rise, (t1 - t) / rise, 1.0), 0.0, 1.0) if rise > 0 else 1.0
