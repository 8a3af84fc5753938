"""Run a scenario (serving or training) tick by tick and build gputop frames from it."""
from __future__ import annotations
import math
import random
import zlib
from dataclasses import dataclass, field

from gputop.buckets import bucket_index, bucket_bounds_ns
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, PinnedSample, ProcSample,
                           SourceStatus, ThreadSample)
from corpus_ak import hw, metrics, serve
from corpus_ak.serve import Engine, EngineCfg, Req, SLICE_S, Traffic, _cum

GiB = 2**30
T0 = 1_798_300_000.0


def seed_of(name):
    return zlib.crc32(name.encode())


def const(v):
    return lambda t, *a: v


def ramp(t, a, b, v0, v1):
    """v0 before a, v1 after b, linear between."""
    if t <= a:
        return v0
    if t >= b:
        return v1
    return v0 + (v1 - v0) * (t - a) / (b - a)


def window(a, b, on, off=None):
    return lambda t, *x: on if a <= t < b else off


@dataclass
class Host:
    cores: int = 64
    other: object = 1.0          # other tenants' runnable threads (fn of t)
    quota: object = None         # the engine cgroup's cpu quota in cores
    jitter: object = 0.0         # fraction of launch calls preempted (launch thread's core shared)
    jitter_ms: float = 2.0


@dataclass
class Scn:
    name: str
    gpu: str
    n_gpus: int
    duration: float
    tick: float = 1.0
    scrape: float = 5.0
    engine_kind: str = "vllm"
    # serving
    cfg: EngineCfg | None = None
    dp: int = 1
    traffic: list = field(default_factory=list)
    router: str = "rr"            # rr | sticky (sessions stick to replica 0 when hot)
    accept: object = 0.7          # speculative acceptance (fn of t)
    # faults / environment (fns of t, or (t, gpu))
    inlet: object = 27.0          # fn (t, g)
    limit: object = None          # fn (t, g)
    brake: object = None          # fn (t, g)
    mystery: object = None        # fn (t, g)
    r_th: object = 1.0            # fn (t, g)
    bytes_mult: object = 1.0
    shared: object = None         # fn (t, g) -> busy fraction the other tenant's kernels want
    tiny: object = None           # fn t -> SM cover override
    host: Host = field(default_factory=Host)
    ebpf: bool = False
    restart_at: float | None = None
    restart_s: float = 40.0
    missed_scrapes: float = 0.02
    drop_ticks: float = 0.004
    at: list = field(default_factory=list)   # (time, fn(engines)): a config push, a router change
    # training
    train: dict | None = None


# ------------------------------------------------------------------ helpers

def _lognorm(rng, med, sigma, cap, lo=1):
    return int(max(lo, min(cap, med * math.exp(rng.gauss(0, sigma)))))


def _arg(f, t, g=None):
    if callable(f):
        try:
            return f(t, g)
        except TypeError:
            return f(t)
    return f


def _launch_hist(rng, api, pid, count, med_us, sigma, tail_p, tail_ms):
    """Durations of `count` calls: lognormal body, a tail of calls preempted off the CPU."""
    if count <= 0:
        return None
    buckets = {}
    lo, hi = bucket_index(500), bucket_index(int(200e6))
    body = count * (1 - tail_p)
    tail = count * tail_p
    s = 0.0
    mx = 0
    prev_b, prev_t = 0.0, 0.0
    for i in range(lo, hi + 1):
        a, b = bucket_bounds_ns(i)
        zb = (math.log(b / 1000 / med_us)) / sigma
        zt = (math.log(b / 1e6 / tail_ms)) / 0.8
        cb = 0.5 * (1 + math.erf(zb / 1.4142))
        ct = 0.5 * (1 + math.erf(zt / 1.4142))
        n = body * (cb - prev_b) + tail * (ct - prev_t)
        prev_b, prev_t = cb, ct
        k = int(n + rng.random())
        if k > 0:
            buckets[i] = k
            s += k * (a + b) / 2
            mx = b
    total = sum(buckets.values())
    if total == 0:
        return None
    return LaunchHist(api=api, pid=pid, count=total, sum_ns=int(s), max_ns=int(mx), buckets=buckets)


class Proc:
    def __init__(self, pid, name, cmd, start, threads):
        self.pid, self.name, self.cmd, self.start = pid, name, cmd, start
        self.cpu = 10.0 + (pid % 13)
        self.threads = [[pid + k, nm, 1.0 + k] for k, nm in enumerate(threads)]


# ------------------------------------------------------------------ the frame builder

class Builder:
    def __init__(self, scn: Scn, rng):
        self.s = scn
        self.rng = rng
        self.spec = hw.SPECS[scn.gpu]
        self.gpus = [hw.GpuState(self.spec, rng, inlet_c=_arg(scn.inlet, 0, g)) for g in range(scn.n_gpus)]
        self.uuid = [f"GPU-{(seed_of(scn.name + str(g)) ^ 0x5a5a5a5a):08x}-{(g * 7919) % 65536:04x}-4{g:03x}-a{seed_of(scn.name) % 4096:03x}-{seed_of(str(g) + scn.name):012x}"[:40] for g in range(scn.n_gpus)]
        self.host_cpu_s = 0.0
        self.ctx_total = 48_000_000 + seed_of(scn.name) % 1_000_000
        self.ctx_invol = 120
        self.ctx_vol = 4000
        self.periods = 0
        self.throttled = 0
        self.procs: list[Proc] = []
        self.psi = 0.5
        self.seq = 0
        self.t_wall0 = T0 + (seed_of(scn.name) % 2_000_000)
        self.mono0 = 380_000.0 + seed_of(scn.name) % 100_000
        self.last_engine = None
        self.last_engine_t = None
        self.frames = []

    def host_step(self, t, dt, demand_engine, launcher_busy):
        """Share of CPU the engine's threads get; updates /proc counters."""
        h = self.s.host
        other = _arg(h.other, t)
        quota = _arg(h.quota, t)
        D = demand_engine + other
        share_host = min(1.0, h.cores / D) if D > 0 else 1.0
        share_q = 1.0
        if quota:
            share_q = min(1.0, quota / max(1e-6, demand_engine))
        share = share_host * share_q
        use = demand_engine * share
        self.host_cpu_s += use * dt
        for p in self.procs:
            pass
        # PSI some avg10 (smoothed over ~10 s)
        if D > h.cores:
            inst = min(97.0, 100 * (1 - h.cores / D) * 1.4 + 6)
        else:
            inst = 100 * 0.03 * (D / h.cores) ** 3 + abs(self.rng.gauss(0, 0.15))
        a = 1 - math.exp(-dt / 10)
        self.psi += (inst - self.psi) * a
        rq = max(1, int(round(min(D, h.cores * 4) + self.rng.gauss(0, 0.7 + 0.05 * D))))
        inv_rate = 15 + 40 * demand_engine * (1 - share_host) * 8 + (1 - share_q) * 60 * demand_engine
        self.ctx_invol += int(inv_rate * dt * (0.8 + 0.4 * self.rng.random()))
        self.ctx_vol += int((400 + 3000 * launcher_busy) * dt)
        self.ctx_total += int((2000 * h.cores + 8000 * D) * dt)
        if quota:
            periods = int(dt / 0.1)
            self.periods += periods
            if demand_engine > quota * 0.97:
                self.throttled += int(periods * min(1.0, 0.5 + 0.5 * (demand_engine - quota) / quota) + 0.5)
            elif demand_engine > quota * 0.8:
                self.throttled += int(periods * 0.1 * self.rng.random() + 0.5)
        total_busy = min(h.cores, D)
        cpu_pct = 100 * total_busy / h.cores * (0.95 + 0.1 * self.rng.random())
        return share, dict(cpu_pct=min(100.0, cpu_pct), psi=self.psi, rq=rq, quota=quota,
                           share_host=share_host, share_q=share_q, use=use)

    def gpu_samples(self, acts, mem_used, procs_by_gpu, throttled_note=None):
        out = []
        s = self.spec
        for g, st in enumerate(self.gpus):
            a = acts[g]
            n = lambda x, sd=0.02: max(0.0, min(100.0, x * 100 * (1 + self.rng.gauss(0, sd))))
            util = n(a["busy"], 0.01)
            samples = tuple(float(round(max(0.0, min(100.0, util + self.rng.gauss(0, 2 + 0.04 * util))))) for _ in range(5 if self.s.tick >= 1 else 3))
            missing = {}
            if not s.fan:
                missing["fan_pct"] = "not supported on this GPU"
            gs = dict(index=g, name=s.name, uuid=self.uuid[g], util_gpu_pct=float(round(util)),
                      util_gpu_samples_pct=samples, util_mem_pct=float(round(n(a["dram"] * 0.9, 0.03))),
                      mem_total_bytes=s.mem_bytes, mem_used_bytes=int(mem_used[g]), mem_reserved_bytes=s.reserve,
                      power_w=round(st.power, 3), temp_c=float(round(st.temp)), sm_clock_mhz=st.clock_mhz() if a["busy"] > 0.02 or st.ratio < 0.99 else float(s.clock if a["busy"] > 0 else 345),
                      throttle=st.reasons, bus_id=f"00000000:{[0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][g % 8]:02X}:00.0",
                      fan_pct=round(st.fan) if s.fan else None, pstate=0 if a["busy"] > 0 else 0,
                      power_limit_w=float(st.limit), mem_clock_mhz=float(s.mem_clock),
                      ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False)
            if s.gpm:
                gs.update(sm_active_pct=n(a["sm"]), sm_occupancy_pct=n(a["sm"] * a.get("occ", 0.4)),
                          dram_bw_pct=n(a["dram"]), tensor_pct=n(a["tensor"], 0.04),
                          pcie_rx_mib_per_s=max(0.0, 40 + 300 * a["busy"] + self.rng.gauss(0, 10)),
                          pcie_tx_mib_per_s=max(0.0, 10 + 50 * a["busy"] + self.rng.gauss(0, 5)),
                          nvlink_rx_mib_per_s=a.get("nvl", 0.0) if s.nvlink and self.s.n_gpus > 1 else (0.0 if s.nvlink else None),
                          nvlink_tx_mib_per_s=a.get("nvl", 0.0) if s.nvlink and self.s.n_gpus > 1 else (0.0 if s.nvlink else None))
            else:
                for k in ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct"):
                    missing[k] = "needs Hopper+ (GPM)"
                for k in ("pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s", "nvlink_tx_mib_per_s"):
                    missing[k] = "needs Hopper+ (GPM)"
            gs["missing"] = missing
            out.append(GpuSample(**gs))
        return tuple(out)

    def emit(self, t, gpus, processes, engine_sample, launch, host, pinned, engine_status, ebpf_status):
        s = self.s
        wall = self.t_wall0 + t
        sources = {"nvml": SourceStatus(True, poll_s=0.004 + 0.002 * self.rng.random(), poll_median_s=0.005, age_s=0.0),
                   "host": SourceStatus(True, poll_s=0.0005, poll_median_s=0.0006, age_s=0.0),
                   "procfs": SourceStatus(True, detail="/proc", poll_s=0.0002, poll_median_s=0.0002, age_s=0.0),
                   "pin": SourceStatus(True, poll_s=0.012, poll_median_s=0.012, age_s=0.0)}
        if engine_status is not None:
            sources["engine"] = engine_status
        sources["ebpf"] = ebpf_status
        f = Frame(seq=self.seq, time_wall_s=round(wall, 6), time_mono_s=round(self.mono0 + t, 6), gpus=gpus,
                  processes=processes, engine=engine_sample, launch=launch, host=host, pinned=pinned,
                  sources=sources)
        self.seq += 1
        self.frames.append(f)

    def engine_reading(self, t, make_text, url, extra):
        """Scrape on the engine's own interval; carry the last reading with its age between."""
        s = self.s
        due = self.last_engine_t is None or t - self.last_engine_t >= s.scrape - 1e-6
        if due:
            if self.rng.random() < s.missed_scrapes:
                age = t - (self.last_engine_t or t)
                self.last_engine_t = t - s.scrape + s.tick  # try again next tick
                return self.last_engine, SourceStatus(False, reason="timed out after 2.0 s", age_s=round(age, 3) if self.last_engine else None)
            text = make_text()
            if text is None:
                self.last_engine = None
                self.last_engine_t = t
                return None, SourceStatus(False, reason=f"connection refused ({url})")
            took = 0.002 + 0.02 * self.rng.random()
            self.last_engine = metrics.parse(text, url, time_mono_s=round(self.mono0 + t - took, 6),
                                            time_wall_s=round(self.t_wall0 + t - took, 6), **extra)
            self.last_engine_t = t
            return self.last_engine, SourceStatus(True, age_s=round(took, 4), poll_s=round(took, 4), poll_median_s=0.01)
        if self.last_engine is None:
            return None, SourceStatus(False, reason=f"connection refused ({url})")
        return self.last_engine, SourceStatus(True, age_s=round(t - self.last_engine_t, 3), poll_s=0.01, poll_median_s=0.01)
