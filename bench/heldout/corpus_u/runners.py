"""Turn a scenario (load, faults) into gputop frames: serving engines and training jobs."""

from __future__ import annotations

import math

import statistics

from gputop.schema import EngineSample, ProcSample

from .sim import (GPUS, GpuPhys, HostState, ServeSim, Tree, gpu_sample, launch_hist,
                  make_frame, rng_for, sources, uuid_for)

ZERO = lambda t: {}  # noqa: E731


def _lognorm(rng, mean, sigma, lo, hi):
    mu = math.log(mean) - sigma * sigma / 2
    return int(min(hi, max(lo, rng.lognormal(mu, sigma))))


def run_serving(name, *, duration, tick=1.0, start=1.79e9, gpu="H100", engine="vllm",
                model="meta-llama/Llama-3.1-8B-Instruct", tp=1, servers=1, load=None,
                mods=ZERO, events=(), phys=ZERO, host=ZERO, other=ZERO, ebpf=False,
                launch=ZERO, scrape=ZERO, sim_kw=None, cpus=64, spec_on=False,
                sg_spec=None, evictable=0.0, router=False, uptime_h=6.0, server_mods=None,
                server_load=None):
    """One engine (tensor-parallel over ``tp`` GPUs) or ``servers`` independent one-GPU
    engines on one box.  ``load(t)`` -> dict(rate, prompt, out, psig, osig, cached, n);
    ``mods(t)`` -> engine modifiers; ``phys(t)`` -> dict(limit, cooling, slowdown,
    reasons, ambient, rank); ``host(t)`` -> dict(hog=cores, share=launch share);
    ``other(t)`` -> another process on GPU 0: dict(busy, sm, mem, tensor, gpu)."""
    rng = rng_for(name)
    spec = GPUS[gpu]
    kw = dict(sim_kw or {})
    ngpu = tp * servers
    sims = [ServeSim(rng_for(name, f"s{i}"), engine=engine, model=model, gpu=gpu, tp=tp,
                     **kw) for i in range(servers)]
    for s in sims:
        s.evictable_frac = evictable
    physs = [GpuPhys(spec, rng_for(name, f"p{i}")) for i in range(ngpu)]
    hs = HostState(rng_for(name, "host"), cpus)
    sub = 4 if servers == 1 else 2
    dt = tick / sub
    events = sorted(events, key=lambda e: e[0])
    ev_i = 0
    base_pid = int(rng.integers(3000, 60000))
    # process trees
    trees = []
    for si in range(servers):
        p0 = base_pid + si * 400
        procs = [(p0, "python3")] + [(p0 + 30 + r, "VLLM::EngineCor" if r == 0 else f"VLLM::Worker_TP{r}")
                                     for r in range(tp)] if engine == "vllm" else \
            [(p0, "python3")] + [(p0 + 30 + r, f"sglang::schedul" if r == 0 else f"sglang::tp{r}")
                                 for r in range(tp)]
        threads = [(p0, p0, "python3", 0.0), (p0 + 7, p0, "python3", 0.0)]
        for r in range(tp):
            pid = p0 + 30 + r
            threads.append((pid, pid, procs[1 + r][1], 0.0))
            threads.append((pid + 200, pid, "cuda-EvtHandlr", 0.0))
            threads.append((pid + 201, pid, "pt_autograd_0" if False else "python3", 0.0))
        trees.append(Tree(rng_for(name, f"tree{si}"),
                          f"vllm serve {model} --port {8000 + si}" if engine == "vllm" else
                          f"sglang.launch_server --model-path {model} --port {30000 + si}",
                          procs, threads, range(cpus)))
    # warm-up (not recorded), then scale history so the process looks up for hours
    warm = 40.0
    t = -warm
    up_k = uptime_h * 3600 / warm

    def load_for(si, tt):
        if server_load is not None:
            return server_load(si, tt)
        return load(tt)

    def add_arrivals(s, si, tt, h):
        L = load_for(si, tt)
        lam = L.get("rate", 0.0) * h
        k = s.rng.poisson(lam) if lam > 0 else 0
        for _ in range(k):
            p = _lognorm(s.rng, L.get("prompt", 800), L.get("psig", 0.6), 16, L.get("pmax", 30000))
            o = _lognorm(s.rng, L.get("out", 250), L.get("osig", 0.6), 2, L.get("omax", 4000))
            cached = int(p * L.get("cached", 0.0))
            s.arrive(tt + s.rng.uniform(0, h), p, o, n=L.get("n", 1), cached=cached)

    prev_clock = [1.0] * ngpu
    for s in sims:
        s.t = t
    while t < 0:
        for si, s in enumerate(sims):
            add_arrivals(s, si, t, dt)
            s.step(dt, {})
            s.reset_acc()
        t += dt
    for s in sims:
        s.scale_history(up_k)
        for r in s.running + s.waiting:
            pass
    for tr in trees:
        for th in tr.threads.values():
            th[2] = float(tr.rng.uniform(0.1, 0.3)) * uptime_h * 3600 * (
                0.6 if "Engine" in th[1] or "schedul" in th[1] else 0.02)
    frames = []
    n_ticks = int(round(duration / tick))
    mono0 = float(rng.uniform(2e4, 9e5))
    last_eng = [None] * servers
    stale = 0
    mix_hist = [0.0] * servers
    for k in range(n_ticks):
        t = k * tick
        M = mods(t)
        P = phys(t)
        H = host(t)
        O = other(t)
        for s in sims:
            s.reset_acc()
            if M.get("wipe"):
                s.scale_history(0.0)
                s.running.clear()
                s.waiting.clear()
        # rank clock factors from the previous tick's physics
        for step_i in range(sub):
            tt = t + step_i * dt
            while ev_i < len(events) and events[ev_i][0] <= tt + dt:
                et, ekw = events[ev_i]
                target = sims[ekw.pop("server", 0)] if "server" in ekw else sims[0]
                target.arrive(et, **ekw)
                ev_i += 1
            for si, s in enumerate(sims):
                add_arrivals(s, si, tt, dt)
                m = dict(M)
                if server_mods is not None:
                    m.update(server_mods(si, tt))
                if "host_share" in H:
                    m["host_share"] = H["share"] if "share" in H else H["host_share"]
                elif "share" in H:
                    m["host_share"] = H["share"]
                ranks = range(si * tp, si * tp + tp)
                cf = [prev_clock[r] for r in ranks]
                if tp == 1:
                    m["clock"] = min(cf) * m.get("clock", 1.0)
                    m["mem_factor"] = 0.45 + 0.55 * m["clock"]
                else:
                    m["clock"] = max(cf) * m.get("clock", 1.0)
                    m["rank_slow"] = m.get("rank_slow", 1.0) * max(cf) / min(cf)
                if O and O.get("gpu", 0) in ranks and O.get("busy", 0) > 0:
                    # time-slicing: the other context gets its share of every second
                    m["gpu_share"] = max(0.2, 1.0 - O["busy"] * O.get("contend", 0.5))
                mix_hist[si] = s.step(dt, m)
        # ---- GPU readings
        gsamples, procs = [], []
        for si, s in enumerate(sims):
            a = s.acc
            slow_rank = M.get("slow_rank", P.get("rank", None))
            for r in range(tp):
                g = si * tp + r
                busy = min(1.0, (a["busy"]) / tick)
                spin = min(busy, a["spin"] / tick)
                tiny = min(busy, a["tiny"] / tick)
                comp = max(0.0, busy - tiny)
                is_slow = tp > 1 and (slow_rank == r or (slow_rank is None and prev_clock[g] < min(prev_clock[si * tp:(si + 1) * tp]) + 1e-9 and prev_clock[g] < 0.99))
                if tp > 1 and not is_slow:
                    comp = max(0.0, busy - tiny - spin)
                else:
                    spin = 0.0
                sm = comp * (0.80 + 0.12 * mix_hist[si]) + spin * 0.16 + tiny * 0.045
                occ = comp * (0.17 + 0.2 * mix_hist[si]) + spin * 0.03 + tiny * 0.01
                tensor = min(0.92, a["flops"] / (tick * spec["flops"]) * 1.35)
                dram = min(0.96, a["bytes"] / (tick * spec["bw"]))
                if tp > 1 and not is_slow and a["spin"] > 0:
                    pass
                ob = 0.0
                if O and O.get("gpu", 0) == g and O.get("busy", 0) > 0:
                    ob = O["busy"] * O.get("contend", 0.5)
                    sm += ob * O.get("sm", 0.6)
                    tensor += ob * O.get("tensor", 0.3)
                    dram += ob * O.get("dram", 0.2)
                    busy = min(1.0, busy + ob)
                sm = min(busy, sm)
                ph = physs[g]
                if P.get("ambient") is not None and (P.get("rank") in (None, g)):
                    ph.ambient = P["ambient"]
                applies = P.get("gpu") in (None, g)
                power, clock, cf, thr, temp = ph.step(
                    tick, sm, tensor, dram,
                    limit=P.get("limit") if applies else None,
                    cooling=P.get("cooling", 1.0) if applies else 1.0,
                    slowdown=P.get("slowdown") if applies else None,
                    reasons=P.get("reasons", ()) if applies else ())
                prev_clock[g] = cf
                reload_mem = M.get("mem_scale", 1.0)
                used = s.mem_used_engine * reload_mem + 5.2e8
                if O and O.get("gpu", 0) == g:
                    used += O.get("mem", 0)
                gsamples.append(gpu_sample(
                    spec, g, uuid_for(name, g), busy=busy, sm=sm, occ=occ, tensor=tensor,
                    dram=dram, mem_used=used, power=power, clock=clock, throttle=thr,
                    temp=temp, limit=P.get("limit") if applies and P.get("limit") else ph.limit,
                    rng=ph.rng, first=(k == 0),
                    pcie=(80 + 40 * busy, 12 + 8 * busy),
                    nvlink=((900 + 2200 * busy, 900 + 2200 * busy) if tp > 1 else (0.0, 0.0))))
                tr = trees[si]
                pid = tr.procs[1 + r][0]
                if reload_mem > 0.01:
                    procs.append(ProcSample(
                        pid=pid, gpu_index=g, name=tr.procs[1 + r][1],
                        cmdline=("VLLM::EngineCore" if r == 0 else f"VLLM::Worker_TP{r}")
                        if engine == "vllm" else f"sglang::scheduler_TP{r}",
                        user="svc-llm", ppid=tr.procs[0][0], start_time_s=start - uptime_h * 3600,
                        mem_bytes=int(s.mem_used_engine * reload_mem), sm_util_pct=float(round(min(100, (busy - ob) * 100))),
                        cpu_s=None, rss_bytes=int(3.1e9), cgroup=f"/system.slice/llm{si}.service",
                        mem_util_pct=float(round(dram * 82))))
                if O and O.get("gpu", 0) == g and O.get("mem", 0) > 0:
                    procs.append(ProcSample(
                        pid=O.get("pid", 77123), gpu_index=g, name=O.get("pname", "python"),
                        cmdline=O.get("cmd", "python train.py"), user=O.get("user", "alice"),
                        ppid=1, start_time_s=start + O.get("since", 0.0),
                        mem_bytes=int(O["mem"]), sm_util_pct=float(round(ob * 100)),
                        rss_bytes=int(2.2e9), mem_util_pct=float(round(ob * 20))))
        # ---- host and process trees
        hog = H.get("hog", 0.0)
        share = H.get("share", 1.0)
        engine_threads = servers * (1.5 + tp)
        demand = 3.0 + engine_threads + hog
        stall = H.get("stall", min(0.95, max(0.0, (demand - cpus) / max(1.0, demand)) + 0.01))
        hsamp, psi, runq = hs.sample(tick, min(demand, cpus * 1.0) if hog else demand, stall)
        if hog:
            hsamp = type(hsamp)(cpu_pct=min(100.0, round(100 * min(1, demand / cpus), 1)),
                                cpu_pressure_some_pct=hsamp.cpu_pressure_some_pct,
                                run_queue=int(demand + hs.rng.normal(0, 2)), cpus=cpus,
                                ctx_switches_total=hsamp.ctx_switches_total)
            runq = hsamp.run_queue
        for si, s in enumerate(sims):
            a = s.acc
            tr = trees[si]
            launch_rate = min(share, a["host"] / tick)
            rates = {}
            for r in range(tp):
                pid = tr.procs[1 + r][0]
                rates[pid] = launch_rate if r == 0 else min(share, 0.35 + 0.4 * launch_rate)
                rates[pid + 200] = 0.01
                rates[pid + 201] = 0.02
            rates[tr.procs[0][0]] = 0.04 + 0.0015 * (a["steps"] > 0) * len(s.running)
            rates[tr.procs[0][0] + 7] = 0.02 + 0.002 * len(s.waiting) ** 0.5
            invol = 6.0 + (120.0 * (1 - share) * (1 + tp) if share < 1 else 0.0) \
                + H.get("invol", 0.0)
            tr.run(tick, rates, vol_rate=150 + 2.5 * a["steps"] / tick, invol_rate=invol)
        srcs_kw = {}
        # ---- engine scrape
        wall = start + t + tick
        sc = scrape(t)
        eng = None
        if engine:
            samples = []
            for si, s in enumerate(sims):
                s._sg_alpha = M.get("sg_alpha")
                s._sg_len = M.get("sg_len")
                pids = tuple(p for p, _ in trees[si].procs)
                samples.append(s.engine_sample(
                    url=f"http://127.0.0.1:{8000 + si if engine == 'vllm' else 30000 + si}/metrics",
                    pids=pids, gpu_indices=tuple(range(si * tp, si * tp + tp)),
                    time_wall=wall - 0.02, time_mono=mono0 + t + tick - 0.02,
                    cpu=trees[si].engine_cpu(), spec_on=spec_on,
                    replica=(f"worker_addr=http://127.0.0.1:{30000 + si}" if router else "")))
            if router and servers > 1:
                eng = _sum_page(samples, url="http://127.0.0.1:29000/engine_metrics")
            else:
                eng = samples[0]
            if sc.get("down"):
                eng = None
                srcs_kw = dict(engine_ok=False, engine_reason=sc.get("reason", "connection refused"))
                last_eng[0] = None
                stale = 0
            elif sc.get("timeout"):
                stale += 1
                if last_eng[0] is not None and stale * tick <= 3.0:
                    eng = last_eng[0]
                    srcs_kw = dict(age=stale * tick)
                else:
                    eng = None
                    srcs_kw = dict(engine_ok=False, engine_reason="timed out after 2.0 s")
            else:
                stale = 0
                if sc.get("restart_k") is not None:
                    eng = _restarted(eng, sc["restart_k"])
                last_eng[0] = eng
        # ---- eBPF launch histograms
        lh = []
        if ebpf:
            L = launch(t)
            for si, s in enumerate(sims):
                steps = s.acc["steps"]
                pid = trees[si].procs[1][0]
                lh.append(launch_hist("cudaGraphLaunch", pid, steps * (1 - mix_hist[si] * 0.5),
                                      11.0, 0.35, hs.rng, L.get("tail", 0.0), L.get("tail_us", 0.0)))
                lh.append(launch_hist("cudaLaunchKernel", pid, steps * 38, 3.6, 0.3, hs.rng,
                                      L.get("tail", 0.0) * 0.3, L.get("tail_us", 0.0)))
                lh.append(launch_hist("cudaMemcpyAsync", pid, steps * 3, 6.5, 0.4, hs.rng))
            hsamp = type(hsamp)(cpu_pct=hsamp.cpu_pct,
                                offcpu_switches=int(tick * (8 + L.get("offcpu", 0.0)
                                                           + (60 * (1 - share) if share < 1 else 0))),
                                cpu_pressure_some_pct=hsamp.cpu_pressure_some_pct,
                                run_queue=hsamp.run_queue, cpus=cpus,
                                ctx_switches_total=hsamp.ctx_switches_total)
        frames.append(make_frame(
            k, wall, mono0 + t + tick, gpus=gsamples, processes=procs, engine=eng,
            host=hsamp, pinned=trees[0].pinned(psi, runq),
            srcs=sources(ebpf=ebpf, **srcs_kw), launch=lh))
    return frames


def _restarted(eng: EngineSample, k):
    """The engine came back up: its counters restart from what it counted since."""
    import dataclasses
    hs = tuple(dataclasses.replace(h, cumulative=tuple(c * 0 for c in h.cumulative),
                                   count=0.0, sum=0.0) for h in eng.histograms)
    return dataclasses.replace(eng, histograms=hs)


def _sum_page(samples, url):
    import dataclasses
    tot = samples[0]
    fields = ("generation_tokens_total", "prompt_tokens_total", "prompt_tokens_cached_total",
              "requests_finished_total", "requests_running", "requests_waiting",
              "retracted_requests_total", "retracted_input_tokens_total", "kv_used_tokens",
              "kv_free_tokens", "kv_evictable_tokens", "forward_seconds_total", "flops_total",
              "read_bytes_total", "write_bytes_total")
    vals = {}
    for f in fields:
        xs = [getattr(s, f) for s in samples]
        vals[f] = None if any(x is None for x in xs) else float(sum(xs))
    hists = []
    for i, h in enumerate(tot.histograms):
        cum = [sum(col) for col in zip(*[s.histograms[i].cumulative for s in samples])]
        hists.append(dataclasses.replace(h, cumulative=tuple(float(c) for c in cum),
                                         count=float(sum(s.histograms[i].count for s in samples)),
                                         sum=float(sum(s.histograms[i].sum for s in samples))))
    kv = float(statistics.fmean([s.kv_usage_ratio for s in samples]))
    return dataclasses.replace(
        tot, url=url, replica="", replicas=tuple(samples), histograms=tuple(hists),
        kv_usage_ratio=kv, data_parallel=len(samples),
        gpu_indices=tuple(g for s in samples for g in s.gpu_indices),
        pids=tuple(p for s in samples for p in s.pids), cpu_s=None, ctx_involuntary=None,
        busiest_thread_cpu_s=None, busiest_thread="", **vals)


def run_training(name, *, duration, tick=1.0, start=1.79e9, gpu="H100", ranks=1,
                 compute=None, producer=None, workers=8, prefetch=2, allreduce=0.0,
                 batch=32, unit="samples", tokens_per_sample=1, counter=True, ebpf=False,
                 host=ZERO, phys=ZERO, tiny=ZERO, pause=ZERO, cpus=64, kernels=900,
                 uptime_h=3.0, main_cpu_step=0.05, ltail=ZERO):
    """A data-parallel training job.  ``compute(t, r)``: seconds of forward+backward on
    rank r (at full clocks); ``producer(t)``: seconds one DataLoader worker needs per batch;
    ``allreduce``: exposed collective seconds per step; ``tiny(t)``: tiny-kernel seconds
    added per step; ``pause(t)``: seconds of a no-progress phase (eval) this step."""
    rng = rng_for(name)
    spec = GPUS[gpu]
    physs = [GpuPhys(spec, rng_for(name, f"p{i}")) for i in range(ranks)]
    hs = HostState(rng_for(name, "host"), cpus)
    res = 60  # bins per second
    nb = int(duration * res) + res
    comp_b = [[0.0] * nb for _ in range(ranks)]
    spin_b = [[0.0] * nb for _ in range(ranks)]
    tiny_b = [[0.0] * nb for _ in range(ranks)]

    def fill(arr, r, s, e):
        if e <= s:
            return
        i0, i1 = s * res, e * res
        a, b = int(i0), int(i1)
        if a >= nb:
            return
        row = arr[r]
        if a == b:
            row[a] += i1 - i0
            return
        row[a] += (a + 1) - i0
        for i in range(a + 1, min(b, nb)):
            row[i] += 1.0
        if b < nb:
            row[b] += i1 - b
    T = 0.0
    step_ends, step_starts, waits, clocks = [], [], [], [1.0] * ranks
    ready = []
    k = 0
    # simulate steps; clocks come from a first pass of the board physics per second
    pre = [phys(float(s)) for s in range(int(duration) + 2)]
    H = [host(float(s)) for s in range(int(duration) + 2)]
    main_busy = [[0.0] * nb]
    while T < duration:
        ts = int(T)
        P = pre[min(ts, len(pre) - 1)]
        per_worker = producer(T) if producer else 0.0
        # batch k's ready time: workers produce round-robin, each batch takes per_worker s
        if per_worker and workers:
            # the pool makes workers/per_worker batches a second, at most prefetch*workers ahead
            prev = ready[-1] if ready else 0.0
            rk = max(prev + per_worker / workers, T - prefetch * per_worker)
        else:
            rk = T
        ready.append(rk)
        start_k = max(T, rk if per_worker else T)
        waits.append(start_k - T)
        share = H[min(ts, len(H) - 1)].get("share", 1.0)
        cs = []
        for r in range(ranks):
            f = P.get("clock", {}).get(r, 1.0) if isinstance(P.get("clock"), dict) else 1.0
            c = compute(T, r) / f
            c = max(c, kernels * 6e-6 / share)  # launch-bound when the host thread starves

            cs.append(c)
        extra_t = (tiny(T) or 0.0) if tiny else 0.0
        cmax = max(cs)
        ar = allreduce if ranks > 1 else 0.0
        lt = ltail(T) or {}
        # launches blocked on the host: the GPU runs dry between kernels (not busy)
        jit = kernels * 0.6 * lt.get("tail", 0.0) * lt.get("tail_us", 0.0) * 1e-6
        cmax_busy = cmax
        end = start_k + cmax + ar + extra_t + jit
        for r in range(ranks):
            fill(comp_b, r, start_k, start_k + cs[r])
            fill(spin_b, r, start_k + cs[r], start_k + cmax + ar)
            fill(tiny_b, r, start_k + cmax + ar, end - jit)
        fill(main_busy, 0, start_k, start_k + min(cmax, kernels * 6e-6 / share))
        pz = (pause(T) or 0.0) if pause else 0.0
        if pz:
            fill(comp_b, 0, end, end + pz) if ranks == 1 else [fill(comp_b, r, end, end + pz) for r in range(ranks)]
            end += pz
            step_ends.append((end, 0))
        else:
            step_ends.append((end, 1))
        step_starts.append(start_k)
        T = end + 0.0015 / share
        k += 1
    ends = [e for e, _ in step_ends]
    counted = [c for _, c in step_ends]
    diffs = [b - a for a, b in zip(ends, ends[1:])]
    frames = []
    n_ticks = int(round(duration / tick))
    mono0 = float(rng.uniform(2e4, 9e5))
    base_steps = int(uptime_h * 3600 / max(0.05, statistics.median(diffs) if len(ends) > 2 else 1.0))
    p0 = int(rng.integers(3000, 60000))
    procs_t = [(p0 + r * 3, "python3") for r in range(ranks)] + \
        [(p0 + 100 + w, "pt_data_worker") for w in range(workers)]
    threads = []
    for r in range(ranks):
        pid = p0 + r * 3
        threads += [(pid, pid, "python3", 0.0), (pid + 1000, pid, "pt_autograd_0", 0.0),
                    (pid + 1001, pid, "pt_data_pin", 0.0)]
    for w in range(workers):
        threads.append((p0 + 100 + w, p0 + 100 + w, "pt_data_worker", 0.0))
    tree = Tree(rng_for(name, "tree"), f"torchrun --nproc-per-node {ranks} train.py", procs_t,
                threads, range(cpus))
    for th in tree.threads.values():
        th[2] = uptime_h * 3600 * (0.5 if th[1] == "python3" else 0.15 if "worker" in th[1] else 0.1)
    for k_t in range(n_ticks):
        t = k_t * tick
        a, b = int(t * res), int((t + tick) * res)
        gs, procs = [], []
        P = pre[min(int(t), len(pre) - 1)]
        for r in range(ranks):
            c = [min(1.0, x) for x in comp_b[r][a:b]]
            s_ = [min(1.0, x) for x in spin_b[r][a:b]]
            ti = [min(1.0, x) for x in tiny_b[r][a:b]]
            tot = [min(1.0, x + y + z) for x, y, z in zip(c, s_, ti)]
            busy = sum(tot) / len(tot)
            per = max(1, (b - a) // int(6 * tick))
            samples = tuple(float(int(round(100 * sum(tot[i:i + per]) / len(tot[i:i + per]))))
                            for i in range(0, b - a, per))[-int(6 * tick):]
            cm, sm_, tm = sum(c) / len(c), sum(s_) / len(s_), sum(ti) / len(ti)
            sm = cm * 0.88 + sm_ * 0.17 + tm * 0.05
            occ = cm * 0.3 + sm_ * 0.03 + tm * 0.012
            tensor = cm * 0.55
            dram = cm * 0.32 + sm_ * 0.05 + tm * 0.04
            ph = physs[r]
            applies = P.get("gpu") in (None, r)
            if P.get("cooling_gpu") == r:
                ph.ambient = P.get("ambient", ph.ambient)
            power, clock, cf, thr, temp = ph.step(
                tick, sm, tensor, dram, limit=P.get("limit") if applies else None,
                cooling=(P.get("cooling", 1.0) if P.get("cooling_gpu", r) == r else 1.0),
                slowdown=(P.get("slowdown") if applies else None),
                reasons=(P.get("reasons", ()) if applies else ()))
            gs.append(gpu_sample(spec, r, uuid_for(name, r), busy=busy, sm=sm, occ=occ,
                                 tensor=tensor, dram=dram, mem_used=spec["mem"] * 0.78,
                                 power=power, clock=clock, throttle=thr, temp=temp,
                                 limit=P.get("limit") or ph.limit, rng=ph.rng,
                                 samples=samples, first=(k_t == 0),
                                 pcie=(2400 * cm + 30, 60 * cm + 5),
                                 nvlink=((14000 * sm_ + 3000 * cm,) * 2 if ranks > 1 else (0.0, 0.0))))
            procs.append(ProcSample(pid=p0 + r * 3, gpu_index=r, name="python3",
                                    cmdline=f"/opt/venv/bin/python3 -u train.py --local-rank {r}",
                                    user="mlops", ppid=p0 - 1, start_time_s=start - uptime_h * 3600,
                                    mem_bytes=int(spec["mem"] * 0.77),
                                    sm_util_pct=float(round(busy * 100)), rss_bytes=int(9e9),
                                    mem_util_pct=float(round(dram * 82))))
        # host side
        Hh = H[min(int(t), len(H) - 1)]
        share = Hh.get("share", 1.0)
        per_worker = producer(t) if producer else 0.0
        idx = [i for i, e in enumerate(ends) if t <= e < t + tick]
        nsteps = len(idx)
        steps_rate = nsteps / tick
        wrate = 0.0
        if producer:
            wrate = min(1.0, steps_rate * per_worker / max(1, workers) + 0.05)
            if workers and per_worker / workers > statistics.median(diffs[-50:] or [1.0]) * 0.9:
                wrate = 0.98
            wrate = min(wrate, share if Hh.get("workers_starve") else 1.0)
        mb = sum(main_busy[0][a:b]) / max(1, b - a)
        rates = {}
        for r in range(ranks):
            pid = p0 + r * 3
            rates[pid] = min(share, 0.15 + 0.75 * mb + main_cpu_step * steps_rate)
            rates[pid + 1000] = min(share, 0.25 * mb)
            rates[pid + 1001] = 0.02
        for w in range(workers):
            rates[p0 + 100 + w] = wrate
        invol = 8.0 + (300 * (1 - share) if share < 1 else 0.0)
        tree.run(tick, rates, vol_rate=800 + 300 * ranks, invol_rate=invol)
        hog = Hh.get("hog", 0.0)
        demand = 2.0 + ranks * 1.2 + workers * wrate + hog
        stall = min(0.95, max(0.0, (demand - cpus) / max(1.0, demand)) + 0.005)
        hsamp, psi, runq = hs.sample(tick, min(demand, cpus), stall)
        eng = None
        wall = start + t + tick
        if counter:
            done = sum(1 for e, c in zip(ends, counted) if c == 1 and e < t + tick)
            steps_total = base_steps + done
            per_step = batch * ranks * tokens_per_sample
            eng = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                               generation_tokens_total=float(steps_total * per_step),
                               requests_finished_total=float(steps_total),
                               work_unit=unit, pids=tuple(p for p, _ in procs_t),
                               time_mono_s=mono0 + t + tick - 0.01, time_wall_s=wall - 0.01,
                               **tree.engine_cpu())
        lh = []
        if ebpf:
            for r in range(ranks):
                pid = p0 + r * 3
                lt = ltail(t) or {}
                lh.append(launch_hist("cudaLaunchKernel", pid, kernels * 0.6 * nsteps, 4.2, 0.3, hs.rng,
                                      lt.get("tail", 0.0), lt.get("tail_us", 0.0)))
                lh.append(launch_hist("cuLaunchKernel", pid, kernels * 0.4 * nsteps, 3.1, 0.3, hs.rng))
                # the step's sync waits for the device (and for the slowest rank)
                if len(idx):
                    ws = []
                    for i in idx:
                        st = step_starts[i]
                        ws.append((ends[i] - st) * 0.35 * 1e6)
                    med = float(statistics.median(ws))
                    lh.append(launch_hist("cudaStreamSynchronize", pid, 2 * len(idx), med, 0.25, hs.rng))
            hsamp = type(hsamp)(cpu_pct=hsamp.cpu_pct, offcpu_switches=int(10 * tick),
                                cpu_pressure_some_pct=hsamp.cpu_pressure_some_pct,
                                run_queue=hsamp.run_queue, cpus=cpus,
                                ctx_switches_total=hsamp.ctx_switches_total)
        frames.append(make_frame(k_t, wall, mono0 + t + tick, gpus=gs, processes=procs,
                                 engine=eng, host=hsamp, pinned=tree.pinned(psi, runq),
                                 srcs=sources(engine=counter, ebpf=ebpf), launch=lh))
    return frames
