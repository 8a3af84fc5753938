"""Turn simulated workloads into gputop frames: NVML (GPU-Util samples, memory-controller
util, power, clocks, throttle reasons, GPM on Hopper+), processes, the host's /proc, the
engine page (scraped on its own cadence, carried with its age as the sampler does) and,
where asked, eBPF launch histograms."""

from __future__ import annotations

import dataclasses
import math

from gputop.schema import (EngineSample, Frame, GpuSample, HostSample, ProcSample,
                           SourceStatus)
from gputop.sources.engine_merge import merge_engines

from .sim import SLICE, Act, CudaJob, Engine, Trainer, launch_hist

NO_GPM = "needs Hopper+ (GPM) or --dcgm URL of a dcgm-exporter"
GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "tensor_pct", "dram_bw_pct")


@dataclasses.dataclass
class World:
    rng: object
    name: str
    gpu: object  # GpuSpec
    n_gpus: int
    duration_s: float
    tick_s: float
    t0_wall: float
    workloads: list
    scrape_s: float = 1.0
    engine_mode: str = "single"  # single | dp (one port, engine= labels) | multi (several)
    dp_url: str = ""
    ebpf: bool = False
    jitter_gpu_fn: object = None  # t -> preempted fraction of launch calls (eBPF tail)
    host_cpu_fn: object = None  # t -> (cpu_pct, psi_some, run_queue)
    cpus: int = 64
    throttle_fn: object = None  # (t, gpu) -> (clock factor shown, reasons tuple)
    temp_fn: object = None  # (t, gpu) -> extra degrees
    power_limit_fn: object = None  # (t, gpu) -> watts
    idle_clock_drop: bool = False
    mono0: float = 0.0

    def frames(self):
        rng = self.rng
        g = self.gpu
        n = self.n_gpus
        ticks = int(round(self.duration_s / self.tick_s))
        slices_per_tick = int(round(self.tick_s / SLICE))
        temps = [30.0 + rng.uniform(0, 6) for _ in range(n)]
        power_s = [g.idle_w * 1.1] * n
        recent = [[] for _ in range(n)]
        host_ctx = int(rng.uniform(1e9, 9e9))
        frames = []
        last_eng = None
        last_eng_t = None
        uuid = [f"GPU-{_h(self.name, i)}" for i in range(n)]
        t = 0.0
        slice_i = 0
        prev_steps = {id(w): 0.0 for w in self.workloads}
        for k in range(ticks):
            buf = [[] for _ in range(n)]
            acts_tick = [Act() for _ in range(n)]
            steps_tick = {id(w): 0.0 for w in self.workloads}
            for _ in range(slices_per_tick):
                acts = {i: Act() for i in range(n)}
                for w in self.workloads:
                    s = w.step(t, SLICE, acts)
                    if s:
                        steps_tick[id(w)] += s
                for i in range(n):
                    a = acts[i]
                    buf[i].append(a)
                    at = acts_tick[i]
                    for f in ("busy", "sm", "occ", "tensor", "dram", "nvlink", "pcie"):
                        setattr(at, f, getattr(at, f) + getattr(a, f))
                    for pid, v in a.by_pid.items():
                        at.by_pid[pid] = at.by_pid.get(pid, 0.0) + v
                t += SLICE
                slice_i += 1
            t_now = t  # frame time: the end of the tick
            wall = self.t0_wall + t_now
            mono = self.mono0 + t_now
            gpus = []
            for i in range(n):
                samples = []
                for a in buf[i]:
                    b = min(1.0, a.busy / SLICE)
                    v = b * 100
                    if v > 0.5:
                        v = min(100.0, v + rng.gauss(0, 1.2))
                    samples.append(float(int(round(max(0.0, v)))))
                recent[i] = (recent[i] + samples)[-6:]
                at = acts_tick[i]
                T = self.tick_s
                busy = min(1.0, at.busy / T)
                sm = min(1.0, at.sm / T)
                occ = min(1.0, at.occ / T)
                ten = min(1.0, at.tensor / T)
                dram = min(0.97, at.dram / T)
                cf_shown, reasons = (1.0, ())
                if self.throttle_fn is not None:
                    cf_shown, reasons = self.throttle_fn(t_now, i)
                limit = self.power_limit_fn(t_now, i) if self.power_limit_fn else g.tdp_w
                raw = g.idle_w + (g.tdp_w - g.idle_w) * (0.16 * busy + 0.62 * ten + 0.3 * dram
                                                         + 0.1 * sm) * cf_shown ** 1.4
                if raw > limit * 0.985:
                    over = raw / limit
                    raw = limit * rng.uniform(0.975, 0.998)
                    cf_shown = min(cf_shown, over ** -0.6)
                    if "power cap" not in reasons:
                        reasons = tuple(reasons) + ("power cap",)
                power_s[i] += (raw - power_s[i]) * (1.0 if k == 0 else min(1.0, T / 1.2))
                power = power_s[i] * rng.uniform(0.985, 1.015)
                extra = self.temp_fn(t_now, i) if self.temp_fn else 0.0
                target = 27.0 + 0.078 * power * (700 / g.tdp_w) ** 0.3 + extra + i * 0.7
                temps[i] += (target - temps[i]) * (1.0 if k == 0 else min(1.0, T / 45.0))
                idle = busy < 0.03
                clock = g.clock_mhz * cf_shown
                pstate = 0
                if idle and self.idle_clock_drop:
                    clock, pstate = 210.0, 8
                missing = {}
                vals = {}
                if g.gpm:
                    if k == 0:
                        for f in GPM_FIELDS:
                            missing[f] = "GPM needs a second sample"
                    else:
                        j = lambda: rng.uniform(0.97, 1.03)  # noqa: E731
                        vals = dict(sm_active_pct=round(min(100.0, sm * 100 * j()), 2),
                                    sm_occupancy_pct=round(min(100.0, occ * 100 * j()), 2),
                                    tensor_pct=round(min(100.0, ten * 100 * j()), 2),
                                    dram_bw_pct=round(min(100.0, dram * 100 * j()), 2),
                                    pcie_rx_mib_per_s=round(at.pcie / T / 2**20 * j(), 1),
                                    pcie_tx_mib_per_s=round(at.pcie / T / 2**20 * 0.4 * j(), 1))
                        if g.nvlink and n > 1:
                            vals.update(nvlink_rx_mib_per_s=round(at.nvlink / T / 2**20 * j(), 1),
                                        nvlink_tx_mib_per_s=round(at.nvlink / T / 2**20 * j(), 1))
                else:
                    for f in GPM_FIELDS:
                        missing[f] = NO_GPM
                if not g.fan:
                    missing["fan_pct"] = "not supported on this GPU"
                mem_used = int(0.45 * 2**30)
                for w in self.workloads:
                    w._t = t_now
                    mem_used += _mem_on(w, i)
                mem_used = min(mem_used, g.mem_bytes - g.reserved_bytes - 2**28)
                util_mem = min(100.0, dram * 100 * 0.92 * rng.uniform(0.97, 1.03))
                gpus.append(GpuSample(
                    index=i, name=g.name, uuid=uuid[i],
                    util_gpu_pct=float(int(round(sum(recent[i]) / len(recent[i])))),
                    util_gpu_samples_pct=tuple(samples),
                    util_mem_pct=float(int(round(util_mem))),
                    mem_total_bytes=g.mem_bytes, mem_used_bytes=mem_used,
                    mem_reserved_bytes=g.reserved_bytes,
                    power_w=round(power, 3), temp_c=float(int(round(temps[i]))),
                    sm_clock_mhz=float(int(round(clock / 15) * 15)), throttle=tuple(reasons),
                    bus_id=f"00000000:{0x18 + 0x10 * i:02X}:00.0",
                    fan_pct=(float(int(30 + max(0, temps[i] - 40) * 1.5)) if g.fan else None),
                    pstate=pstate, power_limit_w=float(limit), mem_clock_mhz=g.mem_clock_mhz,
                    ecc_corrected=0, ecc_uncorrected=0, xid_count=0, mig_mode=False,
                    missing=missing, **vals))
            procs = []
            for w in self.workloads:
                if isinstance(w, CudaJob) and not (w.alive[0] <= t_now <= w.alive[1]):
                    continue
                procs.extend(_procs(w, acts_tick, self.tick_s, self.t0_wall))
            # host
            cpu_pct, psi, rq = self.host_cpu_fn(t_now) if self.host_cpu_fn else (
                12.0, 0.8, 6)
            host_ctx += int(self.cpus * 900 * self.tick_s * (1 + psi / 10) * rng.uniform(0.9, 1.1))
            offcpu = None
            launch = []
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.002 * n, 6)),
                       "host": SourceStatus(True, age_s=0.0, poll_s=0.0006),
                       "procfs": SourceStatus(True, detail="host PID namespace"),
                       "pin": SourceStatus(True, age_s=0.0, poll_s=2e-05)}
            if self.ebpf:
                launch, offcpu = self._launch(rng, steps_tick, self.tick_s, t_now)
                sources["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12: "
                                               "cudaLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync,"
                                               " cudaStreamSynchronize; libcuda.so.1: "
                                               "cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch",
                                               age_s=0.0, poll_s=0.002)
            host = HostSample(cpu_pct=round(cpu_pct * rng.uniform(0.95, 1.05), 1),
                              offcpu_switches=offcpu,
                              cpu_pressure_some_pct=round(max(0.0, psi * rng.uniform(0.9, 1.1)), 2),
                              run_queue=max(1, int(round(rq * rng.uniform(0.8, 1.2)))),
                              cpus=self.cpus, ctx_switches_total=host_ctx)
            # engine page
            eng = None
            status = None
            servers = [w for w in self.workloads if isinstance(w, Engine)]
            trainers = [w for w in self.workloads if isinstance(w, Trainer) and w.counter]
            if servers or trainers:
                due = last_eng_t is None or t_now - last_eng_t >= self.scrape_s - 1e-6
                if due:
                    last_eng = self._engine_sample(servers, trainers, wall, mono, t_now)
                    last_eng_t = t_now
                age = t_now - last_eng_t
                stale = max(3.0, 5 * self.tick_s)
                if age > stale:
                    status = SourceStatus(False, f"slow: last reading {age:.0f}s old, poll still "
                                          "running", poll_median_s=round(self.scrape_s, 3))
                else:
                    eng = last_eng
                    status = SourceStatus(True, age_s=round(age, 3),
                                          poll_s=round(0.012 + 0.002 * len(servers), 6),
                                          poll_median_s=0.013)
            else:
                status = SourceStatus(False, "no engine found (pass --engine URL)",
                                      poll_median_s=3.1e-05)
            sources["engine"] = status
            frames.append(Frame(seq=k, time_wall_s=round(wall, 6), time_mono_s=round(mono, 6),
                                gpus=tuple(gpus), processes=tuple(procs), engine=eng,
                                launch=tuple(launch), host=host, sources=sources))
        return frames

    def _engine_sample(self, servers, trainers, wall, mono, t):
        if trainers and not servers:
            return trainers[0].sample(wall, mono)
        samples = [s.sample(wall, mono, t) for s in servers]
        if len(samples) == 1:
            return samples[0]
        if self.engine_mode == "dp":
            merged = merge_engines(samples)
            label = "dp_rank" if samples[0].kind == "sglang" else "engine"
            reps = tuple(dataclasses.replace(s, replica=f"{label}={i}", url=self.dp_url,
                                             data_parallel=1)
                         for i, s in enumerate(samples))
            return dataclasses.replace(merged, url=self.dp_url, replicas=reps,
                                       data_parallel=len(samples), kind=samples[0].kind,
                                       model=samples[0].model, replica="")
        return merge_engines(samples)

    def _launch(self, rng, steps_tick, T, t):
        out = []
        switches = 0
        jit = self.jitter_gpu_fn(t) if self.jitter_gpu_fn else 0.0
        for w in self.workloads:
            steps = steps_tick.get(id(w), 0.0)
            if isinstance(w, Engine):
                pid = w.pid + 1 if w.kind != "llamacpp" else w.pid
                calls = [("cudaGraphLaunch", steps * 1.0, 9.0, 0.35),
                         ("cudaLaunchKernel", steps * 28, 3.2, 0.4),
                         ("cudaMemcpyAsync", steps * 6, 4.5, 0.45),
                         ("cuLaunchKernel", steps * 9, 4.0, 0.4),
                         ("cudaStreamSynchronize", steps * 1.0, 1000 * min(20.0, max(
                             0.05, w.last_itl * 400)), 0.8)]
                if w.kind == "llamacpp":
                    calls = [("cuLaunchKernel", steps * 420, 3.5, 0.35),
                             ("cudaStreamSynchronize", steps * 1.0, 1000 * w.last_itl * 0.5, 0.6)]
            elif isinstance(w, Trainer):
                pid = w.pid
                calls = [("cudaLaunchKernel", steps * w.launches * 0.6, 3.4, 0.4),
                         ("cuLaunchKernel", steps * w.launches * 0.4, 4.2, 0.4),
                         ("cudaMemcpyAsync", steps * 20, 5.0, 0.5)]
            else:
                continue
            for api, count, med, sig in calls:
                tail = jit if api not in ("cudaStreamSynchronize",) else 0.0
                h = launch_hist(rng, api, pid, count * rng.uniform(0.97, 1.03), med, sig,
                                tail_frac=tail, tail_ms=(0.6, 12.0))
                if h is not None:
                    out.append(h)
            # off-CPU time of the launch thread: short voluntary sleeps, long preemptions
            base = int(T * (40 + 3000 * jit * 10))
            sw = int(T * (15 + 9000 * jit) * rng.uniform(0.8, 1.2))
            switches += sw
            h = launch_hist(rng, "off-cpu", pid, base, 60.0, 1.1, tail_frac=min(0.6, jit * 40),
                            tail_ms=(0.5, 15.0))
            if h is not None:
                out.append(h)
        return out, switches


def _h(name, i):
    import zlib
    a = zlib.crc32(f"{name}/{i}".encode())
    b = zlib.crc32(f"{i}/{name}".encode())
    return f"{a:08x}-{b >> 16:04x}-{(b & 0xffff):04x}-{(a ^ b) & 0xffff:04x}-{a:08x}{i:04x}"


def _mem_on(w, i):
    if isinstance(w, Engine):
        return w.mem_bytes if i in w.gpus else 0
    if isinstance(w, Trainer):
        return w.mem_bytes if i in w.gpus else 0
    if isinstance(w, CudaJob):
        return w.mem_bytes if w.gpu == i and w.alive[0] <= w._t <= w.alive[1] else 0
    return 0


def _procs(w, acts_tick, T, t0):
    out = []
    if isinstance(w, Engine):
        for gi in w.gpus:
            if gi >= len(acts_tick):
                continue
            pid = w.proc_pid(gi)
            name, cmd = w.proc_name(gi)
            busy = acts_tick[gi].by_pid.get(w.pid + gi, 0.0) / T
            out.append(ProcSample(pid=pid, gpu_index=gi, name=name, cmdline=cmd, user="svc-infer",
                                  ppid=w.pid, start_time_s=round(t0 - 86400 * 2.5 + w.pid % 97, 2),
                                  mem_bytes=w.mem_bytes, sm_util_pct=float(int(min(100, busy * 100))),
                                  cpu_s=round(w.thread_cpu_s if gi == w.gpus[0] else
                                              w.thread_cpu_s * 0.3, 2),
                                  rss_bytes=int(3.5 * 2**30), container="docker:5e1f0c9a7b21"))
    elif isinstance(w, Trainer):
        for r, gi in enumerate(w.gpus):
            if gi >= len(acts_tick):
                continue
            busy = acts_tick[gi].by_pid.get(w.pid + r, 0.0) / T
            out.append(ProcSample(pid=w.pid + r, gpu_index=gi, name=w.name,
                                  cmdline=w.cmdline + f" --local-rank={r}", user="mlteam",
                                  ppid=w.pid - 1, start_time_s=round(t0 - 3600 * 9.2, 2),
                                  mem_bytes=w.mem_bytes, sm_util_pct=float(int(min(100, busy * 100))),
                                  cpu_s=round(w.cpu_s / max(1, len(w.gpus)), 2),
                                  rss_bytes=int(14 * 2**30), slurm_job="81123", slurm_step="0"))
    elif isinstance(w, CudaJob):
        if w.gpu < len(acts_tick):
            busy = acts_tick[w.gpu].by_pid.get(w.pid, 0.0) / T
            out.append(ProcSample(pid=w.pid, gpu_index=w.gpu, name=w.name, cmdline=w.cmdline,
                                  user=w.user, ppid=w.pid - 3, start_time_s=round(t0 - 5000, 2),
                                  mem_bytes=w.mem_bytes, sm_util_pct=float(int(min(100, busy * 100))),
                                  cpu_s=round(w.cpu_s, 2), rss_bytes=int(2.1 * 2**30),
                                  container=w.container))
    return out


def isfinite_all(frame):
    return all(math.isfinite(g.util_gpu_pct or 0) for g in frame.gpus)
