"""Training traces: N ranks doing compute, NCCL collectives (waiting for the slowest rank),
data-loader waits, checkpoints and eval phases; every signal derived from the step model."""
from __future__ import annotations

import random
from dataclasses import replace

from gputop.schema import EngineSample, Frame
from .common import BOARDS, GIB, GpuModel, Host, Load, Proc, clamp, down, launch_hist, ok, pinned
from .serving import episodes


def simulate(spec, seed, start):
    rng = random.Random(seed)
    b = BOARDS[spec["board"]]
    n = spec.get("ngpus", 8)
    tick = spec.get("tick", 1.0)
    cause, sev, win = spec.get("cause"), spec.get("sev", 0.6), spec.get("win")
    period, on = spec.get("period"), spec.get("on")
    compute = spec.get("step_s", 1.2)       # per-step compute on a healthy rank
    comm = spec.get("comm_s", 0.15)
    load_s = spec.get("load_s", 0.02)
    tok_step = spec.get("tokens_per_step", 8 * 4 * 4096)
    gpus = [GpuModel(b, i, rng, power_limit_w=spec.get("plimit")) for i in range(n)]
    host = Host(rng, spec.get("cpus", 96), 0.05, spec.get("psi", True))
    pod = spec.get("pod", "train/" + spec["name"])
    base = 3000 + rng.randrange(100000)
    cmd = spec.get("cmd", "torchrun --nproc-per-node 8 train.py")
    procs = [Proc(base + i, i, "python3", f"{cmd} --local-rank {i}", pod, start - 1800,
                  mem=spec.get("mem_gib", 60) * GIB, rss=12 * GIB) for i in range(n)]
    tiny = cause == "tiny_kernels"
    cpu = dict(s=2000.0, main=1500.0, inv=3000, vol=90000)
    steps = tokens = 0.0
    frames = []
    culprit = spec.get("culprit", 0)
    engine_on = spec.get("trainer_metrics", True)
    for k in range(int(spec["dur"] / tick)):
        t = k * tick
        wall = start + t + rng.gauss(0, 0.004)
        active = cause is not None and episodes(t, win, period, on)
        s = sev if active else 0.0
        per_rank = [compute * (1 + rng.gauss(0, 0.01)) for _ in range(n)]
        cap = [1.0] * n
        reasons = [()] * n
        stall = load_s
        if cause == "collective_straggler" and active:
            per_rank[culprit] *= 1 + 0.8 * s
            if spec.get("straggler_clock"):
                cap[culprit] = 1 / (1 + 0.8 * s)
                reasons = [spec["straggler_clock"] if i == culprit else () for i in range(n)]
        if cause == "throttling" and active:
            cap = [1 - 0.45 * s] * n
            per_rank = [p / (0.35 + 0.65 * c) for p, c in zip(per_rank, cap)]
            reasons = [spec.get("reasons", ("power brake",))] * n
        if cause == "input_stall" and active:
            stall = compute * (0.25 + 2.2 * s) * (0.6 + 0.8 * rng.random())
        if cause in ("host_cpu_contention", "host_launch_jitter") and active:
            per_rank = [p * (1 + 0.9 * s) for p in per_rank]
        if cause == "gpu_shared" and active:
            per_rank[culprit] *= 1 + 0.9 * s
        if tiny:
            per_rank = [p * (1 + 1.5 * s) for p in per_rank]
        ckpt = spec.get("ckpt")  # (every, lasts)
        in_ckpt = ckpt and (t % ckpt[0]) >= ckpt[0] - ckpt[1]
        ev = spec.get("eval")
        in_eval = ev and (t % ev[0]) >= ev[0] - ev[1]
        slow = max(per_rank)
        step_t = slow + comm + stall
        if in_ckpt:
            frac_work = 0.0
        else:
            frac_work = 1.0
        loads = []
        for i in range(n):
            c = per_rank[i] / step_t
            w = (slow - per_rank[i] + comm) / step_t  # NCCL kernels spinning
            if in_ckpt:
                L = Load(busy=0.02 * rng.random(), sm=0.01, pcie_mib=2500)
            elif in_eval:
                L = Load(busy=0.75 + 0.1 * rng.random(), sm=0.5, tensor=0.2, dram=0.3, pcie_mib=200)
            elif tiny:
                L = Load(busy=clamp(c + w * 0.9), sm=c * (0.08 + 0.05 * (1 - s)), tensor=c * 0.03, dram=c * 0.05,
                         pcie_mib=300)
            else:
                L = Load(busy=clamp(c + w * 0.98 + rng.gauss(0, 0.005)), sm=clamp(c * 0.88 + w * 0.12),
                         tensor=clamp(c * spec.get("tensor", 0.55)), dram=clamp(c * 0.3 + w * 0.04),
                         occ=clamp(c * 0.4), clock_cap=cap[i], reasons=reasons[i],
                         pcie_mib=150 + 2000 * (stall / step_t), nvlink_mib=w * 90000 + 30000 * c)
            if cause == "gpu_shared" and active and i == culprit:
                L = replace(L, busy=clamp(L.busy + 0.1), sm=clamp(L.sm + 0.2 * s))
            loads.append(L)
        dsteps = 0.0 if in_ckpt else tick / step_t * (0.6 if in_eval else 1.0)
        steps += dsteps if not in_eval else 0
        tokens += dsteps * tok_step if not in_eval else 0
        gs = [g.sample(loads[i], procs[i].mem + 0.6 * GIB + (4 * GIB if cause == "gpu_shared" and active and i == culprit else 0))
              for i, g in enumerate(gpus)]
        workers = spec.get("loader_cores", 8.0) * (1 + (1.5 * s if cause == "input_stall" else 0))
        noisy = spec.get("neighbour_cores", 0.0)
        if cause in ("host_cpu_contention", "host_launch_jitter") and active:
            noisy += host.cpus * (0.8 + 0.5 * s)
        hs = host.sample(n * 1.1 + workers + noisy, tick)
        starved = cause in ("host_cpu_contention", "host_launch_jitter") and active
        cpu["s"] += tick * (n * 1.0 * (1 - 0.3 * s * starved))
        cpu["main"] += tick * (0.95 - 0.35 * s * starved)
        cpu["inv"] += int(tick * (50 + 2500 * s * starved) * (0.8 + 0.4 * rng.random()))
        cpu["vol"] += int(tick * 4000)
        for i, p in enumerate(procs):
            p.cpu_s += tick * (1.0 - 0.3 * s * starved)
            p.sm = 100 * loads[i].sm if not b.gpm else None
        ps = [p.sample() for p in procs]
        if cause == "gpu_shared" and active:
            ps.append(Proc(base + 900, culprit, "python3", "python3 eval_harness.py --model ckpt-latest --batch-size 16",
                           "eval/nightly-eval-7f9c", start + win[0], mem=4 * GIB).sample())
        sources = {"nvml": ok(), "host": ok(), "procfs": ok(), "pin": ok()}
        engine = None
        if engine_on:
            if rng.random() < 0.01:
                sources["engine"] = down("timed out after 1.0 s")
            else:
                engine = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics", model=spec["model"],
                                      generation_tokens_total=round(tokens), requests_finished_total=float(int(steps)),
                                      work_unit="tokens", pids=tuple(p.pid for p in procs),
                                      time_mono_s=5000.0 + t + 0.02, time_wall_s=round(wall + 0.02, 4),
                                      cpu_s=round(cpu["s"], 2), ctx_involuntary=cpu["inv"],
                                      busiest_thread_cpu_s=round(cpu["main"], 2), busiest_thread=f"{base + 35} python3")
                sources["engine"] = ok(age=0.03)
        launch = ()
        if spec.get("ebpf"):
            jit = cause == "host_launch_jitter" and active
            calls = int(dsteps * spec.get("kernels_per_step", 2500))
            if calls:
                launch = (launch_hist(rng, "cudaLaunchKernel", base, calls, 3.2, (0.03 + 0.2 * s) if jit else 0.002,
                                      (300 + 2500 * s) if jit else 50),)
            sources["ebpf"] = ok(detail=f"uprobes on libcudart.so.12 of pid {base}")
        pin = pinned(spec["name"], base, cpu["s"], cpu["inv"], cpu["vol"], cpu["main"],
                     psi=hs.cpu_pressure_some_pct, rq=hs.run_queue)
        hs = replace(hs, offcpu_switches=int(tick * (50 + 2500 * s * starved) * 0.3) if spec.get("ebpf") else None)
        if rng.random() < 0.006 and k > 2:
            continue
        frames.append(Frame(seq=len(frames), time_wall_s=round(wall, 4), time_mono_s=round(5000.0 + t, 4),
                            gpus=tuple(gs), processes=tuple(ps), engine=engine, launch=launch, host=hs,
                            pinned=pin, sources=sources))
    return frames
