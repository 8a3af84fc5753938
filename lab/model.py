"""A real transformers architecture with random weights, and a decode forward over a paged
KV cache the lab manages itself.

The model is built from a config (no download): Qwen2.5-0.5B's or Llama-3.2-1B's shapes on
a GPU, a tiny one on the CPU.  Its own modules do the work (embeddings, norms, q/k/v/o
projections, rotary embedding, MLP, LM head); only attention is the lab's: keys and values
live in a pool of fixed-size blocks (as vLLM's PagedAttention keeps them), each sequence
owns a block table, and decode gathers its blocks for scaled-dot-product attention.
``selfcheck`` compares this forward with transformers' own on the same tokens.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import torch
import torch.nn.functional as F

# name -> (transformers class, config fields).  The first two are the published shapes.
PRESETS: dict[str, tuple[str, dict]] = {
    "qwen2.5-0.5b": ("Qwen2", dict(
        hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
        intermediate_size=4864, vocab_size=151936, max_position_embeddings=32768,
        rms_norm_eps=1e-6, tie_word_embeddings=True, rope_theta=1000000.0)),
    "llama-3.2-1b": ("Llama", dict(
        hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8,
        head_dim=64, intermediate_size=8192, vocab_size=128256, max_position_embeddings=131072,
        rms_norm_eps=1e-5, tie_word_embeddings=True, rope_theta=500000.0)),
    # for the CPU: the same architecture, small enough for a test on two crowded cores
    "tiny": ("Qwen2", dict(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        intermediate_size=128, vocab_size=4096, max_position_embeddings=4096,
        rms_norm_eps=1e-6, tie_word_embeddings=True, rope_theta=10000.0)),
}


def build(preset: str, device: str, dtype: torch.dtype, seed: int = 0):
    """The model of ``preset`` with random weights, in eval mode, on ``device``."""
    import transformers

    family, fields = PRESETS[preset]
    config = getattr(transformers, f"{family}Config")(**fields)
    config._attn_implementation = "sdpa"
    torch.manual_seed(seed)
    with torch.device(device):
        model = getattr(transformers, f"{family}ForCausalLM")(config)
    return model.to(dtype).eval()


@dataclass
class CacheShape:
    layers: int
    kv_heads: int
    head_dim: int
    block_size: int
    num_blocks: int
    dtype: torch.dtype

    @property
    def bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * torch.finfo(self.dtype).bits // 8

    @property
    def pool_bytes(self) -> int:
        return self.bytes_per_token * self.block_size * self.num_blocks


class PagedCache:
    """K and V of every layer in ``num_blocks`` blocks of ``block_size`` tokens.  Block 0 is
    never handed out: padded gathers read it and the mask hides it."""

    def __init__(self, shape: CacheShape, device: str):
        self.shape = shape
        slots = shape.num_blocks * shape.block_size
        self.k = torch.zeros(shape.layers, slots, shape.kv_heads, shape.head_dim,
                             dtype=shape.dtype, device=device)
        self.v = torch.zeros_like(self.k)
        self.free = list(range(shape.num_blocks - 1, 0, -1))

    @property
    def usable_blocks(self) -> int:
        return self.shape.num_blocks - 1

    def used_ratio(self) -> float:
        return 1.0 - len(self.free) / self.usable_blocks

    def blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.shape.block_size)

    def allocate(self, count: int) -> list[int] | None:
        if count > len(self.free):
            return None
        return [self.free.pop() for _ in range(count)]

    def release(self, blocks: list[int]) -> None:
        self.free.extend(blocks)

    def copy_blocks(self, src: list[int], dst: list[int]) -> None:
        """Copies whole blocks (a request with n > 1 shares its prompt's keys and values)."""
        bs = self.shape.block_size
        index_src = torch.tensor([b * bs + i for b in src for i in range(bs)], device=self.k.device)
        index_dst = torch.tensor([b * bs + i for b in dst for i in range(bs)], device=self.k.device)
        self.k[:, index_dst] = self.k[:, index_src]
        self.v[:, index_dst] = self.v[:, index_src]


def block_slots(tables: list[list[int]], lengths: list[int], block_size: int,
                device) -> tuple[torch.Tensor, torch.Tensor]:
    """(slots [B, L] holding each sequence's first ``length`` tokens, padded with block 0;
    a mask [B, L] of the real ones), L rounded up to whole blocks.  Built from the block
    tables on the device: a Python list per token would cost more than the step."""
    width = -(-max(lengths) // block_size)
    padded = [t[:width] + [0] * (width - len(t[:width])) for t in tables]
    table = torch.tensor(padded, device=device)
    offsets = torch.arange(block_size, device=device)
    slots = (table[:, :, None] * block_size + offsets).reshape(len(tables), width * block_size)
    mask = torch.arange(width * block_size, device=device)[None, :] < \
        torch.tensor(lengths, device=device)[:, None]
    return slots, mask


class PagedForward:
    """The model's own modules run over the lab's paged cache."""

    def __init__(self, model, cache: PagedCache):
        self.model = model
        self.cache = cache
        inner = model.model
        self.layers = list(inner.layers)
        self.embed = inner.embed_tokens
        self.norm = inner.norm
        self.rotary = inner.rotary_emb
        self.lm_head = model.lm_head
        attn = self.layers[0].self_attn
        self.rope = sys.modules[type(attn).__module__].apply_rotary_pos_emb
        config = model.config
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.scale = 1.0 / math.sqrt(self.head_dim)

    def _qkv(self, layer, h, positions):
        """q [B, H, T, D], k and v [B, Hkv, T, D] with the rotary embedding applied."""
        attn = layer.self_attn
        b, t, _ = h.shape
        q = attn.q_proj(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = attn.k_proj(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = attn.v_proj(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.rotary(v, positions)
        q, k = self.rope(q, k, cos, sin)
        return q, k, v

    def _finish(self, layer, x, attn_out):
        b, t = x.shape[:2]
        x = x + layer.self_attn.o_proj(attn_out.transpose(1, 2).reshape(b, t, -1))
        return x + layer.mlp(layer.post_attention_layernorm(x))

    @torch.inference_mode()
    def prefill(self, tokens: list[int], table: list[int]) -> torch.Tensor:
        """Runs a prompt, writes its keys and values into ``table``'s blocks; returns the
        logits [V] of its last position."""
        device = self.cache.k.device
        ids = torch.tensor([tokens], device=device)
        positions = torch.arange(len(tokens), device=device)[None, :]
        slots = block_slots([table], [len(tokens)], self.cache.shape.block_size,
                            device)[0][0, : len(tokens)]
        x = self.embed(ids)
        for index, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, layer.input_layernorm(x), positions)
            self.cache.k[index, slots] = k[0].transpose(0, 1)
            self.cache.v[index, slots] = v[0].transpose(0, 1)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale,
                                                 enable_gqa=True)
            x = self._finish(layer, x, out)
        return self.lm_head(self.norm(x[:, -1:]))[0, 0]

    @torch.inference_mode()
    def decode(self, last_tokens: list[int], positions: list[int],
               tables: list[list[int]]) -> torch.Tensor:
        """One token for each sequence at ``positions`` (its cache holds the tokens before);
        returns logits [B, V]."""
        device = self.cache.k.device
        bs = self.cache.shape.block_size
        ids = torch.tensor(last_tokens, device=device)[:, None]
        pos = torch.tensor(positions, device=device)[:, None]
        new_slots = torch.tensor([t[p // bs] * bs + p % bs for t, p in zip(tables, positions)],
                                 device=device)
        slots, mask = block_slots(tables, [p + 1 for p in positions], bs, device)
        mask = mask[:, None, None, :]
        x = self.embed(ids)
        for index, layer in enumerate(self.layers):
            q, k, v = self._qkv(layer, layer.input_layernorm(x), pos)
            self.cache.k[index, new_slots] = k[:, :, 0]
            self.cache.v[index, new_slots] = v[:, :, 0]
            keys = self.cache.k[index][slots].transpose(1, 2)  # [B, Hkv, L, D]
            values = self.cache.v[index][slots].transpose(1, 2)
            out = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask,
                                                 scale=self.scale, enable_gqa=True)
            x = self._finish(layer, x, out)
        return self.lm_head(self.norm(x))[:, 0]


def selfcheck(model, device: str, prompt_tokens: int = 24, decode_tokens: int = 4) -> float:
    """Largest |difference| of logits between the paged forward (prefill, then decode one
    token at a time, two sequences batched) and transformers' own forward over the whole
    sequence, relative to the logits' scale."""
    config = model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dtype = next(model.parameters()).dtype
    shape = CacheShape(config.num_hidden_layers, config.num_key_value_heads, head_dim,
                       block_size=16, num_blocks=16, dtype=dtype)
    paged = PagedForward(model, PagedCache(shape, device))
    generator = torch.Generator().manual_seed(1)
    lengths = (prompt_tokens, prompt_tokens // 2 + 3)
    seqs = [torch.randint(3, config.vocab_size, (n + decode_tokens,), generator=generator).tolist()
            for n in lengths]
    tables = [paged.cache.allocate(paged.cache.blocks_for(len(s))) for s in seqs]
    ours = [[paged.prefill(s[:n], t)] for s, n, t in zip(seqs, lengths, tables)]
    for step in range(decode_tokens - 1):
        positions = [n + step for n in lengths]
        logits = paged.decode([s[p] for s, p in zip(seqs, positions)], positions, tables)
        for row, out in zip(logits, ours):
            out.append(row)
    worst = 0.0
    with torch.inference_mode():
        for s, n, out in zip(seqs, lengths, ours):
            full = model(torch.tensor([s], device=device)).logits[0]
            theirs = full[n - 1:n - 1 + len(out)].float()
            mine = torch.stack(out).float()
            worst = max(worst, ((mine - theirs).abs().max() / theirs.abs().max()).item())
    return worst
