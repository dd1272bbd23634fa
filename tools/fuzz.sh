#!/usr/bin/env bash
# Fuzzes each libFuzzer target of tests/fuzz for a bounded time under ASan + UBSan: rope_fuzz and
# sinusoidal_fuzz (differential: every SIMD target against each other and against
# posenc::reference), npy_fuzz (the .npy reader) and config_fuzz (posenc::ParseHfConfig). Each
# starts from its committed seeds (tests/fuzz/corpus/<target>; config_fuzz also tools/configs)
# and a fresh working corpus, so the repository is never written.
#   tools/fuzz.sh [BUILD_DIR] [SECONDS]   defaults: build/clang-asan, $POSENC_FUZZ_SECONDS or 45
#   POSENC_FUZZ_SECONDS=600 tools/fuzz.sh   the longer run (10 minutes per target)
# BUILD_DIR is configured by tools/configure_sanitizers.sh if it does not exist.
# A failure prints the log's tail and keeps the crashing input in BUILD_DIR/fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
build="${1:-build/clang-asan}"
seconds="${2:-${POSENC_FUZZ_SECONDS:-45}}"
jobs="${JOBS:-$(nproc)}"
targets=(rope_fuzz sinusoidal_fuzz npy_fuzz config_fuzz)
if [ ! -f "$build/CMakeCache.txt" ]; then
  shared=()
  [ -n "${POSENC_SHARED_DIR:-}" ] && shared=(-DPOSENC_SHARED_DIR="$POSENC_SHARED_DIR")
  bash tools/configure_sanitizers.sh "$build" "${shared[@]}"
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
# Runs target $1 for $seconds into $work/$1.log; its exit status and seconds into $work/$1.rc.
fuzz_one() {
  local t=$1 rc start
  start=$(date +%s)
  local seeds=("tests/fuzz/corpus/$t")
  [ "$t" = config_fuzz ] && seeds+=(tools/configs)
  mkdir -p "$work/$t"
  rm -f "$artifacts/$t-"*
  set +e
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$t-" "$work/$t" "${seeds[@]}" > "$work/$t.log" 2>&1
  rc=$?
  set -e
  echo "$rc $(( $(date +%s) - start ))" > "$work/$t.rc"
}

# Prints target $1's figures; on a crash its report (the input stays in $artifacts) and fails.
report_one() {
  local t=$1 rc elapsed execs cov
  read -r rc elapsed < "$work/$t.rc"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log")
  [ -z "$execs" ] && execs=$(grep -E '^#[0-9]+' "$work/$t.log" | tail -1 | sed -n 's/^#\([0-9]*\).*/\1/p')
  cov=$(grep -E '^#[0-9]+' "$work/$t.log" | tail -1 | sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p')
  echo "fuzz.sh: $t: rc $rc, ${execs:-?} executions in ${elapsed} s, ${cov:-cov ?}," \
       "$(ls "$work/$t" | wc -l) inputs in the working corpus"
  [ "$rc" = 0 ] && return 0
  for a in "$artifacts/$t-"*; do
    [ -e "$a" ] || continue
    echo "fuzz.sh: $t: FAILED on $a"
    ASAN_OPTIONS=detect_leaks=1 "$build/tests/fuzz/$t" "$a" 2>&1 |
      grep -E 'ERROR|SUMMARY|runtime error|fuzz check|#[0-9]+ 0x' | head -20 || true
  done
  tail -30 "$work/$t.log"
  return 1
}

# Each fuzzer is one process on one core: $jobs of them run side by side, so on CI's 2 cores the
# four take 2 x $seconds instead of 4 x $seconds, each with a core of its own.
failed=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  for t in "${batch[@]}"; do fuzz_one "$t" & done
  wait
  for t in "${batch[@]}"; do report_one "$t" || failed=1; done
done
exit "$failed"
