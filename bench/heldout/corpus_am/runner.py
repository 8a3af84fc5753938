"""Turn a workload simulation into frames, tick by tick, as gputop's collector would."""
from __future__ import annotations

import math
import random

from gputop.schema import Frame, ProcSample

from corpus_am.common import (EPOCH, GiB, SPECS, Acc, Gpu, Host, Tree, launch_hist, proc, psi_inst,
                              seed_of, statuses)
from corpus_am.engines import RENDER, engine_sample, render_trainer


class Ctx:
    """What every trace has: clock, GPUs, host, rng, frame list."""

    def __init__(self, name, gpu, ngpu, tick, dur, *, cpus=None, t_amb=27.0, power_limit=None,
                 r_th=None, base_load=0.8, drop=0.004):
        self.name = name
        if cpus is None:
            cpus = {8: 224, 4: 128, 2: 64}.get(ngpu, 32) if gpu in ('H100', 'H200', 'A100') else {8: 128, 4: 96}.get(ngpu, 32)
        self.rng = random.Random(seed_of(name))
        self.spec = SPECS[gpu]
        self.tick, self.dur = tick, dur
        self.n = int(round(dur / tick))
        self.start = EPOCH + (seed_of(name) % 2_500_000)  # spread over a month
        self.mono0 = 50_000 + seed_of(name) % 900_000
        self.gpus = [Gpu(self.spec, i, self.rng, t_amb=t_amb + self.rng.uniform(-1, 1),
                         power_limit=power_limit, r_th=r_th) for i in range(ngpu)]
        self.host = Host(cpus, self.rng, base_load)
        self.accs = [Acc(0.0, tick, self.n) for _ in range(ngpu)]
        self.frames: list[Frame] = []
        self.drop = drop
        self.pid0 = 1000 + self.rng.randrange(1000, 90000)

    def wall(self, t):
        return self.start + t

    def emit(self, k, gpus, procs, host, pinned, engine, st, launch=()):
        t = (k + 1) * self.tick
        # the odd tick lost (collector busy): skip, keeping seq numbering
        if k > 5 and self.rng.random() < self.drop:
            return
        jit = self.rng.uniform(0.0005, 0.004)
        self.frames.append(Frame(gpus=tuple(gpus), processes=tuple(procs), engine=engine,
                                 launch=tuple(launch), host=host, pinned=pinned, seq=k,
                                 time_wall_s=round(self.wall(t) + jit, 6),
                                 time_mono_s=round(self.mono0 + t + jit, 6), sources=st))


def run_serving(cx: Ctx, sim, *, url, model_name, cfg_labels, scrape=5.0, mem_engine,
                eng_cores=2.2, cset=8, contend=lambda t: 0.0, quota=None, ebpf=False,
                jitter=lambda t: 0.0, cotenant=None, gpu_hook=None, miss=0.01, cmd="",
                container="", pod="", sim_gpus=None, restart=None, fresh_stats=None):
    """sim: serving.Serve whose acc is cx.accs[0]; all TP GPUs mirror its activity.
    cotenant(t) -> None or dict(gpu, busy, sm, ten, dram, mem, pid, name, cmd)."""
    rng = cx.rng
    tp = len(cx.gpus)
    pid = cx.pid0
    pids = [pid] + [pid + 40 + i for i in range(tp)]
    threads = [(pid, pid, "python3"), (pid + 7, pid, "uvicorn-api"), (pid + 40, pid + 40, "VLLM::EngineCore")]
    tree = Tree(cmd[:60] + "…", pid, pids, threads, range(cset), ports=(int(url.split(":")[2].split("/")[0]),),
                quota=quota(0) if quota else None)
    kind = cfg_labels.pop("_kind")

    def share(t):
        d = eng_cores + contend(t)
        s = min(1.0, cset / d) if d > cset else 1.0
        if quota:
            s = min(s, quota(t) / eng_cores)
        return s
    sim.k.cpu_share = share
    stall = jitter
    base_extra = sim.k.host_extra
    # launch stalls stretch each step's host time by the expected stall per launch
    sim.k.host_extra = lambda t: base_extra(t) + (stall(t) * 600e-6 * (sim.c.kernels if not sim.c.graphs else 8))
    last_es, last_scrape = None, -1e9
    start_proc = cx.wall(0) - rng.uniform(3600, 86400 * 3)
    next_scrape = rng.uniform(0, scrape)
    for k in range(cx.n):
        t0, t1 = k * cx.tick, (k + 1) * cx.tick
        l0, g0 = sim.launches, sim.graph_launches
        cpu0 = sim.host_cpu
        sim.clock = min(g.clock_ratio for g in cx.gpus)
        down = restart is not None and restart[0] <= t1 < restart[1]
        if down:
            sim.now = t1
            if sim.running or sim.waiting:
                sim.running, sim.waiting = [], []
                sim.free = sim.c.blocks
            last_es = None
        elif restart is not None and restart[1] <= t1 and sim.st.arrived and fresh_stats is not None:
            if not getattr(sim, "_restarted", False):
                sim._restarted = True
                sim.st = fresh_stats()
                sim._gen_last = (0.0, 0.0)
                pid = pid + 517
                pids = [pid] + [pid + 40 + i for i in range(tp)]
                start_proc = cx.wall(restart[1] - 35)
                tree.root, tree.pids = pid, tuple(pids)
            sim.run_until(t1)
        else:
            sim.run_until(t1)
        sim.rates(cx.tick)
        ct = cotenant(t1) if cotenant else None
        if ct:
            cx.accs[0].add(t0, t1, busy=ct["busy"], sm=ct["sm"], ten=ct.get("ten", 0.0), dram=ct.get("dram", 0.0))
        if gpu_hook:
            gpu_hook(t1, cx.gpus)
        sh = share(t1)
        dt = cx.tick
        sched_cores = min(1.0, (sim.host_cpu - cpu0) / dt)
        api_cores = 0.25 + 0.02 * sim.st.running
        tree.quota = quota(t1) if quota else None
        use = {threads[0]: api_cores * 0.6 * sh, threads[1]: api_cores * 0.4 * sh, threads[2]: sched_cores}
        demand = eng_cores + contend(t1)
        thr = 0.0
        if quota:
            thr = max(0.0, min(1.0, (eng_cores - quota(t1)) / eng_cores * 1.6)) if eng_cores > quota(t1) else 0.02 * rng.random()
        invol = 25 + 3000 * (1 - sh) + 400 * stall(t1)
        tree.run(dt, use, invol * rng.uniform(0.8, 1.2), vol_rate=900 + 30 * sim.st.running, throttled_frac=thr)
        # host: the engine's cpuset is the contended part; the rest of the node is quiet
        psi_extra = psi_inst(demand, cset) * (cset / cx.host.cpus) ** 0.3 if demand > cset * 0.8 else 0.0
        if quota and thr > 0.05:
            psi_extra += 60 * thr
        offcpu = None
        launch = []
        if ebpf:
            nl, ng = sim.launches - l0, sim.graph_launches - g0
            sf = min(0.6, stall(t1) + 0.02 * (1 - sh))
            if ng:
                launch.append(launch_hist("cudaGraphLaunch", pids[1], ng, rng, 9000, 0.3, sf))
            if nl:
                launch.append(launch_hist("cuLaunchKernel", pids[1], int(nl * 0.55), rng, 3200, 0.3, sf))
                launch.append(launch_hist("cudaLaunchKernel", pids[1], int(nl * 0.45), rng, 4100, 0.3, sf))
            offcpu = int(invol * dt * 0.4)
        host = cx.host.step(dt, demand + 0.5, min(demand, cset) + 0.3, extra_psi=psi_extra, offcpu=offcpu)
        gsamp, procs = [], []
        for i, g in enumerate(cx.gpus):
            acc = cx.accs[0]
            mem = (mem_engine if not down else 0) + (ct["mem"] if ct and ct["gpu"] == i else 0)
            gs = g.sample(k, acc, dt, mem)
            gsamp.append(gs)
            own = gs.util_gpu_pct
            if ct and ct["gpu"] == i:
                other = min(100.0, 100 * ct["busy"])
                own = max(0.0, own - other)
                procs.append(proc(ct["pid"], i, ct["name"], ct["cmd"], ct["mem"], other, ct.get("cpu", 1.0) * t1,
                                  ct.get("start", cx.wall(0) - 4000), container=ct.get("container", ""),
                                  pod=ct.get("pod", ""), user=ct.get("user", "ml")))
            if down:
                continue
            procs.append(proc(pids[1 + i] if tp > 1 else pid, i, "python3" if tp == 1 else f"VLLM::Worker_TP{i}",
                              cmd, mem_engine, own, tree.cpu_s / (tp + 1), start_proc, container=container, pod=pod,
                              user="svc-infer"))
        # scrape
        es, age, ok, reason = last_es, None, None, None
        if t1 >= next_scrape:
            next_scrape += scrape
            if down:
                ok, reason = False, "connection refused"
            elif rng.random() < miss:
                ok, reason = False, "timed out after 2.0 s"
            else:
                tw = cx.wall(t1) - rng.uniform(0.005, 0.05)
                text = RENDER[kind](sim.st, model_name, cfg_labels)
                last_es = engine_sample(text, url, pids=pids, t_wall=tw, t_mono=cx.mono0 + t1 - 0.02,
                                        tp=tp, tree=tree, gpus=range(tp))
                last_scrape = t1
                es = last_es
        if ok is None:
            ok = last_es is not None
            age = round(t1 - last_scrape, 3) if ok else None
            if not ok:
                reason = "connection refused"
        st = statuses(rng, engine_ok=ok, engine_reason=reason, engine_age=age, ebpf=ebpf)
        cx.emit(k, gsamp, procs, host, tree.pinned(host.cpu_pressure_some_pct, host.run_queue),
                es if ok else None, st, launch)
    return cx.frames
