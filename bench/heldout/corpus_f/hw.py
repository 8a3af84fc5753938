"""GPU boards and their physics: what NVML (and GPM on Hopper+) would read each tick.

One activity record per GPU per tick (time fractions: busy, SM, occupancy, DRAM, tensor)
drives power, clocks, temperature and throttle reasons.  Calibrated on the real H200 in
tests/data/h200: bf16 matmul SM 95.6 / occ 14 / DRAM 17 / tensor 93 at ~694 W with clocks
held at ~1470 MHz by the power cap; device copy SM 99 / occ 80 / DRAM 88 at 474 W, 1980 MHz;
tiny kernels 122 W; idle with a context 121 W at 1980 MHz, idle without one 78 W at 345 MHz.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIRST = "GPM needs a second sample"
ACT = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")
GiB = 2**30


@dataclass(frozen=True)
class Spec:
    key: str
    name: str
    total: int
    reserved: int
    tdp: float
    idle_w: float  # no process, clocks parked
    ctx_w: float  # a process holds a context, nothing runs
    max_mhz: float
    park_mhz: float
    mem_mhz: float
    bw: float  # HBM/GDDR bytes/s
    flops: float  # dense bf16 tensor FLOP/s
    gpm: bool
    dyn: float  # dynamic power demand at full activity and clock, as a multiple of tdp-ctx_w
    nvlink: float = 0.0  # bytes/s per direction, 0: PCIe only
    mig: bool | None = True
    theta: float = 0.05  # C per W above inlet
    slowdown_c: float = 87.0
    samples_per_s: int = 6


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 553648128, 700, 68, 115, 1980,
                 345, 2619, 3.35e12, 989e12, True, 2.18, 450e9, theta=0.045),
    "H200": Spec("H200", "NVIDIA H200", 150754820096, 644939776, 700, 78, 121, 1980, 345, 3201,
                 4.8e12, 989e12, True, 2.18, 450e9, theta=0.037),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 566231040, 400, 52, 64, 1410, 210,
                 1593, 2.039e12, 312e12, False, 1.4, 300e9, theta=0.075, samples_per_s=6),
    "L40S": Spec("L40S", "NVIDIA L40S", 48305799168, 471859200, 350, 34, 82, 2520, 210, 9001,
                 864e9, 362e12, False, 1.6, 0.0, mig=None, theta=0.11, slowdown_c=88),
    "A10G": Spec("A10G", "NVIDIA A10G", 24146608128, 320864256, 300, 18, 58, 1710, 210, 6251,
                 600e9, 70e12, False, 1.5, 0.0, mig=None, theta=0.14, slowdown_c=88),
    "B200": Spec("B200", "NVIDIA B200", 192265846784, 751828992, 1000, 140, 190, 1965, 600, 3996,
                 8.0e12, 2250e12, True, 2.0, 900e9, theta=0.032),
}


@dataclass
class Act:
    """What ran on one GPU over one tick, as time fractions (0..1)."""

    busy: list[float] = field(default_factory=list)  # GPU-Util per driver sample
    sm: float = 0.0
    occ: float = 0.0
    dram: float = 0.0
    tensor: float = 0.0
    mem_used: int = 0
    nvlink: float = 0.0  # bytes/s each way
    pcie: float = 0.0
    has_ctx: bool = True
    own: float = 1.0  # of the busy time, the share that is this job's own kernels


def mix(parts: list[tuple[float, tuple[float, float, float, float]]]) -> tuple[float, ...]:
    """Time-weighted activity of kernels of different kinds: [(share of tick, (sm, occ, dram,
    tensor))] -> (sm, occ, dram, tensor) averaged over the tick."""
    out = [0.0, 0.0, 0.0, 0.0]
    for share, prof in parts:
        for i in range(4):
            out[i] += share * prof[i]
    return tuple(min(1.0, v) for v in out)


# what each kind of kernel keeps busy while it runs (sm active, occupancy, dram, tensor)
PROF = {
    "gemm": (0.95, 0.15, 0.18, 0.90),  # big bf16 matmuls (training, prefill)
    "train": (0.90, 0.30, 0.35, 0.55),  # a training step: matmuls, norms, optimizer
    "prefill": (0.93, 0.30, 0.28, 0.62),
    "decode": (0.72, 0.22, 0.62, 0.08),  # weight/KV streaming GEMVs at small batch
    "decode_big": (0.85, 0.30, 0.82, 0.22),
    "attn_long": (0.90, 0.40, 0.93, 0.12),  # paged attention over long contexts
    "nccl_wait": (0.10, 0.02, 0.01, 0.0),  # a collective spinning for a late peer
    "nccl_xfer": (0.18, 0.05, 0.30, 0.0),
    "tiny": (0.03, 0.01, 0.01, 0.0),  # one-element / launch-bound kernels
    "sampler": (0.55, 0.20, 0.45, 0.03),  # sort / top-k / logprobs over the vocabulary
    "copy": (0.99, 0.80, 0.88, 0.0),
    "stencil": (0.96, 0.55, 0.86, 0.0),
    "infer_cnn": (0.80, 0.35, 0.45, 0.40),
    "eager": (0.35, 0.10, 0.15, 0.10),  # eager PyTorch mid-size ops
}


class Board:
    """One GPU: power, clocks, temperature, throttle, with lag, noise and the cap."""

    def __init__(self, spec: Spec, index: int, rng, uuid: str, bus: str,
                 power_limit: float | None = None, inlet: float = 30.0):
        self.spec, self.index, self.rng = spec, index, rng
        self.uuid, self.bus = uuid, bus
        self.limit = power_limit or spec.tdp
        self.inlet = inlet
        self.temp = inlet + spec.theta * spec.idle_w
        self.f = spec.park_mhz / spec.max_mhz
        self.first = True
        self.ecc = 0

    def clock_factor(self) -> float:
        return max(0.15, self.f)

    def update(self, act: Act, dt: float, cool: float = 1.0, force_clock: float | None = None,
               force_reason: tuple[str, ...] = (), missing_extra: dict | None = None) -> GpuSample:
        s, rng = self.spec, self.rng
        a = 0.08 * act.sm + 0.9 * act.tensor + 0.25 * act.dram
        base = s.ctx_w if act.has_ctx else s.idle_w
        dyn = s.dyn * (s.tdp - s.ctx_w) * a
        busy = sum(act.busy) / len(act.busy) if act.busy else 0.0
        reasons: list[str] = []
        if not act.has_ctx and busy < 0.01:
            f = s.park_mhz / s.max_mhz
        else:
            f = 1.0
            if dyn > 1e-6 and base + dyn > self.limit:
                f = ((self.limit - base) / dyn) ** (1 / 2.5)
                reasons.append("power cap")
        # thermal: the controller holds the die at its slowdown temperature
        theta = s.theta * cool
        want = self.inlet + theta * (base + dyn * f ** 2.5)
        if want > s.slowdown_c + 0.5 and dyn > 0:
            room = (s.slowdown_c - self.inlet) / theta - base
            f2 = max(0.3, (max(room, 1.0) / dyn) ** (1 / 2.5))
            if f2 < f:
                f = f2
                reasons = ["thermal (sw)"]
        if force_clock is not None and force_clock < f:
            f = force_clock
            reasons = list(force_reason)
        f = min(1.0, max(0.1, f))
        # clocks move in 15 MHz bins and settle within a tick
        self.f = f
        mhz = round(s.max_mhz * f / 15) * 15 if f < 1 else s.max_mhz
        power = base + dyn * f ** 2.5
        power *= 1 + rng.gauss(0, 0.006)
        if "power cap" in reasons:
            power = min(power, self.limit * (1 + rng.gauss(0, 0.003)))
        target = self.inlet + theta * power
        k = 1 - math.exp(-dt / 35.0)
        self.temp += (target - self.temp) * k
        missing: dict[str, str] = {"fan_pct": "not supported on this GPU"}
        values: dict = {}
        if s.gpm:
            if self.first:
                for n in ACT:
                    missing[n] = GPM_FIRST
            else:
                jit = lambda v: max(0.0, min(100.0, 100 * v * (1 + rng.gauss(0, 0.01))))
                values.update(sm_active_pct=jit(act.sm), sm_occupancy_pct=jit(act.occ),
                              dram_bw_pct=jit(act.dram), tensor_pct=jit(act.tensor),
                              pcie_rx_mib_per_s=max(0.0, act.pcie / 2**20 * (1 + rng.gauss(0, .05)) + 3),
                              pcie_tx_mib_per_s=max(0.0, act.pcie / 2**20 * 0.6 + 2),
                              nvlink_rx_mib_per_s=act.nvlink / 2**20 if s.nvlink else None,
                              nvlink_tx_mib_per_s=act.nvlink / 2**20 if s.nvlink else None)
        else:
            for n in ACT:
                missing[n] = NO_GPM
        if missing_extra:
            missing.update(missing_extra)
        samples = tuple(float(max(0, min(100, round(100 * b)))) for b in act.busy)
        recent = act.busy[-s.samples_per_s:] if act.busy else [0.0]
        util = float(round(100 * sum(recent) / len(recent)))
        self.first = False
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=samples,
            util_mem_pct=float(round(100 * min(1.0, act.dram * 1.05))),
            mem_total_bytes=s.total, mem_used_bytes=int(act.mem_used),
            mem_reserved_bytes=s.reserved, power_w=round(power, 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(mhz), throttle=tuple(reasons), bus_id=self.bus, fan_pct=None,
            pstate=0 if act.has_ctx or busy > 0 else 8, power_limit_w=float(self.limit),
            mem_clock_mhz=float(s.mem_mhz), ecc_corrected=self.ecc, ecc_uncorrected=0,
            xid_count=0, xid_last=None, mig_mode=False if s.mig else None, missing=missing,
            **values)
