"""Shared pieces: GPU models, histogram accumulators, and the frame assembly every
simulator uses (NVML GPU samples, processes, host /proc, pinned tree, eBPF launch)."""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class GpuModel:
    name: str
    mem_total: int
    reserved: int
    power_limit: float
    idle_w: float
    max_clock: float
    mem_clock: float
    hbm_bw: float  # bytes/s
    bf16_flops: float  # dense, per s
    hopper: bool
    fan: bool
    sxm: bool
    samples_per_s: int  # NVML GPU-Util buffered samples per second


GPUS = {
    "H100": GpuModel("NVIDIA H100 80GB HBM3", 85520809984, 553648128, 700.0, 72.0, 1980.0,
                     2619.0, 3.35e12, 989e12, True, False, True, 5),
    "H200": GpuModel("NVIDIA H200", 150754820096, 644939776, 700.0, 78.0, 1980.0, 3201.0,
                     4.8e12, 989e12, True, False, True, 5),
    "A100": GpuModel("NVIDIA A100-SXM4-80GB", 85899345920, 0, 400.0, 58.0, 1410.0, 1593.0,
                     2.0e12, 312e12, False, False, True, 6),
    "L40S": GpuModel("NVIDIA L40S", 48305799168, 0, 350.0, 34.0, 2520.0, 9001.0,
                     0.864e12, 362e12, False, True, False, 6),
    "A10G": GpuModel("NVIDIA A10G", 24146608128, 0, 300.0, 24.0, 1710.0, 6251.0,
                     0.6e12, 70e12, False, True, False, 6),
}

GPM_MISSING = {k: "needs Hopper+ (GPM)" for k in (
    "sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct", "pcie_rx_mib_per_s",
    "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s")}

# engine histogram layouts, as the real pages have them (finite bounds only)
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
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06,
           0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0,
             500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0,
             2000.0, 2500.0, 3000.0)

# how one aggregated observation spreads around its mean (a lognormal-ish shape)
_SPREAD = ((0.72, 0.08), (0.86, 0.17), (0.97, 0.25), (1.08, 0.22), (1.22, 0.16), (1.5, 0.09),
           (2.1, 0.03))


class Hist:
    """A Prometheus histogram kept as the engine keeps it: counts per bucket, count, sum."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.per = [0.0] * (len(bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.per[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: float, rng: random.Random, width: float = 1.0) -> None:
        """n observations around ``value`` (whole counts, as an engine counts them)."""
        if n <= 0:
            return
        left = n
        for mult, w in _SPREAD:
            k = n * w if mult < 2 else left
            k = min(left, math.floor(k + rng.random()))
            if k > 0:
                self.observe(value * (1 + (mult - 1) * width) * rng.uniform(0.97, 1.03), k)
                left -= k
        if left > 0:
            self.observe(value, left)

    def sample(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.per[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count),
                               round(self.sum, 6))


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


def clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def event_value(spec, t: float, kind: str, default=None):
    """The value of the spec's ``kind`` event at ``t`` (ramped in and out over its 5th
    field, where given), else ``default``: one reading for serving and training specs."""
    val = default
    for ev in spec.events:
        t0, t1, k, v = ev[:4]
        if k == kind and t0 <= t < t1:
            ramp = ev[4] if len(ev) > 4 else 0.0
            if ramp and isinstance(v, (int, float)) and isinstance(default, (int, float)):
                f = clamp(min(t - t0, t1 - t) / ramp, 0, 1)
                val = default + (v - default) * f
            else:
                val = v
    return val


# ------------------------------------------------------------------ GPU physics state

class GpuState:
    """One board's slow state (temperature, clocks, power) and its NVML sample."""

    def __init__(self, model: GpuModel, index: int, rng: random.Random, uuid_seed: int,
                 power_limit: float | None = None, temp0: float | None = None):
        self.m, self.index, self.rng = model, index, rng
        self.limit = power_limit or model.power_limit
        self.temp = temp0 if temp0 is not None else (31.0 + rng.uniform(0, 5))
        r = random.Random(uuid_seed * 7919 + index)
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16),
                                                       r.getrandbits(16), r.getrandbits(16),
                                                       r.getrandbits(48))
        bus = (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb)[index % 8]
        self.bus_id = f"00000000:{bus:02X}:00.0"
        self.ecc_corr = r.randrange(0, 3) if model.sxm else 0

    def sample(self, *, busy: float, sm: float, occ: float, tensor: float, dram: float,
               mem_used: int, tick_s: float, busy_samples: list[float] | None = None,
               clock_cap: float | None = None, reasons: tuple[str, ...] = (),
               temp_target_add: float = 0.0, nvlink: float = 0.0, pcie: float = 0.0,
               idle_clock: bool = False) -> tuple[GpuSample, float]:
        """(the GPU sample, the clock ratio used).  ``busy`` etc. are 0..1 fractions of the
        tick as the work would run at full clock; power follows activity, capped."""
        m, rng = self.m, self.rng
        demand = m.idle_w + (m.power_limit * 1.08 - m.idle_w) * (
            0.18 * busy + 0.42 * tensor + 0.28 * dram + 0.17 * sm)
        ratio = 1.0
        reasons = tuple(reasons)
        if demand > self.limit:
            # the power cap pulls the clock down roughly with the square root of the excess
            ratio = clamp((self.limit / demand) ** 1.6, 0.55, 1.0)
            if "power cap" not in reasons:
                reasons = ("power cap",) + reasons
        if clock_cap is not None:
            ratio = min(ratio, clock_cap)
        power = min(self.limit, m.idle_w + (demand - m.idle_w) * (0.55 + 0.45 * ratio))
        power *= rng.uniform(0.985, 1.015)
        if power < m.idle_w * 0.9:
            power = m.idle_w * rng.uniform(0.95, 1.0)
        # temperature: first order toward a power-dependent target
        amb = 28.0 if m.sxm else 33.0
        target = amb + (power / m.power_limit) * (44.0 if m.sxm else 52.0) + temp_target_add
        if not getattr(self, "_warm", False):
            self._warm = True
            self.temp = target + rng.uniform(-1.5, 1.5)
        self.temp += (target - self.temp) * (1 - math.exp(-tick_s / 40.0))
        clock = m.max_clock * ratio
        if idle_clock and busy < 0.02:
            clock = m.max_clock * (0.35 if not m.sxm else 1.0)
        clock = round(clock / 15.0) * 15.0
        util = clamp(busy * 100, 0, 100)
        n = max(1, int(round(m.samples_per_s * tick_s)))
        if busy_samples:
            samp = [float(int(clamp(b * 100 + rng.gauss(0, 1.5), 0, 100))) for b in busy_samples]
            # resample to n
            samp = [samp[min(len(samp) - 1, i * len(samp) // n)] for i in range(n)]
        else:
            samp = [float(int(clamp(util + rng.gauss(0, 2.0 if util > 3 else 0.3), 0, 100)))
                    for _ in range(n)]
        util_v = float(int(round(sum(samp) / len(samp))))
        g = GpuSample(
            index=self.index, name=m.name, uuid=self.uuid,
            util_gpu_pct=util_v, util_gpu_samples_pct=tuple(samp),
            util_mem_pct=float(int(clamp(dram * 100 * rng.uniform(0.93, 1.05), 0, 100))),
            sm_active_pct=(clamp(sm * 100 * rng.uniform(0.97, 1.03), 0, 100) if m.hopper else None),
            sm_occupancy_pct=(clamp(occ * 100 * rng.uniform(0.95, 1.05), 0, 100) if m.hopper else None),
            dram_bw_pct=(clamp(dram * 100 * rng.uniform(0.96, 1.04), 0, 100) if m.hopper else None),
            tensor_pct=(clamp(tensor * 100 * rng.uniform(0.96, 1.04), 0, 100) if m.hopper else None),
            mem_total_bytes=m.mem_total, mem_used_bytes=int(mem_used),
            mem_reserved_bytes=m.reserved or None,
            power_w=round(power, 3), temp_c=float(round(self.temp)), sm_clock_mhz=float(clock),
            throttle=reasons, bus_id=self.bus_id,
            fan_pct=(float(int(clamp(30 + (self.temp - 35) * 1.6, 30, 100))) if m.fan else None),
            pstate=0, power_limit_w=float(self.limit), mem_clock_mhz=m.mem_clock,
            pcie_rx_mib_per_s=(pcie * rng.uniform(0.9, 1.1) + 0.3 if m.hopper else None),
            pcie_tx_mib_per_s=(pcie * 0.3 * rng.uniform(0.9, 1.1) + 0.2 if m.hopper else None),
            nvlink_rx_mib_per_s=(nvlink * rng.uniform(0.95, 1.05) if m.hopper else None),
            nvlink_tx_mib_per_s=(nvlink * rng.uniform(0.95, 1.05) if m.hopper else None),
            ecc_corrected=self.ecc_corr, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=(dict(GPM_MISSING) if not m.hopper else {}) | (
                {} if m.fan else {"fan_pct": "not supported on this GPU"}))
        return g, ratio


# ------------------------------------------------------------------ host and processes

@dataclass
class Thread:
    tid: int
    pid: int
    name: str
    cpu_s: float = 0.0


@dataclass
class Proc:
    pid: int
    name: str
    cmdline: str
    gpu: int | None  # the GPU it holds memory on (None: a CPU-only member of the tree)
    start: float
    user: str = "svc-ml"
    ppid: int = 1
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    mem: int = 0
    sm_util: float = 0.0
    mem_util: float = 0.0
    rss: int = 2 * GiB
    cpu_s: float = 0.0
    threads: list[Thread] = field(default_factory=list)


class Host:
    """/proc-like host state: cumulative switches, PSI avg10 smoothing, run queue."""

    def __init__(self, cpus: int, rng: random.Random, quota: float | None = None):
        self.cpus, self.rng, self.quota = cpus, rng, quota
        self.ctxt = rng.randrange(10**8, 4 * 10**9)
        self.psi = 0.5
        self.periods = rng.randrange(10**5, 10**7) if quota else None
        self.throttled = (self.periods // rng.randrange(40, 400)) if quota else None
        self.vol = rng.randrange(10**4, 10**6)
        self.invol = rng.randrange(100, 5000)

    def step(self, tick_s: float, busy_cores: float, psi_target: float, run_queue: float,
             throttled_frac: float = 0.0, invol_rate: float = 20.0, vol_rate: float = 900.0):
        rng = self.rng
        a = 1 - math.exp(-tick_s / 10.0)  # avg10
        self.psi += (psi_target * rng.uniform(0.9, 1.1) - self.psi) * a
        self.ctxt += int((9000 + busy_cores * 2500) * tick_s * rng.uniform(0.9, 1.1))
        self.invol += poisson(rng, invol_rate * tick_s)
        self.vol += poisson(rng, vol_rate * tick_s)
        if self.quota:
            per = int(round(tick_s / 0.1))
            self.periods += per
            self.throttled += sum(1 for _ in range(per) if rng.random() < throttled_frac)
        rq = max(1, int(round(run_queue + rng.gauss(0, max(0.6, run_queue * 0.12)))))
        cpu_pct = clamp(100 * busy_cores / self.cpus * rng.uniform(0.95, 1.05), 0, 100)
        return HostSample(cpu_pct=round(cpu_pct, 1), offcpu_switches=None,
                          cpu_pressure_some_pct=round(max(0.0, self.psi), 2), run_queue=rq,
                          cpus=self.cpus, ctx_switches_total=self.ctxt), rq


def proc_samples(procs: list[Proc]) -> tuple[ProcSample, ...]:
    out = []
    for p in procs:
        if p.gpu is None:
            continue
        out.append(ProcSample(
            pid=p.pid, gpu_index=p.gpu, name=p.name, cmdline=p.cmdline, user=p.user, ppid=p.ppid,
            start_time_s=p.start, mem_bytes=int(p.mem), sm_util_pct=float(int(p.sm_util)),
            cpu_s=round(p.cpu_s, 2), rss_bytes=int(p.rss), container=p.container, pod=p.pod,
            cgroup=p.cgroup, mem_util_pct=float(int(p.mem_util))))
    return tuple(out)


def pinned_sample(label: str, procs: list[Proc], host: Host, rq: int, cores: tuple[int, ...],
                  ports: tuple[int, ...] = ()) -> PinnedSample:
    threads = [t for p in procs for t in p.threads]
    threads.sort(key=lambda t: (-t.cpu_s, t.tid))
    roots = tuple(p.pid for p in procs if p.ppid not in {q.pid for q in procs})
    return PinnedSample(
        label=label, root_pids=roots, tree_pids=tuple(sorted(p.pid for p in procs)),
        cpu_s=round(sum(p.cpu_s for p in procs), 2), ctx_voluntary=host.vol,
        ctx_involuntary=host.invol,
        threads=tuple(ThreadSample(t.tid, t.pid, t.name, round(t.cpu_s, 2)) for t in threads[:32]),
        cores=cores, cpu_pressure_some_pct=round(host.psi, 2), run_queue=rq,
        listening_ports=ports, cpu_quota_cores=host.quota,
        cpu_periods=host.periods, cpu_throttled_periods=host.throttled)


def launch_hist(api: str, pid: int, calls: int, typical_ns: float, rng: random.Random,
                tail_frac: float = 0.0, tail_ns: tuple[float, float] = (2e5, 5e6)) -> LaunchHist:
    """Host-side call durations of ``calls`` calls: a lognormal body plus a descheduled tail."""
    if calls <= 0:
        return LaunchHist(api=api, pid=pid)
    buckets: dict[int, int] = {}
    total, mx = 0, 0
    # draw a bounded number of values and scale their counts
    draws = min(calls, 64)
    per = calls / draws
    left = calls
    for i in range(draws):
        if rng.random() < tail_frac:
            v = math.exp(rng.uniform(math.log(tail_ns[0]), math.log(tail_ns[1])))
            k = 1 if tail_frac * calls < draws else max(1, int(round(per)))
        else:
            v = typical_ns * math.exp(rng.gauss(0, 0.25))
            if rng.random() < 0.01:
                v *= rng.uniform(3, 12)
            k = max(1, int(round(per)))
        k = min(k, left - (draws - i - 1)) if i < draws - 1 else left
        if k <= 0:
            continue
        left -= k
        vi = int(v)
        b = bucket_index(vi)
        buckets[b] = buckets.get(b, 0) + k
        total += vi * k
        mx = max(mx, vi)
    return LaunchHist(api=api, pid=pid, count=sum(buckets.values()), sum_ns=total, max_ns=mx,
                      buckets=buckets)


def status(age: float = 0.0, poll: float = 0.005, med: float = 0.005, detail=None,
           ok: bool = True, reason=None) -> SourceStatus:
    return SourceStatus(ok=ok, reason=reason, detail=detail,
                        age_s=(round(age, 6) if ok else None),
                        poll_s=(round(poll, 6) if ok else None), poll_median_s=round(med, 6))


def make_frame(seq: int, t_wall: float, t_mono: float, **parts) -> Frame:
    return Frame(seq=seq, time_wall_s=round(t_wall, 6), time_mono_s=round(t_mono, 6), **parts)
