"""Issue 32: threads= and the wider cpu-fast quantize path.

* numref.cast and numref.quantize give the same bits for every thread count (1, 2 and the odd 3),
  on tensors large enough to be split (work is split from 2 x 2^19 elements up, so 1.5 M elements
  make three ranges with threads=3) — over the byte lanes, the table path, the f32 lanes and
  stochastic rounding for casts; per-tensor, per-row, per-column, 1 x 32, 128 x 128 and GAM
  partitions (one-pass row blocks and the two-pass path with per-range partial amaxes) for quantize;
* bad threads= values are refused with one message;
* every recipe profile cpu-fast now takes (spec §19.8 knobs) and every scale rule row it implements
  equals the reference for every element format, on tensors with NaN / Inf / zero blocks.
Speed is never asserted here (docs/performance.md carries it)."""
import re
import subprocess

import numpy as np
import pytest

import numref

# 1536 x 1024 = 1.5 M elements: three ranges of 2^19 with threads=3, two with threads=2
ROWS, COLS = 1536, 1024


def _tensor(seed=5, rows=ROWS, cols=COLS):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-12, 10, (rows, cols)))).astype(np.float32)
    x[rng.random(x.shape) < 0.001] = 0
    x[5, 3], x[700, 1000], x[1500, 17] = np.nan, np.inf, -np.inf
    x[900:902, :64] = 0  # zero blocks
    return x


def _same(a, b, what):
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), what


@pytest.mark.parametrize("src,to,knobs", [
    ("f32", "f8e4m3fn", {}),                                      # byte lanes
    ("bf16", "f8e4m3fn", {}),                                     # byte lanes, 16-bit source
    ("bf16", "f8e5m2", {"round": "rtz"}),                         # table of every bf16 code
    ("f32", "bf16", {}),                                          # 32-bit lanes, 16-bit out
    ("f32", "f8e4m3fn", {"round": "sr", "sr_bits": 8, "random": 7}),  # stochastic: r by element index
    ("f16", "f4e2m1fn", {"round": "sr", "sr_bits": 5, "random": 3}),
])
def test_cast_same_bits_for_every_thread_count(src, to, knobs):
    x = _tensor(1).reshape(-1)
    xs = x if src == "f32" else numref.cast(x, src, overflow="saturate", threads=1)
    one = numref.cast(xs, to, raw=True, flags=True, threads=1, **knobs)
    for t in (2, 3, None):
        got = numref.cast(xs, to, raw=True, flags=True, threads=t, **knobs)
        _same(got[0], one[0], f"codes, threads={t}")
        _same(got[1], one[1], f"flags, threads={t}")
    ref = numref.cast(xs, to, raw=True, flags=True, path="reference", threads=3, **knobs)
    _same(ref[0], one[0], "reference codes")
    _same(ref[1], one[1], "reference flags")


QUANT = [
    ("f32", "f8e4m3fn", dict(partition="tensor")),
    ("f32", "f8e4m3fn", dict(partition="rows")),
    ("bf16", "f8e5m2", dict(partition="cols", scale="pow2")),
    ("f32", "f8e4m3fn", dict(partition="block:1x32", scale="mx-floor")),
    ("bf16", "f4e2m1fn", dict(partition="block:1x32", scale="mx-rceil")),
    ("f32", "f8e4m3fn", dict(partition="block:128x128", scale="amax")),
    ("bf16", "f8e4m3fn", dict(partition="block:128x128", scale="gam")),
    ("f32", "int8", dict(partition="block:1x32", scale="int8", apply="fused")),
    ("f32", "f8e4m3fn", dict(partition="block:1x32", scale="mx-rceil", round="sr", sr_bits=8, random=11)),
    ("bf16", "f8e4m3fn", dict(profile="te_mxfp8")),
    ("f32", "f8e4m3fn", dict(profile="deepgemm")),
]


@pytest.mark.parametrize("src,fmt,kw", QUANT)
def test_quantize_same_bits_for_every_thread_count(src, fmt, kw):
    x = _tensor(2)
    xs = x if src == "f32" else numref.cast(x, src, threads=1)
    one = numref.quantize(xs, fmt, threads=1, **kw)
    assert one.path == "fast"
    keys = ("raw_codes", "scales", "group_mantissa", "dequantized", "fake_quant")
    for t in (2, 3):
        got = numref.quantize(xs, fmt, threads=t, **kw)
        for k in keys:
            _same(getattr(got, k), getattr(one, k), f"{k}, threads={t}")
    if kw.get("partition") in ("tensor", "block:1x32", "block:128x128") or "profile" in kw:
        ref = numref.quantize(xs, fmt, path="reference", **kw)
        for k in keys:
            _same(getattr(ref, k), getattr(one, k), f"{k}: fast against the reference")


@pytest.mark.parametrize("bad", [0, -1, -8])
def test_bad_thread_counts_are_refused(bad):
    x = np.float32([1.0, 2.0])
    msg = rf"threads: expected a positive int \(1 = the calling thread only; None = every core\), got {bad}"
    with pytest.raises(ValueError, match=msg):
        numref.cast(x, "f8e4m3fn", threads=bad)
    with pytest.raises(ValueError, match=msg):
        numref.quantize(x, "f8e4m3fn", threads=bad)


@pytest.mark.parametrize("bad", [1.5, "2", True, [2]])
def test_thread_counts_must_be_ints(bad):
    x = np.float32([1.0, 2.0])
    for f in (lambda: numref.cast(x, "f8e4m3fn", threads=bad), lambda: numref.quantize(x, "f8e4m3fn", threads=bad)):
        with pytest.raises(TypeError, match=r"threads: expected a positive int .*got "):
            f()


def test_numpy_int_thread_count():
    x = _tensor(3)
    assert numref.cast(x, "f8e4m3fn", threads=np.int64(2), raw=True).tobytes() == \
        numref.cast(x, "f8e4m3fn", threads=1, raw=True).tobytes()


# ---- the recipe profiles and rule rows cpu-fast takes: equal to the reference ---------------------

def _special_tensor(seed, rows=40, cols=256):
    """Blocks of every kind: NaN, +Inf, -Inf, NaN with Inf, zero, tiny (subnormal), huge, ordinary."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-30, 30, (rows, cols)))).astype(np.float32)
    x[0, 5] = np.nan
    x[1, 40] = np.inf
    x[2, 70] = -np.inf
    x[3, 1], x[3, 2] = np.nan, np.inf
    x[4, :] = 0
    x[5, :] = np.float32(1e-42) * rng.standard_normal(cols).astype(np.float32)
    x[6, :] = np.float32(3e38) * np.sign(rng.standard_normal(cols)).astype(np.float32)
    x[7, 128:160] = -0.0
    x[8, 33] = np.float32(-np.nan)
    return x


FAST_RECIPES = ["torchao_mx_floor", "torchao_mx_ceil", "torchao_mx_even", "torchao_mx_rceil", "te_mxfp8", "deepgemm",
                "te_float8_current", "te_float8_block", "torchao_float8", "torchao_float8_pow2", "microxcaling",
                "microxcaling_even", "torchao_float8_inference"]
ELEMENTS = ["f8e4m3fn", "f8e5m2", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn"]
# the largest finite values (OCP OFP8 v1.0, OCP MX v1.0 §5.3)
ELEMENT_MAX = {"f8e4m3fn": 448.0, "f8e5m2": 57344.0, "f6e3m2fn": 28.0, "f6e2m3fn": 7.5, "f4e2m1fn": 6.0}


def _takes(profile, fmt):
    p = next(p for p in numref.profiles() if p["name"] == profile)
    return p["recipe"]["elements"] is None or fmt in p["recipe"]["elements"]


def _compare(xs, fmt, **kw):
    fast = numref.quantize(xs, fmt, **kw)
    ref = numref.quantize(xs, fmt, path="reference", **kw)
    for k in ("raw_codes", "scales", "group_mantissa", "dequantized", "fake_quant"):
        _same(getattr(fast, k), getattr(ref, k), k)
    assert (fast.saturated, fast.flushed, fast.nan, fast.inf) == (ref.saturated, ref.flushed, ref.nan, ref.inf)
    return fast


@pytest.mark.parametrize("profile", FAST_RECIPES)
@pytest.mark.parametrize("fmt", ELEMENTS)
@pytest.mark.parametrize("src", ["f32", "bf16"])
def test_recipe_profiles_fast_equal_reference(profile, fmt, src):
    if not _takes(profile, fmt):
        pytest.skip(f"{profile} does not quantize to {fmt}")
    x = _special_tensor(hash((profile, fmt)) % 1000)
    xs = x if src == "f32" else numref.cast(x, "bf16")
    for fake in ("bf16", "f32"):
        q = _compare(xs, fmt, profile=profile, fake_quant=fake)
        assert q.path == "fast", profile


def _log2f_edges():
    """Blocks of 32 whose amax (first element) sits where floor / ceil of log2f_cr is not read
    from the exponent bits alone: fraction fields within 2^8 of 0 and of 2^23 (the reference's
    log2f_cr decides; one binary32 ulp apart across 2^k), over every binade of normals and some
    subnormals, and their quotients by 448, 57344, 7.5, 6 (the RN32(amax / q_max) of mx-rceil's
    log2f form at these powers of two); every other element a smaller one, ties of the element
    grids among them (1.25 = between 1 and 1.5, 2.5, 5 for f4e2m1fn at scale 1)."""
    bits = []
    for e in list(range(1, 255, 3)) + [0]:
        for frac in (0, 1, 2, 0x7F, 0xFF, 0x100, 0x101, 0x7FFEFF, 0x7FFF00, 0x7FFF80, 0x7FFFFE, 0x7FFFFF):
            bits.append((e << 23) | frac)
    amax = np.array(bits, dtype=np.uint32).view(np.float32)
    amax = amax[np.isfinite(amax) & (amax != 0)]
    with np.errstate(over="ignore"):  # products past FLT_MAX are dropped below
        quot = np.concatenate([amax * np.float32(q) for q in (448.0, 57344.0, 7.5, 6.0)])
    amax = np.concatenate([amax, quot[np.isfinite(quot) & (quot != 0)]]).astype(np.float32)
    n = len(amax)
    rng = np.random.default_rng(3)
    x = (rng.random((n, 32), dtype=np.float32) * amax[:, None]).astype(np.float32)
    x[:, 0] = amax * np.where(rng.random(n) < 0.5, -1, 1).astype(np.float32)
    x[:, 1:8] = np.float32([1.25, 2.5, 5.0, -0.25, 0.75, 3.5, -1.75]) * (amax[:, None] / np.float32(6.0))
    x[::7, 1:8] = np.float32([1.25, 2.5, 5.0, -0.25, 0.75, 3.5, -1.75])  # exact ties where amax <= 6
    x[::11, 9:12] = np.float32([-0.0, 0.0, -1e-45])
    return x


@pytest.mark.parametrize("profile", ["torchao_mx_rceil", "microxcaling", "microxcaling_even", "torchao_float8_pow2",
                                     "torchao_float8_inference"])
@pytest.mark.parametrize("fmt", ELEMENTS)
def test_log2f_and_nan_knobs_at_their_edges(profile, fmt):
    """The recipes with scale_exp=log2f, nan_block first_nan / own_nan, zero_sign=plus,
    scale_round=source and zero_divisor=keep against the reference at their edge inputs: log2f's
    near-integer results, NaNs with payloads (signalling, negative) in blocks with and without
    Inf, ±0 products, an amax at the element's max; the recipe's partition and others (first_nan's
    first NaN of a block of several rows, or of a block wider than one row piece)."""
    if not _takes(profile, fmt):
        pytest.skip(f"{profile} does not quantize to {fmt}")
    x = _log2f_edges()
    nan_rows = x[:6].copy()
    nan_rows.view(np.uint32)[0, 3] = 0x7F800001   # a signalling NaN, payload 1
    nan_rows.view(np.uint32)[1, 7] = 0xFFA00005   # negative, payload
    nan_rows.view(np.uint32)[1, 9] = 0x7FC00123   # a second NaN in the block
    nan_rows[2, 4] = np.inf
    nan_rows[3, 4], nan_rows.view(np.uint32)[3, 20] = -np.inf, 0x7F812345
    nan_rows[4, :] = ELEMENT_MAX[fmt]  # amax at the element's max
    nan_rows[5, :] = 0
    x = np.concatenate([x, nan_rows])
    for partition in (None, "rows", "tensor", "cols", "block:2x16", "block:3x300"):
        for src in ("f32", "bf16", "f16"):
            xs = x if src == "f32" else numref.cast(x, src, overflow="saturate")
            for fake in ("bf16", "f32"):
                kw = dict(profile=profile, fake_quant=fake)
                if partition:
                    kw["partition"] = partition
                assert _compare(xs, fmt, **kw).path == "fast", (profile, src)


def test_cpu_fast_declines_what_it_does_not_take():
    """The knobs the fused application does not take: the reference path, by name."""
    x = _special_tensor(1)
    for knobs in ("zero_divisor=keep", "nan_block=own_nan", "nan_block=first_nan"):
        assert numref.quantize(x, "int8", scale="amax-dequant", recipe=knobs, apply="fused").path == "reference"
    assert numref.quantize(x, "int8", scale="mx-floor", recipe="zero_sign=plus", apply="fused").path == "reference"


@pytest.mark.parametrize("fmt", ELEMENTS + ["int8"])
@pytest.mark.parametrize("partition", ["block:1x16", "block:16x16", "tensor"])
@pytest.mark.parametrize("src", ["f32", "bf16"])
def test_nvfp4_fast_equal_reference(fmt, partition, src):
    """§18 NVFP4 (UE4M3 block scales under the binary32 tensor scale) on the fast path, equal to
    the reference: codes, scales, the tensor amax, dequantized and fake-quant values; tensors with
    NaN / Inf blocks (the tensor amax poisons every block), an all-zero tensor (s_enc = 1), amaxes
    near FLT_MAX / 448 and subnormal ones (block scales that saturate to 448 or round to 0), the log2f
    edge blocks, and with amax ignoring NaN / Inf."""
    # t_amax stays below FLT_MAX / 448: RN32(d_b * t_amax) of §18.4 overflows above (the
    # reference cannot represent that +Inf factor: not compared here)
    special = _special_tensor(19)
    special[6, :] = np.float32(1e35) * np.sign(special[6, :] + 0.5)
    edges = _log2f_edges()[:, :32]
    edges = edges[np.abs(edges).max(axis=1) < 7e35]
    finite = special.copy()
    finite[~np.isfinite(finite)] = 1.0
    tiny = np.float32([[1e-40, -3e-42, 0.0, 2e-45] * 8] * 4)
    huge = np.float32([[7e35, -1e-30, 5.0, 1e-38] * 8] * 4)
    for x in (special, finite, np.zeros((4, 32), np.float32), tiny, huge, edges, np.concatenate([huge, tiny])):
        xs = x if src == "f32" else numref.cast(x, "bf16")  # every finite value in range; ±Inf kept
        for knobs in ({}, dict(amax_nan="ignore", amax_inf="ignore")):
            q = _compare(xs, fmt, partition=partition, scale="nvfp4", **knobs)
            assert q.path == "fast"
            ref = numref.quantize(xs, fmt, partition=partition, scale="nvfp4", path="reference", **knobs)
            assert np.float32(q.tensor_amax).tobytes() == np.float32(ref.tensor_amax).tobytes()


RULES = ["amax", "amax-recip", "amax-dequant", "pow2", "pow2-recip", "mx-floor", "mx-ceil", "mx-even", "mx-rceil",
         "mx-rceil-f32", "gam"]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("fmt", ELEMENTS)
@pytest.mark.parametrize("partition", ["block:1x32", "block:8x64"])
def test_rule_rows_fast_equal_reference(rule, fmt, partition):
    x = _special_tensor(7)
    kw = dict(partition=partition, scale=rule, fake_quant="bf16")
    if rule == "gam":
        kw["group"] = "rows" if partition == "block:1x32" else "tensor"
    assert _compare(x, fmt, **kw).path == "fast"


@pytest.mark.parametrize("knobs", [
    "zero_code=one", "zero_code=min_normal", "inf_block=exponent", "inf_block=max_code",
    "inf_block=max_code_zero", "nan_block=inf_divisor", "nan_block=max_code", "elem_nan=half",
])
@pytest.mark.parametrize("rule", ["mx-floor", "mx-ceil", "mx-even", "mx-rceil"])
def test_mx_recipe_knobs_fast_equal_reference(knobs, rule):
    x = _special_tensor(9)
    for fmt in ("f8e4m3fn", "f4e2m1fn"):
        assert _compare(x, fmt, partition="block:1x32", scale=rule, recipe=knobs).path == "fast"


@pytest.mark.parametrize("rule,knobs", [
    ("amax", "inf_block=zero_scale"), ("pow2", "inf_block=zero_scale"), ("amax", "inf_block=one_scale"),
    ("amax-recip", "inf_block=one_scale"), ("pow2-recip", "inf_block=one_scale"), ("amax", "amax_floor=1e-4"),
    ("pow2", "amax_floor=1e-4"), ("mx-rceil-f32", "mx_descale=divide"),
    ("mx-rceil-f32", "amax_floor=1e-4 mx_descale=divide inf_block=max_code nan_block=max_code"),
    ("amax", "amax_floor=1e-12"), ("pow2", "amax_floor=1e-12"), ("pow2-recip", "amax_floor=1e-12"),
    ("amax", "nan_scale=all_ones_tensor"), ("amax-recip", "nan_scale=all_ones_tensor"),
    ("amax", "amax_floor=1e-12 inf_block=zero_scale nan_scale=all_ones_tensor"),
])
@pytest.mark.parametrize("partition", ["tensor", "rows", "block:1x32"])
def test_other_recipe_knobs_fast_equal_reference(rule, knobs, partition):
    x = _special_tensor(13)
    tiny = np.float32([[0.0, 1e-13, -3e-13], [2e-45, 0.0, -0.0]])  # every amax below the 1e-12 / 1e-4 floors
    for fmt in ("f8e4m3fn", "f6e2m3fn", "int8"):
        for t in (x, tiny, x[:4, :64], x[8:9, :]):  # a NaN tensor, a tiny one, NaN / Inf rows, a NaN only
            assert _compare(t, fmt, partition=partition, scale=rule, recipe=knobs).path == "fast"
            if fmt == "int8":  # the exact one-rounding application (§19.2 fused)
                assert _compare(t, fmt, partition=partition, scale=rule, recipe=knobs, apply="fused").path == "fast"


@pytest.mark.parametrize("partition,rule", [("block:1x32", "mx-floor"), ("block:1x128", "mx-rceil-f32"),
                                            ("block:2x48", "amax"), ("block:1x300", "pow2"), ("rows", "mx-even")])
@pytest.mark.parametrize("src", ["f32", "bf16", "f16"])
def test_wide_rows_fast_equal_reference(partition, rule, src):
    """Rows of several 2048-element pieces, a last partial block, NaN / Inf / zero blocks among
    whole plain ones: the per-piece block kernels of the one-pass path against the reference."""
    x = _special_tensor(17, rows=12, cols=5000)
    x[9, 4100] = np.nan
    x[10, 2047:2050] = np.inf
    xs = x if src == "f32" else numref.cast(x, src, overflow="saturate")
    for fmt in ("f8e4m3fn", "f4e2m1fn"):
        assert _compare(xs, fmt, partition=partition, scale=rule).path == "fast"
        assert _compare(xs, fmt, partition=partition, scale=rule, recipe="zero_code=one elem_nan=half"
                        if rule.startswith("mx") else None).path == "fast"


@pytest.mark.parametrize("shape", [(ROWS * COLS,), (3, ROWS * COLS // 3)])
@pytest.mark.parametrize("src,kw", [
    ("f32", dict(partition="tensor")),
    ("bf16", dict(partition="block:1x32", scale="mx-floor")),
    ("f32", dict(partition="block:1x100", scale="amax", round="sr", sr_bits=6, random=5)),
    ("f16", dict(partition="block:1x5000", scale="pow2")),
    ("f32", dict(profile="torchao_float8")),
])
def test_few_rows_split_by_columns(shape, src, kw):
    """A 1-D tensor (one row) or three rows of 2^19 elements: the work is split by column ranges
    (per-range partial amaxes, codes and dequantized values by columns; 1-row blocks of at most
    256 columns in one pass, by pieces of whole blocks); the same bits for 1, 2 and 3 threads and
    the reference's."""
    x = _tensor(4).reshape(shape)
    xs = x if src == "f32" else numref.cast(x, src, overflow="saturate")
    one = numref.quantize(xs, "f8e4m3fn", threads=1, **kw)
    assert one.path == "fast"
    keys = ("raw_codes", "scales", "dequantized", "fake_quant")
    for t in (2, 3):
        got = numref.quantize(xs, "f8e4m3fn", threads=t, **kw)
        for k in keys:
            _same(getattr(got, k), getattr(one, k), f"{k}, threads={t}")
    ref = numref.quantize(xs, "f8e4m3fn", path="reference", **kw)
    for k in keys:
        _same(getattr(ref, k), getattr(one, k), f"{k}: fast against the reference")


@pytest.mark.parametrize("profile", [p["name"] for p in numref.profiles() if p.get("recipe")])
def test_cpu_fast_conform_every_recipe_profile(numref_cli, profile):
    """The cpu-fast plugin against the reference on every recipe profile's tensor suites (one run
    per profile: the runner checks profiles of equal policies once), comparing every quantize /
    dequantize / fake-quant case, none skipped."""
    r = subprocess.run([numref_cli, "conform", "--backend", "cpu-fast", "--level", "1", "--no-progress", "--profile",
                        profile, "--ops", "quantize,dequantize,fake-quant"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
            for m in re.finditer(r"^(quantize|dequantize|fake-quant)\s+\S.*?\s(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+$",
                                 r.stdout, re.M)}
    assert set(rows) == {"quantize", "dequantize", "fake-quant"}, r.stdout[-2000:]
    if profile in CPU_FAST_DECLINES:
        # declined by its support query, never computed wrong: nothing fails, quantize and fake-quant
        # are skipped (dequantize carries no recipe in the C ABI and is compared)
        assert all(failed == 0 for _, _, failed in rows.values()), rows
        assert rows["quantize"][1] == 0 and rows["fake-quant"][1] == 0, rows
        assert "declined by its support query" in r.stdout, r.stdout[-2000:]
        return
    for op, (cases, passed, failed) in rows.items():
        assert cases > 0 and passed == cases and failed == 0, (op, cases, passed, failed)


# The recipe profiles whose knobs cpu-fast does not implement yet (§14.7 divisor=recip, §19.11
# elem_exp=log2f, §18.5 nvfp4_scale, §19.9 elem_nan=bits): it declines them, the reference computes them.
CPU_FAST_DECLINES = {"deepgemm_f32", "microxcaling_floor", "torchao_nvfp4", "torchao_nvfp4_block", "te_nvfp4",
                     "te_nvfp4_2d"}


@pytest.mark.parametrize("recipe,partition", [("tensor", "block:128x128"), ("tensor", "rows"), ("tensor", "block:64x64"),
                                              ("subtensor3", "block:128x128"), ("subtensor2", "block:64x32")])
@pytest.mark.parametrize("src", ["f32", "bf16"])
def test_mor_same_result_for_every_thread_count(recipe, partition, src):
    """numref.mor splits the error sums by ranges of block rows (issue 32): every field of the
    result is the same for 1, 2 and 3 threads, on a tensor with NaN / Inf / zero blocks."""
    x = _tensor(8)[:768, :512].copy()
    x[700, 100], x[300, 5], x[400:464, 128:192] = np.inf, -np.inf, 0
    xs = x if src == "f32" else numref.cast(x, "bf16")

    def fields(r):
        return {k: (v.tobytes() if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.dtype != object)
                    else v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(r).items()}

    one = fields(numref.mor(xs, recipe, partition=partition, threads=1))
    for t in (2, 3):
        assert fields(numref.mor(xs, recipe, partition=partition, threads=t)) == one, t
