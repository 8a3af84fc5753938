"""One machine over time: GPUs, workloads, the host, and the frames gputop's sampler would
build from them (nvml + engine + host [+ pin] [+ ebpf] sources)."""

from __future__ import annotations

import dataclasses
import math
import random
import zlib

from gputop.buckets import bucket_index
from gputop.schema import (Frame, HostSample, LaunchHist, PinnedSample, ProcSample, SourceStatus,
                           ThreadSample)
from gputop.sources.engine_merge import merge_engines

from .hw import SPECS, Gpu


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


class World:
    def __init__(self, name, gpu="H100", n_gpus=1, duration=240.0, tick=1.0, cpus=64,
                 bg=None, psi_extra=None, ebpf=None, pinned=None, scrape_s=1.0,
                 engine_down=None, spec_overrides=None):
        self.name = name
        self.seed = seed_of(name)
        self.rng = random.Random(self.seed)
        spec = SPECS[gpu]
        if spec_overrides:
            spec = dataclasses.replace(spec, **spec_overrides)
        self.gpus = [Gpu(spec, i, duration + 5, self.rng, self.seed) for i in range(n_gpus)]
        self.duration = duration
        self.tick = tick
        self.cpus = cpus
        self.bg = bg or (lambda t: 0.06 * cpus)
        self.psi_extra = psi_extra or (lambda t: 0.0)
        self.ebpf = ebpf  # dict(api=..., base_us=..., jitter=fn(t) -> (fraction, mean_ms))
        self.pinned = pinned  # dict(label=..., workload=index)
        self.scrape_s = scrape_s
        self.engine_down = engine_down or (lambda t: None)  # reason text while unreachable
        self.workloads = []
        self.start_wall = 1_790_000_000.0 + (self.seed % 5_000_000)
        self.mono0 = 40_000.0 + (self.seed % 100_000) / 10
        self.psi = 0.3 + self.rng.random()
        self.ctx_total = int(9e9 + self.rng.random() * 1e9)
        self.mem_fn = {}  # gpu index -> fn(t) of bytes used, overriding processes
        self.procs_fn = None  # fn(t) -> list of ProcSample (overrides the default)
        self.frames: list[Frame] = []
        self.hooks = []  # fn(t, world) each tick (a fan fails, an admin lowers the power cap)
        self.extra_procs = []  # (t0, t1, ProcSample): another tenant's process
        self.preroll = 90.0

    def add(self, workload):
        self.workloads.append(workload)
        return workload

    # ------------------------------------------------------------ processes

    def _processes(self, t):
        if self.procs_fn is not None:
            return self.procs_fn(t, self)
        out = [p for a, b, p in self.extra_procs if a <= t < b]
        for wl in self.workloads:
            kind = getattr(wl, "kind", None)
            for r, g in enumerate(wl.gpus):
                gpu = self.gpus[g]
                if kind in ("vllm", "sglang", "llamacpp"):
                    if not wl.up(t):
                        continue
                    mem = int(wl.w_gpu + wl.pool_bytes + 2.2e9)
                    if kind == "vllm":
                        name = "VLLM::EngineCore" if wl.tp == 1 else "VLLM::Worker_TP%d" % r
                        cmd = name
                    elif kind == "sglang":
                        name = "sglang::scheduler" if wl.tp == 1 else "sglang::scheduler_TP%d" % r
                        cmd = "python3 -m sglang.launch_server --model-path %s --tp %d" % (wl.m.name, wl.tp)
                    else:
                        name = "llama-server"
                        cmd = "llama-server -m /models/%s -c %d -np %d --metrics" % (
                            wl.m.name, wl.pool_tokens, wl.max_seqs)
                    pid = wl.pids[min(len(wl.pids) - 1, 1 + r)]
                    out.append(ProcSample(pid=pid, gpu_index=g, name=name, cmdline=cmd, user="svc",
                                          ppid=wl.pids[0], start_time_s=self.start_wall - 50_000,
                                          mem_bytes=mem, cpu_s=round(wl.c["cpu"] / (wl.tp + 1), 2),
                                          rss_bytes=int(6e9)))
                else:
                    pid = wl.pids[min(r, len(wl.pids) - 1)]
                    mem = int(wl.mem_frac * gpu.spec.mem_total) if wl.mem_frac <= 1 else int(wl.mem_frac)
                    out.append(ProcSample(pid=pid, gpu_index=g, name=wl.name,
                                          cmdline=wl.cmdline + (" --local_rank=%d" % r if len(wl.gpus) > 1 else ""),
                                          user="ml", ppid=1999, start_time_s=self.start_wall - 9000,
                                          mem_bytes=mem, cpu_s=round(wl.c["cpu"] / len(wl.gpus), 2),
                                          rss_bytes=int(12e9)))
        return out

    # ------------------------------------------------------------ host

    def _host(self, t, dt):
        demand = self.bg(t) + sum(getattr(w, "cpu_demand", 1.0) for w in self.workloads)
        u = demand / self.cpus
        inst = 97 * min(1.0, max(0.0, u - 0.6) ** 1.6 * 3.0) + self.psi_extra(t)
        inst = min(100.0, inst * (1 + (self.rng.random() - 0.5) * 0.1))
        self.psi += (inst - self.psi) * (1 - math.exp(-dt / 10.0))
        cpu_pct = min(100.0, u * 100 * (1 + (self.rng.random() - 0.5) * 0.04))
        rq = max(1, int(min(demand, self.cpus) * 0.35 + max(0.0, demand - self.cpus)
                        + self.rng.random() * 3))
        self.ctx_total += int(dt * (4000 * self.cpus ** 0.5 + 3000 * demand))
        return HostSample(cpu_pct=round(cpu_pct, 1), cpu_pressure_some_pct=round(self.psi, 2),
                          run_queue=rq, cpus=self.cpus, ctx_switches_total=self.ctx_total)

    # ------------------------------------------------------------ engines

    def _engine(self, t, wall, mono):
        engines = [w for w in self.workloads if hasattr(w, "sample")]
        down = self.engine_down(t)
        if down:
            return None, SourceStatus(False, down)
        pages: dict[str, list] = {}
        for wl in engines:
            s = wl.sample(wall, mono)
            if s is not None:
                pages.setdefault(s.url, []).append(s)
        if not pages:
            return None, SourceStatus(False, "no engine found (pass --engine URL)")
        per_url = []
        for url, samples in pages.items():
            if len(samples) == 1:
                per_url.append(samples[0])
                continue
            page = merge_engines(samples)
            reps = tuple(dataclasses.replace(s, replica="engine=%d" % i, url=url)
                         for i, s in enumerate(samples))
            page = dataclasses.replace(page, url=url, replicas=reps, data_parallel=len(samples),
                                       model=samples[0].model, replica="")
            per_url.append(page)
        merged = merge_engines(per_url) if len(per_url) > 1 else per_url[0]
        return merged, SourceStatus(True, poll_s=round(0.006 + self.rng.random() * 0.03, 6),
                                    poll_median_s=0.012)

    # ------------------------------------------------------------ eBPF launch histograms

    def _launch(self, t, dt):
        spec = self.ebpf
        frac, mean_ms = spec.get("jitter", lambda t: (0.0, 0.0))(t)
        hists = []
        switches = 0
        for wl in self.workloads:
            rate = getattr(wl, "launch_rate", 0.0)
            if hasattr(wl, "last_steps_per_s"):
                per = spec.get("per_step", 2)
                rate = wl.last_steps_per_s * per
            n = int(rate * dt)
            if n <= 0:
                continue
            buckets: dict[int, int] = {}
            total_ns = 0
            mx = 0
            nj = int(n * frac)
            parts = ((n - nj, spec.get("base_us", 5.0) * 1000, 0.35), (nj, mean_ms * 1e6, 0.8))
            for count, centre, sigma in parts:
                if count <= 0 or centre <= 0:
                    continue
                k = 12
                for i in range(k):
                    z = (i + 0.5) / k
                    v = centre * math.exp(sigma * 2.2 * (z - 0.5) + (self.rng.random() - 0.5) * 0.1)
                    c = count // k + (1 if i < count % k else 0)
                    if c:
                        b = bucket_index(int(v))
                        buckets[b] = buckets.get(b, 0) + c
                        total_ns += int(v * c)
                        mx = max(mx, int(v))
            pid = wl.pids[1] if len(wl.pids) > 1 else wl.pids[0]
            hists.append(LaunchHist(api=spec.get("api", "cudaGraphLaunch"), pid=pid, count=n,
                                    sum_ns=total_ns, max_ns=mx, buckets=buckets))
            # the launch thread's time off the CPU: short voluntary waits, and the preemptions
            invol = int(dt * (20 + frac * rate * 1.2 + spec.get("invol_extra", lambda t: 0.0)(t)))
            vol = int(dt * 300)
            ob: dict[int, int] = {}
            ts = 0
            for count, centre in ((vol, 30_000.0), (invol, max(200_000.0, mean_ms * 1e6))):
                for i in range(6):
                    v = centre * math.exp(0.8 * (i - 2.5) / 2.5)
                    c = count // 6 + (1 if i < count % 6 else 0)
                    if c:
                        b = bucket_index(int(v))
                        ob[b] = ob.get(b, 0) + c
                        ts += int(v * c)
            if ob:
                hists.append(LaunchHist(api="off-cpu", pid=pid, count=sum(ob.values()), sum_ns=ts,
                                        max_ns=max(int(v) for v in [centre]), buckets=ob))
            switches += invol
        return tuple(hists), switches

    # ------------------------------------------------------------ the run

    def run(self):
        tick = self.tick
        n = int(self.duration / tick)
        last_engine = None
        last_taken = None
        for wl in self.workloads:  # gputop attaches to a system already in its steady state
            if hasattr(wl, "t_next"):
                wl.t_next = -self.preroll
                wl.last_avail = -self.preroll
            if not hasattr(wl, "phases"):
                t = -self.preroll
                while t < 0:
                    wl.advance(t, t + 1.0)
                    t += 1.0
        for k in range(1, n + 1):
            t = k * tick
            t0 = t - tick
            for hook in self.hooks:
                hook(t0, self)
            for wl in self.workloads:
                wl.advance(t0, t)
            for g in self.gpus:
                g.context = False
            for wl in self.workloads:
                up = getattr(wl, "up", lambda t: True)
                if up(t) or getattr(wl, "kind", "") not in ("vllm", "sglang", "llamacpp"):
                    for gi in wl.gpus:
                        self.gpus[gi].context = True
            procs = self._processes(t)
            for g in self.gpus:
                if g.index in self.mem_fn:
                    g.mem_used = int(self.mem_fn[g.index](t))
                    g.context = g.mem_used > 1e9 or g.context
                else:
                    g.mem_used = sum(p.mem_bytes or 0 for p in procs if p.gpu_index == g.index)
                    if g.mem_used:
                        g.mem_used += 520 * 2**20
            gpus = tuple(g.sample(t, tick) for g in self.gpus)
            wall, mono = self.start_wall + t, self.mono0 + t
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=round(0.004 + 0.001 * len(gpus), 6),
                                            poll_median_s=round(0.004 + 0.001 * len(gpus), 6))}
            # the engine refreshes what it publishes every scrape_s
            if last_taken is None or t - last_taken >= self.scrape_s - 1e-9 or self.engine_down(t):
                last_engine, status = self._engine(t, wall - 0.003, mono - 0.003)
                last_taken = t
                estatus = status
            else:
                age = round(t - last_taken, 3)
                estatus = dataclasses.replace(estatus, age_s=age) if estatus.ok else estatus
            if estatus.ok:
                estatus = dataclasses.replace(estatus, age_s=round(t - last_taken, 3))
            sources["engine"] = estatus
            host = self._host(t, tick)
            sources["host"] = SourceStatus(True, age_s=0.0, poll_s=0.0004, poll_median_s=0.0004)
            launch = ()
            if self.ebpf:
                launch, switches = self._launch(t, tick)
                host = dataclasses.replace(host, offcpu_switches=switches)
                sources["ebpf"] = SourceStatus(True, detail="full mode; libcudart.so.12: cudaLaunchKernel, "
                                               "cudaGraphLaunch, cudaMemcpyAsync; libcuda.so.1: cuLaunchKernel",
                                               age_s=0.0, poll_s=0.002, poll_median_s=0.002)
            pinned = None
            if self.pinned:
                wl = self.workloads[self.pinned.get("workload", 0)]
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0003, poll_median_s=0.0003)
                main = round(wl.c["cpu"] * 0.45, 2)
                pinned = PinnedSample(
                    label=self.pinned.get("label", "train.py"), pattern=self.pinned.get("pattern"),
                    root_pids=(wl.pids[0],), tree_pids=tuple(wl.pids),
                    cpu_s=round(wl.c["cpu"], 2), ctx_voluntary=int(wl.c.get("vol", wl.c["cpu"] * 500)),
                    ctx_involuntary=int(wl.c["invol"]),
                    threads=(ThreadSample(tid=wl.pids[0], pid=wl.pids[0], name=self.pinned.get("thread", "python"),
                                          cpu_s=main),
                             ThreadSample(tid=wl.pids[0] + 5, pid=wl.pids[0], name="pt_data_worker",
                                          cpu_s=round(wl.c["cpu"] * 0.1, 2))),
                    cores=tuple(range(self.cpus)),
                    cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=host.run_queue,
                    listening_ports=(9400,) if getattr(wl, "counter", False) else ())
            frame = Frame(seq=k - 1, time_wall_s=round(wall, 6), time_mono_s=round(mono, 6),
                          gpus=gpus, processes=tuple(procs), engine=last_engine if estatus.ok else None,
                          launch=launch, host=host, pinned=pinned, sources=sources)
            self.frames.append(frame)
        return self.frames
