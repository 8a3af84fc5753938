"""Time-varying knobs (events), Prometheus-style cumulative histograms and small helpers."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from gputop.schema import EngineHistogram


@dataclass(frozen=True)
class Ev:
    """A knob ``key`` moving from its default towards ``val`` between t0 and t1 (seconds from
    the trace's start).  shape: "step" (sudden, 2 s edges), "ramp" (linear over ``ramp_s``,
    then held), "onoff" (on ``on_s`` / off ``off_s`` bursts inside the window)."""

    key: str
    t0: float
    t1: float
    val: float
    shape: str = "step"
    ramp_s: float = 60.0
    on_s: float = 30.0
    off_s: float = 30.0

    def weight(self, t: float) -> float:
        if t < self.t0 or t >= self.t1:
            return 0.0
        if self.shape == "ramp":
            return min(1.0, (t - self.t0) / max(1.0, self.ramp_s))
        if self.shape == "onoff":
            k = (t - self.t0) % (self.on_s + self.off_s)
            return 1.0 if k < self.on_s else 0.0
        return min(1.0, (t - self.t0) / 2.0 + 0.5, (self.t1 - t) / 2.0 + 0.5)


class Knobs:
    def __init__(self, events=()):
        self.events = tuple(events)

    def get(self, key: str, t: float, default: float = 1.0) -> float:
        value = default
        for ev in self.events:
            if ev.key == key:
                w = ev.weight(t)
                if w:
                    value = value + (ev.val - default) * w
        return value

    def on(self, key: str, t: float) -> float:
        """The strongest weight of any event on ``key`` at t (0..1)."""
        return max((ev.weight(t) for ev in self.events if ev.key == key), default=0.0)


class Hist:
    """A cumulative Prometheus histogram in an engine's real bucket layout."""

    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds):
        self.name = name
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0.0] * (len(self.bounds) + 1)  # the last one: +Inf
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, n: float = 1.0) -> None:
        if n <= 0:
            return
        i = bisect.bisect_left(self.bounds, value)
        self.counts[i] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: float, rng, cv: float = 0.12) -> None:
        """``n`` observations around ``value`` (a few lognormal points, whole counts)."""
        n = int(n + rng.random())
        if n <= 0:
            return
        parts = (0.5, 0.3, 0.2) if n >= 3 else (1.0,)
        left = n
        for k, share in enumerate(parts):
            m = left if k == len(parts) - 1 else int(round(n * share))
            left -= m
            self.observe(value * math.exp(rng.gauss(0, cv)), m)

    def sample(self) -> EngineHistogram:
        cum, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cum.append(run)
        return EngineHistogram(self.name, self.bounds, tuple(cum), self.count, round(self.sum, 6))


VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)


def vllm_len_buckets(max_len: int) -> tuple[float, ...]:
    """vLLM's 1-2-5 series up to max_model_len (request_params_max_tokens and friends)."""
    out, mant, exp = [], (1, 2, 5), 0
    while True:
        for m in mant:
            v = m * 10 ** exp
            if v > max_len:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
             3000.0)


def poisson(rng, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1
