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

grep -q "^\*\*Spec version $version\*\*" "$src/docs/spec.md" || fail "docs/spec.md does not state Spec version $version"
grep -q "^version: \"$version\"" "$src/CITATION.cff" || fail "CITATION.cff version is not $version"
echo "install check passed: $tmp/prefix"
