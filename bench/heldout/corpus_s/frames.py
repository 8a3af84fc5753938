"""Turning simulated activity into gputop frames: GPU physics (power, clocks, heat), the
process list, the host's /proc readings, the pinned tree and the eBPF launch histograms."""
from __future__ import annotations

import hashlib
import math

from . import minnp as np
from gputop.buckets import bucket_index

from gputop.buckets import SUB_BUCKETS
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)

from .hw import GpuSpec


def rng_for(name: str, salt: str = "") -> np.Gen:
    digest = hashlib.sha256(f"{name}/{salt}".encode()).digest()
    return np.Gen(int.from_bytes(digest[:8], "little"))


def smooth_step(t: float, t0: float, ramp: float) -> float:
    """0 before t0, 1 after t0+ramp, linear between (ramp 0: abrupt)."""
    if t < t0:
        return 0.0
    if ramp <= 0 or t >= t0 + ramp:
        return 1.0
    return (t - t0) / ramp


class GpuState:
    """One GPU's activity per tick, in seconds of each kind of activity."""

    def __init__(self, spec: GpuSpec, index: int, n: int, tick: float, name: str):
        self.spec, self.index, self.n, self.tick = spec, index, n, tick
        self.busy = np.zeros(n)
        self.sm = np.zeros(n)
        self.tensor = np.zeros(n)
        self.dram = np.zeros(n)
        self.occ = np.zeros(n)
        self.nvlink = np.zeros(n)  # bytes moved over NVLink
        self.pcie = np.zeros(n)
        self.mem_used = np.zeros(n)  # bytes (processes), set by the scenario
        self.context = np.ones_bool(n)  # a CUDA context exists (P0 idle power)
        self.clk_factor = np.ones(n)  # forced clock fraction (throttling scenarios)
        self.forced_reasons: list[tuple[str, ...]] = [()] * n
        self.r_th = np.full(n, spec.r_th)
        self.power_limit = np.full(n, spec.power_limit)
        h = hashlib.sha256(f"{name}/{index}".encode()).hexdigest()
        self.uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"
        self.bus_id = f"00000000:{[0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][index % 8]:02X}:00.0"
        self.temp = spec.t_in + spec.r_th * spec.p_idle
        self.ecc_corr = int(h[32:34], 16) % 3

    def add(self, t0: float, t1: float, busy: float, sm: float, tensor: float = 0.0,
            dram: float = 0.0, occ: float | None = None, nvlink_bytes: float = 0.0) -> None:
        """Activity over [t0, t1): fractions of that time (busy: >= 1 kernel running)."""
        if t1 <= t0:
            return
        span = t1 - t0
        i = int(t0 / self.tick)
        while t0 < t1 and i < self.n:
            end = min(t1, (i + 1) * self.tick)
            d = end - t0
            if d > 0:
                self.busy[i] += d * busy
                self.sm[i] += d * sm
                self.tensor[i] += d * tensor
                self.dram[i] += d * dram
                self.occ[i] += d * (sm * 0.3 if occ is None else occ)
                self.nvlink[i] += nvlink_bytes * d / span
            t0 = end
            i += 1


def render_gpus(gpus: list[GpuState], k: int, rng: np.Gen) -> tuple[GpuSample, ...]:
    out = []
    for g in gpus:
        s = g.spec
        tick = g.tick
        busy = min(1.0, g.busy[k] / tick)
        sm = min(1.0, g.sm[k] / tick)
        ten = min(1.0, g.tensor[k] / tick)
        dr = min(1.0, g.dram[k] / tick)
        occ = min(1.0, g.occ[k] / tick)
        ctx = bool(g.context[k])
        # power: calibrated on the real H200 (idle 123 W, tiny decode ~210 W, training ~470 W,
        # big matmul over 700 W demand -> capped)
        scale = s.power_limit / 700.0 if s.power_limit != 700 else 1.0
        demand = (s.p_idle if ctx else s.p_sleep) + scale * (160 * sm + 820 * ten + 260 * dr)
        if busy > 0.02 and sm < 0.05:  # spinning tiny kernels still clock the chip
            demand += 6 * scale
        cap = float(g.power_limit[k])
        reasons: list[str] = list(g.forced_reasons[k])
        cf = float(g.clk_factor[k])
        clk = s.clk_max * cf if ctx else s.clk_idle
        if demand > cap:
            over = demand / cap
            clk = min(clk, s.clk_max / over ** 0.45)
            if "power cap" not in reasons and "power brake" not in reasons:
                reasons.append("power cap")
            power = cap * (0.955 + 0.035 * rng.random())
        else:
            power = demand * (0.98 + 0.04 * rng.random())
            if cf < 1.0:
                power = s.p_idle + (power - s.p_idle) * (0.55 + 0.45 * cf)
        if clk < s.clk_max and ctx and busy > 0.05:
            clk = round(clk / 15) * 15
        else:
            clk = s.clk_max if ctx else s.clk_idle
            if cf < 1.0 and ctx:
                clk = round(s.clk_max * cf / 15) * 15
        # heat: first order, tau ~25 s
        t_eq = s.t_in + float(g.r_th[k]) * power
        a = 1 - math.exp(-tick / 25.0) if k > 0 else 1.0
        g.temp += (t_eq - g.temp) * a
        jitter = lambda v, sd: max(0.0, v + rng.normal(0, sd))  # noqa: E731
        util = 100 * busy
        samples = tuple(float(min(100, round(jitter(util, 2.5 if 3 < util < 97 else 0.4))))
                        for _ in range(max(1, int(round(tick * 6)) if tick <= 1 else 6)))
        util_pct = float(round(min(100.0, jitter(util, 1.2)))) if util > 0.5 else 0.0
        missing = {}
        if s.fan:
            fan = float(round(30 + max(0, g.temp - 40) * 1.6))
        else:
            fan = None
            missing["fan_pct"] = "not supported on this GPU"
        if s.gpm:
            smv = jitter(100 * sm, 0.6)
            gpm = dict(sm_active_pct=min(100.0, smv), sm_occupancy_pct=min(100.0, jitter(100 * occ, 0.3)),
                       dram_bw_pct=min(100.0, jitter(100 * dr, 0.4)),
                       tensor_pct=min(100.0, jitter(100 * ten, 0.3)),
                       pcie_rx_mib_per_s=jitter(40 + 400 * busy, 15),
                       pcie_tx_mib_per_s=jitter(8 + 60 * busy, 4),
                       nvlink_rx_mib_per_s=(g.nvlink[k] / tick / 2**20) if s.nvlink else None,
                       nvlink_tx_mib_per_s=(g.nvlink[k] / tick / 2**20) if s.nvlink else None)
        else:
            gpm = dict(sm_active_pct=None, sm_occupancy_pct=None, dram_bw_pct=None, tensor_pct=None,
                       pcie_rx_mib_per_s=None, pcie_tx_mib_per_s=None, nvlink_rx_mib_per_s=None,
                       nvlink_tx_mib_per_s=None)
            for f in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                missing[f] = "needs Hopper+ (GPM); DCGM profiling not configured"
            for f in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
                      "nvlink_tx_mib_per_s"):
                missing[f] = "needs Hopper+ (GPM)"
        out.append(GpuSample(
            index=g.index, name=s.name, uuid=g.uuid, util_gpu_pct=util_pct,
            util_gpu_samples_pct=samples,
            util_mem_pct=float(round(min(100.0, jitter(100 * dr * 1.05, 0.8)))) if dr > 0.003 else 0.0,
            mem_total_bytes=s.mem_total, mem_used_bytes=int(g.mem_used[k]),
            mem_reserved_bytes=s.reserved, power_w=round(power, 3), temp_c=float(round(g.temp)),
            sm_clock_mhz=float(clk), throttle=tuple(reasons), bus_id=g.bus_id, fan_pct=fan,
            pstate=0 if ctx else 8, power_limit_w=float(cap), mem_clock_mhz=float(s.mem_clk),
            ecc_corrected=g.ecc_corr, ecc_uncorrected=0, xid_count=0, xid_last=None,
            mig_mode=False, missing=missing, **gpm))
    return tuple(out)


class Proc:
    """A process: on which GPU(s), its memory, per-tick CPU rate (cores) and NVML SM share."""

    def __init__(self, pid: int, name: str, cmdline: str, gpus: tuple[int, ...], n: int,
                 start_time_s: float, user: str = "svc", container: str = "", ppid: int = 1,
                 rss: float = 2.5e9, cgroup: str = ""):
        self.pid, self.name, self.cmdline, self.gpus = pid, name, cmdline, gpus
        self.start_time_s, self.user, self.container, self.ppid = start_time_s, user, container, ppid
        self.cgroup = cgroup or (f"/system.slice/docker-{container.split(':')[-1]}.scope"
                                 if container else "/user.slice")
        self.present = np.ones_bool(n)
        self.mem = np.zeros(n)  # per GPU
        self.cpu = np.zeros(n)  # cores used this tick
        self.sm_share = np.full(n, -1.0)  # fraction of the GPU's busy time that is this process
        self.rss = rss
        self.cpu0 = 0.0


def render_procs(procs: list[Proc], gpus: list[GpuState], k: int, tick: float) -> tuple[ProcSample, ...]:
    out = []
    for p in procs:
        if not hasattr(p, "cum"):
            p.cum = np.cumsum(np.A(c if a else 0.0 for c, a in zip(p.cpu, p.present)))
    for p in procs:
        if not p.present[k]:
            continue
        for gi in p.gpus:
            g = gpus[gi]
            share = p.sm_share[k] if p.sm_share[k] >= 0 else 1.0
            sm_util = float(round(min(100, 100 * g.busy[k] / tick * share)))
            mu = float(round(min(100, 100 * g.dram[k] / tick * share)))
            out.append(ProcSample(
                pid=p.pid, gpu_index=gi, name=p.name, cmdline=p.cmdline, user=p.user, ppid=p.ppid,
                start_time_s=p.start_time_s, mem_bytes=int(p.mem[k]), sm_util_pct=sm_util,
                cpu_s=round(p.cpu0 + p.cum[k] * tick, 2),
                rss_bytes=int(p.rss), container=p.container, cgroup=p.cgroup, mem_util_pct=mu))
    return tuple(out)


class Host:
    """The machine's /proc view: CPU busy, PSI some avg10, run queue, context switches."""

    def __init__(self, cpus: int, n: int, tick: float, rng: np.Gen, base_busy: float = 0.04):
        self.cpus, self.n, self.tick = cpus, n, tick
        self.busy_cores = np.full(n, base_busy * cpus)  # cores busy
        self.stall = np.full(n, 0.004)  # fraction of time some runnable task waited for a CPU
        self.runnable = np.full(n, 3.0)
        self.ctx_rate = np.full(n, 2500.0 * cpus / 16)
        self.rng = rng
        self.psi = 0.0
        self.ctx_total = int(4e8 + rng.integers(0, 1e8))

    def render(self, k: int) -> HostSample:
        a = 1 - math.exp(-self.tick / 10.0)
        self.psi += (100 * min(1.0, self.stall[k]) - self.psi) * a
        self.ctx_total += int(self.ctx_rate[k] * self.tick * (0.9 + 0.2 * self.rng.random()))
        cpu = min(100.0, 100 * self.busy_cores[k] / self.cpus * (0.95 + 0.1 * self.rng.random()))
        rq = max(1, int(round(self.runnable[k] + self.rng.normal(0, 0.8))))
        return HostSample(cpu_pct=round(cpu, 1), cpu_pressure_some_pct=round(self.psi, 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx_total)


class Pinned:
    """The pinned process tree: threads with per-tick CPU rates (cores), switches."""

    def __init__(self, label: str, root_pids: tuple[int, ...], n: int, cores: tuple[int, ...],
                 ports: tuple[int, ...] = ()):
        self.label, self.root_pids, self.cores, self.ports = label, root_pids, cores, ports
        self.threads: list[tuple[int, int, str, np.ndarray, float]] = []  # tid, pid, name, rate, cpu0
        self.invol = np.full(n, 2.0)  # involuntary switches per second
        self.vol = np.full(n, 400.0)
        self.tree_pids = [root_pids] * n
        self.n = n
        self.gone = np.zeros_bool(n)  # no match this tick (restart)
        self.cum_cpu = None

    def thread(self, tid: int, pid: int, name: str, rate, cpu0: float = 0.0) -> np.ndarray:
        arr = np.full(self.n, float(rate)) if isinstance(rate, (int, float)) else np.A(float(x) for x in rate)
        self.threads.append((tid, pid, name, arr, cpu0))
        return arr

    def finish(self, tick: float) -> None:
        self._cum = [(tid, pid, name, cpu0 + np.cumsum(rate) * tick) for tid, pid, name, rate, cpu0 in self.threads]
        self._vol = [int(5000 + x) for x in np.cumsum(self.vol * tick)]
        self._inv = [int(40 + x) for x in np.cumsum(self.invol * tick)]

    def render(self, k: int, host: HostSample, pids_alive=None) -> PinnedSample:
        if self.gone[k]:
            return PinnedSample(label=self.label, waiting="no process matches the pattern yet",
                                cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                run_queue=host.run_queue, cores=self.cores)
        tree = tuple(self.tree_pids[k])
        ths = [(tid, pid, name, float(c[k])) for tid, pid, name, c in self._cum if pid in tree]
        total = sum(c for *_, c in ths)
        ths.sort(key=lambda x: -x[3])
        return PinnedSample(
            label=self.label, root_pids=tuple(p for p in self.root_pids if p in tree) or tree[:1],
            tree_pids=tree, cpu_s=round(total, 2),
            ctx_voluntary=int(self._vol[k]), ctx_involuntary=int(self._inv[k]),
            threads=tuple(ThreadSample(tid=t, pid=p, name=nm, cpu_s=round(c, 2))
                          for t, p, nm, c in ths[:24]),
            cores=self.cores, cpu_pressure_some_pct=host.cpu_pressure_some_pct,
            run_queue=host.run_queue, listening_ports=self.ports)

    def busiest(self, k: int) -> tuple[str, float]:
        best = max(self._cum, key=lambda x: x[3][k])
        return f"{best[0]} {best[2]}", round(float(best[3][k]), 2)

    def total(self, k: int) -> float:
        return round(float(sum(c[k] for *_, c in self._cum)), 2)

    def invol_total(self, k: int) -> int:
        return int(self._inv[k])


# ---------------------------------------------------------------- eBPF launch histograms

def launch_hist(api: str, pid: int, count: float, rng: np.Gen, median_us: float,
                sigma: float = 0.35, tail_frac: float = 0.0, tail_ms: float = 0.0) -> LaunchHist:
    """Host-side call durations: lognormal around the median, a fraction delayed off-CPU
    (exponential with mean tail_ms) -- sampled, then scaled to the call count."""
    count = int(round(count))
    if count <= 0:
        return LaunchHist(api=api, pid=pid)
    m = min(count, 300)
    mu = math.log(median_us * 1000)
    d = []
    hits = 0
    for _ in range(m):
        v = rng.lognormal(mu, sigma)
        d.append(v)
    if tail_frac > 0:
        hits = max(0, int(round(count * tail_frac + rng.normal(0, math.sqrt(count * tail_frac + 0.01)))))
    buckets: dict[int, int] = {}
    scale = (count - hits) / m
    for v in d:
        i = bucket_index(int(v))
        buckets[i] = buckets.get(i, 0) + 1
    buckets = {a: int(round(b * scale)) for a, b in buckets.items()}
    total_ns = sum(d) * scale
    mx = max(d)
    for _ in range(min(hits, 400)):
        v = rng.exponential(tail_ms * 1e6) + 20000
        w = hits / min(hits, 400)
        i = bucket_index(int(v))
        buckets[i] = buckets.get(i, 0) + int(round(w))
        total_ns += v * w
        mx = max(mx, v)
    buckets = {a: b for a, b in sorted(buckets.items()) if b > 0}
    total = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=total, sum_ns=int(total_ns), max_ns=int(mx), buckets=buckets)


def ok(age: float = 0.0, poll: float = 0.005, detail: str | None = None) -> SourceStatus:
    return SourceStatus(ok=True, age_s=round(age, 3), poll_s=round(poll, 6),
                        poll_median_s=round(poll, 6), detail=detail)


def bad(reason: str, poll: float | None = None) -> SourceStatus:
    return SourceStatus(ok=False, reason=reason, poll_s=poll, poll_median_s=poll)


__all__ = ["Frame", "GpuState", "render_gpus", "Proc", "render_procs", "Host", "Pinned",
           "launch_hist", "rng_for", "ok", "bad", "smooth_step"]
