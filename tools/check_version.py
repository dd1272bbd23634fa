#!/usr/bin/env python3
"""Checks that every place stating posenc's version agrees with project(VERSION) in CMakeLists.txt.

Usage: check_version.py SOURCE_DIR PROJECT_VERSION (the ctest version_sources passes CMake's
${PROJECT_VERSION}). pyproject.toml cannot take the version from CMake; scikit-build-core reads it
with the regex in [tool.scikit-build.metadata.version], so this applies that regex to its input
file and compares. posenc.pc.in must use @PROJECT_VERSION@, and the Python package must take its
__version__ from the extension (which returns posenc::Version(), i.e. posenc/version.h).
"""
import pathlib
import re
import sys
import tomllib


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    expected = sys.argv[2]
    errors = []
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    rule = meta["tool"]["scikit-build"]["metadata"]["version"]
    match = re.search(rule["regex"], (root / rule["input"]).read_text())
    found = match.group("value") if match else None
    if found != expected:
        errors.append(f"pyproject.toml's version regex on {rule['input']} gives {found!r}, "
                      f"project(VERSION) is {expected!r}")
    if "Version: @PROJECT_VERSION@" not in (root / "cmake/posenc.pc.in").read_text():
        errors.append("cmake/posenc.pc.in does not take Version from @PROJECT_VERSION@")
    init = (root / "python/posenc/__init__.py").read_text()
    if not re.search(r'^__version__ = info\(\)\["version"\]$', init, re.M):
        errors.append("python/posenc/__init__.py does not take __version__ from info()")
    for e in errors:
        print("check_version:", e)
    print(f"check_version: {expected}, {len(errors)} disagreements")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
