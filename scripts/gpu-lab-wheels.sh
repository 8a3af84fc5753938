#!/usr/bin/env bash
# Here, before a device run of scripts/gpu-lab.sh: the wheels gputop needs that the H200
# image lacks (/work/.library/device/KINDS.md lists what it has: no textual, no zstandard,
# and textual wants newer rich / pygments / markdown-it-py than it may carry), for its
# Python 3.12, into .whl/ (git-ignored; name it in the device call's carry).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl \
    textual==8.2.8 rich==15.0.0 pygments==2.21.0 markdown-it-py==4.3.0 mdit-py-plugins==0.7.0 \
    platformdirs==4.14.9 zstandard==0.25.0
ls -la .whl
