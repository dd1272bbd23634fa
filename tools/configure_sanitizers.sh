#!/usr/bin/env bash
# Configures the sanitizer build that tools/test.sh tests and tools/fuzz.sh fuzzes: clang 14,
# ASan + UBSan, libFuzzer coverage, POSENC_WERROR=ON, no benchmarks.
#   tools/configure_sanitizers.sh BUILD_DIR [more cmake arguments]
# It compiles AVX2 and the fallback EMU128 only (8 and 4 f32 lanes; SSE4 and SSSE3 have 4 like
# EMU128, and AVX3 does not run on the 2-core CI machine) with line tables only, which is enough
# for symbolized reports: with all five targets and full -g a cold build of it took 51 min on
# that machine, with these settings 9.5 min (docs/performance.md §3.5). The release and clang
# shared builds of tools/test.sh still test every target.
set -euo pipefail
cd "$(dirname "$0")/.."
build="$1"
shift
flags="-O2 -gline-tables-only -DNDEBUG"
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" \
  -DPOSENC_HWY_DISABLED_TARGETS="HWY_SSSE3|HWY_SSE4|HWY_AVX3" \
  -DPOSENC_SANITIZE=address,undefined -DPOSENC_BUILD_FUZZERS=ON -DPOSENC_BUILD_BENCH=OFF \
  -DPOSENC_WERROR=ON "$@"
