#!/usr/bin/env bash
# A real llama.cpp `llama-server` built from source, and a tiny random-weight GGUF model,
# for tests/test_llamacpp.py.  Idempotent: reuses the directory when it is complete.
#
# The source is the PyPI source distribution of llama-cpp-python, which vendors the whole
# llama.cpp tree (tools/server, gguf-py, vocab-only GGUFs under models/).  Only the
# llama-server target is built, CPU only, statically linked, so the ~180 MB tree is
# deleted afterwards and the cache is the binary, a small venv with gguf-py and the model.
# About 6 minutes on 2 shared cores the first time (344 s measured: download 40 s, build ~4.5 min), seconds after.
#
# Usage: bash scripts/llamacpp-env.sh
#   GPUTOP_LLAMACPP_DIR=DIR       put it elsewhere (default .llamacpp)
#   GPUTOP_LLAMACPP_BUILD_S=SECS  give up on the build after SECS (default 1200)
#   GPUTOP_LLAMACPP_JOBS=N        parallel compile jobs (default: the CPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${GPUTOP_LLAMACPP_DIR:-.llamacpp}
version=0.3.36
vocab=ggml-vocab-llama-spm.gguf  # Llama 2's 32,000-token SentencePiece vocabulary
jobs=${GPUTOP_LLAMACPP_JOBS:-$(nproc)}

if [ ! -f "$dir/.ready-$version" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/src" "$dir/bin" "$dir/models"
    started=$(date +%s)
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install -q --upgrade pip >/dev/null
    "$dir/venv/bin/python" -m pip download -q --no-deps --no-binary :all: \
        "llama-cpp-python==$version" -d "$dir/src"
    tar -xzf "$dir/src/llama_cpp_python-$version.tar.gz" -C "$dir/src"
    tree="$dir/src/llama_cpp_python-$version/vendor/llama.cpp"
    # gguf-py from the same tree: the writer for the tiny model, matching this server
    "$dir/venv/bin/python" -m pip install -q "$tree/gguf-py"
    cp "$tree/models/$vocab" "$dir/models/"
    cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >"$dir/cmake.log" 2>&1 \
        || { tail -30 "$dir/cmake.log"; exit 1; }
    timeout "${GPUTOP_LLAMACPP_BUILD_S:-1200}" \
        cmake --build "$tree/build" --target llama-server -j "$jobs" >"$dir/build.log" 2>&1 \
        || { tail -30 "$dir/build.log"; echo "llama-server build failed or timed out" >&2; exit 1; }
    cp "$tree/build/bin/llama-server" "$dir/bin/"
    rm -rf "$dir/src"
    echo "built in $(( $(date +%s) - started )) s" >"$dir/.ready-$version"
fi
if [ ! -f "$dir/models/tiny-llama.gguf" ]; then
    "$dir/venv/bin/python" tests/llamacpp/make_model.py "$dir/models/$vocab" \
        "$dir/models/tiny-llama.gguf"
fi
echo "llama-server $version ready in $dir ($(cat "$dir/.ready-$version"))"
