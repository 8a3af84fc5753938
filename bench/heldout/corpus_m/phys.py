"""The physics every signal in corpus M comes from: GPU boards (power, clocks under a power
cap, a first-order thermal model, the activity counters NVML/GPM read), cumulative engine
histograms with the engines' real bucket layouts, eBPF launch-latency histograms in gputop's
log-linear layout, and a host (CPU, PSI avg10, run queue).  Stdlib only (+ gputop.buckets)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from gputop.buckets import bucket_index
from gputop.schema import EngineHistogram, GpuSample, LaunchHist

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
NOT_SUPPORTED = "not supported on this GPU"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclass(frozen=True)
class Spec:
    name: str
    mem_total: int
    hbm_gbs: float  # peak device-memory bandwidth, GB/s
    tflops: float  # dense bf16 tensor peak at max clock, TFLOP/s
    tdp_w: float  # default (and here enforced) power limit
    idle_w: float  # a context present, nothing running
    max_clock: float  # MHz
    gpm: bool
    fan: bool
    r_th: float  # degC per W, die over inlet, at steady state
    tau_s: float  # thermal time constant
    mem_clock: float
    dyn_scale: float  # dynamic power of a full-tensor matmul at max clock, relative to H100
    sms: int
    nvlink_gbs: float  # per direction, all links; 0: PCIe only
    reserved: int  # the driver's reserve (NVML v2 "reserved")


SPECS = {
    "H100": Spec("NVIDIA H100 80GB HBM3", 85520809984, 3350, 989, 700, 72, 1980, True, False,
                 0.052, 40, 2619, 1.0, 132, 450, 595591168),
    "H200": Spec("NVIDIA H200", 150754820096, 4800, 989, 700, 95, 1980, True, False,
                 0.046, 40, 3201, 1.0, 132, 450, 644939776),
    "A100": Spec("NVIDIA A100-SXM4-80GB", 85899345920, 2039, 312, 400, 55, 1410, False, False,
                 0.075, 45, 1593, 0.42, 108, 300, 553648128),
    "L40S": Spec("NVIDIA L40S", 48305799168, 864, 362, 350, 34, 2520, False, True,
                 0.13, 30, 9001, 0.38, 142, 0, 519045120),
    "A10G": Spec("NVIDIA A10G", 24146608128, 600, 70, 300, 24, 1710, False, True,
                 0.16, 30, 6251, 0.33, 80, 0, 347078656),
}


@dataclass
class Work:
    """What a GPU did over one tick, as time fractions (0..1) of the tick."""

    busy: float = 0.0  # a kernel was running (GPU-Util)
    sm: float = 0.0  # SM active (GPM SM_UTIL), <= busy
    occ: float = 0.0  # SM occupancy
    tensor: float = 0.0
    dram: float = 0.0  # bytes moved / (peak x tick)
    nvlink_gbs: float = 0.0
    pcie_gbs: float = 0.0
    compute_bound: float = 0.0  # share of busy time whose speed follows the SM clock


class Board:
    """One GPU: temperature, clock and power evolve tick by tick from the work done."""

    def __init__(self, spec: Spec, index: int, rng, inlet_c: float = 27.0,
                 uuid: str = "", bus: int = 0x18):
        self.spec, self.index, self.rng = spec, index, rng
        self.inlet = inlet_c + rng.uniform(-1.5, 2.5)
        self.temp = self.inlet + 8.0
        self.clock_factor = 1.0
        self.power = spec.idle_w
        self.power_limit = spec.tdp_w
        self.uuid = uuid or "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(48))
        self.bus_id = "00000000:%02X:00.0" % bus
        self.r_factor = 1.0  # cooling: >1 when a fan/cold plate fails
        self.clock_cap = 1.0  # forced (power brake, HW slowdown, application clocks)
        self.forced: tuple[str, ...] = ()
        self.first = True
        self.ecc_corrected = 0

    def dyn_w(self, w: Work) -> float:
        """Dynamic power at max clock for this activity."""
        return self.spec.dyn_scale * (900 * w.tensor + 120 * max(0.0, w.sm - w.tensor)
                                      + 60 * w.tensor + 200 * w.dram + 40 * w.busy)

    def sample(self, w: Work, mem_used: int, dt: float, has_process: bool,
               samples_per_tick: int = 6) -> GpuSample:
        s, rng = self.spec, self.rng
        dyn = self.dyn_w(w)
        f = self.clock_cap
        reasons = list(self.forced)
        headroom = self.power_limit - s.idle_w
        if dyn * f * f > headroom and dyn > 0:
            f = math.sqrt(headroom / dyn)
            reasons.append("power cap")
        if self.temp > 86.5:  # software thermal slowdown holds the die near 87 C
            f_th = max(0.40, 1.0 - (self.temp - 86.5) * 0.11)
            if f_th < f:
                f = f_th
                if "thermal (sw)" not in reasons:
                    reasons.append("thermal (sw)")
            if self.temp > 91 and "hw slowdown" not in reasons:
                reasons.append("hw slowdown")
        f = min(f, 1.0)
        # a little hunting of the controller
        f *= 1.0 + rng.gauss(0, 0.006) if "power cap" in reasons else 1.0
        self.clock_factor = max(0.2, min(1.0, f))
        power = s.idle_w + dyn * self.clock_factor ** 2
        power *= 1.0 + rng.gauss(0, 0.012)
        if "power cap" in reasons:
            power = min(power, self.power_limit * (1 + rng.gauss(0, 0.004)))
        self.power = max(s.idle_w * 0.9, power)
        target = self.inlet + s.r_th * self.r_factor * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / s.tau_s))
        clock = s.max_clock * self.clock_factor if has_process or w.busy > 0.01 else 345.0
        clock = round(clock / 15.0) * 15.0  # NVML reports in clock steps
        util = _pct(w.busy * 100 + rng.gauss(0, 0.8) if w.busy > 0.005 else 0.0)
        nsamp = max(1, int(round(samples_per_tick * dt)))
        samples = tuple(float(int(_pct(util + rng.gauss(0, 2.5 if 3 < util < 97 else 0.6))))
                        for _ in range(nsamp))
        missing: dict[str, str] = {}
        vals: dict = {}
        if s.gpm and not self.first:
            nz = 1.0 + rng.gauss(0, 0.02)
            vals["sm_active_pct"] = _pct(w.sm * 100 * nz)
            vals["sm_occupancy_pct"] = _pct(w.occ * 100 * nz)
            vals["tensor_pct"] = _pct(w.tensor * 100 * (1.0 + rng.gauss(0, 0.025)))
            vals["dram_bw_pct"] = _pct(w.dram * 100 * (1.0 + rng.gauss(0, 0.02)))
            vals["pcie_rx_mib_per_s"] = max(0.0, w.pcie_gbs * 0.5 * 953.7 + rng.uniform(5, 40))
            vals["pcie_tx_mib_per_s"] = max(0.0, w.pcie_gbs * 0.5 * 953.7 + rng.uniform(5, 40))
            if s.nvlink_gbs:
                vals["nvlink_rx_mib_per_s"] = max(0.0, w.nvlink_gbs * 953.7 * (1 + rng.gauss(0, .03)))
                vals["nvlink_tx_mib_per_s"] = max(0.0, w.nvlink_gbs * 953.7 * (1 + rng.gauss(0, .03)))
            else:
                missing["nvlink_rx_mib_per_s"] = missing["nvlink_tx_mib_per_s"] = NOT_SUPPORTED
        elif s.gpm:
            for name in ACTIVITY:
                missing[name] = "GPM needs a second sample"
        else:
            for name in ACTIVITY:
                missing[name] = NO_GPM
        if not s.fan:
            missing["fan_pct"] = NOT_SUPPORTED
        self.first = False
        mem_util = _pct(w.dram * 100 * 0.85 + rng.gauss(0, 0.8)) if w.busy > 0.005 else 0.0
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=float(int(util)),
            util_gpu_samples_pct=samples, util_mem_pct=float(int(mem_util)),
            mem_total_bytes=s.mem_total - s.reserved, mem_used_bytes=int(mem_used),
            mem_reserved_bytes=s.reserved, power_w=round(self.power, 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=clock,
            throttle=tuple(dict.fromkeys(reasons)), bus_id=self.bus_id,
            fan_pct=(float(int(30 + max(0.0, self.temp - 40) * 1.4))) if s.fan else None,
            pstate=0 if has_process else 8, power_limit_w=self.power_limit,
            mem_clock_mhz=s.mem_clock, ecc_corrected=self.ecc_corrected, ecc_uncorrected=0,
            xid_count=0, mig_mode=False, missing=missing, **vals)


def _pct(x: float) -> float:
    return 0.0 if x < 0 else (100.0 if x > 100 else x)


# ----------------------------------------------------------------- engine histograms

VLLM_BOUNDS = {  # vLLM 0.32 V1 (tests/data/vllm-cpu frames, shared/data metrics page)
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
                          2000.0, 5000.0, 10000.0),
}
VLLM_BOUNDS["tpot"] = VLLM_BOUNDS["itl"]
VLLM_BOUNDS["queue"] = VLLM_BOUNDS["e2e"]
VLLM_BOUNDS["max_generation_tokens"] = VLLM_BOUNDS["params_max_tokens"]
VLLM_HISTS = ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens",
              "max_generation_tokens")

SGLANG_BOUNDS = {  # sglang metrics_collector (tests/data/metrics/sglang-source.txt)
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
             100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06,
            0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0,
              15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0,
              400.0, 500.0, 600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0,
              1800.0, 2000.0, 2500.0, 3000.0),
}
SGLANG_HISTS = ("ttft", "itl", "e2e", "queue")


class Hist:
    """A Prometheus histogram: per-bucket counts (the +Inf one last), count and sum."""

    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def add(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: float, rel: float = 0.18) -> None:
        """n observations around value (step-to-step variation)."""
        if n <= 0:
            return
        self.add(value * (1 - rel), n * 0.25)
        self.add(value, n * 0.5)
        self.add(value * (1 + rel * 1.4), n * 0.25)

    def reset(self) -> None:
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.count = self.sum = 0.0

    def emit(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(math.floor(run + 1e-6)))
        return EngineHistogram(self.name, self.bounds, tuple(cum),
                               float(math.floor(self.count + 1e-6)), round(self.sum, 6))


# ----------------------------------------------------------------- eBPF launch histograms

def launch_hist(rng, api: str, pid: int, count: int, median_us: float, sigma: float = 0.35,
                tail_frac: float = 0.0, tail_us: float = 0.0) -> LaunchHist | None:
    """Host-side call durations of ``count`` calls this tick: log-normal around the median,
    with a fraction ``tail_frac`` of calls held off CPU for ~``tail_us`` (preempted)."""
    if count <= 0:
        return None
    draws = min(count, 48)
    scale = count / draws
    buckets: dict[int, int] = {}
    total = 0.0
    top = 0
    n_tail = int(round(count * tail_frac))
    for i in range(draws):
        v = median_us * math.exp(rng.gauss(0, sigma))
        ns = max(200, int(v * 1000))
        b = bucket_index(ns)
        buckets[b] = buckets.get(b, 0) + 1
        total += ns
        top = max(top, ns)
    out = {b: max(1, int(round(c * scale))) for b, c in buckets.items()}
    # keep the count exact
    diff = count - n_tail - sum(out.values())
    first = min(out)
    out[first] = max(1, out[first] + diff)
    total_ns = int(total * scale)
    for _ in range(n_tail):
        ns = int(tail_us * 1000 * math.exp(rng.gauss(0, 0.7)))
        b = bucket_index(ns)
        out[b] = out.get(b, 0) + 1
        total_ns += ns
        top = max(top, ns)
    return LaunchHist(api=api, pid=pid, count=sum(out.values()), sum_ns=total_ns, max_ns=top,
                      buckets=out)


def offcpu_hist(rng, pid: int, switches: int, median_us: float) -> LaunchHist | None:
    if switches <= 0:
        return None
    draws = min(switches, 32)
    scale = switches / draws
    buckets: dict[int, int] = {}
    total, top = 0, 0
    for _ in range(draws):
        ns = int(median_us * 1000 * math.exp(rng.gauss(0, 0.8)))
        b = bucket_index(max(1000, ns))
        buckets[b] = buckets.get(b, 0) + 1
        total += ns
        top = max(top, ns)
    out = {b: max(1, int(round(c * scale))) for b, c in buckets.items()}
    return LaunchHist(api="off-cpu", pid=pid, count=sum(out.values()),
                      sum_ns=int(total * scale), max_ns=top, buckets=out)


# ----------------------------------------------------------------- the host

class Host:
    """Host CPU: demand from the workload and from others; PSI "some" avg10 as the kernel
    computes it (an exponential average over 10 s of the share of time some task waited)."""

    def __init__(self, cpus: int, rng):
        self.cpus, self.rng = cpus, rng
        self.psi = 0.3
        self.ctx = rng.randrange(10**8, 10**10)

    def tick(self, dt: float, demand_cores: float, ctx_rate: float = 20000.0):
        """(cpu_pct, psi avg10, run queue, ctx switches total, share of demand served)."""
        rng = self.rng
        util = demand_cores / self.cpus
        served = 1.0 if util <= 0.92 else 0.92 / util
        # time some runnable task waited: grows fast as the machine nears saturation
        inst = 100 * min(1.0, max(0.0, (util - 0.55) * 1.6) ** 1.5 if util > 0.55 else 0.0)
        inst = max(0.0, inst + rng.gauss(0, 0.6)) if util > 0.2 else max(0.0, rng.gauss(0.2, 0.2))
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        cpu_pct = max(0.5, min(100.0, util * 100 * (1 + rng.gauss(0, 0.03))))
        rq = max(1, int(round(min(demand_cores, self.cpus * 4) * 0.7 + rng.gauss(0, 1.0)
                              + max(0.0, demand_cores - self.cpus))))
        self.ctx += int(ctx_rate * dt * (1 + rng.gauss(0, 0.05)) * (1 + 3 * max(0.0, util - 0.8)))
        return round(cpu_pct, 1), round(self.psi, 2), rq, self.ctx, served
