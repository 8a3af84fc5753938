"""Cumulative Prometheus histograms in the engines' own bucket layouts.

vLLM (vllm/v1/metrics/loggers.py, as the real 0.32 page in tests/data/metrics shows):
TTFT, ITL/TPOT, e2e/queue, request_params_n, and 1-2-5 buckets up to max_model_len for
max_tokens / generation tokens.  SGLang (the source page): TTFT, ITL, e2e, queue.
llama.cpp has no histograms.  Frames hold the finite bounds only (+Inf is count)."""

from __future__ import annotations

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
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08,
           0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0,
             2500.0, 3000.0)


def one_two_five(limit: int) -> tuple[float, ...]:
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > limit:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


def _lognorm_cdf(x: float, median: float, sigma: float) -> float:
    if x <= 0:
        return 0.0
    return 0.5 * (1 + math.erf(math.log(x / median) / (sigma * math.sqrt(2))))


class Hist:
    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name, self.bounds = name, bounds
        self.cum = [0.0] * len(bounds)
        self.count = 0.0
        self.sum = 0.0
        self._carry = 0.0

    def observe(self, n: float, median: float, sigma: float = 0.2) -> None:
        """Add about ``n`` observations from a log-normal (fractions carried over ticks)."""
        self._carry += max(0.0, n)
        k = int(self._carry)
        if k <= 0:
            return
        self._carry -= k
        self.add_exact(k, median, sigma)

    def add_exact(self, k: int, median: float, sigma: float) -> None:
        median = max(median, 1e-6)
        prev_n = 0
        for i, b in enumerate(self.bounds):
            upto = int(round(k * _lognorm_cdf(b, median, sigma)))
            upto = max(prev_n, min(k, upto))
            self.cum[i] += upto
            prev_n = upto
        self.count += k
        self.sum += k * median * math.exp(sigma * sigma / 2)

    def observe_value(self, value: float, k: int = 1) -> None:
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.cum[i] += k
        self.count += k
        self.sum += value * k

    def sample(self) -> EngineHistogram:
        return EngineHistogram(self.name, self.bounds, tuple(self.cum), self.count, self.sum)
