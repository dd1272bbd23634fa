#!/usr/bin/python3
"""Checks that every document the repository cites exists (issue 16 item 7):

1. every `docs/NAME.md` (or other `PATH.md`) named in a header, source, script, CMake file or
   Markdown file resolves, from the repository root (a bare `NAME.md` may also mean `docs/NAME.md`);
2. every relative Markdown link `[text](target)` in README.md and docs/*.md points at a file that
   exists, relative to the linking file, and a `#anchor` (in the same file or another .md file)
   names one of that file's headings (GitHub's heading ids).

Usage: check_doc_links.py [ROOT]    prints "N citations and links checked, M broken"
       check_doc_links.py --self-test    checks that a tree with broken citations fails
"""
import pathlib
import re
import sys
import tempfile

CODE_DIRS = ("include", "lib", "tools", "bench", "tests", "python", "cmake")
CODE_SUFFIXES = {".h", ".cc", ".c", ".py", ".sh", ".cmake", ".txt", ".in", ".toml", ".map"}
# A path ending in .md that is not part of a longer word or path (`x.md`, `docs/x.md`).
MD_CITATION = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def code_files(root):
    for name in CODE_DIRS:
        base = root / name
        if base.is_dir():
            for p in sorted(base.rglob("*")):
                if p.is_file() and (p.suffix in CODE_SUFFIXES or p.name == "CMakeLists.txt"):
                    yield p
    for p in (root / "CMakeLists.txt", root / "pyproject.toml"):
        if p.is_file():
            yield p


def markdown_files(root):
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    docs = root / "docs"
    if docs.is_dir():
        files += sorted(docs.glob("*.md"))
    return files


def slug(heading):
    """GitHub's heading id: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*", "", heading.strip().lower())
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(path):
    ids, seen = set(), {}
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            ids.add(s if n == 0 else f"{s}-{n}")
    return ids


def check(root):
    root = pathlib.Path(root).resolve()
    checked, broken = 0, []
    # 1. Cited .md files.
    for path in list(code_files(root)) + markdown_files(root):
        if path.name == "check_doc_links.py":
            continue  # its own docstring and self-test name example paths
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            for cited in MD_CITATION.findall(line):
                if "://" in line and re.search(r"https?://\S*" + re.escape(cited), line):
                    continue  # part of a URL
                checked += 1
                candidates = [root / cited, path.parent / cited]
                if "/" not in cited:
                    candidates.append(root / "docs" / cited)
                if not any(c.is_file() for c in candidates):
                    broken.append(f"{path.relative_to(root)}:{lineno}: cites {cited}, which does not exist")
    # 2. Relative links (and anchors) in the Markdown files.
    for path in markdown_files(root):
        in_fence = False
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                in_fence = not in_fence
            if in_fence:
                continue
            for target in MD_LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # http:, https:, mailto:
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                where = f"{path.relative_to(root)}:{lineno}"
                if not dest.exists():
                    broken.append(f"{where}: link to {target}: {file_part} does not exist")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{where}: link to {target}: no heading with id #{anchor} in {file_part or path.name}")
    for b in broken:
        print(f"check_doc_links: {b}")
    print(f"check_doc_links: {checked} citations and links checked, {len(broken)} broken")
    return 1 if broken else 0


def self_test():
    """A tree with one good and three broken references (the missing file counts as a citation and
    as a link) must fail, naming each; the same tree repaired must pass."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "docs").mkdir()
        (root / "include").mkdir()
        (root / "docs" / "math.md").write_text("# Math\n\n## 1. Rotation\n")
        (root / "README.md").write_text(
            "See [math](docs/math.md#1-rotation), [gone](docs/gone.md), [bad](docs/math.md#nope).\n")
        (root / "include" / "a.h").write_text("// docs/math.md and DESIGN.md\n")
        import contextlib, io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check(root)
        text = out.getvalue()
        expect = ["cites DESIGN.md", "docs/gone.md does not exist", "no heading with id #nope", "4 broken"]
        missing = [e for e in expect if e not in text]
        if rc != 1 or missing:
            print(text + f"check_doc_links self-test: FAILED (rc {rc}, missing {missing})")
            return 1
        # And the good tree passes.
        (root / "README.md").write_text("See [math](docs/math.md#1-rotation).\n")
        (root / "include" / "a.h").write_text("// docs/math.md\n")
        with contextlib.redirect_stdout(io.StringIO()):
            rc = check(root)
        if rc != 0:
            print("check_doc_links self-test: FAILED (a good tree was rejected)")
            return 1
    print("check_doc_links self-test: passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else "."))
