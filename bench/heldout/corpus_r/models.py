"""Model shapes (from each model's config.json on the Hugging Face hub, as published)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    name: str
    params: float  # total parameters
    active: float  # parameters touched per token (MoE: the active experts)
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    wbytes: float = 2.0  # bytes per parameter (bf16 2, fp8 1, GGUF Q8_0 1.06, Q4_K_M 0.57)
    kv_dtype: int = 2

    def kv_bytes(self, tp: int = 1) -> int:
        """KV bytes per token per tensor-parallel rank (KV heads split across ranks)."""
        heads = max(1, self.kv_heads // tp)
        return 2 * self.layers * heads * self.head_dim * self.kv_dtype

    def weights(self, tp: int = 1) -> float:
        return self.params * self.wbytes / tp


QWEN05 = Model("Qwen/Qwen2.5-0.5B-Instruct", 0.494e9, 0.494e9, 24, 14, 2, 64, 896, 151936)
QWEN15 = Model("Qwen/Qwen2.5-1.5B-Instruct", 1.54e9, 1.54e9, 28, 12, 2, 128, 1536, 151936)
QWEN7 = Model("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 7.62e9, 28, 28, 4, 128, 3584, 152064)
QWEN32 = Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 32.8e9, 64, 40, 8, 128, 5120, 152064)
QWEN32_FP8 = Model("Qwen/Qwen2.5-32B-Instruct-FP8-Dynamic", 32.8e9, 32.8e9, 64, 40, 8, 128, 5120, 152064,
                   wbytes=1.0)
QWEN3_8 = Model("Qwen/Qwen3-8B", 8.19e9, 8.19e9, 36, 32, 8, 128, 4096, 151936)
QWEN3_30A3 = Model("Qwen/Qwen3-30B-A3B", 30.5e9, 3.3e9, 48, 32, 4, 128, 2048, 151936)
QWEN3_235_FP8 = Model("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", 235e9, 22e9, 94, 64, 4, 128, 4096, 151936,
                      wbytes=1.0)
LLAMA8 = Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 8.03e9, 32, 32, 8, 128, 4096, 128256)
LLAMA8_FP8 = Model("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", 8.03e9, 8.03e9, 32, 32, 8, 128,
                   4096, 128256, wbytes=1.0)
LLAMA70 = Model("meta-llama/Llama-3.1-70B-Instruct", 70.6e9, 70.6e9, 80, 64, 8, 128, 8192, 128256)
LLAMA70_FP8 = Model("RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", 70.6e9, 70.6e9, 80, 64, 8, 128,
                    8192, 128256, wbytes=1.0)
LLAMA3B_Q4 = Model("Llama-3.2-3B-Instruct-Q4_K_M.gguf", 3.21e9, 3.21e9, 28, 24, 8, 128, 3072,
                   128256, wbytes=0.57)
QWEN7_Q8 = Model("qwen2.5-7b-instruct-q8_0.gguf", 7.62e9, 7.62e9, 28, 28, 4, 128, 3584, 152064,
                 wbytes=1.06)
LLAMA8_Q4 = Model("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 8.03e9, 32, 32, 8, 128, 4096,
                  128256, wbytes=0.57)
MIXTRAL = Model("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7e9, 12.9e9, 32, 32, 8, 128, 4096,
                32000)
