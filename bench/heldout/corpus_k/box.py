"""One machine over time: its GPUs' state, the host's cumulative counters, and the Frame each
tick makes of what the workload did (what gputop's sampler would merge)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gputop.buckets import bucket_index
from gputop.schema import Frame, HostSample, LaunchHist, SourceStatus

from .hw import SPECS, Act, GpuState, gpu_sample

EBPF_OFF = "eBPF needs root (or CAP_BPF and CAP_PERFMON): run gputop with sudo"


@dataclass
class HostLoad:
    cpu_pct: float = 8.0
    psi: float = 0.5  # /proc/pressure/cpu some avg10
    runq: float = 3.0
    ctx_per_s: float = 20000.0
    launcher_invol_per_s: float = 30.0  # involuntary switches of launch threads (eBPF only)


def launch_hist(api: str, pid: int, count: int, median_us: float, rng, spread: float = 0.35,
                tail_frac: float = 0.0, tail_ms: float = 0.0) -> LaunchHist | None:
    """Host-side call durations of ``count`` calls: lognormal around the median plus a tail
    of calls that lost the CPU in the middle (``tail_frac`` of them, around ``tail_ms``)."""
    if count <= 0:
        return None
    buckets: dict[int, int] = {}
    points = 24
    total_ns = 0.0
    max_ns = 0
    n_tail = int(round(count * tail_frac))
    groups = ((count - n_tail, median_us * 1e3, spread), (n_tail, tail_ms * 1e6, 0.6))
    for n, centre, sd in groups:
        if n <= 0:
            continue
        per = n / points
        left = n
        for i in range(points):
            z = (i + 0.5) / points
            # probit-ish spread: evenly spaced quantiles of a lognormal
            q = math.sqrt(2) * _erfinv(2 * z - 1)
            v = int(max(200, centre * math.exp(sd * q + rng.gauss(0, 0.03))))
            c = int(round(per)) if i < points - 1 else left
            c = min(c, left)
            if c <= 0:
                continue
            left -= c
            b = bucket_index(v)
            buckets[b] = buckets.get(b, 0) + c
            total_ns += v * c
            max_ns = max(max_ns, v)
    return LaunchHist(api=api, pid=pid, count=sum(buckets.values()), sum_ns=int(total_ns),
                      max_ns=int(max_ns), buckets=buckets)


def _erfinv(y: float) -> float:
    a = 0.147
    ln = math.log(max(1e-12, 1 - y * y))
    t = 2 / (math.pi * a) + ln / 2
    return math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)


class Box:
    def __init__(self, gpu: str, n_gpus: int, tick_s: float, start_wall: float, rng,
                 cpus: int = 64, ebpf: bool = False, ebpf_listed: bool = False,
                 proc_sm: bool = True, engine_expected: bool = False, no_gpm_reason=None):
        self.spec = SPECS[gpu]
        self.n = n_gpus
        self.tick_s = tick_s
        self.t0 = start_wall
        self.mono0 = 86400.0 * 3 + rng.random() * 5000
        self.rng = rng
        self.cpus = cpus
        self.ebpf = ebpf
        self.ebpf_listed = ebpf_listed
        self.proc_sm = proc_sm
        self.engine_expected = engine_expected
        self.no_gpm_reason = no_gpm_reason
        self.states = [GpuState(temp=30 + rng.random() * 4) for _ in range(n_gpus)]
        self.ctx_total = int(4e9 + rng.random() * 1e9)
        self.seq = 0
        self.frames: list[Frame] = []

    def emit(self, t: float, acts: list[Act], mem: list[int], procs=(), engine=None,
             engine_reason: str | None = None, engine_age: float = 0.0, host: HostLoad | None = None,
             launch: tuple = (), migs=None, mig_mode=None, pinned=None) -> Frame:
        rng = self.rng
        host = host or HostLoad()
        first = self.seq == 0
        gpus = tuple(gpu_sample(self.spec, i, acts[i], mem[i], self.states[i], self.tick_s, rng,
                                first, migs=(migs or {}).get(i, ()),
                                mig_mode=(mig_mode or {}).get(i, False),
                                no_gpm_reason=self.no_gpm_reason)
                     for i in range(self.n))
        self.ctx_total += int(host.ctx_per_s * self.tick_s * (1 + rng.gauss(0, 0.03)))
        hs = HostSample(cpu_pct=round(max(0.0, min(100.0, host.cpu_pct + rng.gauss(0, 1.0))), 1),
                        offcpu_switches=(int(max(0, host.launcher_invol_per_s * self.tick_s
                                                 * (1 + rng.gauss(0, 0.1))))
                                         if self.ebpf else None),
                        cpu_pressure_some_pct=round(max(0.0, host.psi + rng.gauss(0, 0.3)), 2),
                        run_queue=int(max(1, round(host.runq + rng.gauss(0, 0.7)))),
                        cpus=self.cpus, ctx_switches_total=self.ctx_total)
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004 + 0.0015 * self.n),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0006)}
        if engine is not None:
            sources["engine"] = SourceStatus(True, age_s=round(engine_age, 3), poll_s=0.02)
        elif engine_reason is not None or not self.engine_expected:
            sources["engine"] = SourceStatus(False, reason=engine_reason
                                             or "no engine found (pass --engine URL)")
        if self.ebpf:
            sources["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12: "
                                           "cudaLaunchKernel, cudaGraphLaunch; libcuda.so.1: "
                                           "cuLaunchKernel, cuGraphLaunch", age_s=0.0)
        elif self.ebpf_listed:
            sources["ebpf"] = SourceStatus(False, reason=EBPF_OFF)
        if pinned is not None:
            sources["pin"] = SourceStatus(True, age_s=0.0)
        frame = Frame(seq=self.seq, time_wall_s=round(self.t0 + t, 3),
                      time_mono_s=round(self.mono0 + t, 3), gpus=gpus, processes=tuple(procs),
                      engine=engine, launch=tuple(h for h in launch if h is not None) if self.ebpf
                      else (), host=hs, pinned=pinned, sources=sources)
        self.seq += 1
        self.frames.append(frame)
        return frame
