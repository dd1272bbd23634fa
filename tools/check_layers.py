#!/usr/bin/env python3
"""Checks that posenc's internal layers include one another one way only (docs/layers.md).

Every `#include "lib/<layer>/..."` in a file under lib/<layer>/ must name a layer that
ALLOWED[<layer>] lists; every file under include/posenc/ may include only public headers
(no "lib/...", no Highway "hwy/..."); "hwy/..." is included only where HWY_ALLOWED says.
One include root (the repository) means CMake cannot enforce this; this script is the check.

Usage: check_layers.py ROOT            fail (exit 1) on any edge not in the table, printing
                                       file:line and the rule it breaks
       check_layers.py ROOT --graph    print the folder-level include graph (edge: count)
"""
import collections
import os
import re
import sys

# layer -> the lib/ layers its files may include (itself always). Keep in step with
# docs/layers.md, which gives the reasons.
ALLOWED = {
    "core": {"core"},
    "kernels": {"kernels", "core"},
    "parallel": {"parallel", "core"},
    "freqs": {"freqs", "core"},
    "api": {"api", "parallel", "kernels", "freqs", "core"},
    "reference": {"reference", "api", "freqs", "core"},
}
# Files outside lib/kernels that may include Highway: the target queries of the public API.
HWY_ALLOWED_FILES = {"lib/api/targets.cc"}

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
SOURCE_EXT = (".h", ".cc", ".c", ".hpp", ".cpp")


def sources(root, top):
    base = os.path.join(root, top)
    for dirpath, _, files in os.walk(base):
        for f in sorted(files):
            if f.endswith(SOURCE_EXT):
                full = os.path.join(dirpath, f)
                yield full, os.path.relpath(full, root).replace(os.sep, "/")


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1)


def layer_of(rel):
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "lib" else None


def check(root):
    errors = []
    edges = 0
    for full, rel in sources(root, "lib"):
        src = layer_of(rel)
        if src is None:
            continue  # lib/posenc.map and the like
        if src not in ALLOWED:
            errors.append(f"{rel}:1: folder lib/{src}/ is not a layer of the table "
                          f"(add it to tools/check_layers.py and docs/layers.md)")
            continue
        for n, inc in includes(full):
            if inc.startswith("lib/"):
                edges += 1
                dst = layer_of(inc)
                if dst not in ALLOWED[src]:
                    errors.append(f"{rel}:{n}: includes {inc}: lib/{src} may include only "
                                  f"{', '.join('lib/' + d for d in sorted(ALLOWED[src]))}")
            elif inc.startswith("hwy/") and src != "kernels" and rel not in HWY_ALLOWED_FILES:
                errors.append(f"{rel}:{n}: includes {inc}: Highway belongs to lib/kernels "
                              f"(and the target queries {', '.join(sorted(HWY_ALLOWED_FILES))})")
    public = 0
    for full, rel in sources(root, "include/posenc"):
        public += 1
        for n, inc in includes(full):
            if inc.startswith("lib/") or inc.startswith("hwy/"):
                errors.append(f"{rel}:{n}: includes {inc}: a public header includes only "
                              f"posenc/ and standard headers")
    if edges == 0 or public == 0:
        errors.append(f"{root}: found {edges} lib/ includes and {public} public headers: "
                      f"wrong root?")
    return errors, edges, public


def graph(root):
    count = collections.Counter()
    for full, rel in sources(root, "lib"):
        src = layer_of(rel)
        for _, inc in includes(full):
            if inc.startswith("lib/") and src is not None:
                dst = layer_of(inc)
                if dst != src:
                    count[(src, dst)] += 1
    for (src, dst), n in sorted(count.items()):
        print(f"lib/{src} -> lib/{dst}: {n}")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    if "--graph" in argv[2:]:
        graph(root)
        return 0
    errors, edges, public = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} include(s) break the layer table (docs/layers.md)")
        return 1
    print(f"check_layers: {edges} lib/ includes and {public} public headers follow the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
