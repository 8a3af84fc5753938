"""Builders shared by the catalogue: traffic shapes, fault ramps, serving boxes, training
jobs.  Every random draw comes from the trace's own ``random.Random`` (seeded from a CRC of
its name)."""

from __future__ import annotations

import math

from .hw import GPUS, MODELS
from .sim import CudaJob, Engine, Trainer
from .world import World


def ramp(a, b, base, val, r=6.0):
    """``base`` outside [a, b), ``val`` inside, with linear ramps of ``r`` seconds."""
    def f(t):
        if t < a or t >= b + r:
            return base
        x = min(1.0, (t - a) / r) if t < b else max(0.0, 1.0 - (t - b) / r)
        return base + (val - base) * x
    return f


def traffic(rng, base, burst=0.35, shape=None, dur=400):
    """Arrivals per second: a base rate, an optional shape over time (diurnal, slow start),
    and bursts (a client's batch, a retry storm) of 5-25 s."""
    bursts = []
    t = rng.uniform(5, 40)
    while t < dur:
        bursts.append((t, rng.uniform(5, 25), rng.uniform(0.3, 1.0) * burst))
        t += rng.expovariate(1 / 45.0)

    def f(t):
        v = base * (shape(t) if shape else 1.0)
        for s, d, h in bursts:
            if s <= t < s + d:
                v *= 1 + h
        return v * (1 + 0.08 * math.sin(t / 17.0))
    return f


def lognorm(median, sigma, lo, hi):
    return lambda r, t: min(hi, max(lo, r.lognormvariate(math.log(median), sigma)))


def mix(parts):
    """[(weight, sampler)] -> one sampler."""
    total = sum(w for w, _ in parts)

    def f(r, t):
        x = r.random() * total
        for w, s in parts:
            x -= w
            if x <= 0:
                return s(r, t)
        return parts[-1][1](r, t)
    return f


def switch(at, before, after, until=1e9):
    return lambda r, t: after(r, t) if at <= t < until else before(r, t)


def healthy_host(rng, cpus=64, load=0.15):
    base = load * 100

    def f(t):
        return (base * rng.uniform(0.85, 1.15), 0.6 + load * 4 * rng.uniform(0.5, 1.5),
                max(2, int(cpus * load * rng.uniform(0.6, 1.2))))
    return f


def contended_host(rng, a, b, cpus=64, load=0.15, psi=45.0, rq_mult=2.4, r=8.0):
    healthy = healthy_host(rng, cpus, load)
    x = ramp(a, b, 0.0, 1.0, r)

    def f(t):
        c, p, q = healthy(t)
        k = x(t)
        return (c + (98 - c) * k, p + (psi - p) * k * rng.uniform(0.85, 1.1),
                int(q + (cpus * rq_mult - q) * k * rng.uniform(0.8, 1.2)))
    return f


def serve_box(name, rng, *, kind="vllm", version="0.32", gpu="H100", n_gpus=1, tp=1, replicas=1,
              model="llama8b", rate=None, prompt=None, out=None, hit=0.3, dur=240, tick=1.0,
              scrape=1.0, ebpf=False, mode="single", host=None, cpus=64, throttle=None,
              temp=None, power_limit=None, jobs=(), per_replica=None, t0=0.0, idle_drop=None,
              jitter_gpu=None, **engine_kw):
    g = GPUS[gpu]
    m = MODELS[model]
    engines = []
    for r in range(replicas):
        kw = dict(engine_kw)
        if per_replica:
            kw.update(per_replica(r))
        rate_r = kw.pop("rate", rate) or traffic(rng, 6.0, dur=dur + 60)
        port = 8000 + (r if mode == "multi" else 0)
        url = f"http://127.0.0.1:{port}/metrics"
        gpus = list(range(r * tp, r * tp + tp))
        if kind == "llamacpp":
            kw.setdefault("max_seqs", 4)
        e = Engine(rng, kind, version, m, g, gpus, 4000 + 400 * r, url, rate=rate_r,
                   prompt_fn=kw.pop("prompt", prompt) or lognorm(900, 0.9, 16, 16000),
                   out_fn=kw.pop("out", out) or lognorm(220, 0.8, 4, 4000),
                   hit_fn=kw.pop("hit_fn", None) or (lambda t, h=hit: h),
                   replica="", **kw)
        engines.append(e)
    w = World(rng, name, g, n_gpus, dur, tick, t0, engines + list(jobs), scrape_s=scrape,
              engine_mode="dp" if mode == "dp" else "single", dp_url="http://127.0.0.1:8000/metrics",
              ebpf=ebpf, host_cpu_fn=host or healthy_host(rng, cpus), cpus=cpus,
              throttle_fn=throttle, temp_fn=temp, power_limit_fn=power_limit,
              idle_clock_drop=g.fan if idle_drop is None else idle_drop, jitter_gpu_fn=jitter_gpu)
    return w, engines


def train_box(name, rng, *, gpu="H100", n_gpus=8, dur=240, tick=1.0, scrape=5.0, ebpf=False,
              host=None, cpus=128, throttle=None, temp=None, power_limit=None, jobs=(), t0=0.0,
              jitter_gpu=None, **trainer_kw):
    g = GPUS[gpu]
    tr = Trainer(rng, g, list(range(n_gpus)), 7000, **trainer_kw)
    w = World(rng, name, g, n_gpus, dur, tick, t0, [tr] + list(jobs), scrape_s=scrape, ebpf=ebpf,
              host_cpu_fn=host or healthy_host(rng, cpus, 0.35), cpus=cpus, throttle_fn=throttle,
              temp_fn=temp, power_limit_fn=power_limit, idle_clock_drop=g.fan,
              jitter_gpu_fn=jitter_gpu)
    return w, tr


def job(rng, gpu_index, pid, name, cmdline, shape, mem_gib, user="alice", container="",
        alive=(-1e9, 1e9)):
    return CudaJob(rng, gpu_index, pid, name, cmdline, shape, int(mem_gib * 2**30), user=user,
                   container=container, alive=alive)
