#!/usr/bin/env python3
"""Differential test: `numref cast --profile ml_dtypes` against the real ml_dtypes package.

spec §10.1 (the ml_dtypes column of the profile table), §11 (conversion).

For every bf16 and every f16 code, and for a seeded set of f32 codes (300 000 random
codes from splitmix64 plus a structured set around every exponent's rounding points),
the result of `numref cast --from SRC --to DST --profile ml_dtypes` must equal
`np.array(codes).view(SRC).astype(DST)` bit for bit, for DST in f8e4m3fn, f8e5m2,
f8e8m0fnu, f6e3m2fn, f6e2m3fn, f4e2m1fn, bf16, f16 — except for the departures D1-D4
documented in docs/ml_dtypes-departures.md. Each departure is a rule: a
predicate saying which inputs depart and a model of what ml_dtypes returns there. The
test fails when
  * a result differs and no documented rule predicts it (a new departure),
  * a rule predicts a departure that does not happen (the documentation is stale),
  * ml_dtypes' value differs from the rule's model, or
  * the number of departures of an exhaustive source differs from the hand-computed
    count in EXPECTED_COUNTS.
It never passes silently without numpy / ml_dtypes: it fails and says how to install them.

usage: ml_dtypes_diff.py path/to/numref
"""
import itertools
import os
import subprocess
import sys

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # a missing dependency is a failure, never a skip
    print(f"FAIL: the ml_dtypes differential test needs numpy and ml_dtypes ({e}).\n"
          "Run scripts/setup.sh (it installs them with pip), then re-run ctest.", file=sys.stderr)
    sys.exit(1)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numref_testlib import ml_dtypes_formats, splitmix64  # noqa: E402  (tools/tests/numref_testlib.py)

# Source formats: (numpy dtype, storage dtype, bits, exponent bits, fraction bits) — the
# §2.1 descriptor columns the departure predicates below need.
SOURCES = {
    "bf16": (ml_dtypes.bfloat16, np.uint16, 16, 8, 7),
    "f16": (np.float16, np.uint16, 16, 5, 10),
    "f32": (np.float32, np.uint32, 32, 8, 23),
}
TARGETS = {name: dtype for name, dtype in ml_dtypes_formats().items() if name != "f32"}
NO_NAN_TARGETS = {"f6e3m2fn": 0x20, "f6e2m3fn": 0x20, "f4e2m1fn": 0x08}  # target -> its sign bit
CANONICAL_NAN = {"bf16": 0x7FC0, "f16": 0x7E00}  # §2.1 table


def splitmix64_u32(seed, n):
    """n 32-bit codes: the high halves of splitmix64 outputs (fixed, version-independent)."""
    return [z >> 32 for z in itertools.islice(splitmix64(seed), n)]


def f32_structured():
    """Every sign and exponent field with fractions at the rounding points of every target:
    the tie of a target with m fraction bits is fraction 1 << (22 - m); also tie +- 1,
    the tie above an odd candidate, 0, 1 and all ones."""
    fracs = {0, 1, 0x7FFFFF, 0x400000, 0x5FFFFF, 0x600000, 0x400001}
    for m in (0, 1, 2, 3, 7, 10):
        tie = 1 << (22 - m)
        fracs |= {tie - 1, tie, tie + 1, tie + (tie << 1), tie + (tie << 1) - 1, tie + (tie << 1) + 1}
    return [(s << 31) | (e << 23) | f for s in (0, 1) for e in range(256) for f in sorted(fracs)]


def fields(src, c):
    _, _, bits, ebits, mbits = SOURCES[src]
    sign = (c >> (bits - 1)) & 1
    exp = (c >> mbits) & ((1 << ebits) - 1)
    frac = c & ((1 << mbits) - 1)
    return sign, exp, frac, ebits, mbits


def is_nan(src, c):
    _, exp, frac, ebits, _ = fields(src, c)
    return (exp == (1 << ebits) - 1) & (frac != 0)


# ---- the documented departures (docs/ml_dtypes-departures.md) ----------------
# Each: (id, applies(src, dst), predicate(src, dst, codes) -> bool mask, model(src, dst, codes)).

# D1. f8e8m0fnu target, 2^-127 < x < 1.5 * 2^-127. Hand-computed source codes:
#   f32: 2^-127 is the subnormal with fraction 2^22 -> 0x00400000; 1.5 * 2^-127 -> 0x00600000.
#   bf16: 2^-127 = fraction 0x40 * 2^-133 -> 0x0040; 1.5 * 2^-127 -> 0x0060.
#   f16: its smallest value is 2^-24, so no code lies in the interval.
# Spec §7.1 / §7.4 with e8m0_round=tiesup: nearest in the linear domain between 2^-127 (00)
# and 2^-126 (01); below the midpoint 1.5 * 2^-127 -> 00. ml_dtypes rounds every value below
# 2^-126 to a multiple of 2^-126 with ties to even (as if the format had a subnormal binade
# with quantum 2^-126 and a zero at code 00), so anything above 2^-127 gives 01.
D1_RANGE = {"f32": (0x00400000, 0x00600000), "bf16": (0x0040, 0x0060)}


def d1_pred(src, dst, c):
    if src not in D1_RANGE:
        return np.zeros(c.shape, bool)
    lo, hi = D1_RANGE[src]
    return (c > lo) & (c < hi)


# D2. A negative NaN into a format without NaN (FP6, FP4). ml_dtypes' quiet_NaN() for these
# formats is the -0 pattern and a negative NaN gets it negated: +NaN -> -0, -NaN -> +0.
# Spec §6.4 with nan_to_finite=negzero (the profile) gives -0 for both.
def d2_pred(src, dst, c):
    sign, *_ = fields(src, c)
    return is_nan(src, c) & (sign == 1)


# D3. Identity casts (bf16 -> bf16, f16 -> f16) are copies in NumPy: every NaN keeps its bits,
# signaling ones included. Spec §6.3 with nan=sign gives the canonical NaN with the sign.
def d3_pred(src, dst, c):
    sign, *_ = fields(src, c)
    return is_nan(src, c) & (c != (CANONICAL_NAN[dst] | (sign << 15)))


# D4. f32 -> f16 is NumPy's own cast: a NaN keeps its sign and the top 10 fraction bits,
# without setting the quiet bit; if those bits are all zero the result is 0x7C01 | sign.
# Spec §6.3 with nan=sign gives 0x7E00 | sign.
def d4_model(src, dst, c):
    sign, _, frac, _, _ = fields(src, c)
    top = frac >> 13
    return (sign << 15) | 0x7C00 | np.where(top == 0, 1, top)


def d4_pred(src, dst, c):
    sign, *_ = fields(src, c)
    return is_nan(src, c) & (d4_model(src, dst, c) != (0x7E00 | (sign << 15)))


DEPARTURES = [
    ("D1", lambda s, d: d == "f8e8m0fnu", d1_pred, lambda s, d, c: np.full(c.shape, 0x01)),
    ("D2", lambda s, d: d in NO_NAN_TARGETS, d2_pred, lambda s, d, c: np.zeros(c.shape, np.int64)),
    ("D3", lambda s, d: s == d, d3_pred, lambda s, d, c: c),
    ("D4", lambda s, d: s == "f32" and d == "f16", d4_pred, d4_model),
]

# Hand-computed departure counts for the exhaustive sources:
#   bf16/D1: codes 0x41..0x5F = 31.   bf16/D2: negative NaNs 0xFF81..0xFFFF = 127 per target.
#   bf16/D3: 127 NaN fractions per sign minus the canonical one (0x40) = 2 * 126 = 252.
#   f16/D2: 0xFC01..0xFFFF = 1023 per target.  f16/D3: 2 * (1023 - 1) = 2044.
EXPECTED_COUNTS = {("bf16", "f8e8m0fnu", "D1"): 31, ("bf16", "bf16", "D3"): 252, ("f16", "f16", "D3"): 2044}
for _t in NO_NAN_TARGETS:
    EXPECTED_COUNTS[("bf16", _t, "D2")] = 127
    EXPECTED_COUNTS[("f16", _t, "D2")] = 1023

# Hand-computed examples that must depart exactly so (each also covered by the rules):
#   f32 0x00400001 (just above 2^-127) -> e8m0: spec 00, ml_dtypes 01   (D1)
#   f32 0x005FFFFF (just below 1.5*2^-127): spec 00, ml_dtypes 01       (D1)
#   f32 0x00400000 (= 2^-127) -> 00 in both; 0x00600000 (= 1.5*2^-127, tie) -> 01 in both.
#   f32 0xFFC00000 (-NaN) -> f4e2m1fn: spec 08, ml_dtypes 00            (D2)
#   f32 0x7F800001 (sNaN, payload 1) -> f16: spec 7E00, ml_dtypes 7C01  (D4)
EXAMPLES = [
    ("f32", "f8e8m0fnu", 0x00400001, 0x00, 0x01),
    ("f32", "f8e8m0fnu", 0x005FFFFF, 0x00, 0x01),
    ("f32", "f8e8m0fnu", 0x00400000, 0x00, 0x00),
    ("f32", "f8e8m0fnu", 0x00600000, 0x01, 0x01),
    ("f32", "f4e2m1fn", 0xFFC00000, 0x08, 0x00),
    ("f32", "f16", 0x7F800001, 0x7E00, 0x7C01),
]


def numref_cast(numref, src, dst, codes):
    text = "".join(f"{c:x}\n" for c in codes.tolist())
    p = subprocess.run([numref, "cast", "--from", src, "--to", dst, "--profile", "ml_dtypes"],
                       input=text.encode(), capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: numref cast {src}->{dst} exited {p.returncode}: {p.stderr.decode().strip()}")
    lines = p.stdout.decode().splitlines()
    if len(lines) != len(codes):
        raise SystemExit(f"FAIL: numref cast {src}->{dst} wrote {len(lines)} lines for {len(codes)} cases")
    return np.array([int(line.split()[0], 16) for line in lines], dtype=np.int64)


def ml_cast(src, dst, codes):
    dtype, storage = SOURCES[src][0], SOURCES[src][1]
    with np.errstate(all="ignore"):
        out = codes.astype(storage).view(dtype).astype(TARGETS[dst])
    return out.view(np.uint8 if out.dtype.itemsize == 1 else np.uint16).astype(np.int64)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    numref = sys.argv[1]
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}")
    inputs = {
        "bf16": np.arange(1 << 16, dtype=np.int64),
        "f16": np.arange(1 << 16, dtype=np.int64),
        "f32": np.array(sorted(set(splitmix64_u32(20240601, 300000)) | set(f32_structured())), dtype=np.int64),
    }
    failures = []
    results = {}
    for src, codes in inputs.items():
        for dst in TARGETS:
            got = numref_cast(numref, src, dst, codes)
            want = ml_cast(src, dst, codes)
            results[(src, dst)] = (codes, got, want)
            differ = got != want
            explained = np.zeros(codes.shape, bool)
            for did, applies, pred, model in DEPARTURES:
                if not applies(src, dst):
                    continue
                mask = pred(src, dst, codes)
                n = int(mask.sum())
                if (src, dst, did) in EXPECTED_COUNTS and n != EXPECTED_COUNTS[(src, dst, did)]:
                    failures.append(f"{src}->{dst} {did}: predicate selects {n} inputs, hand count is "
                                    f"{EXPECTED_COUNTS[(src, dst, did)]}")
                stale = mask & ~differ
                for c in codes[stale][:5]:
                    failures.append(f"{src}->{dst} {did}: documented departure no longer happens for input "
                                    f"{int(c):x} (both give {int(got[codes == c][0]):x})")
                bad_model = mask & differ & (model(src, dst, codes) != want)
                for c in codes[bad_model][:5]:
                    i = int(np.nonzero(codes == c)[0][0])
                    failures.append(f"{src}->{dst} {did}: input {int(c):x}: ml_dtypes gives {int(want[i]):x}, "
                                    f"rule predicts {int(model(src, dst, codes)[i]):x}")
                explained |= mask
                if n:
                    print(f"  {src:>4} -> {dst:<9} {did}: {n} documented departures")
            new = differ & ~explained
            for i in np.nonzero(new)[0][:10]:
                failures.append(f"{src}->{dst}: NEW departure: input {int(codes[i]):x}: numref {int(got[i]):x}, "
                                f"ml_dtypes {int(want[i]):x}")
            if int(new.sum()) > 10:
                failures.append(f"{src}->{dst}: ... {int(new.sum())} new departures in all")
            print(f"{src:>4} -> {dst:<9} {len(codes)} cases, {int(differ.sum())} differ, "
                  f"{int((differ & ~explained).sum())} unexplained")
    for src, dst, code, spec_val, ml_val in EXAMPLES:
        codes, got, want = results[(src, dst)]
        i = np.nonzero(codes == code)[0]
        if len(i) != 1:
            failures.append(f"example {src} {code:x} is missing from the input set")
            continue
        if int(got[i[0]]) != spec_val or int(want[i[0]]) != ml_val:
            failures.append(f"example {src}->{dst} {code:x}: numref {int(got[i[0]]):x} (expected {spec_val:x}), "
                            f"ml_dtypes {int(want[i[0]]):x} (expected {ml_val:x})")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("OK: numref --profile ml_dtypes equals ml_dtypes except for the documented departures D1-D4")
    return 0


if __name__ == "__main__":
    sys.exit(main())
