"""One trace: boards, jobs and knobs run tick by tick into gputop Frames."""

from __future__ import annotations

import math
import random
import zlib

from gputop.buckets import bucket_index
from gputop.schema import (Frame, GpuSample, HostSample, LaunchHist, MigSample, PinnedSample,
                           ProcSample, SourceStatus, ThreadSample)

from .common import Ev, Knobs, poisson
from .hw import ACTIVITY, BOARDS, MIG_UTIL, NO_GPM, Activity, GpuState
from .serve import ServeJob
from .train import OtherJob, TrainJob

NO_ENGINE = SourceStatus(False, "no engine found (pass --engine URL)")
EBPF_DETAIL = ("full mode; /usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/"
               "libcudart.so.12: cudaLaunchKernel, cudaLaunchKernelExC, cudaGraphLaunch, "
               "cudaMemcpyAsync, cudaStreamSynchronize, cudaDeviceSynchronize; "
               "/usr/lib/x86_64-linux-gnu/libcuda.so.1: cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch")
MIG_PROFILES = {"H100": (("3g.40gb", 60, 40), ("2g.20gb", 32, 20), ("2g.20gb", 32, 20)),
                "A100": (("3g.40gb", 42, 40), ("2g.20gb", 28, 20), ("1g.10gb", 14, 10))}


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def _combine(parts: list[Activity]) -> Activity:
    parts = [p for p in parts if p.busy > 0]
    if not parts:
        return Activity()
    busy = min(1.0, sum(p.busy for p in parts))
    tot = sum(p.busy for p in parts)

    def avg(attr):
        return sum(p.busy * getattr(p, attr) for p in parts) / tot
    samples = next((p.samples for p in parts if p.samples), ())
    return Activity(busy=busy, sm=avg("sm"), occ=avg("occ"), tensor=avg("tensor"), dram=avg("dram"),
                    nvlink_mib_s=sum(p.nvlink_mib_s for p in parts),
                    pcie_mib_s=sum(p.pcie_mib_s for p in parts), samples=samples)


def _launch_hist(rng, api: str, pid: int, count: int, median_ns: float, n_tail: int,
                 tail_ns: float) -> LaunchHist | None:
    """``count`` calls of ``api`` in one tick: most near ``median_ns`` (lognormal), ``n_tail``
    of them held ~``tail_ns`` (the thread was off the CPU inside the call)."""
    if count <= 0:
        return None
    buckets: dict[int, int] = {}
    n_tail = min(n_tail, count)
    bulk = count - n_tail
    draws = min(bulk, 300)
    scale = bulk / draws if draws else 0.0
    total, most = 0.0, 0
    for _ in range(draws):
        v = int(max(300, median_ns * math.exp(rng.gauss(0, 0.3))))
        i = bucket_index(v)
        buckets[i] = buckets.get(i, 0) + 1
        total += v
        most = max(most, v)
    if scale > 1:
        buckets = {i: max(1, int(round(n * scale))) for i, n in buckets.items()}
    total *= scale
    for _ in range(n_tail):
        v = int(max(300, tail_ns * math.exp(rng.gauss(0, 0.6))))
        i = bucket_index(v)
        buckets[i] = buckets.get(i, 0) + 1
        total += v
        most = max(most, v)
    return LaunchHist(api=api, pid=pid, count=sum(buckets.values()), sum_ns=int(total),
                      max_ns=most, buckets=buckets)


class Trace:
    def __init__(self, spec: dict):
        self.spec = s = spec
        self.rng = random.Random(seed_of(s["name"]))
        self.knobs = Knobs(s.get("events", ()))
        self.tick_s = s.get("tick", 1)
        self.dur = s.get("dur", 300)
        self.wall0 = 1_796_300_000.0 + (seed_of(s["name"]) % 5_000_000)
        self.mono0 = 10_000.0 + (seed_of(s["name"]) % 90_000)
        n = s.get("n", 1)
        board = BOARDS[s["gpu"]]
        self.boards = {g: board for g in range(n)}
        self.gpus = {g: GpuState(board, g, self.rng, s.get("cap")) for g in range(n)}
        self.jobs = []
        for js in s["jobs"]:
            cls = {"serve": ServeJob, "train": TrainJob, "other": OtherJob}[js["type"]]
            self.jobs.append(cls(js, self.boards, self.rng, self.knobs, self.wall0))
        self.cpus = s.get("cpus", 64)
        self.host_ctx = 10**9 + self.rng.randrange(10**9)
        self.host_slow = 1.0
        self.tree_invol = {id(j): 20000 + self.rng.randrange(9000) for j in self.jobs}
        self.tree_vol = {id(j): 400000 + self.rng.randrange(90000) for j in self.jobs}
        self.tree_cpu = {id(j): 3000.0 + self.rng.random() * 900 for j in self.jobs}
        self.thread_cpu = {id(j): 900.0 for j in self.jobs}
        self.engine_last = None
        self.engine_read_t = -1e9
        self.proc_cpu: dict[int, float] = {}

    # ------------------------------------------------------------ per-tick physics

    def _apply_knobs(self, t: float):
        k = self.knobs
        for g, gs in self.gpus.items():
            gs.extra_amb = k.get(f"amb{g}", t, 0.0) + k.get("amb", t, 0.0)
            gs.brake = k.on(f"brake{g}", t) > 0.5 or k.on("brake", t) > 0.5
            gs.hw_slow = max(k.get(f"hwslow{g}", t, 0.0), k.get("hwslow", t, 0.0))
            cap = self.spec.get("cap") or gs.b.tdp_w
            gs.cap_w = min(k.get(f"cap{g}", t, cap), k.get("cap", t, cap))

    def run(self) -> list[Frame]:
        frames = []
        dt = float(self.tick_s)
        s, rng, k = self.spec, self.rng, self.knobs
        ebpf = s.get("ebpf", False)
        pin = s.get("pin")
        t = 0.0
        seq = 0
        demand_prev = 0.0
        while t < self.dur - 1e-9:
            self._apply_knobs(t)
            clocks = {g: gs.clock_for_tick() for g, gs in self.gpus.items()}
            slices = {g: 0.0 for g in self.gpus}
            for j in self.jobs:
                if isinstance(j, OtherJob):
                    for g in j.gpus:
                        slices[g] += j.slice(t)
            share = {g: max(0.1, 1.0 - v) for g, v in slices.items()}
            # host contention: the CPU the jobs want against what the host has
            over = max(0.0, demand_prev / self.cpus - 0.85)
            self.host_slow = 1.0 + 8.0 * over
            outs = []
            for j in self.jobs:
                if isinstance(j, ServeJob):
                    j.host_s = j.host_base * self.host_slow
                    out = j.tick(t, dt, clocks, share)
                else:
                    out = j.tick(t, dt, clocks, share, self.host_slow)
                outs.append(out)
            per_gpu = {g: [] for g in self.gpus}
            for out in outs:
                for g, a in out["act"].items():
                    per_gpu[g].append(a)
            demand = sum(o["cores"] for o in outs) + k.get("cpu_hog", t, 0.0) + s.get("base_cores", 1.5)
            demand *= 1 + 0.04 * rng.gauss(0, 1)
            demand_prev = demand
            procs = self._processes(t, dt, outs, per_gpu)
            has_ctx = {g: any(p.gpu_index == g for p in procs) for g in self.gpus}
            gpus = []
            for g, gs in self.gpus.items():
                act = _combine(per_gpu[g])
                reading = gs.read(act, has_ctx[g], dt, gpm_ok=seq > 0)
                used = sum(p.mem_bytes or 0 for p in procs if p.gpu_index == g)
                used = used + (int(0.55 * 2**30) if used else 0)
                gpus.append(self._gpu_sample(g, gs, reading, used, t))
            host, pinned, sources, engine, launch = self._host_side(t, dt, outs, demand, seq, ebpf, pin)
            frames.append(Frame(seq=seq, time_wall_s=self.wall0 + t, time_mono_s=self.mono0 + t,
                                gpus=tuple(gpus), processes=tuple(procs), engine=engine,
                                launch=tuple(launch), host=host, pinned=pinned, sources=sources))
            seq += 1
            t += dt
        return frames

    def _gpu_sample(self, g, gs, reading, used, t) -> GpuSample:
        b = gs.b
        bus = "00000000:%02X:00.0" % (0x18 + 0x11 * g)
        uuid = "GPU-%08x-%04x-%04x-%04x-%012x" % (seed_of(self.spec["name"] + str(g)), g, 0x4a1c,
                                                   0x9b2e, seed_of(b.name) * 4099 + g)
        mig = self.spec.get("mig")
        migs = ()
        missing = dict(reading.pop("missing"))
        if mig:
            reading["util_gpu_pct"] = None
            reading["util_mem_pct"] = None
            reading["util_gpu_samples_pct"] = ()
            missing["util_gpu_pct"] = missing["util_mem_pct"] = MIG_UTIL
            for name in ACTIVITY:
                reason = missing.get(name) or "not supported on this GPU"
                missing[name] = f"read per MIG instance in MIG mode ({reason})"
                reading.pop(name, None)
            migs = self._migs(g, gs, t)
        return GpuSample(index=g, name=b.name, uuid=uuid, bus_id=bus,
                         mem_total_bytes=b.mem_total, mem_used_bytes=min(b.mem_total, used),
                         mem_reserved_bytes=b.reserved, ecc_corrected=0, ecc_uncorrected=0,
                         xid_count=0, mig_mode=bool(mig) if b.key in ("A100", "H100", "H200", "B200") else None,
                         missing=missing, migs=migs, **reading)

    def _migs(self, g, gs, t) -> tuple[MigSample, ...]:
        out = []
        for i, (prof, sms, gb) in enumerate(MIG_PROFILES[gs.b.key]):
            used = self.mig_used.get(i, 0) if hasattr(self, "mig_used") else 0
            act = self.mig_act.get(i) if hasattr(self, "mig_act") else None
            miss = {}
            vals = {}
            if gs.b.gpm and act is not None and t > 0:
                r = self.rng
                vals = dict(sm_active_pct=act.busy * act.sm * 100 * (1 + r.gauss(0, 0.02)),
                            sm_occupancy_pct=act.busy * act.sm * 30, tensor_pct=act.busy * act.tensor * 100,
                            dram_bw_pct=act.busy * act.dram * 100)
            else:
                for name in ACTIVITY:
                    miss[name] = NO_GPM if not gs.b.gpm else "GPM needs a second sample"
            out.append(MigSample(index=i, name=f"{gs.b.name} MIG {prof}", uuid=f"MIG-{seed_of(prof + str(i)):08x}",
                                 mem_total_bytes=gb * 2**30, mem_used_bytes=used, gpu_instance_id=[1, 5, 6][i],
                                 compute_instance_id=0, profile=prof, sm_count=sms, missing=miss, **vals))
        return tuple(out)

    # ------------------------------------------------------------ processes

    def _processes(self, t, dt, outs, per_gpu) -> list[ProcSample]:
        s = self.spec
        procs = []
        util_ok = s.get("proc_util", False)
        for j, out in zip(self.jobs, outs):
            js = j.s
            if not out.get("up", True):
                if not isinstance(j, ServeJob) or out.get("loading", 0.0) < 0.3:
                    continue
            for rank, g in enumerate(j.gpus):
                pid = j.pid0 + 3 + rank if isinstance(j, ServeJob) else j.pid0 + rank
                if isinstance(j, ServeJob):
                    name = {"vllm": "VLLM::EngineCore" if j.tp == 1 else f"VLLM::Worker_TP{rank}",
                            "sglang": f"sglang::scheduler_TP{rank}" if j.tp > 1 else "sglang::scheduler",
                            "llamacpp": "llama-server"}[j.kind]
                    cmd = js.get("cmd", {"vllm": f"vllm serve {j.m.name} --tensor-parallel-size {j.tp}",
                                         "sglang": f"python -m sglang.launch_server --model-path {j.m.name} --tp {j.tp} --enable-metrics",
                                         "llamacpp": f"llama-server -m /models/{j.m.name} -c {j.pool} -ngl 99 --metrics --port 8080"}[j.kind])
                    if j.kind == "vllm" and j.tp == 1:
                        cmd = name
                    mem = j.mem_gpu
                    if out.get("loading") is not None:  # the new process loads the weights
                        mem = int(j.w_gpu * min(1.0, (out["loading"] - 0.3) / 0.5) + 0.6 * 2**30)
                else:
                    name = js.get("proc", "python")
                    cmd = js.get("cmd", "python train.py")
                    if len(j.gpus) > 1:
                        cmd += f" --local_rank={rank}"
                    mem = int(js.get("mem_gb", 30) * 2**30 * (1 + 0.002 * self.rng.gauss(0, 1)))
                    if isinstance(j, TrainJob) and out.get("phase") == "loading":
                        mem = int(mem * 0.3)
                busy = out["act"].get(g, Activity()).busy
                key = pid
                self.proc_cpu[key] = self.proc_cpu.get(key, 500.0) + out["cores"] / max(1, len(j.gpus)) * dt
                procs.append(ProcSample(
                    pid=pid, gpu_index=g, name=name, cmdline=cmd, user=js.get("user", "svc"),
                    ppid=j.pid0, start_time_s=round(j.started, 2), mem_bytes=mem,
                    sm_util_pct=float(round(min(100, busy * 100))) if util_ok else None,
                    cpu_s=round(self.proc_cpu[key], 2), rss_bytes=int(6e9 + 1e8 * rank),
                    container=js.get("container", ""), pod=js.get("pod", ""),
                    mig_index=js.get("mig_index")))
        procs.sort(key=lambda p: (p.gpu_index, p.pid))
        if s.get("mig"):
            self.mig_used = {p.mig_index: (p.mem_bytes or 0) for p in procs if p.mig_index is not None}
            self.mig_act = {}
            for j, out in zip(self.jobs, outs):
                if j.s.get("mig_index") is not None:
                    self.mig_act[j.s["mig_index"]] = _combine(list(out["act"].values()))
        return procs

    # ------------------------------------------------------------ host, pin, engine, eBPF

    def _host_side(self, t, dt, outs, demand, seq, ebpf, pin):
        s, rng, k = self.spec, self.rng, self.knobs
        cpus = self.cpus
        ratio = demand / cpus
        cpu_pct = min(100.0, max(0.5, 100 * ratio + rng.gauss(0, 1.2)))
        psi = (90 * (1 - 1 / ratio) if ratio > 1 else 4 * max(0.0, ratio - 0.6)) + abs(rng.gauss(0.6, 0.5))
        psi = round(min(97.0, psi), 2)
        rq = max(1, int(demand * 1.05 + poisson(rng, 2.0)))
        self.host_ctx += int((40000 + 3000 * demand) * dt * (1 + 0.4 * max(0, ratio - 0.8)))
        host = HostSample(cpu_pct=round(cpu_pct, 1), cpu_pressure_some_pct=psi, run_queue=rq,
                          cpus=cpus, ctx_switches_total=self.host_ctx)
        sources = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004 + 0.001 * len(self.gpus)),
                   "host": SourceStatus(True, age_s=0.0, poll_s=0.0004),
                   "pin": SourceStatus(True, age_s=0.0, poll_s=0.00003)}
        fair = min(1.0, 1.0 / max(ratio, 1e-9)) if ratio > 1 else 1.0
        contention = max(0.0, ratio - 0.8)
        # the main job: the first one
        main, mout = self.jobs[0], outs[0]
        jid = id(main)
        cpu_rate = mout["cores"] * fair
        invol_rate = (40 + 60 * len(main.gpus)) * (1 + 25 * contention) + 400 * k.on("host_delay", t)
        self.tree_cpu[jid] += cpu_rate * dt
        self.tree_invol[jid] += int(invol_rate * dt * (1 + 0.1 * rng.random()))
        self.tree_vol[jid] += int(3000 * dt * (1 + 0.1 * rng.random()))
        self.thread_cpu[jid] += min(1.0, 0.9 * fair + 0.05) * dt if mout["cores"] > 0.5 else 0.01 * dt
        pinned = None
        if pin:
            pids = tuple(range(main.pid0, main.pid0 + len(main.gpus) + s.get("tree_extra", 8)))
            threads = (ThreadSample(tid=main.pid0, pid=main.pid0, name="pt_main_thread",
                                    cpu_s=round(self.thread_cpu[jid], 2)),
                       ThreadSample(tid=main.pid0 + 40, pid=main.pid0 + 40, name="pt_data_worker",
                                    cpu_s=round(self.thread_cpu[jid] * 0.8, 2)))
            pinned = PinnedSample(label=f"{pin} ({main.pid0})", pattern=pin, root_pids=(main.pid0,),
                                  tree_pids=pids, cpu_s=round(self.tree_cpu[jid], 2),
                                  ctx_voluntary=self.tree_vol[jid], ctx_involuntary=self.tree_invol[jid],
                                  threads=threads, cores=tuple(range(cpus)),
                                  cpu_pressure_some_pct=psi, run_queue=rq)
        engine = None
        ej = next((j for j in self.jobs if isinstance(j, ServeJob)), None)
        if ej is not None:
            eo = outs[self.jobs.index(ej)]
            scrape = s.get("scrape", self.tick_s)
            if not eo["up"]:
                sources["engine"] = SourceStatus(False, "engine unreachable: <urlopen error [Errno 111] "
                                                 "Connection refused> (retry in 4s)")
                self.engine_last = None
            else:
                if t - self.engine_read_t >= scrape - 1e-6 or self.engine_last is None:
                    rate = cpu_rate if ej is main else ej.s.get("cpu_cores", 1.6)
                    inv = invol_rate if ej is main else 60
                    since = t - self.engine_read_t if self.engine_last is not None else scrape
                    self.engine_last = ej.sample(t, min(since, 60.0), self.mono0, rate, inv)
                    self.engine_read_t = t
                age = t - self.engine_read_t + 0.02
                if age > max(3.0, 5 * self.tick_s):  # the sampler calls it stale: n/a
                    sources["engine"] = SourceStatus(False, f"slow: last reading {age:.0f}s old")
                else:
                    sources["engine"] = SourceStatus(True, age_s=round(age, 3),
                                                     poll_s=0.012 + 0.01 * rng.random())
                    engine = self.engine_last
        elif s.get("trainer_counter"):
            tj = main
            if getattr(tj, "phase", "") in ("gone", "loading"):
                sources["engine"] = SourceStatus(False, "engine unreachable: <urlopen error [Errno 111] "
                                                 "Connection refused> (retry in 2s)")
            else:
                from gputop.schema import EngineSample
                unit = s["trainer_counter"]
                engine = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                                      generation_tokens_total=round(tj.samples),
                                      requests_finished_total=float(int(tj.steps)), work_unit=unit,
                                      time_wall_s=self.wall0 + t - 0.01, time_mono_s=self.mono0 + t - 0.01,
                                      pids=tuple(range(tj.pid0, tj.pid0 + len(tj.gpus))),
                                      cpu_s=round(self.tree_cpu[jid], 2), ctx_involuntary=self.tree_invol[jid])
                sources["engine"] = SourceStatus(True, age_s=0.01, poll_s=0.003)
        else:
            sources["engine"] = NO_ENGINE
        launch = []
        switches = None
        if ebpf:
            sources["ebpf"] = SourceStatus(True, detail=EBPF_DETAIL, age_s=0.0, poll_s=0.002)
            launcher = main
            n_l = int(launcher.launches)
            launcher.launches = 0.0
            delays = launcher.host_delays
            launcher.host_delays = []
            jit = k.get("host_delay", t, 0.0)
            tail_each = max(0.0004, 3 * jit)
            held = launcher.jitter_s + contention * 0.02 * dt
            launcher.jitter_s = 0.0
            n_tail = int(held / tail_each + rng.random()) + poisson(rng, 0.5 * dt)
            lpid = launcher.pid0 + (3 if isinstance(launcher, ServeJob) else 0)
            is_graph = isinstance(launcher, ServeJob) and launcher.s.get("graphs", True)
            api = "cudaGraphLaunch" if is_graph else "cudaLaunchKernel"
            h = _launch_hist(rng, api, lpid, n_l, 7000 if is_graph else 2600, n_tail,
                             tail_each * 1e9)
            if h:
                launch.append(h)
            if not is_graph:
                h2 = _launch_hist(rng, "cudaStreamSynchronize", lpid, int(max(1, dt * 3)), 3e6, 0, 0)
                if h2:
                    launch.append(h2)
            sw = int((30 + 20 * len(main.gpus)) * dt * (1 + 20 * contention)) + n_tail
            switches = sw
            if sw:
                off = _launch_hist(rng, "off-cpu", lpid, sw, 40000, n_tail, tail_each * 1e9)
                if off:
                    launch.append(off)
            _ = delays
        host = HostSample(cpu_pct=host.cpu_pct, offcpu_switches=switches,
                          cpu_pressure_some_pct=host.cpu_pressure_some_pct, run_queue=host.run_queue,
                          cpus=host.cpus, ctx_switches_total=host.ctx_switches_total)
        return host, pinned, sources, engine, launch


def big_events(t0: float, t1: float, extra_s: float, cpu: float = 0.8) -> list[Ev]:
    """The knobs of an oversized request running from t0 to t1 (the request itself is injected
    by the catalogue's ``inject``)."""
    return [Ev("extra_step", t0, t1, extra_s), Ev("oversized_cpu", t0, t1, cpu),
            Ev("big_done", t1, t1 + 4, 1.0)]
