"""numref.quantize (spec §19) against hand-computed values and against `numref quantize`."""
import subprocess

import numpy as np
import pytest

import numref


def test_hand_computed_amax_scale():
    # §14 amax rule: S = RN32(q_max / amax) = 448 / 224 = 2 (exact); 224 * 2 = 448 -> 0x7e,
    # 1 * 2 = 2 -> 0x40 (exponent field 8, fraction 0); dequantize divides by S: 224, 1.
    q = numref.quantize(np.float32([224, 1]), "f8e4m3fn")
    assert list(q.raw_codes.reshape(-1)) == [0x7E, 0x40]
    assert q.scales.dtype == np.float32 and q.scales.reshape(-1)[0] == 2.0
    assert list(q.dequantized.reshape(-1)) == [224.0, 1.0]
    assert q.saturated == q.flushed == q.nan == q.inf == 0


@pytest.mark.parametrize("fmt, partition, scale", [
    ("f8e4m3fn", "block:1x32", "mx-floor"), ("f4e2m1fn", "block:1x16", "nvfp4"), ("f8e5m2", "rows", "amax"),
    ("int8", "cols", "int8"), ("f6e2m3fn", "block:2x8", "mx-rceil"),
])
def test_quantize_equals_cli(numref_cli, tmp_path, fmt, partition, scale):
    x = (np.random.default_rng(7).standard_normal((4, 64)) * 20).astype(np.float32)
    x[1, 3] = np.inf
    np.save(tmp_path / "x.npy", x)
    q = numref.quantize(x, fmt, partition=partition, scale=scale)
    subprocess.run([numref_cli, "quantize", "--input", str(tmp_path / "x.npy"), "--format", fmt, "--partition",
                    partition, "--scale", scale, "--out", str(tmp_path / "P"), "--dequant-out", "--fake-quant", "bf16"],
                   check=True, capture_output=True)
    assert np.array_equal(q.raw_codes, np.load(tmp_path / "P.codes.npy"))
    cli_scales = np.load(tmp_path / "P.scales.npy")
    assert q.scales.size == cli_scales.size  # one per block (the CLI's .npy may shape them differently)
    bits = f"u{cli_scales.dtype.itemsize}"  # compared bit for bit (NaN scales of poisoned blocks)
    assert np.array_equal(q.scales.view(bits).reshape(-1), cli_scales.view(bits).reshape(-1))
    assert np.array_equal(q.dequantized.view(np.uint32), np.load(tmp_path / "P.dequant.npy").view(np.uint32))
    assert np.array_equal(q.fake_quant.view(np.uint16), np.load(tmp_path / "P.fakequant.npy").view(np.uint16))


def test_quantize_bad_inputs():
    x = np.float32([1, 2])
    with pytest.raises(ValueError, match="scale: unknown rule 'mx'"):
        numref.quantize(x, "f8e4m3fn", scale="mx")
    with pytest.raises(ValueError, match="partition: "):
        numref.quantize(x, "f8e4m3fn", partition="block:0x3")
    with pytest.raises(ValueError, match="amax_nan: 'drop' is not propagate or ignore"):
        numref.quantize(x, "f8e4m3fn", amax_nan="drop")
    with pytest.raises(ValueError, match="fake_quant: the output format must be a 16- or 32-bit format"):
        numref.quantize(x, "f8e4m3fn", fake_quant="f8e5m2")


@pytest.mark.parametrize("src", ["f32", "bf16"])
@pytest.mark.parametrize("fmt, partition, scale, knobs", [
    ("f8e4m3fn", "block:1x32", "mx-floor", {}), ("f8e4m3fn", "block:1x32", "mx-rceil", {}),
    ("f8e5m2", "block:128x128", "amax", {}), ("f8e4m3fn", "tensor", "amax-recip", {"dequant": "reciprocal"}),
    ("f6e3m2fn", "block:2x16", "mx-even", {}), ("f4e2m1fn", "block:1x32", "mx-ceil", {}),
    ("f8e4m3fn", "block:1x32", "gam", {"group": "rows"}), ("int8", "cols", "int8", {}),
    ("int8", "rows", "int8-127.5", {}), ("f8e4m3fn", "block:1x32", "mx-floor", {"round": "sr", "sr_bits": 8, "random": 3}),
    ("f8e4m3fn", "rows", "pow2", {"amax_nan": "ignore", "amax_inf": "ignore"}),
])
def test_fast_path_equals_reference(src, fmt, partition, scale, knobs):
    """numref.quantize takes cpu-fast's block quantization where FastQuant takes the operation;
    every output (codes, scales, group mantissas, dequantized, fake-quant, counts) equals the
    reference's, on random tensors with zeros, tiny values, NaN and Inf among them."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((160, 256)) * np.exp2(rng.integers(-20, 12, (160, 256)))).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = 0
    x[3, 5], x[7, 40], x[100, 200] = np.nan, np.inf, -np.inf
    xs = x if src == "f32" else numref.cast(x, "bf16")
    fast = numref.quantize(xs, fmt, partition=partition, scale=scale, **knobs)
    ref = numref.quantize(xs, fmt, partition=partition, scale=scale, path="reference", **knobs)
    assert fast.path == "fast" and ref.path == "reference"
    for k in ("raw_codes", "scales", "group_mantissa", "dequantized", "fake_quant"):
        a, b = getattr(fast, k), getattr(ref, k)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), k
    assert (fast.saturated, fast.flushed, fast.nan, fast.inf) == (ref.saturated, ref.flushed, ref.nan, ref.inf)
    assert ref.nan > 0 and str(fast.policy) == str(ref.policy)


def test_fast_path_declines_what_cpu_fast_does_not_take():
    x = np.float32([[1, 2, 3, 4] * 8])
    # §13.7 nan_block=own_nan with the fused application (§19.2)
    assert numref.quantize(x, "int8", scale="amax-dequant", recipe="nan_block=own_nan", apply="fused").path == \
        "reference"
    assert numref.quantize(x, "f8e4m3fn", partition="block:1x32", scale="mx-floor").path == "fast"
    with pytest.raises(ValueError, match="path: expected"):
        numref.quantize(x, "f8e4m3fn", path="gpu")


# §10.4 A profile with a quantization recipe sets the rule, partition, recipe knobs and amax
# policy, as `numref quantize --profile` does (numref::quantize_spec is shared). Hand-computed:
# te_float8_block (reference/tests/test_recipe.cpp TeFloat8Block): [0.5, 5, -3] -> amax 5,
# 448 / 5 = 89.6 -> P = 64, stored 1/64; 0.5*64 = 32 -> 0x60, 5*64 = 320 = 1.25*2^8 -> 0x7A,
# -192 -> 0xF4. te_mxfp8: [NaN, 448] ignores the NaN (fmaxf): amax 448 -> E8M0 0x7F, codes 7F 7E.
# torchao_mx_rceil: amax 0x48E00001 -> code 0x89 (binary32 log2), element saturates to 0x7E.
def test_recipe_profiles_set_the_recipe():
    q = numref.quantize(np.float32([0.5, 5, -3]), "f8e4m3fn", profile="te_float8_block")
    assert q.scales.reshape(-1).view(np.uint32).tolist() == [0x3C800000]
    assert q.raw_codes.reshape(-1).tolist() == [0x60, 0x7A, 0xF4]
    assert q.dequantized.reshape(-1).tolist() == [0.5, 5.0, -3.0]  # v * R: 32/64, 320/64, -192/64
    plain = numref.quantize(np.float32([0.5, 5, -3]), "f8e4m3fn", scale="pow2")
    assert plain.scales.reshape(-1).view(np.uint32).tolist() == [0x42800000]  # pow2 stores P itself
    q = numref.quantize(np.float32([np.nan, 448]), "f8e4m3fn", profile="te_mxfp8")
    assert q.scales.reshape(-1).view(np.uint8).tolist() == [0x7F]
    assert q.raw_codes.reshape(-1).tolist() == [0x7F, 0x7E]
    q = numref.quantize(np.uint32([0x48E00001]).view(np.float32), "f8e4m3fn", profile="torchao_mx_rceil")
    assert q.scales.reshape(-1).view(np.uint8).tolist() == [0x89] and q.raw_codes.reshape(-1).tolist() == [0x7E]
    # microxcaling (test_recipe.cpp Microxcaling): amax 0x72FFFFFF -> floor(log2f) = 103, code 0xDE;
    # 256 - 2^-16 -> 0x78; -2^-63 scales to -2^-158 = -0 in binary32 -> +0; the fake-quant output
    # 256 * 2^95 = 2^103 = 0x73000000; a NaN block gives its first NaN quieted and positive
    x = np.uint32([0x72FFFFFF, 0xA0000000]).view(np.float32)
    q = numref.quantize(x, "f8e4m3fn", profile="microxcaling", fake_quant="f32")
    assert q.scales.reshape(-1).view(np.uint8).tolist() == [0xDE] and q.raw_codes.reshape(-1).tolist() == [0x78, 0]
    assert q.fake_quant.reshape(-1).view(np.uint32).tolist() == [0x73000000, 0]
    q = numref.quantize(np.uint32([0x3F800000, 0xFFBB5C5D]).view(np.float32), "f8e4m3fn", profile="microxcaling",
                        fake_quant="f32")
    assert q.fake_quant.reshape(-1).view(np.uint32).tolist() == [0x7FFB5C5D, 0x7FFB5C5D]
    # partition and q_max override; the recipe's rule, knobs and amax policy may not be contradicted
    q = numref.quantize(np.float32([[1, 2], [4, 8]]), "f8e4m3fn", profile="te_float8_block", partition="rows")
    assert q.scales.reshape(-1).view(np.uint32).tolist() == [0x3C000000, 0x3D000000]  # P = 128 (448 / 2 = 224), 32 (448 / 8 = 56)
    with pytest.raises(ValueError, match="scale amax contradicts profile te_mxfp8"):
        numref.quantize(np.float32([1]), "f8e4m3fn", profile="te_mxfp8", scale="amax")
    with pytest.raises(ValueError, match="contradicts profile torchao_float8"):
        numref.quantize(np.float32([1]), "f8e4m3fn", profile="torchao_float8", recipe="amax_floor=none")
    with pytest.raises(ValueError, match="amax_nan / amax_inf contradict profile te_mxfp8"):
        numref.quantize(np.float32([1]), "f8e4m3fn", profile="te_mxfp8", amax_nan="propagate")


# §14.4 / §19.8 q_max and recipe knobs on any rule: q_max 224 halves S (amax 224 -> S = 1, code
# 224 = 0x76 instead of 0x7E); amax_floor=1e-12 gives an all-zero tensor S = RN32(448 / RN64(1e-12))
# = 0x57CBBA10 (spec §13.5); knobs outside their rules and inexact q_max are ValueErrors.
def test_q_max_and_recipe_knobs():
    q = numref.quantize(np.float32([224]), "f8e4m3fn", q_max=224)
    assert q.scales.reshape(-1).tolist() == [1.0] and q.raw_codes.reshape(-1).tolist() == [0x76]
    q = numref.quantize(np.float32([0, 0]), "f8e4m3fn", recipe="amax_floor=1e-12")
    assert q.scales.reshape(-1).view(np.uint32).tolist() == [0x57CBBA10]
    with pytest.raises(ValueError, match="q_max"):
        numref.quantize(np.float32([1]), "f8e4m3fn", q_max=0.1)
    with pytest.raises(ValueError, match="scale_exp=log2f applies to"):
        numref.quantize(np.float32([1]), "f8e4m3fn", scale="mx-ceil", recipe="scale_exp=log2f")
    with pytest.raises(ValueError, match="recipe"):
        numref.quantize(np.float32([1]), "f8e4m3fn", recipe="zero_code=sometimes")
