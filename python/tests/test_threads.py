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


FAST_RECIPES = ["torchao_mx_floor", "torchao_mx_ceil", "torchao_mx_even", "te_mxfp8", "deepgemm",
                "te_float8_current", "te_float8_block", "torchao_float8"]
ELEMENTS = ["f8e4m3fn", "f8e5m2", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn"]


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


def test_profiles_cpu_fast_declines_stay_on_the_reference():
    x = _special_tensor(1)
    for profile in ("torchao_mx_rceil", "microxcaling", "torchao_float8_pow2", "torchao_float8_inference"):
        assert numref.quantize(x, "f8e4m3fn", profile=profile).path == "reference", profile


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
