"""Transformer shapes (from each model's config.json) and the roofline of one step on one rank.

KV bytes per token = 2 (K and V) x layers x KV heads x head dim x 2 bytes (bf16) -- FACTS.md
section 2; tensor parallelism divides the KV heads (and the weights) per rank.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSpec:
    hf: str
    params: float
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    wbytes: float = 2.0

    def kv_per_token(self, tp: int = 1) -> int:
        kvh = max(1, self.kv_heads // tp)
        return 2 * self.layers * kvh * self.head_dim * 2

    def weights(self, tp: int = 1) -> float:
        return self.params * self.wbytes / tp


LLAMA8B = ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 4096, 32, 8, 128, 128256)
QWEN7B = ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 3584, 28, 4, 128, 152064)
MISTRAL7B = ModelSpec("mistralai/Mistral-7B-Instruct-v0.3", 7.25e9, 32, 4096, 32, 8, 128, 32768)
QWEN05B = ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 24, 896, 14, 2, 64, 151936)
QWEN32B = ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 5120, 40, 8, 128, 152064)
LLAMA70B = ModelSpec("meta-llama/Llama-3.3-70B-Instruct", 70.6e9, 80, 8192, 64, 8, 128, 128256)
GEMMA27B = ModelSpec("google/gemma-2-27b-it", 27.2e9, 46, 4608, 32, 16, 128, 256000)
MODELS = {m.hf: m for m in (LLAMA8B, QWEN7B, MISTRAL7B, QWEN05B, QWEN32B, LLAMA70B, GEMMA27B)}


@dataclass
class StepCost:
    t: float  # seconds of GPU work on this rank (own kernels, at this rank's clocks)
    sm: float
    occ: float
    dram: float  # fraction of peak HBM bandwidth while running
    tensor: float
    comm: float  # seconds of collective communication per step (TP)
    nvlink_bytes: float


def step_cost(model: ModelSpec, tp: int, spec, clock_factor: float, mem_factor: float,
              decode: float, attn_tokens: float, prefill: float, prefill_ctx: float,
              graphs: bool = True, extra_bytes: float = 0.0, extra_s: float = 0.0) -> StepCost:
    """One forward step on one tensor-parallel rank.

    decode: decoding sequences (one token each); attn_tokens: KV tokens they attend to;
    prefill: prompt tokens computed in this step, at mean context ``prefill_ctx``.
    Time is the roofline max of HBM traffic (weights + KV read + KV write + activations)
    and dense FLOPs, plus imperfect overlap and a fixed per-layer kernel cost."""
    tokens = decode + prefill
    kvb = model.kv_per_token(tp)
    wbytes = model.weights(tp)
    act = prefill * model.d_model * 2 * model.layers * 6 / tp
    nbytes = wbytes + attn_tokens * kvb + tokens * kvb + act + extra_bytes
    qdim = model.heads * model.head_dim / tp
    gemm_flops = 2 * model.params / tp * tokens
    attn_flops = 4 * model.layers * qdim * (attn_tokens + prefill * (prefill_ctx + prefill / 2))
    eff = 0.70 if tokens >= 1024 else 0.40 + 0.30 * tokens / 1024
    # weight GEMVs reach ~80% of peak HBM bandwidth, paged/flash decode attention over long
    # KV ~90% (a device-to-device copy reads 88% on the H200 in tests/data/h200)
    kv_read = attn_tokens * kvb
    t_mem = ((nbytes - kv_read) / 0.80 + kv_read / 0.90) / (spec.hbm_bw * mem_factor)
    t_comp = (gemm_flops + attn_flops) / (spec.flops * clock_factor * eff)
    fixed = model.layers * (9e-6 if (graphs and prefill == 0) else 22e-6) / clock_factor ** 0.5
    t = max(t_mem, t_comp) + 0.15 * min(t_mem, t_comp) + fixed + extra_s
    dram = min(0.90, nbytes / (t * spec.hbm_bw))
    tensor = min(0.97, 0.93 * (gemm_flops + attn_flops) / (t * spec.flops * clock_factor))
    mem_share = t_mem / (t_mem + t_comp)
    sm = 0.90 + 0.06 * min(1.0, tokens / 256)
    occ = 0.13 + 0.22 * mem_share + 0.25 * (kv_read / nbytes)
    comm = nvl = 0.0
    if tp > 1:
        msg = tokens * model.d_model * 2
        per = msg * 2 * (tp - 1) / tp
        comm = 2 * model.layers * (9e-6 + per / spec.nvlink_bw)
        nvl = 2 * model.layers * per
    return StepCost(t, sm, occ, dram, tensor, comm, nvl)
