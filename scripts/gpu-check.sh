#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PyTorch (the device tool's H200): record gputop's
# NVML frames next to nvidia-smi under a matmul phase and a tiny-kernel phase.
# Installs nothing from the network. Results land in $OUT (default ./out):
#   frames.jsonl  nvidia-smi.csv  phases.json  summary.txt
# Usage: OUT=/some/dir PHASE_S=25 bash scripts/gpu-check.sh   (about 60 s)
set -euo pipefail
cd "$(dirname "$0")/.."
export OUT="${OUT:-out}" PYTHONUNBUFFERED=1
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/gpus.txt"
python3 -c "import pynvml, psutil, prometheus_client" \
  || { echo "gpu-check: needs nvidia-ml-py, psutil, prometheus_client" >&2; exit 2; }
PYTHONPATH=. python3 -m gputop doctor | tee "$OUT/doctor.txt" || true
PYTHONPATH=. python3 scripts/gpu_check.py
