"""numref.matmul (spec §36 – §40): hand-worked results, equality with `numref mma`, usage errors."""
import os
import subprocess
import tempfile
import threading

import ml_dtypes
import numpy as np
import pytest

import numref

E4 = ml_dtypes.float8_e4m3fn


def e4(codes):
    return np.array(codes, dtype=np.uint8).view(E4)


def bits(x):
    return x.view(np.uint32 if x.dtype == np.float32 else np.uint16)


def test_hand_worked_alignment():
    # §38.2: a = [1, 2^-7] (38, 04), b = [1, 2^-7]: 1 + 2^-14. sm90_wgmma_f8 (align 13) drops the
    # 2^-14: 1.0 = 3F800000, flag inexact; sm100_tcgen05_f8f6f4 and ideal keep it: 3F800200.
    a = e4([[0x38, 0x04]])
    b = e4([[0x38], [0x04]])
    d, f = numref.matmul(a, b, profile="sm90_wgmma_f8", flags=True)
    assert d.dtype == np.float32 and d.shape == (1, 1)
    assert bits(d)[0, 0] == 0x3F800000 and f[0, 0] == 0x01
    assert bits(numref.matmul(a, b, profile="sm100_tcgen05_f8f6f4"))[0, 0] == 0x3F800200
    assert bits(numref.matmul(a, b))[0, 0] == 0x3F800200  # ideal is the default
    # §38.6 a model override, §40.1 promotion
    assert bits(numref.matmul(a, b, profile="sm90_wgmma_f8", model="align=25 round=rz"))[0, 0] == 0x3F800200


def test_promotion_and_f16_accumulator():
    # §40.1 (as tests/test_mma.cpp Gemm.PromotionRecoversTheTruncatedBits): 256 + 32 x 2^-6.
    a = np.zeros((1, 64), dtype=np.uint8)
    a[0, 0] = 0x78
    a[0, 32:] = 0x08
    b = np.full((64, 1), 0x38, dtype=np.uint8)
    kw = dict(profile="sm90_wgmma_f8", a_type="f8e4m3fn", b_type="f8e4m3fn")
    assert bits(numref.matmul(a, b, **kw))[0, 0] == 0x43800000
    assert bits(numref.matmul(a, b, promote=32, **kw))[0, 0] == 0x43804000
    # binary16 accumulator: 256 + 0.5 in the ideal f16 sum: 256.5 rounds (f16 ulp at 256 is 0.25) to 256.5 = 5C02
    d = numref.matmul(a, b, np.zeros((1, 1), dtype=np.float16), a_type="f8e4m3fn", b_type="f8e4m3fn")
    assert d.dtype == np.float16 and bits(d)[0, 0] == 0x5C02


def test_block_scales():
    # §38.3: one product 1·1 scaled by 2^3 (82) and 2^-1 (7E) = 4 under sm100_tcgen05_mxf8f6f4.
    a = np.zeros((1, 32), dtype=np.uint8)
    b = np.zeros((32, 1), dtype=np.uint8)
    a[0, 5] = b[5, 0] = 0x38
    sa = np.array([[0x82]], dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    sb = np.array([[0x7E]], dtype=np.uint8)
    d = numref.matmul(a.view(E4), b.view(E4), profile="sm100_tcgen05_mxf8f6f4", scales=(sa, sb), block=32)
    assert bits(d)[0, 0] == 0x40800000


def test_equals_the_cli():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 64)).astype(np.float32).astype(E4)
    b = rng.standard_normal((64, 3)).astype(np.float32).astype(ml_dtypes.float8_e5m2)
    c = rng.standard_normal((5, 3)).astype(np.float32)
    cli = os.environ.get("NUMREF_CLI")
    if not cli:
        pytest.skip("NUMREF_CLI is not set")
    with tempfile.TemporaryDirectory() as t:
        np.save(os.path.join(t, "a.npy"), a.view(np.uint8))
        np.save(os.path.join(t, "b.npy"), b.view(np.uint8))
        np.save(os.path.join(t, "c.npy"), c)
        for prof in ("ideal", "sm89_mma_f8", "sm90_wgmma_f8", "sm120_mma_f8"):
            out = os.path.join(t, prof + ".npy")
            subprocess.run([cli, "mma", "--profile", prof, "--a", os.path.join(t, "a.npy"), "--a-type", "f8e4m3fn",
                            "--b", os.path.join(t, "b.npy"), "--b-type", "f8e5m2", "--c", os.path.join(t, "c.npy"),
                            "--out", out], check=True, capture_output=True)
            assert np.array_equal(bits(np.load(out)), bits(numref.matmul(a, b, c, profile=prof))), prof


def test_threads_give_the_same_result():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((32, 256)).astype(np.float32).astype(E4)
    b = rng.standard_normal((256, 32)).astype(np.float32).astype(E4)
    want = bits(numref.matmul(a, b, profile="sm90_wgmma_f8")).copy()
    got = []
    ts = [threading.Thread(target=lambda: got.append(bits(numref.matmul(a, b, profile="sm90_wgmma_f8")).copy()))
          for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(got) == 3 and all(np.array_equal(g, want) for g in got)


def test_errors_name_the_problem():
    a = e4([[0x38, 0x38]])
    b = e4([[0x38], [0x38]])
    with pytest.raises(ValueError, match="unknown mma profile 'nope'"):
        numref.matmul(a, b, profile="nope")
    with pytest.raises(ValueError, match="does not take operand type f16"):
        numref.matmul(np.ones((1, 2), np.float16), np.ones((2, 1), np.float16), profile="sm90_wgmma_f8")
    with pytest.raises(ValueError, match="expected K = 2 rows"):
        numref.matmul(a, e4([[0x38]]))
    with pytest.raises(ValueError, match="knob 'align' is given twice"):
        numref.matmul(a, b, profile="sm90_wgmma_f8", model="align=1 align=2")
    with pytest.raises(ValueError, match="needs block scales"):
        numref.matmul(a, b, profile="sm100_tcgen05_mxf8f6f4")
    with pytest.raises(TypeError, match="need their type"):
        numref.matmul(np.zeros((1, 2), np.uint8), b)


def test_profiles_listed():
    names = [p["name"] for p in numref.mma_profiles()]
    assert names[0] == "ideal" and "sm90_wgmma_f8" in names and len(names) == len(set(names))


def test_check_matmul_passes_the_reference_and_reads_the_vectors():
    # §34.12 / §31.10 numref.matmul as the kernel: every generated case and the suite's golden vectors pass
    r = numref.conform.check_matmul(lambda a, b, c: numref.matmul(a, b, c, profile="sm90_wgmma_f8"),
                                    profile="sm90_wgmma_f8", a_type="f8e4m3fn")
    assert r.ok and r.cases > 600 and r.vector_files == 1 and r.vector_cases > 0, r.report()


def test_check_matmul_catches_a_kernel_with_another_alignment():
    # Blackwell's arithmetic (align 25, rz) for Hopper's wgmma (align 13, rz13): caught, element named
    r = numref.conform.check_matmul(lambda a, b, c: numref.matmul(a, b, c, profile="sm100_tcgen05_f8f6f4"),
                                    profile="sm90_wgmma_f8", a_type="f8e4m3fn", vectors=False, max_mismatches=3)
    assert not r.ok and r.mismatches > 0 and set(r.classes) == {"mma/value"}
    assert len(r.first) == 3 and "| element (" in r.first[0].text and "sm90_wgmma_f8" in r.first[0].text
    with pytest.raises(numref.conform.ConformanceError):
        numref.conform.check_matmul(lambda a, b, c: numref.matmul(a, b, c, profile="sm100_tcgen05_f8f6f4"),
                                    profile="sm90_wgmma_f8", a_type="f8e4m3fn", vectors=False,
                                    raise_on_mismatch=True)


def test_check_matmul_block_scales_and_flags():
    r = numref.conform.check_matmul(
        lambda a, b, c, sa, sb: numref.matmul(a, b, c, profile="sm100_tcgen05_mxf8f6f4", scales=(sa, sb), block=32,
                                              flags=True),
        profile="sm100_tcgen05_mxf8f6f4", a_type="f8e4m3fn", block=32, flags=True)
    assert r.ok and r.vector_files == 1, r.report()
    with pytest.raises(ValueError, match="unknown mma profile"):
        numref.conform.check_matmul(lambda a, b, c: c, profile="sm90", a_type="f8e4m3fn")


def test_recipe_gemm_is_quantize_then_the_instruction():
    """§40.6: recipe= quantizes a and b along K by the recipe profile and uses its scales as its
    library's GEMM does. By hand (te_mxfp8, mx-rceil-f32): a block of ones has X = 2^-8 (code 0x77),
    elements 256; a block of twos X = 2^-7 (0x78), elements 256; D = 32 * 1 * 2 = 64."""
    a = np.ones((1, 32), np.float32)
    b = np.full((32, 1), 2, np.float32)
    assert numref.matmul(a, b, profile="sm100_tcgen05_mxf8f6f4", recipe="te_mxfp8", raw=True)[0, 0] == 0x42800000
    # random operands: the composition of numref.quantize (1 x 32 along K for a, 32 x 1 for b) and
    # the block-scaled instruction, for each MX recipe with a GEMM and two element formats
    rng = np.random.default_rng(5)
    A = (rng.standard_normal((3, 96)) * np.exp2(rng.integers(-6, 7, (3, 96)))).astype(np.float32)
    B = (rng.standard_normal((96, 4)) * np.exp2(rng.integers(-6, 7, (96, 4)))).astype(np.float32)
    for recipe, fmt in (("te_mxfp8", "f8e4m3fn"), ("te_mxfp8", "f8e5m2"), ("torchao_mx_floor", "f6e2m3fn"),
                        ("torchao_mx_rceil", "f8e4m3fn"), ("torchao_mx_rceil", "f4e2m1fn")):
        qa = numref.quantize(A, fmt, profile=recipe, partition="block:1x32")
        qb = numref.quantize(B, fmt, profile=recipe, partition="block:32x1")
        want = numref.matmul(qa.raw_codes, qb.raw_codes, a_type=fmt, b_type=fmt, profile="sm100_tcgen05_mxf8f6f4",
                             block=32, scales=(qa.scales.reshape(3, 3), qb.scales.reshape(3, 4)), raw=True)
        got = numref.matmul(A, B, profile="sm100_tcgen05_mxf8f6f4", recipe=recipe, recipe_format=fmt, raw=True)
        assert np.array_equal(got, want), (recipe, fmt)
    with pytest.raises(ValueError, match="takes no block size 32"):
        numref.matmul(A, B, profile="sm90_wgmma_f8", recipe="te_mxfp8")
    with pytest.raises(ValueError, match="'torchao_float8' has no GEMM"):
        numref.matmul(A, B, profile="sm90_wgmma_f8", recipe="torchao_float8")
    with pytest.raises(ValueError, match="give no scales, block or promote"):
        numref.matmul(A, B, profile="sm90_wgmma_f8", recipe="deepgemm", promote=128)


def _rn32(q):
    """RN32 of a non-negative Fraction, by exact comparison with the binary32 neighbours."""
    from fractions import Fraction

    f = np.float32(float(q))
    cands = [np.nextafter(f, np.float32(0)), f, np.nextafter(f, np.float32(np.inf))]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(np.float32(c).view(np.uint32)) & 1))
    return np.float32(best)


def test_backward_error_of_a_computed_product():
    """§29.1: BE_ij = RN32(|sum a b - d| / sum |a||b|). The §29 example by hand: a = [1.0625, 448],
    b = [1, 1]^T, d = 449: 0.0625 / 449.0625 = 1/7185 -> 0x3911F089. Random operands against
    exact fractions, d from the MXFP8 recipe GEMM (§40.6)."""
    from fractions import Fraction

    a = np.array([[1.0625, 448]], np.float32)
    b = np.ones((2, 1), np.float32)
    r = numref.backward_error(a, b, np.array([[449]], np.float32))
    assert int(r["be"].view(np.uint32)[0, 0]) == 0x3911F089 and r["max"] == r["mean"] == r["be"][0, 0]
    assert numref.backward_error(a, b, np.array([[449.0625]], np.float32))["be"][0, 0] == 0
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((3, 64)) * np.exp2(rng.integers(-8, 9, (3, 64)))).astype(np.float32)
    w = (rng.standard_normal((64, 2)) * np.exp2(rng.integers(-8, 9, (64, 2)))).astype(np.float32)
    d = numref.matmul(x, w, profile="sm100_tcgen05_mxf8f6f4", recipe="te_mxfp8")
    got = numref.backward_error(x, w, d)["be"]
    for i in range(3):
        for j in range(2):
            num = sum(Fraction(float(x[i, k])) * Fraction(float(w[k, j])) for k in range(64)) - Fraction(float(d[i, j]))
            den = sum(abs(Fraction(float(x[i, k])) * Fraction(float(w[k, j]))) for k in range(64))
            assert got[i, j] == _rn32(abs(num) / den), (i, j)
    with pytest.raises(ValueError, match="not finite"):
        numref.backward_error(a, b, np.array([[np.nan]], np.float32))
    with pytest.raises(ValueError, match="do not form d = a @ b"):
        numref.backward_error(a, b, np.zeros((2, 2), np.float32))
    with pytest.raises(TypeError, match="d: expected float32"):
        numref.backward_error(a, b, np.zeros((1, 1), np.float64))
