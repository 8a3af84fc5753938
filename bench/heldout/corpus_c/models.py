"""Model shapes (public configs) and what one forward step costs on one rank."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LM:
    name: str
    params: float  # parameters
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hidden: int
    vocab: int
    weight_bytes: float = 2.0  # per parameter (bf16 2, fp8 1)
    files: int = 4

    def kv_bytes_per_token(self, tp: int = 1) -> int:
        """Per rank: K and V of every layer; KV heads split across ranks (replicated when
        there are fewer KV heads than ranks)."""
        heads = max(1, self.kv_heads // tp) if self.kv_heads >= tp else 1
        return 2 * self.layers * heads * self.head_dim * 2

    def weights_per_rank(self, tp: int = 1) -> int:
        return int(self.params * self.weight_bytes / tp)

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


LLAMA8B = LM("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 32, 8, 128, 4096, 128256)
QWEN7B = LM("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 28, 4, 128, 3584, 152064)
QWEN05 = LM("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 24, 14, 2, 64, 896, 151936, files=1)
LLAMA3B = LM("meta-llama/Llama-3.2-3B-Instruct", 3.21e9, 28, 24, 8, 128, 3072, 128256, files=2)
QWEN32B = LM("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 40, 8, 128, 5120, 152064, files=17)
LLAMA70B = LM("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 64, 8, 128, 8192, 128256,
              files=30)
LLAMA405FP8 = LM("meta-llama/Llama-3.1-405B-Instruct-FP8", 405.9e9, 126, 128, 8, 128, 16384,
                 128256, weight_bytes=1.0, files=109)
MISTRAL24B = LM("mistralai/Mistral-Small-24B-Instruct-2501", 23.6e9, 40, 32, 8, 128, 5120,
                131072, files=10)
GEMMA_GGUF = LM("Llama-3.1-8B-Instruct-Q4_K_M.gguf", 8.03e9, 32, 32, 8, 128, 4096, 128256,
                weight_bytes=0.6, files=1)
