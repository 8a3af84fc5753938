"""Model facts (public configs): parameters, layers, heads, KV bytes per token in bf16/fp16."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    name: str
    params: float
    layers: int
    heads: int
    kv_heads: int
    hidden: int
    head_dim: int = 128
    vocab: int = 128256
    weight_bytes: float = 0.0  # 0: 2 bytes a parameter (bf16)
    files: int = 4

    @property
    def wbytes(self) -> float:
        return self.weight_bytes or 2 * self.params

    @property
    def kv_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * 2

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "dtype": "bfloat16"}


MODELS = {
    "llama8b": Model("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 32, 8, 4096),
    "qwen7b": Model("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 28, 4, 3584, vocab=152064),
    "llama70b": Model("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 64, 8, 8192, files=30),
    "qwen32b": Model("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 40, 8, 5120, vocab=152064,
                     files=17),
    "llama3b": Model("meta-llama/Llama-3.2-3B-Instruct", 3.21e9, 28, 24, 8, 3072, files=2),
    "r1q14b": Model("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", 14.8e9, 48, 40, 8, 5120,
                    vocab=152064, files=4),
    "mistral7b_q4": Model("mistral-7b-instruct-v0.3.Q4_K_M.gguf", 7.25e9, 32, 32, 8, 4096,
                          vocab=32768, weight_bytes=4.37e9, files=1),
    "llama8b_q8": Model("Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", 8.03e9, 32, 32, 8, 4096,
                        weight_bytes=8.54e9, files=1),
}
