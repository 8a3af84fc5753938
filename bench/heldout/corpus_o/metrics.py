"""Engine histograms with the engines' real bucket layouts (tests/data/metrics), and model facts."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from gputop.schema import EngineHistogram

# vLLM V1 (0.10 .. 0.32): the layouts of the real 0.32 page; unchanged since 0.10
VLLM_TTFT = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
             7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
            10.0, 20.0, 40.0, 80.0)
VLLM_E2E = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
            120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
VLLM_N = (1.0, 2.0, 5.0, 10.0, 20.0)


def vllm_1_2_5(max_len: int) -> tuple[float, ...]:
    out, mant, exp = [], (1, 2, 5), 1
    while True:
        for m in mant:
            v = m * exp
            if v > max_len:
                return tuple(float(x) for x in out)
            out.append(v)
        exp *= 10


# SGLang (python/sglang/srt/.../collector.py, as on the captured page)
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


class Hist:
    __slots__ = ("name", "bounds", "counts", "count", "sum")

    def __init__(self, name: str, bounds: tuple[float, ...]):
        self.name = name
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float, n: int = 1) -> None:
        if n <= 0:
            return
        self.counts[bisect.bisect_left(self.bounds, value)] += n
        self.count += n
        self.sum += value * n

    def spread(self, value: float, n: int, rng, width: float = 0.12) -> None:
        """``n`` observations around ``value`` (step-to-step variation)."""
        if n <= 0:
            return
        if n < 4:
            for _ in range(n):
                self.observe(value * (1 + (rng.random() - 0.5) * 2 * width))
            return
        a = n // 4
        c = n // 4
        self.observe(value * (1 - width), a)
        self.observe(value * (1 + width * 1.3), c)
        self.observe(value, n - a - c)

    def snapshot(self) -> EngineHistogram:
        cum, acc = [], 0
        for c in self.counts[:-1]:
            acc += c
            cum.append(float(acc))
        return EngineHistogram(self.name, self.bounds, tuple(cum), float(self.count),
                               round(self.sum, 6))


@dataclass(frozen=True)
class ModelCfg:
    name: str
    params: float  # parameters active per token
    weight_bytes: float  # whole model, as stored
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    heads: int
    vocab: int
    dtype: str = "bfloat16"

    def kv_bytes_per_token(self, tp: int = 1, kv_dtype_bytes: int = 2) -> int:
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * kv_dtype_bytes

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": self.dtype}


MODELS = {
    "llama8b": ModelCfg("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 16.06e9, 32, 8, 128, 4096, 32, 128256),
    "llama70b": ModelCfg("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 141.2e9, 80, 8, 128, 8192, 64, 128256),
    "llama70b_fp8": ModelCfg("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 72.0e9, 80, 8, 128, 8192, 64, 128256),
    "qwen05b": ModelCfg("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.99e9, 24, 2, 64, 896, 14, 151936),
    "qwen7b": ModelCfg("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 15.2e9, 28, 4, 128, 3584, 28, 152064),
    "qwen32b": ModelCfg("Qwen/Qwen3-32B", 32.8e9, 65.6e9, 64, 8, 128, 5120, 64, 151936),
    "mistral7b_awq": ModelCfg("TheBloke/Mistral-7B-Instruct-v0.2-AWQ", 7.24e9, 4.15e9, 32, 8, 128, 4096, 32, 32000, "float16"),
    "llama8b_q4": ModelCfg("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 4.92e9, 32, 8, 128, 4096, 32, 128256, "float16"),
    "qwen14b_q5": ModelCfg("Qwen2.5-14B-Instruct-Q5_K_M.gguf", 14.7e9, 10.5e9, 48, 8, 128, 5120, 40, 152064, "float16"),
    "gemma27b": ModelCfg("google/gemma-3-27b-it", 27.4e9, 54.8e9, 62, 16, 128, 5376, 32, 262208),
}
