"""Shared helpers of the posenc Python tests (run by tools/test.sh; see README "Python")."""
from __future__ import annotations

import os
import pathlib

import ml_dtypes
import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Reference data outside the repository (this project's CI has it; a user's clone does not).
SHARED = pathlib.Path(os.environ.get("POSENC_SHARED_DIR", REPO.parent / "shared"))


def require_shared(relative: str) -> pathlib.Path:
    """The path under POSENC_SHARED_DIR, or a skip naming what is missing."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"needs {path} (reference data outside the repository; set POSENC_SHARED_DIR)")
    return path


def ulp(m, dtype=np.float32) -> np.ndarray:
    """Spacing of `dtype` numbers at |m| (elementwise; the subnormal spacing below the normals)."""
    m = np.abs(np.asarray(m, dtype=np.float64))
    info = ml_dtypes.finfo(dtype)
    tiny = float(info.tiny)
    return np.exp2(np.floor(np.log2(np.maximum(m, tiny))) - info.nmant)


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def pytest_report_header(config):
    """The versions the suite ran against (posenc, numpy, onnx, onnxruntime)."""
    import importlib

    parts = []
    for name in ("posenc", "numpy", "ml_dtypes", "onnx", "onnxruntime"):
        try:
            mod = importlib.import_module(name)
            parts.append(f"{name} {getattr(mod, '__version__', '?')}")
        except ImportError:
            parts.append(f"{name} absent")
    return "versions: " + ", ".join(parts)
