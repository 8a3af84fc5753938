"""Hardware and model facts the simulation is built on (published figures; guesses noted)."""
from __future__ import annotations
from dataclasses import dataclass

GiB = 2**30
MiB = 2**20


@dataclass(frozen=True)
class GpuSpec:
    key: str
    name: str
    mem_mib: int
    reserved_mib: int
    hbm_tb_s: float      # peak DRAM bandwidth
    bf16_tflops: float   # dense
    tdp_w: float
    idle_w: float        # idle with a CUDA context, clocks up
    max_mhz: float
    mem_mhz: float
    gpm: bool            # Hopper and newer: SM/tensor/DRAM activity via NVML GPM
    t_slow_c: float      # software thermal slowdown
    t_inlet_c: float
    r_k_per_w: float     # thermal resistance die <- coolant/air at healthy flow
    sms: int
    nvlink: bool
    pcie_gen: int


SPECS = {
    "h100": GpuSpec("h100", "NVIDIA H100 80GB HBM3", 81559, 520, 3.35, 989, 700, 72, 1980, 2619,
                    True, 87, 28, 0.058, 132, True, 5),
    "h200": GpuSpec("h200", "NVIDIA H200", 143771, 615, 4.8, 989, 700, 78, 1980, 3201,
                    True, 87, 28, 0.056, 132, True, 5),
    "b200": GpuSpec("b200", "NVIDIA B200", 183359, 700, 8.0, 2250, 1000, 140, 1965, 3996,
                    True, 88, 26, 0.040, 148, True, 5),
    "a100-80": GpuSpec("a100-80", "NVIDIA A100-SXM4-80GB", 81920, 480, 2.04, 312, 400, 55, 1410,
                       1593, False, 85, 28, 0.095, 108, True, 4),
    "a100-40": GpuSpec("a100-40", "NVIDIA A100-SXM4-40GB", 40960, 470, 1.555, 312, 400, 52, 1410,
                       1215, False, 85, 28, 0.095, 108, True, 4),
    "l40s": GpuSpec("l40s", "NVIDIA L40S", 46068, 430, 0.864, 362, 350, 34, 2520, 9001, False,
                    88, 32, 0.14, 142, False, 4),
}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params_b: float      # total parameters (billions)
    active_b: float      # active per token (MoE) else = params
    layers: int
    hidden: int
    kv_heads: int
    head_dim: int
    vocab: int
    wbytes: float = 2.0  # bytes per weight (bf16 2, fp8 1, int4 ~0.56)

    @property
    def weight_bytes(self) -> float:
        return self.params_b * 1e9 * self.wbytes

    def kv_bytes_per_token(self, kv_dtype_bytes: float = 2.0) -> float:
        return 2 * self.layers * self.kv_heads * self.head_dim * kv_dtype_bytes


MODELS = {
    "qwen2.5-0.5b": ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49, 0.49, 24, 896, 2, 64, 151936),
    "qwen2.5-1.5b": ModelSpec("Qwen/Qwen2.5-1.5B-Instruct", 1.54, 1.54, 28, 1536, 2, 128, 151936),
    "llama3-8b": ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03, 8.03, 32, 4096, 8, 128, 128256),
    "qwen2.5-7b": ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.6, 7.6, 28, 3584, 4, 128, 152064),
    "qwen3-8b": ModelSpec("Qwen/Qwen3-8B", 8.2, 8.2, 36, 4096, 8, 128, 151936),
    "qwen3-14b": ModelSpec("Qwen/Qwen3-14B", 14.8, 14.8, 40, 5120, 8, 128, 151936),
    "qwen2.5-32b": ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8, 32.8, 64, 5120, 8, 128, 152064),
    "llama3-70b": ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6, 70.6, 80, 8192, 8, 128, 128256),
    "llama3-70b-awq": ModelSpec("lab/Llama-3.3-70B-Instruct-AWQ-int4", 70.6, 70.6, 80, 8192, 8, 128,
                                128256, wbytes=0.56),
    "qwen3-30b-a3b": ModelSpec("Qwen/Qwen3-30B-A3B", 30.5, 3.3, 48, 2048, 4, 128, 151936),
    "llama3.2-1b": ModelSpec("meta-llama/Llama-3.2-1B-Instruct", 1.24, 1.24, 16, 2048, 8, 64, 128256),
    "policy-7b": ModelSpec("lab/policy-7b-grpo", 7.6, 7.6, 28, 3584, 4, 128, 152064),
    "rm-7b": ModelSpec("lab/reward-7b", 7.6, 7.6, 28, 3584, 4, 128, 152064),
}
