#!/usr/bin/env python3
"""Checks the ml_dtypes column of vectors/divergence/cast.vec against ml_dtypes itself.

spec §B: every answer in the divergence file is computed by the reference under the
profile of its column. This test asks the real library (NumPy + ml_dtypes astype) for each
case of the ml_dtypes column and requires the same result code, except where
docs/profiles.md documents a departure of ml_dtypes from its profile:
  D2  a negative NaN into FP6 / FP4 gives +0 (the profile: -0);
  D4  f32 -> f16 NaNs (NumPy's own cast): payload truncated and not quieted;
  D5  NaNs widened into f32 (bf16 -> f32, f16 -> f32) are copied bit for bit: sign,
      payload and a signaling NaN's missing quiet bit kept (the profile: canonical NaN
      with the sign).
Each is checked by its exact predicate and model, so a changed ml_dtypes fails. int8 targets are skipped (NumPy's float -> int8 cast
of NaN / out-of-range values is undefined behaviour in C, not an ml_dtypes conversion).

usage: divergence_ml_dtypes.py vectors/divergence/cast.vec
"""
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "tests"))
from numref_testlib import ml_dtypes_formats  # noqa: E402  (tools/tests/numref_testlib.py)

DTYPES = ml_dtypes_formats()
STORAGE = {32: np.uint32, 16: np.uint16, 8: np.uint8}
BITS = {"f32": 32, "bf16": 16, "f16": 16, "f8e4m3fn": 8, "f8e5m2": 8, "f8e8m0fnu": 8, "f6e3m2fn": 8,
        "f6e2m3fn": 8, "f4e2m1fn": 8}
FP6_FP4 = {"f6e3m2fn": 0x20, "f6e2m3fn": 0x20, "f4e2m1fn": 0x8}  # sign bit of the format


def ml_dtypes_code(src, dst, x):
    a = np.array([x], dtype=STORAGE[BITS[src]]).view(DTYPES[src])
    with np.errstate(all="ignore"):
        b = a.astype(DTYPES[dst])
    return int(b.view(STORAGE[BITS[dst]])[0])


def main(path):
    lines = open(path).read().split("\n")
    cols = next(l for l in lines if l.startswith("columns ")).split()[1:]
    col = cols.index("ml_dtypes")
    begin = lines.index("begin")
    checked = departures = 0
    bad = []
    for line in lines[begin + 1:]:
        if line == "end":
            break
        f = line.split("#")[0].split()
        src, dst, x = f[0], f[1], int(f[2], 16)
        if dst not in DTYPES or src not in DTYPES:
            continue
        want = int(f[col].split("/")[0], 16)
        got = ml_dtypes_code(src, dst, x)
        checked += 1
        if got == want:
            continue
        # D2: a negative NaN into FP6 / FP4: ml_dtypes gives +0 where the profile gives -0.
        neg_nan = np.isnan(np.array([x], dtype=STORAGE[BITS[src]]).view(DTYPES[src]).astype(np.float32))[0] and (
            x >> (BITS[src] - 1)) == 1
        nan = bool(np.isnan(np.array([x], dtype=STORAGE[BITS[src]]).view(DTYPES[src]).astype(np.float32))[0])
        if dst in FP6_FP4 and neg_nan and got == 0 and want == FP6_FP4[dst]:
            departures += 1  # D2
            continue
        if src == "f32" and dst == "f16" and nan:
            t = (x >> 16 & 0x8000) | 0x7C00 | ((x & 0x7FFFFF) >> 13)
            if got == (t if t & 0x3FF else t | 1):
                departures += 1  # D4
                continue
        if dst == "f32" and nan:
            copy = x << 16 if src == "bf16" else ((x & 0x8000) << 16) | 0x7F800000 | ((x & 0x3FF) << 13)
            if src in ("bf16", "f16") and got == copy:
                departures += 1  # D5
                continue
        bad.append("%s -> %s x=%x: ml_dtypes %02x, divergence file (ml_dtypes profile) %02x" % (src, dst, x, got, want))
    for b in bad:
        print("MISMATCH", b)
    print("%d divergence cases checked against ml_dtypes %s, %d documented departures (D2, D4, D5), %d mismatches"
          % (checked, ml_dtypes.__version__, departures, len(bad)))
    return 1 if bad or checked < 40 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
