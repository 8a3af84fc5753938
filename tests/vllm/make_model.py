"""Build a tiny random-weight Llama and a byte-level BPE tokenizer, offline.

No model hub is reachable here, so the model vLLM serves in the tests is made on the
spot: hidden 128, 2 layers, 4 attention heads, 2 KV heads, head_dim 64, bf16, a
vocabulary of 8192 tokens trained on generated text.  Random weights produce nonsense
text, which is all a throughput and latency test needs.
Usage: python make_model.py OUT_DIR   (run with the vLLM virtual environment's python)
"""

import json
import random
import sys
from pathlib import Path

VOCAB = 8192


def corpus(lines: int = 20000):
    rng = random.Random(0)
    words = ["gpu", "kernel", "token", "cache", "batch", "latency", "memory", "tensor",
             "request", "server", "model", "layer", "head", "block", "queue", "warp"]
    for _ in range(lines):
        yield " ".join(rng.choice(words) + str(rng.randint(0, 999)) for _ in range(12))


def main(out: Path) -> None:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<s>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>")
    fast.save_pretrained(out)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=128, intermediate_size=256,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=64, max_position_embeddings=2048, torch_dtype="bfloat16",
                         bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)
    (out / "gputop-tiny-llama.json").write_text(json.dumps({"built_by": "tests/vllm/make_model.py"}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
