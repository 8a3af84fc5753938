"""GPU boards and models the corpus runs on: the numbers the step-time model needs.

Board figures are the public datasheet ones (memory as nvidia-smi shows it, TDP, boost
clock, HBM/GDDR bandwidth, dense bf16 TFLOP/s); idle powers are what a board draws with
no context (P8) and with a CUDA context held at full clock (the real H200 recording:
78 W at 345 MHz, 121 W at 1980 MHz).  GPM (SM/DRAM/tensor activity) only on Hopper+.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 2**20
GIB = 2**30


@dataclass(frozen=True)
class Board:
    key: str
    name: str
    mem_bytes: int
    tdp_w: float
    idle_w: float  # no context, P8
    ctx_w: float  # a context held, nothing running, full clock
    max_mhz: float
    idle_mhz: float
    mem_mhz: float
    bw_gbs: float  # memory bandwidth, GB/s
    tflops: float  # dense bf16
    sms: int
    gpm: bool
    nvlink_gbs: float  # per direction, per GPU (0: PCIe only)
    temp_per_w: float  # degrees C above inlet at TDP, sustained
    reserve_bytes: int  # the driver's reserve (NVML v2 "reserved")


BOARDS = {
    "H100": Board("H100", "NVIDIA H100 80GB HBM3", 81559 * MIB, 700, 70, 115, 1980, 345, 2619,
                  3350, 989, 132, True, 450, 40, 512 * MIB),
    "H200": Board("H200", "NVIDIA H200", 150754820096, 700, 78, 121, 1980, 345, 3201,
                  4800, 989, 132, True, 450, 40, 615 * MIB),
    "A100": Board("A100", "NVIDIA A100-SXM4-80GB", 81920 * MIB, 400, 55, 88, 1410, 210, 1593,
                  2039, 312, 108, False, 300, 36, 470 * MIB),
    "L40S": Board("L40S", "NVIDIA L40S", 46068 * MIB, 350, 32, 78, 2520, 210, 9001,
                  864, 362, 142, False, 0, 42, 420 * MIB),
    "A10G": Board("A10G", "NVIDIA A10G", 23028 * MIB, 300, 25, 58, 1710, 210, 6251,
                  600, 70, 80, False, 0, 45, 380 * MIB),
    "B200": Board("B200", "NVIDIA B200", 183359 * MIB, 1000, 140, 190, 1965, 600, 3996,
                  8000, 2250, 148, True, 900, 38, 700 * MIB),
}


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float  # billions
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    dtype_bytes: float = 2.0  # weights

    def weights_bytes(self, tp: int = 1) -> int:
        return int(self.params_b * 1e9 * self.dtype_bytes / tp)

    def kv_bytes_per_token(self, tp: int = 1, kv_dtype_bytes: float = 2.0) -> int:
        heads = max(1, self.kv_heads // tp)
        return int(2 * self.layers * heads * self.head_dim * kv_dtype_bytes)

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_key_value_heads": self.kv_heads,
                "num_attention_heads": self.hidden // self.head_dim,
                "hidden_size": self.hidden, "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 32, 4096, 8, 128),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 28, 3584, 4, 128),
    "qwen14b": Model("Qwen/Qwen2.5-14B-Instruct", 14.7, 48, 5120, 8, 128),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8, 64, 5120, 8, 128),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 80, 8192, 8, 128),
    "llama70b_fp8": Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6, 80, 8192, 8, 128,
                          1.0),
    "mistral7b_q4": Model("mistral-7b-instruct-v0.3.Q4_K_M.gguf", 7.25, 32, 4096, 8, 128, 0.6),
    "llama8b_q8": Model("Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", 8.03, 32, 4096, 8, 128, 1.06),
    "qwen32b_q4": Model("qwen2.5-32b-instruct-q4_k_m.gguf", 32.8, 64, 5120, 8, 128, 0.6),
    "gemma27b": Model("google/gemma-2-27b-it", 27.2, 46, 4608, 16, 128),
}
