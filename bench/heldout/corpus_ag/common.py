"""Boards, models, GPU physics, host and process models shared by every trace.

Everything a frame holds is derived here from one per-tick description of the work a GPU
did (``Load``): kernel-time fraction, SM / tensor / DRAM work, memory, and the limits the
board runs under.  Power, clocks, temperature and clocks-event reasons follow from those.
"""

from __future__ import annotations

import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.schema import (EngineHistogram, GpuSample, HostSample, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

GiB = 2**30


@dataclass(frozen=True)
class Board:
    name: str
    mem_gib: float
    bw_tbs: float  # HBM/GDDR bandwidth
    tflops: float  # dense bf16 tensor peak
    tdp_w: float
    idle_w: float
    max_mhz: float
    idle_mhz: float
    mem_mhz: float
    gpm: bool  # NVML GPM (Hopper and newer)
    fan: bool  # a fan NVML can read
    nvlink: bool
    util_period_s: float  # driver's GPU-Util sample period
    slowdown_c: float  # thermal slowdown threshold
    reserve_gib: float = 0.56


BOARDS = {
    "H100 SXM": Board("NVIDIA H100 80GB HBM3", 79.6, 3.35, 989, 700, 72, 1980, 345, 2619, True, False, True, 1 / 6, 87),
    "H100 PCIe": Board("NVIDIA H100 PCIe", 79.6, 2.0, 756, 350, 48, 1755, 345, 1593, True, False, False, 1 / 6, 85),
    "H200": Board("NVIDIA H200", 140.4, 4.8, 989, 700, 76, 1980, 345, 3201, True, False, True, 1 / 6, 87),
    "B200": Board("NVIDIA B200", 179.1, 8.0, 2250, 1000, 140, 1965, 600, 3996, True, False, True, 1 / 6, 87),
    "GB200": Board("NVIDIA GB200", 184.0, 8.0, 2500, 1200, 160, 2062, 600, 3996, True, False, True, 1 / 6, 87),
    "A100 80GB": Board("NVIDIA A100-SXM4-80GB", 79.2, 2.04, 312, 400, 55, 1410, 210, 1593, False, False, True, 1 / 6, 85),
    "L40S": Board("NVIDIA L40S", 44.5, 0.864, 362, 350, 35, 2520, 210, 9001, False, False, False, 1.0, 88),
    "L4": Board("NVIDIA L4", 22.5, 0.3, 121, 72, 16, 2040, 210, 6251, False, False, False, 1.0, 85),
    "A10G": Board("NVIDIA A10G", 22.5, 0.6, 125, 300, 18, 1710, 210, 6251, False, True, False, 1.0, 88),
    "RTX PRO 6000": Board("NVIDIA RTX PRO 6000 Blackwell Server Edition", 95.6, 1.79, 500, 600, 40, 2617, 180, 14001, True, False, False, 1 / 6, 88),
}


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float  # total parameters, billions
    active_b: float  # active per token (MoE)
    layers: int
    d_model: int
    kv_bytes_tok: int  # whole model, per token, in the KV dtype
    wbytes: float = 2.0  # bytes per weight (bf16 2, fp8 1, int4 0.5)
    vocab: int = 128256

    @property
    def weights_bytes(self) -> float:
        return self.params_b * 1e9 * self.wbytes


def kvb(layers, kv_heads, head_dim, dtype_bytes=2, mla=False):
    return (1 if mla else 2) * layers * kv_heads * head_dim * dtype_bytes


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 8.03, 32, 4096, kvb(32, 8, 128)),
    "llama8b-fp8": Model("neuralmagic/Llama-3.1-8B-Instruct-FP8", 8.03, 8.03, 32, 4096, kvb(32, 8, 128), 1.0),
    "llama70b-fp8": Model("meta-llama/Llama-3.3-70B-Instruct-FP8", 70.6, 70.6, 80, 8192, kvb(80, 8, 128, 1), 1.0),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 70.6, 80, 8192, kvb(80, 8, 128)),
    "qwen32b-awq": Model("Qwen/Qwen2.5-32B-Instruct-AWQ", 32.8, 32.8, 64, 5120, kvb(64, 8, 128), 0.55, 152064),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 7.6, 28, 3584, kvb(28, 4, 128), 2.0, 152064),
    "qwen3-30b-a3b": Model("Qwen/Qwen3-30B-A3B-FP8", 30.5, 3.3, 48, 2048, kvb(48, 4, 128), 1.0, 151936),
    "dsv3": Model("deepseek-ai/DeepSeek-V3.1", 671, 37, 61, 7168, kvb(61, 1, 576, 1, True), 1.0, 129280),
    "gptoss120b": Model("openai/gpt-oss-120b", 117, 5.1, 36, 2880, kvb(36, 8, 64), 0.53, 201088),
    "mistral24b": Model("mistralai/Mistral-Small-3.2-24B-Instruct-2506", 24, 24, 40, 5120, kvb(40, 8, 128), 2.0, 131072),
    "qwen-vl7b": Model("Qwen/Qwen2.5-VL-7B-Instruct", 8.3, 8.3, 28, 3584, kvb(28, 4, 128), 2.0, 152064),
    "gemma27b": Model("google/gemma-3-27b-it", 27.4, 27.4, 62, 5376, kvb(62, 16, 128), 2.0, 262144),
    "embed": Model("BAAI/bge-m3", 0.57, 0.57, 24, 1024, 0, 2.0, 250002),
    "rerank": Model("BAAI/bge-reranker-v2-m3", 0.57, 0.57, 24, 1024, 0, 2.0, 250002),
    "llama3b": Model("meta-llama/Llama-3.2-3B-Instruct", 3.2, 3.2, 28, 3072, kvb(28, 8, 128)),
}


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


def clip(x, lo=0.0, hi=1.0):
    return lo if x < lo else hi if x > hi else x


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    k, p, L = 0, 1.0, math.exp(-lam)
    while True:
        p *= rng.random()
        if p < L:
            return k
        k += 1


# ---------------------------------------------------------------- GPU physics

@dataclass
class Load:
    """What one GPU did over one tick (fractions of the tick, 0..1)."""
    util: float = 0.0  # fraction of time >= 1 kernel ran
    sm: float = 0.0  # SM activity (time x fraction of SMs with a warp)
    tensor: float = 0.0
    dram: float = 0.0
    mem_bytes: float = 0.0  # what processes hold
    sub: tuple = ()  # optional per-driver-sample util fractions (bursty work)
    clock_cap_mhz: float | None = None  # a cap imposed from outside (row remap, app clocks)
    power_limit_w: float | None = None  # enforced limit if not the board's default
    brake: bool = False  # external power brake asserted (rack budget)
    hw_slowdown: bool = False
    cooling: float = 1.0  # >1: weaker cooling (thermal resistance multiplier)
    pcie_mib: float = 50.0
    nvlink_mib: float = 0.0
    occupancy: float | None = None
    has_procs: bool = True


@dataclass
class GpuState:
    temp: float
    ecc: int = 0


def finish_gpu(board: Board, index: int, load: Load, state: GpuState, rng: random.Random,
               dt: float, bus: str, uuid: str) -> GpuSample:
    util = clip(load.util)
    limit = load.power_limit_w or board.tdp_w
    reasons = []
    clock = board.max_mhz if (util > 0.005 or load.has_procs) else board.idle_mhz
    if load.clock_cap_mhz:
        clock = min(clock, load.clock_cap_mhz)
    if load.brake:
        clock = min(clock, board.max_mhz * 0.55)
        reasons.append("power brake")
    if load.hw_slowdown:
        clock = min(clock, board.max_mhz * 0.5)
        reasons.append("hw slowdown")
    # thermal: slowdown engages once the die reaches the threshold
    if state.temp >= board.slowdown_c and util > 0.05:
        over = state.temp - board.slowdown_c + 1
        clock = min(clock, board.max_mhz * clip(0.8 - 0.05 * over, 0.45, 0.8))
        reasons.append("thermal (sw)")
    act = 0.12 * util + 0.22 * load.sm + 0.5 * load.tensor + 0.3 * load.dram
    f = clock / board.max_mhz
    power = board.idle_w + (board.tdp_w - board.idle_w) * act * (0.35 + 0.65 * f ** 1.6)
    if util < 0.005 and clock <= board.idle_mhz:
        power = board.idle_w * 0.7
    if power > limit * 0.985 and util > 0.05:
        # the power controller drops the clock until the board sits at its limit
        over = power / limit
        clock = clock * clip(over ** (-1 / 1.6), 0.35, 1.0)
        power = limit * rng.uniform(0.965, 0.995)
        reasons.append("power cap")
    power *= rng.uniform(0.985, 1.015)
    # temperature follows power with a ~40 s time constant
    ambient = 30.0
    r_th = (72.0 - ambient) / board.tdp_w * load.cooling
    target = ambient + r_th * power
    state.temp += (target - state.temp) * (1 - math.exp(-dt / 40.0))
    temp = round(state.temp + rng.uniform(-0.4, 0.4))
    clock = round(clock / 15) * 15
    # NVML's GPU-Util: the driver's samples over the tick, the reading is the last period's
    n = max(1, round(dt / board.util_period_s))
    if load.sub:
        subs = [load.sub[int(i * len(load.sub) / n)] for i in range(n)]
    else:
        subs = [util] * n
    samples = tuple(float(round(100 * clip(s + (rng.gauss(0, 0.02) if 0.02 < s < 0.98 else 0))))
                    for s in subs)
    reading = samples[-1] if n == 1 else float(round(sum(samples[-min(n, 6):]) / min(n, 6)))
    missing = {}
    gpm = {}
    if board.gpm:
        jit = lambda v: clip(v * rng.uniform(0.96, 1.04)) * 100  # noqa: E731
        occ = load.occupancy if load.occupancy is not None else load.sm * 0.35
        gpm = dict(sm_active_pct=jit(load.sm), sm_occupancy_pct=jit(occ), dram_bw_pct=jit(load.dram),
                   tensor_pct=jit(load.tensor),
                   pcie_rx_mib_per_s=load.pcie_mib * rng.uniform(0.8, 1.2),
                   pcie_tx_mib_per_s=load.pcie_mib * 0.3 * rng.uniform(0.8, 1.2),
                   nvlink_rx_mib_per_s=load.nvlink_mib * rng.uniform(0.9, 1.1) if board.nvlink else 0.0,
                   nvlink_tx_mib_per_s=load.nvlink_mib * rng.uniform(0.9, 1.1) if board.nvlink else 0.0)
    else:
        for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
            missing[k] = "needs Hopper+ (GPM) or DCGM profiling"
        for k in ("pcie_rx_mib_per_s", "nvlink_rx_mib_per_s"):
            missing[k] = "needs Hopper+ (GPM)"
    if not board.fan:
        missing["fan_pct"] = "not supported on this GPU"
    mem_util = clip(load.dram * 1.15 if load.dram else 0.0)
    reserve = int(board.reserve_gib * GiB)
    total = int(board.mem_gib * GiB)
    used = int(min(total - reserve, load.mem_bytes + (0 if load.mem_bytes == 0 else 5 * 2**20)))
    return GpuSample(
        index=index, name=board.name, uuid=uuid, util_gpu_pct=reading, util_gpu_samples_pct=samples,
        util_mem_pct=float(round(100 * mem_util)), mem_total_bytes=total, mem_used_bytes=used,
        mem_reserved_bytes=reserve, power_w=round(power, 3), temp_c=float(temp),
        sm_clock_mhz=float(clock), throttle=tuple(reasons), bus_id=bus,
        fan_pct=(float(round(30 + 50 * clip((state.temp - 35) / 50)))) if board.fan else None,
        pstate=0 if (util > 0 or load.has_procs) else 8, power_limit_w=float(limit),
        mem_clock_mhz=board.mem_mhz, ecc_corrected=state.ecc, ecc_uncorrected=0, xid_count=0,
        mig_mode=False, missing=missing, **gpm)


def slow_factor(sample: GpuSample, board: Board) -> float:
    """How much slower compute ran at this sample's clock (1.0 = full clock)."""
    return board.max_mhz / max(1.0, sample.sm_clock_mhz or board.max_mhz)


# ---------------------------------------------------------------- histograms

def lognorm_cdf(x: float, mean: float, sigma: float) -> float:
    if x <= 0 or mean <= 0:
        return 0.0
    mu = math.log(mean) - sigma * sigma / 2
    return 0.5 * (1 + math.erf((math.log(x) - mu) / (sigma * math.sqrt(2))))


class Hist:
    """A cumulative Prometheus histogram fed with mixtures of lognormal observations."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, tuple(float(b) for b in bounds)
        self.cum = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0

    def observe(self, n: float, mean: float, sigma: float = 0.3):
        n = int(round(n))
        if n <= 0 or mean <= 0:
            return
        prev = 0
        for i, b in enumerate(self.bounds):
            c = int(round(n * lognorm_cdf(b, mean, sigma)))
            c = max(c, prev)
            self.cum[i] += c
            prev = c
        self.count += n
        self.sum += n * mean

    def observe_value(self, v: float, n: int = 1):
        for i, b in enumerate(self.bounds):
            if v <= b:
                self.cum[i] += n
        self.count += n
        self.sum += v * n

    def sample(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(float(c) for c in self.cum),
                               float(self.count), round(self.sum, 6))


VLLM_B = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0),
}
VLLM_B["tpot"] = VLLM_B["itl"]
VLLM_B["queue"] = VLLM_B["e2e"]
SGL_B = {
    "ttft": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0),
    "itl": (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0),
    # e2e: SGLang's default layout (guessed from its collector's bucket list)
    "e2e": (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 400.0, 800.0),
    "queue": (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0),
}
# TGI: metrics-exporter-prometheus buckets as TGI's router configures them (guessed layout)
TGI_B = {
    "tpot": tuple(round(0.001 * 1.5 ** i, 6) for i in range(20)),
    "e2e": tuple(round(0.001 * 1.5 ** i, 6) for i in range(35)),
    "queue": tuple(round(0.0001 * 1.5 ** i, 6) for i in range(35)),
}


# ---------------------------------------------------------------- host, processes

@dataclass
class Proc:
    pid: int
    gpu: int
    name: str
    cmdline: str
    start: float
    mem: float = 0.0
    rss: float = 4 * GiB
    user: str = "inference"
    container: str = ""
    pod: str = ""
    cgroup: str = ""
    ppid: int = 1
    cpu_s: float = 0.0

    def sample(self, sm_util=None) -> ProcSample:
        return ProcSample(pid=self.pid, gpu_index=self.gpu, name=self.name, cmdline=self.cmdline,
                          user=self.user, ppid=self.ppid, start_time_s=round(self.start, 2),
                          mem_bytes=int(self.mem) if self.mem else None,
                          sm_util_pct=None if sm_util is None else float(round(sm_util)),
                          cpu_s=round(self.cpu_s, 2), rss_bytes=int(self.rss),
                          container=self.container, pod=self.pod, cgroup=self.cgroup)


@dataclass
class Host:
    """One host's CPUs: demand from the engine tree and from everything else."""
    cpus: int
    name: str
    psi_avg: float = 0.0
    ctx_total: int = 0
    runq_base: float = 2.0

    def tick(self, rng, dt, tree_demand, other_demand, pinned_cores=None):
        """Share the CPUs: returns (tree_got, host_sample).  Demands are in cores."""
        cores = pinned_cores or self.cpus
        total = tree_demand + other_demand
        scale = min(1.0, self.cpus / total) if total > 0 else 1.0
        tree_got = tree_demand * scale
        if pinned_cores:
            tree_got = min(tree_got, pinned_cores * 0.97)
        waiting = max(0.0, total - self.cpus)
        some = clip(waiting / max(1.0, total) * 1.4 + rng.uniform(0, 0.01), 0, 1) * 100
        self.psi_avg += (some - self.psi_avg) * (1 - math.exp(-dt / 10))
        self.ctx_total += int((total * 9000 + 3000) * dt * rng.uniform(0.9, 1.1))
        usage = min(self.cpus, total)
        runq = int(round(self.runq_base + min(total, self.cpus) * 0.35 + waiting + rng.uniform(-1, 1)))
        return tree_got, HostSample(cpu_pct=round(100 * usage / self.cpus * rng.uniform(0.97, 1.03), 1),
                                    offcpu_switches=None, cpu_pressure_some_pct=round(self.psi_avg, 2),
                                    run_queue=max(1, runq), cpus=self.cpus, ctx_switches_total=self.ctx_total)


@dataclass
class Tree:
    """The engine / trainer process tree on the CPU (cumulative counters)."""
    root: int
    pids: tuple
    label: str
    threads: list  # [tid, name, share of the tree's CPU]
    cores: tuple = ()
    quota: float | None = None
    ports: tuple = ()
    cpu_s: float = 0.0
    vol: int = 0
    invol: int = 0
    periods: int = 0
    throttled: int = 0
    tcpu: dict = field(default_factory=dict)

    def tick(self, rng, dt, got, demand, starved):
        """``got`` cores over dt of ``demand``; starved: fraction of time runnable but waiting."""
        if self.quota:
            if got > self.quota:
                got = self.quota * rng.uniform(0.96, 0.995)
            p = int(round(dt / 0.1))
            self.periods += p
            if demand > self.quota * 0.98:
                self.throttled += int(round(p * clip(0.55 + (demand / self.quota - 1) * 1.5, 0, 1)))
            elif demand > self.quota * 0.8:
                self.throttled += int(round(p * rng.uniform(0, 0.08)))
        self.cpu_s += got * dt
        for tid, _name, share in self.threads:
            self.tcpu[tid] = self.tcpu.get(tid, 0.0) + min(got * share, 1.0) * dt
        self.vol += int(dt * (800 + 400 * got) * rng.uniform(0.9, 1.1))
        self.invol += int(dt * (20 + 3000 * starved) * rng.uniform(0.8, 1.2))
        return got

    def pinned(self, host: HostSample) -> PinnedSample:
        threads = tuple(ThreadSample(tid=t, pid=self.root, name=n, cpu_s=round(self.tcpu.get(t, 0.0), 2))
                        for t, n, _ in self.threads)
        threads = tuple(sorted(threads, key=lambda x: -x.cpu_s))
        return PinnedSample(label=self.label[:60], root_pids=(self.root,), tree_pids=self.pids,
                            cpu_s=round(self.cpu_s, 2), ctx_voluntary=self.vol, ctx_involuntary=self.invol,
                            threads=threads, cores=self.cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                            run_queue=host.run_queue, listening_ports=self.ports,
                            cpu_quota_cores=self.quota, cpu_periods=self.periods if self.quota else None,
                            cpu_throttled_periods=self.throttled if self.quota else None)

    def engine_fields(self):
        busiest = max(self.threads, key=lambda t: self.tcpu.get(t[0], 0.0))
        return dict(cpu_s=round(self.cpu_s, 2), ctx_involuntary=self.invol,
                    busiest_thread_cpu_s=round(self.tcpu.get(busiest[0], 0.0), 2),
                    busiest_thread=f"{busiest[0]} {busiest[1]}", cpu_quota_cores=self.quota,
                    cpu_periods=self.periods if self.quota else None,
                    cpu_throttled_periods=self.throttled if self.quota else None)


def status(ok=True, reason=None, detail=None, poll=0.005, rng=None, age=0.0):
    p = poll * (rng.uniform(0.8, 1.3) if rng else 1.0)
    return SourceStatus(ok=ok, reason=reason, detail=detail, age_s=age if ok else None,
                        poll_s=round(p, 6), poll_median_s=poll)


def uuid_for(name: str, i: int) -> str:
    h = f"{zlib.crc32(f'{name}/{i}'.encode()):08x}{zlib.crc32(f'{i}/{name}'.encode()):08x}"
    h2 = f"{zlib.crc32(name.encode()) ^ (i * 7919):08x}"
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h2[:4]}-{h2[4:]}{h[:8]}"


def bus_for(i: int) -> str:
    return f"00000000:{(0x18 + 0x20 * i) & 0xff:02X}:00.0"
