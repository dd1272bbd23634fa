#!/usr/bin/python3
"""Checks that every README code block marked <!-- from PATH --> is taken from PATH: each of its
non-blank lines appears in that file, in the same order. Keeps the README's examples compiled:
the files are built and run by the tests."""
import pathlib
import re
import sys


def main(root):
    root = pathlib.Path(root)
    text = (root / "README.md").read_text()
    blocks = re.findall(r"<!-- from (\S+) -->\s*```\w*\n(.*?)```", text, re.S)
    if not blocks:
        print("check_readme_snippets: no marked blocks in README.md")
        return 1
    bad = 0
    for path, body in blocks:
        source = [l.strip() for l in (root / path).read_text().splitlines()]
        pos = 0
        for line in (l.strip() for l in body.splitlines()):
            if not line or line in ("...", "// ..."):
                continue
            try:
                pos = source.index(line, pos) + 1
            except ValueError:
                print(f"check_readme_snippets: README line not in {path} (in order): {line}")
                bad += 1
                break
    print(f"check_readme_snippets: {len(blocks)} blocks checked, {bad} stale")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
