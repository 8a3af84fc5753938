#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PyTorch (the device tool's H200): run gputop's real CLI
# (record, serve, snapshot, the live dashboard) on real NVML under five PyTorch phases.
# Installs nothing from the network: packages missing there travel as wheels in .whl/
# (see README "GPU check").  Results land in $OUT (default ./out); about 2 minutes.
# Usage: OUT=/some/dir bash scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device-env.sh
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
python3 -c "import pynvml, psutil, prometheus_client, zstandard, textual, regex, yaml" \
  || { echo "gpu-check: a package is missing (see above)" >&2; exit 2; }
PYTHONPATH=".:${PYTHONPATH:-}" python3 -m gputop doctor
export PYTHONPATH=".:${PYTHONPATH:-}"
timeout 400 python3 scripts/gpu_check.py
echo "gpu_check exit $?"
ls -la "$OUT"
