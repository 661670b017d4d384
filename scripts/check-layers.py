#!/usr/bin/env python3
"""Checks that no code reaches up the layers of cmake/layers.txt (CTest check_layers).

  scripts/check-layers.py [--root DIR] [--layers FILE]

For every folder with a row in the layers file (default: <root>/cmake/layers.txt):
  (a) each #include "..." of its C/C++/CUDA sources is resolved to the file it names (first
      relative to the including file, else by its path under the tree) and so to the folder
      that owns that file; a folder not in the row's list is an upward (or sideways) use;
  (b) each ${PROJECT_SOURCE_DIR}/<folder>/..., ${CMAKE_SOURCE_DIR}/..., and
      ${CMAKE_CURRENT_SOURCE_DIR}/../... path of its CMakeLists.txt / *.cmake files names a
      folder, checked the same way;
  in both, a path into another folder's src/ (its private code) is refused even where that
  folder may be used. Also: a row may use only rows above it, every top-level folder with
  C/C++ sources or a CMakeLists.txt has a row, and the top-level CMakeLists.txt adds each
  folder after the folders it uses. Every violation is one line "file:line: ..." naming both
  folders; exit status 1 if there is any, 0 if none, 2 for a malformed layers file.
Includes that resolve to no file of the tree (system, third-party, generated headers) are
not checked.
"""
import argparse
import os
import re
import sys

SOURCE_EXT = (".c", ".h", ".cc", ".cpp", ".hpp", ".cu", ".cuh", ".inc")
SKIP_DIRS = {".git", "__pycache__", "node_modules"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
ROOT_VAR_RE = re.compile(r"\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR|numref_SOURCE_DIR)\}((?:/[^\s\"')$;>]*)?)")
HERE_VAR_RE = re.compile(r"\$\{(?:CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}((?:/[^\s\"')$;>]*)?)")


class LayersError(Exception):
    pass


def read_layers(path):
    """[(folder, set of folders it may use, line)] in file order."""
    rows, seen = [], set()
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise LayersError(f"{path}: cannot be read ({e.strerror})")
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, rest = line.partition(":")
        name = name.strip()
        if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise LayersError(f"{path}:{n}: expected 'folder: folders it may use', got '{raw.strip()}'")
        if name in seen:
            raise LayersError(f"{path}:{n}: folder '{name}' has two rows")
        seen.add(name)
        rows.append((name, set(rest.split()), n))
    if not rows:
        raise LayersError(f"{path}: no layers")
    return rows


def walk_files(top):
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        for f in sorted(files):
            yield os.path.join(d, f)


def rel(root, path):
    return os.path.relpath(path, root).replace(os.sep, "/")


def owner(relpath):
    return relpath.split("/", 1)[0]


def is_private(relpath):
    """A path to or under a src/ folder of its top-level folder (<folder>/.../src[/...])."""
    return "src" in relpath.split("/")[1:]


class Checker:
    def __init__(self, root, layers_path):
        self.root = os.path.abspath(root)
        self.layers_path = layers_path
        self.rows = read_layers(layers_path)
        self.uses = {name: allowed for name, allowed, _ in self.rows}
        self.errors = []
        self.by_suffix = {}  # "numref/format.hpp" etc.: every tree path ending in it
        self.sources = {}  # layer -> [relpath]
        self.cmake_files = {}

    def error(self, where, text):
        self.errors.append(f"{where}: {text}")

    def index(self):
        for name, _, _ in self.rows:
            top = os.path.join(self.root, name)
            srcs, cms = [], []
            for p in walk_files(top):
                r = rel(self.root, p)
                if r.endswith(SOURCE_EXT):
                    srcs.append(r)
                    parts = r.split("/")
                    for i in range(len(parts)):
                        self.by_suffix.setdefault("/".join(parts[i:]), []).append(r)
                if os.path.basename(r) == "CMakeLists.txt" or r.endswith(".cmake"):
                    cms.append(r)
            self.sources[name] = srcs
            self.cmake_files[name] = cms

    def check_rows(self):
        ls = rel(self.root, self.layers_path) if self.layers_path.startswith(self.root) else self.layers_path
        above = set()
        for name, allowed, n in self.rows:
            for u in sorted(allowed):
                if u == name:
                    continue
                if u not in self.uses:
                    self.error(f"{ls}:{n}", f"layer '{name}' uses '{u}', which has no row")
                elif u not in above:
                    self.error(f"{ls}:{n}", f"layer '{name}' uses '{u}', whose row is not above it")
            above.add(name)

    def check_unlisted(self):
        for entry in sorted(os.listdir(self.root)):
            top = os.path.join(self.root, entry)
            if entry in self.uses or entry in SKIP_DIRS or entry.startswith((".", "build")) or not os.path.isdir(top):
                continue
            for p in walk_files(top):
                r = rel(self.root, p)
                if r.endswith(SOURCE_EXT) or os.path.basename(r) == "CMakeLists.txt":
                    self.error(r, f"folder '{entry}' has code but no row in the layers file")
                    break

    def target(self, layer, where, relpath, what):
        """One use of relpath (a tree path) by a file of `layer`."""
        to = owner(relpath)
        if to == layer or to not in self.uses:
            return
        if to not in self.uses[layer]:
            self.error(where, f"{what} '{relpath}': layer '{layer}' uses layer '{to}' (above it or beside it; "
                       f"'{layer}' may use: {', '.join(sorted(self.uses[layer])) or 'nothing'})")
        elif is_private(relpath):
            self.error(where, f"{what} '{relpath}': layer '{layer}' uses a private src/ folder of layer '{to}'")

    def resolve_include(self, src, inc):
        here = os.path.normpath(os.path.join(os.path.dirname(os.path.join(self.root, src)), inc))
        if os.path.isfile(here):
            r = rel(self.root, here)
            return [r] if not r.startswith("../") else []
        return self.by_suffix.get(os.path.normpath(inc).replace(os.sep, "/"), [])

    def check_includes(self):
        for layer, srcs in self.sources.items():
            for src in srcs:
                with open(os.path.join(self.root, src), encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE_RE.match(line)
                        if not m:
                            continue
                        found = self.resolve_include(src, m.group(1))
                        if not found:
                            continue
                        own = [c for c in found if owner(c) == layer]
                        if own:
                            continue
                        if len({owner(c) for c in found}) > 1:
                            self.error(f"{src}:{n}", f"#include \"{m.group(1)}\" is ambiguous: it names "
                                       f"{', '.join(sorted(found))}; write a path that names one")
                            continue
                        self.target(layer, f"{src}:{n}", found[0], f'#include "{m.group(1)}" ->')

    def check_cmake(self):
        for layer, files in self.cmake_files.items():
            for cm in files:
                base = os.path.dirname(os.path.join(self.root, cm))
                with open(os.path.join(self.root, cm), encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        code = re.sub(r"(^|\s)#.*$", "", line.rstrip("\n"))
                        paths = [m.group(1) for m in ROOT_VAR_RE.finditer(code)]
                        for m in HERE_VAR_RE.finditer(code):
                            full = os.path.normpath(base + m.group(1))
                            if full != self.root and not full.startswith(self.root + os.sep):
                                continue
                            paths.append("/" + rel(self.root, full) if full != self.root else "")
                        for p in paths:
                            parts = [x for x in p.split("/") if x]
                            if parts:
                                self.target(layer, f"{cm}:{n}", "/".join(parts), "path")

    def check_build_order(self):
        top = os.path.join(self.root, "CMakeLists.txt")
        if not os.path.isfile(top):
            return
        order = []  # (folder, line) as the top-level CMakeLists.txt adds them
        with open(top, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                code = re.sub(r"(^|\s)#.*$", "", line)
                for m in re.finditer(r"\b(?:foreach\s*\(\s*\w+|add_subdirectory\s*\()([^)]*)\)", code):
                    for w in m.group(1).split():
                        if w in self.uses:
                            order.append((w, n))
        first = {}  # folder -> (its index in the order, line)
        for i, (name, n) in enumerate(order):
            first.setdefault(name, (i, n))
        for name, (i, n) in first.items():
            for u in sorted(self.uses[name]):
                if u in first and first[u][0] > i:
                    self.error(f"CMakeLists.txt:{n}", f"adds '{name}' before '{u}', which '{name}' uses")

    def run(self):
        self.check_rows()
        self.index()
        self.check_unlisted()
        self.check_includes()
        self.check_cmake()
        self.check_build_order()
        return self.errors


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="the source tree (default: this script's repository)")
    ap.add_argument("--layers", help="the layers file (default: <root>/cmake/layers.txt)")
    a = ap.parse_args(argv)
    layers = os.path.abspath(a.layers or os.path.join(a.root, "cmake", "layers.txt"))
    try:
        errors = Checker(a.root, layers).run()
    except LayersError as e:
        print(f"check-layers: {e}", file=sys.stderr)
        return 2
    for e in errors:
        print(e)
    if errors:
        print(f"check-layers: {len(errors)} use(s) across the layers of {rel(os.path.abspath(a.root), layers)}")
        return 1
    print(f"check-layers: no use crosses a layer ({rel(os.path.abspath(a.root), layers)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
