#!/usr/bin/env python3
"""CLI tests for the numref verbs formats, explain, table and cast (standard library only; the
.npy files of ml_dtypes' types in test_npy_ml_dtypes are written with numpy + ml_dtypes, from
scripts/setup.sh).

Every expected value is computed by hand in the comment beside it, from the spec clause
named there — never copied from numref's output.

usage: test_cli.py path/to/numref
"""
import hashlib
import os
import re
import struct
import subprocess
import sys
import tempfile

NUMREF = None
FAILURES = []
CHECKS = 0


def run(args, stdin=b"", stdout=None, timeout=120):
    """Runs numref ARGS; `stdout` a file object to send its standard output to (else captured)."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    if stdout is None:
        p = subprocess.run([NUMREF] + args, input=stdin, capture_output=True, timeout=timeout)
        out = p.stdout.decode(errors="replace")
    else:
        p = subprocess.run([NUMREF] + args, input=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)
        out = ""
    return p.returncode, out, p.stderr.decode(errors="replace")


def fail(name, msg):
    FAILURES.append(f"{name}: {msg}")


def check(name, cond, msg=""):
    global CHECKS
    CHECKS += 1
    if not cond:
        fail(name, msg or "condition false")


def expect_ok(name, args, stdin=b"", stdout=None, contains=()):
    """Exit 0; stdout equal to `stdout` when given; every string of `contains` in stdout."""
    rc, out, err = run(args, stdin)
    check(name, rc == 0, f"exit {rc}, stderr {err.strip()!r}")
    if stdout is not None:
        check(name, out == stdout, f"stdout {out!r}, expected {stdout!r}")
    for c in contains:
        check(name, c in out, f"{c!r} not in stdout:\n{out}")
    return out


def expect_error(name, args, stdin=b"", contains=(), stdout=None, to=None, timeout=120):
    """Exit 2 with exactly one line on stderr containing every string of `contains`
    (`to`: a file object for its standard output)."""
    rc, out, err = run(args, stdin, stdout=to, timeout=timeout)
    check(name, rc == 2, f"exit {rc}, expected 2 (stderr {err.strip()!r})")
    check(name, err.count("\n") == 1 and err.endswith("\n"), f"stderr is not one line: {err!r}")
    for c in contains:
        check(name, c in err, f"{c!r} not in stderr {err!r}")
    if stdout is not None:
        check(name, out == stdout, f"stdout {out!r}, expected {stdout!r}")
    return out, err


def cast(args, lines):
    """Runs numref cast on `lines` and returns its output lines (exit 0 required)."""
    rc, out, err = run(["cast"] + args, "".join(l + "\n" for l in lines))
    check("cast " + " ".join(args), rc == 0, f"exit {rc}: {err.strip()}")
    return out.splitlines()


def expect_cast(name, args, cases):
    """cases: list of (input line, expected output line)."""
    got = cast(args, [c[0] for c in cases])
    want = [c[1] for c in cases]
    for i, (g, w) in enumerate(zip(got, want)):
        check(name, g == w, f"input {cases[i][0]!r}: got {g!r}, expected {w!r}")
    check(name, len(got) == len(want), f"{len(got)} output lines for {len(want)} cases")


# ---- numref formats (§2.1, §3.2, §3.3) ----------------------------------------------------
def test_formats():
    out = expect_ok("formats", ["formats"])
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:] if line and not line.startswith("int8:")}
    for name in ["f32", "bf16", "f16", "f8e4m3fn", "f8e5m2", "f8e8m0fnu", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn", "int8"]:
        check("formats rows", name in rows, f"no row for {name}")
    # f8e4m3fn: 8 bits, e4, m3, bias 7, signed, fn, zero, subnormals, emin = 1 - 7 = -6,
    # max 0x7E = 1.75 * 2^8 = 448, min positive 0x01 = 2^(emin - 3) = 2^-9 = 0.001953125, NaN 7F.
    check("formats e4m3", rows["f8e4m3fn"] == ["f8e4m3fn", "8", "4", "3", "7", "yes", "fn", "yes", "yes", "-6",
                                               "7e", "=", "448", "01", "=", "0.001953125", "7f"],
          f"row {rows['f8e4m3fn']}")
    # f8e8m0fnu: unsigned, no zero, no subnormals, emin = -bias = -127; max FE = 2^127,
    # min 00 = 2^-127 (decimals longer than 12 characters are shown as hex-floats), NaN FF.
    check("formats e8m0", rows["f8e8m0fnu"] == ["f8e8m0fnu", "8", "8", "0", "127", "no", "fn", "no", "no", "-127",
                                                "fe", "=", "0x1p+127", "00", "=", "0x1p-127", "ff"],
          f"row {rows['f8e8m0fnu']}")
    # f16: emin = 1 - 15 = -14; max 7BFF = (2 - 2^-10) * 2^15 = 65504; min 0001 = 2^-24.
    check("formats f16", rows["f16"][9:] == ["-14", "7bff", "=", "65504", "0001", "=", "0x1p-24", "7e00"],
          f"row {rows['f16']}")
    # f32: max 7F7FFFFF = (2 - 2^-23) * 2^127 = 0x1.fffffep+127; min 00000001 = 2^-149.
    check("formats f32", rows["f32"][10:] == ["7f7fffff", "=", "0x1.fffffep+127", "00000001", "=", "0x1p-149",
                                              "7fc00000"], f"row {rows['f32']}")
    # f4e2m1fn: bias 1, emin 0, max 7 = 1.5 * 2^2 = 6, min 1 = 0.5 * 2^0, no NaN.
    check("formats e2m1", rows["f4e2m1fn"][9:] == ["0", "07", "=", "6", "01", "=", "0.5", "-"],
          f"row {rows['f4e2m1fn']}")
    # f6e3m2fn: max 1F = 1.75 * 2^(7-3) = 28; f6e2m3fn: max 1F = 1.875 * 2^(3-1) = 7.5.
    check("formats e3m2", rows["f6e3m2fn"][10:13] == ["1f", "=", "28"], f"row {rows['f6e3m2fn']}")
    check("formats e2m3", rows["f6e2m3fn"][10:13] == ["1f", "=", "7.5"], f"row {rows['f6e2m3fn']}")
    # int8: max 7F = 127, min positive 01 = 1, most negative 80 = -128.
    check("formats int8", "int8: most negative code 80 = -128" in out, out)
    md = expect_ok("formats --markdown", ["formats", "--markdown"]).splitlines()
    check("formats md", md[0].startswith("| name | bits | exp | frac | bias |") and md[1].startswith("|---|"), md[:2])
    check("formats md e4m3", "| f8e4m3fn | 8 | 4 | 3 | 7 | yes | fn | yes | yes | -6 | 7e = 448 | 01 = 0.001953125 | 7f |"
          in md, "e4m3 markdown row")
    expect_ok("formats --help", ["formats", "--help"], contains=["usage: numref formats"])
    expect_error("formats extra", ["formats", "f32"], contains=["unexpected argument 'f32'"])


# ---- numref profiles (§10, §10.4, §32.3) ------------------------------------------------------
def test_profiles():
    out = expect_ok("profiles", ["profiles"]).splitlines()
    check("profiles header", out[0].split() == ["id", "name", "recipe", "rules", "summary"], out[0])
    rows = [line.split(None, 4) for line in out[2:]]
    names = [r[1] for r in rows]
    # §32.3: the C numbers are the table order, NUMREF_PROFILE_OCP 0 ... (backend.h)
    check("profiles ids", [r[0] for r in rows] == [str(i) for i in range(len(rows))], out)
    check("profiles ocp", rows[0][:4] == ["0", "ocp", "-", "0"], rows[0])  # §10.1: no recipe, no pair rule
    # §10.4 / §32.3 NUMREF_PROFILE_TORCHAO_MX_FLOOR 8: to_mx FLOOR, blocks of 32, torch's 11 pair rules
    check("profiles torchao_mx_floor", rows[8][:4] == ["8", "torchao_mx_floor", "mx-floor", "block:1x32"] and
          rows[8][4].split()[0] == "11", rows[8])
    check("profiles names", expect_ok("profiles --names", ["profiles", "--names"]).split() == names)
    recipe = [r[1] for r in rows if r[2] != "-"]
    rout = expect_ok("profiles --recipes", ["profiles", "--recipes"]).splitlines()
    check("profiles --recipes", [line.split()[1] for line in rout[2:]] == recipe, rout)
    check("profiles --recipes te_mxfp8", any(line.split()[1:4] == ["te_mxfp8", "mx-rceil-f32", "block:1x32"] and
                                             " ignore " in line for line in rout), rout)  # §10.4: amax_nan=ignore
    check("profiles --recipes --names",
          expect_ok("recipes names", ["profiles", "--recipes", "--names"]).split() == recipe)
    md = expect_ok("profiles --markdown", ["profiles", "--markdown"]).splitlines()
    check("profiles md", md[0] == "| id | name | recipe | rules | summary |" and md[2].startswith("| 0 | ocp | — | 0 |"),
          md[:3])
    expect_error("profiles --names --markdown", ["profiles", "--names", "--markdown"], contains=["exclude each other"])
    # every other list of profiles is the same table: the --profile help and message, quantize --help
    cast_help = " ".join(expect_ok("cast --help", ["cast", "--help"]).split())
    check("cast --help profiles", ", ".join(names) in cast_help, cast_help)
    _, err = expect_error("unknown profile", ["cast", "--from", "f32", "--to", "f16", "--profile", "nope"])
    check("unknown profile lists", "(known: " + ", ".join(names) + ")" in err, err)
    qhelp = " ".join(expect_ok("quantize --help", ["quantize", "--help"]).split())
    check("quantize --help recipes", " | ".join(recipe) in qhelp, qhelp)
    for name in names:  # each converts: 1.0 into f8e4m3fn is 0x38 under every profile (§3.1: 1 = 2^(7-7))
        check("profile " + name, cast(["--from", "f32", "--to", "f8e4m3fn", "--profile", name], ["3f800000"])
              == ["38 ----"], name)


def test_profiles_policies_rules():
    # §10.1 every profile x every knob; the values below are the spec's rules for each profile
    # (ml_dtypes narrow nan_to_finite=flipzero, §6.4; cuda_satfinite narrow saturates, §6.1)
    out = expect_ok("profiles --policies", ["profiles", "--policies"]).splitlines()
    head = out[0].split()
    check("policies header", head[:3] == ["profile", "targets", "round"] and "inf_nan" in head and "e8m0_low" in head, out[0])
    rows = {(r.split()[0], r.split()[1]): dict(zip(head, r.split())) for r in out[2:]}
    names = expect_ok("profiles --names", ["profiles", "--names"]).split()
    check("policies rows", len(out) - 2 == 2 * len(names), len(out))
    check("policies ml_dtypes", rows[("ml_dtypes", "narrow")]["nan_to_finite"] == "flipzero", rows[("ml_dtypes", "narrow")])
    check("policies cuda_satfinite", rows[("cuda_satfinite", "narrow")]["overflow"] == "saturate" and
          rows[("cuda_satfinite", "wide")]["overflow"] == "nonsat", rows[("cuda_satfinite", "narrow")])
    check("policies sr knobs", rows[("ocp", "narrow")]["sr_bits"] == "-", rows[("ocp", "narrow")])
    # §10.2 one line per rule: as many as the rules column of `numref profiles` sums to
    md = expect_ok("profiles --markdown", ["profiles", "--markdown"]).splitlines()[2:]
    total = sum(int(line.split("|")[4]) for line in md)
    rules = expect_ok("profiles --rules", ["profiles", "--rules"]).splitlines()[2:]
    check("rules count", len(rules) == total, (len(rules), total))
    check("rules cuda bf16", any(r.split()[:5] == ["cuda_satfinite", "1", "bf16", "f32", "nan=raw"] for r in rules), rules[:3])
    expect_error("profiles --policies --rules", ["profiles", "--policies", "--rules"], contains=["exclude each other"])
    expect_error("profiles --names --rules", ["profiles", "--names", "--rules"], contains=["--names"])


def test_quantize_rules():
    # §19.6 one row per rule; §14.2: amax-recip stores R = 1 / S and quantizes with S (the stored
    # scale does not multiply); §17.1 gam carries group mantissas; §20.1 int8-127.5 has q_max 127.5
    out = expect_ok("quantize --rules", ["quantize", "--rules"]).splitlines()
    rows = {r.split()[0]: r for r in out[2:]}
    check("rules names", list(rows)[:4] == ["amax", "amax-recip", "amax-dequant", "pow2"] and "pow2-recip" in rows, rows)
    check("rules amax-recip", rows["amax-recip"].split()[-1] == "no" and rows["amax"].split()[-1] == "yes", rows)
    check("rules gam", "group mantissa" in rows["gam"], rows["gam"])
    check("rules int8-127.5", "element max + 1/2" in rows["int8-127.5"] and " full " in rows["int8-127.5"], rows)
    expect_error("quantize --rules --bogus", ["quantize", "--rules", "--bogus"], contains=["--bogus"])


def test_abi():
    # §32.2 / Annex C.1: nan=raw_plus came in 1.7, inf_nan=nan in 1.5, the rule pow2-recip in 1.5,
    # the recipe value nan_block=first_nan in 1.6, gaussws in 1.3; 1.0's values say 1.0
    out = expect_ok("abi", ["abi", "--markdown"]).splitlines()
    rows = {tuple(c.strip() for c in l.strip("|").split("|")[:2]): l.strip("|").split("|")[-1].strip() for l in out[2:]}
    for key, since in [(("policy knob", "nan=raw_plus"), "1.7"), (("policy knob", "inf_nan=nan"), "1.5"),
                       (("policy knob", "round=rne"), "1.0"), (("scale rule", "pow2-recip"), "1.5"),
                       (("recipe knob", "nan_block=first_nan"), "1.6"), (("op family", "gaussws"), "1.3"), (("op family", "mma"), "1.9"),
                       (("mma knob", "algo=fdpa"), "1.9"), (("mma knob", "algo=fma"), "1.10"),
                       (("mma knob", "algo=efdpa"), "1.11"), (("mma knob", "algo=ftz"), "1.11"),
                       (("profile", "xla"), "1.2")]:
        check("abi " + key[1], rows.get(key) == since, (key, rows.get(key)))
    # the minor version the runner speaks is backend.h's NUMREF_BACKEND_ABI_MINOR
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    header = open(os.path.join(repo, "conformance", "include", "numref", "backend.h")).read()
    minor = re.search(r"#define NUMREF_BACKEND_ABI_MINOR (\d+)u", header).group(1)
    check("abi help version", f"This runner speaks 1.{minor}." in expect_ok("abi --help", ["abi", "--help"]))
    expect_error("abi --bogus", ["abi", "--bogus"], contains=["--bogus"])


# ---- numref conversions (§11.2) ----------------------------------------------------------------
def test_conversions():
    out = expect_ok("conversions", ["conversions", "--profile", "cuda_satfinite", "--profile", "ocp"]).splitlines()
    lines = {(l.split()[0], l.split()[1]): l for l in out[2:]}
    # f32 -> f8e4m3fn: max 448 (7e), grid step 32 at the top, tie 464; to even: 448; above the tie
    # overflows: saturate gives 7e, nonsat the NaN 7f (§6.1); half of 2^-9 is a tie with 0: 00
    sat = lines[("f32->f8e4m3fn", "cuda_satfinite")].split()
    check("conversions satfinite", sat[2] == "cvt.rn.satfinite.e4m3x2.f32" and
          sat[3:] == ["7f", "=", "NaN", "7e", "=", "448", "fe", "=", "-448", "7e", "=", "448", "7e", "=", "448",
                      "7e", "=", "448", "01", "=", "0.001953125", "00", "=", "0"], sat)
    ocp = lines[("f32->f8e4m3fn", "ocp")].split()
    check("conversions ocp", ocp[2] == "-" and ocp[15:18] == ["7e", "=", "448"] and ocp[18:21] == ["7f", "=", "NaN"], ocp)
    inp = expect_ok("conversions --inputs", ["conversions", "--inputs"]).splitlines()
    row = [l for l in inp if l.startswith("f32->f8e4m3fn ")][0].split()
    check("conversions inputs", row[13:16] == ["43e80000", "=", "464"] and row[16] == "43e80001", row)
    for args, msg in [(["--profile", ""], "empty value"), (["--profile", "ocp", "--profile", "ocp"], "given twice"),
                      (["--profile", "nope"], "unknown profile"), (["--profile", "deepgemm"], "recipe profile"),
                      (["--bogus"], "bogus")]:
        expect_error("conversions " + " ".join(args), ["conversions"] + args, contains=[msg])


# ---- numref explain (§3.1, §3.4) ----------------------------------------------------------
def explain_fields(out):
    return {line[:20].strip(): line[21:] for line in out.splitlines() if line}


def test_explain():
    # 0x7E in f8e4m3fn: 0 1111 110 -> (1 + 6/8) * 2^(15 - 7) = 14 * 2^5 = 448 = 0x1.cp+8.
    f = explain_fields(expect_ok("explain 7e", ["explain", "f8e4m3fn", "7e"]))
    check("explain 7e", f.get("sign") == "0 (+)", f)
    check("explain 7e", f.get("exponent field") == "1111 (15)", f)
    check("explain 7e", f.get("fraction field") == "110", f)
    check("explain 7e", f.get("class") == "normal", f)
    check("explain 7e", f.get("value") == "448", f)
    check("explain 7e", f.get("hex-float") == "0x1.cp+8", f)
    check("explain 7e", f.get("unbiased exponent", "").startswith("8 "), f)
    check("explain 7e", f.get("integer significand", "").startswith("14 (|value| = 14 * 2^5)"), f)
    # 0x01 in f8e4m3fn: subnormal 0.001 * 2^-6 = 2^-9 = 0.001953125; exponent emin = -6.
    f = explain_fields(expect_ok("explain 01", ["explain", "e4m3", "0x01"]))
    check("explain 01", (f.get("class"), f.get("value"), f.get("hex-float")) == ("subnormal", "0.001953125", "0x1p-9"), f)
    check("explain 01", f.get("unbiased exponent", "").startswith("-6 "), f)
    check("explain 01", f.get("integer significand", "").startswith("1 (|value| = 1 * 2^-9)"), f)
    # 0xFF in f8e4m3fn: S.1111.111 -> NaN with the sign set (§2.2 fn); no exponent/significand lines.
    f = explain_fields(expect_ok("explain ff", ["explain", "f8e4m3fn", "FF"]))
    check("explain ff", (f.get("sign"), f.get("class"), f.get("value")) == ("1 (-)", "nan", "-nan"), f)
    check("explain ff", "unbiased exponent" not in f and "integer significand" not in f, f)
    # f32 0x3FC00000 = 1.1b * 2^0 = 1.5 = 0x1.8p+0; significand 0xC00000 = 12582912, quantum 2^-23.
    f = explain_fields(expect_ok("explain f32", ["explain", "f32", "3fc00000"]))
    check("explain f32", (f.get("value"), f.get("hex-float")) == ("1.5", "0x1.8p+0"), f)
    check("explain f32", f.get("integer significand", "").startswith("12582912 (|value| = 12582912 * 2^-23)"), f)
    # f32 0x7FA00001: exponent all ones, fraction top bit clear -> signaling NaN (§2.2, §6.3).
    f = explain_fields(expect_ok("explain snan", ["explain", "f32", "7fa00001"]))
    check("explain snan", f.get("class", "").startswith("nan (signaling"), f)
    f = explain_fields(expect_ok("explain qnan", ["explain", "f32", "7fc00000"]))
    check("explain qnan", f.get("class", "").startswith("nan (quiet"), f)
    # f8e5m2 0x7C = 0 11111 00 -> +inf; 0xFC -> -inf.
    f = explain_fields(expect_ok("explain inf", ["explain", "f8e5m2", "7c", "fc"]).split("\n\n")[1])
    check("explain inf", (f.get("class"), f.get("value")) == ("inf", "-inf"), f)
    # bf16 0x8001: -fraction 1 * 2^(1 - 127 - 7) = -2^-133.
    f = explain_fields(expect_ok("explain bf16", ["explain", "bf16", "8001"]))
    check("explain bf16", (f.get("class"), f.get("hex-float")) == ("subnormal", "-0x1p-133"), f)
    # f8e8m0fnu 0x7F = 2^(127 - 127) = 1: no sign bit, no fraction bits.
    f = explain_fields(expect_ok("explain e8m0", ["explain", "f8e8m0fnu", "7f"]))
    check("explain e8m0", f.get("sign", "").startswith("(none"), f)
    check("explain e8m0", f.get("fraction field", "").startswith("(none"), f)
    check("explain e8m0", (f.get("value"), f.get("hex-float")) == ("1", "0x1p+0"), f)
    check("explain e8m0", f.get("unbiased exponent", "").startswith("0 "), f)
    # f8e8m0fnu 0x00 = 2^-127: exact decimal has 127 digits after the point.
    f = explain_fields(expect_ok("explain e8m0 00", ["explain", "f8e8m0fnu", "00"]))
    check("explain e8m0 00", f.get("value", "").startswith("0.0000000000000000000000000000000000000058774717541114375")
          and len(f.get("value", "")) == 2 + 127, f)
    # f6e3m2fn 0x3F = 1 111 11 -> -(1.75 * 2^(7 - 3)) = -28.
    f = explain_fields(expect_ok("explain e3m2", ["explain", "f6e3m2fn", "3f"]))
    check("explain e3m2", (f.get("exponent field"), f.get("fraction field"), f.get("value")) == ("111 (7)", "11", "-28"), f)
    # int8 0x80 = -128 (two's complement).
    f = explain_fields(expect_ok("explain int8", ["explain", "int8", "80"]))
    check("explain int8", (f.get("value"), f.get("low bits", "")[:7]) == ("-128", "0000000"), f)
    # errors
    expect_error("explain unknown format", ["explain", "f7", "1"], contains=["unknown format 'f7'"])
    expect_error("explain too wide", ["explain", "f4e2m1fn", "10"], contains=["'10'", "wider than 4 bits"])
    expect_error("explain too wide e3m2", ["explain", "f6e3m2fn", "40"], contains=["wider than 6 bits"])
    expect_error("explain too wide e4m3", ["explain", "f8e4m3fn", "0x100"], contains=["wider than 8 bits"])
    expect_error("explain malformed", ["explain", "f8e4m3fn", "0xzz"], contains=["malformed hex '0xzz'"])
    expect_error("explain empty", ["explain", "f8e4m3fn", "0x"], contains=["empty hex"])
    expect_error("explain missing", ["explain", "f8e4m3fn"], contains=["expected FORMAT HEX"])
    expect_ok("explain --help", ["explain", "--help"], contains=["usage: numref explain"])


# ---- numref table (§3.1, §3.4) ------------------------------------------------------------
def test_table():
    out = expect_ok("table e2m1", ["table", "f4e2m1fn"]).splitlines()
    check("table e2m1", len(out) == 2 + 16, f"{len(out)} lines")
    check("table e2m1", out[0].split() == ["code", "sign", "exponent", "fraction", "class", "value", "hex-float"], out[0])
    # 0x07 = 0 11 1 -> 1.5 * 2^(3 - 1) = 6; 0x08 = -0; 0x01 = 0.1b * 2^0 = 0.5.
    check("table e2m1", out[2 + 7].split() == ["07", "0", "11", "1", "normal", "6", "0x1.8p+2"], out[2 + 7])
    check("table e2m1", out[2 + 8].split() == ["08", "1", "00", "0", "zero", "-0", "-0x0p+0"], out[2 + 8])
    check("table e2m1", out[2 + 1].split() == ["01", "0", "00", "1", "subnormal", "0.5", "0x1p-1"], out[2 + 1])
    out = expect_ok("table e4m3", ["table", "e4m3"]).splitlines()
    check("table e4m3", len(out) == 2 + 256, f"{len(out)} lines")
    # 0x08 = 0 0001 000 = 2^(1 - 7) = 2^-6 = 0.015625; 0x7E = 448; 0x7F / 0xFF NaN.
    check("table e4m3", out[2 + 0x08].split() == ["08", "0", "0001", "000", "normal", "0.015625", "0x1p-6"], out[2 + 8])
    check("table e4m3", out[2 + 0x7E].split()[4:6] == ["normal", "448"], out[2 + 0x7E])
    check("table e4m3", out[2 + 0x7F].split()[4] == "nan" and out[2 + 0xFF].split()[4] == "nan", "NaN rows")
    out = expect_ok("table e8m0", ["table", "f8e8m0fnu"]).splitlines()
    # no zero in f8e8m0fnu: code 00 is 2^-127, FE is 2^127, FF NaN.
    check("table e8m0", out[2].split()[4] == "normal" and out[2].split()[-1] == "0x1p-127", out[2])
    check("table e8m0", out[2 + 0xFE].split()[-1] == "0x1p+127" and out[2 + 0xFF].split()[-3] == "nan", out[-2:])
    md = expect_ok("table md", ["table", "f6e2m3fn", "--markdown"]).splitlines()
    # f6e2m3fn 0x1F = 0 11 111 = 1.875 * 2^(3 - 1) = 7.5.
    check("table md", md[0] == "| code | sign | exponent | fraction | class | value | hex-float |", md[0])
    check("table md", md[2 + 0x1F] == "| 1f | 0 | 11 | 111 | normal | 7.5 | 0x1.ep+2 |", md[2 + 0x1F])
    out = expect_ok("table int8", ["table", "int8"]).splitlines()
    check("table int8", out[2 + 0x80].split()[:2] == ["80", "1"] and out[2 + 0x80].split()[-2] == "-128", out[2 + 0x80])
    expect_error("table wide", ["table", "f32"], contains=["f32 has 32 bits"])
    expect_error("table unknown", ["table", "e9m9"], contains=["unknown format 'e9m9'"])
    expect_error("table none", ["table"], contains=["expected exactly one FORMAT"])


# ---- numref cast (§4 – §11) ---------------------------------------------------------------
def test_cast_values():
    # f32 -> f8e4m3fn (§4.2, §6.1). 448 = 0x43E00000 is max finite 0x7E, exact.
    # 464 = 0x43E80000 is the midpoint of 448 (0x7E, even) and 480 (the NaN slot 0x7F):
    # tie -> even code 0x7E, inexact. 464.00003 = 0x43E80001 rounds to 480 > 448: overflow,
    # nonsat (ocp) -> the NaN of the infinity slot 0x7F; saturating -> 0x7E; flags o, x.
    e4m3 = [("43e00000", "7e ----"), ("43e80000", "7e ---x"), ("0x43e80001", "7f -o-x")]
    expect_cast("cast e4m3 ocp", ["--from", "f32", "--to", "f8e4m3fn"], e4m3)
    expect_cast("cast e4m3 default profile", ["--from", "f32", "--to", "f8e4m3fn", "--profile", "ocp"], e4m3)
    expect_cast("cast e4m3 cuda_satfinite", ["--from", "f32", "--to", "f8e4m3fn", "--profile", "cuda_satfinite"],
                [("43e80001", "7e -o-x"), ("43e80000", "7e ---x")])
    expect_cast("cast e4m3 --overflow", ["--from", "f32", "--to", "f8e4m3fn", "--overflow", "saturate"],
                [("43e80001", "7e -o-x"), ("c3e80001", "fe -o-x")])
    # -464.00003 nonsat -> NaN with the sign of x (§6.1): 0xFF.
    expect_cast("cast e4m3 negative overflow", ["--from", "f32", "--to", "f8e4m3fn"], [("c3e80001", "ff -o-x")])
    # 2^-10 = 0x3A800000 is half the smallest subnormal 2^-9 of f8e4m3fn: tie between 0 (even)
    # and 0x01 -> 0x00, tiny and inexact -> u, x.
    expect_cast("cast e4m3 tiny tie", ["--from", "f32", "--to", "f8e4m3fn"], [("3a800000", "00 --ux")])
    # NaN and Inf (§6.2, §6.3). Quiet +NaN -> 0x7F (fn: one NaN per sign), -NaN -> 0xFF,
    # no flag; signaling NaN 0x7F800001 -> invalid. +Inf under nonsat -> NaN slot 0x7F, invalid.
    expect_cast("cast e4m3 specials ocp", ["--from", "f32", "--to", "f8e4m3fn"],
                [("7fc00000", "7f ----"), ("ffc00000", "ff ----"), ("7f800001", "7f v---"),
                 ("7f800000", "7f v---"), ("ff800000", "ff v---"), ("80000000", "80 ----")])
    # cuda_satfinite: NaN -> 0x7F with the sign dropped (nan=ones); +-Inf -> +-max 0x7E/0xFE, o, x.
    expect_cast("cast e4m3 specials cuda", ["--from", "f32", "--to", "f8e4m3fn", "--profile", "cuda_satfinite"],
                [("ffc00000", "7f ----"), ("7f800000", "7e -o-x"), ("ff800000", "fe -o-x")])
    # ml_dtypes: NaN sign kept (0xFF), Inf stays special (NaN 0x7F, invalid).
    expect_cast("cast e4m3 specials ml_dtypes", ["--from", "f32", "--to", "f8e4m3fn", "--profile", "ml_dtypes"],
                [("ffc00000", "ff ----"), ("7f800000", "7f v---")])
    # f8e5m2 has Inf: -Inf -> 0xFC exactly; 57344 = 1.75 * 2^15 = 0x47600000 -> 0x7B;
    # 61440 (0x47700000) is the tie of 57344 and 65536 -> even is 65536 = overflow -> Inf 0x7C.
    expect_cast("cast e5m2", ["--from", "f32", "--to", "f8e5m2"],
                [("ff800000", "fc ----"), ("47600000", "7b ----"), ("47700000", "7c -o-x")])
    # f32 -> bf16: 1 + 2^-8 (0x3F808000) is the tie of 0x3F80 (even) and 0x3F81 -> 0x3F80;
    # 1 + 3 * 2^-8 (0x3F818000) ties 0x3F81 / 0x3F82 -> 0x3F82 (even). Max f32 rounds to
    # 2^128: overflow -> +Inf 0x7F80. Denormal 0x00000001 = 2^-149 -> below half of 2^-133: 0, u, x.
    expect_cast("cast bf16", ["--from", "f32", "--to", "bf16"],
                [("3f808000", "3f80 ---x"), ("3f818000", "3f82 ---x"), ("7f7fffff", "7f80 -o-x"),
                 ("00000001", "0000 --ux"), ("3f800000", "3f80 ----")])
    # wider targets: 8-bit code 0x01 of f8e4m3fn = 2^-9 -> f32 field 127 - 9 = 118 = 0x76: 0x3B000000
    # (8 digits); f6e3m2fn 0x3F = -28 = -1.75 * 2^4 -> f32 0xC1E00000; f4e2m1fn 0x0F = -6 = -1.5 * 2^2
    # -> 0xC0C00000; -> f16: -6 = 1 10001 1000000000 = 0xC600 (4 digits).
    expect_cast("cast widen", ["--from", "f8e4m3fn", "--to", "f32"], [("01", "3b000000 ----")])
    expect_cast("cast from e3m2", ["--from", "f6e3m2fn", "--to", "f32"], [("3f", "c1e00000 ----")])
    expect_cast("cast from e2m1", ["--from", "f4e2m1fn", "--to", "f32"], [("f", "c0c00000 ----")])
    expect_cast("cast e2m1 to f16", ["--from", "f4e2m1fn", "--to", "f16"], [("0f", "c600 ----")])
    # f32 -> f4e2m1fn: 5 (0x40A00000) ties 4 (0x06, even) and 6 (0x07) -> 0x06; 8 > 6 overflows:
    # FP4 has no Inf/NaN and always saturates (§6.1) -> 0x07, o, x; -0 -> 0x08 (2 digits).
    expect_cast("cast e2m1", ["--from", "f32", "--to", "f4e2m1fn"],
                [("40a00000", "06 ---x"), ("41000000", "07 -o-x"), ("80000000", "08 ----")])
    # NaN into FP6 (no NaN, §6.4): ocp nan_to_finite=zero -> 00; ml_dtypes negzero -> 0x20;
    # cuda max -> 0x1F; always invalid.
    expect_cast("cast nan e3m2 ocp", ["--from", "f32", "--to", "f6e3m2fn"], [("7fc00000", "00 v---")])
    expect_cast("cast nan e3m2 ml", ["--from", "f32", "--to", "f6e3m2fn", "--profile", "ml_dtypes"],
                [("7fc00000", "20 v---")])
    expect_cast("cast nan e3m2 cuda", ["--from", "f32", "--to", "f6e3m2fn", "--profile", "cuda_nosat"],
                [("7fc00000", "1f v---")])
    # int8 (§6.5): 127 -> 7F; 128 (0x43000000) out of range -> 7F, invalid only; -128 -> 80;
    # 1.5 (0x3FC00000) ties 1 and 2 -> 2 (even), inexact; 2.5 -> 2.
    expect_cast("cast int8", ["--from", "f32", "--to", "int8"],
                [("42fe0000", "7f ----"), ("43000000", "7f v---"), ("c3000000", "80 ----"),
                 ("3fc00000", "02 ---x"), ("40200000", "02 ---x")])
    # int8 sources: 0x80 = -128 = -2^7 -> f32 field 127 + 7 = 0x86 -> 0xC3000000; 0x7F = 127 =
    # (1 + 63/64) * 2^6 -> field 0x85, fraction 63/64 * 2^23 = 0x7E0000 -> 0x42FE0000.
    expect_cast("cast from int8", ["--from", "int8", "--to", "f32"], [("80", "c3000000 ----"), ("7f", "42fe0000 ----")])
    expect_cast("cast int8 symmetric", ["--from", "f32", "--to", "int8", "--int-range", "symmetric"],
                [("c3000000", "81 v---")])


def test_cast_e8m0_and_overrides():
    # f32 -> f8e8m0fnu (§7). 1.5 = 0x3FC00000 is the tie of 2^0 (code 0x7F, odd) and 2^1
    # (0x80, even): ocp (follow -> rne -> even code) 0x80; ml_dtypes (tiesup) 0x80;
    # cuda (floor) 0x7F. 0 -> ocp NaN 0xFF invalid; cuda min 0x00 inexact. -1 -> ocp NaN,
    # cuda |x| -> 0x7F exactly.
    expect_cast("cast e8m0 ocp", ["--from", "f32", "--to", "f8e8m0fnu"],
                [("3fc00000", "80 ---x"), ("00000000", "ff v---"), ("bf800000", "ff v---"), ("3f800000", "7f ----")])
    expect_cast("cast e8m0 cuda", ["--from", "f32", "--to", "e8m0", "--profile", "cuda_satfinite"],
                [("3fc00000", "7f ---x"), ("00000000", "00 ---x"), ("bf800000", "7f ----")])
    # 1.75 = 0x3FE00000: floor 0x7F; nearest 0x80. --round rne on cuda_satfinite sets
    # e8m0_round=follow (-> even) unless --e8m0-round is given.
    expect_cast("cast e8m0 cuda floor", ["--from", "f32", "--to", "e8m0", "--profile", "cuda_satfinite"],
                [("3fe00000", "7f ---x")])
    expect_cast("cast e8m0 --round", ["--from", "f32", "--to", "e8m0", "--profile", "cuda_satfinite", "--round", "rne"],
                [("3fe00000", "80 ---x")])
    expect_cast("cast e8m0 --round + --e8m0-round",
                ["--from", "f32", "--to", "e8m0", "--profile", "cuda_satfinite", "--round", "rne", "--e8m0-round", "floor"],
                [("3fe00000", "7f ---x")])
    # 1.25 = 0x3FA00000 under ceil -> 2^1 = 0x80; rtz (follow) -> 0x7F.
    expect_cast("cast e8m0 ceil", ["--from", "f32", "--to", "e8m0", "--e8m0-round", "ceil"], [("3fa00000", "80 ---x")])
    expect_cast("cast e8m0 rtz", ["--from", "f32", "--to", "e8m0", "--round", "rtz"], [("3fe00000", "7f ---x")])
    # --policy (§10.3) then single knobs: --policy overflow=saturate makes 464.00003 -> 0x7E;
    # a later --overflow nonsat wins -> 0x7F.
    expect_cast("cast --policy", ["--from", "f32", "--to", "f8e4m3fn", "--policy", "overflow=saturate"],
                [("43e80001", "7e -o-x")])
    expect_cast("cast --policy + knob", ["--from", "f32", "--to", "f8e4m3fn", "--policy", "overflow=saturate nan=canonical",
                                         "--overflow", "nonsat"], [("43e80001", "7f -o-x"), ("ffc00000", "7f ----")])
    # directed modes: 1 + 2^-23 (0x3F800001) -> bf16: rtz/rdn 0x3F80, rup 0x3F81; negative: rdn 0xBF81.
    expect_cast("cast rup", ["--from", "f32", "--to", "bf16", "--round", "rup"], [("3f800001", "3f81 ---x"),
                                                                                  ("bf800001", "bf80 ---x")])
    expect_cast("cast rdn", ["--from", "f32", "--to", "bf16", "--round", "rdn"], [("3f800001", "3f80 ---x"),
                                                                                  ("bf800001", "bf81 ---x")])
    # rna: 1 + 2^-8 ties -> away: 0x3F81.
    expect_cast("cast rna", ["--from", "f32", "--to", "bf16", "--round", "rna"], [("3f808000", "3f81 ---x")])
    # DAZ (§8.1): the subnormal 2^-149 is replaced by +0 -> 0x00, no flag. FTZ (§8.2): 2^-9
    # (0x3B000000) is the exact subnormal 0x01 of f8e4m3fn; tiny -> flushed to 0, u, x.
    expect_cast("cast daz", ["--from", "f32", "--to", "f8e4m3fn", "--daz", "1"], [("00000001", "00 ----")])
    expect_cast("cast no daz", ["--from", "f32", "--to", "f8e4m3fn"], [("00000001", "00 --ux"), ("3b000000", "01 ----")])
    expect_cast("cast ftz", ["--from", "f32", "--to", "f8e4m3fn", "--ftz", "1"], [("3b000000", "00 --ux")])
    # --nan (§6.3): payload keeps a truncated payload with the quiet bit: f32 0x7F800001 (sNaN,
    # payload 1) -> f16 fraction 1 >> 13 = 0, | quiet 0x200 -> 0x7E00, invalid; ones -> 0x7FFF.
    expect_cast("cast nan payload", ["--from", "f32", "--to", "f16"], [("7f800001", "7e00 v---"),
                                                                       ("ffc02000", "fe01 ----")])
    expect_cast("cast nan ones", ["--from", "f32", "--to", "f16", "--nan", "ones"], [("ffc00000", "7fff ----")])


def test_cast_sr():
    # §5.1, k = 8. f32 1 + 2^-8 (0x3F808000) -> bf16: quantum 2^-7, N = 1.0 (0x3F80), f = 1/2,
    # f_8 = 128; up iff 128 + r >= 256, i.e. r >= 0x80.
    sr = ["--from", "f32", "--to", "bf16", "--round", "sr", "--sr-bits", "8"]
    expect_cast("cast sr", sr, [("3f808000 7f", "3f80 ---x"), ("3f808000 80", "3f81 ---x"),
                                ("0x3f808000 0xff", "3f81 ---x"), ("3f808000\t00", "3f80 ---x"),
                                # exact inputs never move: 1.0 with r = 0xFF stays 0x3F80, exact
                                ("3f800000 ff", "3f80 ----"),
                                # f = 2^-16 < 2^-8: f_8 = 0, never moves even with r = 0xFF
                                ("3f800001 ff", "3f80 ---x")])
    # k = 32: r up to 0xFFFFFFFF is valid; 1 + 2^-8 with r = 0x80000000 -> f_32 = 2^31, sum = 2^32 -> up.
    expect_cast("cast sr k32", ["--from", "f32", "--to", "bf16", "--round", "sr", "--sr-bits", "32"],
                [("3f808000 80000000", "3f81 ---x"), ("3f808000 7fffffff", "3f80 ---x"), ("3f800000 ffffffff", "3f80 ----")])
    # Subnormal target: 2^-10 (0x3A800000) -> f8e4m3fn, quantum 2^-9: N = 0, f = 1/2, f_8 = 128:
    # fraction variant gives 0x01 for r >= 0x80 (tiny: u, x). The add variant (§5.2) adds
    # r * 2^(20 - 8) to the f32 bits: 2^-10 * (1 + 0xFF000 / 2^23) < 2^-10 * 1.125, which rtz
    # takes to 0 on the 2^-9 grid -> 0x00, u, x.
    expect_cast("cast sr subnormal fraction", ["--from", "f32", "--to", "f8e4m3fn", "--round", "sr", "--sr-bits", "8"],
                [("3a800000 ff", "01 --ux"), ("3a800000 7f", "00 --ux")])
    expect_cast("cast sr subnormal add", ["--from", "f32", "--to", "f8e4m3fn", "--round", "sr", "--sr-bits", "8",
                                          "--sr-variant", "add"], [("3a800000 ff", "00 --ux")])
    # SR beyond max finite (§5.3): 464 (0x43E80000) with r = 0xFF rounds up to 480: overflow,
    # nonsat -> NaN slot 0x7F, saturate -> 0x7E.
    expect_cast("cast sr overflow", ["--from", "f32", "--to", "f8e4m3fn", "--round", "sr", "--sr-bits", "8"],
                [("43e80000 ff", "7f -o-x"), ("43e80000 00", "7e ---x")])
    # SR from an 8-bit source (no lookup table with SR): f8e4m3fn 0x39 = 1.125 -> f4e2m1fn:
    # quantum 0.5 in [1, 2): N = 2 (1.0), f = 1/4, f_4 = 4; up iff 4 + r >= 16, r >= 12 (0xC).
    expect_cast("cast sr 8-bit source", ["--from", "f8e4m3fn", "--to", "f4e2m1fn", "--round", "sr", "--sr-bits", "4"],
                [("39 b", "02 ---x"), ("39 c", "03 ---x")])


def test_cast_input_rules():
    base = ["--from", "f8e4m3fn", "--to", "f32"]
    # 0x3C = 0 0111 100 = 1.5 -> f32 0x3FC00000, in every accepted spelling; blank lines,
    # comments and CRLF endings; the last line needs no newline.
    rc, out, err = run(["cast"] + base, "3c\n0x3C\n0X3c\n  003c  \n\n   \n# comment\n  # indented comment\n3c\r\n3c")
    check("cast spellings", rc == 0 and out == "3fc00000 ----\n" * 6, f"rc {rc} out {out!r} err {err!r}")
    rc, out, err = run(["cast"] + base, "")
    check("cast empty input", rc == 0 and out == "", f"rc {rc} out {out!r}")
    # 6- and 4-bit sources: codes above the width are errors (§2.4): f6e3m2fn 0x3F ok, 0x40 not.
    expect_cast("cast e3m2 width ok", ["--from", "f6e3m2fn", "--to", "f32"], [("3f", "c1e00000 ----")])
    expect_error("cast e3m2 too wide", ["cast", "--from", "f6e3m2fn", "--to", "f32"], "3f\n40\n",
                 contains=["line 2:", "'40'", "wider than the 6 bits of f6e3m2fn"], stdout="c1e00000 ----\n")
    expect_error("cast e2m1 too wide", ["cast", "--from", "f4e2m1fn", "--to", "f32"], "10\n",
                 contains=["line 1:", "wider than the 4 bits of f4e2m1fn"], stdout="")
    expect_error("cast e4m3 too wide", ["cast"] + base, "0x100\n", contains=["line 1:", "wider than the 8 bits"])
    expect_error("cast bf16 too wide", ["cast", "--from", "bf16", "--to", "f32"], "10000\n",
                 contains=["line 1:", "wider than the 16 bits of bf16"])
    expect_error("cast f32 too wide", ["cast", "--from", "f32", "--to", "bf16"], "100000000\n",
                 contains=["line 1:", "wider than the 32 bits of f32"])
    expect_error("cast f32 very wide", ["cast", "--from", "f32", "--to", "bf16"], "123456789abcdef0123\n",
                 contains=["line 1:", "wider than the 32 bits"])
    # leading zeros do not count towards the width
    expect_cast("cast leading zeros", ["--from", "f32", "--to", "bf16"], [("00000000003f800000", "3f80 ----")])
    # malformed hex, with the line number counting blank and comment lines
    expect_error("cast malformed", ["cast"] + base, "3c\n\n# c\nzz\n3c\n", contains=["line 4:", "malformed hex 'zz'"],
                 stdout="3fc00000 ----\n")
    expect_error("cast 0x only", ["cast"] + base, "0x\n", contains=["line 1:", "malformed hex '0x'"])
    # a sign or a '.' makes the token a value (test_cast_values_decimal), not a malformed code
    expect_error("cast negative", ["cast"] + base, "-1z\n", contains=["line 1:", "malformed value '-1z'"])
    expect_error("cast decimal point", ["cast"] + base, "1.5.\n", contains=["line 1:", "malformed"])
    expect_error("cast malformed after wide", ["cast", "--from", "f32", "--to", "bf16"], "123456789abz\n",
                 contains=["line 1:", "malformed hex"])
    expect_error("cast extra token", ["cast"] + base, "3c\n3c 1\n", contains=["line 2:", "unexpected extra token '1'"],
                 stdout="3fc00000 ----\n")
    expect_error("cast nul byte", ["cast"] + base, b"3\x00c\n", contains=["line 1:", "malformed hex"])
    # SR input rules (§4.3): r is required, must be hex, must fit in k bits; nothing after r.
    sr = ["cast", "--from", "f32", "--to", "bf16", "--round", "sr", "--sr-bits", "8"]
    expect_error("cast sr missing r", sr, "3f808000 80\n3f808000\n", contains=["line 2:", "missing r"],
                 stdout="3f81 ---x\n")
    expect_error("cast sr r too wide", sr, "3f808000 100\n", contains=["line 1:", "'100'", "k = 8 bits"])
    expect_error("cast sr r malformed", sr, "3f808000 0xg\n", contains=["line 1:", "malformed hex '0xg'", "for the r"])
    expect_error("cast sr r 33 bits", ["cast", "--from", "f32", "--to", "bf16", "--round", "sr", "--sr-bits", "32"],
                 "3f808000 100000000\n", contains=["line 1:", "wider than 32 bits"])
    expect_error("cast sr extra", sr, "3f808000 80 1\n", contains=["line 1:", "unexpected extra token '1'"])
    # an error after many lines: everything before it is delivered, nothing after it
    lines = ["3c"] * 300000 + ["zz"] + ["3c"] * 10
    rc, out, err = run(["cast"] + base, "\n".join(lines) + "\n")
    check("cast late error", rc == 2 and "line 300001:" in err, f"rc {rc} err {err!r}")
    check("cast late error", out == "3fc00000 ----\n" * 300000, f"{out.count(chr(10))} lines delivered")
    # a line longer than the 1 MiB input buffer
    expect_error("cast long line", ["cast"] + base, "3c\n" + " " * (1 << 20) + "3c\n", contains=["line 2:", "longer than"])


def test_cast_options():
    b = ["cast", "--from", "f32", "--to", "bf16"]
    expect_error("cast no --from", ["cast", "--to", "bf16"], contains=["--from FORMAT is required"])
    expect_error("cast no --to", ["cast", "--from", "f32"], contains=["--to FORMAT is required"])
    expect_error("cast bad --from", ["cast", "--from", "f33", "--to", "bf16"], contains=["--from", "unknown format 'f33'"])
    expect_error("cast bad --to", ["cast", "--from", "f32", "--to", "bf17"], contains=["--to", "unknown format 'bf17'"])
    expect_error("cast bad profile", b + ["--profile", "cuda"], contains=["unknown profile 'cuda'"])
    expect_error("cast bad round", b + ["--round", "nearest"], contains=["--round", "unknown value 'nearest'"])
    expect_error("cast bad overflow", b + ["--overflow", "clamp"], contains=["--overflow", "unknown value 'clamp'"])
    expect_error("cast bad nan", b + ["--nan", "x"], contains=["--nan", "unknown value 'x'"])
    expect_error("cast bad e8m0", b + ["--e8m0-round", "up"], contains=["--e8m0-round", "unknown value 'up'"])
    expect_error("cast bad daz", b + ["--daz", "yes"], contains=["--daz", "expected 0 or 1"])
    expect_error("cast sr no k", b + ["--round", "sr"], contains=["needs --sr-bits"])
    expect_error("cast sr k 0", b + ["--round", "sr", "--sr-bits", "0"], contains=["--sr-bits", "outside 1..32"])
    expect_error("cast sr k 33", b + ["--round", "sr", "--sr-bits", "33"], contains=["--sr-bits", "outside 1..32"])
    expect_error("cast sr k x", b + ["--round", "sr", "--sr-bits", "x"], contains=["--sr-bits", "malformed"])
    expect_error("cast k without sr", b + ["--sr-bits", "8"], contains=["--sr-bits applies only"])
    expect_error("cast variant without sr", b + ["--sr-variant", "add"], contains=["--sr-variant applies only"])
    expect_error("cast bad variant", b + ["--round", "sr", "--sr-bits", "8", "--sr-variant", "x"],
                 contains=["--sr-variant", "unknown value 'x'"])
    expect_error("cast sr add int8", ["cast", "--from", "f32", "--to", "int8", "--round", "sr", "--sr-bits", "8",
                                      "--sr-variant", "add"], contains=["floating-point targets only"])
    expect_error("cast bad policy key", b + ["--policy", "rounding=rne"], contains=["--policy", "unknown policy key"])
    expect_error("cast bad policy value", b + ["--policy", "round=zz"], contains=["--policy", "bad value 'zz'"])
    expect_error("cast unknown option", b + ["--fast"], contains=["unknown option --fast"])
    expect_error("cast positional", b + ["extra"], contains=["unexpected argument 'extra'"])
    expect_ok("cast --help", ["cast", "--help"], contains=["usage: numref cast", "--sr-bits"])
    rc, out, err = run(["nosuchverb"])
    check("unknown verb", rc == 2 and "unknown verb 'nosuchverb'" in err, err)


def test_cast_streaming():
    # Many lines across several 1 MiB buffers: bf16 -> f8e4m3fn goes through the lookup table,
    # the same values as f32 (bf16 << 16 is exact, §3.1) through the Converter; the results
    # must agree line for line. x = a fixed LCG so that the input is reproducible.
    x, codes = 12345, []
    for _ in range(400000):
        x = (x * 6364136223846793005 + 1442695040888963407) & ((1 << 64) - 1)
        codes.append(x >> 48)
    a = cast(["--from", "bf16", "--to", "f8e4m3fn"], [f"{c:x}" for c in codes])
    b = cast(["--from", "f32", "--to", "f8e4m3fn"], [f"{c << 16:08x}" for c in codes])
    check("cast streaming", len(a) == len(codes) and a == b,
          f"{len(a)} lines; first difference at {next((i for i, (p, q) in enumerate(zip(a, b)) if p != q), None)}")


# ---- files a command writes (spec §35) ------------------------------------------------------
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def npy_f32(rows):
    """A .npy file (version 1.0, '<f4', C order) of the float32 values `rows` (a list of equal
    rows), written by hand from the NumPy format description."""
    flat = [v for r in rows for v in r]
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), len(rows[0]))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%df" % len(flat), *flat)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def test_outputs_not_inputs():
    tmp = tempfile.mkdtemp(prefix="numref-cli-out-")
    P = lambda n: os.path.join(tmp, n)
    x = npy_f32([[float(i % 7) - 3.0 for i in range(32)] for _ in range(2)])
    for n in ["t.codes.npy", "u.dequant.npy", "a.npy", "b.npy", "m.fakequant.npy", "ok.npy"]:
        write(P(n), x)
    # §35.1 an output that is an input is refused before any work; the input is untouched
    cases = [
        ("quantize --out = input", ["quantize", "--input", P("t.codes.npy"), "--format", "f8e4m3fn", "--out", P("t")],
         ["--out", P("t.codes.npy"), "is also an input"], "t.codes.npy"),
        ("quantize --dequant-out = input", ["quantize", "--input", P("u.dequant.npy"), "--format", "f8e4m3fn",
                                            "--out", P("u"), "--dequant-out"],
         ["--dequant-out", P("u.dequant.npy"), "is also an input"], "u.dequant.npy"),
        ("mor --svg = input", ["mor", "--input", P("a.npy"), P("b.npy"), "--svg", P("a.npy")],
         ["--svg", P("a.npy"), "is also an input"], "a.npy"),
        ("mor --out = input", ["mor", "--input", P("m.fakequant.npy"), "--recipe", "subtensor3", "--out", P("m")],
         ["--out", P("m.fakequant.npy"), "is also an input"], "m.fakequant.npy"),
    ]
    for name, args, contains, victim in cases:
        expect_error(name, args, contains=contains)
        check(name, read(P(victim)) == x, f"{victim} was changed")
    check("no partial outputs", not os.path.exists(P("t.scales.npy")) and not os.path.exists(P("u.codes.npy"))
          and not os.path.exists(P("m.types.npy")), sorted(os.listdir(tmp)))
    # §35.1 the outputs of one command appear together: a later output that cannot be written
    # (its path is a directory) leaves no earlier PREFIX.*.npy behind
    os.mkdir(P("v.fakequant.npy"))
    expect_error("quantize later output fails", ["quantize", "--input", P("ok.npy"), "--format", "f8e4m3fn",
                                                 "--out", P("v"), "--fake-quant", "bf16"],
                 contains=[P("v.fakequant.npy"), "is a directory"])
    left = sorted(n for n in os.listdir(tmp) if n.startswith("v.") or n.startswith(".v."))
    check("quantize later output fails", left == ["v.fakequant.npy"], f"left behind: {left}")
    # and a good run writes them all (and no temporary file)
    expect_ok("quantize outputs", ["quantize", "--input", P("ok.npy"), "--format", "f8e4m3fn", "--out", P("w"),
                                   "--dequant-out"])
    left = sorted(n for n in os.listdir(tmp) if n.startswith("w.") or n.startswith(".w."))
    check("quantize outputs", left == ["w.codes.npy", "w.dequant.npy", "w.scales.npy"], f"files {left}")


def test_vectors_generate():
    tmp = tempfile.mkdtemp(prefix="numref-cli-vec-")
    d = os.path.join(tmp, "d")
    os.makedirs(os.path.join(d, "mine"))
    os.makedirs(os.path.join(d, "empty"))
    write(os.path.join(d, "mine", "run1.vec"), b"x\n")
    # an earlier generator's MANIFEST (§31.5) lists two files the generator no longer produces:
    # gone.vec unchanged (its sha256 as listed: removed, §35.3) and edited.vec changed since (kept)
    os.makedirs(os.path.join(d, "old"))
    write(os.path.join(d, "old", "gone.vec"), b"old\n")
    write(os.path.join(d, "old", "edited.vec"), b"edited\n")
    sha = lambda b: hashlib.sha256(b).hexdigest()
    write(os.path.join(d, "MANIFEST"), f"{sha(b'old-original')}  old/edited.vec\n{sha(b'old' + bytes([10]))}  old/gone.vec\n"
          .encode())
    out = expect_ok("vectors generate", ["vectors", "generate", "--out", d], contains=["removed stale old/gone.vec",
                                                                                     "kept old/edited.vec"])
    check("vectors generate keeps", read(os.path.join(d, "mine", "run1.vec")) == b"x\n", "mine/run1.vec changed")
    check("vectors generate keeps", os.path.isdir(os.path.join(d, "empty")), "empty directory removed")
    check("vectors generate keeps", read(os.path.join(d, "old", "edited.vec")) == b"edited\n", "edited.vec removed")
    check("vectors generate stale", not os.path.exists(os.path.join(d, "old", "gone.vec")), out)
    # byte-identical to the checked-in vectors (spec §31.4): the same MANIFEST, the same files
    want = read(os.path.join(REPO, "vectors", "MANIFEST"))
    check("vectors generate identical", read(os.path.join(d, "MANIFEST")) == want, "MANIFEST differs from vectors/")
    listed = [line.split("  ", 1)[1] for line in want.decode().splitlines()]
    diff = [p for p in listed
            if not os.path.exists(os.path.join(d, p)) or read(os.path.join(d, p)) != read(os.path.join(REPO, "vectors", p))]
    check("vectors generate identical", not diff, f"{len(diff)} files differ, e.g. {diff[:3]}")
    tmpfiles = [os.path.join(r, n) for r, _, ns in os.walk(d) for n in ns if ".tmp-" in n]
    check("vectors generate no temporary files", not tmpfiles, tmpfiles[:3])
    # --out naming a file, and a MANIFEST numref did not write: one line, exit 2, nothing changed
    f = os.path.join(tmp, "file")
    write(f, b"keep\n")
    expect_error("vectors generate --out file", ["vectors", "generate", "--out", f],
                 contains=["--out", f, "not a directory"])
    check("vectors generate --out file", read(f) == b"keep\n", "the file was changed")
    d2 = os.path.join(tmp, "d2")
    os.makedirs(d2)
    write(os.path.join(d2, "MANIFEST"), b"my notes\n")
    expect_error("vectors generate foreign MANIFEST", ["vectors", "generate", "--out", d2],
                 contains=[os.path.join(d2, "MANIFEST"), "refusing to replace it"])
    check("vectors generate foreign MANIFEST", read(os.path.join(d2, "MANIFEST")) == b"my notes\n", "MANIFEST replaced")


def test_stdout_errors():
    # §35.2 a write error on standard output is exit 2 with one line, for every verb
    tmp = tempfile.mkdtemp(prefix="numref-cli-stdout-")
    x = os.path.join(tmp, "x.npy")
    write(x, npy_f32([[1.0, 2.0, 3.0, 4.0]]))
    verbs = [["explain", "f8e4m3fn", "7e"], ["table", "f4e2m1fn"], ["formats"], ["cast", "--from", "f8e4m3fn",
                                                                                  "--to", "f32"],
             ["quantize", "--input", x, "--format", "f8e4m3fn"], ["mor", "--input", x], ["--help"],
             ["vectors", "verify", os.path.join(REPO, "vectors")], ["conversions"], ["abi"], ["profiles"],
             ["gaussws", "--noise-table"],
             ["conform", "--backend", "reference", "--level", "0", "--ops", "cast:f8e5m2:f32", "--vectors", "none"],
             ["conform", "--backend", "reference", "--level", "0", "--ops", "cast:f8e5m2:f32", "--vectors", "none",
              "--report", "json"],
             ["vectors", "export", "--to", "csv", os.path.join(REPO, "vectors", "cast", "ocp", "f32-f8e4m3fn.vec")]]
    # once (one line: expect_error), with the reason: the strerror of ENOSPC, whether the write
    # failed in the last flush or long before it (a big output)
    with open("/dev/full", "w") as full:
        for args in verbs:
            expect_error(f"{args[0]} > /dev/full", args, stdin="7e\n", to=full,
                         contains=["standard output: write failed: " + os.strerror(28)])


def npy_bytes(descr, shape, data):
    """A .npy file (version 1.0, C order) of dtype `descr` and the raw little-endian `data`."""
    dims = "(%s)" % ("".join("%d," % d for d in shape) if len(shape) == 1 else ", ".join("%d" % d for d in shape))
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def test_input_hygiene():
    """Issue 31 item 10: empty option values, repeated policy / recipe keys, control bytes and NUL in
    quoted input, write failures reported once with their reason, a .npy dtype that is another
    number type than --from."""
    tmp = tempfile.mkdtemp(prefix="numref-cli-hygiene-")
    P = lambda n: os.path.join(tmp, n)
    x = P("x.npy")
    write(x, npy_f32([[1.0, 2.0, 3.0, 4.0]]))
    # -- an empty option value is refused, naming the option, for every verb and both spellings;
    #    nothing is written (quantize --out "" used to write ./.codes.npy)
    cast = ["cast", "--from", "f32", "--to", "f8e4m3fn"]
    quant = ["quantize", "--input", x, "--format", "f8e4m3fn"]
    empties = [
        (["conform", "--backend", "reference", "--case", ""], "--case"),
        (["conform", "--backend", "reference", "--vectors", ""], "--vectors"),
        (["conform", "--backend", "reference", "--out", ""], "--out"),
        (["conform", "--backend", "reference", "--profile", ""], "--profile"),
        (["conform", "--backend", "reference", "--ops", ""], "--ops"),
        (["conform", "--backend", ""], "--backend"),
        (quant + ["--out", ""], "--out"),
        (quant + ["--out="], "--out"),
        (quant + ["--partition", ""], "--partition"),
        (["quantize", "--input", "", "--format", "f8e4m3fn"], "--input"),
        (cast + ["--profile", ""], "--profile"),
        (cast + ["--policy", ""], "--policy"),
        (cast + ["--round="], "--round"),
        (cast + ["--output", ""], "--output"),
        (["cast", "--from", "", "--to", "f32"], "--from"),
        (["mor", "--input", ""], "--input"),
        (["mor", "--input", x, ""], "--input"),
        (["mor", "--input", x, "--threshold", ""], "--threshold"),
        (["gaussws", "--w", x, "--bt", "4", "--seed", "", "--out", P("g.npy")], "--seed"),
        (["gaussws", "--w", x, "--bt", "4", "--seed", "1", "--out", ""], "--out"),
        (["vectors", "export", "--to", "", os.path.join(REPO, "vectors", "cast", "ocp", "f32-f8e4m3fn.vec")], "--to"),
        (["conversions", "--profile", ""], "--profile"),
        (["report", "merge", "--out", "", x], "--out"),
    ]
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        for args, opt in empties:
            _, err = expect_error("empty value " + " ".join(args), args, contains=[opt, "empty value"], timeout=60)
    finally:
        os.chdir(cwd)
    left = sorted(n for n in os.listdir(tmp) if n != "x.npy")
    check("empty values write nothing", left == [], f"files written: {left}")
    # a repeated option that is not a documented multi-value option stays an error
    expect_error("repeated --case", ["conform", "--backend", "reference", "--case", "a", "--case", "b"],
                 contains=["--case", "given twice"])
    # -- §10.3 / §19.8 a key given twice in --policy / --recipe text is refused, naming it
    expect_error("policy key twice", cast + ["--policy", "round=rne round=rtz"], contains=["--policy", "'round'", "twice"])
    expect_error("policy key twice, same word", cast + ["--policy", "daz=1 round=rtz daz=1"], contains=["'daz'", "twice"])
    expect_error("recipe key twice", quant + ["--recipe", "zero_code=one zero_code=stored", "--out", P("r")],
                 contains=["--recipe", "'zero_code'", "twice"])
    # -- user text in a message: ESC as \x1b (docs/cli.md), a NUL as \x00 and the text after it kept
    expect_error("ESC in a hex code", ["cast", "--from", "f8e4m3fn", "--to", "f32"], stdin=b"7\x1bz\n",
                 contains=["line 1", "'7\\x1bz'"])
    expect_error("NUL in a value", ["cast", "--from", "f32", "--to", "bf16"], stdin=b"1.5\x00tail\n",
                 contains=["line 1", "'1.5\\x00tail'"])
    expect_error("ESC in a value", ["cast", "--from", "f32", "--to", "bf16"], stdin=b"+1\x1b[31m\n",
                 contains=["'+1\\x1b[31m'"])
    # -- a write failure to an output file: one line with the reason (strerror of ENOSPC), exit 2
    # (standard output: test_stdout_errors)
    for args in (cast + ["--output", "/dev/full"], ["gaussws", "--w", x, "--bt", "4", "--seed", "1", "--out", "/dev/full"]):
        out, err = expect_error("--output /dev/full " + args[0], args, stdin="3f800000\n",
                                contains=["/dev/full", os.strerror(28)])
        check("--output /dev/full once " + args[0], err.count("/dev/full") == 1, err)
    # -- §19.7 a dtype that is itself another number type: |u1 (uint8) is not int8 codes
    write(P("u8.npy"), npy_bytes("|u1", (3,), bytes([1, 200, 127])))
    expect_error("int8 from |u1", ["cast", "--from", "int8", "--to", "f32", "--input", P("u8.npy")],
                 contains=[P("u8.npy"), "'|u1'", "uint8", "int8 codes", "|i1"])
    write(P("i8.npy"), npy_bytes("|i1", (3,), bytes([1, 200, 127])))
    expect_ok("int8 from |i1", ["cast", "--from", "int8", "--to", "f32", "--input", P("i8.npy")],
              stdout="3f800000 ----\nc2600000 ----\n42fe0000 ----\n")  # 1, 200 - 256 = -56, 127
    expect_error("f8 from |i1", ["cast", "--from", "f8e4m3fn", "--to", "f32", "--input", P("i8.npy")],
                 contains=["'|i1'", "int8", "f8e4m3fn codes"])
    # -- counts in summaries: "1 problem", "1 bf16 code", "1 block" (never "1 problems")
    os.makedirs(P("vec"))
    write(P("vec/MANIFEST"), b"0" * 64 + b"  cast/x.vec\n")  # one listed file that is missing
    rc, out, _ = run(["vectors", "verify", P("vec")])
    check("vectors verify 1 problem", rc == 1 and out.endswith(P("vec") + ": 1 problem\n"), f"exit {rc}: {out!r}")
    expect_ok("cast 1 code", cast[:4] + ["bf16", "--output", P("one.npy")], stdin="3f800000\n",
              contains=[": 1 bf16 code;"])
    expect_ok("gaussws 1 block", ["gaussws", "--w", x, "--bt", "4", "--seed", "1", "--out", P("gw.npy")],
              stdout="gaussws: 1 x 4, 1 block, w_hat\n")
    check("plural", "problems" not in out, out)


def test_vectors_doc_count():
    """docs/vectors.md states no file count of vectors/ that `numref vectors verify` contradicts
    (it said "about 2 900 files" of 3 197; a count typed by hand goes stale)."""
    rc, out, err = run(["vectors", "verify", os.path.join(REPO, "vectors")])
    m = re.search(r": ([0-9]+) files, ([0-9]+) cases", out)
    check("vectors verify count", rc == 0 and m is not None, f"exit {rc}: {out!r} {err!r}")
    with open(os.path.join(REPO, "docs", "vectors.md"), encoding="utf-8") as f:
        doc = f.read()
    for n in re.findall(r"([0-9][0-9 ,]*[0-9]) (?:vector )?files", doc):
        check("docs/vectors.md file count", m is not None and int(re.sub("[ ,]", "", n)) == int(m.group(1)),
              f"docs/vectors.md says {n} files; numref vectors verify counts {m.group(1) if m else '?'}")


def test_messages():
    tmp = tempfile.mkdtemp(prefix="numref-cli-msg-")
    x = os.path.join(tmp, "x.npy")
    write(x, npy_f32([[1.0, 2.0, 3.0, 4.0]]))
    # a directory given as .npy: one line naming the path
    expect_error("npy directory", ["quantize", "--input", tmp, "--format", "f8e4m3fn"],
                 contains=[tmp, "is a directory"])
    # /dev/zero is not a .npy file: refused after its first bytes (never read to the end)
    expect_error("npy /dev/zero", ["quantize", "--input", "/dev/zero", "--format", "f8e4m3fn"],
                 contains=["/dev/zero", "wrong magic"], timeout=30)
    expect_error("npy /dev/zero mor", ["mor", "--input", "/dev/zero"], contains=["/dev/zero", "wrong magic"], timeout=30)
    # a truncated header from a pipe: the header's declared length runs past the end
    expect_error("npy truncated stream", ["quantize", "--input", "/dev/stdin", "--format", "f8e4m3fn"],
                 stdin=b"\x93NUMPY\x01\x00\x40\x00{'descr'", contains=["/dev/stdin", "header length 64"])
    # user text with control characters is echoed escaped on one line
    expect_error("newline in a format", ["quantize", "--input", x, "--format", "f8\ne4\x1b"],
                 contains=["--format", "'f8\\ne4\\x1b'"])
    expect_error("newline in a hex value", ["explain", "f8e4m3fn", "7\ne"], contains=["7\\ne"])
    expect_error("newline in a verb", ["ca\nst"], contains=["unknown verb 'ca\\nst'"])
    # a repeated option is an error naming it (multi-valued options stay repeatable)
    expect_error("repeated option", ["cast", "--from", "f32", "--to", "f16", "--to", "bf16"],
                 contains=["--to", "given twice"])
    expect_error("repeated flag", ["quantize", "--input", x, "--format", "f8e4m3fn", "--json", "--json"],
                 contains=["--json", "given twice"])
    expect_error("repeated option =", ["cast", "--from=f32", "--from=f32", "--to", "f16"],
                 contains=["--from", "given twice"])
    expect_ok("repeatable --input", ["mor", "--input", x, "--input", x])



# ---- numref cast: values and .npy (§11, §4, §19.7) ---------------------------------------------
HALF_MIN_SUB = ("7.00649232162408535461864791644958065640130970938257885878534141944895541342930300743319094181060791"
                "015625e-46")  # 2^-150 exactly: half the smallest f32 subnormal 2^-149


def test_cast_values_decimal():
    # A value is rounded exactly to the source (nearest, ties to even), then cast; f32 -> f32
    # shows the source code itself (the cast is exact: flags ----).
    expect_cast("cast decimal f32", ["--from", "f32", "--to", "f32"], [
        # 3.14 = 1.57 * 2^1: 0.57 * 2^23 = 4781506.56 -> 4781507 = 0x48f5c3; exponent 128 -> 0x40000000
        ("3.14", "4048f5c3 ----"),
        # 0.1 = 1.6 * 2^-4: 0.6 * 2^23 = 5033164.8 -> 0x4ccccd; exponent 123 -> 0x3d800000
        ("0.1", "3dcccccd ----"),
        # -0x1.8p-3 = -1.5 * 2^-3: sign, exponent 124 (0x3e000000), fraction 0.5 (0x400000)
        ("-0x1.8p-3", "be400000 ----"),
        ("-0x1.8P-3", "be400000 ----"),
        # 2^24 + 1 is the tie of 2^24 (even) and 2^24 + 2; 2^24 + 3 the tie of +2 and +4 (even: +4)
        ("+16777217", "4b800000 ----"),
        ("+16777219", "4b800002 ----"),
        ("16777217.000000000000000000001", "4b800001 ----"),  # just above the tie: up
        ("1.6777217e+7", "4b800000 ----"),
        # exactly half the smallest subnormal: the tie of 0 (even) and 0x00000001; a digit more: up
        (HALF_MIN_SUB, "00000000 ----"),
        (HALF_MIN_SUB.replace("015625e", "015626e"), "00000001 ----"),
        # max finite (2 - 2^-23) * 2^127 = 3.40282346639e38; 3.4028235e38 is within half an ulp (2^103)
        ("3.4028235e38", "7f7fffff ----"),
        ("-0", "80000000 ----"), ("+0.0", "00000000 ----"),
        ("inf", "7f800000 ----"), ("-Infinity", "ff800000 ----"),
        ("nan", "7fc00000 ----"), ("-NaN", "ffc00000 ----"),  # §2.1 canonical NaN 7fc00000, sign as given
        ("1e-3000000000000", "00000000 ----"), ("-1e-60", "80000000 ----"),
        ("1e5", "000001e5 ----"),  # hex digits alone are a code (0x1e5), not 10^5
    ])
    # f8e4m3fn source: 3.14 lies between 3 (0x44) and 3.25 (0x45), nearer 3.25 = 0x40500000;
    # 464 is the tie of 448 (0x7e, even) and 480 (0x7f is NaN in f8e4m3fn: 480 is not a value,
    # but the tie still goes to the even code 448)
    expect_cast("cast decimal e4m3", ["--from", "f8e4m3fn", "--to", "f32"], [
        ("3.14", "40500000 ----"), ("+464", "43e00000 ----"), ("-0x1.8p-3", "be400000 ----"),
    ])
    # f8e8m0fnu: 5 lies between 4 (0x81) and 8 (0x82), nearer 4 = 0x40800000
    expect_cast("cast decimal e8m0", ["--from", "f8e8m0fnu", "--to", "f32"], [("+5", "40800000 ----")])
    # int8: 3.5 is the tie of 3 and 4 (even), -2.5 of -2 (even) and -3
    expect_cast("cast decimal int8", ["--from", "int8", "--to", "f32"], [("+3.5", "40800000 ----"),
                                                                         ("-2.5", "c0000000 ----")])
    c = ["cast", "--from", "f32", "--to", "f16"]
    expect_error("cast value overflow", c, stdin="3.5e38\n", contains=["line 1", "3.5e38", "largest finite value of f32"])
    expect_error("cast value e4m3 overflow", ["cast", "--from", "f8e4m3fn", "--to", "f32"], stdin="+470\n",
                 contains=["'+470'", "largest finite value of f8e4m3fn"])
    expect_error("cast value malformed", c, stdin="+1\n3.1z\n", contains=["line 2", "malformed value '3.1z'"],
                 stdout="3c00 ----\n")
    expect_error("cast value no p", c, stdin="0x1.8\n", contains=["malformed value '0x1.8'"])
    expect_error("cast value no inf", ["cast", "--from", "f8e4m3fn", "--to", "f32"], stdin="inf\n",
                 contains=["f8e4m3fn has no infinity"])
    expect_error("cast value no nan", ["cast", "--from", "f4e2m1fn", "--to", "f32"], stdin="nan\n",
                 contains=["f4e2m1fn has no NaN"])
    expect_error("cast value unsigned", ["cast", "--from", "f8e8m0fnu", "--to", "f32"], stdin="-1.0\n",
                 contains=["f8e8m0fnu has no negative values"])
    expect_error("cast value no zero", ["cast", "--from", "f8e8m0fnu", "--to", "f32"], stdin="0.0\n",
                 contains=["has no code in f8e8m0fnu (it has no zero)"])
    expect_error("cast value long", c, stdin="1." + "0" * 1200 + "\n", contains=["longer than 1000 characters"])


def npy_parse(data):
    """(descr, shape, data bytes) of a .npy file, parsed by hand (version 1.0)."""
    check("npy magic", data[:8] == b"\x93NUMPY\x01\x00", data[:8])
    hl = struct.unpack("<H", data[8:10])[0]
    h = eval(data[10:10 + hl].decode())  # the header is a Python literal (NumPy's format)
    return h["descr"], h["shape"], data[10 + hl:]


def test_cast_npy():
    tmp = tempfile.mkdtemp(prefix="numref-cli-cast-")
    P = lambda n: os.path.join(tmp, n)
    # 1 = 0x38 (exponent 7), 3 = 1.5 * 2 = 0x44, 500 > 464 rounds past 448: overflow, NaN 0x7f
    # (ocp non-saturating, flags o and x), -0 = 0x80
    write(P("x.npy"), npy_f32([[1.0, 3.0], [500.0, -0.0]]))
    out = expect_ok("cast npy", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy"), "--output", P("y.npy")],
                    contains=["1 overflow", "1 inexact", "0 invalid", "0 underflow"])
    descr, shape, data = npy_parse(read(P("y.npy")))
    check("cast npy", (descr, shape, data) == ("|u1", (2, 2), bytes([0x38, 0x44, 0x7F, 0x80])), (descr, shape, data, out))
    expect_ok("cast npy to lines", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy")],
              stdout="38 ----\n44 ----\n7f -o-x\n80 ----\n")
    # bf16 output as <u2: 1.0 = 0x3f80, 3.0 = 0x4040, 500 = 0x43fa, -0 = 0x8000
    expect_ok("cast npy bf16", ["cast", "--from", "f32", "--to", "bf16", "--input", P("x.npy"), "--output", P("b.npy")])
    descr, shape, data = npy_parse(read(P("b.npy")))
    check("cast npy bf16", (descr, shape, struct.unpack("<4H", data)) == ("<u2", (2, 2), (0x3F80, 0x4040, 0x43FA, 0x8000)),
          (descr, shape, data))
    # lines in, .npy out: 1-D; values in lines too
    expect_ok("cast lines to npy", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--output", P("z.npy")],
              stdin="3f800000\n+3\n")
    check("cast lines to npy", npy_parse(read(P("z.npy"))) == ("|u1", (2,), bytes([0x38, 0x44])), "z.npy")
    # the input is never the output; a dtype that does not hold the --from codes
    expect_error("cast npy output = input", ["cast", "--from", "f32", "--to", "f32", "--input", P("x.npy"),
                                             "--output", P("x.npy")], contains=["--output", "is also an input"])
    check("cast npy output = input", read(P("x.npy")) == npy_f32([[1.0, 3.0], [500.0, -0.0]]), "x.npy changed")
    expect_error("cast npy dtype", ["cast", "--from", "f16", "--to", "f32", "--input", P("x.npy")],
                 contains=[P("x.npy"), "'<f4' (float32) does not hold f16 codes"])
    expect_error("cast npy sr", ["cast", "--from", "f32", "--to", "bf16", "--round", "sr", "--sr-bits", "8",
                                 "--input", P("x.npy")], contains=["--input", "stochastic rounding"])


def test_threads():
    """Issue 32: --threads N for `cast` and `quantize` on .npy inputs: the same bytes (files and
    summary) for 1, 2 and 3 threads on an input large enough to be split (2^20 + 2^19 elements:
    three ranges of 2^19); bad values refused with one line and exit 2."""
    tmp = tempfile.mkdtemp(prefix="numref-cli-threads-")
    P = lambda n: os.path.join(tmp, n)
    rows, cols = 1536, 1024
    n = rows * cols
    # a deterministic spread of f32 codes: exponents 2^-20 .. 2^20, both signs, some NaN / Inf / 0
    words = []
    s = 0x9E3779B97F4A7C15
    for i in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        w = ((s >> 63) << 31) | ((107 + (s >> 40) % 41) << 23) | ((s >> 10) & 0x7FFFFF)
        words.append(w)
    words[5], words[70000], words[900001], words[1200000] = 0x7FC00000, 0x7F800000, 0xFF800000, 0
    write(P("x.npy"), npy_bytes("<f4", (rows, cols), struct.pack("<%dI" % n, *words)))
    outs = {}
    for t in ("1", "2", "3"):
        expect_ok(f"cast --threads {t}", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy"),
                                          "--output", P(f"c{t}.npy"), "--threads", t])
        out = expect_ok(f"quantize --threads {t}", ["quantize", "--input", P("x.npy"), "--format", "f8e4m3fn",
                                                    "--partition", "block:1x32", "--scale", "mx-floor",
                                                    "--out", P(f"q{t}"), "--threads", t, "--json"])
        outs[t] = (read(P(f"c{t}.npy")), read(P(f"q{t}.codes.npy")), read(P(f"q{t}.scales.npy")),
                   out.replace(f"q{t}", "qN"))
    for t in ("2", "3"):
        for i, what in enumerate(("cast codes", "quantize codes", "quantize scales", "quantize summary")):
            check(f"--threads {t}: {what}", outs[t][i] == outs["1"][i], f"differs from --threads 1")
    # mor: the error sums by ranges of block rows (12 block rows of 128: split 2 and 3 ways)
    mor = {}
    for t in ("1", "2", "3"):
        for recipe in ("tensor", "subtensor3"):
            mor[t, recipe] = expect_ok(f"mor --threads {t} {recipe}", [
                "mor", "--input", P("x.npy"), "--recipe", recipe, "--json", "--threads", t, "--out" if recipe !=
                "tensor" else "--max-blocks", P(f"mor_t{t}") if recipe != "tensor" else "64"])
        mor[t, "files"] = (read(P(f"mor_t{t}.types.npy")), read(P(f"mor_t{t}.fakequant.npy")))
    for t in ("2", "3"):
        check(f"mor --threads {t}: tensor", mor[t, "tensor"] == mor["1", "tensor"], "differs from --threads 1")
        check(f"mor --threads {t}: subtensor3",
              mor[t, "subtensor3"].replace(f"mor_t{t}", "mor_tN") == mor["1", "subtensor3"].replace("mor_t1", "mor_tN"),
              "differs from --threads 1")
        check(f"mor --threads {t}: files", mor[t, "files"] == mor["1", "files"], "differ from --threads 1")
    expect_error("mor --threads 0", ["mor", "--input", P("x.npy"), "--threads", "0"], contains=["--threads"])
    lines = expect_ok("cast --threads lines", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy"),
                                               "--threads", "3"])
    check("cast --threads lines", lines.count("\n") == n, f"{lines.count(chr(10))} lines")
    for bad in ("0", "-1", "", "x", "1.5"):
        expect_error(f"--threads {bad!r}", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy"),
                                            "--threads", bad], contains=["--threads"])
        expect_error(f"quantize --threads {bad!r}", ["quantize", "--input", P("x.npy"), "--format", "f8e4m3fn",
                                                     "--threads", bad], contains=["--threads"])
    expect_error("--threads twice", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--input", P("x.npy"),
                                     "--threads", "1", "--threads", "2"], contains=["--threads", "given twice"])
    expect_error("quantize --threads twice", ["quantize", "--input", P("x.npy"), "--format", "f8e4m3fn",
                                              "--threads", "1", "--threads", "2"], contains=["--threads", "given twice"])
    expect_error("--threads without --input", ["cast", "--from", "f32", "--to", "f8e4m3fn", "--threads", "2"],
                 stdin="3f800000\n", contains=["--threads applies to a .npy input"])


def test_npy_ml_dtypes():
    """§19.7 .npy files of ml_dtypes' 8-, 6- and 4-bit floats, written by NumPy + ml_dtypes here
    (NumPy saves them as '<V1' / '|V1', ml_dtypes 0.6 float8_e5m2 as '<f1'): read by `cast`
    (--from names the format) and by `quantize` (--input-format, which must have 1-byte codes)."""
    import numpy as np  # numpy and ml_dtypes: scripts/setup.sh (as for cli_ml_dtypes_diff)
    import ml_dtypes

    tmp = tempfile.mkdtemp(prefix="numref-cli-npy-ml-")
    P = lambda n: os.path.join(tmp, n)
    # values every one of these formats holds exactly (spec §2.1 rows; e8m0 has powers of 2
    # only and no sign): read back to f32 they must be the same values, bit for bit
    vals = [[1.0, -2.0], [0.5, 3.0]]
    pow2 = [[1.0, 2.0], [0.5, 4.0]]
    for fmt, dt, v in (("f8e4m3fn", "float8_e4m3fn", vals), ("f8e5m2", "float8_e5m2", vals),
                       ("f8e8m0fnu", "float8_e8m0fnu", pow2), ("f6e3m2fn", "float6_e3m2fn", vals),
                       ("f6e2m3fn", "float6_e2m3fn", vals), ("f4e2m1fn", "float4_e2m1fn", vals)):
        name = f"npy {dt}"
        np.save(P(fmt + ".npy"), np.array(v, dtype=np.float32).astype(getattr(ml_dtypes, dt)))
        descr = npy_parse(read(P(fmt + ".npy")))[0]
        check(name, descr in ("<V1", "|V1", "<f1", "|f1"), f"NumPy wrote {descr!r}")  # what this test is about
        expect_ok(name, ["cast", "--from", fmt, "--to", "f32", "--input", P(fmt + ".npy"), "--output", P(fmt + ".f32.npy")],
                  contains=["4 f32 codes", "0 inexact"])
        flat = [x for r in v for x in r]
        got = npy_parse(read(P(fmt + ".f32.npy"))) if os.path.exists(P(fmt + ".f32.npy")) else "no output file"
        check(name, got == ("<f4", (2, 2), struct.pack("<4f", *flat)), got)
        # the file's items are 1 byte: a 16-bit source does not match
        expect_error(name + " --from bf16", ["cast", "--from", "bf16", "--to", "f32", "--input", P(fmt + ".npy")],
                     contains=[P(fmt + ".npy"), f"'{'<f1' if 'f' in descr else '|V1'}' (", "does not hold bf16 codes"])
        # §19.7 '<f1' is ml_dtypes' float8_e5m2 itself: not the codes of another 8-bit format
        if "f" in descr:
            for other in ("f8e4m3fn", "f4e2m1fn"):
                expect_error(name + " as " + other, ["cast", "--from", other, "--to", "f32", "--input", P(fmt + ".npy")],
                             contains=[P(fmt + ".npy"), "'<f1'", "float8_e5m2", f"does not hold {other} codes"])
                expect_error(name + " quantize as " + other, ["quantize", "--input", P(fmt + ".npy"), "--input-format",
                                                              other, "--format", "f8e4m3fn"],
                             contains=[P(fmt + ".npy"), "'<f1'", "float8_e5m2", other])
    # codes of 4-bit f4e2m1fn with bits above the width (0x1F): an error naming the element (§2.4)
    np.save(P("f4bad.npy"), np.array([0x02, 0x1F], dtype=np.uint8).view(ml_dtypes.float4_e2m1fn))
    expect_error("npy f4 high bits", ["cast", "--from", "f4e2m1fn", "--to", "f32", "--input", P("f4bad.npy")],
                 contains=["element 1", "4-bit width"])

    # quantize: the hand-worked GAM example of tools/tests/quantize (§17; test_gam.cpp
    # Gam.HandWorked2x4): [[3, -1, 0.5, 0.25], [10, 7, 0, 0]] (every value exact in E4M3),
    # blocks 1x2, one group: element codes 78 EB 7B 73 / 7E 7A 00 00
    x = np.array([[3, -1, 0.5, 0.25], [10, 7, 0, 0]], dtype=np.float32)
    np.save(P("q8.npy"), x.astype(ml_dtypes.float8_e4m3fn))
    q = ["quantize", "--input", P("q8.npy"), "--format", "f8e4m3fn", "--partition", "block:1x2", "--scale", "gam"]
    expect_ok("npy quantize V1", q + ["--input-format", "f8e4m3fn", "--out", P("g")])
    got = npy_parse(read(P("g.codes.npy")))[1:] if os.path.exists(P("g.codes.npy")) else "no output file"
    check("npy quantize V1", got == ((2, 4), bytes([0x78, 0xEB, 0x7B, 0x73, 0x7E, 0x7A, 0x00, 0x00])), got)
    expect_error("npy quantize V1 unnamed", q, contains=[P("q8.npy"), "holds bit patterns",
                                                        "--input-format (e.g. f8e4m3fn)"])
    expect_error("npy quantize V1 as bf16", q + ["--input-format", "bf16"],
                 contains=[P("q8.npy"), "bf16 codes take 2 bytes but the file's items have 1"])


def test_version():
    # The version is the project's (CMakeLists.txt project(numref VERSION ...)) and the spec's
    # ("Spec version" at the top of docs/spec.md): read both here, independently of the binary.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cm = open(os.path.join(root, "CMakeLists.txt")).read()
    v = re.search(r"project\(numref VERSION ([0-9.]+)", cm).group(1)
    sv = re.search(r"^\*\*Spec version ([0-9.]+)\*\*", open(os.path.join(root, "docs", "spec.md")).read(), re.M).group(1)
    want = f"numref {v} (spec {sv})\n"
    expect_ok("--version", ["--version"], stdout=want)
    expect_ok("version verb", ["version"], stdout=want)
    expect_ok("--help names --version", ["--help"], contains=("--version",))


def test_cli_md_knob_table():
    """docs/cli.md's table of single-knob options lists, per option, exactly the words the CLI
    accepts (its error for an unknown value names them: "expected a|b|c"); a value added to the
    knob table (spec §10.3) and not to the docs fails here."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")
    with open(path, encoding="utf-8") as f:
        rows = re.findall(r"^\| `(--[a-z0-9-]+) [A-Z]` \| ([a-z0-9_, ]+) \| §", f.read(), re.M)
    check("cli.md knob table found", len(rows) >= 12, f"{len(rows)} rows parsed from {path}")
    b = ["cast", "--from", "f32", "--to", "f8e4m3fn"]
    for opt, words in rows:
        rc, _, err = run(b + [opt, "no_such_word"])
        m = re.search(r"expected ([a-z0-9_|]+)\)", err)
        check(f"cli.md {opt}", rc == 2 and m is not None, f"exit {rc}, stderr {err.strip()!r}")
        if m:
            documented = [w.strip() for w in words.split(",")]
            check(f"cli.md {opt}", sorted(documented) == sorted(m.group(1).split("|")),
                  f"docs/cli.md lists {documented}, the CLI accepts {m.group(1).split('|')}")


def test_spec_normative_references():
    """§1.1 Normative references: every bracketed reference tag that docs/spec.md uses in its text
    ("[MX] §6.3", "[GWS] §3.4") is defined by an entry of §1.1, and every entry of §1.1 is used
    somewhere else in the spec; each arXiv id there is well formed (arXiv:YYMM.NNNNN), and the
    other documents that name the papers (docs/*.md, CITATION.cff) give the same arXiv id as §1.1
    for the title they name. Code spans (`[DIR]`) are not references."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "docs", "spec.md"), encoding="utf-8") as f:
        spec = f.read()
    sec = re.search(r'^#### §1\.1 Normative references\n(.*?)^<a id=', spec, re.M | re.S)
    check("spec §1.1 found", sec is not None, "no '#### §1.1 Normative references' in docs/spec.md")
    if sec is None:
        return
    entries = {}  # tag -> the entry's text (an entry runs until the next line that opens a tag)
    for m in re.finditer(r'^\[([A-Za-z0-9]+)\] (.*?)(?=^\[[A-Za-z0-9]+\] |\Z)', sec.group(1), re.M | re.S):
        entries[m.group(1)] = " ".join(m.group(2).split())
    check("spec §1.1 entries", len(entries) >= 6, f"{len(entries)} entries parsed from §1.1: {sorted(entries)}")
    rest = (spec[:sec.start()] + spec[sec.end():])
    rest = re.sub(r"`[^`\n]*`", "", rest)  # code spans
    used = set(re.findall(r"\[([A-Z][A-Za-z0-9]*)\](?!\()", rest))  # not markdown links [x](y)
    for tag in sorted(used - set(entries)):
        fail("spec §1.1", f"[{tag}] is used in docs/spec.md but §1.1 does not define it")
    check("spec §1.1 tags defined", used <= set(entries))
    for tag in sorted(set(entries) - used):
        fail("spec §1.1", f"§1.1 defines [{tag}], which the rest of docs/spec.md never cites")
    check("spec §1.1 tags used", set(entries) <= used)
    # arXiv ids: well formed, one per paper; the title (between *...*) maps to its id
    papers = {}
    for tag, text in entries.items():
        ids = re.findall(r"arXiv:(\S+?)[,.]?(?:\s|$)", text + " ")
        for i in ids:
            check("spec §1.1 arXiv id", re.fullmatch(r"[0-9]{4}\.[0-9]{4,5}", i) is not None,
                  f"[{tag}]: malformed arXiv id {i!r}")
        title = re.search(r"\*([^*]+)\*", text)
        if ids and title:
            papers[" ".join(title.group(1).split())] = ids[0]
    check("spec §1.1 papers", len(papers) >= 3, f"{len(papers)} papers with an arXiv id: {papers}")
    others = [os.path.join("docs", n) for n in sorted(os.listdir(os.path.join(root, "docs")))
              if n.endswith(".md") and n not in ("spec.md", "coverage.md")] + ["CITATION.cff", "README.md"]
    for rel in others:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = " ".join(f.read().split())
        for title, aid in papers.items():
            head = title.split(":")[0]  # "MoR" of "MoR: Mixture of Representations ..."
            for m in re.finditer(re.escape(head) + r"[^()]{0,200}?arXiv:([0-9]{4}\.[0-9]{4,5})", text):
                check("spec §1.1 arXiv id elsewhere", m.group(1) == aid,
                      f"{rel} gives {title!r} arXiv:{m.group(1)}, §1.1 says arXiv:{aid}")


def main():
    global NUMREF
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    NUMREF = os.path.abspath(sys.argv[1]) if os.sep in sys.argv[1] else sys.argv[1]  # tests chdir
    for t in [test_formats, test_profiles, test_profiles_policies_rules, test_conversions, test_quantize_rules, test_abi, test_explain, test_table, test_cast_values, test_cast_e8m0_and_overrides, test_cast_sr,
              test_cast_input_rules, test_cast_options, test_cast_streaming, test_outputs_not_inputs,
              test_vectors_generate, test_stdout_errors, test_input_hygiene, test_vectors_doc_count, test_messages, test_cast_values_decimal, test_cast_npy, test_npy_ml_dtypes, test_threads,
              test_version, test_cli_md_knob_table, test_spec_normative_references]:
        t()
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} of {CHECKS} checks failed:\n  " + "\n  ".join(FAILURES), file=sys.stderr)
        return 1
    print(f"OK: {CHECKS} checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
