"""Models and the roofline that turns one engine step into GPU time and activity.

A decode step reads every weight once (bytes / HBM bandwidth) plus the KV of every
running sequence; a prefill chunk is matrix work (2 x params FLOPs per token plus
attention over its context).  Step GPU time is the larger of memory and compute time
plus a part of the smaller (they do not overlap perfectly), plus a per-kernel floor
(about ten kernels per layer, ~2 us each of tail and launch gap even inside a CUDA
graph).  Tensor-parallel ranks add two all-reduces per layer over NVLink.

Architecture figures are the models' published configs (FACTS.md 2 for the KV formula).
Peak figures (FACTS.md / the brief): H100 3.35 TB/s and ~990 dense bf16 TFLOP/s, H200
4.8 TB/s, A100 2.0 TB/s and 312 TFLOP/s; reachable fractions below are typical of
serving kernels (GEMV at ~80% of HBM peak, GEMM at ~65% of tensor peak).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.corpus.hw import GpuSpec, bw_clock_factor

BW_EFF = 0.80  # decode GEMV reaches ~80% of HBM peak
KV_BW_EFF = 0.90  # long-context attention streams KV at ~90%
FLOP_EFF = 0.62  # serving GEMMs reach ~60-65% of dense peak
KERNELS_PER_LAYER = 10
KERNEL_FLOOR_S = 1.8e-6


@dataclass(frozen=True)
class ModelSpec:
    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    dtype_bytes: int = 2

    @property
    def weight_bytes(self) -> float:
        return self.params * self.dtype_bytes

    def kv_bytes_per_token(self, tp: int = 1) -> int:
        """2 (K and V) x layers x KV heads per rank x head dim x dtype bytes (FACTS.md 2);
        KV heads are split across tensor-parallel ranks (replicated when fewer)."""
        heads = max(1, self.kv_heads // tp) if self.kv_heads >= tp else 1
        return 2 * self.layers * heads * self.head_dim * self.dtype_bytes

    def kv_config(self) -> dict:
        return {"num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.kv_heads, "hidden_size": self.hidden,
                "head_dim": self.head_dim, "torch_dtype": "bfloat16"}


MODELS = {m.name: m for m in (
    ModelSpec("meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 4096, 32, 8, 128, 128256),
    ModelSpec("Qwen/Qwen2.5-7B-Instruct", 7.62e9, 28, 3584, 28, 4, 128, 152064),
    ModelSpec("meta-llama/Llama-3.1-70B-Instruct", 70.6e9, 80, 8192, 64, 8, 128, 128256),
    ModelSpec("Qwen/Qwen2.5-72B-Instruct", 72.7e9, 80, 8192, 64, 8, 128, 152064),
    ModelSpec("Qwen/Qwen2.5-32B-Instruct", 32.8e9, 64, 5120, 40, 8, 128, 152064),
    ModelSpec("Qwen/Qwen2.5-0.5B-Instruct", 0.49e9, 24, 896, 14, 2, 64, 151936),
    ModelSpec("meta-llama/Llama-2-13b-chat-hf", 13.0e9, 40, 5120, 40, 40, 128, 32000),
)}


@dataclass
class StepWork:
    """What one engine step computes (on every rank)."""

    decodes: int = 0  # sequences producing one token
    decode_ctx: int = 0  # sum of their context lengths (KV read per step)
    prefill_tokens: int = 0  # prompt tokens computed this step
    prefill_attn: float = 0.0  # sum over prefill tokens of their attention context
    prefill_kv_read: int = 0  # earlier KV read by chunked prefills
    logits: int = 0  # rows through the LM head (decodes + prefills finishing)
    logprob_rows: int = 0  # rows needing full-vocabulary fp32 log-softmax (logprobs)
    prompt_logprob_rows: int = 0  # prompt positions needing full-vocabulary logits


@dataclass
class RankCost:
    t: float  # GPU time of the rank's own work (s), before waiting for others
    sm: float
    occ: float
    tensor: float
    dram: float


def rank_cost(model: ModelSpec, tp: int, spec: GpuSpec, clock: float, w: StepWork,
              share: float = 0.0, mix: tuple | None = None) -> RankCost:
    """GPU time and activity of one rank for one step at ``clock`` MHz.  ``share``: the
    fraction of the GPU another context takes by time-slicing (its kernels run in slices
    this rank would have used)."""
    bwf = bw_clock_factor(clock, spec)
    bw = spec.hbm_bw * BW_EFF * bwf
    peak = spec.flops * clock / spec.max_clock
    fl = peak * FLOP_EFF
    tokens = w.decodes + w.prefill_tokens
    wbytes = model.weight_bytes / tp
    kvb = model.kv_bytes_per_token(tp)
    kv_read = (w.decode_ctx + w.prefill_kv_read) * kvb
    act_bytes = tokens * model.hidden * 2 * model.layers * 6 / tp  # activations in and out
    mem_bytes = wbytes + kv_read + act_bytes
    # paged attention streaming long contexts reaches ~90% of HBM peak, GEMV ~80%
    t_mem = (wbytes + act_bytes) / bw + kv_read / (spec.hbm_bw * KV_BW_EFF * bwf)
    heads = max(1, model.heads // tp)
    flops = (2.0 * model.params / tp * tokens
             + 4.0 * model.layers * heads * model.head_dim * (w.decode_ctx + w.prefill_attn)
             + 2.0 * model.hidden * model.vocab / tp * (w.logits + w.prompt_logprob_rows))
    t_comp = flops / fl
    big, small = (t_mem, t_comp) if t_mem >= t_comp else (t_comp, t_mem)
    t_main = big + 0.2 * small
    floor = model.layers * KERNELS_PER_LAYER * KERNEL_FLOOR_S
    # logprobs: fp32 log-softmax + top-k over the whole vocabulary for every row asking
    lp_rows = w.logprob_rows + w.prompt_logprob_rows
    lp_bytes = lp_rows * model.vocab * 4 * 6.0
    t_lp = lp_bytes / bw + (lp_rows * 4e-6 if lp_rows else 0.0)
    t = t_main + floor + t_lp
    # activity while this rank's kernels are resident
    # small weight matrices (a 0.5B model) give a decode GEMV too few thread blocks to
    # cover all SMs; a 7B+ layer's matrices (or any large batch) cover them
    per_layer = model.params / tp / model.layers
    width = min(1.0, (per_layer / 60e6) ** 0.5) if tokens < 64 else 1.0
    mem_frac = t_mem / (t_mem + t_comp + 1e-12)
    sm = (t_main * (0.86 * width + 0.08 * (1 - mem_frac)) + floor * 0.30 * width + t_lp * 0.75) / t
    occ = (t_main * (0.14 + 0.22 * (kv_read / mem_bytes)) + floor * 0.05 + t_lp * 0.35) / t
    tensor = min(0.97, flops / peak / t * 1.2)
    dram = min(0.95, (mem_bytes + lp_bytes) / (spec.hbm_bw * t))
    if share > 0:  # the other context's kernels run in the slices this rank lost
        t = t / (1.0 - share)
        if mix:
            sm = (1 - share) * sm + share * mix[0]
            occ = (1 - share) * occ + share * mix[1]
            tensor = (1 - share) * tensor + share * mix[2]
            dram = (1 - share) * dram + share * mix[3]
    return RankCost(t, min(1.0, sm), min(1.0, occ), tensor, dram)


def allreduce_time(model: ModelSpec, tp: int, spec: GpuSpec, tokens: int) -> float:
    """Two all-reduces per layer of tokens x hidden bf16 over NVLink (one-shot custom
    all-reduce for small messages: latency-bound at ~7 us each)."""
    if tp <= 1:
        return 0.0
    msg = tokens * model.hidden * 2
    per = 7e-6 + msg * 2.0 * (tp - 1) / tp / spec.nvlink_bw
    return 2 * model.layers * per
