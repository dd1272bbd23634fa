#!/usr/bin/env bash
# Lists the dynamic symbols libposenc.so defines and fails if any is not a posenc_* C function or
# a posenc:: C++ symbol (no Highway, TBB or standard-library symbol may leak).
set -euo pipefail
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^POSENC_0$' || true)
[ -n "$syms" ] || { echo "check_exports: no symbols in $lib"; exit 1; }
bad=0
total=0
while read -r s; do
  total=$((total + 1))
  case "$s" in
    posenc_*) continue ;;
  esac
  demangled=$(echo "$s" | c++filt)
  case "$demangled" in
    posenc::*|"typeinfo for posenc::"*|"typeinfo name for posenc::"*|"vtable for posenc::"*) continue ;;
  esac
  echo "check_exports: unexpected symbol $s ($demangled)"
  bad=$((bad + 1))
done <<< "$syms"
c_count=$(echo "$syms" | grep -c '^posenc_' || true)
echo "check_exports: $total exported symbols ($c_count C, $((total - c_count)) C++), $bad unexpected"
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
echo "check_exports: SONAME $soname"
[ "$soname" = "libposenc.so.0" ] || { echo "check_exports: SONAME must carry the major version"; exit 1; }
[ "$bad" -eq 0 ]
