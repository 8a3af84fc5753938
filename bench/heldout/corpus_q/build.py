"""Builders shared by the catalogue: a serving box, a training box, a program box."""

from __future__ import annotations

import math
import random
import zlib

from . import gpu as G
from .serve import MODELS, Engine
from .world import Ebpf, Host, Proc, Program, Trainer, TrainerCounter, Traffic, World

T0 = 1_797_000_000.0  # wall clock of the first trace (early 2027)


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


def start_wall(name: str) -> float:
    return T0 + (zlib.crc32(name.encode()) % 5_000_000) * 1.0 + 0.25


def lognorm(rng, mean, sigma=0.6):
    return max(1, int(mean * math.exp(rng.gauss(0, sigma) - sigma * sigma / 2)))


def chat(mean_prompt=900, mean_out=260, cached=0.35, sigma=0.7):
    def make(rng, t):
        p = lognorm(rng, mean_prompt, sigma)
        return dict(prompt=p, cached=int(p * cached * rng.random() * 2) // 16 * 16 if cached else 0,
                    out=lognorm(rng, mean_out, 0.6))
    return make


def diurnal(base, amp=0.25, period=900.0, phase=0.0, burst=None):
    def rate(t):
        r = base * (1 + amp * math.sin(2 * math.pi * (t + phase) / period))
        if burst:
            for a, b, k in burst:
                if a <= t < b:
                    r *= k
        return max(0.0, r)
    return rate


def serving_box(name, *, gpu="H100", n_gpus=1, kind="vllm", version=0.32, model="llama8b",
                tp=1, engines=1, dp_port=False, tick_s=1.0, scrape_s=None, duration=300,
                rate=None, make=None, split=None, host_cpus=32, ebpf=False, mem_util=0.9,
                max_seqs=256, chunk=8192, spec_k=0, accept=0.7, slots=None, ctx=None,
                mfu=False, warm_s=7200.0, power_limit=None, ambient=27.0, prefix_cache=True):
    rng = rng_for(name)
    spec = G.SPECS[gpu]
    gpus = [G.GpuSim(spec, i, rng, ambient_c=ambient + rng.random() * 2,
                     power_limit_w=power_limit) for i in range(n_gpus)]
    host = Host(host_cpus, base_load=0.05 + 0.04 * rng.random())
    w = World(rng, gpus, tick_s, duration, start_wall(name), host, scrape_s=scrape_s or tick_s)
    m = MODELS[model]
    engs = []
    per = n_gpus // engines
    base_pid = 2000 + rng.randrange(50000)
    for e in range(engines):
        group = gpus[e * per:(e + 1) * per][:tp] if tp > 1 else [gpus[e * per]]
        pid = base_pid + 300 * e
        port = 8000 + (0 if dp_port else e)
        url = f"http://127.0.0.1:{port}/metrics"
        if kind == "vllm":
            pids = (pid, pid + 41) + tuple(pid + 60 + i for i in range(len(group)))
        else:
            pids = (pid,) + tuple(pid + 12 + i for i in range(len(group) if kind == "sglang" else 0))
        eng = Engine(kind, version, m, group, rng, tp=len(group), max_seqs=max_seqs, chunk=chunk,
                     mem_util=mem_util, url=url, pids=pids,
                     replica=(f"engine={e}" if dp_port else ""), spec_k=spec_k, accept=accept,
                     slots=slots, ctx=ctx, mfu=mfu, prefix_cache=prefix_cache,
                     host_gap_s={"vllm": 0.0009, "sglang": 0.0008, "llamacpp": 0.0015}[kind])
        engs.append(eng)
        for i, g in enumerate(group):
            if kind == "vllm":
                pname = "VLLM::EngineCore" if len(group) == 1 else f"VLLM::Worker_TP{i}"
                ppid = pids[0]
                cmd = (f"vllm serve {m.name} --port {port} --tensor-parallel-size {len(group)}"
                       if len(group) > 1 else f"vllm serve {m.name} --port {port}")
                gp = pids[1] if len(group) == 1 else pids[2 + i]
            elif kind == "sglang":
                pname = f"sglang::scheduler_TP{i}"
                cmd = f"python -m sglang.launch_server --model-path {m.name} --port {port} --tp {len(group)} --enable-metrics"
                gp, ppid = pids[1 + i], pids[0]
            else:
                pname = "llama-server"
                cmd = f"llama-server -m /models/{m.name.split('/')[-1]}-Q8_0.gguf -c {ctx or 32768} -np {slots or 4} --metrics --port {port} -ngl 99"
                gp, ppid = pids[0], 1
            w.procs.append(Proc(gp, (g.index,), pname, cmd, eng.mem_used, ppid=ppid,
                                start=w.start_wall - warm_s - 60 + rng.random() * 30,
                                cpu_rate=1.2))
    w.engines = engs
    w.actors = [Traffic(engs, rate or diurnal(6.0), make or chat(), split=split)] + engs
    if dp_port:
        w.dp_url = "http://127.0.0.1:8000/metrics"
    if ebpf:
        launcher = engs[0].pids[1] if kind == "vllm" else engs[0].pids[0]
        api = "cudaGraphLaunch" if kind != "llamacpp" else "cudaLaunchKernel"
        per_step = 1 if kind != "llamacpp" else 300
        w.ebpf = Ebpf(launcher, api=api, base_us=9.0 if api == "cudaGraphLaunch" else 4.5,
                      per_step=per_step,
                      extra_api=("cudaLaunchKernel", 24, 4.2) if kind != "llamacpp" else None)
    return w, engs


def prewarm(w, engs, seconds=40.0, mean_prompt=900, mean_out=260, itl=0.02, ttft=0.12,
            rate=6.0):
    """Counters and histograms of a long-running engine, then ``seconds`` of simulation
    discarded so the batch, the KV pool and the clocks are in steady state."""
    for e in engs:
        e.warm(7200.0, rate / len(engs), mean_prompt, mean_out, itl, ttft)
    dt = 1.0 / 6
    t = -seconds
    while t < 0:
        for h in w.hooks:
            h(w, t)
        for a in w.actors:
            if isinstance(a, Traffic):
                a.advance(w, t, dt)
        for e in engs:
            pieces, nv = e.advance(t, dt)
            for g in e.gpus:
                g.step(dt, pieces.get(g.index, []), 0.0, 0.0)
        t += dt
    for g in w.gpus:
        g._reset_tick()
    for e in engs:
        e.steps_in_tick = 0.0
        # requests that arrived in negative time keep their (earlier) arrival stamps


def training_box(name, *, gpu="H100", n_gpus=8, tick_s=1.0, duration=300, compute_s=0.6,
                 comm_s=0.05, opt_s=0.04, workers=8, decode_s=None, tokens_per_step=0,
                 samples_per_step=0, counter=None, fsdp=False, host_cpus=96, ebpf=False,
                 script="train.py", launcher="torchrun --nproc_per_node={n} {script}",
                 elem_frac=0.25, mem_frac=0.82, tiny=False, pin=False, ambient=27.0,
                 scrape_s=None, sig=G.GEMM):
    rng = rng_for(name)
    spec = G.SPECS[gpu]
    gpus = [G.GpuSim(spec, i, rng, ambient_c=ambient + rng.random() * 3) for i in range(n_gpus)]
    host = Host(host_cpus, base_load=0.04 + 0.03 * rng.random())
    w = World(rng, gpus, tick_s, duration, start_wall(name), host, scrape_s=scrape_s or tick_s)
    tr = Trainer(gpus, rng, compute_s=compute_s, comm_s=comm_s, opt_s=opt_s, workers=workers,
                 decode_s=decode_s, tokens_per_step=tokens_per_step,
                 samples_per_step=samples_per_step, fsdp=fsdp, elem_frac=elem_frac,
                 tiny=tiny, sig=sig)
    base_pid = 3000 + rng.randrange(60000)
    cmd = launcher.format(n=n_gpus, script=script)
    started = w.start_wall - 3000 - rng.random() * 20000
    pids = []
    for g in gpus:
        pid = base_pid + 10 + g.index
        pids.append(pid)
        w.procs.append(Proc(pid, (g.index,), "python", f"/usr/bin/python -u {script} --local_rank={g.index}",
                            int(spec.mem_bytes * mem_frac * (0.97 + 0.03 * rng.random())),
                            user="train", ppid=base_pid, start=started, cpu_rate=1.0 + workers * 0.1))
    w.actors = [tr]
    if counter:
        w.engines = [TrainerCounter(tr, unit=counter, pids=[base_pid] + pids)]
    if ebpf:
        w.ebpf = Ebpf(pids[0], api="cudaLaunchKernel", base_us=4.3, per_step=1400,
                      extra_api=None)
    if pin:
        w.pinned = (cmd[:60], tuple(pids))
    # steady state: run the loop for a while before the first frame
    dt = 1.0 / 6
    t = -45.0
    while t < 0:
        pieces, _ = tr.advance(w, t, dt)
        for g in gpus:
            g.step(dt, pieces.get(g.index, []), 0.0, 0.0)
        t += dt
    for g in gpus:
        g._reset_tick()
    if counter:
        w.engines[0].offset = 1e9 * rng.random() if counter == "tokens" else 2e6 * rng.random()
        w.engines[0].offset = float(int(w.engines[0].offset))
        w.engines[0].step_offset = 4000 + rng.randrange(20000)
        w.engines[0].offset -= tr.tokens_done
        w.engines[0].step_offset -= tr.steps_done
    return w, tr


def program_box(name, *, gpu="A100", n_gpus=1, tick_s=1.0, duration=300, mix=None,
                host_cpus=16, procs=None, ebpf=False):
    rng = rng_for(name)
    spec = G.SPECS[gpu]
    gpus = [G.GpuSim(spec, i, rng, ambient_c=27.0 + rng.random() * 3) for i in range(n_gpus)]
    host = Host(host_cpus, base_load=0.05 + 0.05 * rng.random())
    w = World(rng, gpus, tick_s, duration, start_wall(name), host)
    prog = Program(gpus, mix)
    w.actors = [prog]
    for p in procs or ():
        w.procs.append(p)
    if ebpf and w.procs:
        w.ebpf = Ebpf(w.procs[0].pid, api="cudaLaunchKernel", base_us=4.0, per_step=2000)
    dt = 1.0 / 6
    t = -30.0
    while t < 0:
        pieces, _ = prog.advance(w, t, dt)
        for g in gpus:
            g.step(dt, pieces.get(g.index, []), 0.0, 0.0)
        t += dt
    for g in gpus:
        g._reset_tick()
    return w, prog
