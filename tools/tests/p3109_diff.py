"""Differential test: numref's IEEE P3109 rows (spec §2.5) against gfloat (Graphcore's reference).

usage: p3109_diff.py NUMREF [--f32 N] [--only NAMES] [--sources LIST] [--f32-per-k N] [--modes LIST]
                       [--sr-bits K ...] [--sr-modes LIST] [--sr-sample N] [--vectors DIR]

For every P3109 row of `numref formats` (p3109_k<K>p<P><s|u><e|f>; the rows are read from that
table, never listed here) the script builds gfloat's format_info_p3109(K, P, signedness, domain)
and compares, code for code (NaN bits included):
  * into the member: every bf16 and f16 code, every code of every P3109 member of the same width,
    and N structured + seeded random f32 codes (--f32, default 2^20; with --f32-per-k M only for M
    members of each width K, evenly spaced in table order, first and last included; --sources
    picks a subset of bf16,f16,f32,same-k), under each rounding mode
    numref models — TiesToEven / TowardZero / TowardPositive / TowardNegative / TiesToAway as
    --round rne / rtz / rup / rdn / rna, and StochasticFastest(k, r) as --round sr --sr-bits k with
    random value r (variant `fraction`, §5.1; with --sr-sample N on N evenly strided codes of each
    source); with --sr-modes also StochasticFast / Stochastic / StochasticOdd through the §5.5
    settings (gfloat_diff.sr_setting: sr_bits k + 1 or 32 and the r' of §5.5) — each with gfloat's
    sat=False (--overflow nonsat) and
    sat=True (--overflow saturate; inf_sat=max): gfloat's round_ndarray + encode_ndarray;
  * out of the member: every code into f32, bf16 and f16 (gfloat decode_ndarray, then the exact
    value rounded and encoded by gfloat into binary32 / bfloat16 / binary16; the decoded NaN as
    NumPy's NaN in that format: 7FC00000, 7FC0, 7E00).
With --vectors DIR, also every case of the golden vector files (spec §31.4) with a P3109 source or
target under DIR/cast/ocp*/ and DIR/cast/sr/ocp/ (every row, whatever --only says): the expected
code y of each case against gfloat's result for the file's policy (round, overflow, sr_bits with
variant `fraction`; the `add` files have no gfloat mode and are counted, not compared; gfloat has
no exception flags, so the flags column is not checked here).
Declared departure (§2.5, docs/profiles.md): a negative operand into an unsigned member. numref
gives the NaN (§7.3, negative=nan); gfloat's round_ndarray / encode_ndarray return mostly a number
that is no code of the format (-1 -> -8 into p3109_k8p3ue; its scalar round_float gives 00, the NaN
or an error). Those inputs are counted and left out of the comparison.
Exit 0: 0 differences; 1 otherwise (a missing gfloat is a failure, never a skip).
"""
import argparse
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numref_testlib import numref_cast  # noqa: E402  (tools/tests/numref_testlib.py)
from numref_testlib import f32_inputs  # noqa: E402  (the structured + random binary32 set)
from gfloat_diff import SR_MODES, sr_setting  # noqa: E402  (spec §5.5: gfloat's SR modes as §5.1 settings)

MEMBER = re.compile(r"^p3109_k(\d+)p(\d+)([su])([ef])$")
MODES = ("rne", "rtz", "rup", "rdn", "rna")
NAN_BITS = {"f32": 0x7FC00000, "bf16": 0x7FC0, "f16": 0x7E00}  # np.float32(nan), ml_dtypes, np.float16


def p3109_members(numref):
    """The P3109 rows of `numref formats`: name -> (K, P, signed, extended)."""
    p = subprocess.run([numref, "formats"], capture_output=True, text=True, check=True)
    out = {}
    for line in p.stdout.splitlines():
        m = MEMBER.match(line.split()[0]) if line.split() else None
        if m:
            out[m.group(0)] = (int(m.group(1)), int(m.group(2)), m.group(3) == "s", m.group(4) == "e")
    return out


def p3109_vector_files(vdir, members):
    """(path, header, columns, rows) of each cast vector file under VDIR/cast/ocp*/ and
    VDIR/cast/sr/ocp/ with a P3109 row (in `members`) as source or target; header maps the
    §31.2 keys to their values (policy: key -> value), rows are the whitespace-split case lines."""
    paths = sorted(glob.glob(os.path.join(vdir, "cast", "ocp*", "*.vec")) +
                   glob.glob(os.path.join(vdir, "cast", "sr", "ocp", "*.vec")))
    for path in paths:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        head = dict(line.split(" ", 1) for line in lines[:lines.index("begin")] if " " in line)
        if head.get("from") not in members and head.get("to") not in members:
            continue
        head["policy"] = dict(kv.split("=", 1) for kv in head["policy"].split())
        rows = [line.split() for line in lines[lines.index("begin") + 1:lines.index("end")]]
        if len(rows) != int(head["count"]):
            raise SystemExit(f"FAIL: {path}: {len(rows)} cases, header count {head['count']}")
        yield path, head, head["columns"].split(), rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("numref")
    ap.add_argument("--f32", type=int, default=1 << 20)
    ap.add_argument("--only", default="", help="comma-separated P3109 names (default: every row)")
    ap.add_argument("--sources", default="bf16,f16,f32,same-k",
                    help="comma-separated subset of bf16,f16,f32,same-k (the sources into each member)")
    ap.add_argument("--f32-per-k", type=int, default=0,
                    help="f32 sources for at most this many members of each width K (0: every member)")
    ap.add_argument("--sr-bits", default="2,7", help="comma-separated k of the StochasticFastest runs")
    ap.add_argument("--sr-modes", default="StochasticFastest",
                    help="comma-separated gfloat SR modes of the sr runs (StochasticFastest, StochasticFast, "
                         "Stochastic, StochasticOdd; §5.5) or all")
    ap.add_argument("--sr-sample", type=int, default=0,
                    help="StochasticFastest runs on at most this many evenly strided codes of each "
                         "source (0: every code)")
    ap.add_argument("--vectors", default="", help="a golden-vector directory whose P3109 cast files to check")
    ap.add_argument("--modes", default=",".join(MODES) + ",sr",
                    help="comma-separated subset of rne,rtz,rup,rdn,rna,sr (default: all)")
    args = ap.parse_args()
    try:
        import numpy as np
        import gfloat
        from gfloat import RoundMode, Signedness, Domain, round_ndarray, encode_ndarray, decode_ndarray
        from gfloat.formats import (format_info_p3109, format_info_binary32, format_info_bfloat16,
                                    format_info_binary16)
    except ImportError as e:
        print(f"FAIL: the P3109 differential test needs gfloat and numpy ({e}); pip install gfloat",
              file=sys.stderr)
        return 1
    version = getattr(gfloat, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version
        version = dist_version("gfloat")
    members = p3109_members(args.numref)
    only = set(filter(None, args.only.split(",")))
    if only - set(members):
        print(f"FAIL: --only names no P3109 row: {', '.join(sorted(only - set(members)))}", file=sys.stderr)
        return 1
    chosen = sorted(only or members)
    print(f"gfloat {version}; {len(chosen)} of {len(members)} P3109 rows")
    kinds = set(filter(None, args.sources.split(",")))
    if kinds - {"bf16", "f16", "f32", "same-k"} or not kinds:
        print(f"FAIL: --sources: unknown or empty {args.sources!r} (bf16,f16,f32,same-k)", file=sys.stderr)
        return 1
    if args.f32_per_k < 0 or args.sr_sample < 0:
        print(f"FAIL: --f32-per-k {args.f32_per_k} / --sr-sample {args.sr_sample}: not a count", file=sys.stderr)
        return 1
    f32_rows = set(chosen)
    if args.f32_per_k:  # evenly spaced members of each width, in the table's order
        f32_rows = set()
        for k in sorted({members[m][0] for m in chosen}):
            row = [m for m in members if m in chosen and members[m][0] == k]  # dict order = table order
            n = min(args.f32_per_k, len(row))
            f32_rows |= {row[round(i * (len(row) - 1) / max(n - 1, 1))] for i in range(n)}
    wanted = set(filter(None, args.modes.split(",")))
    if wanted - set(MODES) - {"sr"}:
        print(f"FAIL: --modes: unknown {', '.join(sorted(wanted - set(MODES) - {'sr'}))}", file=sys.stderr)
        return 1
    modes = [m for m in MODES if m in wanted]
    sr_modes = SR_MODES if args.sr_modes == "all" else list(filter(None, args.sr_modes.split(",")))
    if set(sr_modes) - set(SR_MODES) or not sr_modes:
        print(f"FAIL: --sr-modes: unknown or empty {args.sr_modes!r} ({', '.join(SR_MODES)} or all)", file=sys.stderr)
        return 1
    if "sr" in wanted:
        modes += [f"sr{k}" for k in map(int, filter(None, args.sr_bits.split(",")))]
    gf_mode = {"rne": RoundMode.TiesToEven, "rtz": RoundMode.TowardZero, "rup": RoundMode.TowardPositive,
               "rdn": RoundMode.TowardNegative, "rna": RoundMode.TiesToAway}

    def info(name):
        k, p, s, e = members[name]
        return format_info_p3109(k, p, Signedness.Signed if s else Signedness.Unsigned,
                                 Domain.Extended if e else Domain.Finite)

    wide = {"f32": format_info_binary32, "bf16": format_info_bfloat16, "f16": format_info_binary16}
    sources = {"bf16": np.arange(1 << 16, dtype=np.int64), "f16": np.arange(1 << 16, dtype=np.int64),
               "f32": np.array(f32_inputs(args.f32) if "f32" in kinds else [], dtype=np.int64)}
    rng = np.random.default_rng(20250101)
    total = differ = departed = 0
    failures = []

    def compare(src, dst, codes, want, got, what):
        nonlocal total, differ
        bad = np.nonzero(got != want)[0]
        total += len(codes)
        differ += len(bad)
        for i in bad[:5]:
            failures.append(f"{src}->{dst} {what} input {int(codes[i]):x}: numref {int(got[i]):x}, "
                            f"gfloat {int(want[i]):x}")
        return len(bad)

    for dst in chosen:
        fi = info(dst)
        k_bits = members[dst][0]
        srcs = {s: c for s, c in sources.items() if s in kinds and (s != "f32" or dst in f32_rows)}
        for m in members:  # every code of every member of the same width
            if members[m][0] == k_bits and "same-k" in kinds:
                srcs[m] = np.arange(1 << k_bits, dtype=np.int64)
        n_dst = 0
        for src, codes in srcs.items():
            vals = decode_ndarray(wide[src] if src in wide else info(src), codes).astype(np.float64)
            keep = np.ones(len(codes), dtype=bool)
            if not fi.is_signed:  # the declared departure: negative operands into an unsigned member
                keep = ~(vals < 0)
                departed += int(np.count_nonzero(~keep))
            codes, vals = codes[keep], vals[keep]
            for mode in modes:
                for sat in (False, True):
                    policy = ["--overflow", "saturate" if sat else "nonsat"]
                    if mode.startswith("sr"):
                        kk = int(mode[2:])
                        step = max(1, -(-len(codes) // args.sr_sample)) if args.sr_sample > 0 else 1
                        sc, sv = codes[::step], vals[::step]
                        for srm in sr_modes:  # §5.5 each gfloat mode as sr_bits and r'
                            r = rng.integers(0, 1 << kk, size=len(sc), dtype=np.int64)
                            want = encode_ndarray(fi, round_ndarray(fi, sv, getattr(RoundMode, srm), sat, r, kk))
                            bits, rp = sr_setting(srm, kk, r)
                            got = numref_cast(args.numref, src, dst, sc,
                                              ["--round", "sr", "--sr-bits", str(bits)] + policy, rp)
                            n_dst += compare(src, dst, sc, np.asarray(want, dtype=np.int64), got,
                                             f"{srm}({kk}) {'sat' if sat else 'nonsat'}")
                        continue
                    else:
                        want = encode_ndarray(fi, round_ndarray(fi, vals, gf_mode[mode], sat))
                        got = numref_cast(args.numref, src, dst, codes, ["--round", mode] + policy)
                    n_dst += compare(src, dst, codes, np.asarray(want, dtype=np.int64), got,
                                     f"{mode} {'sat' if sat else 'nonsat'}")
        codes = np.arange(1 << k_bits, dtype=np.int64)
        vals = decode_ndarray(fi, codes).astype(np.float64)
        for out, wfi in wide.items():  # member -> f32 / bf16 / f16: exact values
            want = np.asarray(encode_ndarray(wfi, round_ndarray(wfi, vals)), dtype=np.int64)
            # gfloat decodes the NaN to NumPy's NaN; its bits in the wide format are NumPy's
            # (ml_dtypes' for bf16): 7FC00000, 7FC0, 7E00. (gfloat's own encode_float of a NaN is
            # the all-ones code, FFFFFFFF: its pick of a NaN code, not a value it decoded.)
            want[np.isnan(vals)] = NAN_BITS[out]
            got = numref_cast(args.numref, dst, out, codes)
            n_dst += compare(dst, out, codes, want, got, "decode")
        print(f"  {dst:<14} {n_dst} differ ({', '.join(s if s in wide else 'same-k' for s in srcs if s in wide or s == dst) or 'no sources'})")
    if args.vectors:
        n_vec, n_add, n_neg = 0, 0, 0
        for path, head, cols, rows in p3109_vector_files(args.vectors, members):
            src, dst, pol = head["from"], head["to"], head["policy"]
            codes = np.array([int(row[cols.index("x")], 16) for row in rows], dtype=np.int64)
            ys = np.array([int(row[cols.index("y")], 16) for row in rows], dtype=np.int64)
            if pol.get("round") == "sr" and pol.get("sr_variant") == "add":
                n_add += len(rows)  # variant add (§5.2) has no gfloat mode
                continue
            vals = decode_ndarray(wide[src] if src in wide else info(src), codes).astype(np.float64)
            sat = pol["overflow"] == "saturate"
            if dst in wide:  # out of a member: rounded when the wide format cannot hold it (f16)
                rounded = round_ndarray(wide[dst], vals, gf_mode[pol["round"]], sat)
                want = np.asarray(encode_ndarray(wide[dst], rounded), dtype=np.int64)
                want[np.isnan(vals)] = NAN_BITS[dst]  # as in the decode check above
            else:
                fi = info(dst)
                if not fi.is_signed:  # the declared departure, as above
                    keep = ~(vals < 0)
                    n_neg += int(np.count_nonzero(~keep))
                    codes, vals, ys = codes[keep], vals[keep], ys[keep]
                    rows = [row for row, k in zip(rows, keep) if k]
                if pol["round"] == "sr":
                    r = np.array([int(row[cols.index("r")], 16) for row in rows], dtype=np.int64)
                    kk = int(pol["sr_bits"])
                    rounded = round_ndarray(fi, vals, RoundMode.StochasticFastest, sat, r, kk)
                else:
                    rounded = round_ndarray(fi, vals, gf_mode[pol["round"]], sat)
                want = np.asarray(encode_ndarray(fi, rounded), dtype=np.int64)
            n_vec += len(codes)
            compare(src, dst, codes, want, ys, f"golden vector {os.path.relpath(path, args.vectors)}")
        print(f"golden vectors: {n_vec} P3109 cases checked against gfloat ({n_add} of variant add and "
              f"{n_neg} negative operands of unsigned rows not compared)")
        if n_vec == 0:
            print(f"FAIL: --vectors {args.vectors}: no P3109 cast case found", file=sys.stderr)
            return 1
    print(f"f32 sources: {len(f32_rows & set(chosen)) if 'f32' in kinds else 0} rows x {len(sources['f32'])} codes")
    print(f"gfloat: {total} conversions, {differ} differ; {departed} negative operands of unsigned rows "
          f"left out (declared departure, spec §2.5)")
    if differ:
        print("FAIL:\n  " + "\n  ".join(failures[:40]), file=sys.stderr)
        return 1
    print("OK: numref equals gfloat on every compared input, NaN bits included")
    return 0


if __name__ == "__main__":
    sys.exit(main())
