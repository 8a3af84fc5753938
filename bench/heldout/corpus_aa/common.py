"""Boards, host, processes and frame assembly shared by every simulator in corpus_aa.

A simulator decides, tick by tick, what the workload did (kernel time, SM / tensor / DRAM
activity, bytes in VRAM, CPU seconds per thread, engine counters); this module turns that
into what gputop's sources would have read: NVML readings (clocks, power, temperature,
clock-event reasons and util samples derived from the load and the board's limits), /proc
host and process-tree readings, and the frame with its source statuses, jitter and the
occasional late or missed reading.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

CAUSES = ("oversized_request", "prefill_interference", "collective_straggler", "input_stall",
          "host_launch_jitter", "host_cpu_contention", "tiny_kernels", "memory_bandwidth",
          "throttling", "kv_pressure", "gpu_shared", "spec_decode_rejected")

GiB = 2**30
MiB = 2**20
MONTH0 = 1772323200.0  # 2026-03-01 00:00 UTC: the month of escalations


@dataclass(frozen=True)
class Truth:
    name: str
    family: str
    cause: str | None
    culprit_gpus: tuple[int, ...] | None
    window: tuple[float, float] | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    note: str
    start_wall_s: float


@dataclass(frozen=True)
class Board:
    key: str
    name: str  # as NVML names it
    mem_mib: int
    reserved_mib: int
    hbm_tbs: float  # peak DRAM bandwidth
    tflops: float  # dense bf16 tensor peak
    tdp_w: float
    idle_w: float
    max_mhz: float
    mem_mhz: float
    hopper: bool  # GPM (SM / tensor / DRAM activity) through NVML
    fan: bool  # fan reported (actively cooled board)
    util_samples: int  # NVML utilization samples per second
    nvlink: bool
    slowdown_c: float  # where the driver starts cutting clocks (thermal sw)


BOARDS = {
    "H100-SXM": Board("H100-SXM", "NVIDIA H100 80GB HBM3", 81559, 520, 3.35, 989, 700, 72,
                      1980, 2619, True, False, 6, True, 87),
    "H100-PCIe": Board("H100-PCIe", "NVIDIA H100 PCIe", 81559, 520, 2.0, 756, 350, 48, 1755,
                       1593, True, False, 6, False, 85),
    "H200": Board("H200", "NVIDIA H200", 143771, 615, 4.8, 989, 700, 78, 1980, 3201, True,
                  False, 6, True, 87),
    "A100-40GB": Board("A100-40GB", "NVIDIA A100-SXM4-40GB", 40960, 450, 1.555, 312, 400, 55,
                       1410, 1215, False, False, 6, True, 85),
    "A100-80GB": Board("A100-80GB", "NVIDIA A100-SXM4-80GB", 81920, 450, 2.039, 312, 400, 60,
                       1410, 1593, False, False, 6, True, 85),
    "L40S": Board("L40S", "NVIDIA L40S", 46068, 420, 0.864, 362, 350, 34, 2520, 9001, False,
                  False, 1, False, 88),
    "L4": Board("L4", "NVIDIA L4", 23034, 300, 0.3, 121, 72, 16, 2040, 6251, False, False, 1,
                False, 86),
    "A10G": Board("A10G", "NVIDIA A10G", 23028, 300, 0.6, 125, 300, 25, 1710, 6251, False, True,
                  1, False, 88),
}


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


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


def in_window(t: float, spans) -> bool:
    return any(a <= t < b for a, b in spans)


@dataclass
class Activity:
    """What one GPU did over one tick, at the clock the board ran."""
    busy: float = 0.0  # fraction of time >= 1 kernel ran (NVML GPU-Util)
    sm: float = 0.0  # SM active (time x SMs with a warp)
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0
    mem_used: int = 0  # bytes, all processes
    pcie_rx: float = 5.0  # MiB/s
    pcie_tx: float = 2.0
    nvlink: float = 0.0
    clock_cap_mhz: float | None = None  # forced by thermal / power brake / HW slowdown
    reasons: tuple[str, ...] = ()  # the forced reasons
    heat_w: float = 0.0  # extra heat (a blocked airflow: the board runs hotter)
    flicker: float = 0.0  # busy varies within the tick (bursty work): sample spread


class BoardState:
    """One GPU's slow state: temperature, the clock it settled at, ECC counts."""

    def __init__(self, board: Board, index: int, rng: random.Random, uuid_seed: int,
                 power_limit: float | None = None, ambient: float = 30.0, dcgm: bool = False):
        self.b, self.index, self.rng = board, index, rng
        self.limit = power_limit or board.tdp_w
        self.ambient = ambient + rng.uniform(-2, 3)
        self.temp = self.ambient + 8
        self.clock = board.max_mhz
        self.speed = 1.0  # clock / max clock of the last tick: what the workload gets
        self.dcgm = dcgm
        r = random.Random(uuid_seed * 31 + index)
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16),
                                                       r.getrandbits(16), r.getrandbits(16),
                                                       r.getrandbits(48))
        self.bus = "00000000:%02X:00.0" % ([0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB][index % 8])
        self.ecc = r.randint(0, 3)
        self.gpm_ready = False

    def read(self, act: Activity, dt: float) -> GpuSample:
        b, rng = self.b, self.rng
        busy = clamp(act.busy)
        # dynamic power at the max clock from what the SMs, tensor cores and HBM did
        load = clamp(0.10 * busy + 0.30 * act.sm + 0.42 * act.tensor + 0.22 * act.dram, 0, 1.05)
        dyn_max = (b.tdp_w * 1.12 - b.idle_w) * load
        clock, reasons = b.max_mhz, []
        if busy < 0.01 and act.sm < 0.01:
            clock = b.max_mhz if self.b.hopper else b.max_mhz * 0.25  # idle boards drop clocks
        if b.idle_w + dyn_max > self.limit:
            f = ((self.limit - b.idle_w) / dyn_max) ** (1 / 1.6)
            clock = b.max_mhz * f
            reasons.append("power cap")
        if act.clock_cap_mhz is not None and act.clock_cap_mhz < clock:
            clock = act.clock_cap_mhz
            reasons = [r for r in act.reasons] + [r for r in reasons if r not in act.reasons]
        if self.temp > b.slowdown_c + 3 and "thermal (sw)" not in reasons:
            clock = min(clock, b.max_mhz * 0.8)
            reasons.append("thermal (sw)")
        clock = round(clock / 15.0) * 15.0
        f = clock / b.max_mhz
        power = b.idle_w + dyn_max * f ** 1.6 if busy >= 0.01 or act.sm >= 0.01 else b.idle_w
        power = power * rng.uniform(0.985, 1.015) + rng.gauss(0, 1.5)
        if "power cap" in reasons:
            power = min(power, self.limit * rng.uniform(0.985, 0.999))
        eq = self.ambient + 10 + (power + act.heat_w) * (0.075 if b.tdp_w >= 500 else 0.13)
        self.temp += (eq - self.temp) * (1 - math.exp(-dt / 40.0))
        self.clock, self.speed = clock, max(0.05, f)
        # NVML's buffered util samples: each one the busy fraction of one driver period
        n = max(1, int(round(b.util_samples * dt)))
        samples = []
        for _ in range(n):
            s = busy + rng.gauss(0, 0.02 + act.flicker * 0.25)
            samples.append(float(round(100 * clamp(s))))
        util = samples[-1]  # the averaged read is the driver's last period, not the tick
        sm = act.sm * rng.uniform(0.97, 1.03)
        kw = dict(index=self.index, name=b.name, uuid=self.uuid, util_gpu_pct=util,
                  util_gpu_samples_pct=tuple(samples),
                  util_mem_pct=float(round(100 * clamp(act.dram * 0.9 + rng.gauss(0, 0.005)))),
                  mem_total_bytes=b.mem_mib * MiB, mem_used_bytes=int(act.mem_used),
                  mem_reserved_bytes=b.reserved_mib * MiB, power_w=round(max(b.idle_w * 0.9, power), 3),
                  temp_c=float(round(self.temp)), sm_clock_mhz=float(clock),
                  throttle=tuple(reasons), bus_id=self.bus, pstate=0,
                  power_limit_w=float(self.limit), mem_clock_mhz=float(b.mem_mhz),
                  ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=0, mig_mode=False)
        missing = {}
        if b.fan:
            kw["fan_pct"] = float(round(clamp((self.temp - 30) / 60) * 100))
        else:
            missing["fan_pct"] = "not supported on this GPU"
        if b.hopper or self.dcgm:
            if b.hopper and not self.gpm_ready:
                self.gpm_ready = True
                for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                    missing[k] = "GPM needs a second sample"
            else:
                kw.update(sm_active_pct=round(100 * clamp(sm), 3),
                          sm_occupancy_pct=round(100 * clamp(act.occ * rng.uniform(0.95, 1.05)), 3),
                          tensor_pct=round(100 * clamp(act.tensor * rng.uniform(0.97, 1.03)), 3),
                          dram_bw_pct=round(100 * clamp(act.dram * rng.uniform(0.97, 1.03)), 3))
        else:
            for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[k] = "needs Hopper+ (GPM) or a DCGM exporter"
        if b.hopper and self.gpm_ready:
            kw.update(pcie_rx_mib_per_s=round(act.pcie_rx * rng.uniform(0.8, 1.2), 2),
                      pcie_tx_mib_per_s=round(act.pcie_tx * rng.uniform(0.8, 1.2), 2),
                      nvlink_rx_mib_per_s=round(act.nvlink * rng.uniform(0.95, 1.05), 1) if b.nvlink else 0.0,
                      nvlink_tx_mib_per_s=round(act.nvlink * rng.uniform(0.95, 1.05), 1) if b.nvlink else 0.0)
        else:
            for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                      "nvlink_tx_mib_per_s"):
                missing[k] = "needs Hopper+ (GPM)"
        missing["xid_last"] = "no XID event seen"
        return GpuSample(missing=missing, **kw)


class Hist:
    """A cumulative Prometheus histogram fed with observations."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.cum = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0

    def add(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.count += n
        self.sum += value * n
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.cum[i] += n

    def spread(self, rng: random.Random, mean: float, n: int, sigma: float = 0.18) -> None:
        """n observations around mean (a lognormal spread), in up to 8 groups."""
        if n <= 0 or mean <= 0:
            return
        parts = min(n, 8)
        base, extra = divmod(n, parts)
        for i in range(parts):
            k = base + (1 if i < extra else 0)
            self.add(mean * math.exp(rng.gauss(-sigma * sigma / 2, sigma)), k)

    def reset(self) -> None:
        self.cum = [0.0] * len(self.bounds)
        self.count = self.sum = 0.0

    def sample(self, gname: str | None = None) -> EngineHistogram:
        return EngineHistogram(gname or self.name, self.bounds, tuple(self.cum), self.count,
                               round(self.sum, 6))


def launch_hist(rng: random.Random, api: str, pid: int, count: int, base_us: float,
                tail_frac: float = 0.0, tail_us: float = 0.0) -> LaunchHist:
    """Host-side call durations of ``count`` calls: a lognormal body around base_us and
    a fraction descheduled for ~tail_us (the launching thread lost its CPU)."""
    buckets: dict[int, int] = {}
    total = mx = 0
    groups = min(count, 40)
    if groups == 0:
        return LaunchHist(api=api, pid=pid)
    per, extra = divmod(count, groups)
    ntail = int(round(count * tail_frac))
    for i in range(groups):
        k = per + (1 if i < extra else 0)
        v = int(base_us * 1000 * math.exp(rng.gauss(0, 0.35)))
        buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + k
        total += v * k
        mx = max(mx, v)
    for _ in range(min(ntail, 60)):
        k = max(1, ntail // 60) if ntail > 60 else 1
        v = int(tail_us * 1000 * math.exp(rng.gauss(0, 0.6)))
        buckets[bucket_index(v)] = buckets.get(bucket_index(v), 0) + k
        total += v * k
        mx = max(mx, v)
    n = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=total, max_ns=mx, buckets=buckets)


@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    gpus: tuple[int, ...]
    start: float
    user: str = "app"
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    cpu_s: float = 0.0
    rss: int = 2 * GiB
    threads: dict = field(default_factory=dict)  # name -> [tid, cpu_s]
    ctx_vol: int = 0
    ctx_invol: int = 0

    def burn(self, rng: random.Random, per_thread: dict[str, float], invol_rate: float = 30,
             dt: float = 1.0) -> None:
        """Add CPU seconds (by thread) and context switches for one tick."""
        for i, (name, sec) in enumerate(per_thread.items()):
            if name not in self.threads:
                self.threads[name] = [self.pid + i if i else self.pid, 0.0]
            sec = max(0.0, sec * rng.uniform(0.95, 1.05))
            self.threads[name][1] += sec
            self.cpu_s += sec
        self.ctx_vol += int(rng.uniform(200, 400) * dt)
        self.ctx_invol += poisson(rng, invol_rate * dt)

    def samples(self, mem: dict[int, int], sm: dict[int, float | None]) -> list[ProcSample]:
        out = []
        for g in self.gpus:
            out.append(ProcSample(pid=self.pid, gpu_index=g, name=self.name, cmdline=self.cmdline,
                                  user=self.user, ppid=1, start_time_s=self.start,
                                  mem_bytes=mem.get(g), sm_util_pct=sm.get(g),
                                  cpu_s=round(self.cpu_s, 2), rss_bytes=self.rss,
                                  container=self.container, pod=self.pod, cgroup=self.cgroup))
        return out

    def thread_samples(self) -> tuple[ThreadSample, ...]:
        ts = sorted(self.threads.items(), key=lambda kv: -kv[1][1])[:12]
        return tuple(ThreadSample(tid=v[0], pid=self.pid, name=k, cpu_s=round(v[1], 2))
                     for k, v in ts)

    def busiest(self) -> tuple[str, float]:
        if not self.threads:
            return "", 0.0
        k, v = max(self.threads.items(), key=lambda kv: kv[1][1])
        return f"{v[0]} {k}", round(v[1], 2)


class Host:
    """The machine's CPU: total demand vs cores gives cpu%, run queue and PSI; a cgroup quota
    over the workload's tree gives throttled CFS periods."""

    def __init__(self, rng: random.Random, cpus: int, quota: float | None = None,
                 psi: bool = True):
        self.rng, self.cpus, self.quota, self.psi_ok = rng, cpus, quota, psi
        self.ctx = rng.randint(10**7, 10**8)
        self.psi = 0.5
        self.periods = 0
        self.throttled = 0

    def tick(self, demand_cores: float, tree_cores: float, dt: float,
             quota: float | None = None) -> tuple[HostSample, float]:
        """(host sample, fraction of its CPU demand the workload's tree got)."""
        rng = self.rng
        quota = quota if quota is not None else self.quota
        got = 1.0
        if demand_cores > self.cpus:
            got = self.cpus / demand_cores
        if quota is not None:
            self.periods += int(round(10 * dt))
            if tree_cores * got > quota:
                frac = clamp((tree_cores * got - quota) / (tree_cores * got) * 2.2 + 0.1)
                self.throttled += int(round(10 * dt * frac))
                got = min(got, quota / tree_cores)
        over = max(0.0, demand_cores / self.cpus - 0.85)
        target = clamp(0.004 + over * 1.6 + rng.uniform(0, 0.01), 0, 0.99) * 100
        self.psi += (target - self.psi) * (1 - math.exp(-dt / 10))  # avg10
        used = min(demand_cores, self.cpus) / self.cpus * 100
        runq = max(1, int(round(min(demand_cores, self.cpus * 3) + rng.uniform(-0.5, 1.5))))
        self.ctx += int(rng.uniform(8000, 14000) * dt * (1 + demand_cores / self.cpus))
        hs = HostSample(cpu_pct=round(clamp(used / 100 + rng.gauss(0, 0.004)) * 100, 1),
                        cpu_pressure_some_pct=round(self.psi, 2) if self.psi_ok else None,
                        run_queue=runq, cpus=self.cpus, ctx_switches_total=self.ctx)
        return hs, got


def pinned_of(proc: Proc, host: HostSample, cores: tuple[int, ...], ports: tuple[int, ...],
              quota: float | None, periods: int | None, throttled: int | None,
              extra_pids: tuple[int, ...] = ()) -> PinnedSample:
    return PinnedSample(label=proc.cmdline[:60] + ("…" if len(proc.cmdline) > 60 else ""),
                        root_pids=(proc.pid,), tree_pids=(proc.pid, *extra_pids),
                        cpu_s=round(proc.cpu_s, 2), ctx_voluntary=proc.ctx_vol,
                        ctx_involuntary=proc.ctx_invol, threads=proc.thread_samples(),
                        cores=cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                        run_queue=host.run_queue, listening_ports=ports,
                        cpu_quota_cores=quota, cpu_periods=periods if quota else None,
                        cpu_throttled_periods=throttled if quota else None)


class Clock:
    """Tick times with scrape jitter and the occasional late tick (a missed reading)."""

    def __init__(self, rng: random.Random, start_wall: float, tick: float, miss: float = 0.004):
        self.rng, self.start, self.tick, self.miss = rng, start_wall, tick, miss
        self.mono0 = rng.uniform(5000, 900000)
        self.seq = 0

    def times(self, n: int):
        """Yield (seq, rel_t, dt) for n ticks; rel_t is seconds since the start."""
        t = 0.0
        prev = 0.0
        for _ in range(n):
            step = self.tick
            if self.rng.random() < self.miss:
                step += self.tick  # a tick the sampler could not take in time
            t += step
            jit = self.rng.gauss(0, 0.004 * self.tick)
            rel = t + jit
            self.seq += 1
            yield self.seq, rel, rel - prev
            prev = rel


def make_frame(clock: Clock, seq: int, rel: float, gpus, procs, engine, host, pinned,
               launch=(), engine_status: SourceStatus | None = None, ebpf: bool = False,
               engine_expected: bool = True, psi_note: bool = False) -> Frame:
    rng = clock.rng
    st = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.004, 0.012), 6)),
          "host": SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.0003, 0.001), 6)),
          "procfs": SourceStatus(ok=True, detail="/proc", age_s=0.0,
                                 poll_s=round(rng.uniform(0.0001, 0.0004), 6))}
    if pinned is not None:
        st["pin"] = SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.01, 0.05), 6))
    if engine_status is not None:
        st["engine"] = engine_status
    elif engine is not None:
        st["engine"] = SourceStatus(ok=True, age_s=0.0, poll_s=round(rng.uniform(0.01, 0.06), 6))
    elif engine_expected:
        st["engine"] = SourceStatus(ok=False, reason="no engine found (pass --engine URL)")
    if ebpf:
        st["ebpf"] = SourceStatus(ok=True, detail="uprobes on libcudart.so.12, libcuda.so.1",
                                  age_s=0.0, poll_s=round(rng.uniform(0.001, 0.004), 6))
    else:
        st["ebpf"] = SourceStatus(ok=False, reason="eBPF off (--ebpf off)")
    wall = clock.start + rel
    return Frame(seq=seq, time_wall_s=round(wall, 6), time_mono_s=round(clock.mono0 + rel, 6),
                 sources=st, gpus=tuple(gpus), processes=tuple(procs), engine=engine,
                 launch=tuple(launch), host=host, pinned=pinned)
