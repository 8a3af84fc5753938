"""A tiny random-weight Llama written as GGUF, for the real llama-server tests.

No hub, no conversion: ``convert_hf_to_gguf.py`` refuses a tokenizer trained locally
(FACTS.md section 11), so the tokenizer keys are copied from a vocab-only GGUF that ships
in llama.cpp's own tree (``models/ggml-vocab-llama-spm.gguf``: Llama 2's 32,000-token
SentencePiece vocabulary) and the tensors are written with gguf-py's writer.  Tiny
dimensions (embedding 64, 2 layers, 4 heads, 2 KV heads, head dim 16) keep a CPU decode
step well under a millisecond of matrix work, so the server's own loop is what the
tests load.  Runs in the llama.cpp environment's venv (gguf-py and numpy).

Usage: python make_model.py VOCAB.gguf OUT.gguf
"""

from __future__ import annotations

import sys

import gguf
import numpy as np

EMBED = 64
LAYERS = 2
HEADS = 4
KV_HEADS = 2
HEAD_DIM = EMBED // HEADS
FFN = 128
CONTEXT = 2048
TOKENIZER_KEYS = ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
                  "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                  "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                  "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.add_bos_token",
                  "tokenizer.ggml.add_eos_token")


def _value(field: gguf.ReaderField):
    """A reader field's value as the writer takes it (a list for arrays)."""
    kind = field.types[0]
    if kind == gguf.GGUFValueType.ARRAY:
        inner = field.types[1]
        if inner == gguf.GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8", "surrogateescape") for i in field.data]
        return [field.parts[i].tolist()[0] for i in field.data]
    if kind == gguf.GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode()
    return field.parts[field.data[0]].tolist()[0]


def main(vocab_path: str, out_path: str) -> None:
    vocab = gguf.GGUFReader(vocab_path)
    tokens = _value(vocab.fields["tokenizer.ggml.tokens"])
    rng = np.random.default_rng(25)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer = gguf.GGUFWriter(out_path, "llama")
    writer.add_name("gputop-tiny-llama")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    for key in TOKENIZER_KEYS:
        field = vocab.fields[key]
        kind = field.types[0]
        value = _value(field)
        if kind == gguf.GGUFValueType.ARRAY:
            writer.add_array(key, value)
        elif kind == gguf.GGUFValueType.STRING:
            writer.add_string(key, value)
        elif kind == gguf.GGUFValueType.BOOL:
            writer.add_bool(key, bool(value))
        else:
            writer.add_uint32(key, int(value))
    # numpy shapes are (out, in): GGUF stores them reversed, as llama.cpp expects
    writer.add_tensor("token_embd.weight", weight(len(tokens), EMBED))
    writer.add_tensor("output_norm.weight", np.ones(EMBED, dtype=np.float32))
    writer.add_tensor("output.weight", weight(len(tokens), EMBED))
    for i in range(LAYERS):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(EMBED, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.attn_q.weight", weight(HEADS * HEAD_DIM, EMBED))
        writer.add_tensor(f"blk.{i}.attn_k.weight", weight(KV_HEADS * HEAD_DIM, EMBED))
        writer.add_tensor(f"blk.{i}.attn_v.weight", weight(KV_HEADS * HEAD_DIM, EMBED))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weight(EMBED, HEADS * HEAD_DIM))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(EMBED, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weight(FFN, EMBED))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weight(FFN, EMBED))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weight(EMBED, FFN))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_model.py VOCAB.gguf OUT.gguf")
    main(sys.argv[1], sys.argv[2])
