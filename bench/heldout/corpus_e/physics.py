"""One GPU's board physics: power from activity, clocks from the power cap and heat, the
temperature's lag, and the GpuSample NVML/GPM would give for a tick.

Power (fit to the real H200 recording, scaled by each board's TDP): a context at full
clock draws ``ctx_w``; on top, SM activity and tensor work draw
A x (sm + 4.2 x tensor) x r^1.4 and DRAM traffic Bd x dram, where r is the SM clock over
its maximum.  The H200's bf16 matmul (sm 0.96, tensor 0.93) then asks ~970 W and is held
at 700 W near 1470 MHz with "power cap" set; its device copy (sm 0.99, dram 0.89) draws
~460 W at 1980 MHz; graph-replayed tiny kernels ~123 W, all as measured.  When the demand
passes the enforced limit the clock drops until it fits.  Temperature follows the power
with a 45 s time constant; past 86 C the driver slows the clock (thermal (sw)).
"""

from __future__ import annotations

import math

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIRST = "GPM needs a second sample"
ACTIVITY = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")
UTIL_SAMPLES_PER_S = 5  # the real H200 gave 5 buffered GPU-Util samples per 1 s tick
TAU_S = 45.0


class GpuState:
    def __init__(self, board, index: int, rng, inlet_c: float = 27.0, limit_w=None):
        self.b = board
        self.index = index
        self.rng = rng
        self.inlet = inlet_c
        self.limit = float(limit_w or board.tdp_w)
        self.temp = inlet_c + 9.0
        self.r = 1.0  # SM clock / max, as of the last tick (what the workload ran at)
        self.first = True
        self.bus_id = f"00000000:{0x18 + 0x10 * index:02X}:00.0"
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % tuple(
            rng.getrandbits(bits) for bits in (32, 16, 16, 16, 48))

    def demand_w(self, sm, tensor, dram, r):
        span = self.b.tdp_w - self.b.ctx_w
        return self.b.ctx_w + 0.30 * span * (sm + 4.2 * tensor) * r ** 1.4 + 0.33 * span * dram

    def tick(self, dt: float, act: dict, cond: dict) -> GpuSample:
        """``act``: busy, sm, occ, dram, tensor (tick averages, 0..1), context (bool),
        mem_used, nvlink/pcie MiB/s, optional period_s / duty for a saw-tooth;
        ``cond``: limit_w, force_r and reasons (hw slowdown, power brake), heat_c (added to
        the temperature the board settles at)."""
        rng, b = self.rng, self.b
        limit = cond.get("limit_w", self.limit)
        context = act.get("context", True)
        sm, tensor, dram = act.get("sm", 0.0), act.get("tensor", 0.0), act.get("dram", 0.0)
        busy = act.get("busy", 0.0)
        reasons = []
        r = 1.0
        forced = cond.get("force_r")
        if forced is not None:
            r = min(r, forced)
            reasons.extend(cond.get("reasons", ("hw slowdown",)))
        if self.temp > 86.0:
            r = min(r, max(0.45, 1.0 - 0.07 * (self.temp - 86.0)))
            reasons.append("thermal (sw)")
        if self.temp > 92.0:
            reasons.append("thermal (hw)")
        if context and self.demand_w(sm, tensor, dram, r) > limit * 0.995:
            span = b.tdp_w - b.ctx_w
            room = limit * 0.99 - b.ctx_w - 0.33 * span * dram
            work = 0.30 * span * (sm + 4.2 * tensor)
            if work > 0 and room > 0:
                r = min(r, max(0.3, (room / work) ** (1 / 1.4)))
            else:
                r = min(r, 0.3)
            reasons.insert(0, "power cap")
        if context:
            power = self.demand_w(sm, tensor, dram, r) * (1 + rng.gauss(0, 0.006))
            power = min(power, limit * (1 + abs(rng.gauss(0, 0.004))))
            mhz = round(b.max_mhz * r / 15.0) * 15.0
            if "power cap" in reasons:
                mhz += 15.0 * rng.choice((-1, 0, 0, 1))
            pstate = 0
        else:
            power = b.idle_w * (1 + rng.gauss(0, 0.004))
            mhz, pstate = b.idle_mhz, 8
        target = self.inlet + b.temp_per_w * power / b.tdp_w + cond.get("heat_c", 0.0)
        self.temp += (target - self.temp) * (1 - math.exp(-dt / TAU_S))
        self.r = (mhz / b.max_mhz) if context else 1.0
        samples = self._util_samples(dt, busy, act)
        missing = {"fan_pct": "not supported on this GPU"}
        values = {}
        if not b.gpm:
            for name in ACTIVITY:
                missing[name] = NO_GPM
        elif self.first:
            for name in ACTIVITY:
                missing[name] = GPM_FIRST
        else:
            def noisy(x, sd):
                return max(0.0, min(100.0, 100 * x + rng.gauss(0, sd))) if x > 0 else 0.0
            values = dict(sm_active_pct=noisy(sm, 0.6), sm_occupancy_pct=noisy(act.get("occ", 0), 0.4),
                          tensor_pct=noisy(tensor, 0.4), dram_bw_pct=noisy(dram, 0.5))
            link = act.get("nvlink", 0.0)
            values.update(nvlink_rx_mib_per_s=max(0.0, link * (1 + rng.gauss(0, 0.03))),
                          nvlink_tx_mib_per_s=max(0.0, link * (1 + rng.gauss(0, 0.03))),
                          pcie_rx_mib_per_s=max(0.0, act.get("pcie_rx", 12.0) * (1 + rng.gauss(0, 0.1))),
                          pcie_tx_mib_per_s=max(0.0, act.get("pcie_tx", 8.0) * (1 + rng.gauss(0, 0.1))))
        self.first = False
        util_mem = min(100.0, round(100 * dram * 1.04 + (rng.random() if dram > 0.01 else 0)))
        return GpuSample(
            index=self.index, name=b.name, uuid=self.uuid, bus_id=self.bus_id,
            util_gpu_pct=float(samples[-1]), util_gpu_samples_pct=tuple(float(s) for s in samples),
            util_mem_pct=float(util_mem), mem_total_bytes=b.mem_bytes,
            mem_used_bytes=int(act.get("mem_used", 0)), mem_reserved_bytes=b.reserve_bytes,
            power_w=round(power, 3), temp_c=float(round(self.temp)), sm_clock_mhz=float(mhz),
            throttle=tuple(dict.fromkeys(reasons)) if context else (), fan_pct=None,
            pstate=pstate, power_limit_w=float(limit), mem_clock_mhz=float(b.mem_mhz),
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, **values)

    def _util_samples(self, dt, busy, act):
        n = max(1, int(round(dt * UTIL_SAMPLES_PER_S)))
        if self.first:
            n = min(10, 2 * n)
        rng = self.rng
        period, duty = act.get("period_s"), act.get("duty")
        out = []
        h = 1.0 / UTIL_SAMPLES_PER_S
        for i in range(n):
            if period and duty is not None and period > 2 * h:
                start = (act.get("t", 0.0) + i * h + act.get("phase", 0.0)) % period
                on = duty * period  # busy for the first part of every period
                overlap = max(0.0, min(start + h, on) - start)
                if start + h > period:  # the sample runs into the next period
                    overlap += min(start + h - period, on)
                value = 100 * min(1.0, overlap / h)
            else:
                value = 100 * busy
            value += rng.gauss(0, 1.2) if 0 < value < 100 else 0
            out.append(int(max(0, min(100, round(value)))))
        return out
