"""Small pieces the catalogue builds traces from: demand curves, request mixes, events."""

from __future__ import annotations

import math
from dataclasses import dataclass

from corpus_c.serve import EngineCfg, Knobs, Req
from corpus_c.serving import ServingJob
from corpus_c.world import World


@dataclass
class Truth:
    name: str
    family: str
    cause: str | None
    engine: str
    gpus: int
    gpu_model: str
    tick_s: float
    length_s: float
    window_rel: tuple[float, float] | None = None
    culprit_gpus: tuple[int, ...] | None = None
    note: str = ""
    physics: str = ""
    start_wall_s: float = 0.0
    window: tuple[float, float] | None = None


def const(v):
    return lambda t: v


def ramp(t0, t1, a, b):
    def f(t):
        if t <= t0:
            return a
        if t >= t1:
            return b
        return a + (b - a) * (t - t0) / (t1 - t0)
    return f


def step(t0, a, b, t1=None):
    return lambda t: b if (t >= t0 and (t1 is None or t < t1)) else a


def wave(base, amp, period, phase=0.0):
    return lambda t: max(0.0, base + amp * math.sin(2 * math.pi * (t + phase) / period))


def bursts(low, high, period, on, start=0.0, stop=None):
    def f(t):
        if t < start or (stop is not None and t >= stop):
            return low
        return high if ((t - start) % period) < on else low
    return f


def mix(prompt=800, psig=0.8, out=220, osig=0.7, cached=0.2, pmax=30000, omax=4096, n=1,
        logprobs=0, max_tokens=0):
    def f(t, rng):
        p = int(min(pmax, max(16, rng.lognormvariate(math.log(prompt), psig))))
        o = int(min(omax, max(2, rng.lognormvariate(math.log(out), osig))))
        c = min(0.98, max(0.0, cached + rng.gauss(0, 0.05))) if cached else 0.0
        return Req(arrival=t, prompt=p, out=o, n=n, logprobs=logprobs, cached=c,
                   max_tokens=max_tokens or (1024 if o < 1024 else 4096))
    return f


def blend(t0, t1, a, b, share=1.0):
    """Requests drawn from ``a``, then more and more from ``b`` (up to ``share``) over t0..t1."""
    frac = ramp(t0, t1, 0.0, share)

    def f(t, rng):
        return (b if rng.random() < frac(t) else a)(t, rng)
    return f


def window_mix(t0, t1, a, b, share=1.0):
    """``b`` (a share of the requests) only between t0 and t1."""
    def f(t, rng):
        return (b if (t0 <= t < t1 and rng.random() < share) else a)(t, rng)
    return f


def serving(name, gpu_model, n_gpus, tick, length, kind, lm, rate, mixf, tp=None, cfg=None,
            cpus=64, gpus=None, **kw):
    w = World(name, gpu_model, n_gpus, tick, length, cpus=cpus)
    knobs = Knobs(rate=rate, mix=mixf)
    for key in ("accept", "other", "lp_ms"):
        if key in kw:
            setattr(knobs, key, kw.pop(key))
    gpus = list(gpus if gpus is not None else range(tp or n_gpus))
    job = ServingJob(w, kind, lm, gpus, knobs, cfg=cfg or EngineCfg(kind=kind), **kw)
    w.jobs.append(job)
    return w, job


def cooling(gpus, t0, t1, factor):
    """Thermal resistance of these boards rises to ``factor`` over t0..t1 (a fan failing,
    a blocked filter, a hot aisle)."""
    f = ramp(t0, t1, 1.0, factor)

    def ev(t, w):
        for g in gpus:
            w.boards[g].cooling = f(t)
    return ev


def clock_cap(gpus, t0, frac, reasons, t1=None, ramp_s=0.0):
    def ev(t, w):
        on = t >= t0 and (t1 is None or t < t1)
        for g in gpus:
            b = w.boards[g]
            if on:
                into = 1.0 if not ramp_s else min(1.0, (t - t0) / ramp_s)
                b.f_cap = 1.0 - (1.0 - frac) * into
                b.cap_reasons = reasons
            else:
                b.f_cap, b.cap_reasons = 1.0, ()
    return ev


def power_limit(gpus, t0, watts, t1=None):
    def ev(t, w):
        for g in gpus:
            b = w.boards[g]
            b.power_limit_w = watts if (t >= t0 and (t1 is None or t < t1)) else b.spec.tdp_w
    return ev
