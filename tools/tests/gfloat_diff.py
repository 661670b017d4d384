#!/usr/bin/env python3
"""Differential test: `numref cast --profile gfloat / gfloat_sat` against Graphcore's gfloat.

spec §5.5 (gfloat's stochastic rounding modes as §5.1 settings), §10.5 (the gfloat profiles);
docs/profiles.md "gfloat".

gfloat models a cast as round_float(fi, v, rnd, sat, srbits, srnumbits) then encode_float(fi, .)
(gfloat/round.py, gfloat/encode.py; vectorised: round_ndarray / encode_ndarray). This test
decodes every source code exactly to a binary64 value (decode_ndarray; binary32 codes by
view), runs gfloat, and compares the codes with `numref cast --profile gfloat` (sat=False) and
`--profile gfloat_sat` (sat=True) for every pair of f32, bf16, f16, f8e4m3fn, f8e5m2,
f8e8m0fnu, f6e3m2fn, f6e2m3fn, f4e2m1fn (the same format included), in the five deterministic
modes (rne rna rtz rup rdn = TiesToEven TiesToAway TowardZero TowardPositive TowardNegative),
and, for the pairs that round, in the four stochastic modes through the §5.5 mapping with
seeded random r and k = 1 .. 8:
  StochasticFastest(k, r) = sr_bits k, r;   StochasticFast(k, r) = sr_bits k+1, 2r+1;
  Stochastic(k, r)    = sr_bits 32, (2r+1) 2^(31-k) - (r mod 2);
  StochasticOdd(k, r) = sr_bits 32, (2r+1) 2^(31-k) - (1 - r mod 2).
Inputs: every code of each <= 16-bit source; --f32 N binary32 codes (numref_testlib.f32_inputs:
structured + seeded random; default 1 048 576; `ctest -L peers`: 20 971 520); stochastic modes
use --sr-f32 N of them (default 65 536) and every code of the 16-bit sources.

Inputs gfloat refuses (it raises: a NaN into FP6 / FP4, and with sat=False an overflow into
them) are counted and skipped. Nothing else is excluded: gfloat's E8M0 NaN below 2^-127, its -Inf
into E8M0 under sat=True and its FF for +Inf / overflow into f8e4m3fn (once departures G1 - G3) are
the profiles' settings e8m0_low=nan, negative=inf_abs and inf_nan=nan (spec §7.4, §7.3, §6.7).
The profiles follow the scalar API (round_float + encode_float, which gfloat's encode_block uses);
round_ndarray keeps the sign of -Inf for the unsigned E8M0 (FF under sat=True where round_float
gives FE): that disagreement of gfloat's two APIs is printed, not compared.
Every result must be equal, NaN bits included. gfloat is run vectorised where its
ndarray API has the scalar API's rules (Gfloat.cast says where it is not), and the mixed path
is checked equal to round_float / encode_float on a seeded sample of every pair, mode and sat.
With sat=False, FP6 / FP4 operands beyond max finite (gfloat raises, or gives max in a
directional mode) are run on a sample of at most 512 per pair and mode; the count of the
others is printed (gfloat_sat runs all of them).

With --vectors DIR, also the gfloat and gfloat_sat columns of DIR/divergence/cast.vec (spec
§B.1: the cases that tell the gfloat profiles apart) against round_float + encode_float (RNE);
at least one case must be compared.

usage: gfloat_diff.py NUMREF [--f32 N] [--sr-f32 N] [--vectors DIR]
Exit 0: no difference; 1: a difference (the first ones listed); 77: gfloat is not installed
(scripts/setup.sh installs it).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numref_testlib import LAYOUT, code_inputs, numref_cast, splitmix64_array  # noqa: E402

FORMATS = ["f32", "bf16", "f16", "f8e4m3fn", "f8e5m2", "f8e8m0fnu", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn"]
PROFILES = {"gfloat": False, "gfloat_sat": True}  # profile -> gfloat's sat argument
MODES = {"rne": "TiesToEven", "rna": "TiesToAway", "rtz": "TowardZero", "rup": "TowardPositive",
         "rdn": "TowardNegative"}
SR_MODES = ["StochasticFastest", "StochasticFast", "Stochastic", "StochasticOdd"]


def sr_setting(mode, k, r):
    """spec §5.5: gfloat's (mode, srnumbits k, srbits r) -> numref's (sr_bits, r') (r an array)."""
    if mode == "StochasticFastest":
        return k, r
    if mode == "StochasticFast":
        return k + 1, 2 * r + 1
    down = (r & 1) if mode == "Stochastic" else 1 - (r & 1)  # the tie of RNE / RNO goes down
    return 32, (2 * r + 1) * (1 << (31 - k)) - down


def gfloat_formats():
    import gfloat.formats as gf
    return {"f32": gf.format_info_binary32, "bf16": gf.format_info_bfloat16, "f16": gf.format_info_binary16,
            "f8e4m3fn": gf.format_info_ocp_e4m3, "f8e5m2": gf.format_info_ocp_e5m2,
            "f8e8m0fnu": gf.format_info_ocp_e8m0, "f6e3m2fn": gf.format_info_ocp_e3m2,
            "f6e2m3fn": gf.format_info_ocp_e2m3, "f4e2m1fn": gf.format_info_ocp_e2m1}


class Gfloat:
    """gfloat's cast of source codes (int64 array) into a target: codes, or -1 where gfloat raises."""

    def __init__(self):
        import numpy as np
        import gfloat
        self.np, self.g, self.fi = np, gfloat, gfloat_formats()
        self.sample, self.not_evaluated = 512, 0

    def values(self, src, codes):
        np = self.np
        if src == "f32":
            with np.errstate(invalid="ignore"):  # signaling NaNs widen to NaNs (gfloat drops payloads)
                return codes.astype(np.uint32).view(np.float32).astype(np.float64)
        return self.g.decode_ndarray(self.fi[src], codes.astype(np.int64))

    def scalar(self, dst, v, mode, sat, r=None, k=0):
        """round_float + encode_float on one value; -1 where gfloat raises."""
        fi = self.fi[dst]
        try:
            kw = {} if r is None else {"srbits": int(r), "srnumbits": k}
            return int(self.g.encode_float(fi, self.g.round_float(fi, float(v), getattr(self.g.RoundMode, mode), sat, **kw)))
        except (ValueError, AssertionError):
            return -1

    def cast(self, dst, x, mode, sat, r=None, k=0):
        """gfloat's codes for the values x (binary64), -1 where gfloat raises. Vectorised where the
        ndarray API has the scalar API's rules: round_ndarray for finite values; for the unsigned
        E8M0 (encode_ndarray has no rule for negative values or values below fi.min) encode_float
        on each distinct rounded value; the scalar API for non-finite operands into E8M0 and FP6 /
        FP4. With sat=False an FP6 / FP4 operand beyond max finite makes gfloat raise or give
        max (directional modes): the scalar API on a seeded sample of at most `sample` of them per
        call, the others are counted as not evaluated (gfloat_sat covers them)."""
        np, g, fi = self.np, self.g, self.fi[dst]
        out = np.full(len(x), -1, dtype=np.int64)
        finite = np.isfinite(x)
        scalar = ~finite if (dst == "f8e8m0fnu" or fi.num_nans == 0) else np.zeros(len(x), dtype=bool)
        vec = ~scalar
        if fi.num_nans == 0 and not sat:
            big = finite & (np.abs(np.where(finite, x, 0.0)) > fi.max)
            vec &= ~big
            idx = np.nonzero(big)[0]
            if len(idx) > self.sample:
                self.not_evaluated += len(idx) - self.sample
                idx = idx[(splitmix64_array(len(idx), self.sample) % np.uint64(len(idx))).astype(np.int64)]
            scalar[idx] = True
        if vec.any():
            kw = {} if r is None else {"srbits": r[vec], "srnumbits": k}
            rounded = g.round_ndarray(fi, x[vec], getattr(g.RoundMode, mode), sat, **kw)
            if dst == "f8e8m0fnu":
                uniq, inv = np.unique(rounded, return_inverse=True)
                out[vec] = np.array([g.encode_float(fi, float(u)) for u in uniq], dtype=np.int64)[inv]
            else:
                out[vec] = g.encode_ndarray(fi, rounded).astype(np.int64)
        for i in np.nonzero(scalar)[0]:
            out[i] = self.scalar(dst, x[i], mode, sat, None if r is None else r[i], k)
        out[~vec & ~scalar] = -2  # not evaluated
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("numref")
    ap.add_argument("--f32", type=int, default=1 << 20, help="binary32 inputs of the deterministic modes")
    ap.add_argument("--sr-f32", type=int, default=1 << 16, help="binary32 inputs of the stochastic modes")
    ap.add_argument("--vectors", default="", help="a golden-vector directory: check its divergence/cast.vec gfloat columns")
    args = ap.parse_args()
    if args.vectors and not os.path.isfile(os.path.join(args.vectors, "divergence", "cast.vec")):
        print(f"gfloat_diff.py: --vectors {args.vectors}: no divergence/cast.vec there", file=sys.stderr)
        return 2
    try:
        import numpy as np
        import gfloat
    except ImportError as e:
        print(f"SKIP: gfloat_diff needs numpy and gfloat ({e}); scripts/setup.sh installs them")
        return 77
    from importlib.metadata import version
    print(f"gfloat {version('gfloat')}, numpy {np.__version__}; profiles gfloat (sat=False), gfloat_sat (sat=True)")
    start = time.time()
    G = Gfloat()
    inputs = {f: code_inputs(f, args.f32) for f in FORMATS}
    sr_inputs = dict(inputs, f32=inputs["f32"][np.linspace(0, len(inputs["f32"]) - 1,
                                                           min(args.sr_f32, len(inputs["f32"]))).astype(np.int64)])
    values = {f: G.values(f, inputs[f]) for f in FORMATS}
    sr_values = {f: G.values(f, sr_inputs[f]) for f in FORMATS}
    total = refused = differ = 0
    failures = []

    def compare(profile, src, dst, codes, want, got, label, r=None, k=0):
        nonlocal total, refused, differ
        ok = want >= 0
        refused += int((want == -1).sum())
        total += int(ok.sum())
        bad = 0
        for i in np.nonzero(ok & (want != got))[0]:
            bad += 1
            if len(failures) < 20:
                rr = "" if r is None else f" r={int(r[i]):x} (k={k})"
                failures.append(f"{profile} {label} {src}->{dst} input {int(codes[i]):x}{rr}: "
                                f"numref {int(got[i]):x}, gfloat {int(want[i]):x}")
        differ += bad
        return bad

    # 1. the scalar and vectorised gfloat APIs agree (a sample of every pair and mode)
    rng_words = splitmix64_array(20250101, 1 << 16)
    api_checked = api_differ = 0
    for src in FORMATS:
        idx = (rng_words[:128] % np.uint64(len(inputs[src]))).astype(np.int64)
        x = values[src][idx]
        for dst in FORMATS:
            for sat in (False, True):
                for mode in MODES.values():
                    vec = G.cast(dst, x, mode, sat)
                    for i in range(len(x)):
                        if vec[i] == -2:
                            continue  # not evaluated (sat=False, FP6 / FP4, beyond max finite)
                        api_checked += 1
                        s = G.scalar(dst, x[i], mode, sat)
                        if s != vec[i]:
                            api_differ += 1
                            if len(failures) < 20:
                                failures.append(f"gfloat API: {src}->{dst} {mode} sat={sat} input "
                                                f"{int(inputs[src][idx[i]]):x}: round_float {s:x}, round_ndarray {vec[i]:x}")
    print(f"  gfloat round_float == round_ndarray: {api_checked} samples, {api_differ} differ")
    differ += api_differ
    # the one known disagreement of the two APIs (not compared; the profiles follow round_float)
    e8 = G.fi["f8e8m0fnu"]
    nd = int(gfloat.encode_float(e8, float(gfloat.round_ndarray(e8, np.array([-np.inf]), gfloat.RoundMode.TiesToEven,
                                                                  True)[0])))
    print(f"  gfloat -Inf -> f8e8m0fnu, sat=True: round_float {G.scalar('f8e8m0fnu', -np.inf, 'TiesToEven', True):X}, "
          f"round_ndarray {nd:X} (the profiles follow round_float)")

    # 2. deterministic modes, every pair
    for profile, sat in PROFILES.items():
        for mode_n, mode_g in MODES.items():
            n = bad = 0
            for src in FORMATS:
                for dst in FORMATS:
                    want = G.cast(dst, values[src], mode_g, sat)
                    got = numref_cast(args.numref, src, dst, inputs[src], ("--profile", profile, "--round", mode_n))
                    bad += compare(profile, src, dst, inputs[src], want, got, mode_n)
                    n += len(want)
            print(f"  {profile:>10} {mode_n}: {n:>9} conversions, {bad} differ")

    # 3. stochastic modes (§5.5), the pairs that round: fewer fraction bits or exponent bits
    words = splitmix64_array(20240917, max(len(c) for c in sr_inputs.values()))
    for profile, sat in PROFILES.items():
        for j, mode in enumerate(SR_MODES):
            n = bad = 0
            for src in FORMATS:
                for dst in FORMATS:
                    if LAYOUT[dst][2] >= LAYOUT[src][2] and LAYOUT[dst][1] >= LAYOUT[src][1]:
                        continue
                    k = 1 + (FORMATS.index(src) * 9 + FORMATS.index(dst) + j) % 8
                    codes, x = sr_inputs[src], sr_values[src]
                    r = (words[:len(codes)] >> np.uint64(64 - k)).astype(np.int64)
                    words = np.roll(words, 7919)
                    want = G.cast(dst, x, mode, sat, r, k)
                    bits, r2 = sr_setting(mode, k, r)
                    got = numref_cast(args.numref, src, dst, codes,
                                      ("--profile", profile, "--round", "sr", "--sr-bits", str(bits)), r=r2)
                    bad += compare(profile, src, dst, codes, want, got, f"{mode}(k={k})", r, k)
                    n += len(want)
            print(f"  {profile:>10} {mode}: {n:>9} conversions, {bad} differ")

    # 4. the divergence set's gfloat columns (spec §B.1)
    if args.vectors:
        n = bad = 0
        cols = None
        with open(os.path.join(args.vectors, "divergence", "cast.vec"), encoding="utf-8") as f:
            body = False
            for line in f:
                line = line.split("#", 1)[0].split()
                if not line:
                    continue
                if not body:
                    if line[0] == "columns":
                        cols = line[1:]
                    body = line[0] == "begin"
                    continue
                if line[0] == "end":
                    break
                src, dst = line[0], line[1]
                if src not in FORMATS or dst not in FORMATS:
                    continue
                code = np.array([int(line[2], 16)], dtype=np.int64)
                v = G.values(src, code)[0]
                for profile, sat in PROFILES.items():
                    got = int(line[cols.index(profile)].split("/")[0], 16)
                    want = G.scalar(dst, v, "TiesToEven", sat)
                    if want == -1:
                        refused += 1
                        continue
                    n += 1
                    total += 1
                    if want != got:
                        bad += 1
                        if len(failures) < 20:
                            failures.append(f"divergence/cast.vec {profile} {src}->{dst} {line[2]}: file {got:x}, gfloat {want:x}")
        print(f"  divergence/cast.vec gfloat / gfloat_sat columns: {n} cases, {bad} differ")
        differ += bad
        if n == 0:
            print(f"FAIL: --vectors {args.vectors}: no gfloat column case compared", file=sys.stderr)
            return 1

    print(f"gfloat: {total} conversions, {differ} differ; {refused} inputs gfloat refuses (raises); {G.not_evaluated} "
          f"sat=False FP6 / FP4 overflows not evaluated; {time.time() - start:.0f} s")
    if differ:
        print("FAIL:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("OK: numref --profile gfloat / gfloat_sat equals gfloat on every input, NaN bits included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
