"""Helpers that put a World, a host, processes and a workload together into one trace."""
from __future__ import annotations

import math

from . import serve as S
from . import train as TR
from .truth import Truth
from .world import Host, Proc, World, frames

GPU_LABEL = {"V100": "V100", "A100-40": "A100 40GB", "A100-80": "A100 80GB", "H100": "H100", "GH200": "GH200",
             "L40S": "L40S", "A6000": "RTX A6000", "RTX4090": "RTX 4090"}


def ramp(t, a, b, lo, hi):
    """lo before a, hi after b, linear between."""
    if t <= a:
        return lo
    if t >= b:
        return hi
    return lo + (hi - lo) * (t - a) / (b - a)


def on(t, a, b, v, base=0.0):
    return v if a <= t < b else base


class Built:
    def __init__(self, truth, frames, world, info):
        self.truth, self.frames, self.world, self.info = truth, frames, world, info


def serving(name, *, cause, win, gpu="H100", ngpu=1, tick=1.0, T=360.0, cfg: S.Cfg, reqs, note, family="serving",
            culprit=None, host=None, setup=None, ebpf=False, jitter=None, drop=(), user="grp-nlp", job="",
            others=(), win_fn=None, inlet=24.0, restart=None):
    w = World(name, T, tick, gpu, ngpu, inlet=inlet)
    rng = w.rng
    h = Host(rng, **(host or dict(cpus=64, cores=8, demand=1.6, threads=5, node_busy=lambda t: 6.0)))
    w.host = h
    if setup:
        setup(w)
    reqs = reqs(rng, T) if callable(reqs) else reqs
    pid = 200000 + (w.seed % 50000) * 2
    job = job or str(4_100_000 + w.seed % 90000)
    eng = S.Engine(w, cfg, reqs, pid)
    exe = {"vllm": f"vllm serve {cfg.model.name} --port {cfg.port} --max-model-len {cfg.max_model_len}"
                   f"{' --tensor-parallel-size %d' % len(cfg.gpus) if len(cfg.gpus) > 1 else ''}"
                   f"{'' if cfg.chunked else ' --no-enable-chunked-prefill'}{'' if cfg.graphs else ' --enforce-eager'}",
           "sglang": f"python3 -m sglang.launch_server --model-path {cfg.model.name} --port {cfg.port} --enable-metrics",
           "tgi": f"text-generation-launcher --model-id {cfg.model.name} --port {cfg.port}",
           "llamacpp": f"llama-server -m /scratch/models/{cfg.model.name.split('/')[-1]}-Q8_0.gguf --port {cfg.port} --metrics -ngl 99"}[cfg.kind]
    pname = {"vllm": "python3", "sglang": "python3", "tgi": "text-generation", "llamacpp": "llama-server"}[cfg.kind]
    for g in cfg.gpus:
        p = pid + g if len(cfg.gpus) > 1 else pid
        w.procs.append(Proc(p, g, pname, exe, user, eng.mem_bytes, 0.0, cpu_cores=1.2 if g == cfg.gpus[0] else 0.3,
                            slurm_job=job))
    for o in others:
        w.procs.append(o)
    if restart:
        # the server exits at restart[0] and is serving again at restart[1] (same address)
        a, b = restart
        eng2cfg = cfg
        feed = S.Engine(w, cfg, [r for r in reqs if r[0] < a], pid).run(a)
        for p in w.procs[:len(cfg.gpus)]:
            p.end = a
        pid2 = pid + 16
        e2 = S.Engine(w, eng2cfg, [r for r in reqs if r[0] >= b - 5], pid2, start=b)
        for g in cfg.gpus:
            w.procs.append(Proc(pid2 + (g if len(cfg.gpus) > 1 else 0), g, pname, exe, user, e2.mem_bytes, b - 25, cpu_cores=1.2, slurm_job=job,
                                mem_fn=(lambda t, b=b, m=e2.mem_bytes: m if t >= b else m * min(1, max(0.1, (t - b + 25) / 20)))))
        f2 = e2.run(T)
        downs = [(t, None, f"cannot reach {eng.url}: Connection refused") for t in
                 [a + i * cfg.scrape_s for i in range(int((b - a) / cfg.scrape_s) + 1)]]
        feed.scrapes = feed.scrapes + downs + f2.scrapes
        eng.trace = []
        eng = e2
    else:
        feed = eng.run(T)
    fr, wall0 = frames(w, engine=feed, pinned_label=exe, ebpf=None if ebpf else "needs root (CAP_BPF, CAP_PERFMON)",
                       jitter=jitter or (lambda t: (0.0, 1.0)), drop=drop, engine_pids=tuple(p.pid for p in w.procs if p.tree))
    if win_fn:
        win = win_fn(w)
    truth = Truth(name, family, cause, culprit, None if win is None else (round(wall0 + win[0], 3), round(wall0 + win[1], 3)),
                  cfg.kind, ngpu, GPU_LABEL[gpu], tick, note, fr[0].time_wall_s)
    return Built(truth, fr, w, {"engine": eng, "wall0": wall0, "win_sim": win})


def training(name, *, cause, win, gpu="H100", ngpu=8, tick=1.0, T=360.0, tcfg: TR.TCfg, note, family="training",
             culprit=None, host=None, setup=None, ebpf=False, jitter=None, drop=(), user="grp-vision", job="",
             others=(), win_fn=None, inlet=24.0, limits=None, r_scale=None, clock_caps=None, script="train.py",
             extra_jobs=()):
    w = World(name, T, tick, gpu, ngpu, inlet=inlet, limits=limits, r_scale=r_scale, clock_caps=clock_caps)
    rng = w.rng
    nw = tcfg.workers * len(tcfg.ranks)
    dem = 1.3 * len(tcfg.ranks) + nw * min(1.0, tcfg.batch_cpu_s / max(0.2, tcfg.comp_s + tcfg.allreduce_s) / max(1, tcfg.workers))
    h = Host(rng, **(host or dict(cpus=128 if ngpu >= 8 else 64, cores=max(8, 8 * len(tcfg.ranks)), demand=dem,
                                  threads=len(tcfg.ranks) * 2 + nw, node_busy=lambda t: 4.0)))
    if host and "demand" not in host:
        h.demand = dem
    w.host = h
    if setup:
        setup(w)
    job = job or str(4_100_000 + w.seed % 90000)
    tcfg.pid0 = 100000 + (w.seed % 40000) * 2
    launcher = "torchrun" if len(tcfg.ranks) + tcfg.remote > 1 else "python"
    cmd = f"{launcher} --nproc-per-node {len(tcfg.ranks)} {script}" if launcher == "torchrun" else f"python {script}"
    mem = w.spec.mem_gib * 2**30 * 0.86
    for i, g in enumerate(tcfg.ranks):
        w.procs.append(Proc(tcfg.pid0 + i, g, "python3", f"/home/{user}/.venv/bin/python -u {script} --local-rank {i}", user,
                            mem * (0.93 + 0.01 * (i % 3)), tcfg.start, tcfg.end, cpu_cores=dem / len(tcfg.ranks), slurm_job=job))
    for o in others:
        w.procs.append(o)
    feed, trace = TR.run(w, tcfg)
    for extra in extra_jobs:
        TR.run(w, extra)
    fr, wall0 = frames(w, engine=feed if tcfg.export else None, pinned_label=cmd,
                       ebpf=None if ebpf else "needs root (CAP_BPF, CAP_PERFMON)",
                       jitter=jitter or (lambda t: (0.0, 1.0)), drop=drop)
    if win_fn:
        win = win_fn(w)
    truth = Truth(name, family, cause, culprit, None if win is None else (round(wall0 + win[0], 3), round(wall0 + win[1], 3)),
                  "trainer" if tcfg.export else "none", ngpu, GPU_LABEL[gpu], tick, note, fr[0].time_wall_s)
    return Built(truth, fr, w, {"trace": trace, "wall0": wall0, "win_sim": win})


def first_reason(w: World, g, reasons, after=0.0):
    """Sim seconds of the first tick where GPU g reports one of ``reasons`` (for slow onsets)."""
    for k, samples in enumerate(w.samples):
        t = (k + 1) * w.tick
        if t >= after and set(samples[g].throttle) & set(reasons) and samples[g].sm_clock_mhz < w.spec.max_mhz * 0.93:
            return t
    return None
