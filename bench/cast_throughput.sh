#!/usr/bin/env bash
# numref — streaming throughput of `numref cast` (stdin -> stdout), recorded in
# docs/performance.md. Not a test: it asserts nothing.
#
# usage: bench/cast_throughput.sh [path/to/numref] [lines]     (defaults: build/numref, 20000000)
# Needs python3 with numpy (scripts/setup.sh) to write the input files quickly.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
numref=${1:-$root/build/numref}
n=${2:-20000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$n" "$tmp" <<'PY'
import sys
import numpy as np
n, d = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)
digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
def write(path, cols):  # cols: list of (values, hex width)
    width = sum(w for _, w in cols) + len(cols)
    a = np.empty((n, width), dtype=np.uint8)
    pos = 0
    for j, (v, w) in enumerate(cols):
        for i in range(w):
            a[:, pos + w - 1 - i] = digits[(v >> np.uint64(4 * i)) & np.uint64(15)]
        pos += w
        a[:, pos] = ord(" ") if j + 1 < len(cols) else ord("\n")
        pos += 1
    a.tofile(path)
f32 = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
write(f"{d}/f32.txt", [(f32, 8)])
write(f"{d}/bf16.txt", [(f32 >> np.uint64(16), 4)])
write(f"{d}/f32_r8.txt", [(f32, 8), (rng.integers(0, 256, size=n, dtype=np.uint64), 2)])
PY

TIMEFORMAT=%R
measure() {  # label, input file, cast options...
  local label=$1 file=$2 best=
  shift 2
  for _ in 1 2 3; do
    local t
    t=$( { time "$numref" cast "$@" < "$file" > /dev/null; } 2>&1 )
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
  done
  awk -v l="$label" -v t="$best" -v n="$n" 'BEGIN{printf "%-48s %6.2f s  %6.1f M lines/s\n", l, t, n/t/1e6}'
}
echo "numref cast, $n lines, best of 3 (stdin from a file, stdout to /dev/null)"
measure "f32 -> f8e4m3fn (ocp, Converter per line)" "$tmp/f32.txt" --from f32 --to f8e4m3fn
measure "f32 -> f8e4m3fn (cuda_satfinite)" "$tmp/f32.txt" --from f32 --to f8e4m3fn --profile cuda_satfinite
measure "f32 -> bf16" "$tmp/f32.txt" --from f32 --to bf16
measure "f32 -> f8e8m0fnu" "$tmp/f32.txt" --from f32 --to f8e8m0fnu
measure "f32 -> f8e4m3fn, sr k=8 (two tokens per line)" "$tmp/f32_r8.txt" --from f32 --to f8e4m3fn --round sr --sr-bits 8
measure "bf16 -> f8e4m3fn (lookup table)" "$tmp/bf16.txt" --from bf16 --to f8e4m3fn
