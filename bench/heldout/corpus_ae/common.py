"""Boards, host, processes and engine-page helpers shared by every trace of corpus_ae."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from gputop.schema import (EngineHistogram, GpuSample, HostSample, LaunchHist, MigSample,
                           PinnedSample, ProcSample, SourceStatus, ThreadSample)
from gputop.buckets import bucket_index

GIB = 2**30


@dataclass(frozen=True)
class Board:
    name: str
    mem_gib: float
    hbm_tbs: float       # HBM/GDDR bandwidth
    tdp_w: float
    idle_w: float
    clock_mhz: float     # boost clock under load
    mem_clock_mhz: float
    gpm: bool            # Hopper+: GPM gives SM / tensor / DRAM activity
    fan: bool            # PCIe boards with a fan report fan_pct
    tflops: float        # dense bf16
    util_samples: int    # driver GPU-Util samples per second


BOARDS = {
    "H100 SXM": Board("NVIDIA H100 80GB HBM3", 79.6, 3.35, 700, 72, 1980, 2619, True, False, 989, 6),
    "H100 PCIe": Board("NVIDIA H100 PCIe", 79.6, 2.0, 350, 48, 1755, 1593, True, True, 756, 6),
    "H200": Board("NVIDIA H200", 140.4, 4.8, 700, 76, 1980, 3201, True, False, 989, 5),
    "B200": Board("NVIDIA B200", 179.1, 8.0, 1000, 140, 1965, 3996, True, False, 2250, 6),
    "GH200": Board("NVIDIA GH200 480GB", 95.0, 4.0, 900, 90, 1980, 2619, True, False, 989, 6),
    "A100 80GB": Board("NVIDIA A100-SXM4-80GB", 80.0, 2.04, 400, 60, 1410, 1593, False, False, 312, 6),
    "A100 40GB": Board("NVIDIA A100-SXM4-40GB", 40.0, 1.55, 400, 55, 1410, 1215, False, False, 312, 6),
    "L40S": Board("NVIDIA L40S", 44.5, 0.864, 350, 35, 2520, 9001, False, True, 362, 6),
    "L4": Board("NVIDIA L4", 22.5, 0.3, 72, 16, 2040, 6251, False, True, 121, 6),
    "A10G": Board("NVIDIA A10G", 22.5, 0.6, 300, 25, 1710, 6251, False, True, 70, 6),
    "RTX 6000 Ada": Board("NVIDIA RTX 6000 Ada Generation", 48.0, 0.96, 300, 28, 2505, 10001, False, True, 364, 6),
}


@dataclass
class Load:
    """What one GPU did during one tick, as fractions 0..1 of the tick."""
    busy: float = 0.0      # some kernel ran (NVML GPU-Util)
    sm: float = 0.0        # SM active (cycles with a warp resident)
    tensor: float = 0.0
    dram: float = 0.0      # bytes moved / peak bandwidth
    occ: float | None = None
    clock_cap: float = 1.0  # fraction of boost clock allowed by a limit
    reasons: tuple[str, ...] = ()
    extra_heat_c: float = 0.0  # cooling fault
    pcie_mib: float = 50.0
    nvlink_mib: float = 0.0


def clamp(x, lo=0.0, hi=1.0):
    return max(lo, min(hi, x))


class GpuModel:
    """One board: power from the work done, temperature with thermal lag, clocks and reasons."""

    def __init__(self, board: Board, index: int, rng: random.Random, power_limit_w=None,
                 ambient_c=30.0, mig=None, bus=None):
        self.b, self.i, self.rng = board, index, rng
        self.limit = power_limit_w or board.tdp_w
        self.temp = ambient_c + 6
        self.ambient = ambient_c
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(rng.getrandbits(n) for n in (32, 16, 16, 16, 48))
        self.bus = bus or "00000000:%02X:00.0" % (0x18 + 0x10 * index)
        self.ecc = 0
        self.xid = 0
        self.xid_last = None
        self.mig = mig  # list of (profile, sm_count, mem_gib)
        self.reserved = int(0.5 * GIB) if board.mem_gib > 30 else int(0.35 * GIB)
        self.prev_util = 0.0

    def sample(self, load: Load, mem_used: int, mig_loads=None, mig_used=None) -> GpuSample:
        b, r = self.b, self.rng
        busy = clamp(load.busy)
        # power: static + activity terms (tensor work dominates, DRAM next)
        dyn = 0.18 * busy + 0.22 * load.sm + 0.45 * load.tensor + 0.25 * load.dram
        want = b.idle_w + (b.tdp_w - b.idle_w) * clamp(dyn) * 1.05
        cap = load.clock_cap
        reasons = list(load.reasons)
        if want > self.limit:
            # clocks fall until power fits: power ~ clock^2 roughly over dynamic part
            f = math.sqrt(max(0.3, (self.limit - b.idle_w) / max(1.0, want - b.idle_w)))
            cap = min(cap, f)
            want = self.limit * (0.97 + 0.02 * r.random())
            if "power cap" not in reasons:
                reasons.append("power cap")
        if cap < 1.0 and not reasons:
            reasons.append("power cap")
        power = want * (cap ** 1.6 if load.clock_cap < 1 else 1.0)
        power = max(b.idle_w * 0.9, power + r.gauss(0, 0.012 * b.tdp_w))
        # temperature approaches a target with lag
        target = self.ambient + 8 + 48 * (power / b.tdp_w) + load.extra_heat_c
        self.temp += (target - self.temp) * 0.08 + r.gauss(0, 0.25)
        if busy > 0.02:
            clock = b.clock_mhz * cap
            if cap >= 1.0:
                clock -= r.choice((0, 0, 0, 15, 30))
        else:
            clock = b.clock_mhz * (0.1 if b.fan else 0.175) * cap if not self.mig else b.clock_mhz
        clock = round(clock / 15) * 15
        # NVML utilization: samples at the driver's period, aliasing with short bursts
        n = b.util_samples
        samples = []
        for _ in range(n):
            if busy >= 0.999:
                samples.append(100.0)
            else:
                s = busy + r.gauss(0, 0.08 * math.sqrt(max(busy * (1 - busy), 0.0)) * 2.5)
                samples.append(float(round(100 * clamp(s))))
        util = float(round(sum(samples) / n))
        missing = {}
        sm = tensor = dram = occ = None
        pci_rx = pci_tx = nvl_rx = nvl_tx = None
        if self.mig:
            missing["util_gpu_pct"] = "not available with MIG enabled"
            util, samples = None, ()
        if b.gpm and not self.mig:
            sm = round(100 * clamp(load.sm + r.gauss(0, 0.012)), 2)
            tensor = round(100 * clamp(load.tensor + r.gauss(0, 0.006)), 2)
            dram = round(100 * clamp(load.dram + r.gauss(0, 0.01)), 2)
            occ = round(100 * clamp((load.occ if load.occ is not None else load.sm * 0.35) + r.gauss(0, 0.01)), 2)
            pci_rx = max(0.0, load.pcie_mib * (1 + r.gauss(0, 0.2)))
            pci_tx = max(0.0, load.pcie_mib * 0.3 * (1 + r.gauss(0, 0.2)))
            nvl_rx = max(0.0, load.nvlink_mib * (1 + r.gauss(0, 0.05)))
            nvl_tx = max(0.0, load.nvlink_mib * (1 + r.gauss(0, 0.05)))
        else:
            why = "needs Hopper+ (GPM)" if not b.gpm else "GPM per MIG instance only"
            for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct",
                      "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                      "nvlink_tx_mib_per_s"):
                missing[k] = why
        if not b.fan:
            missing["fan_pct"] = "not supported on this GPU"
        migs = ()
        if self.mig:
            ms = []
            for j, (prof, smc, gib) in enumerate(self.mig):
                ml = (mig_loads or {}).get(j, Load())
                mm = {}
                if b.gpm:
                    vals = dict(sm_active_pct=round(100 * clamp(ml.sm + r.gauss(0, 0.01)), 2),
                                tensor_pct=round(100 * clamp(ml.tensor + r.gauss(0, 0.005)), 2),
                                dram_bw_pct=round(100 * clamp(ml.dram + r.gauss(0, 0.01)), 2),
                                sm_occupancy_pct=round(100 * clamp(ml.sm * 0.3), 2))
                else:
                    vals = {}
                    mm = {k: "needs Hopper+ (GPM)" for k in ("sm_active_pct", "tensor_pct", "dram_bw_pct", "sm_occupancy_pct")}
                ms.append(MigSample(index=j, name=f"{b.name} MIG {prof}", uuid=f"MIG-{self.uuid[4:]}-{j}",
                                    mem_total_bytes=int(gib * GIB), mem_used_bytes=int((mig_used or {}).get(j, 0)),
                                    gpu_instance_id=j + 1, compute_instance_id=0, profile=prof,
                                    sm_count=smc, missing=mm, **vals))
            migs = tuple(ms)
        return GpuSample(
            index=self.i, name=b.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=tuple(samples), util_mem_pct=None if self.mig else float(round(100 * clamp(load.dram * 0.9 + r.gauss(0, 0.01)))),
            sm_active_pct=sm, sm_occupancy_pct=occ, dram_bw_pct=dram, tensor_pct=tensor,
            mem_total_bytes=int(b.mem_gib * GIB), mem_used_bytes=int(mem_used),
            mem_reserved_bytes=self.reserved, power_w=round(power, 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=self.bus,
            fan_pct=float(round(30 + 0.6 * max(0, self.temp - 35))) if b.fan else None,
            pstate=0 if busy > 0.02 or mem_used > 2 * GIB else 8, power_limit_w=float(self.limit),
            mem_clock_mhz=b.mem_clock_mhz, pcie_rx_mib_per_s=pci_rx, pcie_tx_mib_per_s=pci_tx,
            nvlink_rx_mib_per_s=nvl_rx, nvlink_tx_mib_per_s=nvl_tx, ecc_corrected=self.ecc,
            ecc_uncorrected=0, xid_count=self.xid, xid_last=self.xid_last,
            mig_mode=bool(self.mig), missing=missing, migs=migs)


class Proc:
    """A process on a GPU with cumulative CPU time."""

    def __init__(self, pid, gpu, name, cmdline, pod, start, user="1000", mem=0, rss=2 * GIB,
                 container=None, mig_index=None):
        self.pid, self.gpu, self.name, self.cmdline, self.pod = pid, gpu, name, cmdline, pod
        self.start, self.user, self.mem, self.rss = start, user, mem, rss
        self.cpu_s = 3.0 + (pid % 97) * 0.1
        self.container = container or "containerd:%012x" % (pid * 7919 % (1 << 48))
        self.mig_index = mig_index
        self.sm = None

    def sample(self, alone=True, mem_util=None) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=1, start_time_s=self.start, mem_bytes=int(self.mem),
                          sm_util_pct=None if self.sm is None else float(round(self.sm)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=int(self.rss),
                          container=self.container, pod=self.pod,
                          cgroup=f"/kubepods.slice/kubepods-burstable.slice/cri-containerd-{self.container[-12:]}.scope",
                          mem_util_pct=mem_util, mig_index=self.mig_index)


class Host:
    """The node: CPU, run queue, PSI (avg10 lag), context switches."""

    def __init__(self, rng, cpus, base_cpu=0.12, psi_visible=True):
        self.rng, self.cpus, self.base = rng, cpus, base_cpu
        self.psi = 2.0
        self.ctx = 10_000_000 + rng.randrange(1_000_000)
        self.psi_visible = psi_visible

    def sample(self, demand_cores: float, tick_s=1.0) -> HostSample:
        r = self.rng
        load = self.base * self.cpus + demand_cores
        cpu = 100 * clamp(load / self.cpus + r.gauss(0, 0.01))
        over = max(0.0, load / self.cpus - 0.75) * 4
        target = min(95.0, 1.5 + 100 * clamp(over) * 0.9)
        self.psi += (target - self.psi) * (1 - math.exp(-tick_s / 10)) + r.gauss(0, 0.3)
        self.psi = max(0.0, self.psi)
        rq = max(1, int(round(load * (1 + over) + r.gauss(0, 1))))
        self.ctx += int((20000 + 3000 * load) * tick_s * (1 + 0.05 * r.random()))
        return HostSample(cpu_pct=round(cpu, 1), cpu_pressure_some_pct=round(self.psi, 2) if self.psi_visible else None,
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx)


class Hist:
    """A cumulative Prometheus histogram fed with observations."""

    def __init__(self, name, bounds):
        self.name, self.bounds = name, tuple(bounds)
        self.reset()

    def reset(self):
        self.cum = [0] * len(self.bounds)
        self.count = 0
        self.sum = 0.0

    def observe(self, v, n=1):
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.cum[i] += n
        self.count += n
        self.sum += v * n

    def observe_lognormal(self, rng, median, sigma, n):
        n = int(n)
        if n <= 0:
            return
        # at most 40 draws, each weighted
        draws = min(n, 40)
        w, rem = divmod(n, draws)
        for k in range(draws):
            self.observe(median * math.exp(rng.gauss(0, sigma)), w + (1 if k < rem else 0))

    def sample(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(float(c) for c in self.cum),
                               float(self.count), round(self.sum, 6))


VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
             10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
            20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
            240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1, 2, 5, 10, 20)
VLLM_MAXTOK = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
            200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320, 640)
TGI_TPOT = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.024)
TGI_E2E = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 102.4)


def launch_hist(rng, api, pid, calls, median_us, tail_frac, tail_us) -> LaunchHist:
    """Host-side call durations: a lognormal body and a fraction descheduled for tail_us."""
    buckets: dict[int, int] = {}
    total = 0
    mx = 0
    draws = 60
    for k in range(draws):
        w = calls // draws + (1 if k < calls % draws else 0)
        if w <= 0:
            continue
        if rng.random() < tail_frac:
            v = tail_us * math.exp(rng.gauss(0, 0.6))
        else:
            v = median_us * math.exp(rng.gauss(0, 0.35))
        ns = int(v * 1000)
        i = bucket_index(ns)
        buckets[i] = buckets.get(i, 0) + w
        total += ns * w
        mx = max(mx, ns)
    return LaunchHist(api=api, pid=pid, count=int(calls), sum_ns=int(total), max_ns=int(mx),
                      buckets=dict(sorted(buckets.items())))


def ok(detail=None, age=None):
    return SourceStatus(True, None, detail, age)


def down(reason):
    return SourceStatus(False, reason)


def threads_of(pid, main_cpu, others):
    ts = [ThreadSample(tid=pid + 35, pid=pid, name="python3", cpu_s=round(main_cpu, 2)),
          ThreadSample(tid=pid, pid=pid, name="python3", cpu_s=round(others, 2)),
          ThreadSample(tid=pid + 17, pid=pid, name="cuda-EvtHandlr", cpu_s=0.05)]
    return tuple(ts)


def pinned(label, pid, cpu_s, invol, vol, main_cpu, quota=None, periods=None, throttled=None,
           psi=None, rq=None, port=None):
    return PinnedSample(label=label, root_pids=(pid,), tree_pids=(pid,), cpu_s=round(cpu_s, 2),
                        ctx_voluntary=int(vol), ctx_involuntary=int(invol),
                        threads=threads_of(pid, main_cpu, cpu_s - main_cpu),
                        cpu_pressure_some_pct=psi, run_queue=rq,
                        listening_ports=(port,) if port else (), cpu_quota_cores=quota,
                        cpu_periods=periods, cpu_throttled_periods=throttled)
