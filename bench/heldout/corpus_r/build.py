"""Process trees as the real engines lay them out, and small helpers for scenarios."""

from __future__ import annotations

import random

from .serving import Engine
from .training import Trainer
from .world import EngineGroup, Hog, Proc, Thread, Unit, World


# ------------------------------------------------------------------ time profiles
def ramp(*points):
    """Piecewise-linear function of t through (t, value) points, flat outside."""
    pts = sorted(points)

    def f(t: float) -> float:
        if t <= pts[0][0]:
            return pts[0][1]
        for (a, va), (b, vb) in zip(pts, pts[1:]):
            if t <= b:
                return va if b == a else va + (vb - va) * (t - a) / (b - a)
        return pts[-1][1]

    return f


def const(v):
    return lambda t: v


def between(t, a, b):
    return a <= t < b


# ------------------------------------------------------------------ length distributions
def lognorm(median: float, sigma: float, lo: float = 1, hi: float = 1e9):
    import math

    def f(rng: random.Random) -> float:
        return min(hi, max(lo, median * math.exp(rng.gauss(0, sigma))))

    return f


def fixed(v):
    return lambda rng: v


def uniform(a, b):
    return lambda rng: rng.uniform(a, b)


def mix(*parts):
    """[(weight, fn), ...]"""
    total = sum(w for w, _ in parts)

    def f(rng):
        x = rng.random() * total
        for w, fn in parts:
            x -= w
            if x <= 0:
                return fn(rng)
        return parts[-1][1](rng)

    return f


# ------------------------------------------------------------------ units
def vllm_unit(world: World, eng, *, pid0: int, port: int = 8000, cores=tuple(range(0, 16)),
              extra_args: str = "", name: str = "vllm") -> Unit:
    engines = eng.engines if isinstance(eng, EngineGroup) else [eng]
    model = engines[0].model.name
    tp = engines[0].tp
    cmd = f"/opt/vllm/.venv/bin/python3 /opt/vllm/.venv/bin/vllm serve {model} --port {port}"
    if tp > 1:
        cmd += f" --tensor-parallel-size {tp}"
    if len(engines) > 1:
        cmd += f" --data-parallel-size {len(engines)}"
    cmd += extra_args
    procs = [Proc(pid0, "vllm", cmd, rss=3 * 2**30, user="vllm")]
    threads = [Thread(pid0, pid0, "vllm", "api", 0.82), Thread(pid0 + 7, pid0, "vllm", "api", 0.18)]
    for k, e in enumerate(engines):
        core_pid = pid0 + 40 + 10 * k
        mem = e.proc_mem
        if tp == 1:
            procs.append(Proc(core_pid, "VLLM::EngineCor", "VLLM::EngineCore" + (f"_DP{k}" if len(engines) > 1 else ""),
                              gpu=e.gpus[0], mem=mem, ppid=pid0, user="vllm", rss=5 * 2**30))
        else:
            procs.append(Proc(core_pid, "VLLM::EngineCor", "VLLM::EngineCore", ppid=pid0, user="vllm",
                              rss=4 * 2**30))
            for i, g in enumerate(e.gpus):
                procs.append(Proc(core_pid + 100 + i, "VLLM::Worker_TP", f"VLLM::Worker_TP{i}", gpu=g, mem=mem,
                                  ppid=core_pid, user="vllm", rss=6 * 2**30))
                threads.append(Thread(core_pid + 100 + i, core_pid + 100 + i, "VLLM::Worker_TP", "workers",
                                      1.0 / (tp * len(engines))))
        threads.append(Thread(core_pid, core_pid, "VLLM::EngineCor", "main", 0.965 / len(engines)))
        threads.append(Thread(core_pid + 3, core_pid, "VLLM::EngineCor", "main", 0.035 / len(engines)))
    threads += [Thread(pid0 + 90 + j, pid0, "python3", "misc", 1.0) for j in range(3)]
    u = Unit(name, eng, procs, threads, pinned=True, cores=tuple(cores), ports=(port,))
    return world.add(u)


def sglang_unit(world: World, eng, *, pid0: int, port: int = 30000, cores=tuple(range(0, 16)),
                name: str = "sglang") -> Unit:
    engines = eng.engines if isinstance(eng, EngineGroup) else [eng]
    e0 = engines[0]
    tp = e0.tp
    cmd = (f"/usr/bin/python3 -m sglang.launch_server --model-path {e0.model.name} --port {port}"
           + (f" --tp {tp}" if tp > 1 else "") + (f" --dp {len(engines)}" if len(engines) > 1 else ""))
    procs = [Proc(pid0, "python3", cmd, rss=4 * 2**30, user="root"),
             Proc(pid0 + 30, "sglang::detoken", "sglang::detokenizer", ppid=pid0, user="root", rss=2**30)]
    threads = [Thread(pid0, pid0, "python3", "api", 0.7), Thread(pid0 + 30, pid0 + 30, "sglang::detoken", "api", 0.3)]
    for k, e in enumerate(engines):
        for i, g in enumerate(e.gpus):
            pid = pid0 + 50 + 20 * k + i
            procs.append(Proc(pid, "sglang::schedul", f"sglang::scheduler_TP{i}" + (f"_DP{k}" if len(engines) > 1 else ""),
                              gpu=g, mem=e.proc_mem, ppid=pid0, user="root", rss=5 * 2**30))
            if i == 0:
                threads.append(Thread(pid, pid, "sglang::schedul", "main", 1.0 / len(engines)))
            else:
                threads.append(Thread(pid, pid, "sglang::schedul", "workers", 1.0 / (tp * len(engines))))
    threads += [Thread(pid0 + 90 + j, pid0, "python3", "misc", 1.0) for j in range(3)]
    return world.add(Unit(name, eng, procs, threads, pinned=True, cores=tuple(cores), ports=(port,)))


def llamacpp_unit(world: World, e: Engine, *, pid0: int, port: int = 8080, cores=tuple(range(0, 8)),
                  args: str = "") -> Unit:
    cmd = (f"/usr/local/bin/llama-server -m /models/{e.model.name} -ngl 99 -c {e.pool_tokens} "
           f"-np {e.slots} --metrics --host 0.0.0.0 --port {port}{args}")
    procs = [Proc(pid0, "llama-server", cmd, gpu=e.gpus[0], mem=e.proc_mem, user="llama", rss=int(1.5 * 2**30))]
    threads = [Thread(pid0, pid0, "llama-server", "main", 1.0),
               Thread(pid0 + 1, pid0, "llama-server", "api", 0.6), Thread(pid0 + 2, pid0, "llama-server", "api", 0.4)]
    threads += [Thread(pid0 + 10 + j, pid0, "llama-server", "misc", 0.5) for j in range(4)]
    return world.add(Unit("llama-server", e, procs, threads, pinned=True, cores=tuple(cores), ports=(port,)))


def trainer_unit(world: World, tr: Trainer, *, pid0: int, script: str = "train.py", cores=None,
                 user: str = "ml", container: str = "") -> Unit:
    n = len(tr.gpus)
    if n > 1:
        root = Proc(pid0, "torchrun", f"/opt/conda/bin/python3 /opt/conda/bin/torchrun --nproc-per-node {n} {script}",
                    user=user, rss=2**29, container=container)
    else:
        root = Proc(pid0, "python3", f"/opt/conda/bin/python3 {script}", gpu=tr.gpus[0], mem=tr.mem_bytes,
                    user=user, rss=6 * 2**30, container=container)
    procs, threads = [root], []
    for i, g in enumerate(tr.gpus):
        if n > 1:
            pid = pid0 + 10 + i
            procs.append(Proc(pid, "python3", f"/opt/conda/bin/python3 -u {script} --local-rank={i}", gpu=g,
                              mem=tr.mem_bytes, ppid=pid0, user=user, rss=6 * 2**30, container=container))
        else:
            pid = pid0
        threads.append(Thread(pid, pid, "python3", "main", 1.0 / n))
        threads.append(Thread(pid + 1000, pid, "pt_autograd_0", "autograd", 1.0 / n))
        threads.append(Thread(pid + 1001, pid, "pt_data_pin", "misc", 0.3))
        for w in range(tr.workers):
            wp = pid0 + 200 + i * 32 + w
            procs.append(Proc(wp, "pt_data_worker", f"/opt/conda/bin/python3 -u {script} --local-rank={i}",
                              ppid=pid, user=user, rss=2**30, container=container))
            threads.append(Thread(wp, wp, "pt_data_worker", "workers", 1.0 / (n * tr.workers)))
    if n > 1:
        threads.append(Thread(pid0, pid0, "torchrun", "misc", 0.2))
    cores = cores or tuple(range(0, min(world.cpus, 16 * n)))
    return world.add(Unit("trainer", tr, procs, threads, pinned=True, cores=tuple(cores), ports=(9400,)))


def hog_unit(world: World, gpu: int, demand, *, pid: int, name: str, cmdline: str, mem: int,
             start: float, end: float = 1e18, sm=0.92, tensor=0.6, dram=0.2, visible=True,
             user="research", fair=0.5) -> Unit:
    p = Proc(pid, name, cmdline, gpu=gpu, mem=mem, user=user, start_time=start, visible=visible,
             container="" if visible else "docker:7c1e0a9f3b2d")
    th = [Thread(pid, pid, name, "main", 1.0)]
    return world.add(Unit(f"hog{pid}", Hog(gpu, demand, sm=sm, tensor=tensor, dram=dram, fair=fair), [p], th,
                          start=start, end=end))


def idle_proc(world: World, gpu: int, *, pid: int, name: str, cmdline: str, mem: int, start: float = -1e18,
              end: float = 1e18, user: str = "alice") -> Unit:
    p = Proc(pid, name, cmdline, gpu=gpu, mem=mem, user=user, start_time=max(start, -3600))
    return world.add(Unit(f"idle{pid}", None, [p], [Thread(pid, pid, name, "misc", 0.2)], start=start, end=end))
