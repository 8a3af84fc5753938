"""Boards, host, processes, histograms and frame assembly shared by every simulation.

Every number a frame holds is derived here from one per-tick "load" a workload simulation
hands over (fractions of the tick during which a kernel ran, SMs were active, tensor pipes
worked, HBM moved bytes), so the signals stay consistent with each other.
"""

from __future__ import annotations

import dataclasses
import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

GiB = 2**30
MiB = 2**20

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")


@dataclass(frozen=True)
class Board:
    key: str
    name: str
    mem_mib: int
    tdp_w: float
    idle_w: float
    hbm_bps: float  # peak memory bandwidth, bytes/s
    bf16_flops: float  # dense tensor peak
    max_clock: float
    idle_clock: float
    mem_clock: float
    gpm: bool  # Hopper+: GPM SM/tensor/DRAM/PCIe/NVLink
    fan: bool  # nvidia-smi reports a fan (actively cooled boards)
    r_c_per_w: float  # steady temperature rise per watt
    slowdown_c: float  # thermal (sw) slowdown threshold
    nvlink: bool
    reserved_mib: int | None = 600  # None: driver too old for memory_info_v2
    samples_per_s: int = 5  # NVML GPU-Util driver samples per second
    fp8: bool = False


BOARDS = {b.key: b for b in (
    Board("h100sxm", "NVIDIA H100 80GB HBM3", 81559, 700, 72, 3.35e12, 989e12, 1980, 345, 2619,
          True, False, 0.050, 87, True, fp8=True),
    Board("h100pcie", "NVIDIA H100 PCIe", 81559, 350, 48, 2.0e12, 756e12, 1755, 345, 1593,
          True, False, 0.115, 87, False, fp8=True),
    Board("h100nvl", "NVIDIA H100 NVL", 95830, 400, 60, 3.9e12, 835e12, 1785, 345, 2619,
          True, False, 0.100, 87, True, fp8=True),
    Board("h200", "NVIDIA H200", 143771, 700, 75, 4.8e12, 989e12, 1980, 345, 3201,
          True, False, 0.048, 87, True, reserved_mib=615, fp8=True),
    Board("gh200", "NVIDIA GH200 480GB", 97871, 900, 90, 4.0e12, 989e12, 1980, 345, 2619,
          True, False, 0.040, 87, True, fp8=True),
    Board("a100sxm80", "NVIDIA A100-SXM4-80GB", 81920, 400, 58, 2.039e12, 312e12, 1410, 210,
          1593, False, False, 0.095, 85, True, samples_per_s=6),
    Board("a100sxm40", "NVIDIA A100-SXM4-40GB", 40960, 400, 55, 1.555e12, 312e12, 1410, 210,
          1215, False, False, 0.095, 85, True, samples_per_s=6),
    Board("a100pcie80", "NVIDIA A100 80GB PCIe", 81920, 300, 45, 1.935e12, 312e12, 1410, 210,
          1512, False, False, 0.140, 85, False, samples_per_s=6),
    Board("l40s", "NVIDIA L40S", 46068, 350, 34, 0.864e12, 362e12, 2520, 210, 9001,
          False, False, 0.120, 88, False, samples_per_s=6, fp8=True),
    Board("l4", "NVIDIA L4", 23034, 72, 16, 0.300e12, 121e12, 2040, 210, 6251,
          False, False, 0.55, 88, False, samples_per_s=6, fp8=True),
    Board("a10g", "NVIDIA A10G", 23028, 300, 25, 0.600e12, 70e12, 1710, 210, 6251,
          False, False, 0.140, 88, False, samples_per_s=6),
    Board("a6000", "NVIDIA RTX A6000", 49140, 300, 24, 0.768e12, 155e12, 2100, 210, 8001,
          False, True, 0.150, 88, False, samples_per_s=6),
    Board("rtx4090", "NVIDIA GeForce RTX 4090", 24564, 450, 22, 1.008e12, 165e12, 2520, 210,
          10501, False, True, 0.085, 88, False, samples_per_s=6, fp8=True),
    Board("rtx6000ada", "NVIDIA RTX 6000 Ada Generation", 49140, 300, 23, 0.960e12, 364e12,
          2505, 210, 10001, False, True, 0.150, 88, False, samples_per_s=6, fp8=True),
    Board("v100", "Tesla V100-SXM2-32GB", 32768, 300, 40, 0.900e12, 125e12, 1530, 135, 877,
          False, False, 0.130, 85, True, reserved_mib=None, samples_per_s=1),
)}

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct")
LINK_FIELDS = ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
               "nvlink_tx_mib_per_s")


def rng_for(name: str, salt: str = "") -> random.Random:
    return random.Random(zlib.crc32(f"corpus_ac:{name}:{salt}".encode()))


def clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo if x < lo else hi if x > hi else x


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def uuid_for(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@dataclass
class Load:
    """What one GPU did during one tick (fractions of the tick, 0..1), summed over processes."""

    busy: float = 0.0  # a kernel was running (NVML GPU-Util)
    sm: float = 0.0  # SM activity (>= 1 warp resident), averaged over SMs
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    pcie_rx: float = 0.0  # MiB/s
    pcie_tx: float = 0.0
    nvl: float = 0.0  # MiB/s each way
    burst: float = 0.15  # how uneven busy time is across the driver's sub-samples

    def add(self, other: "Load") -> "Load":
        return Load(clamp(self.busy + other.busy - self.busy * other.busy * 0.3),
                    clamp(self.sm + other.sm), clamp(self.occ + other.occ),
                    clamp(self.tensor + other.tensor), clamp(self.dram + other.dram),
                    self.pcie_rx + other.pcie_rx, self.pcie_tx + other.pcie_tx,
                    self.nvl + other.nvl, max(self.burst, other.burst))


@dataclass
class Env:
    """Conditions of one board: power limit, cooling, external brakes."""

    power_limit_w: float | None = None  # None: the board's default (TDP)
    cooling: float = 1.0  # multiplies the thermal resistance (a failing fan: 2-3)
    ambient_c: float = 30.0
    brake: float = 0.0  # HW power brake: fraction of clock removed
    hw_slowdown: float = 0.0


class GpuModel:
    """One board's power, clock and temperature state, stepped once a tick."""

    def __init__(self, board: Board, index: int, rng: random.Random, env: Env | None = None,
                 dcgm: bool = False, bus: str | None = None):
        self.b, self.index, self.rng = board, index, rng
        self.env = env or Env()
        self.dcgm = dcgm
        self.uuid = uuid_for(rng)
        self.bus_id = bus or f"00000000:{0x18 + 0x10 * index:02X}:00.0"
        self.temp = self.env.ambient_c + 8 + rng.uniform(-2, 2)
        self.clockf = 1.0
        self.reasons: tuple[str, ...] = ()
        self.ecc_corr = rng.choice((0, 0, 0, 2, 7))
        self.prev_util = 0.0

    @property
    def limit(self) -> float:
        return self.env.power_limit_w or self.b.tdp_w

    def compute_factor(self) -> float:
        """Speed of compute-bound work relative to full clocks (used by the workloads)."""
        return self.clockf

    def mem_factor(self) -> float:
        return 1.0 - 0.35 * (1.0 - self.clockf)

    def step(self, load: Load, dt: float, mem_used: int, has_procs: bool) -> GpuSample:
        b, rng, env = self.b, self.rng, self.env
        # power demanded at full clocks, then what the clock settles at under the limits
        dyn = b.tdp_w - b.idle_w
        activity = 0.22 * load.busy + 0.30 * load.sm + 0.38 * load.tensor + 0.22 * load.dram
        demand = b.idle_w + dyn * clamp(activity, 0, 1.15) * 1.02
        if has_procs and load.busy < 0.02:
            demand = b.idle_w * 1.25
        reasons: list[str] = []
        clockf = 1.0
        if demand > self.limit:
            clockf = ((self.limit - b.idle_w) / max(1.0, demand - b.idle_w)) ** 0.55
            reasons.append("power cap")
        over = self.temp - b.slowdown_c
        if over > 0:
            clockf = min(clockf, clamp(1.0 - 0.09 * over, 0.35, 1.0))
            reasons.append("thermal (sw)")
        if self.temp > b.slowdown_c + 5:
            reasons.append("thermal (hw)")
            reasons.append("hw slowdown")
        if env.brake > 0:
            clockf = min(clockf, 1.0 - env.brake)
            reasons += ["hw slowdown", "power brake"]
        elif env.hw_slowdown > 0:
            clockf = min(clockf, 1.0 - env.hw_slowdown)
            reasons.append("hw slowdown")
        self.clockf = 0.6 * self.clockf + 0.4 * clockf if clockf < self.clockf else clockf
        power = b.idle_w + (demand - b.idle_w) * (self.clockf ** 1.6)
        power = min(power, self.limit * 1.01) * (1 + rng.gauss(0, 0.012))
        target = env.ambient_c + 6 + b.r_c_per_w * env.cooling * power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 45.0))
        self.reasons = tuple(dict.fromkeys(reasons))
        # GPU-Util: the driver's sub-samples, the mean of those in NVML's 1 s window
        n = max(1, int(round(b.samples_per_s * dt)))
        subs = []
        for _ in range(n):
            v = load.busy * (1 + rng.gauss(0, load.burst)) if load.busy < 0.995 else load.busy
            subs.append(float(int(round(100 * clamp(v)))))
        win = subs[-max(1, b.samples_per_s):]
        util = float(int(round(sum(win) / len(win))))
        clock = b.max_clock * self.clockf if (has_procs or load.busy > 0.01) else b.idle_clock
        missing: dict[str, str] = {}
        if not b.fan:
            missing["fan_pct"] = "not supported on this GPU"
        g = dict(index=self.index, name=b.name, uuid=self.uuid, util_gpu_pct=util,
                 util_gpu_samples_pct=tuple(subs), util_mem_pct=float(int(round(100 * clamp(
                     load.dram * 1.05 + rng.gauss(0, 0.004))))),
                 mem_total_bytes=b.mem_mib * MiB, mem_used_bytes=int(mem_used),
                 power_w=round(power, 3), temp_c=float(round(self.temp)),
                 sm_clock_mhz=float(int(clock / 15) * 15), throttle=self.reasons,
                 bus_id=self.bus_id, pstate=0 if has_procs or load.busy > 0.01 else 8,
                 power_limit_w=float(self.limit), mem_clock_mhz=float(b.mem_clock),
                 ecc_corrected=self.ecc_corr, ecc_uncorrected=0, xid_count=0,
                 mig_mode=False)
        if b.fan:
            g["fan_pct"] = float(int(clamp((self.temp - 30) / 55, 0.3, 1.0) * 100))
        if b.reserved_mib is not None:
            g["mem_reserved_bytes"] = b.reserved_mib * MiB
        else:
            missing["mem_reserved_bytes"] = "needs driver r510+ (memory info v2)"
            missing["util_gpu_samples_pct"] = "not supported by this driver"
            g["util_gpu_samples_pct"] = ()
        jit = lambda v, s=0.01: max(0.0, v * (1 + rng.gauss(0, s)))  # noqa: E731
        if b.gpm or self.dcgm:
            g["sm_active_pct"] = 100 * clamp(jit(load.sm, 0.02))
            g["sm_occupancy_pct"] = 100 * clamp(jit(load.occ, 0.03))
            g["dram_bw_pct"] = 100 * clamp(jit(load.dram, 0.02))
            g["tensor_pct"] = 100 * clamp(jit(load.tensor, 0.02))
        else:
            for f in GPM_FIELDS:
                missing[f] = "needs Hopper+ (GPM) or a DCGM exporter"
        if b.gpm:
            g["pcie_rx_mib_per_s"] = jit(load.pcie_rx + 30, 0.1)
            g["pcie_tx_mib_per_s"] = jit(load.pcie_tx + 4, 0.1)
            g["nvlink_rx_mib_per_s"] = jit(load.nvl, 0.05) if b.nvlink else 0.0
            g["nvlink_tx_mib_per_s"] = jit(load.nvl, 0.05) if b.nvlink else 0.0
        else:
            for f in LINK_FIELDS:
                missing[f] = "needs Hopper+ (GPM)"
        g["missing"] = missing
        return GpuSample(**g)


# ------------------------------------------------------------------ host

class Host:
    """The host's CPUs: load, run queue, PSI (avg10 smoothing) and context switches."""

    def __init__(self, cpus: int, rng: random.Random, base_cores: float = 0.5,
                 psi: bool = True, steal: float = 0.0):
        self.cpus, self.rng, self.base = cpus, rng, base_cores
        self.psi_ok = psi
        self.psi = 0.0
        self.ctx = rng.randint(10**7, 10**9)

    def step(self, dt: float, busy_cores: float, runnable: float, cap: float | None = None
             ) -> HostSample:
        """busy_cores: CPU time used per second by everything; runnable: threads wanting CPU."""
        cap = cap or self.cpus
        want = self.base + runnable
        used = min(self.base + busy_cores, cap)
        wait_frac = clamp((want - cap) / max(1.0, want), 0, 0.95) if want > cap else \
            clamp(0.02 * want / cap, 0, 0.05)
        some = clamp(wait_frac * 1.3 + abs(self.rng.gauss(0, 0.005)), 0, 1) * 100
        self.psi += (some - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctx += int(dt * (3000 + 900 * want) * (1 + self.rng.gauss(0, 0.05)))
        rq = max(1, int(round(want + self.rng.gauss(0, math.sqrt(max(1.0, want)) * 0.5))))
        return HostSample(
            cpu_pct=round(100 * clamp(used / self.cpus * (1 + self.rng.gauss(0, 0.02))), 1),
            cpu_pressure_some_pct=round(self.psi, 2) if self.psi_ok else None,
            run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx)


@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    start: float
    mem: int = 0
    user: str = "root"
    ppid: int = 1
    container: str = ""
    cgroup: str = ""
    cpu_s: float = 0.0
    rss: int = 2 * GiB
    sm: float | None = None  # this process's SM share 0..1 (NVML per-process)
    memu: float | None = None

    def sample(self, nprocs_on_gpu: int) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name,
                          cmdline=self.cmdline, user=self.user, ppid=self.ppid,
                          start_time_s=round(self.start, 2), mem_bytes=int(self.mem),
                          sm_util_pct=None if self.sm is None else float(int(100 * self.sm)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                          container=self.container, cgroup=self.cgroup,
                          mem_util_pct=None if self.memu is None else float(int(100 * self.memu)))


class Tree:
    """The pinned process tree's CPU accounting: threads, involuntary switches, quota."""

    def __init__(self, root_pid: int, label: str, threads: list[tuple[int, int, str]],
                 cores: tuple[int, ...], ports: tuple[int, ...] = (),
                 quota: float | None = None, extra_pids: tuple[int, ...] = ()):
        self.root, self.label = root_pid, label
        self.threads = {tid: [name, 0.0] for tid, _, name in threads}
        self.owner = {tid: pid for tid, pid, _ in threads}
        self.cores, self.ports, self.quota = cores, ports, quota
        self.extra = extra_pids
        self.vol = 0
        self.invol = 0
        self.periods = 0
        self.throttled = 0

    def step(self, dt: float, use: dict[int, float], invol_rate: float, vol_rate: float,
             throttled_frac: float = 0.0) -> None:
        for tid, cores in use.items():
            self.threads[tid][1] += cores * dt
        self.invol += int(invol_rate * dt)
        self.vol += int(vol_rate * dt)
        if self.quota is not None:
            n = int(round(dt / 0.1))
            self.periods += n
            self.throttled += int(round(n * throttled_frac))

    @property
    def cpu_s(self) -> float:
        return sum(v[1] for v in self.threads.values())

    def busiest(self) -> tuple[int, str, float]:
        tid, (name, cpu) = max(self.threads.items(), key=lambda kv: kv[1][1])
        return tid, name, cpu

    def sample(self, psi: float | None, rq: int | None) -> PinnedSample:
        top = sorted(self.threads.items(), key=lambda kv: -kv[1][1])[:12]
        return PinnedSample(
            label=self.label[:60] + ("…" if len(self.label) > 60 else ""),
            root_pids=(self.root,), tree_pids=(self.root, *self.extra),
            cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol, ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(tid=t, pid=self.owner[t], name=n, cpu_s=round(c, 2))
                          for t, (n, c) in top),
            cores=self.cores, cpu_pressure_some_pct=psi, run_queue=rq,
            listening_ports=self.ports, cpu_quota_cores=self.quota,
            cpu_periods=self.periods if self.quota is not None else None,
            cpu_throttled_periods=self.throttled if self.quota is not None else None)

    def engine_fields(self) -> dict:
        tid, name, cpu = self.busiest()
        return dict(cpu_s=round(self.cpu_s, 2), ctx_involuntary=self.invol,
                    busiest_thread_cpu_s=round(cpu, 2), busiest_thread=f"{tid} {name}",
                    cpu_quota_cores=self.quota,
                    cpu_periods=self.periods if self.quota is not None else None,
                    cpu_throttled_periods=self.throttled if self.quota is not None else None)


# ------------------------------------------------------------------ histograms

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOKENS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
               10000.0, 20000.0, 50000.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 800.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0)
TGI_DURATION = tuple(round(0.0001 * 1.5 ** (i + 1), 8) for i in range(35))


class Hist:
    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.counts = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.counts[i] += n
                break
        self.count += n
        self.sum += value * n

    def spread(self, rng: random.Random, center: float, n: int, sigma: float = 0.15) -> None:
        """n observations lognormally around center (grouped in at most 8 draws)."""
        if n <= 0 or center <= 0:
            return
        groups = min(8, n)
        base, extra = divmod(n, groups)
        for g in range(groups):
            self.observe(center * math.exp(rng.gauss(0, sigma)), base + (1 if g < extra else 0))

    def reset(self) -> None:
        self.counts = [0.0] * len(self.bounds)
        self.count = self.sum = 0.0

    def snapshot(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts:
            run += c
            cum.append(run)
        return EngineHistogram(self.name, self.bounds, tuple(cum), self.count,
                               round(self.sum, 6))


# ------------------------------------------------------------------ eBPF launch histograms

def launch_hist(rng: random.Random, api: str, pid: int, calls: int, median_us: float,
                tail_frac: float = 0.002, tail_us: float = 60.0) -> LaunchHist:
    """Host-side call durations: a lognormal body plus a tail of descheduled calls."""
    buckets: dict[int, int] = {}
    total, mx = 0, 0
    draws = min(calls, 64)
    if calls <= 0:
        return LaunchHist(api=api, pid=pid)
    tail = int(round(calls * tail_frac))
    body = calls - tail
    for part, count, center, sig in ((0, body, median_us, 0.35), (1, tail, tail_us, 0.7)):
        if count <= 0:
            continue
        k = min(draws, count)
        base, extra = divmod(count, k)
        for i in range(k):
            ns = int(center * 1000 * math.exp(rng.gauss(0, sig)))
            c = base + (1 if i < extra else 0)
            idx = bucket_index(max(1, ns))
            buckets[idx] = buckets.get(idx, 0) + c
            total += ns * c
            mx = max(mx, ns)
    return LaunchHist(api=api, pid=pid, count=calls, sum_ns=total, max_ns=mx, buckets=buckets)


# ------------------------------------------------------------------ frames

@dataclass
class Clock:
    """Wall and monotonic times of ticks, with the sampler's jitter and rare missed ticks."""

    start_wall: float
    tick: float
    rng: random.Random
    mono0: float = 0.0
    seq: int = 0
    skip_prob: float = 0.003
    times: list = field(default_factory=list)

    def __post_init__(self):
        self.mono0 = 1000.0 + self.rng.uniform(0, 5e5)

    def next(self, i: int) -> tuple[int, float, float] | None:
        """(seq, wall, mono) of tick i, or None when the sampler missed it."""
        self.seq += 1
        if i > 3 and self.rng.random() < self.skip_prob:
            return None
        off = i * self.tick + abs(self.rng.gauss(0, 0.004))
        return self.seq, round(self.start_wall + off, 6), round(self.mono0 + off, 6)


def ok(poll: float, rng: random.Random, detail: str | None = None) -> SourceStatus:
    p = round(poll * (1 + abs(rng.gauss(0, 0.3))), 6)
    return SourceStatus(ok=True, detail=detail, age_s=0.0, poll_s=p, poll_median_s=round(poll, 6))


def bad(reason: str) -> SourceStatus:
    return SourceStatus(ok=False, reason=reason)


@dataclass
class TickOut:
    loads: list
    mem: list
    procs: list
    host_busy: float
    host_runnable: float
    host_cap: float | None = None
    tree: Tree | None = None
    engine: object = None  # EngineSample, or a str: why the scrape failed
    launch: tuple = ()
    launch_armed: float | None = None


def run_frames(name: str, gpus: list, host: Host, dt: float, duration: float,
               start_wall: float, step, engine_url: str | None, ebpf: str | None,
               rng: random.Random, pin: bool = True) -> list[Frame]:
    """Step the workload and the boards tick by tick and assemble the frames."""
    clock = Clock(start_wall, dt, rng)
    frames: list[Frame] = []
    n = int(round(duration / dt))
    for i in range(n):
        t = i * dt
        out: TickOut = step(i, t)
        nprocs = {}
        for p in out.procs:
            nprocs[p.gpu_index] = nprocs.get(p.gpu_index, 0) + 1
        samples = tuple(g.step(out.loads[k], dt, out.mem[k], nprocs.get(k, 0) > 0)
                        for k, g in enumerate(gpus))
        hs = host.step(dt, out.host_busy, out.host_runnable, out.host_cap)
        stamp = clock.next(i)
        if stamp is None:
            continue
        seq, wall, mono = stamp
        sources = {"nvml": ok(0.005 + 0.0015 * len(gpus), rng), "host": ok(0.0008, rng),
                   "procfs": ok(0.0003, rng, "/proc")}
        if any(g.dcgm for g in gpus):
            sources["dcgm"] = ok(0.02, rng, "http://127.0.0.1:9400/metrics")
        engine = None
        if engine_url is not None:
            if isinstance(out.engine, str):
                sources["engine"] = bad(out.engine)
            elif out.engine is not None:
                lag = 0.02 + abs(rng.gauss(0, 0.015))
                engine = dataclasses.replace(out.engine, url=engine_url,
                                             time_wall_s=round(wall - lag, 6),
                                             time_mono_s=round(mono - lag, 6))
                sources["engine"] = ok(lag, rng)
        else:
            sources["engine"] = bad("no engine found (pass --engine URL)")
        pinned = None
        if out.tree is not None and pin:
            pinned = out.tree.sample(hs.cpu_pressure_some_pct, hs.run_queue)
            sources["pin"] = ok(0.015, rng)
        if ebpf:
            sources["ebpf"] = ok(0.002, rng, ebpf)
        frames.append(Frame(seq=seq, time_wall_s=wall, time_mono_s=mono, gpus=samples,
                            processes=tuple(out.procs), engine=engine,
                            launch=tuple(out.launch) if ebpf else (), host=hs, pinned=pinned,
                            launch_armed_s=out.launch_armed if ebpf else None,
                            sources=sources))
    return frames
