#!/usr/bin/env bash
# Installs the Debian bookworm packages posenc builds and tests with. Idempotent: packages that are
# already installed are skipped, and apt is only touched when something is missing. Runs as root
# (no sudo needed) or through sudo when it is available.
#   tools/setup.sh           the native build, tests and benchmarks (g++; clang 14 and its
#                            sanitizer/libFuzzer runtimes for the sanitizer and fuzz stages)
#   tools/setup.sh --cross   also the aarch64 cross toolchain, arm64 libraries and qemu-user
#   tools/setup.sh --python  also the Python test environment: a virtual environment (from
#                            Debian's python3) with the pinned PyPI packages of
#                            python/requirements.txt, at $POSENC_VENV (tools/python_env.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
cross=0
python=0
for arg in "$@"; do
  case "$arg" in
    --cross) cross=1 ;;
    --python) python=1 ;;
    *) echo "setup: unknown argument $arg" >&2; exit 2 ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  clang libclang-rt-14-dev
  libhwy-dev libtbb-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev
  python3-matplotlib python3-venv python3-dev
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

# The Python test environment: created once per set of pinned versions, then used offline.
# Creation is serialised with a lock (checkouts share the folder); `.complete` marks a finished one.
setup_python() {
  . tools/python_env.sh
  [ -f "$POSENC_VENV/.complete" ] && { echo "setup: Python environment $POSENC_VENV present"; return; }
  mkdir -p "$(dirname "$POSENC_VENV")"
  (
    flock 9
    if [ ! -f "$POSENC_VENV/.complete" ]; then
      echo "setup: creating the Python environment $POSENC_VENV (PyPI: python/requirements.txt)"
      rm -rf "$POSENC_VENV"
      "$POSENC_PYTHON_BASE" -m venv "$POSENC_VENV"
      "$POSENC_VENV/bin/python" -m pip install -q --disable-pip-version-check \
        -r python/requirements.txt
      touch "$POSENC_VENV/.complete"
    fi
  ) 9>"$POSENC_VENV.lock"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
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
fi
if [ "$python" = 1 ]; then
  setup_python
fi
