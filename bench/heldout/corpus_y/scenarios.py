"""The support queue: one function per ticket.  Each builds the machine, runs what the
customer ran (and what went wrong), and measures the window from a simulated quantity."""

from __future__ import annotations

import math

from .job import Job, Profile
from .serve import MODELS, Req, Serve
from .sim import GiB, World, measure_window, run, seed_of

REGISTRY = []


def ticket(fn):
    REGISTRY.append(fn)
    return fn


def start_wall(name):
    return 1797100000.0 + (seed_of(name, "wall") % (60 * 86400))


def ramp(t, a, b, r=8.0):
    """0 before a, 1 inside [a+r, b-r], linear ramps (a fault coming on and going away)."""
    if t < a or t > b:
        return 0.0
    return min(1.0, (t - a) / r, (b - t) / r) if r > 0 else 1.0


def multipliers(world, dur, burst=0.0, diurnal=None, seed="traffic"):
    """Per-second traffic multipliers: slow drift, bursts (a Markov on/off), a diurnal shape."""
    import random
    rng = random.Random(seed_of(world.name, seed))
    out, level, on = [], 1.0, False
    for s in range(int(dur) + 3):
        level += (1.0 - level) * 0.02 + rng.gauss(0, 0.03)
        if burst:
            if on and rng.random() < 0.08:
                on = False
            elif not on and rng.random() < 0.02:
                on = True
        m = max(0.1, level) * (1 + (burst if on else 0.0))
        if diurnal is not None:
            m *= diurnal(s)
        out.append(m)
    return out


def rate(mult, base):
    return lambda t: base * mult[min(len(mult) - 1, int(t))]


def chat(prompt=900, out=220, cached=0.35, sp=0.8, so=0.7, cap=4096, extra=None):
    """Request sampler: lognormal prompt and output lengths; ``extra(rng, t)`` may return a
    Req to send instead (the oversized one, a long prompt)."""
    def fn(rng, t):
        if extra is not None:
            r = extra(rng, t)
            if r is not None:
                return r
        p = int(min(32000, max(16, rng.lognormvariate(math.log(prompt), sp))))
        o = int(min(cap, max(4, rng.lognormvariate(math.log(out), so))))
        c = int(p * cached * rng.random() * 2) if cached else 0
        c = min(c, p - 1) // 16 * 16
        return Req(t, p, c, o, max_tokens=max(o, rng.choice((256, 512, 1024, 2048, 4096))))
    return fn


def pool_for(world, model, tp, util=0.9, extra_gib=3.0):
    m = MODELS[model]
    b = world.board
    free = b.mem_total * util - m.weights / tp - extra_gib * GiB
    return int(max(4096, free / (m.kvb / tp)) // 16 * 16)


def other_tenant(world, gpus, name, cmdline, mem, start_i, end_i=10**9, user="svc-batch",
                 container=""):
    p = world.add_proc(name, cmdline, gpus, {g: mem for g in gpus}, user=user,
                       alive=(start_i, end_i), container=container, rss=3 * GiB,
                       start_time_s=round(world.start_wall + start_i * world.tick - 2, 2))
    return p


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def finish(world, truth, series=None, rel=0.5, absolute=0.05, span=5, base_s=60.0, gap_s=25.0,
           above=True, workloads=(), pin=None, cores=(2, 3)):
    run(world, workloads, pin=pin, cores=cores)
    win = None
    if truth["cause"] is not None:
        s = series(world) if callable(series) else series
        win = measure_window(world, s[:world.n], int(base_s / world.tick), rel, absolute, span,
                             gap_s, above)
        if win is None:
            import os
            if not os.environ.get("CORPUS_Y_DEBUG"):
                raise RuntimeError(f"{world.name}: the fault never showed")
            print("NO WINDOW", world.name, [round(x, 3) for x in s[::20]])
    truth["window"] = win
    truth.setdefault("culprit_gpus", None)
    truth.update(gpus=world.ngpu, gpu_model=world.board.name, tick_s=world.tick,
                 start_wall_s=world.wall(0) - world.tick, name=world.name)
    return truth, world.frames()


# ------------------------------------------------------------------ quantities for windows
def util_of(w, gs):
    return [mean(min(1.0, w.busy[g][i] / w.tick) for g in gs) for i in range(w.n)]


def dram_of(w, gs):
    return [mean(min(1.0, w.bytes[g][i] / (w.board.hbm * w.tick)) for g in gs) for i in range(w.n)]


def clock_of(w, gs):
    return [mean(w.gstate[g][i][2] / w.board.max_clock for g in gs) for i in range(w.n)]


def shared_busy(w, proc, g):
    return [proc.gpu_share[g][i] / w.tick for i in range(w.n)]


def preempt_rate(w, eng):
    out, prev = [], 0.0
    for i in range(w.n):
        e = w.engine_samples[i]
        tot = 0.0 if e is None else ((e.preemptions_total or 0) + (e.retracted_requests_total or 0))
        waiting = 0.0 if e is None else (e.requests_waiting or 0) * ((e.kv_usage_ratio or 0) > 0.95)
        out.append(max(0.0, tot - prev) + 0.2 * waiting)
        prev = tot
    return out


def waste(w):
    out, prev = [], None
    for i in range(w.n):
        e = w.engine_samples[i]
        if e is None:
            out.append(out[-1] if out else 0.0)
            continue
        if e.spec_accept_ratio is not None:
            out.append(1 - e.spec_accept_ratio)
            continue
        cur = (e.spec_draft_tokens_total or 0, e.spec_accepted_tokens_total or 0)
        if prev is None or cur[0] <= prev[0]:
            out.append(out[-1] if out else 0.0)
        else:
            out.append(1 - (cur[1] - prev[1]) / (cur[0] - prev[0]))
        prev = cur
    return out


def job_series(job, key, n, rank=None):
    v = job.st[key] if rank is None else job.st[key][rank]
    return [x / job.w.tick for x in v[:n]]


def env_series(w, fn, key, default):
    return [fn(i).get(key, default) for i in range(w.n)]


from . import tickets  # noqa: E402,F401  (registers the tickets)
