"""Seeded randomness, cumulative Prometheus histograms in the engines' real bucket layouts
(from tests/data/metrics: vLLM 0.32, SGLang's source page), launch-latency buckets."""

from __future__ import annotations

import math
import random
import zlib

from gputop.buckets import bucket_index
from gputop.schema import EngineHistogram, LaunchHist

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
VLLM_TOKENS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0,
               10000.0, 20000.0, 50000.0, 100000.0)
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


def rng_for(name: str) -> random.Random:
    return random.Random(zlib.crc32(name.encode()))


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))
    limit, k, p = math.exp(-lam), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


def _cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    if sigma <= 0:
        return 1.0 if x >= median else 0.0
    return 0.5 * (1 + math.erf(math.log(x / median) / (sigma * math.sqrt(2))))


class Hist:
    """One cumulative histogram: observations added as lognormal batches, integer counts."""

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.per = [0] * (len(bounds) + 1)  # last: above the largest bound (+Inf only)
        self.count = 0
        self.sum = 0.0
        self.carry = 0.0

    def observe(self, n: float, median: float, sigma: float = 0.25) -> None:
        if n <= 0 or median <= 0:
            return
        total = n + self.carry
        whole = int(total)
        self.carry = total - whole
        if whole <= 0:
            return
        cdf = [_cdf(b, median, sigma) for b in self.bounds] + [1.0]
        probs = [cdf[0]] + [cdf[i] - cdf[i - 1] for i in range(1, len(cdf))]
        shares = [p * whole for p in probs]
        ints = [int(s) for s in shares]
        rest = whole - sum(ints)
        order = sorted(range(len(shares)), key=lambda i: ints[i] - shares[i])
        for i in order[:rest]:
            ints[i] += 1
        for i, c in enumerate(ints):
            self.per[i] += c
        self.count += whole
        self.sum += whole * median * math.exp(sigma * sigma / 2)

    def one(self, value: float) -> None:
        self._one(value)

    def _one(self, value: float) -> None:
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.per[i] += 1
                break
        else:
            self.per[-1] += 1
        self.count += 1
        self.sum += value

    def snapshot(self) -> EngineHistogram:
        cum, run = [], 0
        for c in self.per[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count), self.sum)


def launch_hist(rng, api: str, pid: int, count: int, median_ns: float, sigma: float,
                tail_frac: float = 0.0, tail_ns: float = 0.0) -> LaunchHist | None:
    """Host-side call durations of one API over one tick: a lognormal body plus a tail of
    calls delayed by ``tail_ns`` (the thread preempted mid-call), in gputop's buckets."""
    if count <= 0:
        return None
    buckets: dict[int, int] = {}
    draws = min(count, 400)
    scale = count / draws
    total_ns, top = 0.0, 0
    for _ in range(draws):
        if tail_frac and rng.random() < tail_frac:
            v = tail_ns * math.exp(rng.gauss(0, 0.6))
        else:
            v = median_ns * math.exp(rng.gauss(0, sigma))
        v = int(max(200, v))
        top = max(top, v)
        total_ns += v
        b = bucket_index(v)
        buckets[b] = buckets.get(b, 0) + 1
    if scale > 1:
        buckets = {b: max(1, int(round(c * scale))) for b, c in buckets.items()}
    n = sum(buckets.values())
    return LaunchHist(api=api, pid=pid, count=n, sum_ns=int(total_ns * n / draws), max_ns=top,
                      buckets=buckets)
