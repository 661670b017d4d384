#!/usr/bin/env python3
"""numref mma (spec §36 – §39): hand-worked results through .npy files, flags, the profile and
knob tables, --model, and usage errors (exit 2, one line naming the problem, nothing written).

Expected values are hand computations (comments), never the command's own output."""
import os
import subprocess
import sys
import tempfile

import numpy as np

NUMREF = sys.argv[1]
FAILS = []


def run(*args):
    p = subprocess.run([NUMREF, "mma", *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def d_bits(path):
    d = np.load(path)
    return d.view(np.uint32 if d.dtype == np.float32 else np.uint16)


with tempfile.TemporaryDirectory() as t:
    P = lambda n: os.path.join(t, n)  # noqa: E731
    # §38.2 A 2 x 2 e4m3 A (rows [1, 2^-7], [3.75 as 1.875·2, 0]) times B = [[1, 1], [2^-7, 0]]:
    # e4m3 1 = 38, 2^-7 = 04 (subnormal), 1.875 = 3F, 2 = 40.
    #  D[0,0] = 1·1 + 2^-7·2^-7 = 1 + 2^-14: sm90_wgmma_f8 (F = 13) drops 2^-14 -> 3F800000,
    #          sm100_tcgen05_f8f6f4 (F = 25) and ideal keep it -> 3F800200 (2^-14 = 2^9 ulps of 1).
    #  D[0,1] = 1·1 + 2^-7·0 = 1 -> 3F800000 everywhere.
    #  D[1,0] = 1.875·1 + 0·2^-7 = 1.875 -> 3FF00000;  D[1,1] = 1.875 + C
    A = np.array([[0x38, 0x04], [0x3F, 0x00]], dtype=np.uint8)
    B = np.array([[0x38, 0x38], [0x04, 0x00]], dtype=np.uint8)
    C = np.array([[0.0, 0.0], [0.0, 0.125]], dtype=np.float32)  # D[1,1] = 1.875 + 0.125 = 2 = 40000000
    np.save(P("a.npy"), A)
    np.save(P("b.npy"), B)
    np.save(P("c.npy"), C)
    base = ["--a", P("a.npy"), "--a-type", "f8e4m3fn", "--b", P("b.npy"), "--b-type", "f8e4m3fn", "--c", P("c.npy")]
    rc, out, err = run("--profile", "sm90_wgmma_f8", *base, "--out", P("d1.npy"), "--flags", P("f1.npy"))
    check(rc == 0, f"wgmma exit 0 ({err})")
    if rc == 0:
        check(list(d_bits(P("d1.npy")).reshape(-1)) == [0x3F800000, 0x3F800000, 0x3FF00000, 0x40000000],
              f"wgmma D {[hex(v) for v in d_bits(P('d1.npy')).reshape(-1)]}")
        # §9 D[0,0] lost 2^-14: inexact (01); the others are exact
        check(list(np.load(P("f1.npy")).reshape(-1)) == [1, 0, 0, 0], "wgmma flags")
        check("sm90_wgmma_f8, f8e4m3fn x f8e4m3fn + f32, M x N x K = 2 x 2 x 2: 4 elements, 1 with flags" in out,
              "summary line: " + out)
    for prof in ("sm100_tcgen05_f8f6f4", "ideal"):
        rc, out, err = run("--profile", prof, *base, "--out", P(prof + ".npy"))
        check(rc == 0 and d_bits(P(prof + ".npy"))[0, 0] == 0x3F800200, f"{prof} D[0,0] = 3F800200 ({err})")
    # --model: sm90_wgmma_f8 with align=25 round=rz is the tcgen05 arithmetic for this input; align=25
    # alone still rounds to 13 fraction bits (rz13) and drops the 2^-14 again
    rc, out, err = run("--profile", "sm90_wgmma_f8", "--model", "align=25 round=rz", *base, "--out", P("m.npy"))
    check(rc == 0 and d_bits(P("m.npy"))[0, 0] == 0x3F800200, f"--model align=25 round=rz ({err})")
    rc, out, err = run("--profile", "sm90_wgmma_f8", "--model", "align=25", *base, "--out", P("m2.npy"))
    check(rc == 0 and d_bits(P("m2.npy"))[0, 0] == 0x3F800000, f"--model align=25 ({err})")
    # f16 accumulator: C as <f2; D is <f2. 1 + 2^-14 in binary16 (rne, 10 bits) is 1.0 = 3C00.
    np.save(P("c16.npy"), np.zeros((2, 2), dtype=np.float16))
    rc, out, err = run("--profile", "ideal", *base[:-2], "--c", P("c16.npy"), "--out", P("d16.npy"))
    check(rc == 0 and np.load(P("d16.npy")).dtype == np.float16 and d_bits(P("d16.npy"))[0, 0] == 0x3C00,
          f"f16 accumulator ({err})")
    # §38.3 block scales (sm100_tcgen05_mxf8f6f4, K = 32): one product 1·1 scaled by 2^3 (82) and 2^-1 (7E) = 4.
    A32 = np.zeros((1, 32), dtype=np.uint8)
    B32 = np.zeros((32, 1), dtype=np.uint8)
    A32[0, 5] = 0x38
    B32[5, 0] = 0x38
    np.save(P("a32.npy"), A32)
    np.save(P("b32.npy"), B32)
    np.save(P("sa.npy"), np.array([[0x82]], dtype=np.uint8))
    np.save(P("sb.npy"), np.array([[0x7E]], dtype=np.uint8))
    scaled = ["--profile", "sm100_tcgen05_mxf8f6f4", "--a", P("a32.npy"), "--a-type", "f8e4m3fn", "--b", P("b32.npy"),
              "--b-type", "f8e4m3fn", "--block", "32", "--scale-type", "f8e8m0fnu", "--scale-a", P("sa.npy"),
              "--scale-b", P("sb.npy")]
    rc, out, err = run(*scaled, "--out", P("ds.npy"))
    check(rc == 0 and d_bits(P("ds.npy"))[0, 0] == 0x40800000, f"block-scaled D = 4 ({err})")

    # §40.1 promotion (sm90_wgmma_f8, K = 64): a = [2^8, 31 x 0, 32 x 2^-6], b = 1. Plain: the second
    # step aligns to C = 256 and drops every 2^-6: 256 = 43800000. --promote 32: 256 + 0.5 = 256.5 =
    # 43804000. §40.4 epilogue: 256.5 -> bf16 (ocp, rne: bf16's neighbours at 2^8 are 256 and 258, and
    # 256.5 is below their midpoint 257) = 4380; with C = 1000: 1256.5 -> f8e4m3fn above 448:
    # cuda_satfinite 7E, ocp (non-saturating) NaN 7F, flags overflow + inexact (0x05).
    a64 = np.zeros((1, 64), dtype=np.uint8)
    a64[0, 0] = 0x78
    a64[0, 32:] = 0x08
    np.save(P("a64.npy"), a64)
    np.save(P("b64.npy"), np.full((64, 1), 0x38, dtype=np.uint8))
    np.save(P("c1000.npy"), np.array([[1000.0]], dtype=np.float32))
    g = ["--profile", "sm90_wgmma_f8", "--a", P("a64.npy"), "--a-type", "f8e4m3fn", "--b", P("b64.npy"), "--b-type",
         "f8e4m3fn"]
    for extra, want, what in ((["--out", P("g0.npy")], 0x43800000, "plain"),
                              (["--promote", "32", "--out", P("g1.npy")], 0x43804000, "--promote 32"),
                              (["--split-k", "2", "--out", P("g2.npy")], 0x43804000, "--split-k 2"),
                              (["--promote", "32", "--epilogue", "bf16", "--out", P("g3.npy")], 0x4380,
                               "--epilogue bf16"),
                              (["--c", P("c1000.npy"), "--promote", "32", "--epilogue", "f8e4m3fn", "--epilogue-profile",
                                "cuda_satfinite", "--out", P("g4.npy")], 0x7E, "--epilogue f8e4m3fn cuda_satfinite"),
                              (["--c", P("c1000.npy"), "--promote", "32", "--epilogue", "f8e4m3fn", "--out", P("g5.npy"),
                                "--flags", P("g5f.npy")], 0x7F, "--epilogue f8e4m3fn ocp")):
        rc, out, err = run(*g, *extra)
        path = extra[extra.index("--out") + 1]
        got = int(d_bits(path).reshape(-1)[0]) if rc == 0 and np.load(path).dtype != np.uint8 else \
            (int(np.load(path).reshape(-1)[0]) if rc == 0 else None)
        check(got == want, f"{what}: D = {hex(want)}, got {got if got is None else hex(got)} ({err.strip()})")
    check(int(np.load(P("g5f.npy"))[0, 0]) == 0x05, "epilogue overflow flags (overflow | inexact)")

    # §40.5 promotion scales (as reference/tests/test_mma.cpp Gemm.PromotionScalesAreOneFusedMultiplyAdd):
    # chunks -1.125 and 1.125 scaled by 1 and RN32((1 + 2^-23)^2) = 1 + 2^-22, fused: 1.125 · 2^-22 = 34900000
    a256 = np.zeros((1, 256), dtype=np.uint8)
    a256[0, 0] = 0xB9
    a256[0, 128] = 0x39
    np.save(P("a256.npy"), a256)
    np.save(P("b256.npy"), np.full((256, 1), 0x38, dtype=np.uint8))
    np.save(P("pa.npy"), np.array([[0x3F800000, 0x3F800001]], dtype=np.uint32).view(np.float32))
    np.save(P("pb.npy"), np.array([[0x3F800000], [0x3F800001]], dtype=np.uint32).view(np.float32))
    rc, out, err = run("--profile", "sm90_wgmma_f8", "--a", P("a256.npy"), "--a-type", "f8e4m3fn", "--b", P("b256.npy"),
                       "--b-type", "f8e4m3fn", "--promote", "128", "--promote-scale-a", P("pa.npy"),
                       "--promote-scale-b", P("pb.npy"), "--out", P("ps.npy"))
    check(rc == 0 and int(d_bits(P("ps.npy"))[0, 0]) == 0x34900000, f"promotion scales: 34900000 ({err.strip()})")
    check("promoted every 128 with scales" in out, "summary names the promotion scales: " + out)

    # §40.5 --recipe deepgemm is the composition of its parts: `numref quantize --profile deepgemm`
    # of A (partition 1 x 128) and B (128 x 128), the E8M0 scales as binary32 promotion scales
    # (2^(e - 127) = e << 23), and `numref mma --promote 128` with them; bf16 epilogue.
    rng = np.random.default_rng(11)
    A32 = (rng.standard_normal((3, 256)) * np.exp2(rng.integers(-4, 5, (3, 256)))).astype(np.float32)
    B32 = (rng.standard_normal((256, 130)) * np.exp2(rng.integers(-4, 5, (256, 130)))).astype(np.float32)
    np.save(P("a32r.npy"), A32)
    np.save(P("b32r.npy"), B32)
    rc, out, err = run("--profile", "sm90_wgmma_f8", "--a", P("a32r.npy"), "--b", P("b32r.npy"), "--recipe", "deepgemm",
                       "--epilogue", "bf16", "--out", P("dr.npy"))
    check(rc == 0 and "recipe deepgemm (f8e4m3fn), promoted every 128 with scales" in out,
          f"--recipe deepgemm runs ({err.strip()} {out.strip()})")
    q = lambda *a: subprocess.run([NUMREF, "quantize", *a], capture_output=True, text=True, timeout=120)  # noqa: E731
    qa = q("--input", P("a32r.npy"), "--format", "f8e4m3fn", "--profile", "deepgemm", "--partition", "block:1x128",
           "--out", P("qa"))
    qb = q("--input", P("b32r.npy"), "--format", "f8e4m3fn", "--profile", "deepgemm", "--partition", "block:128x128",
           "--out", P("qb"))
    check(qa.returncode == 0 and qb.returncode == 0, f"numref quantize deepgemm ({qa.stderr} {qb.stderr})")
    if qa.returncode == 0 and qb.returncode == 0 and rc == 0:
        sa = np.load(P("qa.scales.npy")).astype(np.uint32).reshape(3, 2)
        sb = np.load(P("qb.scales.npy")).astype(np.uint32).reshape(2, 2)
        np.save(P("pa_r.npy"), (sa << 23).view(np.float32))
        np.save(P("pb_r.npy"), (np.repeat(sb, 128, axis=1)[:, :130] << 23).view(np.float32))
        np.save(P("a8.npy"), np.load(P("qa.codes.npy")).reshape(3, 256))
        np.save(P("b8.npy"), np.load(P("qb.codes.npy")).reshape(256, 130))
        rc2, out2, err2 = run("--profile", "sm90_wgmma_f8", "--a", P("a8.npy"), "--a-type", "f8e4m3fn", "--b",
                              P("b8.npy"), "--b-type", "f8e4m3fn", "--promote", "128", "--promote-scale-a", P("pa_r.npy"),
                              "--promote-scale-b", P("pb_r.npy"), "--epilogue", "bf16", "--out", P("dm.npy"))
        check(rc2 == 0 and np.array_equal(np.load(P("dr.npy")), np.load(P("dm.npy"))),
              f"--recipe deepgemm equals quantize + promotion scales ({err2.strip()})")
        check(np.load(P("dr.npy")).dtype == np.uint16 and np.load(P("dr.npy")).shape == (3, 130), "bf16 D 3 x 130")

    # §40.6 an MX recipe: its E8M0 scales are the instruction's block scales. --recipe te_mxfp8 is
    # `numref quantize --profile te_mxfp8` of A (partition 1 x 32) and of B (32 x 1), then
    # `numref mma --block 32` with those scales; the same for torchao_mx_floor with f4e2m1fn.
    B32b = (rng.standard_normal((256, 5)) * np.exp2(rng.integers(-4, 5, (256, 5)))).astype(np.float32)
    np.save(P("b32m.npy"), B32b)
    for recipe, fmt in (("te_mxfp8", "f8e4m3fn"), ("torchao_mx_floor", "f4e2m1fn")):
        rc, out, err = run("--profile", "sm100_tcgen05_mxf8f6f4", "--a", P("a32r.npy"), "--b", P("b32m.npy"), "--recipe",
                           recipe, "--recipe-format", fmt, "--out", P("dmx.npy"))
        check(rc == 0 and f"recipe {recipe} ({fmt}, block scales)" in out, f"--recipe {recipe} {fmt} ({err.strip()})")
        qa = q("--input", P("a32r.npy"), "--format", fmt, "--profile", recipe, "--partition", "block:1x32",
               "--out", P("mqa"))
        qb = q("--input", P("b32m.npy"), "--format", fmt, "--profile", recipe, "--partition", "block:32x1",
               "--out", P("mqb"))
        check(qa.returncode == 0 and qb.returncode == 0, f"numref quantize {recipe} ({qa.stderr} {qb.stderr})")
        if rc == 0 and qa.returncode == 0 and qb.returncode == 0:
            np.save(P("ma.npy"), np.load(P("mqa.codes.npy")).reshape(3, 256))
            np.save(P("mb.npy"), np.load(P("mqb.codes.npy")).reshape(256, 5))
            np.save(P("msa.npy"), np.load(P("mqa.scales.npy")).reshape(3, 8))
            np.save(P("msb.npy"), np.load(P("mqb.scales.npy")).reshape(8, 5))
            rc2, out2, err2 = run("--profile", "sm100_tcgen05_mxf8f6f4", "--a", P("ma.npy"), "--a-type", fmt, "--b",
                                  P("mb.npy"), "--b-type", fmt, "--block", "32", "--scale-a", P("msa.npy"), "--scale-b",
                                  P("msb.npy"), "--out", P("dmm.npy"))
            check(rc2 == 0 and np.array_equal(np.load(P("dmx.npy")).view(np.uint32), np.load(P("dmm.npy")).view(np.uint32)),
                  f"--recipe {recipe} {fmt} equals quantize + block scales ({err2.strip()})")

    # §29.1 --backward-error: D under sm90_wgmma_f8 of a = [448, 2^-9] (f8e4m3fn 7e, 01), b = [1, 1]:
    # the alignment keeps 13 fraction bits below 2^8 (§38.2), so 2^-9 is dropped and D = 448;
    # BE = RN32(2^-9 / (448 + 2^-9)) = RN32(1 / 229377), computed here from exact fractions.
    from fractions import Fraction
    np.save(P("bea.npy"), np.array([[0x7E, 0x01]], dtype=np.uint8))
    np.save(P("beb.npy"), np.array([[0x38], [0x38]], dtype=np.uint8))
    rc, out, err = run("--profile", "sm90_wgmma_f8", "--a", P("bea.npy"), "--a-type", "f8e4m3fn", "--b", P("beb.npy"),
                       "--b-type", "f8e4m3fn", "--out", P("bed.npy"), "--backward-error", P("bee.npy"))
    q32 = Fraction(1, 229377)
    f = np.float32(float(q32))
    want = min((np.nextafter(f, np.float32(0)), f, np.nextafter(f, np.float32(1))),
               key=lambda c: (abs(Fraction(float(c)) - q32), int(np.float32(c).view(np.uint32)) & 1))
    check(rc == 0 and int(d_bits(P("bed.npy"))[0, 0]) == 0x43E00000, f"--backward-error: D = 448 ({err.strip()})")
    if rc == 0:
        be = np.load(P("bee.npy"))
        check(be.dtype == np.float32 and be.shape == (1, 1) and be[0, 0] == want,
              f"--backward-error: RN32(1/229377) = {float(want)!r}, got {be}")
        check("backward error (§29.1): max " in out, "the summary gives max and mean: " + out)
    # the ideal profile on the §29 example's binary32 operands: D = 449.0625 exactly, BE 0
    np.save(P("bel.npy"), np.array([[1.0625, 448]], np.float32))
    np.save(P("ber.npy"), np.ones((2, 1), np.float32))
    rc, out, err = run("--profile", "ideal", "--a", P("bel.npy"), "--b", P("ber.npy"), "--out", P("bed2.npy"),
                       "--backward-error", P("bee2.npy"))
    check(rc == 0 and np.load(P("bee2.npy"))[0, 0] == 0, f"--backward-error of an exact D is 0 ({err.strip()})")

    # ---- usage errors: exit 2, one line naming the problem, no output file ----
    def refused(args, part, what):
        out_path = P("never.npy")
        rc, out, err = run(*args, "--out", out_path)
        check(rc == 2, f"{what}: exit 2, got {rc} ({err.strip()})")
        check(part in err, f"{what}: message names '{part}': {err.strip()}")
        check(err.count("\n") == 1, f"{what}: one line: {err!r}")
        check(not os.path.exists(out_path), f"{what}: nothing written")

    refused(["--profile", "sm90_wgmma_f8", *base[:2], "--a-type", "f16", *base[4:]], "codes take 2 bytes",
            "a u1 file read as f16")
    np.save(P("a16.npy"), np.zeros((2, 2), dtype=np.float16))
    refused(["--profile", "sm90_wgmma_f8", "--a", P("a16.npy"), *base[4:]], "does not take operand type f16",
            "a type the instruction does not take")
    refused(["--profile", "sm90_wgmma_f8", *base[:4], "--b", P("a32.npy"), "--b-type", "f8e4m3fn"],
            "B must be K x N with K = 2", "shapes that do not match")
    refused(["--profile", "nope", *base], "unknown mma profile 'nope'", "unknown profile")
    refused(["--profile", "sm100_tcgen05_mxf8f6f4", *base], "needs block scales", "a scaled kind without scales")
    refused(scaled[:-8] + ["--block", "16", "--scale-type", "f8e8m0fnu", "--scale-a", P("sa.npy"), "--scale-b",
                           P("sb.npy")], "takes no block size 16", "a block the instruction does not take")
    refused([*scaled[:-8], "--block", "32", "--scale-type", "f8e4m3fn", "--scale-a", P("sa.npy"), "--scale-b",
             P("sb.npy")], "takes no scale type f8e4m3fn", "scales of the wrong format")
    A48 = np.zeros((1, 48), dtype=np.uint8)
    np.save(P("a48.npy"), A48)
    np.save(P("b48.npy"), np.zeros((48, 1), dtype=np.uint8))
    refused(["--profile", "sm100_tcgen05_mxf8f6f4", "--a", P("a48.npy"), "--a-type", "f8e4m3fn", "--b", P("b48.npy"),
             "--b-type", "f8e4m3fn", "--block", "32", "--scale-a", P("sa.npy"), "--scale-b", P("sb.npy")],
            "not a multiple of the block", "K not a multiple of the block")
    # §38.6 a model names each key at most once
    refused(["--profile", "sm90_wgmma_f8", "--model", "align=13,align=14", *base], "knob 'align' is given twice",
            "a repeated --model knob")
    refused(["--profile", "sm90_wgmma_f8", "--model", "round=up", *base], "round=up is not one of rne|rz|rz13",
            "a bad --model word")
    refused(["--profile", "sm90_wgmma_f8", *base, "--promote", "48"], "not a multiple of the model's step",
            "§40.3 promote not a multiple of the step")
    refused(["--profile", "sm90_wgmma_f8", *base, "--epilogue", "bf16", "--epilogue-profile", "deepgemm"],
            "is a quantization recipe", "an epilogue under a recipe profile")
    refused(["--profile", "sm90_wgmma_f8", *base, "--epilogue-profile", "ocp"], "--epilogue-profile needs --epilogue",
            "an epilogue profile alone")
    refused(["--profile", "sm90_wgmma_f8", *base, "--promote-scale-a", P("pa.npy"), "--promote-scale-b", P("pb.npy")],
            "need --promote", "promotion scales without --promote")
    refused(["--profile", "sm90_wgmma_f8", *base, "--recipe", "torchao_float8"], "'torchao_float8' has no GEMM",
            "a recipe without a GEMM")
    refused(["--profile", "sm90_wgmma_f8", *base, "--recipe", "deepgemm"], "quantizes binary32, bf16 or f16 values",
            "--recipe on FP8 codes")
    refused(["--profile", "sm90_wgmma_f8", "--a", P("a32r.npy"), "--b", P("b32m.npy"), "--recipe", "te_mxfp8"],
            "takes no block size 32", "an MX recipe on an instruction without block scales")
    refused(["--profile", "sm100_tcgen05_mxf8f6f4", "--a", P("a32r.npy"), "--b", P("b32m.npy"), "--recipe", "deepgemm",
             "--promote", "128"], "give no --promote", "--promote with a recipe")
    refused(["--profile", "sm90_wgmma_f8", *base, "--recipe-format", "f8e5m2"], "--recipe-format needs --recipe",
            "--recipe-format alone")
    refused(["--profile", "sm90_wgmma_f8", *base, "--backward-error", P("never_be.npy")],
            "--backward-error compares D with A · B", "--backward-error with --c")
    refused(["--profile", "sm90_wgmma_f8", "--a", P("a32r.npy"), "--b", P("b32r.npy"), "--recipe", "deepgemm",
             "--recipe-format", "f4e2m1fn"], "recipe deepgemm does not quantize to f4e2m1fn",
            "an element format the recipe does not reproduce (§10.4)")
    A_bad = np.array([[0x1F, 0x00], [0x00, 0x00]], dtype=np.uint8)  # 1F has bits above a 4-bit code
    np.save(P("abad.npy"), A_bad)
    refused(["--profile", "sm100_tcgen05_f8f6f4", "--a", P("abad.npy"), "--a-type", "f4e2m1fn", *base[4:]],
            "has bits above the 4-bit f4e2m1fn code", "sub-byte codes with high bits")
    rc, out, err = run("--profile", "ideal", *base, "--out", P("a.npy"))
    check(rc == 2 and "also an input" in err, f"an output that is an input is refused ({err.strip()})")
    check(np.array_equal(np.load(P("a.npy")), A), "the input is untouched")

# --profiles / --knobs print one row per profile / knob
rc, out, err = run("--profiles")
check(rc == 0 and "sm90_wgmma_f8" in out and "align=13 align2=0 fused_bytes=32" in out, "--profiles")
rc, out, err = run("--knobs")
check(rc == 0 and "rne|rz|rz13" in out, "--knobs")
rc, out, err = run("--help")
check(rc == 0 and "usage: numref mma" in out, "--help")

print(f"{len(FAILS)} failures")
sys.exit(1 if FAILS else 0)
