"""dtype round trips, shapes, Policy, formats/explain, version, and bad inputs (the messages)."""
import pathlib
import re
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import numref

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_version_is_the_cmake_project_version():
    m = re.search(r"project\(numref VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    assert m and numref.__version__ == m.group(1)


def test_formats_profiles_knobs_come_from_the_tables():
    names = [f["name"] for f in numref.formats()]
    assert names[:4] == ["f32", "bf16", "f16", "f8e4m3fn"] and "f4e2m1fn" in names
    e4m3 = next(f for f in numref.formats() if f["name"] == "f8e4m3fn")
    assert (e4m3["bits"], e4m3["exp_bits"], e4m3["man_bits"], e4m3["bias"], e4m3["max_finite"]) == (8, 4, 3, 7, 0x7E)
    assert {"ocp", "cuda_satfinite", "cuda_nosat", "ml_dtypes"} <= {p["name"] for p in numref.profiles()}
    keys = [k["key"] for k in numref.knobs()]
    assert keys[0] == "round" and "nan_to_finite" in keys and "int_range" in keys
    # §2.5 item 1: 140 P3109 rows, the 12 binary8 ones first, then 128 extra ones (K = 2..8)
    p3109 = [f for f in numref.formats() if f["specials"].startswith("p3109")]
    assert len(p3109) == 140 and not any(f["p3109_extra"] for f in p3109[:12])
    assert all(f["p3109_extra"] for f in p3109[12:]) and p3109[12]["name"] == "p3109_k2p1se"
    assert not any(f["p3109_extra"] for f in numref.formats() if not f["specials"].startswith("p3109"))


def test_profile_lists_come_from_the_table():
    """numref.profiles() carries each row's recipe (§10.4); the profile lists of the docstrings are
    filled from it at import (cast: every profile; quantize: those with a recipe), never typed."""
    rows = numref.profiles()
    te = next(p for p in rows if p["name"] == "te_mxfp8")["recipe"]
    assert (te["rule"], te["partition"], te["amax_nan"]) == ("mx-rceil-f32", "block:1x32", "ignore")
    assert te["elements"] == ["f8e4m3fn", "f8e5m2"]  # §10.4 every recipe lists its element formats
    mx = next(p for p in rows if p["name"] == "microxcaling")["recipe"]
    assert mx["elements"] == ["f8e4m3fn", "f8e5m2", "f6e3m2fn", "f6e2m3fn", "f4e2m1fn"] and mx["amax_nan"] == "propagate"
    assert next(p for p in rows if p["name"] == "ocp")["recipe"] is None
    recipe = [p["name"] for p in rows if p["recipe"]]
    plain = [p["name"] for p in rows if not p["recipe"]]
    assert "torchao_mx_floor" in recipe and "torch" in plain
    cast_doc = " ".join(numref.cast.__doc__.split())
    quantize_doc = " ".join(numref.quantize.__doc__.split())
    assert "{profiles}" not in cast_doc and ", ".join(p["name"] for p in rows) in cast_doc
    assert "{recipe_profiles}" not in quantize_doc and ", ".join(recipe) + "." in quantize_doc


@pytest.mark.parametrize("fmt", [f["name"] for f in numref.formats()])
def test_dtype_round_trip(fmt):
    """Every finite code of a format, as its NumPy/ml_dtypes dtype, -> f32 -> back is the same code."""
    bits = next(f["bits"] for f in numref.formats() if f["name"] == fmt)
    if bits == 32:
        codes = np.array([0, 1, 0x3F800000, 0x7F7FFFFF, 0x80800000], dtype=np.uint32)
    else:
        codes = np.arange(1 << bits, dtype=np.uint8 if bits <= 8 else np.uint16)
    if next(f["specials"] for f in numref.formats() if f["name"] == fmt).startswith("p3109"):
        # No NumPy / ml_dtypes dtype holds a P3109 row (spec §2.5): both entry points say so, and
        # its raw codes round-trip through f32 (every finite code; the NaN 0x80 and the
        # extended rows' +-Inf stay out, as below).
        with pytest.raises(ValueError, match="raw=True"):
            numref.dtype_of(fmt)
        with pytest.raises(ValueError, match=fmt):
            numref.cast(np.float32([1.0]), fmt)
        row = next(f for f in numref.formats() if f["name"] == fmt)
        wide = numref.cast(codes, "f32", src=fmt)
        back = numref.cast(wide, fmt, raw=True)
        finite = np.isfinite(wide)
        infs = (2 if row["signed"] else 1) if row["specials"] == "p3109e" else 0  # §2.5 item 3
        assert finite.sum() == (1 << bits) - 1 - infs and np.array_equal(back[finite], codes[finite])
        # signed rows: the sign bit alone (80 for K = 8) is the NaN; code 1 is positive (+Inf in
        # p3109_k2p1se / _k2p2se, §2.5 item 1)
        assert wide[1] > 0 and np.isnan(wide[1 << (bits - 1)]) == row["signed"]
        return
    x = codes.view(numref.dtype_of(fmt))
    assert numref.format_of(x.dtype) == fmt
    wide = numref.cast(x, "f32")
    assert wide.dtype == np.float32
    back = numref.cast(wide, fmt, raw=True)
    finite = np.isfinite(wide)
    assert np.array_equal(back[finite], codes[finite])
    if fmt not in ("f32", "int8"):  # ml_dtypes decodes the same values
        assert np.array_equal(wide[finite], x.astype(np.float32)[finite])


def test_result_types_and_shapes():
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    y = numref.cast(x, "f8e5m2")
    assert y.dtype == np.dtype(ml_dtypes.float8_e5m2) and y.shape == (4, 6)
    r, fl = numref.cast(x, "e5m2", raw=True, flags=True)  # an alias (§2.3)
    assert r.dtype == np.uint8 and fl.dtype == np.uint8 and r.shape == fl.shape == (4, 6)
    assert np.array_equal(numref.cast(x[:, ::2], "f8e5m2").view(np.uint8), r[:, ::2])  # non-contiguous input
    assert numref.cast(x, "bf16", raw=True).dtype == np.uint16
    assert numref.cast(x, "int8").dtype == np.int8


def test_policy():
    p = numref.Policy("f8e4m3fn", "cuda_satfinite")
    assert p.overflow == "saturate" and p.round == "rne"
    q = numref.Policy("f8e4m3fn", policy=str(p))
    assert q == p
    s = numref.Policy("f8e4m3fn", round="sr", sr_bits=8, daz=True)
    assert s.sr_bits == 8 and s.daz is True and "round=sr" in str(s)
    x = np.float32([464.00003])
    assert numref.cast(x, "f8e4m3fn", policy=p, raw=True)[0] == 0x7E
    assert numref.cast(x, "f8e4m3fn", policy="overflow=saturate", raw=True)[0] == 0x7E


def test_explain():
    e = numref.explain("f8e4m3fn", 0x7E)
    assert e["class"] == "normal" and e["value"] == Fraction(448) and e["decimal"] == "448"
    assert (e["exp_field"], e["man_field"], e["unbiased_exponent"]) == (15, 6, 8)
    assert numref.explain("f8e4m3fn", 0x7F)["class"] == "nan"
    assert numref.explain("f4e2m1fn", 0x1)["value"] == Fraction(1, 2)  # the subnormal 0.5 (§3.1)


@pytest.mark.parametrize("call, exc, message", [
    (lambda: numref.cast(np.float32([1]), "f9"), ValueError, "to: unknown format 'f9' (known: f32, bf16"),
    (lambda: numref.cast(np.float32([1]), "bf16", profile="nope"), ValueError, "profile: unknown profile 'nope'"),
    (lambda: numref.cast(np.float32([1]), "bf16", round="up"), ValueError,
     "round: unknown value 'up' (expected rne|rtz|rup|rdn|rna|sr)"),
    (lambda: numref.cast(np.float32([1]), "bf16", daz="yes"), ValueError, "daz: expected 0 or 1, got 'yes'"),
    (lambda: numref.cast(np.float32([1]), "bf16", round="sr"), ValueError, "needs sr_bits=K with K in 1..32"),
    (lambda: numref.cast(np.float32([1]), "bf16", round="sr", sr_bits=33), ValueError, "sr_bits: expected an integer in 1..32"),
    (lambda: numref.cast(np.float32([1]), "bf16", sr_bits=4), ValueError, "applies only to stochastic rounding"),
    (lambda: numref.cast(np.float32([1]), "bf16", colour="red"), ValueError, "unknown policy knob 'colour'"),
    (lambda: numref.cast(np.float32([1]), "bf16", policy="round=zz"), ValueError,
     "policy: bad value 'zz' for policy key 'round'"),
    (lambda: numref.cast(np.float32([1]), "bf16", round="sr", sr_bits=4), ValueError, "needs random="),
    (lambda: numref.cast(np.float32([1, 2]), "bf16", round="sr", sr_bits=4, random=np.uint32([1])), ValueError,
     "random: expected 2 r values"),
    (lambda: numref.cast(np.float32([1]), "bf16", round="sr", sr_bits=4, random=np.uint32([16])), ValueError,
     "does not fit in k = 4 bits (need r < 2^4, §4.3)"),
    (lambda: numref.cast(np.float32([1]), "bf16", random=3), ValueError, "random applies only to stochastic rounding"),
    (lambda: numref.cast(np.float64([1]), "bf16"), TypeError, "dtype float64 is not a numref format"),
    (lambda: numref.cast([1.0], "bf16"), TypeError, "x: expected a NumPy array"),
    (lambda: numref.cast(np.uint8([0x40]), "f32", src="f6e3m2fn"), ValueError,
     "source code 0x40 at index 0 is wider than the 6 bits of f6e3m2fn (§2.4)"),
    (lambda: numref.cast(np.uint16([1]), "f32", src="f8e4m3fn"), TypeError, "raw codes of f8e4m3fn are uint8"),
    (lambda: numref.cast(np.float32([1]), "f32", src="f32"), TypeError, "raw codes must be an unsigned integer array"),
    (lambda: numref.cast(np.float32([1]), 5), TypeError, "to: expected a format name"),
    (lambda: numref.cast(np.float32([1]), "bf16", path="gpu"), ValueError, "path: expected"),
    (lambda: numref.explain("f8e4m3fn", 0x100), ValueError, "is wider than the 8 bits of f8e4m3fn"),
    (lambda: numref.explain("f8e4m3fn", -1), ValueError, "negative"),
])
def test_bad_inputs(call, exc, message):
    with pytest.raises(exc) as e:
        call()
    assert message in str(e.value)
