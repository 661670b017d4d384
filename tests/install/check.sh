#!/usr/bin/env bash
# `cmake --install` of a build into a fresh prefix, then: everything it writes is built by the
# target `numref` (scripts/main.sh's build) and listed in docs/install.md's table; an external
# CMake project finds and links numref (find_package); pkg-config knows it and a program compiled
# through `pkg-config --cflags --libs numref` runs (numref.pc is relocatable); the installed
# `numref` runs, finds its backends and golden vectors; and the version is the same in CMake, the
# spec and CITATION.cff.
# usage: check.sh BUILD_DIR SOURCE_DIR PROJECT_VERSION
set -euo pipefail
build=$1 src=$2 version=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/numref include/numref/backend.h include/numref/convert.hpp include/numref/conform/util.hpp \
         lib/libnumref_reference.a lib/libnumref_conformance.a lib/cmake/numref/numrefConfig.cmake \
         lib/pkgconfig/numref.pc lib/numref/backends/libnumref_backend_reference.so \
         share/numref/vectors/MANIFEST share/doc/numref/LICENSE; do
  [ -e "$tmp/prefix/$f" ] || fail "not installed: $f"
done

# scripts/main.sh builds only the target `numref` and then `cmake --install` must work from its
# build directory: every built file the install writes (the CLI, the libraries, the plugins) is
# built by that target. Checked in the build graph (Ninja builds; skipped for other generators).
if [ -f "$build/build.ninja" ] && command -v ninja > /dev/null; then
  ninja -C "$build" -t commands numref > "$tmp/numref-commands.txt" || fail "ninja -t commands numref"
  while read -r f; do
    case "$f" in
      bin/* | *.a | *.so) grep -q -- "$(basename "$f")" "$tmp/numref-commands.txt" \
        || fail "cmake --install writes $f, which the target numref does not build (scripts/main.sh's build directory)" ;;
    esac
  done < <(cd "$tmp/prefix" && find . -type f | sed 's|^\./||')
fi

# docs/install.md's table lists everything `cmake --install` writes: every installed file is under
# a path of the table (a directory `d/`, a glob `*`, or the file), and every path of the table
# was installed. (A plain install writes the C++ package only, not the Python one.)
python3 - "$src/docs/install.md" "$tmp/prefix" <<'PY' || fail "docs/install.md's install table and the installed files differ"
import fnmatch, os, re, sys
doc, prefix = sys.argv[1], sys.argv[2]
text = open(doc, encoding="utf-8").read()
table = re.search(r"^\| path \| what \|\n\|---\|---\|\n((?:\|.*\|\n)+)", text, re.M)
if not table:
    sys.exit("no '| path | what |' table in " + doc)
paths = [p for row in table.group(1).splitlines() for p in re.findall(r"`([^`]+)`", row.split("|")[1])]
files = sorted(os.path.relpath(os.path.join(d, f), prefix) for d, _, fs in os.walk(prefix) for f in fs)
def covers(p, f):
    return f.startswith(p) if p.endswith("/") else fnmatch.fnmatchcase(f, p)
bad = [f for f in files if not any(covers(p, f) for p in paths)]
unused = [p for p in paths if not any(covers(p, f) for f in files)]
for f in bad[:20]:
    print("installed but not in the table:", f)
for p in unused:
    print("in the table but not installed:", p)
print(f"install table: {len(paths)} paths, {len(files)} installed files")
sys.exit(1 if bad or unused or len(paths) < 8 else 0)
PY

cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/cfg.log" 2>&1 \
  || { cat "$tmp/cfg.log"; fail "find_package(numref) from the prefix"; }
cmake --build "$tmp/consumer" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building against the prefix"; }
"$tmp/consumer/consumer" || fail "the consumer's conversion"

# pkg-config (scripts/setup.sh installs it): the version, and docs/install.md's compile line
# `c++ -std=c++20 x.cpp $(pkg-config --cflags --libs numref)` builds and runs the consumer, from the
# prefix given to `cmake --install --prefix` and from a copy of it elsewhere (numref.pc is relocatable:
# its prefix is the one it is found in, not the CMAKE_INSTALL_PREFIX of the configure step).
command -v pkg-config > /dev/null || fail "pkg-config is not installed (scripts/setup.sh installs it)"
cxx=${CXX:-c++}
cp -a "$tmp/prefix" "$tmp/moved"
for p in "$tmp/prefix" "$tmp/moved"; do
  export PKG_CONFIG_PATH="$p/lib/pkgconfig"
  v=$(pkg-config --modversion numref) || fail "pkg-config numref ($p)"
  [ "$v" = "$version" ] || fail "numref.pc version $v, expected $version"
  pre=$(pkg-config --variable=prefix numref)
  [ "$(cd "$pre" 2> /dev/null && pwd -P)" = "$(cd "$p" && pwd -P)" ] || fail "numref.pc in $p says prefix=$pre"
  flags=$(pkg-config --cflags --libs numref) || fail "pkg-config --cflags --libs numref ($p)"
  # shellcheck disable=SC2086
  "$cxx" -std=c++20 "$src/tests/install/consumer.cpp" $flags -o "$tmp/pc-consumer" > "$tmp/pc.log" 2>&1 \
    || { cat "$tmp/pc.log"; fail "compiling through pkg-config ($p): $cxx ... $flags"; }
  "$tmp/pc-consumer" || fail "the consumer built through pkg-config ($p)"
done
unset PKG_CONFIG_PATH

# The installed numref finds its plugins and golden vectors in the prefix (not in the build tree).
out=$("$tmp/prefix/bin/numref" conform --backend reference --level 0 --ops cast:f8e5m2:f32 --profile ocp 2>&1) \
  || { echo "$out"; fail "installed numref conform"; }
[[ "$out" == *"$tmp/prefix/lib/numref/backends/libnumref_backend_reference.so"* ]] || { echo "$out"; fail "plugin not from the prefix"; }
[[ "$out" == *"golden vectors: $tmp/prefix/share/numref/vectors"* ]] || { echo "$out"; fail "vectors not from the prefix"; }
# Golden vectors asked for (the default) and not found: exit 2, naming where it looked.
set +e
out=$(NUMREF_VECTORS="$tmp/none" "$tmp/prefix/bin/numref" conform --backend reference --level 0 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || { echo "$out"; fail "missing vectors: exit $rc, expected 2"; }
[[ "$out" == *"golden vectors not found (looked in $tmp/none)"* ]] || { echo "$out"; fail "missing vectors: message"; }
v=$("$tmp/prefix/bin/numref" --version)
[ "$v" = "numref $version (spec $version)" ] || fail "numref --version says '$v'"

grep -q "^\*\*Spec version $version\*\*" "$src/docs/spec.md" || fail "docs/spec.md does not state Spec version $version"
grep -q "^version: \"$version\"" "$src/CITATION.cff" || fail "CITATION.cff version is not $version"
grep -q "^## $version " "$src/CHANGES.md" || fail "CHANGES.md has no section for version $version"
echo "install check passed: $tmp/prefix"
