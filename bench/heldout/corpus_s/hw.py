"""GPU and model facts used by the simulators (published figures; H200 calibrated on data/h200)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuSpec:
    name: str
    mem_total: int          # bytes, as NVML reports
    reserved: int           # driver reserve (not in "used")
    bw: float               # HBM bytes/s peak
    flops: float            # dense bf16 FLOP/s peak at max clock
    clk_max: float          # MHz
    clk_idle: float
    mem_clk: float
    power_limit: float      # W default cap
    p_idle: float           # W at P0 with a context, nothing running
    p_sleep: float          # W with no context (P8-ish)
    gpm: bool               # Hopper+: SM/DRAM/tensor activity via GPM
    fan: bool
    nvlink: bool
    t_in: float             # inlet-ish temperature
    r_th: float             # C per W


H100 = GpuSpec("NVIDIA H100 80GB HBM3", 85520809984, 553648128, 3.35e12, 989e12, 1980, 345, 2619,
               700, 118, 72, True, False, True, 29, 0.041)
H200 = GpuSpec("NVIDIA H200", 150754820096, 644939776, 4.8e12, 989e12, 1980, 345, 3201,
               700, 123, 79, True, False, True, 31, 0.039)
A100 = GpuSpec("NVIDIA A100-SXM4-80GB", 85899345920, 592445440, 2.04e12, 312e12, 1410, 210, 1593,
               400, 88, 62, False, False, True, 30, 0.075)
L40S = GpuSpec("NVIDIA L40S", 48305799168, 484442112, 0.864e12, 362e12, 2520, 210, 9001,
               350, 82, 35, False, True, False, 32, 0.12)
B200 = GpuSpec("NVIDIA B200", 192265846784, 1073741824, 8.0e12, 2250e12, 1965, 345, 3996,
               1000, 165, 120, True, False, True, 30, 0.030)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float           # total parameters
    active: float           # parameters touched per token (MoE < params)
    layers: int
    kv_bytes_token: int     # all layers, K and V, bf16, whole model (divide by TP)
    dtype_bytes: int = 2
    vocab: int = 128256

    def weights_per_gpu(self, tp: int) -> float:
        return self.params * self.dtype_bytes / tp

    def kv_per_gpu(self, tp: int) -> float:
        return self.kv_bytes_token / tp


LLAMA8B = ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 131072)
LLAMA1B = ModelSpec("meta-llama/Llama-3.2-1B-Instruct", 1.24e9, 1.24e9, 16, 32768)
QWEN7B = ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 7.62e9, 28, 57344, vocab=152064)
QWEN32B = ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 262144, vocab=152064)
LLAMA70B = ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 327680)
MIXTRAL = ModelSpec("mistralai/Mixtral-8x22B-Instruct-v0.1", 141e9, 39e9, 56, 229376, vocab=32768)
QWEN05B = ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 0.49e9, 24, 12288, vocab=151936)
