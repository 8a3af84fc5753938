"""A trace: GPUs, one workload (a serving engine, a training job or a plain CUDA program), a
host, what gputop's sources read each tick; ``run`` turns it into Frames."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import (Frame, HostSample, PinnedSample, ProcSample, SourceStatus,
                           ThreadSample)

from . import hist as H
from . import train as T
from .hw import SPECS, Act, GpuState, clock_ratio, sample
from .serve import MODELS, Engine, Load

NO_ENGINE = "no engine found (pass --engine URL)"
EBPF_DETAIL = ("full mode; libcudart.so.12: cudaLaunchKernel, cudaLaunchKernelExC, "
               "cudaGraphLaunch, cudaMemcpyAsync, cudaStreamSynchronize; libcuda.so.1: "
               "cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch")


def env(t, a, b, ramp=0.0, on=None):
    """0..1: the cause's strength at t inside [a, b]; ``ramp`` seconds to full strength;
    ``on``: [(start, end)] absolute sub-intervals for a cause that comes and goes."""
    if t < a or t >= b:
        return 0.0
    if on is not None and not any(s <= t < e for s, e in on):
        return 0.0
    if ramp > 0:
        return min(1.0, (t - a) / ramp)
    return 1.0


@dataclass
class Sc:
    name: str
    family: str
    cause: str | None
    gpu: str
    n_gpus: int
    dur: float
    tick: float = 1.0
    window: tuple | None = None
    culprit: tuple | None = None
    note: str = ""
    kind: str = "serve"  # serve | train | cuda
    # serving
    engine: str = ""
    model: str = "llama8b"
    tp: int = 1
    ekw: dict = field(default_factory=dict)
    load: Callable | None = None  # (t, Load) -> None: edits this tick's load
    scrape_s: float = 0.0  # engine scraped every N s (0: every tick)
    down: tuple | None = None  # (a, b): engine restarting
    # training / cuda
    step: Callable | None = None  # (t) -> train.Step
    counter: str = ""  # "tokens" | "samples" | "" (no counter)
    cuda: Callable | None = None  # (t, i) -> activity dict for a plain program
    job_mem: float = 60e9
    # per-GPU: (t, i) -> dict(clock_cap, reasons, power_cap, heat, share, other_mem, other_sm)
    gpu_mod: Callable | None = None
    other_name: str = "python"
    other_cmd: str = "python"
    # host
    cpus: int = 32
    other_cpu: Callable | None = None  # (t) -> runnable threads of other work
    ebpf: bool = False
    jitter: Callable | None = None  # (t) -> (tail_frac, tail_ns) of launch calls delayed
    pinned: bool = False
    proc_sm: bool = True  # per-process SM util (nvmlDeviceGetProcessUtilization) works
    workers: int = 0  # DataLoader worker processes
    worker_need: Callable | None = None  # (t) -> CPU cores each worker wants
    mig: list | None = None


def run(sc: Sc) -> list[Frame]:
    rng = H.rng_for(sc.name)
    spec = SPECS[sc.gpu]
    crc = zlib.crc32(sc.name.encode())
    wall0 = 1.8e9 + (crc % 5_000_000)
    mono0 = 3000.0 + (crc % 100_000) / 10
    gpus = [GpuState(spec, i, temp=33 + rng.random() * 4,
                     uuid=f"GPU-{crc:08x}-{i:04x}-{(crc >> 3) & 0xffff:04x}-a1b2-{i * 7919:012x}",
                     bus=f"00000000:{0x18 + 0x10 * i:02X}:00.0") for i in range(sc.n_gpus)]
    if sc.mig:
        gpus[0].mig = sc.mig
    base_pid = 1000 + crc % 30000
    eng = None
    phase = 0.0
    samples = max(1, int(round(spec.samples_per_s * sc.tick)))

    def new_engine():
        return Engine(sc.engine, MODELS[sc.model], spec, sc.tp, rng,
                      pids=tuple(base_pid + k for k in range(sc.tp + 2)), **sc.ekw)

    if sc.kind == "serve":
        eng = new_engine()
    cpu = dict(cpu_s=812.0 + rng.random() * 50, invol=20000 + int(rng.random() * 5000),
               busy_s=400.0, vol=150000)
    worker_cpu = [50.0 + i for i in range(sc.workers)]
    ctxsw = 10**9 + crc % 10**8
    steps_done, work_done = 0.0, 0.0
    last_eng, last_eng_t = None, -1e9
    gpu_cpu = [30.0 * (i + 1) for i in range(sc.n_gpus)]
    frames = []
    prev_act = [None] * sc.n_gpus
    n_ticks = int(sc.dur / sc.tick)
    restarted = False
    for k in range(n_ticks):
        t = k * sc.tick
        dt = sc.tick
        mods = [sc.gpu_mod(t, i) if sc.gpu_mod else {} for i in range(sc.n_gpus)]
        clock_f = []
        for i, md in enumerate(mods):  # forced clocks, or the power cap's (last tick's load)
            cap = md.get("clock_cap")
            f = 1.0 if cap is None else cap / spec.max_mhz
            prev = prev_act[i]
            if prev is not None:
                prev.power_cap_w = md.get("power_cap")
                f = min(f, clock_ratio(spec, prev)[0])
            clock_f.append(f)
        # ---- host: who wants the CPUs
        other = sc.other_cpu(t) if sc.other_cpu else 2.0 + rng.random()
        w_need = sc.worker_need(t) if sc.worker_need else 0.0
        own = 1.3 + 0.9 * (sc.tp - 1) if sc.kind == "serve" else 1.1 * sc.n_gpus if sc.kind == "train" else 1.0
        own += sc.workers * w_need
        runnable = own + other
        cpu_share = min(1.0, sc.cpus / runnable) if runnable > sc.cpus else 1.0
        tail = sc.jitter(t) if sc.jitter else (0.0, 0.0)
        down = sc.down is not None and sc.down[0] <= t < sc.down[1]
        acts_d: list[dict] = []
        engine_sample = None
        launches = 0.0
        busy_thread_need = 0.9
        if sc.kind == "serve" and not down:
            if sc.down is not None and t >= sc.down[1] and not restarted:
                eng, restarted = new_engine(), True
            ld = Load()
            if sc.load:
                sc.load(t, ld)
            if any(md.get("share") for md in mods):
                ld.rank_share = tuple(md.get("share", 0.0) for md in mods[:sc.tp])
            ld.clock_f = min(clock_f) * ld.clock_f
            t_host = 0.0025 if sc.engine != "llamacpp" else 0.002
            ld.gap_s += t_host * (1 / cpu_share - 1)
            # eBPF-measured launch delays: graph launch + eager kernels held off the CPU
            per_step = 1 if eng.graphs and not ld.eager else 9 * eng.m.layers
            ld.gap_s += tail[0] * tail[1] * 1e-9 * max(3.0, per_step * 0.05)
            out = eng.tick(t, dt, ld)
            eng.account_realtime()
            acts_d = out["acts"]
            launches = eng.last["launches"]
            busy_thread_need = 0.35 + 0.6 * min(1.0, eng.last["busy"] + 0.2) if not eng.last[
                "idle"] else 0.05
        elif sc.kind == "train":
            st = sc.step(t)
            st.host_gap += 0.02 * (1 / cpu_share - 1) * 3 + tail[0] * tail[1] * 1e-9 * 600
            acts_d, steps, phase = T.tick(rng, st, sc.n_gpus, dt, clock_f, phase, samples,
                                          [md.get("share", 0.0) for md in mods])
            steps_done += steps
            work_done += steps * st.tokens
            launches = steps * 2500
        elif sc.kind == "cuda":
            acts_d = [sc.cuda(t, i) for i in range(sc.n_gpus)]
            g = tail[0] * tail[1] * 1e-9 * 2000 + 0.0
            if g:
                for a in acts_d:
                    a["busy"] *= 1 / (1 + g)
                    a["sm"] *= 1 / (1 + g)
                    a["tensor"] = a.get("tensor", 0) / (1 + g)
            launches = sum(a.get("launches", 3000) for a in acts_d[:1])
        # ---- GPUs
        gpu_samples = []
        procs: list[ProcSample] = []
        wall, mono = wall0 + t + rng.uniform(0, 0.004), mono0 + t
        for i, g in enumerate(gpus):
            md = mods[i]
            d = acts_d[i] if i < len(acts_d) else {}
            s_other = md.get("share", 0.0)
            busy = d.get("busy", 0.0) * (1 - s_other) if sc.kind == "cuda" else d.get("busy", 0.0)
            sm, tensor, dram = d.get("sm", 0.0), d.get("tensor", 0.0), d.get("dram", 0.0)
            if sc.kind == "cuda":
                sm, tensor, dram = sm * (1 - s_other), tensor * (1 - s_other), dram * (1 - s_other)
            if s_other:  # the other process's kernels fill its time slices
                busy = min(1.0, busy + s_other)
                sm += s_other * md.get("other_sm", 0.6)
                tensor += s_other * md.get("other_tensor", 0.3)
                dram += s_other * 0.25
            if sc.kind == "serve":
                mem = 0 if (down and t - sc.down[0] > 4) else eng.mem_used
                if down and sc.down[1] - t < 25 and t - sc.down[0] > 4:  # loading weights
                    mem = int(eng.m.weights / sc.tp * min(1.0, (25 - (sc.down[1] - t)) / 20))
            elif sc.kind == "train":
                mem = int(sc.job_mem * (1 + 0.002 * (i % 3)))
            else:
                mem = int(d.get("mem", sc.job_mem))
            mem += int(md.get("other_mem", 0))
            if sc.mig:
                mem = sum(int(m[3]["mem"]) for m in sc.mig)
            if sc.kind == "train" and not acts_d[i].get("nvlink"):
                nv = None
            else:
                nv = (acts_d[i].get("nvlink", 0.0) * 150000 if sc.kind == "train" else
                      (d.get("busy", 0) * 9000 if sc.tp > 1 else 0.0)) if i < len(acts_d) else 0.0
            if sc.n_gpus > 1 and nv is not None and md.get("nvlink_f"):
                nv *= md["nvlink_f"]
            a = Act(busy=busy, sm=sm, tensor=tensor, dram=dram, occ=d.get("occ", sm * 0.25),
                    sub=tuple(min(1.0, v * (1 - s_other) + s_other) for v in d.get("sub", ())),
                    mem_used=mem, clock_cap_mhz=md.get("clock_cap"), reasons=md.get("reasons", ()),
                    power_cap_w=md.get("power_cap"), extra_heat_c=md.get("heat", 0.0),
                    nvlink_mibs=None if sc.n_gpus == 1 else (nv or 0.0) * (1 + rng.gauss(0, 0.02)),
                    has_process=(mem > 0))
            gpu_samples.append(sample(g, a, rng, dt, first=(k == 0)))
            prev_act[i] = a
            # processes on this GPU
            if mem > md.get("other_mem", 0):
                pid = base_pid + 2 + i if sc.kind == "serve" else base_pid + i
                name, cmd = _proc_name(sc, i)
                gpu_cpu[i] += dt * (0.9 if busy > 0.05 else 0.05) * cpu_share
                procs.append(ProcSample(
                    pid=pid, gpu_index=i, name=name, cmdline=cmd, user="svc" if sc.kind == "serve"
                    else "alice", ppid=base_pid, start_time_s=wall0 - 3600 - i,
                    mem_bytes=mem - int(md.get("other_mem", 0)) - 500 * 2**20,
                    sm_util_pct=(float(round(100 * min(1.0, d.get("busy", 0.0) * (1 - s_other))))
                                 if sc.proc_sm else None),
                    cpu_s=round(gpu_cpu[i], 2), rss_bytes=int(6e9 + 1e8 * i),
                    cgroup="/kubepods/burstable/pod7f3e/cri-containerd-4be1" if sc.kind == "serve"
                    else "/user.slice/user-1000.slice/session-4.scope"))
            if md.get("other_mem"):
                procs.append(ProcSample(
                    pid=base_pid + 5000 + i, gpu_index=i, name=sc.other_name, cmdline=sc.other_cmd,
                    user="bob", ppid=base_pid + 4999, start_time_s=wall0 + 30,
                    mem_bytes=int(md["other_mem"]) - 500 * 2**20,
                    sm_util_pct=(float(round(100 * s_other)) if sc.proc_sm else None),
                    cpu_s=round(100 + t * 0.9, 2), rss_bytes=int(3e9)))
        # ---- host sample
        cpu_pct = min(100.0, 100 * min(runnable, sc.cpus) / sc.cpus * (1 + rng.gauss(0, 0.03)))
        if runnable > sc.cpus:
            psi = min(96.0, 100 * (runnable - sc.cpus) / runnable * 1.15 + rng.gauss(0, 2))
        else:
            psi = max(0.0, 100 * 0.03 * runnable / sc.cpus + rng.gauss(0, 0.4))
        rq = max(1, int(round(min(runnable, sc.cpus * 4) + rng.gauss(0, 1.0))))
        ctxsw += int((2500 * sc.cpus * (0.2 + cpu_pct / 100)) * dt)
        offcpu = None
        over = max(0.0, runnable / sc.cpus - 1)
        invol_rate = 40 + 900 * over * own + (tail[0] * launches / dt * 0.5 if sc.jitter else 0)
        cpu["invol"] += int(invol_rate * dt)
        cpu["cpu_s"] += dt * (own - sc.workers * w_need) * (0.8 if sc.kind == "serve" else 1) \
            * cpu_share
        cpu["busy_s"] += dt * min(1.0, busy_thread_need) * cpu_share * (
            1 - (tail[0] * 3 if sc.jitter else 0))
        if sc.ebpf:
            offcpu = int(invol_rate * dt * 0.3)
        host = HostSample(cpu_pct=round(cpu_pct, 1), offcpu_switches=offcpu,
                          cpu_pressure_some_pct=round(max(0.0, psi), 2), run_queue=rq,
                          cpus=sc.cpus, ctx_switches_total=ctxsw)
        # ---- eBPF launch histograms of the launch thread
        launch = ()
        src = {"nvml": SourceStatus(True, age_s=0.0, poll_s=0.004 + rng.random() * 0.003),
               "host": SourceStatus(True, age_s=0.0, poll_s=0.0004)}
        lpid = base_pid + 2 if sc.kind == "serve" else base_pid
        if sc.ebpf:
            hs = []
            frac, tail_ns = tail
            if sc.kind == "serve" and not down:
                st = eng.last["steps"]
                hs.append(H.launch_hist(rng, "cudaGraphLaunch", lpid, int(st), 9000, 0.3,
                                        min(0.6, frac * 2),
                                        tail_ns))
                hs.append(H.launch_hist(rng, "cudaMemcpyAsync", lpid, int(st * 2), 4500, 0.3,
                                        frac, tail_ns))
                if eng.last["P"] or not eng.graphs:
                    hs.append(H.launch_hist(rng, "cuLaunchKernel", lpid,
                                            int(launches * 0.3 + st * 40 * (eng.last["P"] > 0)),
                                            3200, 0.35, frac, tail_ns))
            elif sc.kind != "serve":
                hs.append(H.launch_hist(rng, "cudaLaunchKernel" if sc.kind == "train" else
                                        "cuLaunchKernel", lpid, int(launches * 0.7), 3800, 0.35,
                                        frac, tail_ns))
                if sc.kind == "train":
                    hs.append(H.launch_hist(rng, "cuLaunchKernel", lpid, int(launches * 0.3),
                                            4200, 0.35, frac, tail_ns))
            n_off = int(invol_rate * dt * 0.3) + 20
            hs.append(H.launch_hist(rng, "off-cpu", lpid, n_off, 30000, 0.9,
                                    min(0.9, frac * 30), tail_ns * 1.5))
            launch = tuple(h for h in hs if h is not None)
            src["ebpf"] = SourceStatus(True, detail=EBPF_DETAIL, age_s=0.0, poll_s=0.002)
        # ---- engine / trainer scrape
        if sc.kind == "serve":
            if down:
                src["engine"] = SourceStatus(False, reason="engine unreachable: [Errno 111] "
                                             "Connection refused (retry in 4s)")
                last_eng = None
            elif last_eng is None or t - last_eng_t >= (sc.scrape_s or 0) - 1e-9:
                last_eng = eng.sample(mono + 0.02, wall + 0.02, range(sc.n_gpus), dict(
                    cpu_s=round(cpu["cpu_s"], 2), invol=cpu["invol"],
                    busy_s=round(cpu["busy_s"], 2), busy_name=f"{base_pid + 2} " + _thread(sc)))
                last_eng_t = t
                src["engine"] = SourceStatus(True, age_s=0.0, poll_s=0.02 + rng.random() * 0.02)
            else:
                src["engine"] = SourceStatus(True, age_s=round(t - last_eng_t, 3), poll_s=0.03)
            engine_sample = last_eng
        elif sc.counter:
            from gputop.schema import EngineSample
            if last_eng is None or t - last_eng_t >= (sc.scrape_s or 0) - 1e-9:
                last_eng = EngineSample(
                    kind="trainer", url="http://127.0.0.1:9400/metrics", model="",
                    generation_tokens_total=float(int(work_done)),
                    requests_finished_total=float(int(steps_done)), work_unit=sc.counter,
                    time_mono_s=mono + 0.01, time_wall_s=wall + 0.01,
                    pids=tuple(base_pid + i for i in range(sc.n_gpus)),
                    gpu_indices=tuple(range(sc.n_gpus)), cpu_s=round(cpu["cpu_s"], 2),
                    ctx_involuntary=cpu["invol"], busiest_thread_cpu_s=round(cpu["busy_s"], 2),
                    busiest_thread=f"{base_pid} python")
                last_eng_t = t
                src["engine"] = SourceStatus(True, age_s=0.0, poll_s=0.01)
            else:
                src["engine"] = SourceStatus(True, age_s=round(t - last_eng_t, 3), poll_s=0.01)
            engine_sample = last_eng
        else:
            src["engine"] = SourceStatus(False, reason=NO_ENGINE)
        # ---- the pinned tree
        pinned = None
        if sc.pinned:
            for w in range(sc.workers):
                worker_cpu[w] += dt * min(1.0, w_need) * cpu_share
            threads = [ThreadSample(base_pid, base_pid, "python", round(cpu["busy_s"], 2))]
            threads += [ThreadSample(base_pid + 100 + w, base_pid + 100 + w, "pt_data_worker",
                                     round(worker_cpu[w], 2)) for w in range(sc.workers)]
            threads.sort(key=lambda th: -th.cpu_s)
            pinned = PinnedSample(
                label="python train.py" if sc.kind != "serve" else sc.engine,
                pattern="train.py" if sc.kind != "serve" else sc.engine,
                root_pids=(base_pid,), tree_pids=tuple([base_pid + i for i in range(sc.n_gpus)]
                                                       + [base_pid + 100 + w for w in
                                                          range(sc.workers)]),
                cpu_s=round(cpu["cpu_s"] + sum(worker_cpu), 2), ctx_voluntary=cpu["vol"] + k * 900,
                ctx_involuntary=cpu["invol"], threads=tuple(threads[:8]),
                cores=tuple(range(sc.cpus)), cpu_pressure_some_pct=host.cpu_pressure_some_pct,
                run_queue=rq, listening_ports=(29500,) if sc.n_gpus > 1 else ())
            src["pin"] = SourceStatus(True, age_s=0.0, poll_s=0.001)
        frames.append(Frame(gpus=tuple(gpu_samples), processes=tuple(procs), engine=engine_sample,
                            launch=launch, host=host, pinned=pinned, seq=k, time_wall_s=wall,
                            time_mono_s=mono, sources=src))
    return frames


def _thread(sc):
    return {"vllm": "VLLM::EngineCore", "sglang": "sglang::schedul", "llamacpp": "llama-server"
            }.get(sc.engine, "python")


def _proc_name(sc, i):
    if sc.kind == "serve":
        if sc.engine == "vllm":
            n = "VLLM::EngineCore" if sc.tp == 1 else f"VLLM::Worker_TP{i}"
            return n, f"vllm serve {MODELS[sc.model].name} --tensor-parallel-size {sc.tp}"
        if sc.engine == "sglang":
            return (f"sglang::scheduler_TP{i}",
                    f"python -m sglang.launch_server --model-path {MODELS[sc.model].name} --tp {sc.tp}")
        return "llama-server", f"llama-server -m /models/{MODELS[sc.model].name} -c 32768 -np 4 --metrics"
    if sc.kind == "train":
        return "python", ("torchrun --nproc-per-node %d train.py" % sc.n_gpus if sc.n_gpus > 1
                          else "python train.py --lora")
    return "python", "python bench.py"
