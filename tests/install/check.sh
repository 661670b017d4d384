#!/usr/bin/env bash
# `cmake --install` of a build into a fresh prefix, then: an external CMake project finds and
# links numref (find_package), pkg-config knows it, the installed `numref` runs, finds its
# backends and golden vectors, and the version is the same in CMake, the spec and CITATION.cff.
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

cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/cfg.log" 2>&1 \
  || { cat "$tmp/cfg.log"; fail "find_package(numref) from the prefix"; }
cmake --build "$tmp/consumer" > "$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building against the prefix"; }
"$tmp/consumer/consumer" || fail "the consumer's conversion"

if command -v pkg-config > /dev/null; then
  v=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --modversion numref) || fail "pkg-config numref"
  [ "$v" = "$version" ] || fail "numref.pc version $v, expected $version"
fi

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
