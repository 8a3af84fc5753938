"""The GPU side of corpus Q: board specs, a power / clock / thermal model, and how NVML and
GPM would report a tick of kernel activity.

Work is described per 1/6-s slice as a list of (seconds, signature) pieces, a signature
being what GPM would read while that kind of kernel runs: (SM active %, SM occupancy %,
tensor %, DRAM %, power demand).  Power demand is in units of (TDP - idle) at the top
clock, so a dense bf16 GEMM asks for more than the board may draw (1.45) and the clock
drops under "power cap", as the real H200 in tests/data did (690 W, 1440-1470 MHz,
SM 96 %, occupancy 14 %, tensor 93 %, DRAM 17 %).  A device-to-device copy read
SM 99 / occupancy 80 / DRAM 88.5 at 474 W; CUDA-graph replay of one-element kernels read
GPU-Util 100 % with SM 0.3 %.  Those three readings anchor the signatures below.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputop.schema import GpuSample

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"


@dataclass(frozen=True)
class Spec:
    model: str  # short name used in the catalogue
    name: str  # what NVML calls it
    mem_bytes: int
    reserved_bytes: int
    sms: int
    tflops: float  # dense bf16, what a large GEMM achieves at the top clock
    hbm_tbs: float  # achievable DRAM bandwidth
    tdp_w: float
    idle_w: float  # with a CUDA context open, P0
    bare_w: float  # no context
    max_mhz: float
    idle_mhz: float  # no context
    gpm: bool
    fan: bool
    nvlink: bool
    slow_c: float  # software thermal slowdown
    hw_c: float  # hardware slowdown


SPECS = {
    "H100": Spec("H100", "NVIDIA H100 80GB HBM3", 85520809984, 566231040, 132, 700.0, 2.9,
                 700.0, 115.0, 72.0, 1980.0, 345.0, True, False, True, 87.0, 92.0),
    "H200": Spec("H200", "NVIDIA H200", 150754820096, 644939776, 132, 740.0, 4.25,
                 700.0, 121.0, 78.6, 1980.0, 345.0, True, False, True, 87.0, 92.0),
    "B200": Spec("B200", "NVIDIA B200", 191553257472, 740294656, 148, 1700.0, 7.0,
                 1000.0, 160.0, 120.0, 1965.0, 420.0, True, False, True, 87.0, 92.0),
    "A100": Spec("A100", "NVIDIA A100-SXM4-80GB", 85899345920, 0, 108, 260.0, 1.75,
                 400.0, 62.0, 52.0, 1410.0, 210.0, False, False, True, 85.0, 90.0),
    "L40S": Spec("L40S", "NVIDIA L40S", 48305799168, 0, 142, 300.0, 0.78,
                 350.0, 36.0, 24.0, 2520.0, 210.0, False, True, False, 86.0, 91.0),
    "A10G": Spec("A10G", "NVIDIA A10G", 24146608128, 0, 80, 95.0, 0.54,
                 300.0, 28.0, 18.0, 1710.0, 210.0, False, True, False, 85.0, 90.0),
}

# (SM active, occupancy, tensor, DRAM, power demand) while the kernel kind runs
GEMM = (96.0, 14.0, 92.0, 17.0, 1.45)
PREFILL = (94.0, 22.0, 74.0, 26.0, 1.15)
DECODE_W = (86.0, 24.0, 14.0, 84.0, 0.50)  # weight streaming GEMV / small GEMM
ATTN = (91.0, 36.0, 6.0, 90.0, 0.55)  # paged attention reading KV
ELEMENT = (97.0, 70.0, 0.0, 82.0, 0.58)  # optimizer, norms, copies
NCCL = (14.0, 3.0, 0.0, 7.0, 0.20)  # collective kernels spinning on a few SMs
SAMPLE = (58.0, 28.0, 3.0, 44.0, 0.45)  # softmax / top-k / logprobs over the vocabulary
TINY = (1.2, 0.1, 0.0, 0.2, 0.015)  # one-element kernels back to back
STENCIL = (98.0, 62.0, 0.0, 91.0, 0.70)
FFT = (95.0, 40.0, 0.0, 68.0, 0.65)
MONTE = (99.0, 55.0, 0.0, 6.0, 0.95)


class GpuSim:
    def __init__(self, spec: Spec, index: int, rng, ambient_c: float = 28.0,
                 power_limit_w: float | None = None, start_temp: float | None = None):
        self.spec = spec
        self.index = index
        self.rng = rng
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16),
            rng.getrandbits(16), rng.getrandbits(48))
        self.bus_id = "00000000:%02X:00.0" % (0x18 + 0x10 * index)
        self.ambient = ambient_c
        self.limit = power_limit_w or spec.tdp_w
        self.r_th = 42.0 / spec.tdp_w  # C per W at full airflow
        self.cooling = 1.0  # multiplies r_th (a failing fan raises it)
        self.temp = start_temp if start_temp is not None else ambient_c + 12.0
        self.c = 1.0  # clock factor
        self.thermal_cap = 1.0
        self.brake = False
        self.context = True
        self.fan = 32.0
        self.fan_fault = 1.0  # fraction of commanded fan speed delivered
        self.throttle: tuple[str, ...] = ()
        self.app_clock_cap = 1.0
        self._reset_tick()
        self.ticks = 0
        self.ecc = 0

    def _reset_tick(self):
        self.samples: list[float] = []
        self.t_acc = 0.0
        self.sm = self.occ = self.tensor = self.dram = 0.0
        self.p_acc = 0.0
        self.nvl = 0.0
        self.pcie = 0.0

    def clock_factor(self) -> float:
        return self.c

    def step(self, dt: float, pieces, nvlink_mib_s: float = 0.0, pcie_mib_s: float = 0.0):
        """Advance one slice: ``pieces`` = [(seconds, signature), ...] of kernels run."""
        sp = self.spec
        busy = sm = occ = ten = dr = dem = 0.0
        for sec, sig in pieces:
            if sec <= 0:
                continue
            f = sec / dt
            busy += f
            sm += f * sig[0]
            occ += f * sig[1]
            ten += f * sig[2]
            dr += f * sig[3]
            dem += f * sig[4]
        if busy > 1.0:  # overlapping streams: GPU-Util saturates, activity does not add up
            k = 1.0 / busy
            sm, occ, ten, dr, dem, busy = min(sm, 100.0), occ * k, min(ten, 100.0), \
                min(dr, 100.0), dem * k * 1.1, 1.0
        # clock: power cap, thermal controller, power brake, application clocks
        idle = sp.idle_w if self.context else sp.bare_w
        span = sp.tdp_w - sp.idle_w
        reasons = []
        c_power = 1.0
        if dem > 0 and idle + span * dem > self.limit:
            c_power = max(0.3, ((self.limit - idle) / (span * dem)) ** (1 / 1.25))
            reasons.append("power cap")
        if self.temp > sp.slow_c:
            self.thermal_cap = max(0.45, self.thermal_cap - 0.02)
        elif self.temp < sp.slow_c - 2.0:
            self.thermal_cap = min(1.0, self.thermal_cap + 0.01)
        c = min(c_power, self.thermal_cap, self.app_clock_cap)
        if self.thermal_cap < 0.999 and self.thermal_cap <= c_power:
            reasons.append("thermal (sw)")
        if self.temp > sp.hw_c:
            c = min(c, 0.5)
            reasons.append("hw slowdown")
            reasons.append("thermal (hw)")
        if self.brake:
            c = min(c, 0.38)
            reasons += ["hw slowdown", "power brake"]
        self.c = c
        self.throttle = tuple(r for r in ("power cap", "hw slowdown", "sync boost",
                                          "thermal (sw)", "thermal (hw)", "power brake")
                              if r in reasons)
        power = idle + span * dem * (c ** 1.25) + self.rng.gauss(0, 1.2)
        power = min(power, self.limit + 4.0) if dem > 0 else power
        # thermal: first order, tau 45 s; fans follow the temperature
        if sp.fan:
            want = max(30.0, min(100.0, 30.0 + (self.temp - 45.0) * 2.2))
            self.fan += (want - self.fan) * min(1.0, dt / 4.0)
            airflow = max(0.15, (self.fan / 100.0) * self.fan_fault)
            r = self.r_th * self.cooling * (0.55 + 0.45 / max(airflow, 0.3))
        else:
            r = self.r_th * self.cooling
        t_ss = self.ambient + r * power
        self.temp += (t_ss - self.temp) * min(1.0, dt / 45.0)
        util = 100.0 * min(1.0, busy)
        if 0 < util < 100:
            util = min(100.0, max(0.0, util + self.rng.gauss(0, 1.0)))
        self.samples.append(float(round(util)))
        self.t_acc += dt
        self.sm += sm * dt
        self.occ += occ * dt
        self.tensor += ten * dt
        self.dram += dr * dt
        self.p_acc += power * dt
        self.nvl += nvlink_mib_s * dt
        self.pcie += pcie_mib_s * dt
        self.last_busy = busy

    def sample(self, mem_used: int, hourly_util_period_1s: bool = False) -> GpuSample:
        sp = self.spec
        t = max(self.t_acc, 1e-9)
        missing: dict[str, str] = {}
        gpm = {}
        if sp.gpm:
            if self.ticks == 0:
                for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                    missing[k] = "GPM needs a second sample"
                for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                          "nvlink_tx_mib_per_s"):
                    missing[k] = "GPM needs a second sample"
            else:
                n = self.rng.gauss
                gpm = dict(
                    sm_active_pct=_pct(self.sm / t + n(0, 0.15)),
                    sm_occupancy_pct=_pct(self.occ / t + n(0, 0.1)),
                    tensor_pct=_pct(self.tensor / t + n(0, 0.1)),
                    dram_bw_pct=_pct(self.dram / t + n(0, 0.15)),
                    pcie_rx_mib_per_s=round(max(0.0, self.pcie / t * 0.6 + abs(n(0, 30))), 1),
                    pcie_tx_mib_per_s=round(max(0.0, self.pcie / t * 0.4 + abs(n(0, 20))), 1),
                    nvlink_rx_mib_per_s=round(self.nvl / t, 1) if sp.nvlink else 0.0,
                    nvlink_tx_mib_per_s=round(self.nvl / t, 1) if sp.nvlink else 0.0)
        else:
            for k in ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct"):
                missing[k] = NO_GPM
            for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                      "nvlink_tx_mib_per_s"):
                missing[k] = "not supported on this GPU"
        if not sp.fan:
            missing["fan_pct"] = "not supported on this GPU"
        samples = tuple(self.samples)
        if sp.gpm:  # Hopper / Blackwell: 1/6-s period, the rate is the newest sample
            util = samples[-1] if samples else 0.0
        else:  # older boards average over about a second
            last = samples[-6:] or (0.0,)
            util = float(round(sum(last) / len(last)))
        mem_util = _pct(self.dram / t * 0.9) if sp.gpm else float(round(min(100.0, util * 0.4)))
        clock = round(sp.max_mhz * self.c / 15.0) * 15.0 if self.context else sp.idle_mhz
        g = GpuSample(
            index=self.index, name=sp.name, uuid=self.uuid, util_gpu_pct=float(util),
            util_gpu_samples_pct=samples if self.ticks else samples[-10:],
            util_mem_pct=float(round(mem_util)),
            mem_total_bytes=sp.mem_bytes, mem_used_bytes=int(mem_used),
            mem_reserved_bytes=sp.reserved_bytes or None,
            power_w=round(self.p_acc / t, 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(clock), throttle=self.throttle, bus_id=self.bus_id,
            fan_pct=float(round(self.fan * self.fan_fault)) if sp.fan else None,
            pstate=0 if self.context else 8, power_limit_w=float(self.limit),
            mem_clock_mhz={"H100": 2619.0, "H200": 3201.0, "B200": 3996.0, "A100": 1593.0,
                           "L40S": 9001.0, "A10G": 6251.0}[sp.model],
            ecc_corrected=self.ecc, ecc_uncorrected=0, xid_count=0, mig_mode=False,
            missing=missing, **gpm)
        self.ticks += 1
        self._reset_tick()
        return g


def _pct(v: float) -> float:
    return round(min(100.0, max(0.0, v)), 3)
