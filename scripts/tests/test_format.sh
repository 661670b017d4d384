#!/usr/bin/env bash
# Every tracked C / C++ / CUDA source is formatted as .clang-format says (scripts/format.sh --check),
# and the check fails, naming the file, on a source that is not (a copy of the tree's .clang-format
# in a scratch git repository with one badly formatted file); bad usage exits 2.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# the check on a scratch tree must fail first: one file formatted, one not
mkdir -p "$tmp/t/scripts" && cp "$root/.clang-format" "$tmp/t/" && cp "$root/scripts/format.sh" "$tmp/t/scripts/"
printf 'int f(int x) { return x + 1; }\n' > "$tmp/t/good.cpp"
printf 'int  g( int x ){return x+1;}\n' > "$tmp/t/bad.cpp"
git -C "$tmp/t" init -q && git -C "$tmp/t" add . >/dev/null
out=$("$tmp/t/scripts/format.sh" --check 2>&1); rc=$?
[ $rc -eq 1 ] || fail "scratch tree with bad.cpp: exit $rc, expected 1: $out"
[[ "$out" == *"not formatted: bad.cpp"* ]] || fail "bad.cpp not named: $out"
[[ "$out" != *"good.cpp"* ]] || fail "good.cpp named: $out"
"$tmp/t/scripts/format.sh" bad.cpp >/dev/null || fail "formatting bad.cpp failed"
out=$("$tmp/t/scripts/format.sh" --check 2>&1) || fail "after formatting, the check still fails: $out"
for bad in "--frobnicate" "--check --check" "no-such-file.cpp"; do
  # shellcheck disable=SC2086
  out=$("$tmp/t/scripts/format.sh" $bad 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2: $out"
done
# the tree itself
out=$("$root/scripts/format.sh" --check 2>&1); rc=$?
[ $rc -eq 0 ] || fail "the tree is not formatted (exit $rc):
$out"
echo "$out"
