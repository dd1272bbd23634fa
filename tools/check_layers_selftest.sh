#!/usr/bin/env bash
# Proves tools/check_layers.py catches what it exists to catch: on a copy of lib/ and
# include/posenc/ it must pass as the tree is, and fail (naming file:line and the rule) once one
# upward include is put back: kernels -> api (the old lib/kernels/convert.cc), freqs -> api (the
# old error helper), core -> kernels, a public header -> lib/, a public header -> hwy/.
set -euo pipefail
root="$1"
py="${PYTHON:-/usr/bin/python3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fresh() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t/include"
  cp -r "$root/lib" "$tmp/t/lib" && cp -r "$root/include/posenc" "$tmp/t/include/posenc"
}
fresh
"$py" "$root/tools/check_layers.py" "$tmp/t" > "$tmp/out" || { cat "$tmp/out"; echo "selftest: the copy should pass"; exit 1; }
fails=0
expect_failure() {  # file, line to append, text the report must contain
  fresh
  echo "$2" >> "$tmp/t/$1"
  local n
  n=$(wc -l < "$tmp/t/$1")
  if "$py" "$root/tools/check_layers.py" "$tmp/t" > "$tmp/out"; then
    echo "selftest: FAILED to catch '$2' in $1"; fails=$((fails + 1)); return
  fi
  if ! grep -qF "$1:$n: includes" "$tmp/out" || ! grep -qF "$3" "$tmp/out"; then
    echo "selftest: caught '$2' in $1 but the report lacks '$1:$n' or '$3':"; cat "$tmp/out"
    fails=$((fails + 1)); return
  fi
  echo "selftest: caught $1:$n $2"
}
expect_failure lib/kernels/convert.cc '#include "lib/api/tensor_checks.h"' "lib/kernels may include only lib/core, lib/kernels"
expect_failure lib/freqs/scaling.cc '#include "lib/api/tensor_checks.h"' "lib/freqs may include only"
expect_failure lib/core/rope_plan.h '#include "lib/kernels/registry.h"' "lib/core may include only lib/core"
expect_failure lib/parallel/split.h '#include "lib/kernels/registry.h"' "lib/parallel may include only"
expect_failure lib/api/rope.cc '#include "lib/reference/elements.h"' "lib/api may include only"
expect_failure include/posenc/rope.h '#include "lib/core/rope_plan.h"' "a public header includes only"
expect_failure include/posenc/half.h '#include "hwy/base.h"' "a public header includes only"
expect_failure lib/freqs/inv_freq.cc '#include "hwy/highway.h"' "Highway belongs to lib/kernels"
[ "$fails" -eq 0 ] && echo "selftest: all 8 upward includes caught"
exit "$fails"
