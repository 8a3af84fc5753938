"""Shared physics: GPUs as NVML reads them, the host as /proc shows it, frame assembly."""
from __future__ import annotations

import bisect
import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

GiB = 2**30
EPOCH = 1798000000.0  # pinned wall clock origin (Dec 2026); each trace is offset from it


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


@dataclass(frozen=True)
class Spec:
    name: str
    mem_bytes: int
    tdp_w: float
    clock_max: float
    idle_w: float
    hbm_bps: float
    tflops: float  # dense bf16/fp16 tensor
    gpm: bool
    fan: bool
    t_slow: float  # thermal slowdown (sw) onset, C
    sms: int
    mem_clock: float
    reserved: int = 644939776


SPECS = {
    "H100": Spec("NVIDIA H100 80GB HBM3", 85520809984, 700, 1980, 72, 3.35e12, 989e12, True, False, 87, 132, 2619),
    "H200": Spec("NVIDIA H200", 150754820096, 700, 1980, 78, 4.8e12, 989e12, True, False, 87, 132, 3201),
    "A100": Spec("NVIDIA A100-SXM4-80GB", 85899345920, 400, 1410, 55, 2.0e12, 312e12, False, False, 85, 108, 1593, 567279616),
    "L40S": Spec("NVIDIA L40S", 48305799168, 350, 2520, 34, 0.864e12, 362e12, False, False, 86, 142, 9001, 522190848),
    "A10G": Spec("NVIDIA A10G", 24146608128, 300, 1710, 24, 0.6e12, 125e12, False, False, 86, 80, 6251, 412090368),
    "A6000": Spec("NVIDIA RTX A6000", 51527024640, 300, 2100, 22, 0.768e12, 155e12, False, True, 86, 84, 8001, 522190848),
    "RTX4090": Spec("NVIDIA GeForce RTX 4090", 25757220864, 450, 2790, 18, 1.008e12, 165e12, False, True, 83, 128, 10501, 400556032),
}


class Acc:
    """GPU activity per sub-slice of a tick: kernel-busy time and SM/tensor/DRAM-active
    time (seconds), filled by the workload simulation, read by the GPU model."""

    SUB = 5

    def __init__(self, start: float, tick: float, n_ticks: int):
        self.t0, self.w = start, tick / self.SUB
        n = n_ticks * self.SUB + self.SUB
        self.busy = [0.0] * n
        self.sm = [0.0] * n
        self.ten = [0.0] * n
        self.dram = [0.0] * n
        self.nvl = [0.0] * n  # bytes over NVLink

    def add(self, a: float, b: float, busy=1.0, sm=0.0, ten=0.0, dram=0.0, nvl_bytes=0.0):
        """Activity spread uniformly over [a, b): fractions of that wall time."""
        if b <= a:
            return
        w = self.w
        i = max(0, int((a - self.t0) / w))
        j = int((b - self.t0) / w)
        span = b - a
        n = len(self.busy)
        while i <= j and i < n:
            lo = max(a, self.t0 + i * w)
            hi = min(b, self.t0 + (i + 1) * w)
            d = hi - lo
            if d > 0:
                self.busy[i] += busy * d
                self.sm[i] += sm * d
                self.ten[i] += ten * d
                self.dram[i] += dram * d
                if nvl_bytes:
                    self.nvl[i] += nvl_bytes * d / span
            i += 1

    def tick(self, k: int):
        """(busy fraction per sub-slice, mean busy, sm, tensor, dram, nvlink bytes) of tick k."""
        s = slice(k * self.SUB, (k + 1) * self.SUB)
        T = self.w * self.SUB
        sub = [min(1.0, x / self.w) for x in self.busy[s]]
        return (sub, min(1.0, sum(self.busy[s]) / T), min(1.0, sum(self.sm[s]) / T),
                min(1.0, sum(self.ten[s]) / T), min(1.0, sum(self.dram[s]) / T), sum(self.nvl[s]))


class Gpu:
    """One board: power from activity and clock, temperature from power, clocks from limits."""

    def __init__(self, spec: Spec, index: int, rng: random.Random, *, t_amb=28.0, r_th=None,
                 power_limit=None, tau=35.0, bus=None):
        self.s, self.index, self.rng = spec, index, rng
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        self.bus = bus or "00000000:%02X:00.0" % (0x18 + 0x10 * index)
        self.t_amb = t_amb
        self.r_th = r_th if r_th is not None else 42.0 / spec.tdp_w  # C per W
        self.power_limit = power_limit or spec.tdp_w
        self.tau = tau
        self.temp = t_amb + 8
        self.clock_ratio = 1.0
        self.fan = 30.0 if spec.fan else None
        self.fan_fail = 1.0  # multiplies cooling effectiveness
        self.brake = None  # forced clock ratio from an external power brake
        self.hw_slow = None
        self.mem_used = 0
        self.throttle = ()
        self.power = spec.idle_w
        self.xid = 0

    def dyn_full(self, sm, ten, dram):
        return 1.2 * self.s.tdp_w * (0.45 * sm + 0.45 * ten + 0.25 * dram)

    def step(self, dt, busy, sm, ten, dram):
        """Advance one tick with this activity; returns the power read and sets clocks for
        the next tick (NVML reads the state the tick ends in)."""
        s = self.s
        base = s.idle_w + 0.09 * s.tdp_w * busy + 0.05 * s.tdp_w * dram
        dyn = self.dyn_full(sm, ten, dram)
        reasons = []
        r = 1.0
        if dyn > 0 and base + dyn > self.power_limit:
            r = max(0.45, math.sqrt(max(0.05, self.power_limit - base) / dyn))
            if r < 0.995:
                reasons.append("power cap")
        # thermal
        if self.temp > s.t_slow:
            rt = max(0.45, 1.0 - 0.07 * (self.temp - s.t_slow))
            if rt < r:
                r = rt
            reasons.append("thermal (sw)")
            if self.temp > s.t_slow + 5:
                reasons.append("thermal (hw)")
        if self.brake is not None:
            r = min(r, self.brake)
            reasons.append("power brake")
        if self.hw_slow is not None:
            r = min(r, self.hw_slow)
            reasons.append("hw slowdown")
        # clocks move to the target within a tick
        self.clock_ratio = r
        p = base + dyn * r * r
        p *= 1 + self.rng.gauss(0, 0.012)
        self.power = max(s.idle_w * 0.9, min(p, self.power_limit * 1.01 if "power cap" in reasons else p))
        cool = self.r_th / self.fan_fail
        if self.fan is not None:  # fans spin up with temperature
            want = 30 + max(0.0, self.temp - 45) * 2.2
            self.fan = max(25.0, min(100.0, want)) * (self.fan_fail if self.fan_fail < 1 else 1)
        target = self.t_amb + cool * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / self.tau))
        self.throttle = tuple(reasons) if busy > 0.02 else ()
        return self.power

    def sample(self, k_tick, acc: Acc | None, dt, mem_used, *, extra_busy=None, nvlink=True,
               pcie_mib=(30.0, 6.0), lost=False) -> GpuSample:
        rng, s = self.rng, self.s
        if acc is not None:
            sub, busy, sm, ten, dram, nvl = acc.tick(k_tick)
        else:
            sub, busy, sm, ten, dram, nvl = [0.0] * Acc.SUB, 0.0, 0.0, 0.0, 0.0, 0.0
        if extra_busy:
            busy, sm, ten, dram = extra_busy(busy, sm, ten, dram)
            sub = [min(1.0, max(x, busy * (0.9 + 0.2 * rng.random()))) for x in sub]
        p = self.step(dt, busy, sm, ten, dram)
        clock = round(s.clock_max * self.clock_ratio / 15) * 15
        if busy < 0.01:
            clock = s.clock_max if s.gpm else round(s.clock_max * 0.6 / 15) * 15
        util = int(round(min(100, 100 * busy)))
        samples = tuple(float(int(round(100 * min(1, max(0, x + rng.gauss(0, 0.015)))))) for x in sub)
        missing = {}
        if s.fan is False:
            missing["fan_pct"] = "not supported on this GPU"
        kw = {}
        if s.gpm:
            n = lambda x: max(0.0, 100 * x * (1 + rng.gauss(0, 0.02)))
            kw = dict(sm_active_pct=n(sm), sm_occupancy_pct=n(sm * 0.45), tensor_pct=n(ten),
                      dram_bw_pct=n(dram),
                      pcie_rx_mib_per_s=max(0, pcie_mib[0] * (1 + rng.gauss(0, 0.1))),
                      pcie_tx_mib_per_s=max(0, pcie_mib[1] * (1 + rng.gauss(0, 0.1))),
                      nvlink_rx_mib_per_s=(nvl / dt / 2**20) if nvlink else 0.0,
                      nvlink_tx_mib_per_s=(nvl / dt / 2**20) if nvlink else 0.0)
        else:
            why = "needs Hopper or newer (GPM); no DCGM profiling here"
            for f in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct",
                      "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                      "nvlink_tx_mib_per_s"):
                missing[f] = why
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=float(util),
            util_gpu_samples_pct=samples, util_mem_pct=float(int(min(100, 100 * dram * 0.85))),
            mem_total_bytes=s.mem_bytes, mem_used_bytes=int(mem_used), mem_reserved_bytes=s.reserved,
            power_w=round(p, 3), temp_c=float(round(self.temp)), sm_clock_mhz=float(clock),
            throttle=self.throttle, bus_id=self.bus,
            fan_pct=(float(round(self.fan)) if self.fan is not None else None),
            pstate=0 if busy > 0.01 or mem_used > 2 * GiB else 8, power_limit_w=float(self.power_limit),
            mem_clock_mhz=float(s.mem_clock), ecc_corrected=0, ecc_uncorrected=0,
            xid_count=self.xid, xid_last=None, mig_mode=False, missing=missing, lost=lost, **kw)


# ------------------------------------------------------------------ host

def psi_inst(demand, cpus):
    """Instantaneous share of time some runnable task waits for a CPU."""
    x = demand / cpus
    return 100 * (1 - math.exp(-(x ** 6) * 0.9)) if x > 0 else 0.0


class Host:
    """The node as /proc shows it: CPU use, PSI avg10, run queue, context switches."""

    def __init__(self, cpus, rng, base_load=0.5):
        self.cpus, self.rng = cpus, rng
        self.base = base_load
        self.psi = 0.3
        self.ctxt = rng.randrange(10**7, 10**9)

    def step(self, dt, demand_cores, used_cores, extra_psi=0.0, offcpu=None):
        d = demand_cores + self.base
        inst = min(100.0, psi_inst(d, self.cpus) + extra_psi)
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        self.ctxt += int(dt * (4000 + 900 * d) * (1 + 0.1 * self.rng.random()))
        rq = max(1, int(round(min(d, self.cpus) + max(0.0, d - self.cpus) + self.rng.random() * 1.5)))
        cpu = min(100.0, 100 * (used_cores + self.base) / self.cpus * (1 + self.rng.gauss(0, 0.03)))
        return HostSample(cpu_pct=round(cpu, 1), offcpu_switches=offcpu,
                          cpu_pressure_some_pct=round(self.psi, 2), run_queue=rq, cpus=self.cpus,
                          ctx_switches_total=self.ctxt)


class Tree:
    """A pinned process tree's cumulative CPU counters (main thread + helpers + workers)."""

    def __init__(self, label, root_pid, pids, threads, cores, ports=(), quota=None):
        self.label, self.root = label, root_pid
        self.pids = tuple(pids)
        self.threads = {t: 0.0 for t in threads}  # (tid, pid, name) -> cpu_s
        self.cores = tuple(cores)
        self.ports = tuple(ports)
        self.quota = quota
        self.periods = 0
        self.thr_periods = 0
        self.vol = 1000
        self.invol = 40

    @property
    def cpu_s(self):
        return sum(self.threads.values())

    def run(self, dt, use: dict, invol_rate, vol_rate=200.0, throttled_frac=0.0):
        for key, cores in use.items():
            self.threads[key] = self.threads.get(key, 0.0) + cores * dt
        self.invol += int(invol_rate * dt)
        self.vol += int(vol_rate * dt)
        if self.quota is not None:
            n = int(round(dt / 0.1))
            self.periods += n
            self.thr_periods += int(round(n * throttled_frac))

    def pinned(self, psi, rq) -> PinnedSample:
        th = sorted(self.threads.items(), key=lambda kv: -kv[1])[:16]
        return PinnedSample(
            label=self.label, root_pids=(self.root,), tree_pids=self.pids,
            cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol, ctx_involuntary=self.invol,
            threads=tuple(ThreadSample(tid=t, pid=p, name=n, cpu_s=round(c, 2)) for (t, p, n), c in th),
            cores=self.cores, cpu_pressure_some_pct=psi, run_queue=rq, listening_ports=self.ports,
            cpu_quota_cores=self.quota, cpu_periods=self.periods if self.quota else None,
            cpu_throttled_periods=self.thr_periods if self.quota else None)

    def busiest(self):
        (t, p, n), c = max(self.threads.items(), key=lambda kv: kv[1])
        return f"{t} {n}", round(c, 2)


def proc(pid, gpu, name, cmd, mem, sm, cpu_s, start, *, container="", pod="", user="ml",
         rss=3 * GiB, ppid=1):
    return ProcSample(pid=pid, gpu_index=gpu, name=name, cmdline=cmd, user=user, ppid=ppid,
                      start_time_s=start, mem_bytes=int(mem), sm_util_pct=float(int(min(100, sm))),
                      cpu_s=round(cpu_s, 2), rss_bytes=rss, container=container, pod=pod,
                      cgroup=(f"/kubepods.slice/kubepods-burstable.slice/{pod.replace('/', '-')}" if pod else
                              f"/system.slice/docker-{container[7:]}.scope" if container else "/user.slice"))


# ------------------------------------------------------------------ eBPF launch latency

def launch_hist(api, pid, count, rng, median_ns=3500, sigma=0.35, stall_frac=0.0,
                stall_ns=(40_000, 3_000_000)):
    """Host-side call durations of `count` launches: lognormal body, plus a share that were
    preempted mid-call (off-CPU for stall_ns)."""
    if count <= 0:
        return LaunchHist(api=api, pid=pid)
    buckets: dict[int, int] = {}
    total, mx = 0, 0
    m = min(count, 400)  # sample 400 and scale
    scale = count / m
    for _ in range(m):
        v = median_ns * math.exp(rng.gauss(0, sigma))
        if stall_frac and rng.random() < stall_frac:
            lo, hi = stall_ns
            v += math.exp(rng.uniform(math.log(lo), math.log(hi)))
        v = int(v)
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0) + 1
        total += v
        mx = max(mx, v)
    if scale != 1:
        buckets = {b: max(1, int(round(c * scale))) for b, c in buckets.items()}
    return LaunchHist(api=api, pid=pid, count=sum(buckets.values()), sum_ns=int(total * scale),
                      max_ns=mx, buckets=buckets)


EBPF_OFF = SourceStatus(ok=False, reason="launch probes need root (CAP_BPF, CAP_PERFMON): run "
                        "gputop with sudo for launch latency")


def statuses(rng, engine_ok=None, engine_reason=None, engine_age=None, ebpf=False, ebpf_detail=""):
    st = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=round(0.004 + 0.002 * rng.random(), 6))}
    if engine_ok is None:
        st["engine"] = SourceStatus(ok=False, reason=engine_reason or "no engine found (pass --engine URL)")
    elif engine_ok:
        st["engine"] = SourceStatus(ok=True, age_s=engine_age, poll_s=round(0.01 + 0.03 * rng.random(), 6))
    else:
        st["engine"] = SourceStatus(ok=False, reason=engine_reason or "timed out after 2.0 s")
    st["host"] = SourceStatus(ok=True, age_s=0.0, poll_s=0.0006)
    st["pin"] = SourceStatus(ok=True, age_s=0.0, poll_s=0.02)
    st["procfs"] = SourceStatus(ok=True, detail="/proc", age_s=0.0, poll_s=0.0005)
    st["ebpf"] = SourceStatus(ok=True, detail=ebpf_detail or "uprobes on libcudart.so.12, libcuda.so.1",
                              age_s=0.0) if ebpf else EBPF_OFF
    return st


def hist_add(counts: list, bounds: tuple, value: float, weight: float = 1.0):
    """Add an observation to a non-cumulative bucket list (last slot = +Inf)."""
    counts[bisect.bisect_left(bounds, value)] += weight
