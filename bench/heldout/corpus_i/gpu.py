"""GPU boards as NVML and GPM report them: one power / thermal / clock model per board.

Power (calibrated on the real H200 recording in tests/data/h200): a board with a context
and nothing running draws ``ctx_w`` at full clock (121 W on the H200); tensor work costs
most and scales with clock^1.8 (voltage follows clock), SM work without tensor pipes less,
HBM traffic does not scale with the SM clock.  A bf16 matmul (SM 95%, tensor 93%,
DRAM 17%) asks about 1.1 kW at 1980 MHz, so under a 700 W cap the clock settles near
1455 MHz with "power cap" set, as the real board did; a device copy (SM 99, DRAM 88)
draws ~475 W uncapped.  Temperature relaxes to inlet + R x power with a time constant of
tens of seconds; past ``slow_c`` the driver takes clock away ("thermal (sw)"), past
``slow_c + 6`` the board's own slowdown fires ("hw slowdown" and "thermal (hw)").
"""

from __future__ import annotations

import math

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GIB = 2**30

# name, memory, reserve, TDP, ctx power, idle power, max/idle clock, mem clock, HBM B/s,
# dense bf16 FLOP/s, GPM, fan, thermal (inlet C, C per W, tau s, slowdown C), MIG capable
SPECS = {
    "H100": dict(name="NVIDIA H100 80GB HBM3", mem=85520809984, reserved=567279616, tdp=700,
                 ctx_w=112.0, idle_w=69.0, fmax=1980, fidle=345, memclk=2619, bw=3.35e12,
                 flops=989e12, gpm=True, fan=False, t_in=31.0, r_cw=0.066, tau=35.0,
                 slow_c=87.0, mig=True, nvlink=450e9),
    "H200": dict(name="NVIDIA H200", mem=150754820096, reserved=644939776, tdp=700,
                 ctx_w=121.0, idle_w=78.6, fmax=1980, fidle=345, memclk=3201, bw=4.8e12,
                 flops=989e12, gpm=True, fan=False, t_in=30.0, r_cw=0.062, tau=35.0,
                 slow_c=87.0, mig=True, nvlink=450e9),
    "B200": dict(name="NVIDIA B200", mem=191503138816, reserved=849346560, tdp=1000,
                 ctx_w=175.0, idle_w=140.0, fmax=1965, fidle=600, memclk=3996, bw=8.0e12,
                 flops=2250e12, gpm=True, fan=False, t_in=28.0, r_cw=0.047, tau=35.0,
                 slow_c=88.0, mig=True, nvlink=900e9),
    "A100": dict(name="NVIDIA A100-SXM4-80GB", mem=85899345920, reserved=0, tdp=400,
                 ctx_w=64.0, idle_w=52.0, fmax=1410, fidle=210, memclk=1593, bw=2.04e12,
                 flops=312e12, gpm=False, fan=False, t_in=30.0, r_cw=0.105, tau=30.0,
                 slow_c=85.0, mig=True, nvlink=300e9),
    "L40S": dict(name="NVIDIA L40S", mem=48305799168, reserved=0, tdp=350, ctx_w=78.0,
                 idle_w=34.0, fmax=2520, fidle=210, memclk=9001, bw=0.864e12, flops=362e12,
                 gpm=False, fan=True, t_in=28.0, r_cw=0.13, tau=25.0, slow_c=86.0, mig=False,
                 nvlink=0.0),
    "A10G": dict(name="NVIDIA A10G", mem=24146608128, reserved=0, tdp=300, ctx_w=58.0,
                 idle_w=17.0, fmax=1710, fidle=210, memclk=6251, bw=0.6e12, flops=70e12,
                 gpm=False, fan=True, t_in=27.0, r_cw=0.15, tau=25.0, slow_c=86.0, mig=False,
                 nvlink=0.0),
}


class Board:
    """One GPU: its clock, temperature and throttle reasons evolve with the work on it."""

    def __init__(self, model: str, index: int, rng, bus: str):
        self.s = SPECS[model]
        self.model = model
        self.index = index
        self.rng = rng
        self.bus_id = bus
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(
            rng.getrandbits(b) for b in (32, 16, 16, 16, 48))
        self.temp = self.s["t_in"] + 6 + rng.uniform(-1.5, 1.5)
        self.f = 1.0  # clock as a fraction of fmax, as last set
        self.power_limit = float(self.s["tdp"])
        self.extra_r = 0.0  # cooling fault: more C per W
        self.inlet_add = 0.0
        self.forced_mhz: float | None = None  # HW slowdown / power brake holds the clock
        self.forced_reasons: tuple[str, ...] = ()
        self.offset_c = rng.uniform(-2.0, 2.0)  # boards differ a little
        self.eff = 1.0 + rng.uniform(-0.025, 0.025)  # silicon: power at equal work
        self.seq = 0
        self.util_div = 6  # driver samples per second (1/6 s on these boards)

    def power_at(self, f: float, act: dict) -> float:
        s = self.s
        scale = s["tdp"] / 700.0
        ten = act.get("tensor", 0.0)
        sm = act.get("sm", 0.0)
        dyn = (990.0 * ten + 135.0 * max(0.0, sm - ten)) * scale * self.eff
        return s["ctx_w"] + dyn * f ** 1.8 + 250.0 * scale * act.get("dram", 0.0)

    def step(self, dt: float, act: dict, has_context: bool) -> None:
        """Settle clock, power and temperature for this tick's activity."""
        s = self.s
        busy = act.get("busy", 0.0)
        reasons: list[str] = []
        f = 1.0
        p = self.power_at(1.0, act)
        if busy > 0.05 and p > self.power_limit:
            base = self.power_at(0.0, act)
            dyn = p - base
            f = max(0.45, ((self.power_limit - base) / dyn) ** (1 / 1.8)) if dyn > 0 else 1.0
            reasons.append("power cap")
        f_cap = f
        if self.temp > s["slow_c"] and busy > 0.05:
            over = self.temp - s["slow_c"]
            f = min(f, max(0.45, 1.0 - 0.055 * over))
            reasons.append("thermal (sw)")
            if over > 6:
                reasons += ["hw slowdown", "thermal (hw)"]
        if self.forced_mhz is not None and busy > 0.02:
            f = min(f, self.forced_mhz / s["fmax"])
            reasons += [r for r in self.forced_reasons if r not in reasons]
        if "power cap" in reasons and f < f_cap - 0.02:
            reasons.remove("power cap")  # held lower by something else: below the cap
        if not has_context:
            f = s["fidle"] / s["fmax"]
        elif busy <= 0.02 and not reasons:
            f = 1.0  # a context keeps the board at its boost clock (the H200 did)
        self.f = f
        self.reasons = tuple(r for r in ("power cap", "hw slowdown", "sync boost", "thermal (sw)",
                                         "thermal (hw)", "power brake") if r in reasons)
        if not has_context:
            power = s["idle_w"]
        else:
            power = self.power_at(f, act)
        self.power = power * (1 + self.rng.gauss(0, 0.006))
        r = s["r_cw"] + self.extra_r
        target = s["t_in"] + self.inlet_add + self.offset_c + r * self.power
        self.temp += (target - self.temp) * (1 - math.exp(-dt / s["tau"]))

    @property
    def mhz(self) -> float:
        return round(self.f * self.s["fmax"] / 15.0) * 15.0  # 15 MHz clock steps

    def sample(self, dt: float, act: dict, mem_used: int, first: bool, mig=None) -> GpuSample:
        s, rng = self.s, self.rng
        busy = act.get("busy", 0.0)
        n = max(1, int(round(dt * self.util_div)))
        subs = act.get("subs")
        if subs is None:
            subs = [busy] * n
        samples = tuple(float(max(0, min(100, round(100 * (x + rng.gauss(0, 0.01)) if x > 0.004
                                                    else 0)))) for x in _resample(subs, n))
        util = round(sum(samples) / len(samples)) if samples else round(100 * busy)
        missing: dict[str, str] = {}
        vals: dict = {}
        gpm_keys = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")
        if not s["gpm"]:
            for k in gpm_keys:
                missing[k] = NO_GPM
        elif first:
            for k in gpm_keys:
                missing[k] = "GPM needs a second sample"
        else:
            jit = lambda x: max(0.0, min(100.0, 100 * x * (1 + rng.gauss(0, 0.01))))  # noqa: E731
            vals = dict(sm_active_pct=jit(act.get("sm", 0.0)),
                        sm_occupancy_pct=jit(act.get("occ", act.get("sm", 0.0) * 0.35)),
                        tensor_pct=jit(act.get("tensor", 0.0)), dram_bw_pct=jit(act.get("dram", 0.0)),
                        pcie_rx_mib_per_s=abs(act.get("pcie", 40.0) * (1 + rng.gauss(0, 0.05))),
                        pcie_tx_mib_per_s=abs(act.get("pcie", 40.0) * 0.6 * (1 + rng.gauss(0, 0.05))),
                        nvlink_rx_mib_per_s=abs(act.get("nvlink", 0.0) * (1 + rng.gauss(0, 0.03))),
                        nvlink_tx_mib_per_s=abs(act.get("nvlink", 0.0) * (1 + rng.gauss(0, 0.03))))
        if mig is not None:
            util = None
            samples = ()
            for k in ("util_gpu_pct", "util_mem_pct"):
                missing[k] = ("GPU-Util is not available per MIG instance (NVML: not supported "
                              "in MIG mode)")
            for k in gpm_keys:
                missing[k] = f"read per MIG instance in MIG mode ({missing.get(k, NO_GPM)})"
                vals.pop(k, None)
        if not s["fan"]:
            missing["fan_pct"] = "not supported on this GPU"
        memu = None if util is None else float(min(100, round(100 * act.get("dram", 0.0) * 0.92)))
        fan = None
        if s["fan"]:
            fan = float(max(30, min(100, round(30 + (self.temp - 40) * 1.6))))
        return GpuSample(
            index=self.index, name=s["name"], uuid=self.uuid,
            util_gpu_pct=None if util is None else float(util), util_gpu_samples_pct=samples,
            util_mem_pct=memu, mem_total_bytes=s["mem"], mem_used_bytes=int(mem_used),
            mem_reserved_bytes=s["reserved"] or None, power_w=round(self.power, 3),
            temp_c=float(round(self.temp)), sm_clock_mhz=self.mhz, throttle=self.reasons,
            bus_id=self.bus_id, fan_pct=fan, pstate=0 if mem_used > 0 else 8,
            power_limit_w=self.power_limit, mem_clock_mhz=float(s["memclk"]),
            ecc_corrected=0 if s["gpm"] or self.model == "A100" else None,
            ecc_uncorrected=0 if s["gpm"] or self.model == "A100" else None, xid_count=0,
            mig_mode=(mig is not None) if s["mig"] else None, missing=missing,
            migs=mig or (), **vals)


def _resample(subs, n):
    if len(subs) == n:
        return subs
    out = []
    for i in range(n):
        out.append(subs[min(len(subs) - 1, int(i * len(subs) / n))])
    return out
