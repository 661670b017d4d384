#!/usr/bin/env python3
"""CLI tests of `numref quantize` (spec §12 – §20).

Usage: test_quantize_cli.py PATH/TO/numref

Expected values come from hand computation (shown in the comments, the same worked
examples as reference/tests/test_gam.cpp and test_int8.cpp) or from an independent
computation with NumPy float32 arithmetic and ml_dtypes conversions, where those are the
same operations as the spec's (IEEE RNE multiply / divide in binary32, RNE conversion).
Needs numpy and ml_dtypes (scripts/setup.sh installs them); fails, never skips, without.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numref_testlib import VerbChecks, splitmix64  # noqa: E402  (tools/tests/numref_testlib.py)

NUMREF = sys.argv[1] if len(sys.argv) > 1 else "build/numref"
CHECKS = VerbChecks(NUMREF, "quantize")
check, run = CHECKS.check, CHECKS.run


def bits32(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def main():
    tmp = tempfile.mkdtemp(prefix="numref-quantize-")
    P = lambda name: os.path.join(tmp, name)

    # ---- §17 hand-worked GAM example (test_gam.cpp Gam.HandWorked2x4) ----------------------
    # [[3, -1, 0.5, 0.25], [10, 7, 0, 0]], f8e4m3fn, blocks 1x2, one group:
    # m_g = 0x333333 (RN32(448/10) = 0x42333333); block codes 85 88 84 7E;
    # element codes 78 EB 7B 73 / 7E 7A 00 00.
    x = np.array([[3, -1, 0.5, 0.25], [10, 7, 0, 0]], dtype=np.float32)
    np.save(P("x.npy"), x)
    p = run("--input", P("x.npy"), "--format", "f8e4m3fn", "--partition", "block:1x2", "--scale", "gam",
            "--out", P("g"), "--json", "--dequant-out")
    s = json.loads(p.stdout)
    codes = np.load(P("g.codes.npy"))
    check(codes.dtype == np.uint8 and codes.shape == (2, 4), f"codes array {codes.dtype} {codes.shape}")
    check(codes.tolist() == [[0x78, 0xEB, 0x7B, 0x73], [0x7E, 0x7A, 0, 0]], f"GAM codes {codes.tolist()}")
    scales = np.load(P("g.scales.npy"))
    check(scales.dtype == np.uint8 and scales.tolist() == [[0x85, 0x88], [0x84, 0x7E]], f"GAM scales {scales.tolist()}")
    check(np.load(P("g.group_mantissa.npy")).tolist() == [[0x333333]], "GAM group mantissa")
    check(s["counts"] == {"elements": 8, "saturated": 0, "flushed": 0, "nan": 0, "inf": 0}, f"counts {s['counts']}")
    check(s["blocks"][0]["block_scale"]["hex"] == "42b33333", "block scale of block 0 = (0x85 << 23) | 0x333333")
    check(s["grid"] == {"rows": 2, "cols": 2, "block_rows": 1, "block_cols": 2, "blocks": 4}, f"grid {s['grid']}")
    # dequantize (divide): code 0x7E = 448 in block 0x84 (G = 44.8): 448 / G = 10.000000170 -> 10
    dq = np.load(P("g.dequant.npy"))
    check(dq.dtype == np.float32 and dq[1, 0] == np.float32(10), f"dequant {dq.tolist()}")

    # the same tensor as ml_dtypes bfloat16 (NumPy saves it as '<V2') and as '<u2' patterns
    np.save(P("xb.npy"), x.astype(ml_dtypes.bfloat16))
    np.save(P("xu.npy"), x.astype(ml_dtypes.bfloat16).view(np.uint16))
    for f in ("xb.npy", "xu.npy"):
        run("--input", P(f), "--input-format", "bf16", "--format", "f8e4m3fn", "--partition", "block:1x2",
            "--scale", "gam", "--out", P("gb"))
        check(np.load(P("gb.codes.npy")).tolist() == codes.tolist(), f"bf16 input {f} gives the f32 codes")
    p = run("--input", P("xb.npy"), "--format", "f8e4m3fn", expect=2)
    check("--input-format" in p.stderr, f"'<V2' without --input-format: {p.stderr}")

    # ---- transpose: codes in the transpose's row-major order -------------------------------
    run("--input", P("x.npy"), "--format", "f8e4m3fn", "--partition", "block:2x1", "--scale", "gam",
        "--transpose", "--out", P("gt"))
    ct = np.load(P("gt.codes.npy"))
    check(ct.shape == (4, 2) and ct.tolist() == codes.T.tolist(), f"transposed codes {ct.tolist()}")

    # ---- §16 MX FLOOR vs RCEIL at amax = 480 ------------------------------------------------
    np.save(P("m.npy"), np.array([480, 1], dtype=np.float32))
    s = json.loads(run("--input", P("m.npy"), "--format", "e4m3", "--scale", "mx-floor", "--json").stdout)
    check(s["blocks"][0]["scale"]["hex"] == "7f" and s["counts"]["saturated"] == 1, "mx-floor at 480: X = 1, 480 clips")
    s = json.loads(run("--input", P("m.npy"), "--format", "e4m3", "--scale", "mx-rceil", "--json").stdout)
    check(s["blocks"][0]["scale"]["hex"] == "80" and s["counts"]["saturated"] == 0, "mx-rceil at 480: X = 2")

    # ---- §20 INT8 with amax = 127.5 delta: [255, -255, 3, 5], delta = 2 -> 7F 80 02 02 ----
    np.save(P("i.npy"), np.array([255, -255, 3, 5], dtype=np.float32))
    run("--input", P("i.npy"), "--format", "int8", "--scale", "int8-127.5", "--out", P("i"))
    check(np.load(P("i.codes.npy")).tolist() == [0x7F, 0x80, 0x02, 0x02], "int8-127.5 codes")
    check(bits32(np.load(P("i.scales.npy"))).tolist() == [[0x40000000]], "int8-127.5 delta = 2")
    run("--input", P("i.npy"), "--format", "int8", "--scale", "int8-127.5", "--round", "rup", "--out", P("i"))
    check(np.load(P("i.codes.npy")).tolist() == [0x7F, 0x81, 0x02, 0x03], "int8 with the Eq. 1 ceiling")

    # ---- independent differential checks with NumPy float32 + ml_dtypes -------------------
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((64, 96)) * np.exp2(rng.integers(-6, 6, (64, 96)))).astype(np.float32)
    np.save(P("a.npy"), a)
    # §14.1 per-tensor amax: S = RN32(448 / amax); y = RN32(x * S); RNE to E4M3 (|y| <= 448 + ulp)
    run("--input", P("a.npy"), "--format", "f8e4m3fn", "--scale", "amax", "--out", P("a"))
    amax = np.float32(np.max(np.abs(a)))
    S = np.float32(448) / amax
    want = (a * S).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    check(np.array_equal(np.load(P("a.codes.npy")), want), "amax rule vs numpy float32 + ml_dtypes")
    check(bits32(np.load(P("a.scales.npy"))).tolist() == [[int(bits32(S))]], "amax scale vs numpy 448/amax")
    # §16.2 MX FLOOR over 1 x 32 blocks: X = 2^(floor(log2 amax) - 8); x / X exact; saturate
    run("--input", P("a.npy"), "--format", "f8e4m3fn", "--scale", "mx-floor", "--partition", "block:1x32",
        "--out", P("mx"))
    blocks = a.reshape(64, 3, 32)
    bam = np.max(np.abs(blocks), axis=2)
    e = np.frexp(bam)[1] - 1 - 8  # frexp: amax = m * 2^k, m in [0.5, 1) -> floor(log2) = k - 1
    y = np.clip(blocks / np.exp2(e)[:, :, None].astype(np.float32), -448, 448)
    want = y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).reshape(64, 96)
    check(np.array_equal(np.load(P("mx.codes.npy")), want), "mx-floor vs numpy + ml_dtypes")
    check(np.array_equal(np.load(P("mx.scales.npy")).astype(np.int64), e + 127), "mx-floor scale codes")

    # ---- stochastic rounding: --seed and --random give the same codes ---------------------
    gen = splitmix64(5)  # splitmix64(5), low 8 bits, element order (docs/quantize.md)
    r = np.array([next(gen) & 0xFF for _ in range(64 * 96)], dtype=np.uint64)
    np.save(P("r.npy"), r.astype(np.uint32).reshape(64, 96))
    run("--input", P("a.npy"), "--format", "f8e4m3fn", "--round", "sr", "--sr-bits", "8", "--seed", "5", "--out", P("s1"))
    run("--input", P("a.npy"), "--format", "f8e4m3fn", "--round", "sr", "--sr-bits", "8", "--random", P("r.npy"),
        "--out", P("s2"))
    check(np.array_equal(np.load(P("s1.codes.npy")), np.load(P("s2.codes.npy"))), "--seed equals --random")
    np.save(P("r_short.npy"), r.astype(np.uint32)[:10])
    p = run("--input", P("a.npy"), "--format", "f8e4m3fn", "--round", "sr", "--sr-bits", "8", "--random",
            P("r_short.npy"), expect=2)
    check("random values for" in p.stderr, f"short random file: {p.stderr}")
    p = run("--input", P("a.npy"), "--format", "f8e4m3fn", "--round", "sr", "--sr-bits", "8", expect=2)
    check("--random" in p.stderr, f"sr without random bits: {p.stderr}")

    # ---- NVFP4 and fake-quant outputs ------------------------------------------------------
    run("--input", P("a.npy"), "--format", "f4e2m1fn", "--scale", "nvfp4", "--partition", "block:1x16",
        "--out", P("nv"), "--fake-quant", "bf16")
    check(bits32(np.load(P("nv.tensor_amax.npy"))).tolist() == [int(bits32(amax))], "nvfp4 tensor amax")
    check(np.load(P("nv.scales.npy")).shape == (64, 6), "nvfp4 scale grid 64 x 6")
    fq = np.load(P("nv.fakequant.npy"))
    check(fq.dtype == np.uint16 and fq.shape == (64, 96), "fake-quant bf16 patterns")
    # §18.4 f_b = +Inf where d_b · t_amax is beyond binary32. One 1x16 block, f4e2m1fn, amax =
    # t_amax = 3e38: C = RN32(6 · 448) = 2688, s_enc = RN32(2688 / 3e38); the block's d_b is about
    # 3e38 · s_enc / 6 = 448 (E4M3 7E, the grid there is 32 apart); d_b · t_amax = 448 · 3e38 =
    # 1.3e41 > binary32: f_b = +Inf. Codes: 3e38 · c_b (c_b about 6 / 3e38) = 6 -> 7 (e2m1 6);
    # 1, -2, 0.5 and 0.25 times c_b are about 1e-38 -> 0, 8 (-0), 0, 0. Dequantized: 6 · Inf =
    # +Inf (7F800000); the zero codes stay +0 / -0 (§19.3). Before the fix the reference stopped
    # with "exact_value: code 2139095040 of f32 is not finite".
    big = np.array([[3.0e38, 1.0, -2.0, 0.5] + [0.25] * 12], dtype=np.float32)
    np.save(P("big.npy"), big)
    run("--input", P("big.npy"), "--format", "f4e2m1fn", "--scale", "nvfp4", "--partition", "block:1x16",
        "--out", P("nvbig"), "--dequant-out")
    check(np.load(P("nvbig.scales.npy")).tolist() == [[0x7E]], f"nvfp4 d_b {np.load(P('nvbig.scales.npy')).tolist()}")
    check(np.load(P("nvbig.codes.npy")).tolist() == [[0x7, 0x0, 0x8, 0x0] + [0x0] * 12],
          f"nvfp4 codes {np.load(P('nvbig.codes.npy')).tolist()}")
    check(bits32(np.load(P("nvbig.dequant.npy"))).tolist() == [[0x7F800000, 0, 0x80000000, 0] + [0] * 12],
          f"nvfp4 dequant with f_b = +Inf {[hex(v) for v in bits32(np.load(P('nvbig.dequant.npy'))).ravel()]}")

    # ---- malformed input and usage errors: exit 2 and a message naming the problem ------
    good = open(P("x.npy"), "rb").read()

    def bad_file(name, data, needle, extra=()):
        with open(P(name), "wb") as f:
            f.write(data)
        p = run("--input", P(name), "--format", "f8e4m3fn", *extra, expect=2)
        check(needle in p.stderr, f"{name}: expected '{needle}' in: {p.stderr.strip()}")

    bad_file("magic.npy", b"\x93NUMPX" + good[6:], "wrong magic")
    bad_file("trunc.npy", good[:-3], "truncated data")
    bad_file("f8.npy", good.replace(b"'<f4'", b"'<f8'"), "unsupported dtype")
    bad_file("big.npy", good.replace(b"'<f4'", b"'>f4'"), "big-endian")
    bad_file("fortran.npy", good.replace(b"False", b"True "), "Fortran")
    np.save(P("empty.npy"), np.zeros((0, 3), np.float32))
    p = run("--input", P("empty.npy"), "--format", "f8e4m3fn", expect=2)
    check("empty tensor" in p.stderr, f"empty tensor: {p.stderr}")
    np.save(P("scalar.npy"), np.float32(1))
    p = run("--input", P("scalar.npy"), "--format", "f8e4m3fn", expect=2)
    check("0-d" in p.stderr, f"0-d: {p.stderr}")
    p = run("--input", P("x.npy"), "--format", "f8e4m3fn", "--scale", "round-up", expect=2)
    check("unknown rule 'round-up'" in p.stderr, f"unknown rule: {p.stderr}")
    p = run("--input", P("x.npy"), "--format", "f8e4m3fn", "--partition", "block:0x4", expect=2)
    check("at least 1" in p.stderr, f"bad partition: {p.stderr}")
    p = run("--input", P("x.npy"), "--format", "f8e4m3fn", "--scale", "gam", "--partition", "block:1x3",
            "--group", "block:1x2", expect=2)
    check("straddle" in p.stderr, f"incompatible groups: {p.stderr}")
    p = run("--input", P("x.npy"), "--format", "bf16", expect=2)
    check("at most 8 bits" in p.stderr, f"16-bit element: {p.stderr}")
    p = run("--input", P("x.npy"), "--format", "f8e4m3fn", "--scale", "int8", expect=2)
    check("integer element" in p.stderr, f"int8 rule with e4m3: {p.stderr}")
    p = run("--input", P("x.npy"), expect=2)
    check("--format" in p.stderr, f"missing --format: {p.stderr}")
    # §2.4 sub-byte source codes stored one per byte: bits above the width are an error
    np.save(P("fp4.npy"), np.array([0x01, 0x1F], dtype=np.uint8))
    p = run("--input", P("fp4.npy"), "--input-format", "f4e2m1fn", "--format", "f8e4m3fn", expect=2)
    check("bits above the 4-bit width" in p.stderr, f"fp4 high bits: {p.stderr}")
    np.save(P("fp4.npy"), np.array([0x01, 0x0F], dtype=np.uint8))  # 0.5 and -6
    run("--input", P("fp4.npy"), "--input-format", "f4e2m1fn", "--format", "f8e4m3fn", "--out", P("fp4"))
    # amax 6 -> S = 448/6 = 74.67 (0x42955555); 0.5·S = 37.33 -> E4M3 step 4 in [32, 64): 36 =
    # 1.125·2^5 -> field 5 + 7 = 12, fraction 1 -> 0x61; -6·S = -448 -> 0xFE
    check(np.load(P("fp4.codes.npy")).tolist() == [0x61, 0xFE], "f4e2m1fn source codes")

    # ---- §10.4 recipe profiles, §19.8 --recipe, §14.4 --q-max --------------------------------
    # issue 12's RCEIL example (reference/tests/test_recipe.cpp): amax 0x48E00001 = 448 * 2^10 *
    # (1 + 2^-23); torchao RCEIL: ceil(log2f(2^10 (1 + 2^-23))) = 10 -> code 0x89, 448 (1 + 2^-23)
    # saturates to 0x7E; numref's exact mx-rceil: code 0x8A, 224 = 0x76.
    np.save(P("rc.npy"), np.array([0x48E00001, 0x3F800000], dtype=np.uint32).view(np.float32))
    s = json.loads(run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--profile", "torchao_mx_rceil",
                       "--out", P("rc"), "--json").stdout)
    check(s["scale"] == "mx-rceil" and s["partition"] == "block:1x32", f"recipe rule / partition {s['scale']}")
    check("scale_exp=log2f" in s["recipe"] and "zero_code=one" in s["recipe"], f"recipe {s['recipe']}")
    check(np.load(P("rc.scales.npy")).tolist() == [[0x89]], "torchao_mx_rceil scale 0x89")
    check(np.load(P("rc.codes.npy")).tolist()[0] == 0x7E, "torchao_mx_rceil saturates 0x7E")
    run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--scale", "mx-rceil", "--out", P("rx"))
    check(np.load(P("rx.scales.npy")).tolist() == [[0x8A]], "mx-rceil scale 0x8A")
    # the same knob without the profile: --recipe on the plain rule
    run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--scale", "mx-rceil", "--recipe", "scale_exp=log2f",
        "--out", P("rr"))
    check(np.load(P("rr.scales.npy")).tolist() == [[0x89]], "--recipe scale_exp=log2f gives 0x89")
    # an explicit partition overrides the profile's block (a 1 x 2 tensor: one block either way)
    run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--profile", "torchao_mx_rceil", "--partition", "tensor",
        "--out", P("rt"))
    check(np.load(P("rt.scales.npy")).tolist() == [[0x89]], "--partition tensor with a recipe profile")
    # contradictions and bad values: one line, exit 2
    p = run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--profile", "torchao_mx_rceil", "--scale", "mx-floor",
            expect=2)
    check("contradicts --profile torchao_mx_rceil" in p.stderr, f"--scale vs profile: {p.stderr}")
    p = run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--profile", "torchao_mx_rceil", "--recipe",
            "zero_code=stored", expect=2)
    check("contradicts --profile" in p.stderr, f"--recipe vs profile: {p.stderr}")
    p = run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--recipe", "zero_code=sometimes", expect=2)
    check("bad value 'sometimes' for recipe key 'zero_code'" in p.stderr, f"--recipe bad word: {p.stderr}")
    p = run("--input", P("rc.npy"), "--format", "f8e4m3fn", "--scale", "mx-ceil", "--recipe", "scale_exp=log2f",
            expect=2)
    check("scale_exp=log2f applies to the pow2, pow2-recip, mx-floor and mx-rceil rules" in p.stderr,
          f"knob outside its rules: {p.stderr}")
    # microxcaling (test_recipe.cpp Microxcaling): amax 0x72FFFFFF -> log2f 103, code 0xDE; the
    # element 256 - 2^-16 -> 0x78; -2^-63 scales to -2^-158, -0 in binary32 -> +0; fake-quant
    # 256 * 2^95 = 2^103 = 0x73000000
    np.save(P("mx.npy"), np.array([0x72FFFFFF, 0xA0000000], dtype=np.uint32).view(np.float32))
    run("--input", P("mx.npy"), "--format", "f8e4m3fn", "--profile", "microxcaling", "--out", P("mx"),
        "--fake-quant", "f32")
    check(np.load(P("mx.scales.npy")).tolist() == [[0xDE]], "microxcaling scale 0xDE")
    check(np.load(P("mx.codes.npy")).tolist() == [0x78, 0x00], "microxcaling codes 78 00")
    check(np.load(P("mx.fakequant.npy")).view(np.uint32).tolist() == [0x73000000, 0], "microxcaling fake-quant")
    p = run("--input", P("mx.npy"), "--format", "int8", "--profile", "microxcaling", "--out", P("mx8"), expect=2)
    check("profile microxcaling quantizes to f8e4m3fn f8e5m2 f6e3m2fn f6e2m3fn f4e2m1fn, not int8" in p.stderr,
          f"microxcaling int8 refused: {p.stderr}")
    # §10.4 deepgemm reproduces per_token_cast_to_fp8 (float8_e4m3fn) only: FP4 is refused, one line, exit 2
    p = run("--input", P("mx.npy"), "--format", "f4e2m1fn", "--profile", "deepgemm", "--out", P("dg4"), expect=2)
    check("profile deepgemm quantizes to f8e4m3fn, not f4e2m1fn" in p.stderr and len(p.stderr.strip().splitlines()) == 1
          and not os.path.exists(P("dg4.codes.npy")), f"deepgemm f4e2m1fn refused: {p.stderr}")
    # te_mxfp8 ignores NaN in the amax (fmaxf): [NaN, 448] -> code 0x7F (test_recipe.cpp TeMxfp8);
    # an explicit --amax-nan that differs from the recipe is refused
    np.save(P("te.npy"), np.array([np.nan, 448], dtype=np.float32))
    run("--input", P("te.npy"), "--format", "f8e4m3fn", "--profile", "te_mxfp8", "--out", P("te"))
    check(np.load(P("te.scales.npy")).tolist() == [[0x7F]], "te_mxfp8 [NaN, 448]: scale 0x7F")
    p = run("--input", P("te.npy"), "--format", "f8e4m3fn", "--profile", "te_mxfp8", "--amax-nan", "propagate",
            expect=2)
    check("contradict --profile te_mxfp8" in p.stderr, f"--amax-nan vs profile: {p.stderr}")
    # --q-max: q_max = 240 with amax 480 and the amax rule: S = 240 / 480 = 0.5 (0x3F000000)
    np.save(P("q.npy"), np.array([480, 1], dtype=np.float32))
    s = json.loads(run("--input", P("q.npy"), "--format", "f8e4m3fn", "--q-max", "240", "--json").stdout)
    check(s["blocks"][0]["scale"]["hex"] == "3f000000", f"--q-max 240: scale {s['blocks'][0]['scale']}")
    s = json.loads(run("--input", P("q.npy"), "--format", "f8e4m3fn", "--q-max", "0x1.ep7", "--json").stdout)
    check(s["blocks"][0]["scale"]["hex"] == "3f000000", "--q-max as a hex-float (0x1.ep7 = 240)")
    for bad, msg in (("3", "at least 4"), ("448.1", "not a binary32 value"), ("inf", "not finite"),
                     ("abc", "malformed value")):
        p = run("--input", P("q.npy"), "--format", "f8e4m3fn", "--q-max", bad, expect=2)
        check("--q-max" in p.stderr and msg in p.stderr and p.stderr.count("\n") == 1, f"--q-max {bad}: {p.stderr}")

    # a recipe profile runs in the conformance runner's tensor family with its recipe knobs
    # (spec §32.5, ABI 1.4): the reference backend passes every case it plans (a level-0 plan has
    # 33; more than 0 is what matters: a run that compared nothing exits 2); cpu-fast implements
    # torchao_mx_floor's and torchao_mx_rceil's knobs (issue 32: scale_exp=log2f too) and passes
    # their cases
    c = subprocess.run([NUMREF, "conform", "--no-progress", "--backend", "reference", "--ops", "quantize",
                        "--profile", "torchao_mx_floor", "--level", "0"], capture_output=True, text=True)
    m = re.search(r"reference: (\d+) passed, 0 failed", c.stdout)
    check(c.returncode == 0 and m is not None and int(m.group(1)) > 0,
          f"conform --backend reference --profile torchao_mx_floor --ops quantize: exit {c.returncode} {c.stdout[-300:]}")
    c = subprocess.run([NUMREF, "conform", "--no-progress", "--backend", "cpu-fast", "--ops", "quantize",
                        "--profile", "torchao_mx_floor", "--level", "0"], capture_output=True, text=True)
    m = re.search(r"cpu-fast: (\d+) passed, 0 failed", c.stdout)
    check(c.returncode == 0 and m is not None and int(m.group(1)) > 0,
          f"conform --backend cpu-fast --profile torchao_mx_floor --ops quantize: exit {c.returncode} {c.stdout[-300:]}")
    c = subprocess.run([NUMREF, "conform", "--no-progress", "--backend", "cpu-fast", "--ops", "quantize",
                        "--profile", "torchao_mx_rceil", "--level", "0"], capture_output=True, text=True)
    m = re.search(r"cpu-fast: (\d+) passed, 0 failed", c.stdout)
    check(c.returncode == 0 and m is not None and int(m.group(1)) > 0,
          f"conform --backend cpu-fast --profile torchao_mx_rceil --ops quantize: exit {c.returncode} {c.stdout[-300:]}")

    return CHECKS.finish()


if __name__ == "__main__":
    sys.exit(main())
