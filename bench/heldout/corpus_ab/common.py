"""Boards, host, processes and frame assembly shared by every simulator.

Each simulator advances its own workload one sampler tick (about 1 s) at a time and hands
per-GPU *activity* (kernel-busy time, SM / tensor / DRAM activity from the work it did,
memory held) to a ``Board``, which turns it into what NVML would report: power from that
activity, clocks from power limit and temperature, the clock-event reasons, GPU-Util as the
driver's sampled busy fraction (the last sample is what a plain read returns).  The board's
clock factor feeds back into the simulator's step times on the next tick.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

GiB = 2**30
MiB = 2**20
EPOCH0 = 1_781_049_600.0  # Monday of the on-call fortnight (UTC), traces start after it


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


@dataclass(frozen=True)
class BoardSpec:
    name: str
    mem_total: int
    reserved: int
    tdp: float
    idle_w: float
    max_clock: float
    idle_clock: float
    mem_clock: float
    bw: float  # HBM/GDDR bytes per second
    tflops: float  # dense bf16, tensor cores
    gpm: bool  # Hopper+: NVML GPM gives SM/tensor/DRAM activity
    fan: bool  # actively cooled board that reports a fan
    sw_thermal_c: float
    samples_per_s: int  # NVML GPU-Util buffered samples per second
    thermal_res: float  # deg C per W above inlet
    inlet_c: float = 28.0
    pcie_gen: int = 5


BOARDS = {
    "H100-SXM": BoardSpec("NVIDIA H100 80GB HBM3", 85520809984, 567279616, 700, 72, 1980, 345,
                          2619, 3.35e12, 989, True, False, 87, 5, 0.058),
    "H100-PCIe": BoardSpec("NVIDIA H100 PCIe", 85520809984, 567279616, 350, 48, 1755, 345, 1593,
                           2.0e12, 756, True, False, 85, 5, 0.13),
    "H200": BoardSpec("NVIDIA H200", 150754820096, 644939776, 700, 75, 1980, 345, 3201, 4.8e12,
                      989, True, False, 87, 5, 0.056),
    "A100-40": BoardSpec("NVIDIA A100-SXM4-40GB", 42505273344, 536870912, 400, 55, 1410, 210, 1215,
                         1.55e12, 312, False, False, 85, 6, 0.1, pcie_gen=4),
    "A100-80": BoardSpec("NVIDIA A100-SXM4-80GB", 85899345920, 536870912, 400, 60, 1410, 210, 1593,
                         2.0e12, 312, False, False, 85, 6, 0.1, pcie_gen=4),
    "L40S": BoardSpec("NVIDIA L40S", 48305799168, 654311424, 350, 35, 2520, 210, 9001, 8.64e11,
                      362, False, False, 87, 6, 0.14, pcie_gen=4),
    "L4": BoardSpec("NVIDIA L4", 24152899584, 427819008, 72, 16, 2040, 210, 6251, 3.0e11, 121,
                    False, False, 85, 6, 0.65, pcie_gen=4),
    "A10G": BoardSpec("NVIDIA A10G", 24146608128, 427819008, 300, 25, 1710, 210, 6251, 6.0e11,
                      125, False, True, 88, 6, 0.16, pcie_gen=4),
    "RTX6000Ada": BoardSpec("NVIDIA RTX 6000 Ada Generation", 51527024640, 654311424, 300, 22,
                            2505, 210, 10001, 9.6e11, 364, False, True, 88, 6, 0.17, pcie_gen=4),
}

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct",
              "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
              "nvlink_tx_mib_per_s")


@dataclass
class Act:
    """What one GPU did during one tick (fractions of the tick, 0..1)."""

    busy: float = 0.0  # time a kernel was running (what NVML GPU-Util samples)
    sm: float = 0.0  # SM-active (time x SMs with a warp resident)
    occ: float = 0.0
    tensor: float = 0.0
    dram: float = 0.0  # bytes moved / (board bandwidth x tick)
    mem_used: int = 0  # bytes held by processes
    pattern: str = "smooth"  # "bursty": sub-tick samples near 0 or 1 (long phases)
    pcie_rx: float = 0.0  # MiB/s
    pcie_tx: float = 0.0
    nvlink: float = 0.0
    forced: tuple[str, ...] = ()  # clock-event reasons imposed from outside (brake, hw slowdown)
    forced_clock: float = 1.0  # clock factor they impose
    cooling: float = 1.0  # >1: worse cooling (blocked airflow, failed fan)
    has_context: bool = True
    label: str = ""  # a co-tenant's command line
    pod: str = ""


class Board:
    def __init__(self, spec: BoardSpec, index: int, rng: random.Random, bus: str,
                 power_limit: float | None = None, dcgm: bool = False, temp0: float | None = None):
        self.s, self.index, self.rng, self.bus = spec, index, rng, bus
        self.limit = power_limit or spec.tdp
        self.temp = temp0 if temp0 is not None else spec.inlet_c + 8 + rng.random() * 4
        self.clock_f = 1.0  # what the last tick ran at, read by simulators
        self.dcgm = dcgm  # a dcgm-exporter supplies profiling fields before Hopper
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        self.last_busy = [0.0] * spec.samples_per_s
        self.idle_ticks = 0
        self.ecc = 0

    def sample(self, a: Act, lost: bool = False) -> GpuSample:
        s, r = self.s, self.rng
        busy = min(1.0, max(0.0, a.busy))
        sm = min(busy, max(0.0, a.sm))
        tensor = min(sm, max(0.0, a.tensor))
        dram = min(1.0, max(0.0, a.dram))
        span = (s.tdp - s.idle_w) * 1.15
        demand = s.idle_w + span * (0.12 * busy + 0.25 * sm + 0.45 * tensor + 0.28 * dram)
        demand *= 1 + r.gauss(0, 0.015)
        if not a.has_context:
            demand = s.idle_w * 0.8
        reasons: list[str] = []
        clock_f = 1.0
        if demand > self.limit:
            clock_f = ((self.limit - s.idle_w) / (demand - s.idle_w)) ** 0.7
            power = self.limit * (1 - abs(r.gauss(0, 0.006)))
            reasons.append("power cap")
        else:
            power = demand
        # temperature: first-order lag toward inlet + P x thermal resistance
        target = s.inlet_c + power * s.thermal_res * a.cooling
        self.temp += (target - self.temp) * 0.06
        if self.temp > s.sw_thermal_c:
            clock_f = min(clock_f, max(0.55, 1 - (self.temp - s.sw_thermal_c) / 12))
            reasons.append("thermal (sw)")
            power *= 0.93
        if a.forced:
            clock_f = min(clock_f, a.forced_clock)
            reasons += [x for x in a.forced if x not in reasons]
            power = min(power, s.idle_w + (power - s.idle_w) * a.forced_clock ** 1.3)
        if busy < 0.02:
            self.idle_ticks += 1
        else:
            self.idle_ticks = 0
        clock = s.max_clock * clock_f
        pstate = 0
        if not a.has_context and self.idle_ticks > 5:
            clock, pstate = s.idle_clock, 8
        clock = round(clock / 15) * 15
        self.clock_f = clock_f
        # driver-resolution busy samples; a plain read returns the last one (aliasing)
        n = s.samples_per_s
        if a.pattern == "bursty":
            samples = [min(1.0, max(0.0, (1.0 if r.random() < busy else r.random() * busy * 0.5)))
                       for _ in range(n)]
        else:
            samples = [min(1.0, max(0.0, busy + r.gauss(0, 0.03 + 0.08 * busy * (1 - busy))))
                       for _ in range(n)]
        if busy == 0:
            samples = [0.0] * n
        spct = tuple(float(round(x * 100)) for x in samples)
        missing: dict[str, str] = {}
        if not s.fan:
            missing["fan_pct"] = "not supported on this GPU"
        prof = s.gpm or self.dcgm
        if not prof:
            for f in GPM_FIELDS[:4]:
                missing[f] = "needs Hopper+ (GPM) or a DCGM exporter"
        if not s.gpm:
            for f in GPM_FIELDS[4:]:
                missing[f] = "needs Hopper+ (GPM)"

        def pct(x: float, noise: float = 0.01) -> float | None:
            return max(0.0, min(100.0, 100 * (x + r.gauss(0, noise) * (x > 0)))) if prof else None

        fan = None
        if s.fan:
            fan = float(min(100, max(30, round(30 + (self.temp - 40) * 1.6 / a.cooling))))
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=spct[-1],
            util_gpu_samples_pct=spct, util_mem_pct=float(round(min(100, dram * 100 * 1.05))),
            sm_active_pct=pct(sm), sm_occupancy_pct=pct(a.occ if a.occ else sm * 0.35, 0.005),
            dram_bw_pct=pct(dram), tensor_pct=pct(tensor, 0.005),
            mem_total_bytes=s.mem_total - s.reserved,
            mem_used_bytes=min(s.mem_total - s.reserved, a.mem_used + (0 if not a.has_context else 0)),
            mem_reserved_bytes=s.reserved, power_w=round(power, 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=self.bus,
            fan_pct=fan, pstate=pstate, power_limit_w=float(self.limit),
            mem_clock_mhz=float(s.mem_clock),
            pcie_rx_mib_per_s=(a.pcie_rx + abs(r.gauss(30, 5))) if s.gpm else None,
            pcie_tx_mib_per_s=(a.pcie_tx + abs(r.gauss(4, 1))) if s.gpm else None,
            nvlink_rx_mib_per_s=(a.nvlink * (1 + r.gauss(0, 0.03))) if s.gpm else None,
            nvlink_tx_mib_per_s=(a.nvlink * (1 + r.gauss(0, 0.03))) if s.gpm else None,
            ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, lost=lost)


def make_boards(model: str, n: int, rng: random.Random, **kw) -> list[Board]:
    buses = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"] if n > 1 else ["06"]
    return [Board(BOARDS[model], i, rng, f"00000000:{buses[i % 8]}:00.0", **kw) for i in range(n)]


# ------------------------------------------------------------------ host and processes

@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    user: str
    start: float
    mem: int = 0
    cpu_s: float = 0.0
    rss: int = 2 * GiB
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    ppid: int = 1
    sm_util: float | None = None
    mem_util: float | None = None
    alive: bool = True

    def sample(self) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=self.start,
                          mem_bytes=self.mem, sm_util_pct=self.sm_util, cpu_s=round(self.cpu_s, 2),
                          rss_bytes=self.rss, container=self.container, pod=self.pod,
                          cgroup=self.cgroup, mem_util_pct=self.mem_util)


class Host:
    """The node's CPUs: a base load, the workload's threads, and any intruder."""

    def __init__(self, cpus: int, rng: random.Random, psi: bool = True, base_load: float = 1.0):
        self.cpus, self.rng, self.psi_ok, self.base = cpus, rng, psi, base_load
        self.psi = 0.5
        self.ctx = rng.randrange(10**8, 9 * 10**8)

    def sample(self, busy_cores: float, runnable: float) -> HostSample:
        r = self.rng
        runnable = max(0.0, runnable + self.base + r.gauss(0, 0.6))
        busy = min(self.cpus, busy_cores + self.base * 0.7)
        over = max(0.0, 1 - self.cpus / runnable) if runnable > 0 else 0.0
        # "some" pressure rises before the run queue exceeds the CPUs (affinity, bursts)
        inst = 100 * min(1.0, over + 0.15 * max(0.0, runnable / self.cpus - 0.6))
        self.psi += (inst - self.psi) * 0.1  # avg10
        self.ctx += int(3000 * self.cpus * 0.1 + 400 * runnable + r.randrange(500))
        return HostSample(cpu_pct=round(100 * busy / self.cpus + abs(r.gauss(0, 0.5)), 1),
                          cpu_pressure_some_pct=round(self.psi, 2) if self.psi_ok else None,
                          run_queue=max(1, int(round(runnable))), cpus=self.cpus,
                          ctx_switches_total=self.ctx)


@dataclass
class Pin:
    """The pinned process tree (the engine or the trainer) as the pin source reads it."""

    label: str
    roots: tuple[int, ...]
    tree: tuple[int, ...]
    cores: tuple[int, ...]
    threads: list[list] = field(default_factory=list)  # [tid, pid, name, cpu_s]
    ports: tuple[int, ...] = ()
    quota: float | None = None
    vol: int = 0
    invol: int = 0
    periods: int = 0
    throttled: int = 0

    def add(self, rates: dict[str, float], invol: float, vol: float) -> None:
        for th in self.threads:
            th[3] += max(0.0, rates.get(th[2], 0.0))
        self.invol += int(invol)
        self.vol += int(vol)
        if self.quota is not None:
            self.periods += 10

    @property
    def cpu_s(self) -> float:
        return sum(t[3] for t in self.threads)

    def busiest(self) -> list:
        return max(self.threads, key=lambda t: t[3])

    def sample(self, host: HostSample, exited: dict[int, float] | None = None) -> PinnedSample:
        ths = sorted(self.threads, key=lambda t: -t[3])[:8]
        return PinnedSample(
            label=self.label, root_pids=self.roots, tree_pids=self.tree,
            exited=exited or {}, cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol,
            ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(t[0], t[1], t[2], round(t[3], 2)) for t in ths),
            cores=self.cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
            run_queue=host.run_queue, listening_ports=self.ports, cpu_quota_cores=self.quota,
            cpu_periods=self.periods if self.quota is not None else None,
            cpu_throttled_periods=self.throttled if self.quota is not None else None)


def launch_hist(api: str, pid: int, calls: int, rng: random.Random, median_us: float,
                tail_frac: float = 0.0, tail_ms: float = 0.0) -> LaunchHist | None:
    """Host-side call durations of ``calls`` calls: lognormal around ``median_us``, with
    ``tail_frac`` of them stretched by a deschedule of about ``tail_ms``."""
    if calls <= 0:
        return None
    buckets: dict[int, int] = {}
    total, most = 0, 0
    draws = min(calls, 400)
    scale = calls / draws
    for _ in range(draws):
        ns = median_us * 1000 * math.exp(rng.gauss(0, 0.35))
        if tail_frac and rng.random() < tail_frac:
            ns += tail_ms * 1e6 * math.exp(rng.gauss(0, 0.6))
        ns = int(ns)
        b = bucket_index(ns)
        buckets[b] = buckets.get(b, 0) + 1
        total += ns
        most = max(most, ns)
    if scale != 1:
        buckets = {k: max(1, int(round(v * scale))) for k, v in buckets.items()}
        calls = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=calls, sum_ns=int(total * scale), max_ns=most,
                      buckets=buckets)


class Clock:
    """Tick times with scrape jitter and the occasional missed tick (a skipped frame)."""

    def __init__(self, start: float, tick: float, rng: random.Random, drop: float = 0.006):
        self.start, self.tick, self.rng, self.drop = start, tick, rng, drop
        self.seq = 0
        self.mono0 = 3600 * 24 * 3 + rng.random() * 86400

    def frame(self, k: int, parts: dict, sources: dict[str, SourceStatus]) -> Frame | None:
        if k > 3 and self.rng.random() < self.drop:
            self.seq += 1  # the sampler was late: this tick never got written
            return None
        t = self.start + k * self.tick + self.rng.gauss(0, 0.012)
        self.seq += 1
        return Frame(seq=self.seq, time_wall_s=round(t, 6), time_mono_s=round(self.mono0 + t -
                     self.start, 6), sources=sources, **parts)


def ok(detail: str | None = None, poll: float = 0.005, age: float = 0.0) -> SourceStatus:
    return SourceStatus(True, None, detail, age, poll, poll)


def fail(reason: str) -> SourceStatus:
    return SourceStatus(False, reason)


NO_ENGINE = "no engine found (pass --engine URL)"


def base_sources(rng: random.Random, ebpf: str | None = None) -> dict[str, SourceStatus]:
    src = {"nvml": ok(poll=round(0.004 + rng.random() * 0.003, 6)),
           "host": ok(poll=0.0009), "procfs": ok("/proc", poll=0.0005),
           "pin": ok(poll=round(0.03 + rng.random() * 0.02, 6))}
    if ebpf:
        src["ebpf"] = ok(ebpf, poll=0.002)
    return src


def engine_status(rng: random.Random, eng: EngineSample | None, slow: float = 0.0
                  ) -> SourceStatus:
    if eng is None:
        return fail(NO_ENGINE)
    poll = 0.02 + rng.random() * 0.03 + slow
    return SourceStatus(True, None, None, round(max(0.0, poll - 0.01), 4), round(poll, 4), 0.035)
