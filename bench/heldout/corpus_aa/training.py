"""A data-parallel trainer simulator (DDP / FSDP / DeepSpeed, RL post-training).

Each step: every rank waits for its batch (data loader beyond prefetch), computes forward and
backward (time = FLOPs / (peak x MFU x clock)), then the gradient all-reduce, which ends when
the slowest rank arrives: the others sit in NCCL kernels (GPU-Util counts them; SMs and tensor
cores mostly idle).  Checkpoints and eval passes pause training; RL jobs alternate rollout
generation (memory-bound decode) and training.  Every signal of a tick is the overlap of the
steps' phases with the tick.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from gputop.schema import EngineSample, SourceStatus

from .common import (BOARDS, GiB, MiB, Activity, BoardState, Clock, Host, Proc, clamp,
                     launch_hist, make_frame, pinned_of, seed_of)


@dataclass
class Train:
    name: str
    board: str
    ngpu: int
    duration: float
    params_b: float
    tokens_per_step: int  # global
    framework: str = "ddp"  # ddp | fsdp | deepspeed | rl | single
    mfu: float = 0.42
    tick: float = 1.0
    exporter: str | None = None  # "tokens" | "samples" | None
    samples_per_step: int = 256
    data_s: Callable[[random.Random, float, int], float] = lambda rng, t, step: 0.0
    mods: Callable[[float], dict] = lambda t: {}
    ckpt_every: float = 0.0  # seconds between checkpoints (0: none)
    ckpt_s: float = 40.0
    eval_every: float = 0.0
    eval_s: float = 30.0
    rollout_s: float = 0.0  # RL: generation phase length (alternates with train_s)
    train_s: float = 0.0
    launches_per_step: int = 2500
    eager_cpu_s: float = 0.0  # host time to issue one step's launches (hidden if < compute)
    cpus: int = 96
    quota: float | None = None
    psi: bool = True
    ebpf: bool = False
    loader_workers: int = 4
    loader_cpu: float = 0.3  # cores per worker while the loader works
    dcgm: bool = False
    container: str = ""
    pod: str = ""
    power_limit: float | None = None
    neighbour: Callable[[float], float] = lambda t: 0.0
    ambient: float = 27.0
    cmd: str = ""


def simulate(cfg: Train, start_wall: float):
    rng = random.Random(seed_of(cfg.name))
    b = BOARDS[cfg.board]
    n = cfg.ngpu
    boards = [BoardState(b, i, rng, seed_of(cfg.name), cfg.power_limit, cfg.ambient + (i % 4), cfg.dcgm)
              for i in range(n)]
    host = Host(rng, cfg.cpus, cfg.quota, cfg.psi)
    clock = Clock(rng, start_wall, cfg.tick)
    pid0 = 2000 + rng.randint(100, 50000)
    cmd = cfg.cmd or {"ddp": "torchrun --nproc_per_node=%d train.py --config cfg/sft.yaml",
                      "fsdp": "torchrun --nproc_per_node=%d train_fsdp.py --fsdp full_shard",
                      "deepspeed": "deepspeed --num_gpus %d finetune.py --deepspeed ds_z2.json",
                      "rl": "python3 -m verl.trainer.main_ppo trainer.n_gpus_per_node=%d",
                      "single": "python3 train.py --gpus %d"}[cfg.framework] % n
    cg = f"/kubepods/burstable/pod{seed_of(cfg.pod) % 10**8:08d}" if cfg.pod else "/system.slice/job.scope"
    ranks = [Proc(pid0 + 13 * i, "python3", cmd + f" --local_rank={i}", (i,), start_wall - 900,
                  container=cfg.container, pod=cfg.pod, cgroup=cg) for i in range(n)]
    loaders = [Proc(pid0 + 500 + j, "pt_data_worker", "python3 (data loader)", (), start_wall - 880)
               for j in range(cfg.loader_workers * n)]
    # per-GPU memory: weights + grads + optimizer (sharded for FSDP / ZeRO) + activations
    shard = n if cfg.framework in ("fsdp", "deepspeed") else 1
    state_b = cfg.params_b * 1e9 * (2 + 2 + 12 / shard)
    mem = int(min(b.mem_mib * MiB * 0.93, state_b / (shard if cfg.framework == "fsdp" else 1)
                  + 0.35 * b.mem_mib * MiB))
    flops_step = 6 * cfg.params_b * 1e9 * cfg.tokens_per_step / n  # per rank
    grad_bytes = cfg.params_b * 1e9 * 2
    busbw = (150e9 if b.nvlink else 20e9) if n > 1 else 0
    comm_s = (2 * grad_bytes * (n - 1) / n / busbw) * 0.35 if n > 1 else 0.0  # exposed part
    # the step timeline, advanced lazily: (start, phase list) per rank
    cur = 0.0
    step_no = 0
    steps_done = tokens_done = samples_done = 0
    pending: list = []  # (kind, start, end, rank -> activity kind) segments
    next_ckpt = cfg.ckpt_every or 1e18
    next_eval = cfg.eval_every or 1e18
    frames = []
    prev_speed = [1.0] * n
    for seq, t, dt in clock.times(int(cfg.duration / cfg.tick)):
        mod = cfg.mods(t)
        neighbour = cfg.neighbour(t) + mod.get("neighbour", 0.0)
        tree = n * 1.05 + cfg.loader_workers * n * cfg.loader_cpu
        hs, got = host.tick(tree + neighbour + 1.0, tree, dt, mod.get("quota"))
        got = min(got, mod.get("cpu_got", 1.0))
        # build segments until the cursor passes the end of this tick
        while cur < t:
            speeds = [prev_speed[r] * mod.get("rank_speed", {}).get(r, 1.0) for r in range(n)]
            if cur >= next_ckpt:
                pending.append(("ckpt", cur, cur + cfg.ckpt_s, None))
                cur += cfg.ckpt_s
                next_ckpt = cur + cfg.ckpt_every
                continue
            if cur >= next_eval:
                pending.append(("eval", cur, cur + cfg.eval_s, None))
                cur += cfg.eval_s
                next_eval = cur + cfg.eval_every
                continue
            if cfg.rollout_s and (cur % (cfg.rollout_s + cfg.train_s)) < cfg.rollout_s:
                end = cur + (cfg.rollout_s - cur % (cfg.rollout_s + cfg.train_s))
                pending.append(("rollout", cur, end, None))
                cur = end
                continue
            wait = max(0.0, cfg.data_s(rng, cur, step_no))
            comp = [flops_step / (b.tflops * 1e12 * cfg.mfu * s) for s in speeds]
            comp = [c * rng.uniform(0.985, 1.015) for c in comp]
            issue = cfg.eager_cpu_s / max(0.05, got)
            lt = mod.get("launch_tail")
            if lt:
                issue += cfg.launches_per_step * lt[0] * lt[1] * 1e-6
            ratio = [min(1.0, c / issue) if issue > c * 0.8 else 1.0 for c in comp]
            comp = [c / rt for c, rt in zip(comp, ratio)]
            tiny = mod.get("tiny_s", 0.0)
            slowest = max(comp)
            end = cur + wait + slowest + tiny + comm_s
            pending.append(("step", cur, end, dict(wait=wait, comp=comp, ratio=ratio, tiny=tiny,
                                                   slowest=slowest)))
            cur = end
            step_no += 1
        # overlap of segments with (t - dt, t]
        lo, hi = t - dt, t
        acts = [Activity() for _ in range(n)]
        cats = [dict(comp=0.0, nccl=0.0, comm=0.0, idle=0.0, gen=0.0, evalf=0.0, ckpt=0.0, tiny=0.0,
                     gap=0.0) for _ in range(n)]
        keep = []
        for seg in pending:
            kind, s0, s1, info = seg
            if s1 <= lo:
                continue
            keep.append(seg)
            if s0 >= hi:
                continue
            if s1 <= hi and kind == "step":
                steps_done += 1
                tokens_done += cfg.tokens_per_step
                samples_done += cfg.samples_per_step
            for r in range(n):
                c = cats[r]
                if kind != "step":
                    ov = min(s1, hi) - max(s0, lo)
                    c[{"ckpt": "ckpt", "eval": "evalf", "rollout": "gen"}[kind]] += ov
                    continue
                w, cr, sl, tn = info["wait"], info["comp"][r], info["slowest"], info["tiny"]
                marks = [("idle", s0, s0 + w), ("comp", s0 + w, s0 + w + cr),
                         ("nccl", s0 + w + cr, s0 + w + sl), ("tiny", s0 + w + sl, s0 + w + sl + tn),
                         ("comm", s0 + w + sl + tn, s1)]
                for cat, a0, a1 in marks:
                    ov = min(a1, hi) - max(a0, lo)
                    if ov > 0:
                        c[cat] += ov
                        if cat == "comp":
                            c["gap"] += ov * (1 - info["ratio"][r])
        pending = keep
        for r in range(n):
            c, a = cats[r], acts[r]
            comp = c["comp"] - c["gap"]
            busy = comp + c["nccl"] + c["comm"] + c["tiny"] + c["gen"] * 0.93 + c["evalf"] * 0.9 + c["ckpt"] * 0.04
            a.busy = clamp(busy / dt)
            a.sm = clamp((comp * 0.93 + c["nccl"] * 0.16 + c["comm"] * 0.2 + c["tiny"] * 0.05
                          + c["gen"] * 0.55 + c["evalf"] * 0.75 + c["ckpt"] * 0.01) / dt)
            a.occ = a.sm * 0.45
            a.tensor = clamp((comp * 0.62 + c["gen"] * 0.12 + c["evalf"] * 0.45) / dt)
            a.dram = clamp((comp * 0.28 + c["nccl"] * 0.05 + c["comm"] * 0.18 + c["gen"] * 0.78
                            + c["evalf"] * 0.3 + c["tiny"] * 0.02) / dt)
            a.nvlink = (c["comm"] + c["nccl"] * 0.1) / dt * 90000 if n > 1 else 0.0
            a.pcie_rx = 200 + 3000 * c["ckpt"] / dt
            a.pcie_tx = 50 + 2500 * c["ckpt"] / dt * (r == 0)
            a.mem_used = mem + int(rng.uniform(-30, 30) * MiB)
            a.flicker = 0.3 if c["idle"] > 0.05 else 0.05
            cap = mod.get("clock_cap", {}).get(r)
            if cap:
                a.clock_cap_mhz = cap
                a.reasons = mod.get("reasons", {}).get(r, ("hw slowdown",))
            a.heat_w = mod.get("heat", {}).get(r, 0.0)
        for o in mod.get("others", ()):
            a = acts[o["gpu"]]
            a.busy = clamp(a.busy + o["sm"] * (1 - a.busy * 0.5))
            a.sm = clamp(a.sm + o["sm"] * 0.6)
            a.mem_used += o["mem"]
        gpus = [bs.read(a, dt) for bs, a in zip(boards, acts)]
        prev_speed = [bs.speed for bs in boards]
        # CPU: the rank's main thread launches; the loaders work while data is needed
        loader_busy = sum(cats[0][k] for k in ("comp", "nccl", "comm", "idle")) / dt
        stall = cats[0]["idle"] / dt
        for r, p in enumerate(ranks):
            p.burn(rng, {"python3": min(1.0, 0.55 + 0.4 * loader_busy) * got * dt,
                         "pt_autograd_0": 0.3 * loader_busy * got * dt,
                         "ckpt_writer": 0.9 * cats[r]["ckpt"] * (r == 0)},
                   invol_rate=40 + (1 - got) * 1500 + mod.get("invol", 0))
        for lp in loaders:
            lp.burn(rng, {"pt_data_worker": cfg.loader_cpu * (loader_busy + stall * mod.get("stall_cpu", 0.2)) * got * dt})
        procs = []
        for r, p in enumerate(ranks):
            procs += p.samples({r: acts[r].mem_used - sum(o["mem"] for o in mod.get("others", ()) if o["gpu"] == r)},
                               {r: gpus[r].util_gpu_pct})
        for o in mod.get("others", ()):
            op = Proc(o["pid"], o["name"], o["cmd"], (o["gpu"],), start_wall + o.get("since", 0), user=o.get("user", "app"))
            procs += op.samples({o["gpu"]: o["mem"]}, {o["gpu"]: round(100 * o["sm"])})
        engine = None
        estatus = None
        if cfg.exporter:
            unit = cfg.exporter
            engine = EngineSample(kind="trainer", url="http://127.0.0.1:9400/metrics",
                                  generation_tokens_total=float(tokens_done if unit == "tokens" else samples_done),
                                  requests_finished_total=float(steps_done), work_unit=unit,
                                  tensor_parallel=1, data_parallel=n,
                                  pids=tuple(p.pid for p in ranks[:1]) + tuple(lp.pid for lp in loaders[:cfg.loader_workers]),
                                  time_wall_s=round(start_wall + t - 0.01, 6), time_mono_s=round(clock.mono0 + t - 0.01, 6),
                                  cpu_s=round(ranks[0].cpu_s + sum(lp.cpu_s for lp in loaders[:cfg.loader_workers]), 2),
                                  ctx_involuntary=ranks[0].ctx_invol, busiest_thread=ranks[0].busiest()[0],
                                  busiest_thread_cpu_s=ranks[0].busiest()[1],
                                  cpu_quota_cores=cfg.quota, cpu_periods=host.periods if cfg.quota else None,
                                  cpu_throttled_periods=host.throttled if cfg.quota else None)
        launch = []
        if cfg.ebpf:
            lt = mod.get("launch_tail", (0.0003, 60.0))
            frac_active = (sum(cats[0][k] for k in ("comp", "nccl", "comm")) / dt)
            for r, p in enumerate(ranks[:8]):
                cnt = int(cfg.launches_per_step * frac_active / max(0.05, flops_step / (b.tflops * 1e12 * cfg.mfu)))
                cnt = min(cnt, 200000)
                launch.append(launch_hist(rng, "cudaLaunchKernel", p.pid, cnt, 3.0,
                                          lt[0] * (1.0 if r in mod.get("tail_ranks", range(n)) else 0.1), lt[1]))
            from dataclasses import replace
            hs = replace(hs, offcpu_switches=int(40 + cfg.launches_per_step * lt[0] * 3))
        pinned = pinned_of(ranks[0], hs, tuple(range(min(cfg.cpus, 16))), (9400,) if cfg.exporter else (),
                           mod.get("quota", cfg.quota), host.periods, host.throttled,
                           tuple(lp.pid for lp in loaders[:cfg.loader_workers]))
        frames.append(make_frame(clock, seq, t, gpus, procs, engine, hs, pinned, launch, estatus,
                                 cfg.ebpf, engine_expected=True))
    return frames
