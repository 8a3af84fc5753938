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
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from gputop.schema import Frame

DTYPE_BYTES = {"fp32": 4, "float32": 4, "bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2,
               "half": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "float8_e4m3fn": 1}
TOKENS = (1024, 4096, 8192, 32768, 131072)
REQUESTS = (1, 8, 32, 128)


class ConfigError(ValueError):
    """The config cannot give KV bytes per token; the message names the field."""


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


LARGEST = 2**20  # no real model has a million layers, heads or head dims


def _whole(name: str, value: Any, minimum: int) -> int:
    """A config field as a whole number in [minimum, LARGEST]; ConfigError naming it
    otherwise (a config is input: Infinity, NaN, 1e308, strings and bools are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or int(value) != value:
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        bound = "> 0" if minimum == 1 else f">= {minimum}"
        raise ConfigError(f"{name} must be {bound}, got {value}")
    if value > LARGEST:
        raise ConfigError(f"{name} = {value} is implausibly large")
    return int(value)


def _positive_int(config: dict[str, Any], name: str) -> int:
    if name not in config:
        raise ConfigError(f"config lacks {name}")
    return _whole(name, config[name], 1)


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """Multimodal configs keep the language model's fields under ``text_config``."""
    if "num_hidden_layers" not in config and isinstance(config.get("text_config"), dict):
        return {**config, **config["text_config"]}
    return config


def dtype_bytes(config: dict[str, Any], kv_dtype: str = "auto") -> int:
    if kv_dtype != "auto":
        if kv_dtype not in DTYPE_BYTES:
            raise ConfigError(f"unknown KV dtype {kv_dtype!r}; use auto, bf16, fp16, fp8 or fp32")
        return DTYPE_BYTES[kv_dtype]
    name = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16")
    return DTYPE_BYTES.get(name, 2)


def kv_layout(config: dict[str, Any], kv_dtype: str = "auto", tp: int = 1) -> KvLayout:
    if not isinstance(config, dict):
        raise ConfigError("config is not a JSON object")
    if tp < 1:
        raise ConfigError(f"--tp must be >= 1, got {tp}")
    config = text_config(config)
    layers = _positive_int(config, "num_hidden_layers")
    size = dtype_bytes(config, kv_dtype)
    if config.get("kv_lora_rank"):
        latent = _positive_int(config, "kv_lora_rank") + _whole(
            "qk_rope_head_dim", config.get("qk_rope_head_dim") or 0, 0)
        return KvLayout(latent * layers * size, layers, None, latent, size, True, tp,
                        f"1 x {layers} layers x ({config['kv_lora_rank']} + "
                        f"{config.get('qk_rope_head_dim') or 0}) latent x {size} B (MLA, "
                        "every rank holds the whole latent)")
    heads = _positive_int(config, "num_attention_heads")
    kv_heads = _positive_int(config, "num_key_value_heads") if "num_key_value_heads" in config \
        else heads
    if config.get("head_dim"):
        head_dim = _positive_int(config, "head_dim")
    else:
        hidden = _positive_int(config, "hidden_size")
        if hidden % heads:
            raise ConfigError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
        head_dim = hidden // heads
    if kv_heads % tp and tp % kv_heads:
        # vLLM splits the KV heads over the ranks, or replicates them when there are fewer
        # heads than ranks; any other layout is refused at start-up
        raise ConfigError(f"--tp {tp} and {kv_heads} KV heads: neither divides the other, "
                          "so no engine can shard this model that way")
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


# The config fields KV bytes per token depend on: what an engine sample carries in its frame
# (``EngineSample.kv_config``) so the model layer derives the number, and a replay with a
# corrected ``--model`` derives it again.
KV_CONFIG_KEYS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                  "hidden_size", "head_dim", "kv_lora_rank", "qk_rope_head_dim",
                  "torch_dtype", "dtype")


def kv_config(config: Any) -> dict[str, Any]:
    """The fields of a model config that KV bytes per token depend on (text_config merged)."""
    if not isinstance(config, dict):
        return {}
    merged = text_config(config)
    return {k: merged[k] for k in KV_CONFIG_KEYS
            if k in merged and isinstance(merged[k], (int, float, str)) and not isinstance(merged[k], bool)}


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
