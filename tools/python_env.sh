# Sourced by tools/setup.sh and tools/test.sh: where the Python test environment lives.
# One virtual environment per set of pinned versions (python/requirements.txt), under the user's
# cache so that every checkout (and CI's fresh clone) shares it and works offline once it exists.
# POSENC_VENV overrides the folder. Debian's /usr/bin/python3 is the base interpreter.
POSENC_PYTHON_BASE="${POSENC_PYTHON_BASE:-/usr/bin/python3}"
if [ -z "${POSENC_VENV:-}" ]; then
  _posenc_req_hash=$( { "$POSENC_PYTHON_BASE" --version; cat python/requirements.txt; } | sha256sum | cut -c1-12)
  POSENC_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/posenc/venv-$_posenc_req_hash"
fi
export POSENC_VENV
