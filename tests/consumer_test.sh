#!/usr/bin/env bash
# Downstream use of posenc, end to end, in a temporary folder:
#  1. a shared build installed into a temporary prefix; its exported symbols checked;
#  2. a CMake project using find_package(posenc) against that prefix, built and run;
#  3. the same examples built with pkg-config (C++ and C);
#  4. a parent project that adds posenc with add_subdirectory (static), built and run.
set -euo pipefail
src="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
jobs="${JOBS:-$(nproc)}"
config="$src/tools/configs/llama-3.1-8b.json"

echo "== 1. shared build + install"
cmake -S "$src" -B "$work/build" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=ON -DPOSENC_BUILD_TESTS=OFF -DPOSENC_BUILD_BENCH=OFF -DPOSENC_BUILD_TOOLS=OFF \
  -DCMAKE_INSTALL_PREFIX="$work/prefix" > "$work/configure.log"
cmake --build "$work/build" -j"$jobs" > "$work/build.log"
cmake --install "$work/build" > "$work/install.log"
lib=$(find "$work/prefix" -name 'libposenc.so.0' | head -n 1)
bash "$src/tools/check_exports.sh" "$lib"

echo "== 2. find_package consumer"
cmake -S "$src/tests/consumer" -B "$work/consumer" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DEXAMPLES_DIR="$src/tools/examples" > "$work/consumer.log"
cmake --build "$work/consumer" -j"$jobs" >> "$work/consumer.log"
"$work/consumer/runtime_loop" "$config"
"$work/consumer/c_quickstart"

echo "== 3. pkg-config consumer"
pcdir=$(dirname "$(find "$work/prefix" -name posenc.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
libdir=$(dirname "$lib")
c++ -std=c++17 -O2 "$src/tools/examples/runtime_loop.cc" $(pkg-config --cflags --libs posenc) \
  -Wl,-rpath,"$libdir" -o "$work/pc_runtime_loop"
"$work/pc_runtime_loop" "$config"
cc -std=c99 -Wall -Wextra -pedantic -Werror -c "$src/tools/examples/c_quickstart.c" \
  $(pkg-config --cflags posenc) -o "$work/c_quickstart.o"
cc "$work/c_quickstart.o" $(pkg-config --libs posenc) -Wl,-rpath,"$libdir" -o "$work/pc_c_quickstart"
"$work/pc_c_quickstart"

echo "== 4. add_subdirectory consumer"
cmake -S "$src/tests/consumer_subdir" -B "$work/sub" "${gen[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DPOSENC_SOURCE_DIR="$src" > "$work/sub.log"
cmake --build "$work/sub" -j"$jobs" >> "$work/sub.log"
"$work/sub/runtime_loop" "$config"
echo "consumer_test: all consumers built and ran"
