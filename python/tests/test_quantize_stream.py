"""Issue 32 items 1 and 4: cpu-fast's streaming block quantizer and `numref quantize` on it.

* The streaming kernel (conformance/backends/cpu_fast/fast_quant.cpp stream_impl: 1-row blocks,
  one pass per block, scales by bit arithmetic / single binary32 operations, elements by the casts'
  byte-lane function — a power-of-two factor folded into the lanes' exponent bounds; and the same
  kernel applying given factors in the two-pass path) equals the reference
  (numref.quantize(path="reference")) — codes, scales, dequantized, fake-quant, counts — on its
  edge inputs: exact ties of every element grid after scaling and the binary32 neighbours of those
  ties (the kernel squeezes binary32 to 16-bit lane words with a sticky bit), an amax at the
  element's max (MX RCEIL's increment) and at MX EVEN's threshold, amaxes whose MX exponent is
  -126 / -127 / -128 (code 00 is left to the general path), subnormal elements scaled up, amaxes
  whose RN32(amax / q_max) is 0, NaNs with payloads (signalling, negative) and ±Inf under both
  amax policies, zero and -0 blocks, values near FLT_MAX; partitions 1 x 16, 1 x 32, 1 x 48
  (pieces that are not powers of two, a last partial block), rows, tensor, 4 x 32; f32 and bf16
  sources.
* `numref quantize` (the CLI) takes the same FastQuant path: its codes, scales, tensor amax,
  dequantized tensor, per-block amaxes and §19.5 counts equal numref.quantize's reference path
  (and numpy's maxima for the amaxes), and are the same for --threads 1, 2 and 3.
Expected values come from the reference (numref.quantize(path="reference")) or numpy, never from
cpu-fast. Speed is never asserted here (docs/performance.md carries it)."""
import json
import os
import subprocess
import tempfile

import ml_dtypes
import numpy as np
import pytest

import numref
from test_threads import _compare, _same  # fast against the reference: codes, scales, dequantized, fake, counts

ELEMENTS = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "f6e3m2fn": ml_dtypes.float6_e3m2fn,
            "f6e2m3fn": ml_dtypes.float6_e2m3fn, "f4e2m1fn": ml_dtypes.float4_e2m1fn}


def _grid(fmt):
    """The element's positive finite values, ascending (ml_dtypes decodes every code)."""
    bits = 8 if fmt.startswith("f8") else 6 if fmt.startswith("f6") else 4
    v = np.arange(1 << bits, dtype=np.uint8).view(ELEMENTS[fmt]).astype(np.float32)
    return np.unique(v[np.isfinite(v) & (v > 0)])


def _edge_tensor(fmt, cols=192):
    """Rows of 1-row blocks up to 48 wide (whole blocks of 16 / 32 / 48 in 192 columns): each row
    holds the element's max (the amax), scaled by 2^s, and exact ties of the element grid at that
    scale with their binary32 neighbours; then the special rows."""
    g = _grid(fmt)
    mid = ((g[:-1] + g[1:]) / 2).astype(np.float32)  # exact in binary32
    ties = np.concatenate([mid, np.nextafter(mid, np.float32(0)), np.nextafter(mid, np.float32(np.inf)),
                           g[:1] / 2, np.nextafter(g[:1] / 2, np.float32(1))])  # half the smallest subnormal
    rows = []
    for s in (0, 5, -9, 40, -60, 100, -100):
        for k in range(0, len(ties), 47):
            r = np.resize(ties[k:k + 47], cols).astype(np.float32)
            r[::16] = g[-1]  # every block of 16 / 32 / 48 has the max: amax at the element's max
            r[1::5] *= -1
            rows.append(np.ldexp(r, s).astype(np.float32))
    x = np.array(rows, dtype=np.float32)
    # amaxes with MX exponents near -127 (q_max's exponent above it) and subnormal elements
    emax = int(np.floor(np.log2(g[-1])))
    for e in (-126, -127, -128):
        r = np.resize(np.float32([1e-45, -3e-42, 1.5e-39, 0.0]), cols).astype(np.float32)
        r[::16] = np.ldexp(np.float32(1.0), e + emax) if e + emax >= -149 else np.float32(1e-45)
        x = np.vstack([x, r])
    # amaxes at MX EVEN's threshold (§16.4: amax rounded to the element's precision p carries into
    # the next binade from 2 - 2^-p up) and one binary32 ulp below it, for p = 2, 3, 4, at a few scales
    for p in (2, 3, 4):
        thr = np.float32(2 - 2.0 ** -p)
        for a in (thr, np.nextafter(thr, np.float32(0))):
            r = np.resize(np.float32([0.5, -0.25, 1.0, 0.125]), cols).astype(np.float32)
            r[::16] = a
            x = np.vstack([x, r, np.ldexp(r, 7).astype(np.float32), np.ldexp(r, -20).astype(np.float32)])
    x = np.vstack([x, np.resize(np.float32([1e-45, -1e-45, 0.0, 3e-45, -0.0]), cols)])  # amax / q_max rounds to 0
    special = np.resize(np.float32([1.0, -2.5, 0.75, 3e38, -1e-40]), (6, cols)).astype(np.float32)
    u = special.view(np.uint32)
    u[0, 3], u[0, 40] = 0x7F800001, 0xFFA00005  # a signalling NaN, a negative one with a payload
    u[1, 17], u[1, 90] = 0x7FC00123, 0x7F800000  # a quiet NaN with a payload, +Inf
    special[2, 33], special[2, 100] = -np.inf, np.inf
    special[3, :] = 0
    special[4, :48] = -0.0
    special[5, :] = np.float32(3.4e38) * np.sign(special[5, :])  # near FLT_MAX
    return np.vstack([x, special])


def _below_nvfp4_limit(x):
    """x with its finite magnitudes of at least 7e35 replaced by ±1e35: NVFP4's RN32(d_b · t_amax)
    of §18.4 overflows for a t_amax above FLT_MAX / 448 (a +Inf factor the tests do not compare)."""
    x = x.copy()
    big = np.isfinite(x) & (np.abs(x) >= 7e35)
    x[big] = np.copysign(np.float32(1e35), x[big])
    return x


STREAM_RULES = ["mx-floor", "mx-ceil", "mx-even", "mx-rceil", "mx-rceil-f32", "amax", "amax-recip", "pow2",
                "pow2-recip"]


@pytest.mark.parametrize("rule", STREAM_RULES)
@pytest.mark.parametrize("fmt", list(ELEMENTS))
@pytest.mark.parametrize("src", ["f32", "bf16"])
def test_stream_kernel_edges(rule, fmt, src):
    """One-pass streaming (1-row blocks): every rule the kernel computes, every element format."""
    x = _edge_tensor(fmt)
    xs = x if src == "f32" else numref.cast(x, "bf16", overflow="saturate")
    for partition in ("block:1x16", "block:1x32", "block:1x48", "rows"):
        for amax in ({}, dict(amax_nan="ignore", amax_inf="ignore")):
            q = _compare(xs, fmt, partition=partition, scale=rule, fake_quant="bf16", **amax)
            assert q.path == "fast", (rule, partition)


@pytest.mark.parametrize("rule", ["nvfp4", "amax", "amax-dequant", "mx-floor", "gam"])
@pytest.mark.parametrize("fmt", ["f8e4m3fn", "f4e2m1fn", "f6e2m3fn"])
@pytest.mark.parametrize("src", ["f32", "bf16"])
def test_stream_kernel_given_factors(rule, fmt, src):
    """The two-pass path (scales first: NVFP4's tensor amax, per-tensor and multi-row blocks) whose
    codes the streaming kernel writes with the blocks' factors given (a divisor, a poisoned, zero or
    NaN-holding block by the general path)."""
    x = _below_nvfp4_limit(_edge_tensor(fmt))
    for partition in (["block:1x16", "tensor", "block:4x32"] if rule != "gam" else ["block:1x32"]):
        # past the one-pass sizes (a block row of at most 2^15 elements): the two-pass path
        t = np.tile(x, (1, 44)) if partition == "block:4x32" else np.tile(x, (3, 1))
        xs = t if src == "f32" else numref.cast(t, "bf16", overflow="saturate")
        for amax in ({}, dict(amax_nan="ignore", amax_inf="ignore")):
            kw = dict(partition=partition, scale=rule, **amax)
            if rule == "gam":
                kw["group"] = "rows"
            assert _compare(xs, fmt, **kw).path == "fast", (rule, partition)


def _cli(numref_cli, args):
    r = subprocess.run([numref_cli] + args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("src,fmt,kw", [
    ("f32", "f8e4m3fn", dict(partition="block:1x32", scale="mx-floor")),
    ("bf16", "f4e2m1fn", dict(partition="block:1x16", scale="nvfp4")),
    ("f32", "f8e5m2", dict(partition="rows", scale="amax", amax_nan="ignore")),
    ("f32", "f6e2m3fn", dict(partition="tensor", scale="amax-dequant")),
    ("bf16", "f8e4m3fn", dict(partition="block:4x32", scale="gam")),
    ("f32", "f8e4m3fn", dict(profile="torchao_mx_floor")),
    ("f32", "f8e4m3fn", dict(partition="block:1x32", scale="mx-rceil", round="sr", sr_bits=8)),
    # §14.6 zero_divisor=keep: a divisor RN32(amax / q_max) that is 0 divides (x / 0: ±Inf met by
    # the element policy — saturated for f8e4m3fn, Inf for f8e5m2; 0 / 0 a NaN)
    ("f32", "f8e4m3fn", dict(partition="block:1x32", scale="amax-dequant", recipe="zero_divisor=keep")),
    ("f32", "f8e5m2", dict(partition="block:1x32", scale="amax-dequant", recipe="zero_divisor=keep")),
])
def test_cli_quantize_fast_equals_reference(numref_cli, src, fmt, kw):
    """`numref quantize` on a .npy input: the files and the JSON summary (per-block amax and
    counts; the totals) equal numref.quantize's reference path, for --threads 1, 2 and 3."""
    x = np.tile(_below_nvfp4_limit(_edge_tensor(fmt)), (4, 1))
    xs = x if src == "f32" else numref.cast(x, "bf16", overflow="saturate")
    tmp = tempfile.mkdtemp(prefix="numref-stream-cli-")
    inp = os.path.join(tmp, "x.npy")
    np.save(inp, xs.view(np.uint16) if src == "bf16" else xs)
    args = ["quantize", "--input", inp, "--format", fmt, "--json", "--max-blocks", "100000", "--dequant-out"]
    if src == "bf16":
        args += ["--input-format", "bf16"]
    random = None
    for k, v in kw.items():
        if k == "round":
            args += ["--round", v, "--seed", "7"]
        elif k == "sr_bits":
            args += ["--sr-bits", str(v)]
        else:
            args += ["--" + k.replace("_", "-"), v]
    if kw.get("round") == "sr":  # the CLI's --seed S values: splitmix64(S), low k bits, element order
        s, random = 7, []
        for _ in range(x.size):
            s = (s + 0x9E3779B97F4A7C15) & (2**64 - 1)
            z = s
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
            random.append((z ^ (z >> 31)) & ((1 << kw["sr_bits"]) - 1))
        random = np.array(random, dtype=np.uint32).reshape(x.shape)
    pkw = {k: v for k, v in kw.items() if k not in ("round", "sr_bits")}
    if "profile" in kw:  # the recipe profile's partition (torchao_mx_floor: 1 x 32) is a row block
        pkw["partition"] = "block:1x32"
        args += ["--partition", "block:1x32"]
    if random is not None:
        pkw.update(round="sr", sr_bits=kw["sr_bits"], random=random)
    ref = numref.quantize(xs, fmt, path="reference", **pkw)
    outs = {}
    for t in ("1", "2", "3"):
        prefix = os.path.join(tmp, "q" + t)
        summary = json.loads(_cli(numref_cli, args + ["--out", prefix, "--threads", t]))
        files = [np.load(prefix + ext) for ext in (".codes.npy", ".scales.npy", ".dequant.npy")]
        outs[t] = (summary, files)
        assert summary["counts"]["saturated"] == ref.saturated and summary["counts"]["flushed"] == ref.flushed
        assert summary["counts"]["nan"] == ref.nan and summary["counts"]["inf"] == ref.inf
        _same(files[0].reshape(-1), ref.raw_codes.reshape(-1), "codes")
        w = np.uint8 if files[1].dtype == np.uint8 else np.uint32
        _same(files[1].reshape(-1).view(w), ref.scales.reshape(-1).view(w), "scales")
        _same(files[2].reshape(-1).view(np.uint32), ref.dequantized.reshape(-1).view(np.uint32), "dequantized")
        if "tensor_amax" in summary:
            assert int(summary["tensor_amax"]["hex"], 16) == np.float32(ref.tensor_amax).view(np.uint32)
    for t in ("2", "3"):
        assert outs[t][0]["blocks"] == outs["1"][0]["blocks"] and outs[t][0]["counts"] == outs["1"][0]["counts"]
        for a, b in zip(outs[t][1], outs["1"][1]):
            _same(a, b, f"--threads {t}")
    # per block: the amax against numpy's maximum of |x| (§13: NaN above Inf above the finite
    # values; ignored ones left out), the counts summing to the totals, and, where a block is
    # quantized on its own (no tensor-level state), against the reference on that block alone
    blocks = outs["1"][0]["blocks"]
    assert len(blocks) == ref.scales.size
    nan_ignore, inf_ignore = kw.get("amax_nan") == "ignore", kw.get("amax_inf") == "ignore"
    xf = np.asarray(xs).astype(np.float32)
    for k in ("saturated", "flushed", "nan", "inf"):
        assert sum(blk[k] for blk in blocks) == outs["1"][0]["counts"][k], k
    alone = "scale" in kw and kw["scale"] not in ("nvfp4", "gam") and kw.get("partition") != "tensor"
    for b in list(range(0, len(blocks), max(1, len(blocks) // 40))) + [len(blocks) - 1]:
        blk = blocks[b]
        r0, r1, c0, c1 = blk["rows"][0], blk["rows"][1], blk["cols"][0], blk["cols"][1]
        v = xf[r0:r1, c0:c1]
        if np.isnan(v).any() and not nan_ignore:
            want = 0x7FC00000
        elif np.isinf(v).any() and not inf_ignore:
            want = 0x7F800000
        else:
            f = np.abs(v[np.isfinite(v)])
            want = int(np.float32(f.max() if f.size else 0).view(np.uint32))
        assert int(blk["amax"]["hex"], 16) == want, (b, blk["amax"])
        if alone:
            sub = np.ascontiguousarray(np.asarray(xs)[r0:r1, c0:c1])
            rsub = None if random is None else np.ascontiguousarray(random[r0:r1, c0:c1])
            one = numref.quantize(sub, fmt, path="reference", **dict(pkw, partition="tensor", random=rsub))
            assert (blk["saturated"], blk["flushed"], blk["nan"], blk["inf"]) == \
                (one.saturated, one.flushed, one.nan, one.inf), b
