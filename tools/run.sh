#!/usr/bin/env bash
# Sets up, builds (Release) and runs the main job: `posenc demo`, RoPE on Llama-3-8B-shaped q/k on
# every SIMD target this CPU runs, each checked against the double-precision reference.
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between checkouts in different folders (CI builds a fresh clone).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
bash tools/setup.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j"${JOBS:-$(nproc)}" --target posenc_cli
build/release/tools/posenc info
build/release/tools/posenc demo
