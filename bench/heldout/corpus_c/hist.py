"""Prometheus histograms as the engines define them (bucket upper bounds, +Inf implied)."""

from __future__ import annotations

import bisect

from gputop.schema import EngineHistogram

# vLLM V1 (vllm/v1/metrics/loggers.py, as the 0.32 page in tests/data shows them)
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)


def one_two_five(largest: float) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets up to max_model_len."""
    out, m = [], 1
    while True:
        for k in (1, 2, 5):
            if k * m > largest:
                return tuple(out)
            out.append(float(k * m))
        m *= 10


# SGLang (python/sglang/srt/metrics/collector.py defaults, as tests/data/metrics/sglang-source)
SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
           200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
             3000.0)


class Hist:
    __slots__ = ("name", "bounds", "counts", "total", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)
        self.total = 0.0
        self.sum = 0.0

    def observe(self, value: float, count: float = 1.0) -> None:
        if count <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += count
        self.total += count
        self.sum += value * count

    def spread(self, value: float, count: float) -> None:
        """``count`` observations around ``value`` (steps differ a little from each other)."""
        if count <= 0:
            return
        whole = int(count)
        lo, hi = int(whole * 0.2), int(whole * 0.15)
        self.observe(value * 0.9, lo)
        self.observe(value * 1.12, hi)
        self.observe(value, whole - lo - hi)

    def sample(self) -> EngineHistogram:
        cum, acc = [], 0.0
        for c in self.counts[:-1]:
            acc += c
            cum.append(acc)
        return EngineHistogram(self.name, self.bounds, tuple(cum), self.total, self.sum)
