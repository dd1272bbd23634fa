#!/usr/bin/env bash
# Installs the Debian bookworm packages posenc builds and tests with. Idempotent: packages that are
# already installed are skipped, and apt is only touched when something is missing. Runs as root
# (no sudo needed) or through sudo when it is available.
#   tools/setup.sh           the native build, tests and benchmarks (g++; clang 14 and its
#                            sanitizer/libFuzzer runtimes for the sanitizer and fuzz stages)
#   tools/setup.sh --cross   also the aarch64 cross toolchain, arm64 libraries and qemu-user
set -euo pipefail
cross=0
[ "${1:-}" = "--cross" ] && cross=1

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  clang libclang-rt-14-dev
  libhwy-dev libtbb-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev
  python3-matplotlib
)

if [ "$cross" = 1 ]; then
  PACKAGES+=(g++-aarch64-linux-gnu qemu-user libhwy-dev:arm64 libtbb-dev:arm64 libgtest-dev:arm64)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root; install them and rerun" >&2
    exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if [ "$cross" = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
