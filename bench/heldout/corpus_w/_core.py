"""Building blocks: seeded randomness, histograms at the engines' real layouts, GPU physics,
the host and the pinned tree, and frame assembly.  Pure Python, no clock, no I/O."""

from __future__ import annotations

import bisect
import hashlib
import math
import random

from gputop.buckets import bucket_index
from gputop.schema import (EngineHistogram, Frame, GpuSample, HostSample, LaunchHist,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)

GIB = 2**30


def rng_for(name: str, stream: str = "") -> random.Random:
    seed = int.from_bytes(hashlib.sha256(f"corpus_w/{name}/{stream}".encode()).digest()[:8], "big")
    return random.Random(seed)


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


def ema(prev: float, target: float, dt: float, tau: float) -> float:
    return prev + (target - prev) * (1 - math.exp(-dt / tau))


# ------------------------------------------------------------------ histogram layouts
def _series125(top: float) -> tuple[float, ...]:
    out, mant, exp = [], (1, 2, 5), 0
    while True:
        for m in mant:
            v = float(m * 10 ** exp)
            if v > top:
                return tuple(out)
            out.append(v)
        exp += 1


VLLM_BOUNDS = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
}
VLLM_BOUNDS["tpot"] = VLLM_BOUNDS["itl"]
VLLM_BOUNDS["queue"] = VLLM_BOUNDS["e2e"]
SGLANG_BOUNDS = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
             100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
            0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
              20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
              600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
              3000.0),
}


class Hist:
    """A cumulative Prometheus histogram (finite bounds + the +Inf overflow in count)."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, tuple(bounds)
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float, weight: int = 1) -> None:
        if weight <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += weight
        self.sum += value * weight

    def observe_many(self, rng: random.Random, n: int, draw) -> None:
        """n observations drawn from ``draw(rng)``: at most 40 drawn, each carrying a share."""
        if n <= 0:
            return
        m = min(n, 40)
        base, extra = divmod(n, m)
        for i in range(m):
            self.observe(draw(rng), base + (1 if i < extra else 0))

    def sample(self) -> EngineHistogram:
        cum, run = [], 0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(self.name, self.bounds, tuple(cum),
                               float(run + self.counts[-1]), round(self.sum, 6))


# ------------------------------------------------------------------ GPU physics
GPU_SPECS = {
    # name, memory (bytes as NVML reports), idle W, TDP W, max SM clock, HBM B/s, has GPM, fan
    "H200": dict(name="NVIDIA H200", mem=150754820096, idle=119.0, tdp=700.0, clock=1980.0,
                 bw=4.8e12, flops=7.0e14, gpm=True, fan=False, mem_clock=3201.0, reserve=644939776),
    "H100": dict(name="NVIDIA H100 80GB HBM3", mem=85520809984, idle=112.0, tdp=700.0, clock=1980.0,
                 bw=3.35e12, flops=6.5e14, gpm=True, fan=False, mem_clock=2619.0, reserve=551550976),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", mem=85899345920, idle=62.0, tdp=400.0, clock=1410.0,
                 bw=2.0e12, flops=2.6e14, gpm=False, fan=False, mem_clock=1593.0, reserve=570425344),
    "L40S": dict(name="NVIDIA L40S", mem=48305799168, idle=82.0, tdp=350.0, clock=2520.0,
                 bw=0.864e12, flops=2.4e14, gpm=False, fan=False, mem_clock=9001.0, reserve=530579456),
    "A10G": dict(name="NVIDIA A10G", mem=23836033024, idle=57.0, tdp=300.0, clock=1710.0,
                 bw=0.6e12, flops=0.9e14, gpm=False, fan=False, mem_clock=6251.0, reserve=450887680),
    "RTX6000": dict(name="NVIDIA RTX 6000 Ada Generation", mem=51527024640, idle=64.0, tdp=300.0,
                    clock=2505.0, bw=0.96e12, flops=2.5e14, gpm=False, fan=True, mem_clock=10001.0,
                    reserve=530579456),
}
NO_GPM = {"sm_active_pct": "needs Hopper+ (GPM)", "sm_occupancy_pct": "needs Hopper+ (GPM)",
          "dram_bw_pct": "needs Hopper+ (GPM)", "tensor_pct": "needs Hopper+ (GPM)",
          "pcie_rx_mib_per_s": "needs Hopper+ (GPM)", "nvlink_rx_mib_per_s": "needs Hopper+ (GPM)"}


def power_model(spec: dict, busy: float, sm: float, tensor: float, dram: float,
                clock_frac: float) -> float:
    """Board power from activity, calibrated on the lab H200: SM 43/tensor 0.6/DRAM 10.5 ->
    ~205 W, SM 45/tensor 12.6/DRAM 21 -> ~385 W, a bf16 matmul wants >700 W (capped);
    one-element kernels at 100% GPU-Util read ~2 W above idle."""
    scale = (spec["tdp"] - spec["idle"]) / (700.0 - 119.0)
    dyn = (1.2 * sm + 13.1 * tensor + 1.95 * dram + 2.5 * busy) * scale
    dyn *= 0.35 + 0.65 * clock_frac ** 2.2
    return spec["idle"] + dyn


class GpuState:
    """One GPU's slowly moving physical state (temperature, P-state jitter)."""

    def __init__(self, rng: random.Random, spec_key: str, index: int, ambient: float = 30.0):
        self.rng, self.key, self.spec, self.index = rng, spec_key, GPU_SPECS[spec_key], index
        self.temp = ambient + rng.uniform(4, 9)
        self.ambient = ambient
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(
            rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        self.bus = "00000000:%02X:00.0" % (0x18 + 0x10 * index if index < 8 else 0x9A + index)
        self.ecc = rng.choice([0, 0, 0, 2, 14])
        self.thermal_resist = 0.075 if spec_key in ("H200", "H100") else 0.16

    def sample(self, dt: float, busy: float, sm: float | None, occ: float | None,
               tensor: float | None, dram: float | None, mem_used: int, *,
               clock_cap: float | None = None, throttle: tuple[str, ...] = (),
               power_limit: float | None = None, temp_boost: float = 0.0,
               fan_pct: float | None = None, jitter_pstate: bool = False,
               pcie_mib: float = 0.0, nvlink_mib: float = 0.0, extra_power: float = 0.0,
               force_power: float | None = None) -> GpuSample:
        s, rng = self.spec, self.rng
        busy = max(0.0, min(1.0, busy))
        sm_v, occ_v = sm or 0.0, occ or 0.0
        ten_v, dram_v = tensor or 0.0, dram or 0.0
        idle = busy < 0.005 and sm_v < 0.5
        clock = s["clock"]
        if idle:
            clock = s["clock"] if rng.random() < 0.7 else s["clock"] * 0.2
        limit = power_limit or s["tdp"]
        reasons = list(throttle)
        if clock_cap is not None:
            clock = min(clock, clock_cap)
        p = force_power if force_power is not None else power_model(
            s, busy, sm_v, ten_v, dram_v, clock / s["clock"]) + extra_power
        if p > limit and force_power is None:
            # the power governor trades clock for watts (the lab H200 matmul: 1725-1890 MHz)
            over = p / limit
            clock = min(clock, s["clock"] / over ** 0.45)
            clock = 15.0 * round(clock / 15.0)
            p = limit * rng.uniform(0.95, 0.99)
            if "power cap" not in reasons:
                reasons.append("power cap")
        if jitter_pstate and not idle:
            clock = s["clock"] - 15.0 * rng.choice([0, 0, 1, 2, 4, 6])
        p = max(s["idle"] * 0.92, p + rng.gauss(0, 1.5 + 0.012 * p))
        target = self.ambient + 6 + (p * self.thermal_resist) + temp_boost
        self.temp = ema(self.temp, target, dt, 25.0)
        temp = round(self.temp + rng.gauss(0, 0.3))
        util = busy * 100.0
        n = 6 if s["gpm"] else 3
        samples = tuple(float(max(0, min(100, round(util + rng.gauss(0, 2.5 if util < 99 else 0.4)))))
                        for _ in range(n))
        util_v = float(max(0, min(100, round(util + rng.gauss(0, 1.5 if util < 99 else 0.2)))))
        missing: dict[str, str] = {}
        gpm = s["gpm"]
        if not s["fan"]:
            missing["fan_pct"] = "not supported on this GPU"
        if not gpm:
            missing.update(NO_GPM)

        def noisy(v, rel=0.03):
            return max(0.0, min(100.0, v * (1 + rng.gauss(0, rel)) + rng.gauss(0, 0.15)))

        return GpuSample(
            index=self.index, name=s["name"], uuid=self.uuid, util_gpu_pct=util_v,
            util_gpu_samples_pct=samples,
            util_mem_pct=float(round(min(100, dram_v * 1.05 + rng.gauss(0, 0.5)))) if dram_v > 0.6 else 0.0,
            sm_active_pct=noisy(sm_v) if gpm else None,
            sm_occupancy_pct=noisy(occ_v) if gpm else None,
            dram_bw_pct=noisy(dram_v) if gpm else None,
            tensor_pct=noisy(ten_v) if gpm else None,
            mem_total_bytes=s["mem"], mem_used_bytes=int(mem_used),
            mem_reserved_bytes=s["reserve"], power_w=round(p, 3), temp_c=float(temp),
            sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=self.bus,
            fan_pct=(fan_pct if fan_pct is not None else 30.0 + max(0, temp - 40) * 1.2) if s["fan"] else None,
            pstate=0 if not idle or rng.random() < 0.8 else 2,
            power_limit_w=float(limit), mem_clock_mhz=s["mem_clock"],
            pcie_rx_mib_per_s=(max(0.0, pcie_mib * rng.uniform(0.8, 1.2)) if gpm else None),
            pcie_tx_mib_per_s=(max(0.0, pcie_mib * 0.2 * rng.uniform(0.8, 1.2)) if gpm else None),
            nvlink_rx_mib_per_s=(max(0.0, nvlink_mib * rng.uniform(0.9, 1.1)) if gpm else None),
            nvlink_tx_mib_per_s=(max(0.0, nvlink_mib * rng.uniform(0.9, 1.1)) if gpm else None),
            ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing)


# ------------------------------------------------------------------ host and the pinned tree
class Thread:
    def __init__(self, tid: int, pid: int, name: str):
        self.tid, self.pid, self.name, self.cpu_s = tid, pid, name, 0.0


class Tree:
    """A process tree on the host: threads with cumulative CPU, context switches, a quota."""

    def __init__(self, rng: random.Random, label: str, pattern: str, root_pid: int,
                 threads: list[tuple[int, int, str]], cores: tuple[int, ...],
                 ports: tuple[int, ...] = ()):
        self.rng, self.label, self.pattern = rng, label, pattern
        self.root_pid = root_pid
        self.threads = [Thread(*t) for t in threads]
        for th in self.threads:
            th.cpu_s = rng.uniform(5, 60) if th.tid == th.pid else rng.uniform(0.05, 3)
        self.pids = tuple(sorted({t.pid for t in self.threads}))
        self.cores, self.ports = cores, ports
        self.vol = rng.randrange(20000, 400000)
        self.inv = rng.randrange(300, 6000)
        self.quota: float | None = None
        self.periods = 0
        self.throttled = 0

    def run(self, dt: float, rates: dict[str, float], vol_rate: float, inv_rate: float,
            quota: float | None = None, throttled_frac: float = 0.0) -> None:
        for th in self.threads:
            r = rates.get(th.name, rates.get("*", 0.002))
            th.cpu_s += max(0.0, r * dt * self.rng.uniform(0.96, 1.04))
        self.vol += poisson(self.rng, vol_rate * dt)
        self.inv += poisson(self.rng, inv_rate * dt)
        if quota is not None:
            if self.quota is None:
                self.periods = self.throttled = 0
            self.quota = quota
            n = int(round(dt / 0.1))
            self.periods += n
            self.throttled += sum(1 for _ in range(n) if self.rng.random() < throttled_frac)
        else:
            self.quota = None

    @property
    def cpu_s(self) -> float:
        return sum(t.cpu_s for t in self.threads)

    def busiest(self) -> Thread:
        return max(self.threads, key=lambda t: t.cpu_s)

    def pinned(self, psi: float, rq: int) -> PinnedSample:
        top = sorted(self.threads, key=lambda t: -t.cpu_s)[:8]
        q = self.quota
        return PinnedSample(
            label=self.label[:60], pattern=self.pattern, root_pids=(self.root_pid,),
            tree_pids=self.pids, cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol,
            ctx_involuntary=self.inv,
            threads=tuple(ThreadSample(t.tid, t.pid, t.name, round(t.cpu_s, 2)) for t in top),
            cores=self.cores, cpu_pressure_some_pct=round(psi, 2), run_queue=rq,
            listening_ports=self.ports, cpu_quota_cores=q,
            cpu_periods=self.periods if q is not None else None,
            cpu_throttled_periods=self.throttled if q is not None else None)


class Host:
    def __init__(self, rng: random.Random, cpus: int, base_busy_cores: float):
        self.rng, self.cpus, self.base = rng, cpus, base_busy_cores
        self.psi = rng.uniform(0.0, 1.5)
        self.ctx = rng.randrange(10**8, 9 * 10**9)

    def step(self, dt: float, busy_cores: float, runnable: float, psi_target: float,
             ctx_rate: float) -> tuple[HostSample, float, int]:
        rng = self.rng
        self.psi = max(0.0, ema(self.psi, psi_target, dt, 10.0) + rng.gauss(0, 0.15))
        self.ctx += poisson(rng, ctx_rate * dt)
        rq = max(1, int(round(runnable + rng.gauss(0, max(0.6, runnable ** 0.5 * 0.5)))))
        cpu = max(0.1, min(100.0, 100.0 * (busy_cores + rng.gauss(0, 0.1)) / self.cpus))
        return (HostSample(cpu_pct=round(cpu, 1), cpu_pressure_some_pct=round(self.psi, 2),
                           run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx),
                self.psi, rq)


def launch_hists(rng: random.Random, pid: int, dt: float, calls: dict[str, float],
                 stalled_frac: float = 0.0, stall_ms: float = 2.0) -> tuple[LaunchHist, ...]:
    """eBPF uprobe histograms of host-side call durations: a few microseconds per call,
    with the calls during which the launching thread was descheduled lasting milliseconds."""
    out = []
    for api, rate in calls.items():
        n = poisson(rng, rate * dt)
        if n == 0:
            continue
        buckets: dict[int, int] = {}
        total, biggest = 0, 0
        m = min(n, 60)
        base, extra = divmod(n, m)
        n_stalled = sum(1 for _ in range(n) if rng.random() < stalled_frac) if stalled_frac > 0 and n < 20000 else int(n * stalled_frac)
        for i in range(m):
            w = base + (1 if i < extra else 0)
            ns = int(rng.lognormvariate(math.log(3200 if api != "cudaGraphLaunch" else 9000), 0.35))
            idx = bucket_index(ns)
            buckets[idx] = buckets.get(idx, 0) + w
            total += ns * w
            biggest = max(biggest, ns)
        for _ in range(min(n_stalled, 200)):
            ns = int(rng.lognormvariate(math.log(stall_ms * 1e6), 0.6))
            idx = bucket_index(ns)
            buckets[idx] = buckets.get(idx, 0) + 1
            total += ns
            biggest = max(biggest, ns)
        count = sum(buckets.values())
        out.append(LaunchHist(api=api, pid=pid, count=count, sum_ns=total, max_ns=biggest,
                              buckets=buckets))
    return tuple(out)


def sources(engine_ok: bool | None, engine_reason: str = "", ebpf: bool = False,
            engine_age: float = 0.0, engine_poll: float = 0.03) -> dict[str, SourceStatus]:
    src = {"nvml": SourceStatus(ok=True, age_s=0.0, poll_s=0.0055, poll_median_s=0.0053),
           "host": SourceStatus(ok=True, age_s=0.0, poll_s=0.0011, poll_median_s=0.001),
           "pin": SourceStatus(ok=True, age_s=0.0, poll_s=0.0031, poll_median_s=0.003),
           "procfs": SourceStatus(ok=True, age_s=0.0, poll_s=0.0042, poll_median_s=0.004)}
    if engine_ok is not None:
        src["engine"] = (SourceStatus(ok=True, age_s=round(engine_age, 3), poll_s=engine_poll,
                                      poll_median_s=0.028) if engine_ok else
                         SourceStatus(ok=False, reason=engine_reason or "timed out after 1.0 s"))
    if ebpf:
        src["ebpf"] = SourceStatus(ok=True, detail="uprobes on libcudart.so.12, libcuda.so.1",
                                   age_s=0.0, poll_s=0.0009, poll_median_s=0.0009)
    return src


def proc(pid: int, gpu: int, name: str, cmdline: str, mem: int, sm: float | None, cpu_s: float,
         start: float, rss: int, ppid: int = 1, container: str = "", user: str = "svc",
         mem_util: float | None = None) -> ProcSample:
    return ProcSample(pid=pid, gpu_index=gpu, name=name, cmdline=cmdline, user=user, ppid=ppid,
                      start_time_s=start, mem_bytes=int(mem),
                      sm_util_pct=None if sm is None else float(round(max(0, min(100, sm)))),
                      cpu_s=round(cpu_s, 2), rss_bytes=rss, container=container,
                      cgroup=(f"/system.slice/docker-{container.split(':')[-1]}.scope"
                              if container else "/user.slice"),
                      mem_util_pct=None if mem_util is None else float(round(mem_util)))


def make_frame(seq: int, wall: float, mono: float, **parts) -> Frame:
    return Frame(seq=seq, time_wall_s=round(wall, 6), time_mono_s=round(mono, 6), **parts)
