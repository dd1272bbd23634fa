#!/usr/bin/env bash
# The aarch64 test suite under QEMU: installs the cross toolchain, the arm64 libraries and
# qemu-user (Debian multiarch), cross-builds posenc and its tests with cmake/aarch64-linux-gnu.cmake,
# then runs every test at SVE vector lengths of 128, 256, 512 and 2048 bits. Each run covers every
# target QEMU offers at that length (NEON, SVE, SVE2, SVE_256, SVE2_128); the hash test must give
# the x86 hash on all of them.
#   POSENC_CROSS_VLS="16 64"  vector lengths in bytes (default: 16 32 64 256)
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache share results between checkouts in different folders (CI builds a fresh clone).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
bash tools/setup.sh --cross
jobs="${JOBS:-$(nproc)}"
vls="${POSENC_CROSS_VLS:-16 32 64 256}"
shared=()
[ -n "${POSENC_SHARED_DIR:-}" ] && shared=(-DPOSENC_SHARED_DIR="$POSENC_SHARED_DIR")

start=$(date +%s)
cmake -S . -B build/aarch64 -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DPOSENC_BUILD_BENCH=OFF -DPOSENC_BUILD_TOOLS=OFF "${shared[@]}"
cmake --build build/aarch64 -j"$jobs"
echo "cross_test.sh: aarch64 build took $(( $(date +%s) - start )) s"

for vl in $vls; do
  start=$(date +%s)
  export QEMU_CPU="max,sve-default-vector-length=$vl"
  echo "== aarch64, SVE vector length $((vl * 8)) bits: targets and hashes"
  qemu-aarch64 -L / build/aarch64/tests/hash_test | grep '^hash '
  ctest --test-dir build/aarch64 --output-on-failure -j"$jobs" --timeout 900
  echo "cross_test.sh: $((vl * 8))-bit run took $(( $(date +%s) - start )) s"
done
