#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU: SKIPPED with exit 77 and nothing built; bad usage: exit 2
# with one line naming the problem. (On a GPU machine the script itself is the device check.)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# an nvidia-smi that finds no device, first on PATH
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' > "$tmp/nvidia-smi"; chmod +x "$tmp/nvidia-smi"
cd "$tmp"
out=$(PATH="$tmp:$PATH" "$root/scripts/gpu-check.sh" --build "$tmp/b" --results "$tmp/r.md" 2>&1); rc=$?
[ $rc -eq 77 ] || fail "no GPU: exit $rc, expected 77: $out"
[[ "$out" == *SKIPPED* ]] || fail "no GPU: no SKIPPED line: $out"
[ ! -e "$tmp/b" ] && [ ! -e "$tmp/r.md" ] || fail "no GPU: something was built or written"
for bad in "--shard 4/4" "--shard 1/0" "--shard x" "--frobnicate"; do
  # shellcheck disable=SC2086
  out=$(PATH="$tmp:$PATH" "$root/scripts/gpu-check.sh" $bad 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2: $out"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$bad': expected one line: $out"
done
echo "gpu-check.sh: skip and usage checks passed"
