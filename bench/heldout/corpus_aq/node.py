"""One node at a fine grain (DT) -> gputop frames at the collector's tick.

Workloads fill, per slice and per GPU, an activity accumulator (time with >= 1 kernel, SM,
occupancy, tensor, DRAM coverage); the GPU model turns that into power, clocks (power and
thermal governor), temperature and NVML/GPM readings; the host model turns the tree's and
the other tenants' CPU demand into share, PSI, run queue, switches and quota throttling."""
from __future__ import annotations

import math

from gputop.buckets import bucket_index, bucket_bounds_ns
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .hw import BOARDS, GiB

DT = 0.1
GPM_MISSING = {k: "needs Hopper+ (GPM)" for k in
               ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct")}


class Act:
    """Activity of one GPU over one slice: seconds of each kind of coverage."""
    __slots__ = ("busy", "sm", "occ", "tensor", "dram")

    def __init__(self):
        self.busy = self.sm = self.occ = self.tensor = self.dram = 0.0

    def add(self, d, busy, sm, occ, tensor, dram):
        if d <= 0:
            return
        self.busy += d * busy
        self.sm += d * sm
        self.occ += d * occ
        self.tensor += d * tensor
        self.dram += d * dram


# activity signatures while a kernel of that kind runs: (busy, sm, occ, tensor, dram)
SIG = {
    "gemm": (1.0, 0.93, 0.45, 0.62, 0.28),     # compute-bound GEMM / conv
    "attn": (1.0, 0.90, 0.40, 0.48, 0.35),
    "mem": (1.0, 0.80, 0.55, 0.04, 0.90),      # bandwidth-bound (GEMV, embedding, optimizer)
    "decode": (1.0, 0.74, 0.40, 0.10, 0.78),
    "nccl_wait": (1.0, 0.05, 0.03, 0.0, 0.01),  # spinning in a collective kernel
    "nccl": (1.0, 0.12, 0.08, 0.0, 0.35),
    "tiny": (1.0, 0.10, 0.04, 0.02, 0.05),     # launch-bound small kernels (span incl. gaps)
    "copy": (0.6, 0.02, 0.01, 0.0, 0.25),
    "vae": (1.0, 0.88, 0.50, 0.30, 0.55),
    "small": (1.0, 0.13, 0.05, 0.04, 0.10),    # batch-1 kernels: a few blocks on a few SMs
}


class GPU:
    def __init__(self, board_key, index, rng, power_limit=None, inlet=28.0, r_scale=1.0):
        self.b = BOARDS[board_key]
        self.key = board_key
        self.index = index
        self.power_limit = power_limit or self.b.tdp
        self.inlet = inlet
        self.r_scale = r_scale
        self.brake_w = None          # external power brake cap (rack), W
        self.f = self.b.fmax
        self.temp = inlet + self.b.r_th * self.b.idle_w
        self.power = self.b.idle_w
        self.reasons = ()
        self.uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                                                       rng.getrandbits(16), rng.getrandbits(16),
                                                       rng.getrandbits(48))
        self.bus = "00000000:%02X:00.0" % (0x18 + 0x10 * index)
        self.energy_tick = []
        self.samples = []            # busy fraction per slice since last tick
        self.acc = [0.0] * 6         # tick sums: busy, sm, occ, tensor, dram, power
        self.acc_n = 0
        self.fsum = 0.0
        self.reason_hits = {}
        self.hist_busy = []          # last second of busy slices

    def clock_factor(self):
        return self.f / self.b.fmax

    def update(self, a: Act, other: Act, has_ctx: bool, dt=DT):
        b = self.b
        busy = min(1.0, 1 - (1 - a.busy / dt) * (1 - other.busy / dt))
        sm = min(1.0, (a.sm + other.sm) / dt)
        occ = min(1.0, (a.occ + other.occ) / dt)
        ten = min(1.0, (a.tensor + other.tensor) / dt)
        dram = min(1.0, (a.dram + other.dram) / dt)
        fr = self.f / b.fmax
        g = 0.05 * busy + 0.30 * sm + 0.55 * ten + 0.22 * dram
        dyn = (b.tdp - b.idle_w - b.ctx_w) * 1.18
        base = b.idle_w + (b.ctx_w if has_ctx else 0.0)
        p_at = lambda f: base + dyn * g * (f / b.fmax) ** 2.4
        p = p_at(self.f)
        limit = self.power_limit if self.brake_w is None else min(self.power_limit, self.brake_w)
        reasons = []
        # thermal ceiling
        t_ceiling = b.fmax
        if self.temp > b.t_slow:
            t_ceiling = max(b.fmin, b.fmax * (1 - 0.06 * (self.temp - b.t_slow)))
        target = min(b.fmax, t_ceiling)
        if p > limit:
            # solve for the clock that meets the limit
            need = ((limit - base) / max(1e-6, dyn * g)) ** (1 / 2.4) * b.fmax
            target = min(target, max(b.fmin, need))
        if target < self.f:
            self.f = max(target, self.f - 0.5 * (self.f - target) - 1)
        else:
            self.f = min(target, self.f + 240 * dt * 10 * 0.1 + 0.3 * (target - self.f))
        self.f = round(self.f / 15) * 15 if self.f < b.fmax else b.fmax
        p = p_at(self.f)
        if busy > 0.02:
            if self.f < b.fmax - 1:
                if self.temp > b.t_slow:
                    reasons.append("thermal (sw)")
                    if self.temp > b.t_slow + 5:
                        reasons.append("hw slowdown")
                if self.brake_w is not None and p >= self.brake_w * 0.97:
                    reasons += ["hw slowdown", "power brake"]
                elif p >= self.power_limit * 0.96 or (self.brake_w is None and p > limit * 0.96):
                    reasons.append("power cap")
        self.reasons = tuple(dict.fromkeys(reasons))
        p = min(p, limit * 1.02 + 3)
        self.power = p
        tgt = self.inlet + b.r_th * self.r_scale * p
        self.temp += (tgt - self.temp) * (1 - math.exp(-dt / 25.0))
        self.samples.append(busy)
        self.hist_busy.append(busy)
        if len(self.hist_busy) > 10:
            del self.hist_busy[0]
        for i, v in enumerate((busy, sm, occ, ten, dram, p)):
            self.acc[i] += v
        self.acc_n += 1
        self.fsum += self.f
        for r in self.reasons:
            self.reason_hits[r] = self.reason_hits.get(r, 0) + 1

    def sample(self, rng, first, mem_used, procs_present, fan_base):
        b = self.b
        n = max(1, self.acc_n)
        busy, sm, occ, ten, dram, p = (x / n for x in self.acc)
        per = max(1, round(b.nvml_period / DT))
        smp = []
        for i in range(0, len(self.samples), per):
            chunk = self.samples[i:i + per]
            smp.append(float(round(100 * sum(chunk) / len(chunk))))
        util = float(round(100 * sum(self.hist_busy) / max(1, len(self.hist_busy))))
        reasons = tuple(r for r, k in self.reason_hits.items() if k >= n / 2)
        missing = {}
        if not b.fan:
            missing["fan_pct"] = "not supported on this GPU"
        gpm = b.gpm and not first
        if not b.gpm:
            missing.update(GPM_MISSING)
        fan = None
        if b.fan:
            fan = float(min(100, max(30, round(fan_base + (self.temp - 45) * 2.2))))
        total = b.mem_bytes
        reserved = int(total * 0.0043)
        mem_used = min(mem_used, total - reserved)
        g = GpuSample(
            index=self.index, name=b.name, uuid=self.uuid, util_gpu_pct=util,
            util_gpu_samples_pct=tuple(smp), util_mem_pct=float(round(100 * dram * 0.85)),
            sm_active_pct=(round(100 * sm, 2) if gpm else None),
            sm_occupancy_pct=(round(100 * occ, 2) if gpm else None),
            dram_bw_pct=(round(100 * dram, 2) if gpm else None),
            tensor_pct=(round(100 * ten, 2) if gpm else None),
            mem_total_bytes=total, mem_used_bytes=int(mem_used), mem_reserved_bytes=reserved,
            power_w=round(p + rng.uniform(-1.5, 1.5), 3), temp_c=float(round(self.temp)),
            sm_clock_mhz=float(round(self.fsum / n / 15) * 15) if self.fsum / n < b.fmax else b.fmax,
            throttle=reasons, bus_id=self.bus, fan_pct=fan, pstate=0 if procs_present else 8,
            power_limit_w=float(self.power_limit), mem_clock_mhz=float(b.mem_clock),
            pcie_rx_mib_per_s=(round(20 + 400 * busy * rng.random(), 2) if gpm else None),
            pcie_tx_mib_per_s=(round(5 + 60 * busy * rng.random(), 2) if gpm else None),
            nvlink_rx_mib_per_s=None, nvlink_tx_mib_per_s=None,
            ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False, missing=missing)
        self.samples = []
        self.acc = [0.0] * 6
        self.acc_n = 0
        self.fsum = 0.0
        self.reason_hits = {}
        return g


class Host:
    """The tree's cpuset and quota, other tenants, PSI, switches."""

    def __init__(self, rng, host_cpus, cpuset, quota=None):
        self.rng = rng
        self.cpus = host_cpus
        self.cpuset = tuple(cpuset)
        self.ncores = len(self.cpuset)
        self.quota = quota
        self.psi = 0.6
        self.psi_acc = 0.0
        self.psi_n = 0
        self.tree_cpu = 0.0
        self.host_busy = 0.0
        self.invol = 0
        self.vol = 0
        self.periods = 0
        self.throttled = 0
        self.ctx_total = rng.randrange(10 ** 8, 5 * 10 ** 8)
        self.share = 1.0          # fraction of its demand the tree got last slice
        self.launch_share = 1.0   # the launching thread's own share
        self.rq = 1.0
        self.cpu_pct = 0.0
        self._acc_cpu = 0.0
        self._acc_n = 0
        self.t = 0.0

    def update(self, demand, threads, other_on_set, other_elsewhere, launch_core_other,
               dt=DT):
        """demand: tree cores wanted; other_on_set: other tenants' cores wanted on our cpuset;
        launch_core_other: extra load landing on the launch thread's core (0..)."""
        c = self.ncores
        tot = demand + other_on_set
        got = demand if tot <= c else c * demand / tot
        if self.quota is not None:
            self.periods += max(1, round(dt / 0.1))
            if got > self.quota:
                got = self.quota
                self.throttled += max(1, round(dt / 0.1))
            elif got > self.quota * 0.93 and self.rng.random() < 0.08:
                self.throttled += 1
        self.share = got / demand if demand > 0 else 1.0
        ls = 1.0 / (1.0 + launch_core_other) if launch_core_other > 0 else 1.0
        self.launch_share = min(ls, 1.0 if self.quota is None else self.share) * \
            (self.share if tot > c else 1.0) ** 0.5
        self.tree_cpu += got * dt
        over = max(0.0, tot / c - 1.0)
        p_some = min(1.0, 0.006 + 1.4 * over + 0.5 * min(1.0, launch_core_other) * (1.0 / c) * 4)
        self.psi_acc += p_some
        self.psi_n += 1
        self.t += dt
        if self.psi_n * dt >= 2.0 - 1e-9:
            avg = self.psi_acc / self.psi_n
            k = math.exp(-2.0 / 10.0)
            self.psi = self.psi * k + 100 * avg * (1 - k)
            self.psi_acc = 0.0
            self.psi_n = 0
        # switches: a busy thread sees a few involuntary switches a second; contention many
        base_inv = 6.0 * threads
        contended = (over * c * 180.0 + launch_core_other * 120.0)
        self.invol += int(self.rng.random() + (base_inv + contended) * dt)
        self.vol += int(self.rng.random() + (150 * threads + 400) * dt)
        used = min(self.cpus, got + min(other_on_set, c) + other_elsewhere + 0.3)
        self._acc_cpu += used / self.cpus
        self._acc_n += 1
        self.rq = tot + other_elsewhere + 0.4 if tot < c else c + other_elsewhere + (tot - c) + 0.4
        self.ctx_total += int((used * 900 + contended * 3 + 2000) * dt)

    def sample(self):
        cpu = 100.0 * self._acc_cpu / max(1, self._acc_n)
        self._acc_cpu = 0.0
        self._acc_n = 0
        return cpu


def launch_hist(rng, api, pid, count, launch_share, tick_s, mean_us=4.0, slice_ms=4.0):
    """A tick's host-side call durations: a lognormal body around mean_us plus the calls
    that straddle a preemption of the launching thread (lost CPU share)."""
    if count <= 0:
        return LaunchHist(api=api, pid=pid)
    lost = max(0.0, 1.0 - launch_share)
    # the thread loses lost*tick seconds in preemptions of ~slice_ms; the share of those that
    # land inside a launch call is the share of the thread's time spent in launch calls
    in_call = min(0.9, count * mean_us * 1e-6 / tick_s * 1.5 + 0.05)
    n_pre = min(count // 2, int(lost * tick_s * in_call / (slice_ms * 1e-3) + rng.random()))
    buckets = {}
    total_ns = 0
    mx = 0
    n_body = count - n_pre
    # body: a few bins
    for q, w in ((0.55, 0.3), (0.8, 0.3), (1.0, 0.2), (1.4, 0.12), (2.5, 0.06), (6.0, 0.02)):
        k = int(n_body * w + rng.random())
        if k <= 0:
            continue
        v = int(mean_us * q * 1000 * rng.uniform(0.9, 1.1))
        i = bucket_index(v)
        buckets[i] = buckets.get(i, 0) + k
        total_ns += k * v
        mx = max(mx, v)
    for j in range(min(n_pre, 40)):
        v = int(rng.uniform(0.2, 1.0) * slice_ms * 1e6 * rng.choice((0.5, 1, 1, 1.5, 2)))
        k = n_pre // 40 + (1 if j < n_pre % 40 else 0) if n_pre > 40 else 1
        i = bucket_index(v)
        buckets[i] = buckets.get(i, 0) + k
        total_ns += k * v
        mx = max(mx, v)
    cnt = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=cnt, sum_ns=total_ns, max_ns=mx,
                      buckets=dict(sorted(buckets.items())))
