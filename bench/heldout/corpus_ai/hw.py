"""GPU boards of the marketplace, from their datasheets (dense bf16/fp16 tensor FLOP/s with
fp32 accumulate, HBM/GDDR bandwidth, board power) and what NVML exposes on each."""
from __future__ import annotations
from dataclasses import dataclass


@dataclass(frozen=True)
class Board:
    name: str
    mem_gib: float
    bw_gbs: float          # device memory bandwidth, GB/s
    tflops: float          # dense bf16 tensor TFLOP/s at max clock
    tdp_w: float           # default power limit
    idle_w: float
    max_clock: float       # MHz, the boost clock it sits at when unconstrained
    mem_clock: float
    gpm: bool              # NVML GPM (Hopper+ data-centre parts): SM/tensor/DRAM activity
    fan: bool              # actively cooled (fan readable)
    slowdown_c: float      # software thermal slowdown threshold
    pcie_gbs: float        # usable host link GB/s on a full-width slot
    nvlink_gbs: float = 0.0
    reserved_mib: int = 500
    min_limit_w: float = 100.0


BOARDS = {
    "rtx3090": Board("NVIDIA GeForce RTX 3090", 24, 936, 71, 350, 22, 1905, 9751, False, True, 83, 25),
    "rtx4090": Board("NVIDIA GeForce RTX 4090", 24, 1008, 165, 450, 25, 2730, 10501, False, True, 84, 25),
    "rtx5090": Board("NVIDIA GeForce RTX 5090", 32, 1792, 209, 575, 30, 2842, 14001, False, True, 85, 50),
    "a6000": Board("NVIDIA RTX A6000", 48, 768, 155, 300, 23, 1800, 8001, False, True, 86, 25),
    "l40s": Board("NVIDIA L40S", 48, 864, 362, 350, 35, 2520, 9001, False, False, 87, 25),
    "a100pcie": Board("NVIDIA A100 80GB PCIe", 80, 1935, 312, 300, 45, 1410, 1512, False, False, 85, 25),
    "a100sxm": Board("NVIDIA A100-SXM4-80GB", 80, 2039, 312, 400, 55, 1410, 1593, False, False, 85, 25, 300),
    "h100pcie": Board("NVIDIA H100 PCIe", 80, 2000, 756, 350, 50, 1755, 1593, True, False, 87, 50),
    "h100sxm": Board("NVIDIA H100 80GB HBM3", 80, 3350, 989, 700, 70, 1980, 2619, True, False, 87, 50, 450),
    "h200": Board("NVIDIA H200", 140.4, 4800, 989, 700, 75, 1980, 3201, True, False, 87, 50, 450, 615),
}

GPM_FIELDS = ("sm_active_pct", "sm_occupancy_pct", "dram_bw_pct", "tensor_pct",
              "pcie_rx_mib_per_s", "pcie_tx_mib_per_s", "nvlink_rx_mib_per_s",
              "nvlink_tx_mib_per_s")


@dataclass(frozen=True)
class Model:
    name: str
    params_b: float        # billions of parameters (active, for MoE)
    weight_bytes_per_param: float
    layers: int
    kv_heads: int
    head_dim: int
    kv_dtype_bytes: float = 2
    vocab: int = 128256

    def weights_bytes(self, tp: int = 1) -> float:
        return self.params_b * 1e9 * self.weight_bytes_per_param / tp

    def kv_bytes_per_token(self, tp: int = 1) -> float:
        return 2 * self.layers * max(1, self.kv_heads // tp) * self.head_dim * self.kv_dtype_bytes


MODELS = {
    "llama3-8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03, 2, 32, 8, 128),
    "llama3-8b-fp8": Model("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", 8.03, 1, 32, 8, 128),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.6, 2, 28, 4, 128, vocab=152064),
    "qwen14b-awq": Model("Qwen/Qwen2.5-14B-Instruct-AWQ", 14.7, 0.56, 48, 8, 128, vocab=152064),
    "qwen32b-awq": Model("Qwen/Qwen2.5-32B-Instruct-AWQ", 32.5, 0.56, 64, 8, 128, vocab=152064),
    "mistral-small": Model("mistralai/Mistral-Small-24B-Instruct-2501", 23.6, 2, 40, 8, 128, vocab=131072),
    "llama3-70b-awq": Model("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", 70.6, 0.56, 80, 8, 128),
    "llama3-70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6, 2, 80, 8, 128),
    "llama3-70b-fp8": Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6, 1, 80, 8, 128),
    "gemma-27b": Model("google/gemma-3-27b-it", 27.4, 2, 62, 16, 128, vocab=262144),
    "qwen3-30b-a3b": Model("Qwen/Qwen3-30B-A3B", 3.3, 2, 48, 4, 128, vocab=151936),
    "gguf-8b-q4": Model("bartowski/Meta-Llama-3.1-8B-Instruct-GGUF:Q4_K_M", 8.03, 0.6, 32, 8, 128),
    "gguf-13b-q5": Model("TheBloke/Mistral-Nemo-12B-GGUF:Q5_K_M", 12.2, 0.7, 40, 8, 128, vocab=131072),
    "gguf-32b-q4": Model("Qwen/QwQ-32B-GGUF:Q4_K_M", 32.5, 0.6, 64, 8, 128, vocab=152064),
    "phi-mini": Model("microsoft/Phi-3.5-mini-instruct", 3.8, 2, 32, 32, 96, vocab=32064),
}
