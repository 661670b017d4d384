#!/usr/bin/env python3
"""Differential test: `numref cast --profile ml_dtypes` against the real ml_dtypes package.

spec §10.1 (the ml_dtypes profile), §10.2 (its pair rules), §11 (conversion).

Every source and target format ml_dtypes has (f32, bf16, f16, f8e4m3fn, f8e5m2, f8e8m0fnu,
f6e3m2fn, f6e2m3fn, f4e2m1fn, f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz; the same format included): every code of each <= 16-bit source
and >= 1 048 576 binary32 codes (tools/tests/peer_diff.py: the structured set plus seeded
random codes). The expected number of differing results is 0, NaN bits included: the former
departures D1-D5 (docs/ml_dtypes-departures.md) are now knob settings of the profile. A few
hand-computed cases (one per former departure) are checked first, so a failure names the rule.
It never passes silently without numpy / ml_dtypes: it fails and says how to install them.

usage: ml_dtypes_diff.py path/to/numref
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# (source, target, input, expected) — expected by hand from ml_dtypes' rules:
#   D1 f32 00400001 = 2^-127 + 2^-149: x / 2^-126 = 0.5 + 2^-23 rounds to the integer 1 -> code 01
#      (§7.4 e8m0_low=grid); 00400000 = 2^-127 is the tie n = 1/2 -> even 0 -> code 00.
#   D2 f32 FFC00000 (-NaN) -> f4e2m1fn: quiet_NaN() is the -0 pattern 8, negated -> 0 (flipzero).
#   D3 bf16 7F81 -> bf16: a copy (nan=raw, same width) -> 7F81.
#   D4 f32 7F800001 -> f16: payload 1 >> 13 = 0, not quieted, zero becomes 1 -> 7C01 (nan=raw).
#   D5 bf16 FFC1 -> f32: shift by 16 -> FFC10000 (nan=raw).
#   fnuz (§2.2, §6.6): f32 80000000 (-0) -> f8e4m3fnuz 00 (no -0); 248 = 43780000 is the tie
#      between 240 (7F, odd) and 256: even -> overflow -> the one NaN 80 (§6.1); f8e4m3fnuz 80 ->
#      f32 FFC00000 (read with sign 1, §3.1, nan=sign).
EXAMPLES = [("f32", "f8e8m0fnu", 0x00400001, 0x01), ("f32", "f8e8m0fnu", 0x00400000, 0x00),
            ("f32", "f4e2m1fn", 0xFFC00000, 0x0), ("f32", "f4e2m1fn", 0x7FC00000, 0x8),
            ("bf16", "bf16", 0x7F81, 0x7F81), ("f32", "f16", 0x7F800001, 0x7C01), ("bf16", "f32", 0xFFC1, 0xFFC10000),
            ("f32", "f8e4m3fnuz", 0x80000000, 0x00), ("f32", "f8e4m3fnuz", 0x43780000, 0x80),
            ("f8e4m3fnuz", "f32", 0x80, 0xFFC00000)]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    numref = sys.argv[1]
    bad = []
    for src, dst, x, want in EXAMPLES:
        p = subprocess.run([numref, "cast", "--from", src, "--to", dst, "--profile", "ml_dtypes"],
                           input=f"{x:x}\n".encode(), capture_output=True)
        got = int(p.stdout.split()[0], 16) if p.returncode == 0 and p.stdout else None
        if got != want:
            bad.append(f"{src}->{dst} {x:x}: numref {got if got is None else hex(got)}, hand-computed {want:x}")
    if bad:
        print("FAIL:\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return subprocess.call([sys.executable, os.path.join(HERE, "peer_diff.py"), numref, "ml_dtypes"])


if __name__ == "__main__":
    sys.exit(main())
