"""KV bytes per token against hand-computed values, and `gputop kv` as a user runs it."""

import json
import subprocess
import sys

import pytest

from gputop.model.kv import ConfigError, kv_layout, table
from gputop.modelconfig import kv_fields

LLAMA3_8B = {"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
             "num_key_value_heads": 8, "torch_dtype": "bfloat16"}
GiB = 2**30


@pytest.mark.parametrize("config, kwargs, expected", [
    # GQA, Llama 3 8B: 2 x 32 x 8 x 128 x 2 = 131,072 B = 128 KiB
    (LLAMA3_8B, {}, 131_072),
    # MHA: num_key_value_heads missing means as many as attention heads: 4x
    ({k: v for k, v in LLAMA3_8B.items() if k != "num_key_value_heads"}, {}, 524_288),
    # MQA (one KV head), fp16
    ({**LLAMA3_8B, "num_key_value_heads": 1, "torch_dtype": "float16"}, {}, 2 * 32 * 1 * 128 * 2),
    # explicit head_dim wins over hidden/heads (Gemma-style)
    ({**LLAMA3_8B, "head_dim": 256}, {}, 2 * 32 * 8 * 256 * 2),
    # fp8 KV cache halves it
    (LLAMA3_8B, {"kv_dtype": "fp8"}, 65_536),
    # tensor parallelism splits KV heads over ranks; never below one head per rank
    (LLAMA3_8B, {"tp": 4}, 2 * 32 * 2 * 128 * 2),
    (LLAMA3_8B, {"tp": 16}, 2 * 32 * 1 * 128 * 2),
    # MLA (DeepSeek V3): (512 + 64) x 61 layers x 2 B, coefficient 1, whole latent per rank
    ({"num_hidden_layers": 61, "num_attention_heads": 128, "hidden_size": 7168,
      "kv_lora_rank": 512, "qk_rope_head_dim": 64, "torch_dtype": "bfloat16"}, {"tp": 8},
     (512 + 64) * 61 * 2),
    # a multimodal config keeps the text model under text_config
    ({"text_config": LLAMA3_8B}, {}, 131_072),
])
def test_bytes_per_token(config, kwargs, expected):
    assert kv_layout(config, **kwargs).bytes_per_token == expected


def test_llama3_table_matches_the_article():
    rows = {(r["tokens"], r["requests"]): r["bytes"] / GiB for r in table(kv_layout(LLAMA3_8B))}
    assert rows[(1024, 1)] == pytest.approx(0.125)
    assert rows[(4096, 1)] == 0.5
    assert rows[(8192, 1)] == 1.0
    assert rows[(8192, 32)] == 32.0


@pytest.mark.parametrize("config, message", [
    ({"hidden_size": 4096, "num_attention_heads": 32}, "config lacks num_hidden_layers"),
    ({**LLAMA3_8B, "num_attention_heads": 0}, "num_attention_heads must be > 0"),
    ({**LLAMA3_8B, "num_key_value_heads": 0}, "num_key_value_heads must be > 0"),
    ({k: v for k, v in LLAMA3_8B.items() if k != "hidden_size"}, "config lacks hidden_size"),
    ({**LLAMA3_8B, "num_hidden_layers": "32"}, "must be a whole number"),
    ([1, 2], "not a JSON object"),
])
def test_bad_configs_name_the_field(config, message):
    with pytest.raises(ConfigError, match=message):
        kv_layout(config)
    with pytest.raises(ConfigError, match=message):  # the same check a source makes
        kv_fields(config)


def test_a_source_checks_a_tp_split_without_the_kv_maths():
    """The engine source asks gputop.modelconfig whether a TP size can shard a model's KV
    heads (its note in the frame); bytes per token stay the model's."""
    with pytest.raises(ConfigError, match="--tp 3 and 8 KV heads: neither divides"):
        kv_fields(LLAMA3_8B, tp=3)
    fields = kv_fields(LLAMA3_8B, tp=4)
    assert (fields.layers, fields.kv_heads, fields.head_dim, fields.dtype_bytes) == (32, 8, 128, 2)
    assert kv_layout(LLAMA3_8B, tp=4).bytes_per_token == 2 * 32 * 2 * 128 * 2


def gputop_kv(*args):
    return subprocess.run([sys.executable, "-m", "gputop", "kv", *args], capture_output=True,
                          text=True, timeout=30)


def test_cli_table_and_json(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA3_8B))
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 16_060_522_496}}))
    out = gputop_kv(str(tmp_path))
    assert out.returncode == 0
    assert "131,072 B = 128.0 KiB" in out.stdout
    assert "weights: 14.96 GiB (metadata.total_size" in out.stdout
    line_8192 = next(line for line in out.stdout.splitlines() if line.strip().startswith("8,192"))
    assert "1.00 GiB" in line_8192 and "32.00 GiB" in line_8192
    data = json.loads(gputop_kv(str(tmp_path / "config.json"), "--json", "--tp", "2").stdout)
    assert data["kv_bytes_per_token"] == 65_536 and data["tp"] == 2


def test_cli_finds_a_model_id_in_the_hf_cache(tmp_path):
    snap = tmp_path / "hub" / "models--meta-llama--Llama-3.1-8B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(LLAMA3_8B))
    env = {"HF_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "gputop", "kv", "meta-llama/Llama-3.1-8B"],
                         capture_output=True, text=True, timeout=30, env=env)
    assert out.returncode == 0 and "131,072 B" in out.stdout


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON (line 1"),
    (json.dumps({"hidden_size": 4096}), "config lacks num_hidden_layers"),
    (json.dumps({**LLAMA3_8B, "num_attention_heads": 0}), "num_attention_heads must be > 0"),
])
def test_cli_bad_configs_are_one_line(tmp_path, content, message):
    (tmp_path / "config.json").write_text(content)
    out = gputop_kv(str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr


def test_a_tp_size_no_engine_could_use_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA3_8B, "num_key_value_heads": 2}))
    out = gputop_kv(str(tmp_path), "--tp", "3")
    assert out.returncode == 2 and "--tp 3 and 2 KV heads" in out.stderr
    assert "Traceback" not in out.stderr
    replicated = json.loads(gputop_kv(str(tmp_path), "--tp", "4", "--json").stdout)
    assert replicated["kv_bytes_per_token"] == 2 * 32 * 1 * 128 * 2  # 1 head per rank


def test_a_tiny_model_s_weights_are_not_zero_gib(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA3_8B))
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 4_984_256)
    out = gputop_kv(str(tmp_path))
    assert "weights: 4.75 MiB (size of 1 .safetensors file(s))" in out.stdout


def test_cli_missing_model():
    out = gputop_kv("no/such-model")
    assert out.returncode == 2 and "not a file, a directory, or a model" in out.stderr


@pytest.mark.parametrize("patch, message", [
    ({"num_hidden_layers": "Infinity"}, "num_hidden_layers must be a whole number"),
    ({"num_hidden_layers": 1e308}, "num_hidden_layers = 1e+308 is implausibly large"),
    ({"num_attention_heads": True}, "num_attention_heads must be a whole number"),
    ({"kv_lora_rank": 512, "qk_rope_head_dim": "64"}, "qk_rope_head_dim must be a whole number"),
])
def test_hostile_configs_are_one_line(tmp_path, patch, message):
    text = json.dumps({**LLAMA3_8B, **patch}).replace('"Infinity"', "Infinity")
    (tmp_path / "config.json").write_text(text)
    out = gputop_kv(str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert message in out.stderr


@pytest.mark.parametrize("total", ["1e999", "NaN", '"big"', "-5"])
def test_a_hostile_index_total_size_is_ignored(tmp_path, total):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA3_8B))
    (tmp_path / "model.safetensors.index.json").write_text(
        '{"metadata": {"total_size": %s}}' % total)
    out = gputop_kv(str(tmp_path))
    assert out.returncode == 0 and "Traceback" not in out.stderr and "weights" not in out.stdout


def test_a_fifo_or_a_device_is_never_read(tmp_path):
    import os
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "config.json")
    out = gputop_kv(str(fifo_dir))
    assert out.returncode == 2 and "is a FIFO, not a regular file" in out.stderr
    zero_dir = tmp_path / "zero"
    zero_dir.mkdir()
    (zero_dir / "config.json").symlink_to("/dev/zero")
    out = gputop_kv(str(zero_dir))
    assert out.returncode == 2 and "is a device, not a regular file" in out.stderr
