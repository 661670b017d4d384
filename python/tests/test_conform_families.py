"""numref.conform.check for every op family (issue 31 item 1; spec §34): the runner's suites,
golden vectors, recipe profiles and mismatch classes reach a Python kernel through the same C ABI
table a plugin fills (python/src/conform_table.cpp).

The kernels here are of two kinds. Kernels built on numref's own Python API (numref.quantize,
numref.mor, numref.gaussws, numref.matmul) must pass every suite they accept: the API and the
runner's reference are one implementation reached two ways, and a wrong translation of the runner's
op (strides, partitions, recipes, random values, error sums) fails. Kernels written independently
here in NumPy from the spec's clauses (§13 amax, §16.2 MX FLOOR, §19.2, §19.3) must pass the suites
they accept too — their expected values come from the spec, not from numref. Each broken variant
(one bit of one result changed) must be caught, with the runner's class and FAIL text.
"""
import ml_dtypes
import numpy as np
import pytest

import numref
import numref.conform as nc


def _raw(a):
    """Unsigned codes of a typed array (or the codes themselves)."""
    a = np.asarray(a)
    return a if a.dtype.kind == "u" else a.view(np.dtype(f"u{a.dtype.itemsize}"))


def _q_max(op):
    q = op.params.get("q_max")
    return None if q is None else float(np.uint32(int(q, 16)).view(np.float32))


def _api_quantize(x, r, op, fake=None):
    p = op.params
    return numref.quantize(
        _raw(x), op.elem, src=op.source, partition=p["partition"], scale=p["rule"], group=p.get("group", "tensor"), amax_nan=p["amax_nan"],
        amax_inf=p["amax_inf"], apply=p.get("apply"), dequant=p.get("dequant", "divide"), profile=p.get("profile"),
        policy=op.policy if "round" in p else None, recipe=op.recipe or None, q_max=_q_max(op),
        random=None if r is None else np.ascontiguousarray(r).reshape(-1), fake_quant=fake, path="reference")


def _block_outputs(q, op):
    out = [np.asarray(q.scales).reshape(-1)]
    if "group_mantissa" in op.outputs:
        out.append(np.asarray(q.group_mantissa).reshape(-1))
    if "tensor_amax" in op.outputs:
        out.append(np.float32(q.tensor_amax))
    return out


def api_quantize(x, r=None, *, op):
    q = _api_quantize(x, r, op)
    out = [q.raw_codes] + _block_outputs(q, op)
    if "counts" in op.outputs:
        out.append([q.saturated, q.flushed, q.nan, q.inf])
    return tuple(out)


def api_fake_quant(x, r=None, *, op):
    q = _api_quantize(x, r, op, fake=op.out_format)
    return (q.fake_quant, [q.saturated, q.flushed, q.nan, q.inf]) if "counts" in op.outputs else q.fake_quant


def _spec_amax(x, op):
    """§13.1, §13.2 per block of the op's partition, from the source values (independent of numref)."""
    v = np.asarray(x).astype(np.float32)
    R, C = v.shape
    out = []
    for i in range(0, R, op.block_rows):
        for j in range(0, C, op.block_cols):
            b = v[i:i + op.block_rows, j:j + op.block_cols]
            nan, inf = np.isnan(b), np.isinf(b)
            if nan.any() and op.amax_nan == "propagate":
                out.append(0x7FC00000)
            elif inf.any() and op.amax_inf == "propagate":
                out.append(0x7F800000)
            else:
                keep = b[~nan & ~inf] if op.amax_inf == "ignore" else b[~nan]
                out.append(int(np.abs(keep).max(initial=np.float32(0)).view(np.uint32)))
    return np.array(out, dtype=np.uint32)


def api_scale(x, *, op):
    # amax by the spec (§13) in NumPy; the scales of numref.quantize
    return (_spec_amax(x, op), *_block_outputs(_api_quantize(x, None, op), op))


def api_mor(x, *, op):
    part = op.params["scaling"]
    t = op.params["threshold"]
    m = numref.mor(_raw(x), "tensor", partition=part, threshold=t, src=op.source)
    return {"decision": m.decision if m.decision == "f8e4m3fn" else "kept", "reason": m.verdict["reason"],
            "mean": m.mean, "group_mantissa": np.asarray(m.group_mantissa).reshape(-1)[:1], "error_sum": m.error,
            "scales": m.scales}


def api_mor_sub(x, *, op):
    recipe = {"three-way": "subtensor3", "two-way": "subtensor2"}[op.kind]
    m = numref.mor(_raw(x), recipe, partition=op.params["blocks"], src=op.source)
    n = op.n_blocks
    return (list(m.types.reshape(-1)), [v["reason"] for v in m.eq3], [v["reason"] for v in m.eq4], m.e4m3_sum, m.e5m2_sum,
            *_mor_sub_scales(x, op, n), m.fake)


def _mor_sub_scales(x, op, n):
    """The E4M3 / E5M2 GAM scales and group mantissas (§27.4) from numref.quantize over the blocks."""
    out = []
    gms = []
    for fmt in ("f8e4m3fn", "f8e5m2"):
        q = numref.quantize(_raw(x), fmt, src=op.source, partition=op.params["blocks"], scale="gam", amax_nan="ignore", amax_inf="ignore",
                            profile="ocp", overflow="saturate", path="reference")
        out.append(_raw(q.scales).reshape(-1).astype(np.uint32))
        gms.append(int(np.asarray(q.group_mantissa).reshape(-1)[0]))
    return out[0], out[1], gms


def api_gaussws(w, bt, noise, g, *, op):
    kw = {"bits": np.asarray(noise).reshape(-1)} if op.noise == "bits" else dict(zip(("seed", "layer", "step"), noise))
    r = numref.gaussws(_raw(w), bt=np.asarray(bt), src=op.w_format, sum=op.sum, grad=g, **kw)
    return r.r_packed, r.scale, r.w_hat, r.grad_bt


def api_mma(a, b, c, sa=None, sb=None, *, op):
    kw = dict(block=op.block, scale_type=op.params.get("scale", "f8e8m0fnu"),
              scales=(_raw(sa), _raw(sb))) if op.block else {}
    return numref.matmul(_raw(a), _raw(b), _raw(c), profile=op.profile, a_type=op.params["a"],
                         b_type=op.params["b"], acc=op.params["c"], raw=True, **kw)


CASES = [
    ("scale", api_scale, "ocp"),
    ("quantize", api_quantize, "ocp"),
    ("quantize", api_quantize, "torchao_mx_floor"),
    ("quantize", api_quantize, "te_mxfp8"),
    ("fake-quant", api_fake_quant, "ocp"),
    ("mor", api_mor, "ocp"),
    ("mor-sub", api_mor_sub, "ocp"),
    ("gaussws", api_gaussws, "ocp"),
    ("mma:ideal", api_mma, "ocp"),
    ("mma:sm90_wgmma_f8", api_mma, "ocp"),
]


@pytest.mark.parametrize("op,kernel,profile", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_kernels_on_numrefs_api_pass_every_suite(op, kernel, profile):
    r = nc.check(kernel, op=op, profile=profile, level="l0")
    assert r.ok, r.report()
    assert r.cases > 0 and r.mismatches == 0
    assert r.vectors is not None and r.vector_files > 0


# ---- kernels written from the spec in NumPy (expected values: the spec's clauses) ----------------

def spec_mx_floor_e4m3(x, *, op):
    """f32 -> f8e4m3fn with the MX FLOOR scale over the op's blocks, from the spec alone:
    §13.1–§13.3 amax and poisoned blocks (scale FF, codes 7F), §16.1/§16.2 e = floor(log2 amax) - 8
    clamped to [-127, 127] (zero and tiny amaxes give 00, §16.7), §19.2 y = RN32(x * 2^-e) then
    round to nearest even, saturating at 448 (§19.1: the default element policy saturates)."""
    v = np.asarray(x, dtype=np.float32)
    codes = np.zeros(v.shape, dtype=np.uint8)
    scales = []
    for i in range(0, v.shape[0], op.block_rows):
        for j in range(0, v.shape[1], op.block_cols):
            b = v[i:i + op.block_rows, j:j + op.block_cols]
            if not np.isfinite(b).all():
                scales.append(0xFF)
                codes[i:i + op.block_rows, j:j + op.block_cols] = 0x7F
                continue
            amax = float(np.abs(b).max())
            e = -127 if amax == 0 else max(-127, min(127, np.frexp(amax)[1] - 1 - 8))
            scales.append(e + 127)
            y = np.clip(b * np.float32(2.0 ** -e), -448, 448)  # float32 product: RN32
            codes[i:i + op.block_rows, j:j + op.block_cols] = y.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return codes, np.array(scales, dtype=np.uint32)


def _default_policy(op):
    return (op.apply == "rn32" and op.amax_nan == "propagate" and op.amax_inf == "propagate" and op.round == "rne"
            and op.overflow == "saturate" and op.daz == "0" and op.ftz == "0")


def spec_mx_dequantize(codes, scales, *, op):
    """§19.3 for the MX rules: value = decode(code) * 2^(c - 127), one binary32 rounding; a NaN scale
    (FF) gives the canonical NaN for the whole block; a NaN element code widens to binary32 with its
    sign and payload, quiet bit set (§19.2, §6.3: the ocp wide policy is nan=payload): f8e4m3fn 7f
    (mantissa 111) -> 7ff00000."""
    raw = _raw(codes).astype(np.uint32)
    vals = np.asarray(codes).astype(np.float32)
    out = np.empty(vals.shape, dtype=np.uint32)
    nan = (raw & 0x7F) == 0x7F
    k = 0
    for i in range(0, vals.shape[0], op.block_rows):
        for j in range(0, vals.shape[1], op.block_cols):
            c = int(scales[k])
            k += 1
            blk = vals[i:i + op.block_rows, j:j + op.block_cols]
            if c == 0xFF:
                out[i:i + op.block_rows, j:j + op.block_cols] = 0x7FC00000
                continue
            f = np.float32(np.ldexp(1.0, c - 127))  # 2^-127 is the binary32 subnormal 0x00400000: exact
            with np.errstate(over="ignore"):  # RN32 overflows to Inf (§19.3)
                y = (blk * f).view(np.uint32)
            n = nan[i:i + op.block_rows, j:j + op.block_cols]
            c8 = raw[i:i + op.block_rows, j:j + op.block_cols]
            y[n] = ((c8[n] & 0x80) << 24) | 0x7FC00000 | ((c8[n] & 0x7) << 20)
            out[i:i + op.block_rows, j:j + op.block_cols] = y
    return out


def test_spec_mx_floor_kernel_passes_what_it_implements():
    # §34.13 the kernel answers only the suites it implements (supported=); the rest are skipped
    r = nc.check(spec_mx_floor_e4m3, op="quantize:f32:f8e4m3fn", profile="ocp", level="l1",
                 supported=lambda op: op.rule == "mx-floor" and _default_policy(op))
    assert r.ok, r.report()
    assert r.cases >= 20 and r.skipped > 0 and r.vector_cases > 0


def test_spec_mx_dequantize_kernel_passes():
    r = nc.check(spec_mx_dequantize, op="dequantize", profile="ocp", level="l1",
                 supported=lambda op: op.rule.startswith("mx-") and op.element == "f8e4m3fn")
    assert r.ok, r.report()
    assert r.cases > 0


def test_a_tie_rounded_away_is_caught_with_the_runners_text():
    def ties_away(x, *, op):
        """spec_mx_floor_e4m3 with the element rounding's ties away from zero: where y = RN32(x 2^-e)
        lies exactly halfway between two f8e4m3fn values, the one of larger magnitude."""
        codes, scales = spec_mx_floor_e4m3(x, op=op)
        v = np.asarray(x, dtype=np.float32)
        e4 = ml_dtypes.float8_e4m3fn
        k = 0
        for i in range(0, v.shape[0], op.block_rows):
            for j in range(0, v.shape[1], op.block_cols):
                c = int(scales[k])
                k += 1
                if c == 0xFF:
                    continue
                y = np.clip(v[i:i + op.block_rows, j:j + op.block_cols] * np.float32(2.0 ** (127 - c)), -448, 448)
                r = y.astype(e4).view(np.uint8)
                mag = (r & 0x7F).astype(np.int64)
                rv = (mag.astype(np.uint8)).view(e4).astype(np.float64)
                ay = np.abs(y.astype(np.float64))
                nb = np.where(ay > rv, np.minimum(mag + 1, 0x7E), np.maximum(mag - 1, 0))
                nv = nb.astype(np.uint8).view(e4).astype(np.float64)
                tie = (ay != rv) & (2 * np.abs(ay - rv) == np.abs(nv - rv))
                away = np.where(tie & (nv > rv), nb, mag).astype(np.uint8)
                codes[i:i + op.block_rows, j:j + op.block_cols] = away | (r & 0x80)
        return codes, scales

    r = nc.check(ties_away, op="quantize:f32:f8e4m3fn", profile="ocp", level="l1",
                 supported=lambda op: op.rule == "mx-floor" and _default_policy(op))
    assert not r.ok and r.mismatches > 0
    assert set(r.classes) == {"tie"}, r.report()
    m = r.first[0]
    assert isinstance(m, nc.CaseMismatch) and m.cls == "tie"
    assert m.text.startswith("FAIL quantize f32->f8e4m3fn ") and "| tie |" in m.text
    assert m.where.startswith(("quantize/", "divergence/", "generated:"))
    with pytest.raises(nc.ConformanceError) as e:
        nc.check(ties_away, op="quantize:f32:f8e4m3fn", profile="ocp", level="l1", raise_on_mismatch=True,
                 supported=lambda op: op.rule == "mx-floor" and _default_policy(op))
    assert "FAIL quantize" in str(e.value)


def _flip_first(kernel):
    """The kernel with bit 0 of the first value of its first result changed."""
    def broken(*args, op):
        out = kernel(*args, op=op)
        if isinstance(out, dict):
            out = [out[n] for n in op.outputs]
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        first = out[0]
        if isinstance(first, (str, list)):  # names (MoR decisions and types)
            first = [nc.BLOCK_TYPES.index(t if t != "kept" else "bf16") for t in ([first] if isinstance(first, str) else first)]
        a = np.array(first).copy()
        a = a if a.dtype.kind in "ui" else a.view(np.dtype(f"u{a.dtype.itemsize}"))
        a.reshape(-1)[0] ^= 1
        out[0] = a
        return tuple(out) if len(op.outputs) > 1 else out[0]
    return broken


@pytest.mark.parametrize("op,kernel,profile", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_one_wrong_bit_fails_every_case(op, kernel, profile):
    r = nc.check(_flip_first(kernel), op=op, profile=profile, level="l0", max_mismatches=3)
    assert r.cases > 0 and r.mismatches == r.cases, r.report()
    assert len(r.first) == 3 and all(m.text.startswith("FAIL " + op.split(":")[0]) for m in r.first)


def test_counts_and_flags_are_compared_when_reported():
    r = nc.check(api_quantize, op="quantize:f32:f8e4m3fn", profile="ocp", level="l0", counts=True)
    assert r.ok and "counts of tensor ops (§19.5): compared" in r.text, r.report()

    def bad_counts(x, r=None, *, op):
        out = list(api_quantize(x, r, op=op))
        out[-1] = [c + 1 for c in out[-1]]
        return tuple(out)

    r = nc.check(bad_counts, op="quantize:f32:f8e4m3fn", profile="ocp", level="l0", counts=True)
    assert r.mismatches > 0 and all(c.startswith("counts") for c in r.classes), r.report()
    r = nc.check(lambda a, b, c, op: numref.matmul(_raw(a), _raw(b), _raw(c), profile=op.profile, a_type=op.params["a"],
                                                   b_type=op.params["b"], acc=op.params["c"], raw=True, flags=True),
                 op="mma:sm89_mma_f8", level="l0", flags=True)
    assert r.ok and r.cases > 0, r.report()


def test_results_as_dicts_and_names():
    def as_dict(x, r=None, *, op):
        return dict(zip(op.outputs, api_quantize(x, r, op=op)))

    assert nc.check(as_dict, op="quantize:bf16:f8e5m2", profile="ocp", level="l0").ok


def test_kernel_errors_are_raised_not_reported():
    def boom(x, *, op):
        raise ZeroDivisionError("inside the kernel")

    with pytest.raises(ZeroDivisionError, match="inside the kernel"):
        nc.check(boom, op="quantize", profile="ocp", level="l0")
    with pytest.raises(ValueError, match=r"'codes': the kernel returned 1 values, the case has"):
        nc.check(lambda x, op: (np.zeros(1, np.uint8), np.zeros(op.n_blocks, np.uint32)), op="quantize",
                 profile="ocp", level="l0")
    with pytest.raises(ValueError, match=r"returned 1 results, expected 2: codes, scales"):
        nc.check(lambda x, op: np.zeros(x.shape, np.uint8), op="quantize:f32:f8e4m3fn", profile="ocp", level="l0",
                 supported=lambda op: op.rule == "amax")
    with pytest.raises(TypeError, match=r"dtype float32 \(4 bytes\), expected codes of at most 1 bytes"):
        nc.check(lambda x, op: (np.zeros(x.shape, np.float32), np.zeros(op.n_blocks, np.uint32)),
                 op="quantize:f32:f8e4m3fn", profile="ocp", level="l0", supported=lambda op: op.rule == "amax")
    with pytest.raises(RuntimeError, match="supported went wrong"):
        nc.check(api_quantize, op="quantize", profile="ocp", level="l0",
                 supported=lambda op: (_ for _ in ()).throw(RuntimeError("supported went wrong")))


def test_nothing_compared_is_not_a_pass():
    with pytest.raises(ValueError, match="nothing compared"):
        nc.check(api_quantize, op="quantize", profile="ocp", level="l0", supported=lambda op: False)


def test_bad_arguments_name_the_problem():
    for kw, err, msg in [
        (dict(op=""), ValueError, "op: expected an op family"),
        (dict(op=["quantize", "quantize"]), ValueError, "given twice"),
        (dict(op="nosuch"), ValueError, "unknown operation 'nosuch'"),
        (dict(op="quantize", from_="f32"), ValueError, "from_, to, policy"),
        (dict(op="quantize", profile="nosuch"), ValueError, "unknown profile"),
        (dict(op="quantize", profile=["ocp", "ocp"]), ValueError, "given twice"),
        (dict(op="quantize", profile=None), ValueError, "profile"),
        (dict(op="quantize", array="cupy"), ValueError, "array: expected"),
        (dict(op="quantize", level="l9"), ValueError, "level"),
        (dict(op="cast", from_="f32", to="bf16", counts=True), ValueError, "families other than cast"),
    ]:
        with pytest.raises(err, match=msg):
            nc.check(api_quantize, **kw)


def test_the_op_describes_the_case():
    seen = {}

    def look(x, r=None, *, op):
        seen.setdefault(op.params["partition"], (op, x))
        return api_quantize(x, r, op=op)

    assert nc.check(look, op="quantize:f32:f8e4m3fn", profile="ocp", level="l1").ok
    op, x = next(v for k, v in seen.items() if k.startswith("block:"))
    R, C = (int(v) for v in op.shape.split("x"))
    assert x.shape == (op.rows, op.cols) == (R, C) and x.dtype == np.float32
    assert not x.flags.writeable  # inputs view numref's memory: read-only
    assert op.family == "quantize" and op.elem == op.element == "f8e4m3fn" and op.outputs[:2] == ("codes", "scales")
    with pytest.raises(AttributeError, match="no field or parameter 'nosuch'"):
        op.nosuch
    transposed = [v for k, v in seen.items() if v[0].transpose == "1"]
    for op, x in transposed:  # §12.1 a transposed view keeps its strides
        assert x.strides == (op.row_stride * 4, op.col_stride * 4)


# ---- numref.testing ----------------------------------------------------------------------------

def test_testing_assertions_carry_the_runners_text():
    import numref.testing as nt

    res = nt.assert_conforms(api_quantize, op="quantize:f32:f8e4m3fn", profile="ocp", level="l0")
    assert res.ok
    with pytest.raises(AssertionError, match=r"FAIL quantize .*\| got .*\| expected "):
        nt.assert_conforms(_flip_first(api_quantize), op="quantize:f32:f8e4m3fn", profile="ocp", level="l0")

    # §11.2 cuda_satfinite f32->f8e4m3fn: 464 (the tie at max) rounds to even, 448 (7e); 480
    # overflows and saturates to 448. ml_dtypes (no saturation) gives NaN (7f) for 480.
    x = np.array([464.0, 1.0, 480.0, -0.0], dtype=np.float32)
    nt.assert_cast_equal(np.array([0x7E, 0x38, 0x7E, 0x80], dtype=np.uint8), x, "f8e4m3fn", profile="cuda_satfinite")
    with pytest.raises(AssertionError) as e:
        nt.assert_cast_equal(x.astype(ml_dtypes.float8_e4m3fn), x, "f8e4m3fn", profile="cuda_satfinite")
    assert str(e.value).splitlines() == [
        "cast f32->f8e4m3fn cuda_satfinite: 1 of 4 elements differ",
        "  [2] overflow/saturation: x=43f00000 (480): got 7f (NaN), expected 7e (448)"]

    # MX FLOOR by hand: the block [1, 3] has amax 3, e = floor(log2 3) - 8 = -7 (E8M0 code 0x78);
    # 1 * 2^7 = 128 = f8e4m3fn 0x70 (exponent field 14, fraction 0), 3 * 2^7 = 384 = 1.5 * 2^8 = 0x7c.
    x = np.array([[1.0, 3.0]], dtype=np.float32)
    nt.assert_quantize_equal(np.array([[0x70, 0x7C]], np.uint8), np.array([0x78], np.uint8), x, "f8e4m3fn",
                             scale="mx-floor")
    with pytest.raises(AssertionError, match=r"element \(0, 1\): got 7d, expected 7c"):
        nt.assert_quantize_equal(np.array([[0x70, 0x7D]], np.uint8), np.array([0x78], np.uint8), x, "f8e4m3fn",
                                 scale="mx-floor")
    with pytest.raises(AssertionError, match=r"scale of block \(0, 0\): got 79, expected 78"):
        nt.assert_quantize_equal(np.array([[0x70, 0x7C]], np.uint8), np.array([0x79], np.uint8), x, "f8e4m3fn",
                                 scale="mx-floor")


def test_docs_python_md_quantizer_example_runs():
    """docs/python.md's NumPy MX quantizer is run as the page shows it (it asserts r.ok itself)."""
    import os
    import re

    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
    with open(doc, encoding="utf-8") as f:
        blocks = re.findall(r"^```python\n(.*?)```", f.read(), re.M | re.S)
    code = next(b for b in blocks if "def mx_floor(x, op)" in b)
    env = {}
    exec(compile(code, "docs/python.md", "exec"), env)
    assert env["r"].ok and env["r"].cases > 0
