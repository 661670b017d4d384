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
    assert numref.quantize(x, "f4e2m1fn", partition="block:1x16", scale="nvfp4").path == "reference"  # §35: nvfp4
    assert numref.quantize(x, "f8e4m3fn", partition="block:1x32", scale="mx-floor").path == "fast"
    with pytest.raises(ValueError, match="path: expected"):
        numref.quantize(x, "f8e4m3fn", path="gpu")
