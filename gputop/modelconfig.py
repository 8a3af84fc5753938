"""A model's config as input: the fields KV bytes per token depend on, read and checked.

Beside the schema because both sides of a frame need it: the engine source reads a
model's ``config.json`` and puts its raw KV fields in the frame
(``EngineSample.kv_config``), and the model derives KV bytes per token from them
(``model/kv.py``: the maths, and only there).  A config is input: every field is checked
here, and a bad one is a ``ConfigError`` naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DTYPE_BYTES = {"fp32": 4, "float32": 4, "bf16": 2, "bfloat16": 2, "fp16": 2, "float16": 2,
               "half": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "float8_e4m3fn": 1}
LARGEST = 2**20  # no real model has a million layers, heads or head dims

# The config fields KV bytes per token depend on: what an engine sample carries in its frame
# (``EngineSample.kv_config``) so the model layer derives the number, and a replay with a
# corrected ``--model`` derives it again.
KV_CONFIG_KEYS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                  "hidden_size", "head_dim", "kv_lora_rank", "qk_rope_head_dim",
                  "torch_dtype", "dtype")


class ConfigError(ValueError):
    """The config cannot give KV bytes per token; the message names the field."""


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


def kv_config(config: Any) -> dict[str, Any]:
    """The fields of a model config that KV bytes per token depend on (text_config merged)."""
    if not isinstance(config, dict):
        return {}
    merged = text_config(config)
    return {k: merged[k] for k in KV_CONFIG_KEYS
            if k in merged and isinstance(merged[k], (int, float, str)) and not isinstance(merged[k], bool)}


@dataclass(frozen=True)
class KvFields:
    """A config's KV fields, checked: what ``model/kv.py`` computes bytes per token from."""

    layers: int
    dtype_bytes: int
    tp: int
    mla: bool
    # MLA (kv_lora_rank): one latent per layer; as given, for the formula's text
    latent: int | None = None
    kv_lora_rank: Any = None
    qk_rope_head_dim: Any = None
    # otherwise: the KV heads (all of them, before tensor parallelism) and the head dim
    kv_heads: int | None = None
    head_dim: int | None = None


def kv_fields(config: dict[str, Any], kv_dtype: str = "auto", tp: int = 1) -> KvFields:
    """The checked KV fields of ``config`` for this KV dtype and tensor-parallel size;
    ConfigError naming the first field that cannot give KV bytes per token (or a TP
    size no engine can shard these KV heads over)."""
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
        return KvFields(layers, size, tp, True, latent=latent,
                        kv_lora_rank=config["kv_lora_rank"],
                        qk_rope_head_dim=config.get("qk_rope_head_dim") or 0)
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
    return KvFields(layers, size, tp, False, kv_heads=kv_heads, head_dim=head_dim)
