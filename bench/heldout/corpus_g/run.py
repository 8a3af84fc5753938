"""Tick loops: a serving engine (or two) or a training job through time, into Frames."""

from __future__ import annotations

from . import frames as F
from .hw import Act, mig_samples

GIB = 2**30


def _launches(pid, steps, kernels, graphs, jit, rng, syncs=0, sync_ms=0.0, invol=0.0, dt=1.0):
    out = []
    dfrac, dus = jit
    if graphs:
        out.append(F.launch_hist("cudaGraphLaunch", pid, steps, 9.0, rng, 0.3, dfrac, dus))
        out.append(F.launch_hist("cudaLaunchKernel", pid, steps * 18, 3.2, rng, 0.35, dfrac, dus))
    else:
        out.append(F.launch_hist("cudaLaunchKernel", pid, steps * kernels * 0.65, 3.4, rng, 0.4, dfrac, dus))
        out.append(F.launch_hist("cuLaunchKernel", pid, steps * kernels * 0.35, 4.1, rng, 0.4, dfrac, dus))
    out.append(F.launch_hist("cudaMemcpyAsync", pid, steps * 3, 6.5, rng, 0.5, dfrac, dus))
    if syncs:
        out.append(F.launch_hist("cudaStreamSynchronize", pid, syncs, sync_ms * 1000, rng, 0.5))
    n_off = invol * dt
    if n_off > 0:
        out.append(F.launch_hist("off-cpu", pid, n_off, 60.0 if not dfrac else max(60.0, dus * 0.8),
                                 rng, 0.8, 0.05, 600.0))
    return out


def run_serving(svs, n_ticks, tick, rng, start_wall, *, ebpf=False, host_busy=None, runnable_extra=None,
                pinned=False, mig=None):
    """Frames of one engine (``svs[0]``, the one gputop scrapes) and any others on other GPUs."""
    out = []
    main = svs[0]
    cpus = main.cpus
    host = F.Host(cpus, rng)
    neighbors = {}
    mono0 = 5000.0 + rng.random() * 90000
    for i in range(n_ticks):
        t = i * tick
        wall, mono = start_wall + t, mono0 + t
        gpus, procs, launch = [], [], []
        busy_cores = 0.6 + (host_busy(t) if host_busy else 0.0)
        runnable = busy_cores + (runnable_extra(t) if runnable_extra else 0.0)
        for sv in svs:
            acts = sv.tick(t)
            cn = sv.cpu_now
            busy_cores += cn["main"] + cn["workers"] + cn["api"]
            runnable += cn["main"] + cn["workers"] + cn["api"] + (1 - cn["cpu"]) * 3
            for g, b in enumerate(sv.boards):
                nb = sv.h.neighbor(t, g) if sv.h.neighbor else None
                if sv.state == "stopped":
                    mem = 0
                elif sv.state == "loading":
                    mem = int(min(sv.w, sv.w * ((t % 90) / 40.0 + 0.2))) + GIB // 2
                else:
                    mem = sv.engine_mem
                used = mem + (int(nb[1]) if nb else 0) + (int(0.46 * GIB) if mem else 0)
                gpus.append(b.sample(acts[g], tick, i == 0, used))
                if mem:
                    duty = acts[g].duty * (1 - (nb[0] if nb else 0))
                    procs.append(sv.procs[g].sample(mem, 100 * duty, cn["workers"] / max(1, sv.tp) if sv.tp > 1 else cn["main"], tick))
                if nb:
                    key = (id(sv), g, nb[2])
                    if key not in neighbors:
                        name, _, cmd = nb[2].partition("|")
                        neighbors[key] = F.Proc(30000 + int(rng.random() * 20000), b.index, name,
                                                cmd or name, start_wall + t - 3, user="alice")
                    procs.append(neighbors[key].sample(int(nb[1]), 100 * nb[0], 0.9 if nb[0] else 0.05, tick))
                    busy_cores += 0.9 if nb[0] else 0.0
            if ebpf and sv.state == "up":
                pid = sv.procs[0].pid if sv.tp == 1 else sv.procs[0].pid
                inv = 120 + (1 - cn["cpu"]) * 5200 + cn["jit"][0] * 2500
                launch += _launches(pid, cn["steps"], cn["kernels"], not sv.eager, cn["jit"], rng,
                                    invol=inv, dt=tick)
        hs = host.sample(busy_cores, runnable, tick)
        if ebpf:
            hs = F.HostSample(hs.cpu_pct, int(120 * tick + sum(x.count for x in launch if x and x.api == "off-cpu")),
                              hs.cpu_pressure_some_pct, hs.run_queue, hs.cpus, hs.ctx_switches_total)
        if main.state == "up":
            eng = main.engine_sample(wall, mono)
            src = F.sources(True, ebpf=ebpf, ngpu=len(gpus), rng=rng)
        else:
            eng = None
            src = F.sources(False, "engine unreachable: [Errno 111] Connection refused (retry in 4s)",
                            ebpf=ebpf, ngpu=len(gpus), rng=rng)
        out.append(F.frame(i, wall, mono, gpus, procs, eng, launch, hs, None, src))
    return out


def run_training(tr, n_ticks, tick, rng, start_wall, *, counter=None, pinned=True, ebpf=False,
                 workers=6, loader_cost=0.0, cmd="torchrun --nproc-per-node {n} train.py",
                 cpus=96, proc_name="python3", extra_gpu=None):
    """Frames of a training job / CUDA program.  ``counter``: "tokens" | "samples" | None
    (its own Prometheus counter, read with --engine); ``pinned``: the user pinned its tree."""
    out = []
    n = tr.n
    host = F.Host(cpus, rng)
    base = 4000 + int(rng.random() * 40000)
    ranks = [F.Proc(base + 1 + g, b.index, proc_name, cmd.format(n=n), start_wall - 3600, user="ml",
                    ppid=base) for g, b in enumerate(tr.boards)]
    tree = F.Tree(f"{base + 1} {proc_name}", rng)
    mono0 = 3000.0 + rng.random() * 50000
    tree_pids = [base] + [p.pid for p in ranks] + [base + 100 + k for k in range(workers * n)]
    extra_procs = {}
    for i in range(n_ticks):
        t = i * tick
        wall, mono = start_wall + t, mono0 + t
        acts = tr.tick(t)
        h = tr.h
        phase = tr.phase_now
        gpus, procs, launch = [], [], []
        cn = getattr(tr, "cpu_now", {"cpu": 1.0, "jit": (0, 0), "steps": 0, "launches": 0})
        cpu = cn["cpu"] if phase not in ("done", "checkpoint", "start") else 1.0
        loader = (h.loader_cores(t) if h.loader_cores else loader_cost * n) if phase in ("train", "tiny") else 0.2
        main_cores = (0.92 * n if phase not in ("done",) else 0.0) * cpu
        if phase == "checkpoint":
            main_cores = 1.0 + 0.3 * n
        if phase == "done":
            loader = 0.0
        other = h.host_busy(t) if h.host_busy else 0.0
        busy = 0.8 + main_cores + loader + other
        runnable = busy + (1 - cpu) * 6 * n
        for g, b in enumerate(tr.boards):
            nb = h.neighbor(t, g) if h.neighbor else None
            mem = 0 if phase == "done" else (tr.mem[g] if phase != "start" else int(tr.mem[g] * 0.3))
            used = mem + (int(nb[1]) if nb else 0) + (int(0.42 * GIB) if mem else 0)
            ex = extra_gpu(t, g) if extra_gpu else None
            if ex:
                used += int(ex[1])
            gpus.append(b.sample(acts[g], tick, i == 0, used))
            if mem:
                procs.append(ranks[g].sample(mem, 100 * acts[g].duty * (1 - (nb[0] if nb else 0)), main_cores / n, tick))
            for extra in (nb, ex):
                if extra:
                    key = (g, extra[2])
                    if key not in extra_procs:
                        name, _, c = extra[2].partition("|")
                        extra_procs[key] = F.Proc(50000 + int(rng.random() * 9000), b.index, name, c or name,
                                                  start_wall + t - 5, user="bob")
                    procs.append(extra_procs[key].sample(int(extra[1]), 100 * extra[0], 0.8 if extra[0] else 0.02, tick))
                    busy += 0.8 if extra[0] else 0.0
        invol = (90 + 30 * n) * (1 if cpu >= 1 else 1) + (1 - cpu) * 3000 * n + cn["jit"][0] * 2000 * n \
            + loader * 40
        tree.advance(main_cores + loader, 0.95 * cpu if phase not in ("done",) else 0.0, invol, tick, rng)
        if ebpf and phase not in ("done",):
            st = tr.step_now
            syncs = int(cn["steps"] * 2)
            launch += _launches(ranks[0].pid, cn["steps"], tr.launches_per_step, False, cn["jit"], rng,
                                syncs=syncs, sync_ms=(st or 0.2) * 300, invol=invol / n, dt=tick)
        hs = host.sample(busy, runnable, tick)
        if ebpf:
            hs = F.HostSample(hs.cpu_pct, int(sum(x.count for x in launch if x and x.api == "off-cpu")),
                              hs.cpu_pressure_some_pct, hs.run_queue, hs.cpus, hs.ctx_switches_total)
        pin = None
        if pinned:
            pin = tree.pinned(cmd.format(n=n)[:60], [base], tree_pids if phase != "done" else [base], cpus,
                              hs.cpu_pressure_some_pct, hs.run_queue)
        eng = None
        if counter:
            from gputop.schema import EngineSample
            eng = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                               generation_tokens_total=float(int(tr.progress)),
                               requests_finished_total=float(int(tr.steps)), work_unit=counter,
                               pids=tuple(tree_pids), time_mono_s=mono + 0.004, time_wall_s=wall + 0.004,
                               cpu_s=round(tree.cpu_s, 2), ctx_involuntary=tree.invol,
                               busiest_thread_cpu_s=round(tree.busy_s, 2), busiest_thread=tree.busiest)
        src = F.sources(True if counter else None, ebpf=ebpf, ngpu=n, rng=rng)
        out.append(F.frame(i, wall, mono, gpus, procs, eng, launch, hs, pin, src))
    return out


def run_mig(board, parts_fn, n_ticks, tick, rng, start_wall, tenants):
    """An H100 in MIG mode: instances of several tenants, each with its own work.
    ``parts_fn(t)`` -> [(profile, total, used, sms, Act)]; ``tenants``: a Proc per instance."""
    out = []
    host = F.Host(128, rng)
    mono0 = 10000.0
    for i in range(n_ticks):
        t = i * tick
        parts = parts_fn(t)
        total_sm = sum(p[3] for p in parts)
        duty = sum(p[4].duty * p[3] for p in parts) / 132
        agg = Act(min(1.0, duty * 1.0), sum(p[4].sm * p[3] * p[4].duty for p in parts) / max(1e-9, total_sm * max(duty, 1e-9)) * total_sm / 132,
                  0.3, sum(p[4].dram * p[4].duty * p[3] for p in parts) / 132 / max(duty, 1e-9),
                  sum(p[4].tensor * p[4].duty * p[3] for p in parts) / 132 / max(duty, 1e-9))
        agg.sm = min(0.99, agg.sm)
        board.clock_for(agg)
        migs = mig_samples(board.spec, parts, i == 0, rng)
        used = sum(p[2] for p in parts)
        g = board.sample(agg, tick, i == 0, used, mig=migs)
        procs = [tenants[k].sample(parts[k][2] - 200 * 2**20, None, 0.9 * parts[k][4].duty + 0.05, tick)
                 for k in range(len(parts)) if parts[k][2] > 1 * GIB]
        hs = host.sample(3 + 0.9 * len(procs), 3 + len(procs), tick)
        out.append(F.frame(i, start_wall + t, mono0 + t, [g], procs, None, [], hs, None,
                           F.sources(None, ngpu=1, rng=rng)))
    return out
