"""The VRAM split as a pane shows it, with the words that say where each part came from.

``vram_split`` puts the card's memory into parts (``model/vram.py``) from the frame's
readings and writes each part's provenance (the engine that reported it, the model
config it was derived from, or why it is unknown); the e key and the snapshot show it.
"""

from __future__ import annotations

from typing import cast

from gputop.model.kvpool import kv_bytes_per_token, kv_pool_bytes
from gputop.model.vram import VramSplit, split_vram
from gputop.schema import EngineSample, GpuSample, ProcSample
from gputop.units import size_text


def pool_provenance(engine: EngineSample) -> str:
    per_token = kv_bytes_per_token(engine)
    how = "" if engine.kv_bytes_per_token is not None else \
        f" (derived from the model config, KV dtype {engine.cache_dtype or 'auto'})"
    if engine.kv_pool_bytes is not None:
        return f"KV pool: {engine.kv_pool_bytes:,} B reported by the engine ({engine.kind})"
    if kv_pool_bytes(engine) is not None and engine.kv_pool_tokens is not None:
        source = "llama-server's --ctx-size (one KV cell per token, allocated at start)" \
            if engine.kind == "llamacpp" else f"{engine.kind} metrics"
        return (f"KV pool: {engine.kv_pool_tokens:,} tokens x "
                f"{size_text(per_token)}/token{how}, from {source}")
    if kv_pool_bytes(engine) is not None:
        return (f"KV pool: {engine.num_gpu_blocks:,} blocks x {engine.block_size} tokens x "
                f"{size_text(per_token)}/token{how}, from {engine.kind} cache config")
    if per_token is None and (engine.num_gpu_blocks or engine.kv_pool_tokens):
        return "KV pool: unknown (KV bytes per token needs the model's config: --model PATH)"
    return "KV pool: unknown (" + NO_POOL.get(engine.kind, "the engine does not report its "
                                                           "cache config") + ")"


# why an engine's page cannot give the KV pool, for the VRAM split's provenance
NO_POOL = {
    "llamacpp": "llama.cpp's /metrics reports no KV pool: it removed kv_cache_usage_ratio and "
                "kv_cache_tokens (llama.cpp #13660); its pool is the context it was started "
                "with (--ctx-size x KV bytes per token), which the page does not carry",
    "tgi": "TGI reports no KV-cache metric",
}


def engine_on_gpu(engine: EngineSample | None, gpu_index: int,
                  processes: tuple[ProcSample, ...]) -> bool:
    if engine is None:
        return False
    if gpu_index in engine.gpu_indices:
        return True
    pids = set(engine.pids)
    return any(p.gpu_index == gpu_index and p.pid in pids for p in processes)


def vram_split(gpu: GpuSample, processes: tuple[ProcSample, ...],
               engine: EngineSample | None, tree: frozenset[int] | None = None) -> VramSplit | None:
    """The card's split; with a pinned ``tree`` the tree's memory is the process part and
    an engine counts only when it belongs to the tree."""
    if gpu.mem_total_bytes is None or gpu.mem_used_bytes is None:
        return None
    # what processes can use: the card less the driver's reserve (NVML v2 reports it apart)
    usable_bytes = gpu.mem_total_bytes - (gpu.mem_reserved_bytes or 0)
    on_gpu = [p for p in processes if p.gpu_index == gpu.index]
    if tree is not None and (engine is None or not set(engine.pids) & tree):
        mine = [p for p in on_gpu if p.pid in tree]
        known = all(p.mem_bytes is not None for p in mine)
        tree_bytes = sum(cast(int, p.mem_bytes) for p in mine) if known else None
        return split_vram(usable_bytes, gpu.mem_used_bytes, tree_bytes,
                          provenance=(f"pinned tree: {len(mine)} process(es) on this GPU, from "
                                      "the per-process list; the rest is other processes",))
    if not engine_on_gpu(engine, gpu.index, processes):
        return split_vram(usable_bytes, gpu.mem_used_bytes,
                          provenance=("used memory: card total from the GPU source; no engine "
                                      "on this GPU, so its contents are unsplit",))
    engine = cast(EngineSample, engine)  # engine_on_gpu: there is one
    engine_procs = [p for p in on_gpu if p.pid in engine.pids]
    engine_bytes = None
    if engine_procs and all(p.mem_bytes is not None for p in engine_procs):
        engine_bytes = sum(cast(int, p.mem_bytes) for p in engine_procs)
    provenance: tuple[str, ...] = (
        f"weights: {size_text(engine.weights_bytes)} per GPU of {engine.model or 'the model'}"
        + (f" ({engine.weights_source}, TP {engine.tensor_parallel or 1})"
           if engine.weights_source else "")
        if engine.weights_bytes is not None
        else "weights: unknown (no safetensors found for the model: --model PATH)",
        pool_provenance(engine),
        f"KV used: pool x {engine.kind} KV usage {engine.kv_usage_ratio:.1%}"
        if engine.kv_usage_ratio is not None else
        f"KV used: unknown ({engine.kind} reports no KV usage)",
        f"engine process memory: {size_text(engine_bytes)} from the per-process list"
        if engine_bytes is not None else "engine process memory: unknown (not in the process list)",
    )
    if engine.note:
        provenance += (f"note: {engine.note}",)
    return split_vram(usable_bytes, gpu.mem_used_bytes, engine_bytes,
                      engine.weights_bytes, kv_pool_bytes(engine), engine.kv_usage_ratio,
                      provenance)
