"""Boards, GPU power/thermal/clock model, NVML sampling, host, processes, histograms, frames."""
from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

GiB = 2**30
MiB = 2**20


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()) * 7919 + 13)


def clip(x, lo=0.0, hi=1.0):
    return lo if x < lo else hi if x > hi else x


@dataclass(frozen=True)
class Board:
    name: str
    mem_gib: float
    hbm_gbs: float      # peak DRAM bandwidth GB/s
    tdp: float          # default power limit W
    idle_w: float
    max_mhz: int
    idle_mhz: int
    mem_mhz: int
    tflops: float       # dense fp16/bf16 tensor TFLOP/s
    gpm: bool           # Hopper+: SM/tensor/DRAM activity via GPM
    fan: bool           # actively cooled: fan speed readable
    slow_c: float       # software thermal slowdown threshold
    r_th: float         # degC per W above inlet at full airflow
    reserve_mib: int
    samples: int        # NVML GPU-Util samples per second
    nvlink: bool
    old_driver: bool = False  # v1 memory API (no reserve split), no per-process util


BOARDS = {
    "A100-SXM4-40GB": Board("NVIDIA A100-SXM4-40GB", 40, 1555, 400, 55, 1410, 210, 1215, 312, False, False, 88, 0.10, 512, 6, True),
    "A100-SXM4-80GB": Board("NVIDIA A100-SXM4-80GB", 80, 2039, 400, 60, 1410, 210, 1593, 312, False, False, 88, 0.10, 512, 6, True),
    "A100-PCIE-80GB": Board("NVIDIA A100 80GB PCIe", 80, 1935, 300, 45, 1410, 210, 1512, 312, False, False, 85, 0.15, 512, 6, False),
    "H100-SXM": Board("NVIDIA H100 80GB HBM3", 80, 3350, 700, 70, 1980, 345, 2619, 989, True, False, 87, 0.060, 592, 6, True),
    "H100-PCIE": Board("NVIDIA H100 PCIe", 80, 2039, 350, 50, 1755, 345, 1593, 756, True, False, 85, 0.15, 592, 6, False),
    "H200": Board("NVIDIA H200", 141, 4800, 700, 75, 1980, 345, 3201, 989, True, False, 87, 0.060, 615, 5, True),
    "GH200": Board("NVIDIA GH200 480GB", 96, 4000, 900, 90, 1980, 345, 2619, 989, True, False, 87, 0.050, 600, 6, True),
    "L40S": Board("NVIDIA L40S", 48, 864, 350, 35, 2520, 210, 9001, 362, False, False, 87, 0.15, 480, 6, False),
    "A40": Board("NVIDIA A40", 48, 696, 300, 30, 1740, 210, 7251, 150, False, False, 87, 0.17, 480, 6, False),
    "A6000": Board("NVIDIA RTX A6000", 48, 768, 300, 25, 2100, 210, 8001, 155, False, True, 86, 0.16, 470, 6, False),
    "RTX3090": Board("NVIDIA GeForce RTX 3090", 24, 936, 350, 30, 1995, 210, 9751, 142, False, True, 83, 0.14, 330, 6, False),
    "RTX4090": Board("NVIDIA GeForce RTX 4090", 24, 1008, 450, 25, 2520, 210, 10501, 330, False, True, 83, 0.11, 330, 6, False),
    "V100-32GB": Board("Tesla V100-SXM2-32GB", 32, 900, 300, 40, 1530, 135, 877, 125, False, False, 83, 0.13, 0, 1, True, True),
    "P100": Board("Tesla P100-PCIE-16GB", 16, 732, 250, 30, 1328, 405, 715, 19, False, False, 85, 0.17, 0, 1, False, True),
    "T4": Board("Tesla T4", 16, 320, 70, 10, 1590, 300, 5001, 65, False, False, 85, 0.55, 0, 1, False, True),
}


@dataclass
class Env:
    """What the world does to a board this tick."""
    power_limit: float | None = None
    inlet_c: float = 24.0
    cooling: float = 1.0        # >1: worse airflow (bad fan, hot aisle)
    fan_stuck: float | None = None
    hw_slowdown: bool = False
    power_brake: bool = False
    pcie_gen_factor: float = 1.0


@dataclass
class Load:
    busy: float = 0.0     # fraction of time >= 1 kernel ran (NVML GPU-Util)
    sm: float = 0.0       # SM active
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    pcie_rx: float = 0.0  # MiB/s
    pcie_tx: float = 0.0
    nvl_rx: float = 0.0
    nvl_tx: float = 0.0
    burst_s: float = 0.0  # on/off period of the busy pattern (aliasing); 0 = smooth


class GpuSim:
    """One board: a power-cap / thermal control loop and NVML-style readings."""

    def __init__(self, board: Board, index: int, rng: random.Random, bus: str, serial: int):
        self.b = board
        self.i = index
        self.rng = rng
        self.env = Env()
        self.f = 1.0            # clock factor vs max boost
        self.temp = 30.0 + rng.random() * 4
        self.power = board.idle_w
        self.idle_ticks = 99
        self.bus = bus
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        self.prev_tail = None
        self.ecc = 0

    def limit(self) -> float:
        return self.env.power_limit or self.b.tdp

    def clock_factor(self) -> float:
        """Effective speed for compute this tick (from last tick's control state)."""
        f = self.f
        if self.env.hw_slowdown or self.env.power_brake:
            f = min(f, 0.45)
        return f

    def render(self, load: Load, dt: float, procs_here: bool, extra_missing=None) -> GpuSample:
        b, env, rng = self.b, self.env, self.rng
        busy = clip(load.busy)
        act = clip(0.10 * busy + 0.35 * load.sm + 0.38 * load.tensor + 0.30 * load.dram, 0, 1.1)
        f_eff = self.clock_factor()
        dyn = (b.tdp - b.idle_w) * 1.05 * act * (f_eff ** 2.4)
        p = b.idle_w * (1.0 + 0.15 * busy) + dyn
        lim = self.limit()
        reasons = []
        # control loop for next tick
        if p > lim and act > 0.05:
            self.f = max(0.35, self.f * (lim / p) ** 0.45)
            p = lim * (0.985 + 0.02 * rng.random())
        else:
            self.f = min(1.0, self.f * 1.04 + 0.005)
        if f_eff < 0.985 and act > 0.05 and not (env.hw_slowdown or env.power_brake) and p >= lim * 0.95:
            reasons.append("power cap")
        # temperature
        r = b.r_th * env.cooling
        t_ss = env.inlet_c + 8 + p * r
        self.temp += (t_ss - self.temp) * (1 - math.exp(-dt / 35.0))
        if self.temp > b.slow_c:
            self.f = max(0.3, min(self.f, 1.0 - (self.temp - b.slow_c) * 0.06))
            reasons.append("thermal (sw)")
        if env.hw_slowdown:
            reasons.append("hw slowdown")
        if env.power_brake:
            reasons.append("power brake")
        p = max(b.idle_w * 0.9, p * (1 + rng.gauss(0, 0.012)))
        self.power = p
        # clocks
        if busy < 0.02:
            self.idle_ticks += 1
        else:
            self.idle_ticks = 0
        if self.idle_ticks > 15:
            clk = b.idle_mhz
            pstate = 0 if procs_here else 8
        else:
            clk = b.max_mhz * f_eff
            clk = round(clk / 15) * 15
            pstate = 0
        memclk = b.mem_mhz if pstate == 0 else (405 if b.mem_mhz < 3000 else 810)
        samples, util = self._util_samples(busy, load.burst_s, dt)
        miss = {}
        g = dict(index=self.i, name=b.name, uuid=self.uuid, util_gpu_pct=util,
                 util_gpu_samples_pct=samples,
                 util_mem_pct=float(round(clip(load.dram * 1.05 + rng.gauss(0, 0.01)) * 100 * (1 if busy > 0.01 else 0))),
                 mem_total_bytes=int(b.mem_gib * GiB) if b.mem_gib != 141 else 150754820096,
                 power_w=round(p, 2), temp_c=float(round(self.temp)), sm_clock_mhz=float(clk),
                 throttle=tuple(reasons), bus_id=self.bus, pstate=pstate, power_limit_w=float(lim),
                 mem_clock_mhz=float(memclk), ecc_corrected=self.ecc, ecc_uncorrected=0,
                 xid_count=0, mig_mode=False)
        if b.fan:
            g["fan_pct"] = float(env.fan_stuck if env.fan_stuck is not None else
                                 round(clip((self.temp - 35) / 50, 0.3, 1.0) * 100))
        else:
            miss["fan_pct"] = "not supported on this GPU"
        if b.gpm:
            on = 1.0 if busy > 0.004 else 0.0
            sm = clip(load.sm + rng.gauss(0, 0.008)) * on
            g.update(sm_active_pct=sm * 100, sm_occupancy_pct=clip(load.occ + rng.gauss(0, 0.005)) * 100 * on,
                     dram_bw_pct=clip(load.dram + rng.gauss(0, 0.006)) * 100 * on,
                     tensor_pct=clip(load.tensor + rng.gauss(0, 0.004)) * 100 * on,
                     pcie_rx_mib_per_s=max(0.0, load.pcie_rx * (1 + rng.gauss(0, 0.05)) + 3),
                     pcie_tx_mib_per_s=max(0.0, load.pcie_tx * (1 + rng.gauss(0, 0.05)) + 1),
                     nvlink_rx_mib_per_s=max(0.0, load.nvl_rx * (1 + rng.gauss(0, 0.04))) if b.nvlink else 0.0,
                     nvlink_tx_mib_per_s=max(0.0, load.nvl_tx * (1 + rng.gauss(0, 0.04))) if b.nvlink else 0.0)
        else:
            for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                miss[k] = "needs Hopper+ (GPM)"
            for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s"):
                miss[k] = "needs Hopper+ (GPM)"
        if b.old_driver:
            miss["mem_reserved_bytes"] = "driver has no v2 memory info"
            g["util_gpu_samples_pct"] = (util,)
        if extra_missing:
            miss.update(extra_missing)
        g["missing"] = miss
        return g  # completed (memory) by the caller

    def _util_samples(self, busy: float, burst_s: float, dt: float):
        rng = self.rng
        n = max(1, round(self.b.samples * dt))
        out = []
        for j in range(n):
            if burst_s > 1.0 / self.b.samples and 0.02 < busy < 0.98:
                # square wave of period burst_s with duty `busy`, seen through 1/n windows
                on = 0.0
                ph = rng.random()
                for k in range(6):
                    x = (ph + (k / 6) * (dt / n) / burst_s) % 1.0
                    on += 1.0 if x < busy else 0.0
                v = on / 6
            else:
                v = busy + rng.gauss(0, 0.015) if busy > 0.005 else 0.0
            out.append(float(round(clip(v) * 100)))
        # GetUtilizationRates averages over its own window, not aligned to the tick
        tail = out[-1]
        if self.prev_tail is None:
            self.prev_tail = sum(out) / n
        util = round(0.8 * sum(out) / n + 0.2 * self.prev_tail) if n > 1 else out[0]
        self.prev_tail = tail
        return tuple(out), float(util)


class Proc:
    """A process: cumulative CPU from a per-tick rate."""

    def __init__(self, pid, name, cmdline, user, start, ppid=1, gpu=None, slurm=("", ""),
                 pod="", container="", cgroup=""):
        self.pid, self.name, self.cmdline, self.user, self.start = pid, name, cmdline, user, start
        self.ppid, self.gpu = ppid, gpu
        self.slurm, self.pod, self.container, self.cgroup = slurm, pod, container, cgroup
        if slurm[0] and not cgroup:
            self.cgroup = f"/system.slice/slurmstepd.scope/job_{slurm[0]}/step_{slurm[1]}/user/task_0"
            self.container = f"slurm:{slurm[0]}.{slurm[1]}"
        self.cpu_s = 0.0
        self.mem = 0
        self.rss = 0
        self.sm_util = None
        self.mem_util = None

    def tick(self, cores: float, dt: float):
        self.cpu_s += max(0.0, cores) * dt

    def sample(self, gpu_index, mem, old_driver=False) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=gpu_index, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start, mem_bytes=int(mem),
                          sm_util_pct=None if old_driver or self.sm_util is None else float(round(self.sm_util)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=int(self.rss), container=self.container,
                          pod=self.pod, cgroup=self.cgroup, slurm_job=self.slurm[0], slurm_step=self.slurm[1],
                          mem_util_pct=None if old_driver or self.mem_util is None else float(round(self.mem_util)))


class Hist:
    """A cumulative Prometheus histogram fed with lognormal batches of observations."""

    def __init__(self, name, bounds):
        self.name, self.bounds = name, tuple(float(b) for b in bounds)
        self.cum = [0.0] * len(self.bounds)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, n: int, median: float, sigma: float = 0.25):
        if n <= 0 or median <= 0:
            return
        fracs = []
        prev = 0.0
        for b in self.bounds:
            c = 0.5 * (1 + math.erf((math.log(b) - math.log(median)) / (sigma * 1.41421356))) if b > 0 else 0.0
            fracs.append(c - prev)
            prev = c
        fracs.append(1 - prev)
        counts = [int(n * x) for x in fracs]
        rest = n - sum(counts)
        order = sorted(range(len(fracs)), key=lambda k: -(n * fracs[k] - counts[k]))
        for k in order[:rest]:
            counts[k] += 1
        run = 0
        for k in range(len(self.bounds)):
            run += counts[k]
            self.cum[k] += run
        self.count += n
        self.sum += n * median * math.exp(sigma * sigma / 2)

    def observe1(self, v: float):
        for k, b in enumerate(self.bounds):
            if v <= b:
                self.cum[k] += 1
        self.count += 1
        self.sum += v

    def snap(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(float(c) for c in self.cum),
                               float(self.count), round(self.sum, 6))


def launch_hist(rng, api, pid, count, median_us, tail_frac=0.0, tail_us=0.0) -> LaunchHist:
    """Host-side durations of one CUDA API over one tick (eBPF uprobes)."""
    buckets: dict[int, int] = {}
    total = 0
    mx = 0
    n_tail = int(round(count * tail_frac))
    n_main = count - n_tail
    for part_n, med, sg in ((n_main, median_us, 0.35), (n_tail, tail_us, 0.8)):
        if part_n <= 0:
            continue
        # sample at most 60 representative values, weighted
        k = min(part_n, 60)
        per = part_n / k
        acc = 0.0
        for j in range(k):
            v = max(0.3, med * math.exp(sg * rng.gauss(0, 1)))
            acc += per
            c = int(acc)
            acc -= c
            if j == k - 1:
                c += int(round(acc))
            if c <= 0:
                continue
            ns = int(v * 1000)
            idx = bucket_index(ns)
            buckets[idx] = buckets.get(idx, 0) + c
            total += c * ns
            mx = max(mx, ns)
    cnt = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=cnt, sum_ns=total, max_ns=mx, buckets=buckets)


class Host:
    def __init__(self, rng, cpus, base_ctx=None):
        self.rng = rng
        self.cpus = cpus
        self.ctx = base_ctx or rng.randint(10**8, 9 * 10**8)

    def sample(self, busy_cores: float, runnable: float, psi: float | None, ctx_rate: float, dt,
               offcpu=None) -> HostSample:
        rng = self.rng
        self.ctx += int(max(0, ctx_rate * dt * (1 + rng.gauss(0, 0.05))))
        cpu = clip(busy_cores / self.cpus + rng.gauss(0, 0.004), 0, 1) * 100
        rq = max(1, int(round(runnable + rng.gauss(0, 0.8))))
        return HostSample(cpu_pct=round(cpu, 1), offcpu_switches=offcpu,
                          cpu_pressure_some_pct=None if psi is None else round(max(0.0, psi + rng.gauss(0, 0.3)), 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx)


class Pinned:
    """The pinned tree (gputop --pin): cumulative CPU per thread, ctx switches, quota."""

    def __init__(self, label, root, tree, threads, cores, quota=None):
        self.label, self.root, self.tree = label, root, tuple(tree)
        self.threads = [[tid, pid, name, 0.0] for tid, pid, name in threads]
        self.cores = tuple(cores)
        self.quota = quota
        self.vol = 0
        self.invol = 0
        self.periods = 0
        self.throttled = 0
        self.cpu_s = 0.0

    def tick(self, rates: dict, dt, invol_rate, vol_rate, throttled_frac=0.0, rng=None):
        for th in self.threads:
            r = rates.get(th[2], rates.get(th[0], 0.0))
            th[3] += max(0.0, r * (1 + (rng.gauss(0, 0.03) if rng else 0))) * dt
        self.cpu_s = sum(th[3] for th in self.threads) + 0.0
        self.invol += int(invol_rate * dt)
        self.vol += int(vol_rate * dt)
        if self.quota is not None:
            p = int(round(dt / 0.1))
            self.periods += p
            self.throttled += int(round(p * clip(throttled_frac)))

    def sample(self, psi, runq, ports=()) -> PinnedSample:
        ths = sorted(self.threads, key=lambda t: -t[3])[:12]
        return PinnedSample(label=self.label, root_pids=(self.root,), tree_pids=self.tree,
                            cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol, ctx_involuntary=self.invol,
                            threads=tuple(ThreadSample(t[0], t[1], t[2], round(t[3], 2)) for t in ths),
                            cores=self.cores, cpu_pressure_some_pct=psi, run_queue=runq,
                            listening_ports=tuple(ports),
                            cpu_quota_cores=self.quota,
                            cpu_periods=self.periods if self.quota is not None else None,
                            cpu_throttled_periods=self.throttled if self.quota is not None else None)

    def busiest(self):
        t = max(self.threads, key=lambda t: t[3])
        return t


def finish_gpu(g: dict, mem_used: int, board: Board) -> GpuSample:
    res = board.reserve_mib * MiB
    if board.old_driver:
        g["mem_used_bytes"] = int(mem_used + 300 * MiB)
    else:
        g["mem_used_bytes"] = int(mem_used)
        g["mem_reserved_bytes"] = int(res)
    return GpuSample(**g)


class Clock:
    """Tick times with scheduling jitter, the occasional late tick and missed reading."""

    def __init__(self, rng, start_wall, tick, boot_mono):
        self.rng, self.start, self.tick, self.boot = rng, start_wall, tick, boot_mono

    def times(self, n):
        out = []
        t = 0.0
        k = 0
        while len(out) < n:
            jitter = abs(self.rng.gauss(0, 0.004))
            out.append((self.start + t + jitter, self.boot + t + jitter))
            t += self.tick
            k += 1
            if self.rng.random() < 0.004:  # the sampler skipped a tick (host busy)
                t += self.tick
        return out


def sources(nvml=True, engine=None, host=True, pin=True, ebpf=None, rng=None, tick=1.0, engine_age=0.0):
    s = {}
    r = rng or random.Random(0)
    s["nvml"] = SourceStatus(True, None, None, 0.0, round(0.004 + r.random() * 0.004, 6), 0.006)
    if engine is not None:
        ok, reason = engine
        s["engine"] = SourceStatus(ok, reason, None, round(engine_age, 3) if ok else None,
                                   round(0.02 + r.random() * 0.03, 6) if ok else None, 0.035)
    if host:
        s["host"] = SourceStatus(True, None, None, 0.0, 0.0008, 0.0008)
    if pin:
        s["pin"] = SourceStatus(True, None, None, 0.0, round(0.01 + r.random() * 0.02, 6), 0.02)
    s["procfs"] = SourceStatus(True, None, "/proc", 0.0, 0.0002, 0.0002)
    if ebpf:
        s["ebpf"] = SourceStatus(True, None, ebpf, 0.0, 0.001, 0.001)
    return s


def make_frame(seq, wall, mono, gpus, procs, engine, host, pinned, launch, srcs, armed=None) -> Frame:
    return Frame(seq=seq, time_wall_s=round(wall, 4), time_mono_s=round(mono, 4), gpus=tuple(gpus),
                 processes=tuple(procs), engine=engine, host=host, pinned=pinned,
                 launch=tuple(launch), sources=srcs, launch_armed_s=armed)


def bus_ids(n, rng, style="sxm"):
    base = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb] if style == "sxm" else \
        [0x17, 0x31, 0x4b, 0x65, 0xb1, 0xca, 0xe3, 0xf1]
    return ["00000000:%02X:00.0" % base[k % 8] for k in range(n)]


def slurm_job(rng):
    return str(rng.randint(3_800_000, 4_900_000))
