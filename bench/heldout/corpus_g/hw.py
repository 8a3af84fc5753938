"""GPU boards and the one power/clock/temperature model every trace shares.

A tick's work on a GPU is an ``Act``: the fraction of the tick some kernel ran (``duty``)
and, while kernels ran, the share of SMs busy, their occupancy, the share of peak DRAM
bandwidth and of tensor-pipe time.  From that one description come GPU-Util, GPM's SM /
DRAM / tensor activity, power, the SM clock the power cap leaves, temperature and the
throttle reasons, so a cause that does not change the work leaves these unchanged.

Power model, fitted to the real H200 of tests/data/h200: idle with a context 121 W,
device copy (SM 99%, DRAM 88%) 474 W, bf16 matmul (SM 96%, tensor 93%) held at 690 W by
the power cap at 1440-1470 MHz: P = idle + TDP (0.17 sm + k_t tensor) f^1.5 + 0.38 TDP dram.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

from gputop.schema import GpuSample, MigSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIRST = "GPM needs a second sample"
MIG_UTIL = "GPU-Util is not available per MIG instance (NVML: not supported in MIG mode)"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclass(frozen=True)
class Spec:
    key: str
    name: str
    mem_total: int
    reserved: int
    tdp: float
    idle_w: float  # with a CUDA context (clocks up)
    max_clk: float
    mem_clk: float
    hbm_gbps: float
    tflops: float  # dense bf16
    k_t: float  # tensor-power coefficient (fraction of TDP)
    gpm: bool
    nvlink_gbps: float  # per direction, per GPU
    t_amb: float = 30.0
    rise: float = 42.0  # degrees at TDP above ambient (steady)
    t_slow: float = 87.0  # thermal slowdown starts


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 567279616, 700, 115, 1980,
                 2619, 3350, 989, 1.1, True, 450),
    "H200": Spec("H200", "NVIDIA H200", 150754820096, 644939776, 700, 121, 1980, 3201, 4800,
                 989, 1.1, True, 450),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 520093696, 400, 82, 1410, 1593,
                 2039, 312, 0.75, False, 300),
    "L40S": Spec("L40S", "NVIDIA L40S", 48305799168, 463470592, 350, 78, 2520, 9001, 864, 362,
                 0.9, False, 0, t_amb=32, rise=48),
    "A10G": Spec("A10G", "NVIDIA A10G", 24146608128, 361758720, 300, 58, 1710, 6251, 600, 125,
                 0.8, False, 0, t_amb=30, rise=50),
    "B200": Spec("B200", "NVIDIA B200", 192265912320, 786432000, 1000, 185, 1965, 3996, 8000,
                 2250, 1.0, True, 900, rise=40),
}


@dataclass
class Act:
    """One GPU's work over one tick (see the module doc)."""

    duty: float = 0.0
    sm: float = 0.0
    occ: float = 0.2
    dram: float = 0.0
    tensor: float = 0.0
    nvlink_gbps: float = 0.0
    pcie_mibs: float = 0.0
    sub: tuple[float, ...] | None = None  # GPU-Util per driver sample, when it varies inside a tick
    ctx: bool = True  # a CUDA context exists (clocks up, idle power with context)

    def blend(self, other: Act, w_other: float) -> Act:
        """Time-weighted mix of two kinds of work (w_other of the busy time is ``other``)."""
        a = 1.0 - w_other
        return Act(self.duty, a * self.sm + w_other * other.sm, a * self.occ + w_other * other.occ,
                   a * self.dram + w_other * other.dram, a * self.tensor + w_other * other.tensor,
                   self.nvlink_gbps + other.nvlink_gbps, self.pcie_mibs + other.pcie_mibs)


@dataclass
class Board:
    """One GPU's physical state across ticks: temperature, the clock the cap leaves."""

    spec: Spec
    index: int
    rng: object
    power_limit: float = 0.0
    temp: float = 0.0
    f: float = 1.0
    last_power: float = 0.0
    reasons: tuple[str, ...] = ()
    bus: str = ""
    uuid: str = ""
    extra_heat: float = 0.0  # degrees added by a cooling fault
    forced: dict = field(default_factory=dict)  # reason -> clock factor (hw slowdown, brake)

    def __post_init__(self):
        self.power_limit = self.power_limit or self.spec.tdp
        self.temp = self.spec.t_amb + 8 + self.rng.uniform(-2, 2)
        self.bus = f"00000000:{0x18 + 0x11 * self.index:02X}:00.0"
        h = zlib.crc32(self.spec.key.encode()) ^ (self.index * 2654435761) ^ int(self.rng.random() * 1e9)
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            h & 0xffffffff, (h >> 8) & 0xffff, (h >> 4) & 0xffff, (h >> 12) & 0xffff,
            int(self.rng.random() * 2**48))

    def demand(self, act: Act, f: float) -> tuple[float, float]:
        """(clock-dependent, clock-independent) power above idle for this work."""
        s = self.spec
        comp = s.tdp * (0.17 * act.duty * act.sm + s.k_t * act.duty * act.tensor) * f ** 1.5
        mem = s.tdp * 0.38 * act.duty * act.dram
        return comp, mem

    def clock_for(self, act: Act) -> float:
        """The clock factor (0..1) the power cap, heat and forced slowdowns leave for this work."""
        s = self.spec
        comp, mem = self.demand(act, 1.0)
        target = 0.985 * self.power_limit - s.idle_w - mem
        reasons = []
        f = 1.0
        if comp > 1e-6 and s.idle_w + mem + comp > 0.985 * self.power_limit:
            f = max(0.3, (max(target, 1.0) / comp) ** (1 / 1.5))
            reasons.append("power cap")
        if self.temp > s.t_slow:
            f_th = max(0.35, 1.0 - 0.07 * (self.temp - s.t_slow))
            if f_th < f:
                f = f_th
            reasons.append("thermal (sw)")
            if self.temp > s.t_slow + 6:
                reasons.append("thermal (hw)")
        for reason, cap in self.forced.items():
            f = min(f, cap)
            reasons.append(reason)
        self.reasons = tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                         "thermal (hw)", "power brake") if r in reasons)
        self.f = f
        return f

    def sample(self, act: Act, dt: float, first: bool, used: int, mig=None) -> GpuSample:
        s, rng = self.spec, self.rng
        duty = max(0.0, min(1.0, act.duty))
        comp, mem = self.demand(act, self.f)
        idle = s.idle_w if act.ctx else s.idle_w * 0.62
        power = idle + comp + mem
        power = min(power, self.power_limit * 1.005) * (1 + rng.gauss(0, 0.008))
        self.last_power = power
        target_t = s.t_amb + s.rise * power / s.tdp + self.extra_heat
        self.temp += (target_t - self.temp) * (1 - math.exp(-dt / 45.0))
        noise = rng.gauss(0, 1.2)
        util = max(0.0, min(100.0, round(100 * duty + noise * (duty > 0.02))))
        n_sub = max(1, int(6 * dt))
        if act.sub:
            subs = tuple(float(max(0, min(100, round(v + rng.gauss(0, 2))))) for v in act.sub[:n_sub])
            util = float(round(sum(subs) / len(subs)))
        else:
            subs = tuple(float(max(0, min(100, round(100 * duty + rng.gauss(0, 2.0) * (duty > 0.02)))))
                         for _ in range(n_sub))
        clk = s.max_clk * self.f if act.ctx else 345.0
        clk = round(clk / 15.0) * 15.0
        missing: dict[str, str] = {"fan_pct": "not supported on this GPU"}
        values: dict = {}
        if mig is not None:
            missing.update({"util_gpu_pct": MIG_UTIL, "util_mem_pct": MIG_UTIL})
            for name in ACTIVITY:
                missing[name] = "read per MIG instance in MIG mode (not supported on this GPU)"
            util_v, util_mem, subs = None, None, ()
        else:
            util_v = float(util)
            util_mem = float(max(0, min(100, round(100 * duty * act.dram * 0.92 + rng.gauss(0, 0.8)))))
            if not s.gpm:
                for name in ACTIVITY:
                    missing[name] = NO_GPM
            elif first:
                for name in ACTIVITY:
                    missing[name] = GPM_FIRST
            else:
                j = lambda: 1 + rng.gauss(0, 0.01)  # noqa: E731
                values = dict(
                    sm_active_pct=min(100.0, 100 * duty * act.sm * j()),
                    sm_occupancy_pct=min(100.0, 100 * duty * act.sm * act.occ * j()),
                    dram_bw_pct=min(100.0, 100 * duty * act.dram * j()),
                    tensor_pct=min(100.0, 100 * duty * act.tensor * j()))
                if s.nvlink_gbps:
                    nv = act.nvlink_gbps * 1e9 / 2**20
                    values["nvlink_rx_mib_per_s"] = nv * j()
                    values["nvlink_tx_mib_per_s"] = nv * j()
                values["pcie_rx_mib_per_s"] = act.pcie_mibs * j() + 40 * rng.random()
                values["pcie_tx_mib_per_s"] = act.pcie_mibs * 0.3 * j() + 30 * rng.random()
        return GpuSample(
            index=self.index, name=s.name, uuid=self.uuid, util_gpu_pct=util_v,
            util_gpu_samples_pct=subs, util_mem_pct=util_mem,
            mem_total_bytes=s.mem_total, mem_used_bytes=used, mem_reserved_bytes=s.reserved,
            power_w=round(power, 3), temp_c=float(round(self.temp)), sm_clock_mhz=clk,
            throttle=self.reasons if act.ctx else (), bus_id=self.bus, fan_pct=None,
            pstate=0 if act.ctx else 8, power_limit_w=float(self.power_limit),
            mem_clock_mhz=float(s.mem_clk), ecc_corrected=0, ecc_uncorrected=0, xid_count=0,
            mig_mode=mig is not None, missing=missing, migs=mig or (), **values)


def mig_samples(spec: Spec, parts, first: bool, rng) -> tuple[MigSample, ...]:
    """MIG instances: ``parts`` = [(profile, mem_total, mem_used, sm_count, Act)]."""
    out = []
    for i, (profile, total, used, sms, act) in enumerate(parts):
        missing: dict[str, str] = {}
        vals: dict = {}
        if first:
            missing = {n: GPM_FIRST for n in ACTIVITY}
        else:
            d = act.duty
            vals = dict(sm_active_pct=100 * d * act.sm * (1 + rng.gauss(0, 0.01)),
                        sm_occupancy_pct=100 * d * act.sm * act.occ,
                        dram_bw_pct=100 * d * act.dram, tensor_pct=100 * d * act.tensor)
        out.append(MigSample(index=i, name=f"{spec.name} MIG {profile}", uuid=f"MIG-{i:04x}-g",
                             mem_total_bytes=total, mem_used_bytes=used, gpu_instance_id=[1, 5, 6, 9][i % 4],
                             compute_instance_id=0, profile=profile, sm_count=sms,
                             missing=missing, **vals))
    return tuple(out)
