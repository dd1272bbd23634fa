#!/usr/bin/env bash
# Sets up, builds and runs every test: a Release build with g++ (library, CLI, benchmarks, all
# tests on every SIMD target this CPU runs), the tests again built with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer on AVX2 and clang's fallback EMU128 only (g++'s is
# SCALAR; tools/configure_sanitizers.sh),
# each libFuzzer target for a bounded time (tools/fuzz.sh; POSENC_FUZZ_SECONDS, default 45), the
# aarch64 suite under QEMU (NEON, SVE at 128/256/512/2048 bits, SVE2; tools/cross_test.sh), the
# whole suite again as a clang 14 shared-library build (BUILD_SHARED_LIBS=ON: the tests of the
# public API run against libposenc.so), and the Python package (pip install of this checkout, then
# pytest: API, ONNX backend node cases, onnx.reference and onnxruntime differential). Set
# POSENC_SHARED_DIR if shared/ is not beside the repository (tests that need it skip, naming the
# missing file); every stage but the aarch64 one builds with POSENC_WERROR=ON (warnings are
# errors); POSENC_SKIP_CROSS=1 skips the aarch64 part (it is on by default and in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between checkouts in different folders (CI builds a fresh clone).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
bash tools/setup.sh --python
jobs="${JOBS:-$(nproc)}"
total_start=$(date +%s)
shared=()
[ -n "${POSENC_SHARED_DIR:-}" ] && shared=(-DPOSENC_SHARED_DIR="$POSENC_SHARED_DIR")

start=$(date +%s)
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOSENC_WERROR=ON "${shared[@]}"
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"
echo "test.sh: release build + tests took $(( $(date +%s) - start )) s"

# The sanitizer stage builds with clang 14, so the whole suite (reproducibility and hash tests
# included) also runs with clang's EMU128 fallback target; the fuzz targets share this build
# (its targets and flags: tools/configure_sanitizers.sh).
start=$(date +%s)
bash tools/configure_sanitizers.sh build/clang-asan "${shared[@]}"
cmake --build build/clang-asan -j"$jobs"
# Its compile time rests on the reduced target set: fail if the mask stopped reaching Highway
# (the names here are those of the mask in tools/configure_sanitizers.sh: change both together).
asan_targets=$(build/clang-asan/tools/posenc info | sed -n 's/^compiled targets: *//p')
if [ "$asan_targets" != "AVX2 EMU128" ]; then
  echo "test.sh: the sanitizer build should compile AVX2 and EMU128 only, not: $asan_targets"
  exit 1
fi
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/clang-asan --output-on-failure -j"$jobs" -E '^consumer_test$'
echo "test.sh: clang ASan+UBSan build + tests took $(( $(date +%s) - start )) s"

# Each fuzz target for POSENC_FUZZ_SECONDS (default 45) from its committed seeds, one per core.
start=$(date +%s)
bash tools/fuzz.sh build/clang-asan
echo "test.sh: fuzzing (4 targets, one per core) took $(( $(date +%s) - start )) s"

if [ "${POSENC_SKIP_CROSS:-0}" != 1 ]; then
  start=$(date +%s)
  bash tools/cross_test.sh
  echo "test.sh: aarch64 cross build + QEMU suite took $(( $(date +%s) - start )) s"
fi

# clang 14, shared library, Release: the ctest suite again (a second compiler, and the tests of the
# public API against libposenc.so). consumer_test (which builds and installs its own gcc shared
# and static copies) and the benchmark front end ran in the release stage.
start=$(date +%s)
CC=clang-14 CXX=clang++-14 cmake -S . -B build/clang-shared -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DPOSENC_WERROR=ON "${shared[@]}"
cmake --build build/clang-shared -j"$jobs"
ctest --test-dir build/clang-shared --output-on-failure -j"$jobs" \
  -E '^(bench_quick_and_roofline|consumer_test)$'
echo "test.sh: clang shared build + tests took $(( $(date +%s) - start )) s"

# The Python package: `pip install` of this checkout with the pinned build tools of the test
# environment (no build isolation, no index: nothing is downloaded), into build/python-site so the
# shared environment stays as pinned; then pytest.
start=$(date +%s)
. tools/python_env.sh
rm -rf build/python-site
"$POSENC_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --no-deps --no-index --config-settings=build-dir=build/python-wheel \
  --config-settings=cmake.define.POSENC_WERROR=ON --target build/python-site .
POSENC_SHARED_DIR="${POSENC_SHARED_DIR:-$PWD/../shared}" PYTHONPATH="$PWD/build/python-site" \
  "$POSENC_VENV/bin/python" -m pytest -p no:cacheprovider -rs python/tests
echo "test.sh: python package build + tests took $(( $(date +%s) - start )) s"
echo "test.sh: all stages took $(( $(date +%s) - total_start )) s"
