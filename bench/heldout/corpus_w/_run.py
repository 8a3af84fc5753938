"""Turn simulators into frames: the serving loop, the trainer loop, plain CUDA jobs."""

from __future__ import annotations

import math

from gputop.schema import EngineSample

from ._core import (GIB, GpuState, Host, Tree, launch_hists, make_frame, poisson, proc, rng_for,
                    sources)
from ._serve import DEFAULT_KNOBS, ServeSim

NCCL_SM = 9.0  # NCCL's spinning channels keep a handful of SMs resident while a rank waits


def serve_frames(sim: ServeSim, T: float, dt: float, knobs, start_wall: float, *,
                 others=None, truth_log=None, pstate_jitter=(), ticks=None):
    """``knobs(t)`` -> overrides of DEFAULT_KNOBS; ``others(t, gpu)`` -> extra processes
    [(pid, name, cmd, mem, sm_share, busy, sm, ten, dram, cpu_s)] on a GPU."""
    rng = rng_for(sim.name, "frames")
    frames = []
    mono0 = rng.uniform(20000, 900000)
    sim.start_time = start_wall - rng.uniform(3600, 86400 * 3)
    t, seq = 0.0, 0
    reload_state = None
    times = ticks or []
    if not times:
        while t < T - 1e-9:
            times.append(t)
            t += dt
    prev_t = -dt
    for t in times:
        step_dt = t - prev_t
        prev_t = t
        k = dict(DEFAULT_KNOBS)
        k.update(knobs(t))
        L = sim.tick(t, step_dt, k)
        down = k["down"]
        rank_clock = k.get("rank_clock") or {}
        rank_all = {**rank_clock, **(k.get("rank_work") or {})}
        cmin = min([1.0] + list(rank_all.values()))
        gpus = []
        procs = []
        for g in sim.gpus:
            i = g.index
            if i in sim.gpu_indices and not down:
                busy, sm, occ, ten, dram = sim.gpu_activity(k)
                own = rank_all.get(i, 1.0)
                if rank_all and busy > 0:
                    # a rank waits in the collective for the slowest one
                    share = (L["cmp_p"] + L["mem_p"]) / max(1e-6, L["tg"])
                    work = min(1.0, cmin / own) if own > cmin else 1.0
                    wait = 1 - work
                    sm = sm * work + NCCL_SM * wait
                    ten, dram = ten * work, dram * work + 2.0 * wait
                    occ = occ * work + 1.5 * wait
                    busy = min(0.995, busy + 0.02)
                mem_used = sim.mem_used + 520 * 2**20
                if k["reload"] > 0:
                    mem_used = int(0.55 * GIB + (sim.mem_used - 0.55 * GIB) * k["reload"])
                    busy = sm = occ = ten = dram = 0.0
                clock_cap = k["clock_cap"] if i in k.get("cap_gpus", sim.gpu_indices) else None
                if i in rank_clock:
                    clock_cap = g.spec["clock"] * rank_clock[i]
                thr = k["throttle"] if i in k.get("cap_gpus", sim.gpu_indices) else ()
                if i in rank_clock and k.get("rank_reason"):
                    thr = k["rank_reason"]
                oth = others(t, i) if others else []
                o_busy = sum(o[5] for o in oth)
                o_sm = sum(o[6] for o in oth)
                o_ten = sum(o[7] for o in oth)
                o_dram = sum(o[8] for o in oth)
                tot_busy = min(1.0, busy + o_busy)
                s = g.sample(step_dt, tot_busy, min(99.5, sm + o_sm), occ, min(99, ten + o_ten),
                             min(99, dram + o_dram), mem_used + sum(o[3] for o in oth),
                             clock_cap=clock_cap, throttle=thr,
                             power_limit=k["power_limit"], temp_boost=k["temp_boost"] if i in k.get("cap_gpus", sim.gpu_indices) else 0.0,
                             fan_pct=k["fan"], jitter_pstate=(k["jitter"] or (seq in pstate_jitter)),
                             nvlink_mib=(busy * 9000.0 if sim.tp > 1 else 0.0),
                             pcie_mib=busy * 40 + 3)
                gpus.append(s)
                wp = sim.worker_pids[sim.gpu_indices.index(i)]
                own_sm = busy * 100
                if oth:  # NVML per-process SM: the time slices the driver gave each context
                    tot = busy + o_busy
                    own_sm = 100 * busy / max(tot, 1e-6) * min(1, tot)
                procs.append(proc(wp, i, "python3" if sim.engine != "llamacpp" else "llama-server",
                                  sim.cmd if sim.tp == 1 else f"{sim.cmd} (worker {i})", mem_used,
                                  own_sm, sim.tree.cpu_s / max(1, sim.tp), sim.start_time,
                                  int(6 * GIB + sim.params_b * 0.05 * GIB), ppid=sim.api_pid,
                                  container=sim.container,
                                  mem_util=dram * 1.0))
                for o in oth:
                    procs.append(proc(o[0], i, o[1], o[2], o[3],
                                      100 * o[5] / max(busy + o_busy, 1e-6) * min(1, busy + o_busy),
                                      o[9], start_wall - 4000, int(3 * GIB), user="research"))
            elif i in sim.gpu_indices:  # engine down: VRAM released, nothing running
                s = g.sample(step_dt, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
                gpus.append(s)
            else:
                oth = others(t, i) if others else []
                busy = sum(o[5] for o in oth)
                s = g.sample(step_dt, busy, sum(o[6] for o in oth), sum(o[6] for o in oth) * 0.3,
                             sum(o[7] for o in oth), sum(o[8] for o in oth),
                             sum(o[3] for o in oth) or 0, jitter_pstate=k["jitter"])
                gpus.append(s)
                for o in oth:
                    procs.append(proc(o[0], i, o[1], o[2], o[3], o[5] * 100, o[9],
                                      start_wall - 7200, int(4 * GIB)))
        # host / tree
        if L is None:
            core_rate = 0.01
            req_rate = 0.0
        else:
            core_rate = min(k["cpu_share"], max(0.03, L["th"] * k["cpu_share"] / L["step"]))
            if L["Bd"] == 0 and L["pending"] == 0:
                core_rate = 0.03
            req_rate = k["rate"]
        rates = {"python3": 0.04 + 0.012 * req_rate, "uvloop": 0.02 + 0.01 * req_rate,
                 "detok": 0.01 + 0.004 * (L["tokens"] / step_dt if L else 0) / 100,
                 "VLLM::EngineCor": core_rate, "sglang::schedul": core_rate,
                 "llama-server": core_rate, "pt_main_thread": 0.02, "cuda-EvtHandlr": 0.004,
                 "llama-srv-http": 0.01 + 0.01 * req_rate}
        for i in range(sim.tp):
            rates[f"VllmWorker-{i}"] = min(k["cpu_share"], 0.55 if L and L["Bd"] else 0.02)
            rates[f"sglang::TP{i}"] = rates[f"VllmWorker-{i}"]
        throttled = 0.97 if k["quota"] is not None else 0.0
        sim.tree.run(step_dt, rates, vol_rate=(300 + 10 * (L["steps"] / step_dt if L else 0)),
                     inv_rate=k["inv_rate"], quota=k["quota"], throttled_frac=throttled)
        tree_rate = sum(rates.get(th.name, 0.002) for th in sim.tree.threads)
        runnable = k["runnable"] if k["runnable"] is not None else 2 + tree_rate + rng.uniform(0, 2)
        hs, psi, rq = sim.host.step(step_dt, sim.host.base + tree_rate + k.get("noisy_cores", 0.0),
                                    runnable, k["psi"], 9000 + 400 * runnable)
        pinned = sim.tree.pinned(psi, max(1, rq + rng.choice([-1, 0, 0, 1])))
        launch = ()
        if sim.ebpf and L is not None:
            steps_s = L["steps"] / step_dt if L["Bd"] or L["pending"] else 0
            calls = {"cudaGraphLaunch": steps_s * sim.tp, "cudaLaunchKernel": steps_s * 24,
                     "cudaMemcpyAsync": steps_s * 3, "cuLaunchKernel": steps_s * 6}
            launch = launch_hists(rng, sim.core_pid, step_dt, calls,
                                  stalled_frac=k.get("launch_stall", 0.0),
                                  stall_ms=k.get("launch_stall_ms", 3.0))
            hs = type(hs)(**{**{f: getattr(hs, f) for f in hs.__slots__},
                             "offcpu_switches": poisson(rng, k["inv_rate"] * step_dt * 0.8)})
        # engine scrape
        wall = start_wall + t
        eng = None
        ok = True
        reason = ""
        if down:
            ok, reason = False, "connection refused"
        elif rng.random() < sim.scrape_miss or k.get("scrape_slow", 0) > rng.random():
            ok, reason = False, "timed out after 1.0 s"
        else:
            eng = engine_sample(sim, k, wall, mono0 + t, L)
        frames.append(make_frame(seq, wall, mono0 + t, gpus=tuple(gpus), processes=tuple(procs),
                                 engine=eng, launch=launch, host=hs, pinned=pinned,
                                 sources=sources(ok, reason, ebpf=sim.ebpf)))
        if truth_log is not None:
            truth_log.append(dict(t=t, dt=step_dt, tokens=(L["tokens"] if L else 0.0),
                                  itl=(L["base_itl"] if L else None), ttfts=(L["ttfts"] if L else []),
                                  util=gpus[sim.gpu_indices[0]].util_gpu_pct if gpus else None,
                                  sm=gpus[sim.gpu_indices[0]].sm_active_pct,
                                  waiting=len(sim.waiting), cpu=sim.tree.cpu_s,
                                  itl_p99=_p99_itl(L)))
        seq += 1
    return frames


def _p99_itl(L):
    if not L or not L["Bd"]:
        return None
    v = L["base_itl"] * 1.32
    if L["f_pf"] > 0.01:
        v = max(v, L["tg"] / L["per_step"])
    return v


def engine_sample(sim: ServeSim, k, wall, mono, L) -> EngineSample:
    c = sim.c
    run = float(sum(q.n for q in sim.running))
    wait = float(sum(q.n for q in sim.waiting))
    kv = min(1.0, sim.kv_used / sim.pool_tokens) if L is not None else 0.0
    hists = tuple(h.sample() for h in sim.h.values())
    tree = sim.tree
    bt = tree.busiest()
    common = dict(url=f"http://127.0.0.1:{sim.port}/metrics", model=sim.model,
                  requests_running=run, requests_waiting=wait,
                  tensor_parallel=sim.tp, data_parallel=1, gpu_indices=sim.gpu_indices,
                  pids=tree.pids, time_mono_s=round(mono + 0.02, 6), time_wall_s=round(wall + 0.02, 6),
                  cpu_s=round(tree.cpu_s, 2), ctx_involuntary=tree.inv,
                  busiest_thread_cpu_s=round(bt.cpu_s, 2), busiest_thread=f"{bt.tid} {bt.name}",
                  cpu_quota_cores=tree.quota,
                  cpu_periods=tree.periods if tree.quota is not None else None,
                  cpu_throttled_periods=tree.throttled if tree.quota is not None else None,
                  weights_bytes=int(sim.weights))
    if sim.engine == "vllm":
        spec = {}
        if sim.spec_k:
            spec = dict(spec_drafts_total=round(c["drafts"]), spec_draft_tokens_total=round(c["dtok"]),
                        spec_accepted_tokens_total=round(c["acc"]))
        return EngineSample(
            kind="vllm", generation_tokens_total=float(round(c["gen"])),
            prompt_tokens_total=float(round(c["prompt"])),
            prompt_tokens_cached_total=float(round(c["cached"])),
            requests_finished_total=float(round(c["fin"])), kv_usage_ratio=round(kv, 6),
            num_gpu_blocks=sim.num_blocks, block_size=sim.block,
            kv_pool_tokens=sim.pool_tokens, cache_dtype="auto", histograms=hists,
            preemptions_total=float(c["pre"]),
            waiting_by_reason={"capacity": wait, "deferred": 0.0},
            prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
            flops_total=float(round(c["flops"])), read_bytes_total=float(round(c["rbytes"])),
            write_bytes_total=float(round(c["wbytes"])), **spec, **common)
    if sim.engine == "sglang":
        used = sim.kv_used
        evict = min(sim.pool_tokens - used, sim.pool_tokens * 0.25 * (1 - kv)) if used < sim.pool_tokens else 0.0
        spec = {}
        if sim.spec_k and k["accept"] is not None:
            acc = k["accept"]
            length = 1 + acc * (1 - acc ** sim.spec_k) / (1 - acc)
            spec = dict(spec_accept_ratio=round(acc * sim.rng.uniform(0.96, 1.04), 4),
                        spec_accept_length=round(length, 3))
        return EngineSample(
            kind="sglang", generation_tokens_total=float(round(c["gen"])),
            prompt_tokens_total=float(round(c["prompt"])),
            prompt_tokens_cached_total=float(round(c["cached"])),
            requests_finished_total=float(round(c["fin"])), kv_usage_ratio=round(kv, 6),
            kv_pool_tokens=sim.pool_tokens, histograms=hists,
            retracted_requests_total=float(c["retr"]),
            retracted_input_tokens_total=float(round(c["retr_tok"])),
            kv_used_tokens=float(round(used)), kv_free_tokens=float(round(sim.pool_tokens - used)),
            kv_evictable_tokens=float(round(max(0.0, evict))),
            forward_seconds_total=round(c["fwd_s"], 4), **spec, **common)
    # llama.cpp: counters only; cached prompt tokens are not in its prompt counter
    return EngineSample(
        kind="llamacpp", generation_tokens_total=float(round(c["gen"])),
        prompt_tokens_total=float(round(c["prompt"])),
        prompt_tokens_cached_total=float(round(c["cached"])),
        prefill_seconds_total=round(c["pf_s"], 4), decode_seconds_total=round(c["dec_s"], 4),
        decode_steps_total=float(round(c["steps"])), **common)
