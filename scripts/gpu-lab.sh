#!/usr/bin/env bash
# The GPU lab on a machine with an NVIDIA GPU and PyTorch + transformers (the device tool's
# H200): every phase of lab/profiles.py's "gpu" profile, recorded by gputop's real CLI
# beside nvidia-smi dmon, about 5 minutes.  Installs nothing from the network: packages the
# machine lacks travel as wheels in .whl/ (bash scripts/gpu-lab-wheels.sh, here, first).
# Leaves in $OUT (default ./out), 7 files: serve.gputop train.gputop phases.json dmon.txt
# screens.tar report.txt log.txt -- commit them under tests/data/h200/lab/.
# Usage: OUT=/some/dir bash scripts/gpu-lab.sh
# LAB_PROFILE=gpu-train: the training loop alone through a second GPU process, CPU hogs on
# its cores, a cgroup CPU quota and a DataLoader stall (about 4 minutes; commit under
# tests/data/h200/lab-train/).
# A dry run without a GPU: GPU_LAB_ARGS="--device cpu --preset tiny --phase-s 3
# --nvml-stand-in DIR" (arguments added to lab.run's).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/device-env.sh
export PYTHONPATH=".:${PYTHONPATH:-}"
nvidia-smi -L
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv
python3 -c "import os, torch, transformers, pynvml, psutil, prometheus_client, zstandard, textual, regex, yaml
assert torch.cuda.is_available() or os.environ.get('GPU_LAB_ARGS'), 'torch sees no GPU'
print('torch', torch.__version__, 'transformers', transformers.__version__,
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU: a dry run')" \
  || { echo "gpu-lab: a package or the GPU is missing (see above)" >&2; exit 2; }
python3 -m gputop doctor
# shellcheck disable=SC2086  # GPU_LAB_ARGS is a list of arguments
timeout 450 python3 -m lab.run --profile "${LAB_PROFILE:-gpu}" --out "$OUT" ${GPU_LAB_ARGS:-}
rc=$?
echo "lab.run exit $rc"
timeout 120 python3 -m lab.report "$OUT" > "$OUT/report.txt"
cat "$OUT/report.txt"
ls -la "$OUT"
exit $rc
