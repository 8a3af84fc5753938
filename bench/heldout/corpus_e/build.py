"""Turn a trace spec into frames: the workload's per-tick activity through each GPU's
physics, plus the processes, the engine page, the host's /proc and (some traces) eBPF."""

from __future__ import annotations

import random
import zlib

from gputop.buckets import bucket_index
from gputop.schema import (EngineSample, Frame, HostSample, LaunchHist, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

from . import hist as H
from .effects import resolve
from .physics import GpuState
from .serving import Replica
from .specs import BOARDS, GIB
from .training import Trainer

PORTS = {"vllm": 8000, "sglang": 30000, "llamacpp": 8080, "trainer": 9400}
NO_ENGINE = "no engine found (pass --engine URL)"
DOWN = "engine unreachable: <urlopen error [Errno 111] Connection refused>"


def _lat_buckets(rng, count, median_us, tail_frac, tail_us):
    """A host-side call-duration histogram (ns buckets) of ``count`` calls."""
    buckets: dict[int, int] = {}
    if count <= 0:
        return buckets, 0, 0
    tail = int(count * tail_frac + rng.random())
    body = count - tail
    total, largest = 0, 0
    for n, center, sigma in ((body, median_us, 0.35), (tail, tail_us, 0.8)):
        if n <= 0:
            continue
        parts = (-1.6, -0.8, -0.25, 0.25, 0.8, 1.6, 2.4)
        weights = (0.08, 0.2, 0.24, 0.24, 0.16, 0.06, 0.02)
        left = n
        for z, w in zip(parts, weights):
            k = min(left, int(round(n * w)))
            if z == parts[-1]:
                k = left
            if k <= 0:
                continue
            left -= k
            ns = int(center * 1000 * pow(2.718281828, sigma * z) * (1 + 0.05 * rng.random()))
            index = bucket_index(ns)
            buckets[index] = buckets.get(index, 0) + k
            total += ns * k
            largest = max(largest, ns)
    return buckets, total, largest


class TraceBuilder:
    def __init__(self, spec: dict):
        self.s = spec
        self.rng = random.Random(zlib.crc32(spec["name"].encode()))
        self.board = BOARDS[spec["gpu"]]
        self.n = spec.get("n_gpus", 1)
        self.tick_s = spec.get("tick", 1)
        rng = self.rng
        inlet = spec.get("inlet", 24 + 6 * rng.random())
        limit = spec.get("limit_w")
        self.states = [GpuState(self.board, i, rng, inlet + rng.gauss(0, 1.2), limit)
                       for i in range(self.n)]
        self.base_pid = 2000 + zlib.crc32(spec["name"].encode()) % 60000
        p = dict(spec.get("p", {}))
        self.kind = spec["kind"]
        self.engine = spec.get("engine", "none")
        if self.kind == "serve":
            tp, dp = spec.get("tp", 1), spec.get("dp", 1)
            p["engine"] = self.engine
            self.replicas = [Replica(p, self.board, list(range(d * tp, (d + 1) * tp)), rng,
                                     f"engine={d}" if dp > 1 and self.engine == "vllm" else
                                     (f"dp_rank={d}" if dp > 1 else ""), self.base_pid + 10 * d + 1)
                             for d in range(dp)]
            for r in self.replicas:  # start in a steady state: a warm batch
                r.R = min(r.max_seqs * 0.8, p["rate"] * p["out"] * p.get("warm_itl", 0.012))
                r.p["_r0"] = r.R
        else:
            self.trainer = Trainer(p, self.board, list(range(self.n)), rng)
        self.p = p
        self.cpus = spec.get("cpus", 64 if self.n == 1 else 32 * self.n if self.n < 8 else 224)
        self.prev_cpu = 0.0
        self.host_ctx = 10**9 + rng.randrange(10**8)
        self.start_wall = spec.get("start_wall", 1796400000.0 + zlib.crc32(spec["name"].encode()) % 5_000_000)
        self.mono0 = 5000.0 + rng.random() * 1000
        self.offcpu_prev = 0
        self.other_cpu = 0.0
        self.big_on = False
        self.big_since = 0.0

    # ------------------------------------------------------------------ processes
    def _procs(self, gpus, t, e, utils):
        s, out = self.s, []
        if self.kind == "serve":
            for r in self.replicas:
                if r.down:
                    continue
                for i, g in enumerate(r.gpus):
                    if self.engine == "vllm":
                        name = "VLLM::EngineCore" if r.tp == 1 else f"VLLM::Worker_TP{i}"
                        pid = r.pid0 if r.tp == 1 else r.pid0 + 2 + i
                        cmd = name
                    elif self.engine == "sglang":
                        name = f"sglang::scheduler_TP{i}" if r.tp > 1 else "sglang::scheduler"
                        pid, cmd = r.pid0 + 1 + i, name
                    else:
                        name, pid = "llama-server", r.pid0
                        cmd = f"/opt/llama.cpp/build/bin/llama-server -m /models/{r.m.name} -ngl 99 -c {r.pool} -np {r.max_seqs} --metrics --host 0.0.0.0 --port 8080"
                    cpu = r.c["cpu"] / (r.tp + 1)
                    out.append(self._proc(pid, g, name, cmd, gpus[g].mem_used_bytes - self._other_mem(g, e),
                                          utils[g] * (1 - e["share"].get(g, 0.0)), cpu, r.pid0 - 1))
        else:
            tr = self.trainer
            for g in range(self.n):
                if gpus[g].mem_used_bytes <= self._other_mem(g, e):
                    continue
                cmd = s.get("cmd", "python train.py")
                if self.n > 1:
                    cmd = f"/usr/bin/python3 -u {cmd.split()[-1]} --local-rank={g}"
                out.append(self._proc(self.base_pid + 5 + g, g, "python3", cmd,
                                      tr.mem[g], utils[g] * (1 - e["share"].get(g, 0.0)),
                                      tr.cpu / (self.n + 0.5), self.base_pid + 4))
        other = s.get("other")
        if other and self._other_on(t, e):
            g = other.get("gpu", 0)
            self.other_cpu += self.tick_s * other.get("cores", 1.0)
            share = max(e["share"].get(g, 0.0), other.get("idle_share", 0.0))
            out.append(self._proc(self.base_pid + 900, g, other.get("name", "python3"),
                                  other["cmd"], self._other_mem(g, e), utils[g] * share,
                                  self.other_cpu, 1, user=other.get("user", "root"),
                                  start=self.start_wall + other.get("from", 0)))
        return tuple(out)

    def _other_on(self, t, e):
        other = self.s.get("other")
        if not other:
            return False
        return other.get("from", 0) <= t <= other.get("until", 1e9)

    def _other_mem(self, g, e):
        other = self.s.get("other")
        if other and other.get("gpu", 0) == g and self._other_on(self._t, e):
            return int(other.get("mem_gb", 4) * GIB)
        return 0

    def _proc(self, pid, g, name, cmd, mem, util, cpu, ppid, user="root", start=None):
        return ProcSample(pid=pid, gpu_index=g, name=name, cmdline=cmd, user=user, ppid=ppid,
                          start_time_s=start or (self.start_wall - 3600.0), mem_bytes=int(max(0, mem)),
                          sm_util_pct=float(round(util)), cpu_s=round(cpu, 2),
                          rss_bytes=int(2.5 * GIB + pid % 7 * 1e8))

    # ------------------------------------------------------------------ one tick
    def frames(self):
        s, dt = self.s, self.tick_s
        ticks = int(s["dur"] / dt)
        out = []
        for i in range(ticks):
            t = i * dt
            self._t = t
            wall, mono = self.start_wall + t, self.mono0 + t
            e = resolve(s.get("envs", ()), t, s.get("base", {}))
            rs = {g: st.r for g, st in enumerate(self.states)}
            acts, engine, reason = {}, None, None
            if self.kind == "serve":
                samples = []
                for r in self.replicas:
                    big = e["extra_seqs"] > 0.5
                    if big and not self.big_on:
                        self.big_on, self.big_since = True, t
                    if not big and self.big_on:
                        self.big_on = False
                        r.finish_big(int(s.get("big_n", 8)), int(s.get("big_max_tokens", 512)),
                                     t - self.big_since)
                    res = r.tick(t, dt, e, [rs[g] for g in r.gpus])
                    if res is None:
                        for g in r.gpus:
                            acts[g] = dict(busy=0.0, context=False, mem_used=0)
                        reason = DOWN
                        continue
                    acts.update(res["acts"])
                    if res.get("loading") is None or res["loading"] > 0.9:
                        if res.get("loading") is None:
                            pids = [r.pid0 - 1, r.pid0] + [r.pid0 + 2 + k for k in range(r.tp if r.tp > 1 else 0)]
                            samples.append(r.sample(f"http://127.0.0.1:{PORTS[self.engine]}/metrics",
                                                    pids, wall + 0.012 + 0.02 * self.rng.random(), mono + 0.012))
                        else:
                            reason = DOWN
                    else:
                        reason = DOWN
                if samples:
                    engine = samples[0] if len(samples) == 1 else _merge(samples)
                    reason = None
            else:
                res = self.trainer.tick(t, dt, e, rs)
                acts = res["acts"]
                if self.engine == "trainer" and not res.get("exited"):
                    engine = self.trainer.sample(f"http://127.0.0.1:{PORTS['trainer']}/metrics",
                                                 [self.base_pid + 4] + [self.base_pid + 5 + g for g in range(self.n)],
                                                 wall + 0.004, mono + 0.004)
                elif self.engine == "trainer":
                    reason = DOWN
                else:
                    reason = NO_ENGINE
            gpus = []
            for g, st in enumerate(self.states):
                act = dict(acts.get(g, dict(busy=0.0)))
                share = e["share"].get(g, 0.0)
                if self._other_on(t, e) and s["other"].get("gpu", 0) == g:
                    share = max(share, s["other"].get("idle_share", 0.0))
                    if act.get("context") is False:
                        act["context"] = True
                    act["busy"] = min(1.0, act.get("busy", 0.0) + share * (1 - act.get("busy", 0.0)) * 2)
                    if s["other"].get("idle_share"):
                        act["sm"] = act.get("sm", 0.0) + s["other"]["idle_share"] * 0.6
                act["mem_used"] = act.get("mem_used", 0) + self._other_mem(g, e)
                if act.get("context") is None:
                    act["context"] = act["mem_used"] > 0
                cond = {"heat_c": e["heat"].get(g, 0.0)}
                if g in e["limit_w"]:
                    cond["limit_w"] = e["limit_w"][g]
                if g in e["force_r"]:
                    cond["force_r"] = e["force_r"][g]
                    cond["reasons"] = e["reasons"].get(g, ("hw slowdown",))
                gpus.append(st.tick(dt, act, cond))
            utils = {g.index: g.util_gpu_pct for g in gpus}
            procs = self._procs(gpus, t, e, utils)
            host, launch, pinned, armed = self._host(t, dt, e, engine, procs)
            sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004 + 0.002 * self.n),
                       "engine": SourceStatus(reason is None, reason=reason,
                                              age_s=0.0 if reason is None else None),
                       "host": SourceStatus(True, age_s=0.0, poll_s=0.0004)}
            if s.get("pin"):
                sources["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.0009)
            if s.get("ebpf"):
                sources["ebpf"] = SourceStatus(True, detail="full mode; /usr/local/lib/python3.12/dist-packages/nvidia/cuda_runtime/lib/libcudart.so.12: cudaLaunchKernel, cudaLaunchKernelExC, cudaGraphLaunch, cudaMemcpyAsync, cudaStreamSynchronize; /usr/lib/x86_64-linux-gnu/libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch", age_s=0.0)
            out.append(Frame(seq=i, time_wall_s=wall, time_mono_s=mono, gpus=tuple(gpus),
                             processes=procs, engine=engine, launch=launch, host=host,
                             pinned=pinned, sources=sources))
        return out

    # ------------------------------------------------------------------ host, eBPF
    def _host(self, t, dt, e, engine, procs):
        rng, s = self.rng, self.s
        if self.kind == "serve":
            own_cpu = sum(r.c["cpu"] for r in self.replicas)
            invol = sum(r.c["invol"] for r in self.replicas)
            busiest = sum(r.c["busiest"] for r in self.replicas)
        else:
            own_cpu, invol, busiest = self.trainer.cpu, self.trainer.invol, self.trainer.busiest
        cores = max(0.0, (own_cpu - self.prev_cpu) / dt)
        self.prev_cpu = own_cpu
        c = e["contention"]
        other = s.get("other", {}).get("cores", 0.0) if self._other_on(t, e) else 0.0
        bg = self.cpus * 0.015 + abs(rng.gauss(0, 0.4)) + s.get("host_bg", 0.0)
        contender = c * self.cpus * 1.05
        demand = cores + bg + other + contender
        cpu_pct = min(100.0, 100 * demand / self.cpus + rng.gauss(0, 0.3))
        psi = 0.15 + 0.6 * rng.random() + c * (55 + 25 * rng.random()) + \
            max(0.0, demand / self.cpus - 0.85) * 60 + 4 * e["jitter"] * rng.random()
        runq = int(max(1, cores + bg * 0.5 + c * self.cpus * 1.7 + rng.gauss(0, 1.2)))
        self.host_ctx += int(dt * (25000 + 3000 * demand + c * 250000))
        launch, offsw, armed = (), None, None
        if s.get("ebpf"):
            launch, offsw = self._launch(t, dt, e, procs)
        host = HostSample(cpu_pct=round(max(0.0, cpu_pct), 1), offcpu_switches=offsw,
                          cpu_pressure_some_pct=round(min(99.0, psi), 2), run_queue=runq,
                          cpus=self.cpus, ctx_switches_total=self.host_ctx)
        pinned = None
        if s.get("pin"):
            tr = self.trainer if self.kind != "serve" else None
            roots = (self.base_pid + 4,) if tr else (self.replicas[0].pid0 - 1,)
            tree = roots + tuple(p.pid for p in procs if p.pid != self.base_pid + 900)
            if tr:
                tree += tuple(self.base_pid + 100 + k for k in range(self.p.get("workers", 4) * self.n))
            threads = [ThreadSample(tid=roots[0] + 1, pid=roots[0], name="python3" if tr else "VLLM::EngineCore",
                                    cpu_s=round(busiest, 2))]
            if tr:
                wk = self.trainer.worker_cpu / max(1, self.p.get("workers", 4) * self.n)
                threads += [ThreadSample(tid=self.base_pid + 100 + k, pid=self.base_pid + 100 + k,
                                         name="pt_data_worker", cpu_s=round(wk * (1 + 0.02 * k), 2))
                            for k in range(min(6, self.p.get("workers", 4) * self.n))]
            pinned = PinnedSample(label=s.get("cmd", "python train.py"), pattern=s.get("pin_pattern"),
                                  root_pids=roots, tree_pids=tree, cpu_s=round(own_cpu, 2),
                                  ctx_voluntary=int(self.trainer.vol if tr else own_cpu * 900),
                                  ctx_involuntary=int(invol), threads=tuple(threads),
                                  cores=tuple(range(self.cpus)),
                                  cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                                  run_queue=runq)
        return host, launch, pinned, armed

    def _launch(self, t, dt, e, procs):
        rng, s = self.rng, self.s
        jit, slow, c = e["jitter"], e["launch_slow"], e["contention"]
        med = s.get("launch_med_us", 3.2) * (1 + 2.6 * slow)
        tail_frac = 0.002 + 0.05 * jit + 0.02 * c
        tail_us = 25 + 1800 * jit + 400 * c
        pid = procs[0].pid if procs else self.base_pid
        out = []
        if self.kind == "serve":
            r = self.replicas[0]
            steps = r.c["steps"] - getattr(self, "_steps_prev", 0.0)
            self._steps_prev = r.c["steps"]
            graphs = self.p.get("graphs", True)
            calls = {"cudaGraphLaunch": steps if graphs else 0,
                     "cudaLaunchKernel": steps * (40 if graphs else r.m.layers * 14),
                     "cuLaunchKernel": steps * (6 if graphs else r.m.layers * 4)}
        else:
            rate = 1.0 / max(1e-3, self._tr_step(e))
            n = self.p.get("launches", 900) * rate * dt
            calls = {"cudaLaunchKernel": n * 0.7, "cuLaunchKernel": n * 0.3,
                     "cudaStreamSynchronize": rate * dt * 2}
        for api, n in calls.items():
            n = int(n)
            if n <= 0:
                continue
            m = med * (2.4 if api == "cudaGraphLaunch" else 0.8 if api.startswith("cu") else 1.0)
            if api == "cudaStreamSynchronize":
                m = 800.0
            b, total, largest = _lat_buckets(rng, n, m, tail_frac, tail_us)
            out.append(LaunchHist(api=api, pid=pid, count=n, sum_ns=total, max_ns=largest, buckets=b))
        switches = int(dt * (18 + 2500 * jit + 1800 * c) * (1 + 0.2 * rng.random()))
        b, total, largest = _lat_buckets(rng, switches, 40 + 900 * jit + 300 * c, 0.05 + 0.2 * jit,
                                         2500 + 3000 * jit)
        if switches:
            out.append(LaunchHist(api="off-cpu", pid=pid, count=switches, sum_ns=total,
                                  max_ns=largest, buckets=b))
        return tuple(out), switches

    def _tr_step(self, e):
        return 1.0 / max(1e-6, getattr(self.trainer, "_rate", 0.0) or 1.0 / self.p.get("compute_s", 0.3))


def _merge(samples: list[EngineSample]) -> EngineSample:
    """One page holding several data-parallel engines: sums at the top, each as a replica."""
    first = samples[0]

    def total(name):
        vals = [getattr(x, name) for x in samples]
        return None if any(v is None for v in vals) else sum(vals)
    fields = {}
    for name in ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
                 "requests_finished_total", "requests_running", "requests_waiting",
                 "preemptions_total", "retracted_requests_total", "prefill_seconds_total",
                 "decode_seconds_total", "forward_seconds_total", "spec_drafts_total",
                 "spec_draft_tokens_total", "spec_accepted_tokens_total", "cpu_s",
                 "busiest_thread_cpu_s", "kv_used_tokens", "kv_free_tokens", "kv_evictable_tokens",
                 "retracted_input_tokens_total"):
        fields[name] = total(name)
    fields["ctx_involuntary"] = sum(x.ctx_involuntary or 0 for x in samples)
    kv = [x.kv_usage_ratio for x in samples if x.kv_usage_ratio is not None]
    hists = tuple(H.merged([x.histograms[i] for x in samples]) for i in range(len(first.histograms)))
    import dataclasses
    return dataclasses.replace(first, **fields, kv_usage_ratio=sum(kv) / len(kv) if kv else None,
                               histograms=hists, data_parallel=len(samples), replica="",
                               pids=tuple(sorted({p for x in samples for p in x.pids})),
                               replicas=tuple(samples))
