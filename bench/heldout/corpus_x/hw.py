"""GPU physics: what a board does with the work put on it, and what NVML/GPM read back.

The workload simulators never write a GPU reading.  They put *activity* on a GPU
(``Activity.add``: a span of kernel time of some kind, with the bytes it moved and the
FLOPs it did); this module turns one tick of activity into the readings:

* GPU-Util = fraction of each driver sample period with >= 1 kernel resident (a union
  of busy time: NCCL kernels spinning in a wait count, memcpy engines do not);
* SM activity = SM-active-seconds / tick (a kernel that fills all SMs counts ~0.95, a
  one-element kernel ~0.003, NCCL's few channel blocks ~0.15);
* DRAM = bytes / (peak bandwidth x tick); memory-controller util = the time fraction
  the memory was read/written (reads a bit above the bandwidth fraction, as the H200
  recordings show: 88.5% DRAM -> 100, 17% -> 24, 10% -> 11-14);
* tensor = FLOPs / (peak x clock ratio x tick);
* power from a fitted model (H200 calibration: bf16 matmul 93% tensor -> ~690 W at the
  700 W cap with the clock at 1455-1470 MHz; device copy 88% DRAM -> 475 W at 1980
  MHz; an idle board with a context 121-124 W; a 0.5B serving loop at SM 42% ~207 W);
* clock from a governor: application clock when a context exists, lowered to hold the
  power limit ("power cap"), to hold the slowdown temperature ("thermal (sw)"; above
  the HW limit "thermal (hw)"), or cut by an external signal ("hw slowdown", "power
  brake");
* temperature as a first-order lag toward inlet + R x power (tau ~25 s).

Clock feeds back into the work: a workload asks ``GpuState.speed()`` how fast compute-
and memory-bound kernels run this tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.schema import GpuSample

GIB = 2**30


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    mem_total: int
    mem_reserved: int
    bw: float  # bytes/s peak HBM/GDDR
    flops: float  # dense bf16 FLOP/s at fmax
    fmax: float  # MHz, application clock under load
    fidle: float  # MHz with no context
    mem_clock: float
    tdp: float
    p_idle: float  # W, no context
    p_ctx: float  # W, a context open, nothing running (P0)
    gpm: bool
    util_samples_per_s: int
    slowdown_c: float  # SW thermal slowdown target
    hw_c: float
    r_c_per_w: float
    inlet_c: float
    nvlink: bool
    scale: float  # dynamic power scale vs. the H200 fit


SPECS = {
    "H100": GpuSpec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 566231040, 3.35e12, 989e12,
                    1980, 345, 2619, 700, 72, 113, True, 6, 87, 90, 0.046, 27, True,
                    0.97),
    "H200": GpuSpec("H200", "NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12,
                    1980, 345, 3201, 700, 79, 122, True, 5, 87, 90, 0.044, 26, True, 1.0),
    "A100": GpuSpec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 565182464, 2.039e12, 312e12,
                    1410, 210, 1593, 400, 58, 82, False, 6, 85, 89, 0.080, 27, True, 0.58),
    "L40S": GpuSpec("L40S", "NVIDIA L40S", 48305799168, 478150656, 0.864e12, 362e12,
                    2520, 210, 9001, 350, 33, 79, False, 6, 85, 89, 0.110, 28, False, 0.50),
}

# per kind of kernel time: (SM-active per busy second, occupancy per busy second)
KINDS = {
    "gemm": (0.95, 0.14),  # large matmuls: prefill, training fwd/bwd
    "decode": (0.86, 0.10),  # batched decode: GEMV/attention streaming weights and KV
    "elementwise": (0.90, 0.60),  # optimizer, norms, copies done by kernels
    "nccl": (0.16, 0.02),  # collective kernels (a few channel blocks), spinning or moving
    "tiny": (0.12, 0.01),  # launch-bound small kernels: most SMs idle
    "onelem": (0.003, 0.0002),  # one-element kernels
}


class Activity:
    """One tick of one GPU: kernel time per driver sample bin, SM-seconds, bytes, FLOPs."""

    def __init__(self, t0: float, dt: float, bins: int):
        self.t0, self.dt, self.n = t0, dt, bins
        self.w = dt / bins
        self.busy = [0.0] * bins
        self.sm = 0.0
        self.occ = 0.0
        self.bytes = 0.0
        self.flops = 0.0
        self.nvlink_bytes = 0.0
        self.pcie_bytes = 0.0
        self.other_busy = [0.0] * bins  # another process's kernels (time-sliced)
        self.other_sm = 0.0

    def add(self, start: float, dur: float, kind: str, nbytes: float = 0.0, flops: float = 0.0,
            other: bool = False, sm_scale: float = 1.0, duty: float = 1.0) -> None:
        """Kernel time of one kind over [start, start+dur): ``duty`` of that span busy."""
        if dur <= 0:
            return
        end = start + dur
        lo = max(start, self.t0)
        hi = min(end, self.t0 + self.dt)
        if hi <= lo:
            return
        frac = (hi - lo) / dur
        sm, occ = KINDS[kind]
        span = (hi - lo) * duty
        if other:
            self.other_sm += sm * sm_scale * span
        else:
            self.sm += sm * sm_scale * span
        self.occ += occ * span
        self.bytes += nbytes * frac
        self.flops += flops * frac
        target = self.other_busy if other else self.busy
        i = int((lo - self.t0) / self.w)
        while lo < hi and i < self.n:
            edge = self.t0 + (i + 1) * self.w
            piece = min(hi, edge) - lo
            target[i] += piece * duty
            lo += piece
            i += 1


class GpuState:
    """One board's thermal/power/clock state carried across ticks."""

    def __init__(self, spec: GpuSpec, index: int, rng, *, warm_offset_c: float = 0.0,
                 power_limit: float | None = None, has_context: bool = True,
                 mem_used: int = 0, uuid: str = "", bus_id: str = ""):
        self.spec, self.index, self.rng = spec, index, rng
        self.power_limit = power_limit or spec.tdp
        self.temp = spec.inlet_c + warm_offset_c + 8
        self.warm_offset = warm_offset_c
        self.clock = spec.fmax if has_context else spec.fidle
        self.has_context = has_context
        self.mem_used = mem_used
        self.uuid = uuid
        self.bus_id = bus_id
        self.cooling = 1.0  # multiplies thermal resistance (a failing fan, blocked inlet)
        self.inlet_extra = 0.0
        self.external = None  # "hw slowdown" | "power brake" | None
        self.external_factor = 1.0
        self.throttle: tuple[str, ...] = ()
        self.power = spec.p_ctx if has_context else spec.p_idle
        self.xid = 0
        self.ecc = int(rng.random() * 3)

    def speed(self) -> tuple[float, float]:
        """(compute speed, memory-bound speed) relative to the application clock: memory
        kernels slow less (HBM keeps its clock) but not nothing (L2/crossbar follow SMs)."""
        r = self.clock / self.spec.fmax
        return r, 1.0 / (1.0 + 0.45 * (1.0 / max(r, 0.05) - 1.0))

    def _demand(self, tensor: float, dram: float, sm: float, f: float) -> float:
        s = self.spec
        dyn = s.scale * (700.0 * tensor + 230.0 * dram + 150.0 * sm)
        return s.p_ctx + dyn * (f / s.fmax) ** 1.2

    def step(self, act: Activity) -> GpuSample:
        s, dt = self.spec, act.dt
        busy_bins = [min(1.0, (b + o) / act.w) for b, o in zip(act.busy, act.other_busy)]
        util = sum(busy_bins) / len(busy_bins)
        sm = min(1.0, (act.sm + act.other_sm) / dt)
        occ = min(1.0, act.occ / dt)
        f_now = self.clock
        dram = min(1.0, act.bytes / (s.bw * dt))
        tensor = min(1.0, act.flops / (s.flops * (f_now / s.fmax) * dt)) if f_now > 0 else 0.0
        if not self.has_context and util == 0:
            power = s.p_idle + self.rng.gauss(0, 0.4)
        else:
            power = self._demand(tensor, dram, sm, f_now) + self.rng.gauss(0, 1.5 + 4 * sm)
        # the governor for the next tick
        reasons = []
        f_target = s.fmax if self.has_context or util > 0 else s.fidle
        demand_fmax = self._demand(tensor, dram, sm, s.fmax)
        if util > 0.02 and demand_fmax > self.power_limit:
            dyn = demand_fmax - s.p_ctx
            ratio = max(0.2, (self.power_limit - s.p_ctx) / dyn) ** (1 / 1.2)
            f_target = min(f_target, s.fmax * ratio)
            reasons.append("power cap")
        # temperature
        t_ss = s.inlet_c + self.inlet_extra + self.warm_offset + s.r_c_per_w * self.cooling * power
        self.temp += (t_ss - self.temp) * (1 - math.exp(-dt / 25.0))
        if self.temp > s.slowdown_c - 0.5 and util > 0.02:
            over = self.temp - (s.slowdown_c - 0.5)
            f_target = min(f_target, self.clock * (1 - 0.06 * over) if self.clock else s.fmax)
            reasons.append("thermal (sw)")
        else:
            # recover gradually from a thermal cut
            if "thermal (sw)" in self.throttle:
                f_target = min(f_target, self.clock * 1.06 + 15)
        if self.temp >= s.hw_c:
            f_target = min(f_target, s.fmax * 0.5)
            reasons.append("thermal (hw)")
        if self.external:
            f_target = min(f_target, s.fmax * self.external_factor)
            reasons.append("hw slowdown")
            if self.external == "power brake":
                reasons.append("power brake")
        f_target = max(s.fidle, min(s.fmax, f_target))
        self.clock = round(f_target / 15.0) * 15.0
        self.power = power
        self.throttle = tuple(dict.fromkeys(reasons))
        gpm = s.gpm
        util_samples = tuple(float(round(100 * b)) for b in busy_bins)
        util_pct = float(round(100 * min(1.0, util + self.rng.gauss(0, 0.004)) if util > 0.005
                               else 100 * util))
        mem_util = min(100.0, 100 * dram * (1.12 + 0.25 * (1 - dram)) + (0.5 if util > 0.05 else 0))
        missing = {"fan_pct": "not supported on this GPU"}
        kw = {}
        if gpm:
            jit = lambda v: max(0.0, v * (1 + self.rng.gauss(0, 0.01)))  # noqa: E731
            kw = dict(sm_active_pct=jit(100 * sm), sm_occupancy_pct=jit(100 * occ),
                      dram_bw_pct=jit(100 * dram), tensor_pct=jit(100 * tensor),
                      pcie_rx_mib_per_s=jit(act.pcie_bytes / dt / 2**20 + 40 * util + 5),
                      pcie_tx_mib_per_s=jit(act.pcie_bytes / dt / 2**20 * 0.1 + 8 * util + 1),
                      nvlink_rx_mib_per_s=jit(act.nvlink_bytes / dt / 2**20) if s.nvlink else None,
                      nvlink_tx_mib_per_s=jit(act.nvlink_bytes / dt / 2**20) if s.nvlink else None)
        else:
            for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                missing[k] = "needs Hopper+ (GPM)"
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=util_pct,
            util_gpu_samples_pct=util_samples, util_mem_pct=float(round(mem_util)),
            mem_total_bytes=s.mem_total, mem_used_bytes=int(self.mem_used),
            mem_reserved_bytes=s.mem_reserved, power_w=round(max(s.p_idle * 0.9, power), 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=float(f_now), throttle=self.throttle_prev(),
            bus_id=self.bus_id, fan_pct=None, pstate=0 if (self.has_context or util > 0) else 8,
            power_limit_w=float(self.power_limit), mem_clock_mhz=float(s.mem_clock),
            ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=self.xid, mig_mode=False,
            missing=missing, **kw)

    def throttle_prev(self) -> tuple[str, ...]:
        # the reasons in force while this tick ran are those that set its clock; the
        # governor's new reasons apply from the next tick (reported then)
        out = getattr(self, "_prev", ())
        self._prev = self.throttle
        return out
