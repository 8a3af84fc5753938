#!/usr/bin/env bash
# Installs everything the test suite needs (system packages too, when root) and runs it.
# Usage: bash scripts/test.sh [pytest args]   (ruff and mypy run first, then pytest)
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: tmux gives the TUI tests a real terminal; OpenSSH a real SSH session;
# prometheus (with promtool) scrapes `gputop serve` and checks the shipped rules.
missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)  # a TLS certificate for serve's test
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)  # the stand-in CUDA and NVML libraries
command -v node >/dev/null 2>&1 || missing+=(nodejs)  # the Prometheus Operator's CRD schemas
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ "${GPUTOP_SKIP_LLAMACPP:-0}" != "1" ]; then  # llama-server from source
    command -v cmake >/dev/null 2>&1 || missing+=(cmake)
    command -v g++ >/dev/null 2>&1 || missing+=(g++)
fi
{ command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; } || missing+=(openssh-server)
command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "scripts/test.sh: please install: ${missing[*]}" >&2
        exit 1
    fi
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# eBPF (bcc, kernel headers, tracefs) for the launch-latency tests: root only.
if [ "$(id -u)" -eq 0 ]; then
    bash scripts/setup-ebpf.sh
fi

# A real vLLM (CPU build) and a tiny model for tests/test_vllm.py, its torch and transformers
# for the GPU lab on the CPU (tests/test_lab.py) (~4 minutes the first time;
# GPUTOP_SKIP_VLLM=1 skips both on purpose).
if [ "${GPUTOP_SKIP_VLLM:-0}" != "1" ]; then
    bash scripts/vllm-env.sh
fi

# A real llama.cpp llama-server built from source and a tiny GGUF model for
# tests/test_llamacpp.py (~4-6 minutes on two cores the first time, seconds after;
# GPUTOP_SKIP_LLAMACPP=1 skips both on purpose). Needs cmake and a C++ compiler.
if [ "${GPUTOP_SKIP_LLAMACPP:-0}" != "1" ]; then
    bash scripts/llamacpp-env.sh
fi

# The ServiceMonitor and PodMonitor in contrib/kubernetes are validated against the
# Prometheus Operator's CRD schemas, as npm's @kubernetes-models/prometheus-operator ships
# them (tests/test_kubernetes.py; 29 MB in .npm-k8s/, seconds once cached)
if [ ! -d .npm-k8s/node_modules/@kubernetes-models/prometheus-operator ]; then
    mkdir -p .npm-k8s
    (cd .npm-k8s && npm install --no-audit --no-fund --silent \
        @kubernetes-models/prometheus-operator@6.0.0)
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
# The distribution was named gputop before; PyPI's gputop is another project (gputop/install.py)
if .venv/bin/python -m pip show gputop >/dev/null 2>&1; then
    .venv/bin/python -m pip uninstall -y -q gputop
fi
.venv/bin/python -m pip install -q -e '.[test]'
# the habits before the tests (pyproject.toml's [tool.ruff] and [tool.mypy]): the lint with
# the layering's banned imports, then the types (strict on the model and the schema)
.venv/bin/python -m ruff check .
.venv/bin/python -m mypy
exec .venv/bin/python -m pytest -q "$@"
