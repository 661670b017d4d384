"""numref.conform.check: the runner's cast cases through a Python kernel (spec §33)."""
import ml_dtypes
import numpy as np
import pytest

import numref


def test_correct_kernels_pass():
    r = numref.conform.check(lambda x: numref.cast(x, "f8e4m3fn"), from_="f32", to="f8e4m3fn")
    assert r.ok and r.cases > 65536 and r.mismatches == 0
    # ml_dtypes' astype (an independent implementation) under its profile, every bf16 code
    with np.errstate(invalid="ignore", over="ignore"):
        r = numref.conform.check(lambda x: x.astype(ml_dtypes.float8_e4m3fn), from_="bf16", to="f8e4m3fn",
                                 profile="ml_dtypes")
    assert r.ok and r.cases == 65536
    r = numref.conform.check(lambda x, rr: numref.cast(x, "bf16", round="sr", sr_bits=8, random=rr, raw=True),
                             from_="f32", to="bf16", round="sr", sr_bits=8, level="l0")
    assert r.ok


def test_broken_kernel_is_caught_bit_for_bit():
    """A kernel that saturates where OCP's non-saturating policy gives NaN (0x7f): every such
    case is reported with its operand, got and expected code."""
    def broken(x):
        y = numref.cast(x, "f8e4m3fn", raw=True)
        return np.where(y == 0x7F, np.uint8(0x7E), y)

    r = numref.conform.check(broken, from_="f32", to="f8e4m3fn", max_mismatches=5)
    assert not r.ok and r.mismatches > 0 and len(r.first) == 5
    m = r.first[0]
    assert (m.got, m.expected) == (0x7E, 0x7F)
    assert f"{m.x:08x}" in m.text and "got 7e" in m.text and "expected 7f" in m.text
    assert "overflow/saturation" in r.classes
    with pytest.raises(numref.conform.ConformanceError, match="mismatches"):
        numref.conform.check(broken, from_="f32", to="f8e4m3fn", raise_on_mismatch=True)


def test_flags_are_compared_when_reported():
    def no_inexact(x):
        y, f = numref.cast(x, "f8e5m2", raw=True, flags=True)
        return y, f & ~np.uint8(0x01)
    r = numref.conform.check(no_inexact, from_="f16", to="f8e5m2", flags=True)
    assert not r.ok and r.first[0].expected_flags & 0x01 and not r.first[0].got_flags & 0x01


def test_bad_arguments():
    with pytest.raises(ValueError, match="only 'cast'"):
        numref.conform.check(lambda x: x, op="mor", from_="f32", to="bf16")
    with pytest.raises(ValueError, match="level: unknown level 'l9'"):
        numref.conform.check(lambda x: x, from_="f32", to="bf16", level="l9")
    with pytest.raises(TypeError, match="kernel returned dtype float32"):
        numref.conform.check(lambda x: x, from_="f32", to="bf16")
