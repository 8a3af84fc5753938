"""KV-cache bytes per token from a Hugging Face model config.

bytes/token = 2 (K and V) x layers x KV heads x head dim x dtype bytes.
- KV heads = ``num_key_value_heads`` (GQA/MQA); missing means MHA (= attention heads).
- head dim = ``head_dim`` when the config has one, else hidden_size / attention heads.
- MLA (DeepSeek V2/V3: ``kv_lora_rank``): one latent of kv_lora_rank + qk_rope_head_dim
  elements per layer, stored once (coefficient 1), and every tensor-parallel rank keeps
  the whole latent.
- Tensor parallelism splits the KV heads over ranks (at least one head per rank: with
  fewer heads than ranks they are replicated); a TP size that neither divides nor is a
  multiple of the KV heads is an error, as in vLLM.
The config's fields are read and checked beside the schema (``gputop/modelconfig.py``);
the maths is here.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gputop.modelconfig import ConfigError, kv_config, kv_fields
from gputop.schema import Frame

__all__ = ["REQUESTS", "TOKENS", "ConfigError", "KvLayout", "bytes_per_token", "kv_layout", "table",
           "with_model"]

TOKENS = (1024, 4096, 8192, 32768, 131072)
REQUESTS = (1, 8, 32, 128)


@dataclass(frozen=True)
class KvLayout:
    bytes_per_token: int  # per tensor-parallel rank
    layers: int
    kv_heads_per_rank: int | None  # None for MLA
    head_dim: int | None
    dtype_bytes: int
    mla: bool
    tp: int
    formula: str


def kv_layout(config: dict[str, Any], kv_dtype: str = "auto", tp: int = 1) -> KvLayout:
    f = kv_fields(config, kv_dtype, tp)
    layers, size = f.layers, f.dtype_bytes
    if f.mla:
        latent = f.latent or 0
        return KvLayout(latent * layers * size, layers, None, latent, size, True, tp,
                        f"1 x {layers} layers x ({f.kv_lora_rank} + "
                        f"{f.qk_rope_head_dim}) latent x {size} B (MLA, "
                        "every rank holds the whole latent)")
    kv_heads, head_dim = f.kv_heads or 1, f.head_dim or 1
    per_rank = max(1, kv_heads // tp)
    bytes_per_token = 2 * layers * per_rank * head_dim * size
    return KvLayout(bytes_per_token, layers, per_rank, head_dim, size, False, tp,
                    f"2 x {layers} layers x {per_rank} KV heads"
                    f"{f' (of {kv_heads}, TP {tp})' if tp > 1 else ''} x {head_dim} head dim x "
                    f"{size} B")


def table(layout: KvLayout, tokens: tuple[int, ...] = TOKENS,
          requests: tuple[int, ...] = REQUESTS) -> list[dict[str, int]]:
    return [{"tokens": t, "requests": r, "bytes": layout.bytes_per_token * t * r}
            for t in tokens for r in requests]


def bytes_per_token(config: dict[str, Any], cache_dtype: str = "",
                    tp: int | None = 1) -> int | None:
    """KV bytes per token per GPU from a frame's raw inputs, or None when they do not say."""
    if not config:
        return None
    dtype = cache_dtype if cache_dtype in ("fp8", "fp16", "bf16") else "auto"
    try:
        return kv_layout(dict(config), dtype, tp or 1).bytes_per_token
    except ConfigError:
        return None


def with_model(frame: Frame, config: dict[str, Any], weights_bytes: int | None,
               weights_source: str) -> Frame:
    """``frame`` as if its engine had been read with this model (``replay --model``): the
    raw model fields replaced, so the model layer derives KV bytes per token and the
    weights part again."""
    engine = frame.engine
    if engine is None:
        return frame
    tp = engine.tensor_parallel or 1
    engine = dataclasses.replace(
        engine, kv_config=kv_config(config), kv_bytes_per_token=None,
        weights_bytes=None if weights_bytes is None else weights_bytes // tp,
        weights_source=weights_source if weights_bytes is not None else "")
    return dataclasses.replace(frame, engine=engine)
