"""Hardware and model facts the simulator uses (published figures, rounded).

Each GPU: memory, peak HBM/GDDR bandwidth, dense bf16 tensor FLOP/s, board power,
idle power, max SM clock, SM count, whether NVML GPM exists (Hopper and newer), and
whether the board has a fan (PCIe cards) or not (SXM).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1 << 30


@dataclass(frozen=True)
class GpuSpec:
    name: str
    mem_bytes: int
    bw: float  # bytes/s
    flops: float  # dense bf16 FLOP/s
    tdp_w: float
    idle_w: float
    clock_mhz: float
    mem_clock_mhz: float
    sms: int
    gpm: bool
    fan: bool
    reserved_bytes: int
    nvlink: bool


GPUS = {
    "H100": GpuSpec("NVIDIA H100 80GB HBM3", 85520809984, 3.35e12, 989e12, 700, 72, 1980, 2619,
                    132, True, False, 567 << 20, True),
    "H200": GpuSpec("NVIDIA H200", 150754820096, 4.8e12, 989e12, 700, 78, 1980, 3201,
                    132, True, False, 644939776, True),
    "B200": GpuSpec("NVIDIA B200", 191514411008, 8.0e12, 2250e12, 1000, 140, 1965, 3996,
                    148, True, False, 1 << 30, True),
    "A100": GpuSpec("NVIDIA A100-SXM4-80GB", 85899345920, 2.04e12, 312e12, 400, 55, 1410, 1593,
                    108, False, False, 512 << 20, True),
    "L40S": GpuSpec("NVIDIA L40S", 48305799168, 0.864e12, 362e12, 350, 35, 2520, 9001,
                    142, False, True, 500 << 20, False),
    "A10G": GpuSpec("NVIDIA A10G", 24146608128, 0.6e12, 70e12, 300, 25, 1710, 6251,
                    80, False, True, 330 << 20, False),
}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float  # total
    active: float  # per token (MoE)
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    weight_bytes_per_param: float = 2.0
    kv_dtype_bytes: int = 2

    def kv_bytes_per_token(self, tp: int = 1) -> int:
        return int(2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim
                   * self.kv_dtype_bytes)

    def weights_bytes(self, tp: int = 1) -> int:
        return int(self.params * self.weight_bytes_per_param / tp)

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 32, 8, 128,
                         4096, 128256),
    "qwen7b": ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.6e9, 7.6e9, 28, 28, 4, 128, 3584, 152064),
    "llama70b": ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 70.6e9, 80, 64, 8, 128,
                          8192, 128256),
    "qwen32b": ModelSpec("Qwen/Qwen3-32B", 32.8e9, 32.8e9, 64, 64, 8, 128, 5120, 151936),
    "qwen32b_fp8": ModelSpec("Qwen/Qwen3-32B-FP8", 32.8e9, 32.8e9, 64, 64, 8, 128, 5120, 151936,
                             weight_bytes_per_param=1.0),
    "llama3b": ModelSpec("meta-llama/Llama-3.2-3B-Instruct", 3.21e9, 3.21e9, 28, 24, 8, 128,
                         3072, 128256),
    "qwen30a3": ModelSpec("Qwen/Qwen3-30B-A3B-Instruct-2507", 30.5e9, 3.3e9, 48, 32, 4, 128,
                          2048, 151936),
    "gptoss120": ModelSpec("openai/gpt-oss-120b", 117e9, 5.1e9, 36, 64, 8, 64, 2880, 201088,
                           weight_bytes_per_param=0.54),
    "mistral24b": ModelSpec("mistralai/Mistral-Small-3.2-24B-Instruct-2506", 23.6e9, 23.6e9, 40,
                            32, 8, 128, 5120, 131072),
    "qwen14b_q4": ModelSpec("Qwen2.5-14B-Instruct-Q4_K_M.gguf", 14.8e9, 14.8e9, 48, 40, 8, 128,
                            5120, 152064, weight_bytes_per_param=0.6),
    "llama8b_q8": ModelSpec("Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", 8.03e9, 8.03e9, 32, 32, 8,
                            128, 4096, 128256, weight_bytes_per_param=1.06),
    "gemma27b_q4": ModelSpec("gemma-3-27b-it-Q4_K_M.gguf", 27.0e9, 27.0e9, 62, 32, 16, 128, 5376,
                             262144, weight_bytes_per_param=0.6),
}
