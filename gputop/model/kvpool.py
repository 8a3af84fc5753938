"""The KV pool in bytes per GPU: reported by the engine, or derived from the frame's raw
model fields (KV bytes per token, ``model/kv.py``) and the engine's blocks or tokens."""

from __future__ import annotations

import functools
from typing import Any

from gputop.model import kv
from gputop.schema import EngineSample


def kv_bytes_per_token(engine: EngineSample) -> int | None:
    """From the frame's raw model fields; a recording made before carried the number."""
    if engine.kv_bytes_per_token is not None:
        return engine.kv_bytes_per_token
    return _kv_bytes_cached(tuple(sorted(engine.kv_config.items())), engine.cache_dtype,
                            engine.tensor_parallel)


@functools.lru_cache(maxsize=64)
def _kv_bytes_cached(config: tuple[tuple[str, Any], ...], cache_dtype: str,
                     tp: int | None) -> int | None:
    return kv.bytes_per_token(dict(config), cache_dtype, tp)


def kv_pool_bytes(engine: EngineSample) -> int | None:
    """Per-GPU KV pool: reported bytes, else blocks x block size x KV bytes per token."""
    if engine.kv_pool_bytes is not None:
        return engine.kv_pool_bytes
    per_token = kv_bytes_per_token(engine)
    if per_token is None:
        return None
    if engine.kv_pool_tokens is not None:
        return engine.kv_pool_tokens * per_token
    if engine.num_gpu_blocks is None or engine.block_size is None:
        return None
    return engine.num_gpu_blocks * engine.block_size * per_token
