"""Step-synchronous jobs: training (single GPU, DDP/FSDP), RL loops, and plain GPU jobs.

Each rank computes its part of a step at its own clock, waits for its data, then all ranks
meet in an all-reduce: a rank that finished early spins in the NCCL kernel (GPU-Util counts
it busy, a few SMs active, no tensor work).  A step's time is the slowest rank's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gputop.schema import EngineSample

from .common import (BOARDS, GiB, MiB, Env, GpuModel, Host, Load, Proc, TickOut, Tree, clamp,
                     launch_hist, rng_for, run_frames)


@dataclass
class JobCfg:
    board: str
    ranks: int = 1
    gpus: int | None = None  # visible GPUs (default: ranks)
    duration: float = 600.0
    tick: float = 1.0
    cpus: int = 32
    compute_s: float = 0.5  # per step at full clocks
    comm_s: float = 0.0  # exposed collective time per step
    data_s: float = 0.05  # loader time per step not hidden by prefetch
    host_s: float = 0.01  # Python/launch time per step between kernels
    tensor_eff: float = 0.55  # tensor-active fraction of compute time
    sm_eff: float = 0.9
    dram_eff: float = 0.3
    occ: float = 0.35
    mem_gib: float = 60.0
    tokens_per_step: int = 0  # 0: no trainer page
    work_unit: str = "tokens"
    cmd: str = "python train.py"
    name: str = "python3"
    user: str = "ml"
    container: str = ""
    slow: dict = field(default_factory=dict)  # rank -> fn(t) multiplier of its compute
    data_fn: object = None  # fn(t) -> multiplier of data_s
    host_fn: object = None  # fn(t) -> multiplier of host_s
    phase_fn: object = None  # fn(t) -> dict overriding compute/tensor/sm/dram ("gen", "idle")
    env: dict = field(default_factory=dict)
    env_events: tuple = ()
    neighbors: tuple = ()
    nb_runnable: object = None
    quota: object = None
    jitter: object = None  # fn(t) -> (fraction of launches descheduled, stall ms)
    ebpf: bool = False
    dcgm: bool = False
    psi: bool = True
    loader_workers: int = 4
    kernels_per_step: int = 1500
    graphs: bool = False
    nvl_mib: float = 0.0  # NVLink MiB/s while in collectives
    restart: tuple = ()  # (t, down_s)


def _fn(x, default=1.0):
    if x is None:
        return lambda t: default
    return x if callable(x) else (lambda t, v=x: v)


def simulate(name: str, cfg: JobCfg, start_wall: float) -> list:
    rng = rng_for(name)
    b = BOARDS[cfg.board]
    ngpu = cfg.gpus or cfg.ranks
    gms = [GpuModel(b, i, rng_for(name, f"gpu{i}"), cfg.env.get(i, Env()), dcgm=cfg.dcgm)
           for i in range(ngpu)]
    host = Host(cfg.cpus, rng_for(name, "host"), base_cores=0.4, psi=cfg.psi)
    base_pid = rng.randint(3000, 90000)
    pids = [base_pid + 1 + r for r in range(cfg.ranks)]
    workers = [base_pid + 200 + k for k in range(cfg.loader_workers * min(cfg.ranks, 1))]
    threads = [(pids[0], pids[0], cfg.name), (pids[0] + 40, pids[0], "pt_autograd_0"),
               (pids[0] + 41, pids[0], "pt_data_pin")]
    threads += [(w, w, "pt_data_worker") for w in workers]
    tree = Tree(pids[0], cfg.cmd, threads, tuple(range(cfg.cpus)),
                quota=_fn(cfg.quota, None)(0), extra_pids=tuple(workers))
    cg = f"/docker/{cfg.container}" if cfg.container else "/user.slice/job.scope"
    state = {"steps": 0.0, "carry": 0.0, "gen": 0.0, "boot": start_wall - rng.uniform(300, 20000),
             "down": -1.0, "up": 0.0, "launches": 0.0}
    ev = sorted(cfg.env_events)
    quota_fn = _fn(cfg.quota, None)

    def step(i: int, t: float) -> TickOut:
        dt = cfg.tick
        for (te, gi, attr, val) in ev:
            if t <= te < t + dt:
                setattr(gms[gi].env, attr, val)
        for (tr, down) in cfg.restart:
            if t <= tr < t + dt:
                state["down"], state["up"] = tr + down, tr + down
        down = t < state["down"]
        ph = _fn(cfg.phase_fn, None)(t) or {}
        compute = ph.get("compute_s", cfg.compute_s)
        tensor_eff = ph.get("tensor_eff", cfg.tensor_eff)
        sm_eff = ph.get("sm_eff", cfg.sm_eff)
        dram_eff = ph.get("dram_eff", cfg.dram_eff)
        idle = ph.get("idle", 0.0)  # fraction of the tick with no kernels (checkpoint, eval IO)
        comm = ph.get("comm_s", cfg.comm_s)
        nb_r = _fn(cfg.nb_runnable, 0.0)(t)
        quota = quota_fn(t)
        need_threads = 1.2 * cfg.ranks + 0.6 * cfg.loader_workers
        cpu_slow = max(1.0, (nb_r + need_threads + host.base) / cfg.cpus)
        throttled = 0.0
        if quota and need_threads > quota:
            cpu_slow = max(cpu_slow, need_threads / quota)
            throttled = clamp(0.5 + 0.5 * (need_threads - quota) / need_threads)
        jit = _fn(cfg.jitter, None)(t)
        host_s = cfg.host_s * _fn(cfg.host_fn)(t) * cpu_slow
        if jit:
            host_s += cfg.kernels_per_step * jit[0] * jit[1] * 1e-3
        data_s = cfg.data_s * _fn(cfg.data_fn)(t) * (cpu_slow ** 0.5)
        own = []
        for r in range(cfg.ranks):
            cf = gms[r].compute_factor() if r < ngpu else 1.0
            mf = gms[r].mem_factor() if r < ngpu else 1.0
            c = compute * (tensor_eff / cf + (1 - tensor_eff) / mf) * _fn(cfg.slow.get(r))(t)
            own.append(c)
        S = max(own) + comm + data_s + host_s
        loads = [Load() for _ in gms]
        mem = [0] * ngpu
        procs = []
        for nb in cfg.neighbors:
            if nb["t0"] <= t < nb.get("t1", 1e9):
                gi = nb["gpu"]
                ld = nb["load"](t) if callable(nb["load"]) else nb["load"]
                loads[gi] = loads[gi].add(ld)
                mem[gi] += nb["mem"]
                procs.append(Proc(nb["pid"], gi, nb["name"], nb["cmd"],
                                  start_wall + nb["t0"] - nb.get("age", 0), nb["mem"],
                                  user=nb.get("user", "root"), container=nb.get("container", ""),
                                  sm=ld.sm, memu=ld.dram, cpu_s=nb.get("cpu", 0.5) * t))
                if ld.busy > 0.05 and gi < cfg.ranks:
                    own[gi] *= 1 + 0.9 * ld.busy
                    S = max(own) + comm + data_s + host_s
        steps = 0.0
        if not down:
            run_time = dt * (1 - idle)
            steps = run_time / S
            state["steps"] += steps
            state["gen"] += steps * cfg.tokens_per_step
        for r in range(min(cfg.ranks, ngpu)):
            if down:
                continue
            frac = steps * 1.0 / dt
            wait = S - own[r] - data_s - host_s - comm
            busy = clamp(frac * (own[r] + wait + comm))
            cf = gms[r].compute_factor()
            ld = Load(busy=busy,
                      sm=clamp(frac * (own[r] * sm_eff + (wait + comm) * 0.14)),
                      occ=clamp(frac * own[r] * cfg.occ),
                      tensor=clamp(frac * compute * tensor_eff / max(0.3, cf)
                                   * _fn(cfg.slow.get(r))(t) ** 0 * (own[r] > 0)),
                      dram=clamp(frac * own[r] * dram_eff),
                      pcie_rx=400 * frac * cfg.data_s + 20, pcie_tx=15,
                      nvl=cfg.nvl_mib * frac * (wait + comm) / max(1e-6, S) * 4,
                      burst=0.3 if busy < 0.8 else 0.05)
            ld.tensor = min(ld.tensor, ld.busy)
            loads[r] = loads[r].add(ld) if procs else ld
            mem[r] += int(cfg.mem_gib * GiB * (1 + 0.01 * math.sin(t / 7 + r)))
            procs.append(Proc(pids[r], r, cfg.name, cfg.cmd + (f" --local-rank {r}"
                                                               if cfg.ranks > 1 else ""),
                              state["boot"] if state["up"] == 0 else start_wall + state["up"],
                              int(cfg.mem_gib * GiB), user=cfg.user, container=cfg.container,
                              cgroup=cg, sm=ld.sm, memu=ld.dram, ppid=base_pid,
                              cpu_s=tree.cpu_s / max(1, cfg.ranks)))
        sampled = [p.sample(0) for p in procs]
        main = 0.0 if down else clamp(0.35 + 0.6 * (host_s * steps / dt) / cpu_slow + 0.1)
        use = {pids[0]: main, pids[0] + 40: 0.0 if down else 0.25,
               pids[0] + 41: 0.03}
        load_w = 0.0 if down else clamp(0.2 + 0.8 * _fn(cfg.data_fn)(t) * cfg.data_s * 5)
        for w in workers:
            use[w] = load_w
        if quota:
            tot = sum(use.values()) * cfg.ranks
            if tot > quota:
                use = {k: v * quota / tot for k, v in use.items()}
        invol = 20 + (600 * (cpu_slow - 1) if not quota else 0) + (jit[0] * 3000 if jit else 0)
        tree.step(dt, use, invol, 1500, throttled)
        eng = None
        if cfg.tokens_per_step or cfg.work_unit == "samples":
            if down:
                eng = "connection refused"
            else:
                eng = EngineSample(kind="trainer", generation_tokens_total=float(
                    int(state["gen"])), requests_finished_total=float(int(state["steps"])),
                    work_unit=cfg.work_unit, tensor_parallel=1, data_parallel=cfg.ranks,
                    pids=tuple(pids[:1]) + tuple(workers), **tree.engine_fields())
        launch = ()
        if cfg.ebpf and not down:
            calls = int(steps * cfg.kernels_per_step)
            tail = jit[0] if jit else 0.0005
            tail_us = jit[1] * 1000 if jit else 50.0
            launch = (launch_hist(rng, "cudaLaunchKernel", pids[0], calls, 3.5, tail, tail_us),
                      launch_hist(rng, "cuLaunchKernel", pids[0], calls // 3, 4.1, tail,
                                  tail_us))
        busy = sum(use.values()) * cfg.ranks + nb_r * 0.95
        run = nb_r + need_threads * (0.2 if down else 0.8)
        return TickOut(loads, mem, sampled, busy, run, None, tree, eng, launch)

    url = "http://127.0.0.1:9090/metrics" if (cfg.tokens_per_step or
                                               cfg.work_unit == "samples") else None
    return run_frames(name, gms, host, cfg.tick, cfg.duration, start_wall, step, url,
                      "uprobes on libcudart.so.12, libcuda.so.1 (rank 0)" if cfg.ebpf else None,
                      rng_for(name, "clock"))
