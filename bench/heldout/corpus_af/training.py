"""Training / batch jobs: a synchronous data-parallel step model per trace.

A step on rank i takes compute_i / clock_i; all ranks then meet in the collective, so the
step lasts max_i(compute) + comm; ranks that finish early spin inside the NCCL kernel (busy,
low SM, no tensor).  Batches come from a loader with W workers: if producing one costs more
than a step, the GPUs wait (no kernel).  Checkpoints and evaluation are phases.
"""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from .common import (BOARDS, GiB, GpuState, HostModel, Load, Proc, clamp, launch_hist,
                     make_frame, ramp, rng_for, status)


def _ev(spec, kind, t, i=None):
    s = 0.0
    for ev in spec.get("events", ()):
        k, t0, t1, sev = ev[:4]
        if k != kind:
            continue
        if i is not None and len(ev) > 4 and i not in ev[4]:
            continue
        if spec.get("pulse") and kind == spec["pulse"][0]:
            per, duty = spec["pulse"][1:]
            if ((t - t0) % per) > per * duty:
                continue
        s = max(s, ramp(t, t0, t1, spec.get("rise", 5.0)) * sev)
    return s


def train(spec, start):
    rng = rng_for(spec["name"])
    b = BOARDS[spec["board"]]
    n = spec.get("ngpu", 8)
    dt = spec.get("tick", 1.0)
    cpus = spec.get("cpus", 128)
    host = HostModel(cpus, rng, psi=spec.get("psi", True))
    gs = [GpuState(b, i, rng, inlet_c=spec.get("inlet", 23), power_limit_w=spec.get("plimit"),
                   prof=spec.get("prof", "auto"), uuid_seed=spec["name"][:6],
                   ecc_corr=spec.get("ecc", {}).get(i, 0) if isinstance(spec.get("ecc"), dict) else 0)
          for i in range(n)]
    comp0 = spec["compute_s"]          # per step at full clock
    comm0 = spec.get("comm_s", 0.0)    # exposed collective time per step
    data0 = spec.get("data_s", 0.0)    # CPU seconds to make one batch (all workers together)
    nw = spec.get("workers", 8)
    tens = spec.get("tensor", 0.55)    # tensor activity while computing
    smq = spec.get("smq", 0.9)
    dramq = spec.get("dram", 0.35)
    mem = spec.get("mem_gib", 60) * GiB
    work = spec.get("work_per_step", 4096 * 64)
    unit = spec.get("unit", "tokens")
    launch_gap = spec.get("host_gap_s", 0.0)   # CPU-side time per step when the GPU is idle
    kernels = spec.get("kernels_per_step", 3000)
    job = spec.get("slurm")
    user = spec.get("user", "ds-team")
    base_pid = 10000 + rng.randrange(50000)
    cmd = spec.get("cmd", "python train.py")
    cont = spec.get("container", "")
    cgroup = (f"/system.slice/slurmstepd.scope/job_{job}/step_0" if job else
              spec.get("cgroup", f"/system.slice/docker-{rng.getrandbits(64):016x}.scope"))
    procs = [Proc(base_pid + i * 3, "python", cmd + (f" --local_rank={i}" if n > 1 else ""), user,
                  start - spec.get("uptime", 1800), container=cont or (f"slurm:{job}.0" if job else ""),
                  cgroup=cgroup, slurm_job=str(job or ""), slurm_step="0" if job else "",
                  rss=int(spec.get("rss_gib", 12) * GiB), quota=spec.get("quota"), ppid=base_pid - 5)
             for i in range(n)]
    exporter = spec.get("exporter", True)
    steps_done = spec.get("step0", 1200.0 + rng.randrange(3000))
    work_done = steps_done * work
    mono0 = 5000.0 + rng.uniform(0, 90000)
    frames = []
    phase_acc = 0.0
    ranks = range(n)
    for k in range(int(spec["dur"] / dt)):
        t = k * dt
        tw = start + t + rng.gauss(0, 0.004)
        if rng.random() < 0.005 and k > 2:
            continue
        # clocks: thermal (row cooling fault), power brake, facilities cap, aged board
        for g in gs:
            g.inlet = spec.get("inlet", 23) + _ev(spec, "thermal", t, g.i) * spec.get("inlet_rise", 20)
            g.airflow = 1 - 0.5 * _ev(spec, "fan_fail", t, g.i)
            pb = _ev(spec, "power_brake", t, g.i)
            if pb:
                g.clock_cap, g.cap_reasons = 1 - 0.6 * pb, ("power brake", "hw slowdown")
            elif spec.get("aged") is not None and g.i == spec["aged"]:
                g.clock_cap, g.cap_reasons = spec.get("aged_cap", 0.85), ("hw slowdown",)
            else:
                g.clock_cap, g.cap_reasons = 1.0, ()
            pc = _ev(spec, "power_cap", t)
            if pc:
                g.limit = (spec.get("plimit") or b.tdp_w) * (1 - 0.5 * pc)
        ckpt = _ev(spec, "ckpt", t)
        evalp = _ev(spec, "eval", t)
        intensity = 0.85 * tens / 0.55 if not ckpt else 0.05
        fs = [g.speed(clamp(intensity, 0, 1.1)) for g in gs]
        comp = []
        for i in ranks:
            c = comp0 / (0.35 + 0.65 * fs[i])
            c *= 1 + _ev(spec, "straggler", t, i) * spec.get("strag_factor", 0.4)
            c *= 1 + _ev(spec, "cotenant", t, i) * spec.get("cotenant_slow", 0.7)
            comp.append(c)
        cmax = max(comp)
        comm = comm0 * (1 + _ev(spec, "net_slow", t) * 2)
        # loader: batch production in parallel with compute
        stall = _ev(spec, "loader_stall", t)
        nfs = _ev(spec, "nfs_slow", t)
        starve = _ev(spec, "cpu_starve", t)
        quota_t = _ev(spec, "quota_tight", t)
        cpu_share = 1 - 0.7 * starve - 0.6 * quota_t
        data = data0 * (1 + stall * spec.get("stall_factor", 3)) / max(cpu_share, 0.15)
        io = spec.get("io_s", 0.0) * (1 + nfs * spec.get("nfs_factor", 8))
        produce = (data + io) / nw
        jit = _ev(spec, "launch_jitter", t)
        host_gap = launch_gap / max(cpu_share, 0.15) + jit * spec.get("jitter_s", 0.05)
        tiny = _ev(spec, "tiny", t)
        host_gap += tiny * spec.get("tiny_gap_s", 0.0)
        gpu_step = cmax + comm + host_gap
        T = max(gpu_step, produce)
        wait = T - gpu_step
        if evalp:
            T *= 0.7
        rate = 1.0 / T
        nsteps = (dt / T) * (1 - ckpt)
        steps_done += nsteps
        work_done += nsteps * work * (0.0 if evalp else 1.0)
        loads = []
        for i in ranks:
            ld = Load()
            if ckpt:
                ld.busy, ld.sm, ld.tensor, ld.dram = 0.02 * ckpt, 0.01, 0.0, 0.01
                ld.pcie_mib_s = 1500 * ckpt
            else:
                kern = comp[i] + comm + (cmax - comp[i])  # NCCL spin counts as a kernel
                ld.busy = clamp(kern / T * (1 - tiny * 0.0), 0, 0.995)
                ld.sm = clamp((comp[i] * smq * (1 - 0.7 * tiny) + (cmax - comp[i] + comm) * 0.12) / T, 0, 0.99)
                ld.occ = ld.sm * 0.45
                ld.tensor = clamp(comp[i] * tens * (1 - 0.8 * tiny) * (0.6 if evalp else 1) / T, 0, 0.97)
                ld.dram = clamp(comp[i] * dramq / T + (comm / T) * 0.1, 0, 0.95)
                ld.pcie_mib_s = 200 + 40 * nsteps
                ld.nvlink_mib_s = spec.get("nvlink_gb", 0) * 1024 * nsteps / dt
                ld.burst = 0.25 + 0.6 * (wait / T)
                if _ev(spec, "cotenant", t, i):
                    o = _ev(spec, "cotenant", t, i)
                    ld.busy = clamp(ld.busy + o * 0.5 * (1 - ld.busy), 0, 1)
                    ld.sm = clamp(ld.sm + 0.25 * o, 0, 1)
            loads.append(ld)
        # processes
        other = spec.get("cotenant")
        plist = []
        for i in ranks:
            p = procs[i]
            launch_cpu = clamp((1.0 - tiny * 0.0) * (0.35 + 0.6 * (1 - wait / T)) * cpu_share, 0.05, 1)
            p.run(dt, launch_cpu + (nw * data0 / T / n if i == 0 or spec.get("per_rank_loader", True) else 0),
                  {p.pid: ("python", launch_cpu), p.pid + 1: ("pt_autograd_0", 0.4 * cpu_share)},
                  invol_rate=30 + 5000 * starve + 400 * jit + 2000 * quota_t,
                  demand_cores=(launch_cpu + data0 / T) / max(cpu_share, 0.15))
            plist.append(p.gpu_proc(i, mem * (1.0 - 0.15 * ckpt), sm=loads[i].busy * 85 if not other else None,
                                    mem_util=100 * loads[i].dram))
        if other:
            o_on = any(_ev(spec, "cotenant", t, i) for i in ranks) or other.get("always")
            if o_on:
                for i in other["gpus"]:
                    plist.append(Proc(other["pid"], other["name"], other["cmd"], other.get("user", "analyst"),
                                      start - 900, container=other.get("container", ""),
                                      rss=int(4 * GiB)).gpu_proc(i, int(other["mem_gib"] * GiB)))
        gpus = [g.sample(dt, loads[g.i], sum(p.mem_bytes for p in plist if p.gpu_index == g.i)) for g in gs]
        # host: loader workers + background agents (AV scan, backup, log shipper)
        bg = spec.get("host_bg", 3.0) + starve * spec.get("starve_threads", cpus * 1.5)
        loader_cores = min(n * nw, (data / T) * n) if data0 else 0
        busy_cores = min(cpus, bg + n * 1.2 + loader_cores)
        runnable = bg + n * 1.3 + loader_cores * (1 + 0.0) + (n * nw * 0.2 if nfs else 0)
        offcpu = int(jit * 400 * dt + rng.random() * 4) if spec.get("ebpf") else None
        hs = host.sample(dt, busy_cores, runnable, offcpu)
        es = None
        p0 = procs[0]
        if exporter:
            te = tw - rng.uniform(0.003, 0.03)
            bt, bn = p0.busiest()
            es = EngineSample(kind="trainer", url=f"http://127.0.0.1:{spec.get('port', 9464)}/metrics",
                              model=spec.get("model", ""), generation_tokens_total=float(int(work_done)),
                              requests_finished_total=float(int(steps_done)), work_unit=unit,
                              tensor_parallel=1, data_parallel=n, pids=tuple(p.pid for p in procs),
                              time_mono_s=round(mono0 + t + te - tw, 6), time_wall_s=round(te, 6),
                              cpu_s=round(sum(p.cpu_s for p in procs), 2),
                              ctx_involuntary=sum(p.invol for p in procs),
                              busiest_thread_cpu_s=bt, busiest_thread=bn,
                              cpu_quota_cores=spec.get("quota"),
                              cpu_periods=p0.periods if spec.get("quota") else None,
                              cpu_throttled_periods=p0.throttled if spec.get("quota") else None)
        sources = {"nvml": status(poll=0.003 * n, rng=rng), "host": status(poll=0.001, rng=rng),
                   "procfs": status(detail="/proc", poll=0.0006, rng=rng), "pin": status(poll=0.03, rng=rng)}
        if exporter:
            sources["engine"] = status(poll=0.01, rng=rng)
        if spec.get("prof") == "dcgm":
            sources["dcgm"] = status(detail="http://127.0.0.1:9400/metrics", poll=0.02, rng=rng)
        launches = ()
        if spec.get("ebpf"):
            sources["ebpf"] = status(detail=f"cudaLaunchKernel, cuLaunchKernel in pid {p0.pid}", poll=0.002, rng=rng)
            launches = (launch_hist("cudaLaunchKernel", p0.pid, int(nsteps * kernels), 4.0, 0.3, rng,
                                    tail_frac=0.02 * jit + 0.0003, tail_ms=0.3 + 6 * jit),)
        pinned = p0.pinned(hs, ports=(spec.get("port", 9464),) if exporter else (),
                           cores=tuple(range(spec.get("core0", 0), spec.get("core0", 0) + min(cpus, 64))))
        frames.append(make_frame(len(frames), tw, mono0 + t, gpus, plist, es, hs, pinned, sources, launches))
    return frames
