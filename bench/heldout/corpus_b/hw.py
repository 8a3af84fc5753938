"""GPUs as NVML would read them: activity accumulated per quantum from the kernels that ran,
power from that activity, clocks from the power cap / thermal / external limits, and
temperature with thermal inertia.

Calibration (see README): tests/data/h200 (a real H200): with a context and nothing
running it reads ~121 W at 1980 MHz (78 W at 345 MHz without one); a bf16 matmul reads
99% util, ~95.6% SM active, 14% occupancy, 93% tensor, 17% DRAM at 690-697 W with the clock
floating 1425-1485 MHz and "power cap" set; a device-to-device copy reads 99% SM, 80%
occupancy, 88% DRAM at ~473 W and 1980 MHz; a CUDA-graph loop of one-element kernels reads
100% util, 0.3% SM at ~123 W; temperatures 36-58 C.  The matmul rate there, 739 TFLOP/s at
~1470 MHz, is 0.747 of the 989 TFLOP/s dense peak at 1980 MHz: compute-bound time scales
with the SM clock.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from gputop.schema import GpuSample

from .util import clamp


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    mem_total: int
    mem_reserved: int
    hbm_bw: float  # bytes/s
    flops: float  # dense bf16 FLOP/s at f_max
    f_max: float
    f_noctx: float
    mem_clock: float
    power_limit: float
    p_noctx: float
    p_ctx: float
    k_dram: float
    k_sm: float
    k_tensor: float
    gpm: bool
    util_period: float
    nvlink_bw: float  # usable bytes/s per direction for collectives
    sms: int
    t_amb: float
    r_th: float  # C per W at steady state
    tau_th: float  # s
    t_sw: float  # thermal slowdown target (software controller)
    t_hw: float  # hardware slowdown


H100 = GpuSpec("h100", "NVIDIA H100 80GB HBM3", 85520809984, 566231040, 3.35e12, 989e12,
               1980, 345, 2619, 700, 72, 113, 200, 177, 870, True, 1 / 6, 3.6e11, 132,
               30.0, 0.046, 45.0, 87.0, 92.0)
H200 = GpuSpec("h200", "NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12,
               1980, 345, 3201, 700, 78, 121, 200, 177, 870, True, 1 / 6, 3.6e11, 132,
               32.0, 0.042, 45.0, 87.0, 92.0)
A100 = GpuSpec("a100", "NVIDIA A100-SXM4-80GB", 85899345920, 530579456, 2.039e12, 312e12,
               1410, 210, 1593, 400, 52, 64, 110, 95, 420, False, 1 / 6, 2.4e11, 108,
               29.0, 0.075, 50.0, 85.0, 90.0)
SPECS = {"h100": H100, "h200": H200, "a100": A100}

DGX_BUS = ("00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
           "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0")


def _uuid(rng: random.Random) -> str:
    h = "%032x" % rng.getrandbits(128)
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Device:
    """One GPU.  Workloads add kernel time and activity during a quantum (seconds x
    fraction); ``end_quantum`` turns it into power, clocks, temperature and a driver
    utilization sample; ``sample`` reads a tick the way gputop's NVML source does."""

    def __init__(self, index: int, spec: GpuSpec, rng: random.Random, bus_index: int | None = None):
        self.index = index
        self.spec = spec
        self.rng = rng
        self.uuid = _uuid(rng)
        self.bus_id = DGX_BUS[(index if bus_index is None else bus_index) % len(DGX_BUS)]
        self.has_ctx = False
        self.clock = spec.f_noctx
        self.power = spec.p_noctx
        self.temp = spec.t_amb + spec.r_th * spec.p_noctx + rng.uniform(-1, 1)
        self.silicon = rng.uniform(-0.015, 0.015)  # part-to-part leakage spread
        # conditions set by scenarios
        self.cooling = 1.0  # multiplier on thermal resistance (a failed fan: 1.6-2.2)
        self.t_amb_delta = 0.0
        self.user_clock_max: float | None = None  # nvidia-smi -lgc
        self.power_brake = False
        self.brake_mhz = 780.0
        self.hw_slowdown_ext = False  # e.g. a PSU or board event
        self.power_cap_override: float | None = None
        self.mem_used_extra = 0
        self._th_f = spec.f_max  # thermal controller's allowed clock
        # per-quantum accumulators
        self.q_busy = self.q_sm = self.q_occ = self.q_dram = self.q_tensor = 0.0
        self.q_nvlink = self.q_pcie = 0.0
        # per-tick accumulators
        self._reset_tick()
        self.reasons: tuple[str, ...] = ()
        self.gpm_ready = False
        self.mem_by_pid: dict[int, int] = {}
        self.last_util: float | None = None

    # ------------------------------------------------------------ workload side
    def add(self, busy: float, sm: float = 0.0, occ: float = 0.0, dram: float = 0.0,
            tensor: float = 0.0, nvlink_bytes: float = 0.0, pcie_bytes: float = 0.0) -> None:
        """``busy`` seconds with kernels running; sm/occ/dram/tensor are seconds x fraction."""
        self.q_busy += busy
        self.q_sm += sm
        self.q_occ += occ
        self.q_dram += dram
        self.q_tensor += tensor
        self.q_nvlink += nvlink_bytes
        self.q_pcie += pcie_bytes

    def add_phase(self, seconds: float, sm: float, occ: float, dram: float, tensor: float) -> None:
        if seconds > 0:
            self.add(seconds, seconds * sm, seconds * occ, seconds * dram, seconds * tensor)

    def clock_factor(self) -> float:
        """Speed of compute-bound kernels relative to the boost clock."""
        return self.clock / self.spec.f_max

    def mem_factor(self) -> float:
        """Memory-bound kernels keep their speed until the SM clock is too low to issue
        enough loads (below ~55% of boost they slow down with it)."""
        return min(1.0, self.clock / (0.55 * self.spec.f_max))

    # ------------------------------------------------------------ physics
    def _demand(self, f: float, sm: float, dram: float, tensor: float) -> float:
        s = self.spec
        if not self.has_ctx:
            return s.p_noctx * (1 + self.silicon)
        dyn = (s.k_sm * sm + s.k_tensor * tensor) * (f / s.f_max) ** 2
        return (s.p_ctx + s.k_dram * dram + dyn) * (1 + self.silicon)

    def end_quantum(self, q: float) -> None:
        s = self.spec
        busy = clamp(self.q_busy / q, 0.0, 1.0)
        sm = clamp(self.q_sm / q, 0.0, 1.0)
        occ = clamp(self.q_occ / q, 0.0, 1.0)
        dram = clamp(self.q_dram / q, 0.0, 0.93)
        tensor = clamp(self.q_tensor / q, 0.0, 0.98)
        reasons = []
        cap = self.power_cap_override or s.power_limit
        if not self.has_ctx:
            target = s.f_noctx
        else:
            target = s.f_max
            if self._demand(s.f_max, sm, dram, tensor) > cap * 0.985:
                fixed = (s.p_ctx + s.k_dram * dram) * (1 + self.silicon)
                dyn = (s.k_sm * sm + s.k_tensor * tensor) * (1 + self.silicon)
                room = max(0.05, (cap * 0.985 - fixed) / max(dyn, 1e-6))
                target = min(target, s.f_max * math.sqrt(min(1.0, room)))
                reasons.append("power cap")
            # thermal software controller: walk the allowed clock down while above target
            if self.temp > s.t_sw:
                self._th_f = max(0.45 * s.f_max, self._th_f - 45 * (self.temp - s.t_sw + 0.5) * q * 6)
            elif self.temp < s.t_sw - 2.5:
                self._th_f = min(s.f_max, self._th_f + 60 * q * 6)
            if self._th_f < target - 1:
                target = self._th_f
                reasons.append("thermal (sw)")
            if self.temp >= s.t_hw:
                target = min(target, 0.5 * s.f_max)
                reasons += ["hw slowdown", "thermal (hw)"]
            if self.hw_slowdown_ext:
                target = min(target, 0.5 * s.f_max)
                if "hw slowdown" not in reasons:
                    reasons.append("hw slowdown")
            if self.power_brake:
                target = min(target, self.brake_mhz)
                if "hw slowdown" not in reasons:
                    reasons.append("hw slowdown")
                reasons.append("power brake")
            if self.user_clock_max is not None:
                target = min(target, self.user_clock_max)  # "applications clocks": no reason here
        # the clock follows within a quantum; under the power limiter it wobbles
        wobble = self.rng.choice((-30, -15, 0, 0, 15, 30)) if "power cap" in reasons else 0
        f = clamp(target + wobble, s.f_noctx, s.f_max)
        self.clock = round(f / 15.0) * 15.0 if self.has_ctx else s.f_noctx
        power = self._demand(self.clock, sm, dram, tensor) * (1 + self.rng.gauss(0, 0.006))
        if self.has_ctx:
            power = min(power, cap * (1 + abs(self.rng.gauss(0, 0.004))))
        self.power = power
        t_ss = s.t_amb + self.t_amb_delta + s.r_th * self.cooling * power
        self.temp += (t_ss - self.temp) * (1 - math.exp(-q / s.tau_th))
        self.reasons = tuple(reasons)
        # tick accumulators
        self._samples.append(busy)
        self._n += 1
        self._sm += sm
        self._occ += occ
        self._dram += dram
        self._tensor += tensor
        self._power += power
        self._nvlink += self.q_nvlink
        self._pcie += self.q_pcie
        self._tick_s += q
        self._reason_any.update(reasons)
        self.q_busy = self.q_sm = self.q_occ = self.q_dram = self.q_tensor = 0.0
        self.q_nvlink = self.q_pcie = 0.0

    def _reset_tick(self) -> None:
        self._samples: list[float] = []
        self._n = 0
        self._sm = self._occ = self._dram = self._tensor = self._power = 0.0
        self._nvlink = self._pcie = 0.0
        self._tick_s = 0.0
        self._reason_any: set[str] = set()

    def sample(self, lost: bool = False) -> GpuSample:
        """What gputop's NVML source reads this tick (then the tick accumulators reset)."""
        s = self.spec
        rng = self.rng
        n = max(1, self._n)
        samples = []
        for b in self._samples:
            v = b * 100.0
            if v > 98.5:
                v = rng.choice((99.0, 100.0, 100.0))
            samples.append(float(max(0, min(100, round(v + rng.gauss(0, 0.3))))))
        util = float(round(sum(samples) / len(samples))) if samples else 0.0
        self.last_util = util
        sm = self._sm / n * 100
        dram = self._dram / n * 100
        mem_used = sum(self.mem_by_pid.values())
        if mem_used:
            mem_used += 9 * 2**20 + self.mem_used_extra
        fields = dict(index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=util,
                      util_gpu_samples_pct=tuple(samples),
                      util_mem_pct=float(min(100, round(1.4 * dram + abs(rng.gauss(0, 0.4))))),
                      mem_total_bytes=s.mem_total, mem_used_bytes=int(mem_used),
                      mem_reserved_bytes=s.mem_reserved,
                      power_w=round(self._power / n, 3), temp_c=float(round(self.temp)),
                      sm_clock_mhz=float(self.clock),
                      throttle=tuple(r for r in ("power cap", "hw slowdown", "sync boost",
                                                  "thermal (sw)", "thermal (hw)", "power brake")
                                     if r in self.reasons),
                      bus_id=self.bus_id, fan_pct=None, pstate=0,
                      power_limit_w=float(self.power_cap_override or s.power_limit),
                      mem_clock_mhz=float(s.mem_clock),
                      ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False)
        if s.gpm:
            if self.gpm_ready:
                noise = lambda: rng.gauss(0, 0.15)  # noqa: E731
                fields.update(sm_active_pct=max(0.0, sm + noise() * min(1.0, sm)),
                              sm_occupancy_pct=max(0.0, self._occ / n * 100 * (1 + rng.gauss(0, 0.01))),
                              dram_bw_pct=max(0.0, dram + noise() * min(1.0, dram)),
                              tensor_pct=max(0.0, self._tensor / n * 100 * (1 + rng.gauss(0, 0.01))),
                              pcie_rx_mib_per_s=round(self._pcie * 0.6 / max(self._tick_s, 1e-6) / 2**20, 1),
                              pcie_tx_mib_per_s=round(self._pcie * 0.4 / max(self._tick_s, 1e-6) / 2**20, 1),
                              nvlink_rx_mib_per_s=round(self._nvlink / max(self._tick_s, 1e-6) / 2**20, 1),
                              nvlink_tx_mib_per_s=round(self._nvlink / max(self._tick_s, 1e-6) / 2**20, 1))
            else:
                fields["missing"] = {k: "GPM needs a second sample" for k in
                                     ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")}
            self.gpm_ready = True
        else:
            fields["missing"] = {k: "needs Hopper+ (GPM)" for k in
                                 ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")}
        self._reset_tick()
        return GpuSample(lost=lost, **fields)


# Kernel-mix profiles: (sm_active, occupancy, dram fraction of peak, tensor) while running.
# Chosen from the H200 readings above and the roofline of each kind of kernel.
PROFILE_IDLE = (0.0, 0.0, 0.0, 0.0)
PROFILE_NCCL_WAIT = (0.16, 0.02, 0.004, 0.0)  # NCCL channels spinning on a few SMs
PROFILE_TINY = (0.004, 0.0002, 0.00001, 0.0)  # one-element kernels back to back
