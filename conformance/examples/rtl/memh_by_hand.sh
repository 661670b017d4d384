#!/usr/bin/env bash
# numref — the by-hand flow of docs/hardware.md §3: export the golden vectors of
# cuda_satfinite f32 -> f8e4m3fn as memh (spec §31.8), build the $readmemh testbench with Verilator,
# run it. The CTest test rtl_memh_by_hand runs this script, and checks that docs/hardware.md shows
# the same commands (between the "by hand" markers below).
#
# usage: conformance/examples/rtl/memh_by_hand.sh OUTDIR [NUMREF]   (default NUMREF: build/numref)
# Run it from the top of the source tree. Exit: the testbench's (0: every record matches).
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] && [ -n "$1" ] || { echo "usage: memh_by_hand.sh OUTDIR [NUMREF]" >&2; exit 2; }
OUT=$1
NUMREF=${2:-build/numref}
[ -x "$NUMREF" ] || { echo "memh_by_hand.sh: no numref binary at $NUMREF (build first, or pass it)" >&2; exit 2; }
[ -f conformance/examples/rtl/tb_memh.sv ] || { echo "memh_by_hand.sh: run it from the top of the source tree" >&2; exit 2; }
mkdir -p "$OUT"
# --- by hand (docs/hardware.md) ---
R=$PWD/conformance/examples/rtl   # absolute: Verilator's make runs in -Mdir
"$NUMREF" vectors export --to memh --out "$OUT/e4m3.memh" vectors/cast/cuda_satfinite/f32-f8e4m3fn.vec
verilator --timing --cc --exe --build -Mdir "$OUT" -o tb --top-module tb_memh \
    "$R/f32_to_e4m3.sv" "$R/tb_memh.sv" "$R/tb_memh_main.cpp"
"$OUT/tb" +vectors="$OUT/e4m3.memh"
# --- end by hand ---
