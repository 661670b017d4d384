"""numref.conform.check: the runner's cast cases through a Python kernel (spec §34)."""
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
    assert r.ok and r.cases == 65536 + r.vector_cases and r.vector_cases > 0  # every code, then the vectors
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
    # the other families take their suites from op and profile (test_conform_families.py)
    with pytest.raises(ValueError, match="from_, to, policy and policy knobs are for op='cast'"):
        numref.conform.check(lambda x: x, op="mor", from_="f32", to="bf16")
    with pytest.raises(ValueError, match="level: unknown level 'l9'"):
        numref.conform.check(lambda x: x, from_="f32", to="bf16", level="l9")
    with pytest.raises(TypeError, match="kernel returned dtype float32"):
        numref.conform.check(lambda x: x, from_="f32", to="bf16")
    with pytest.raises(TypeError, match="level: expected"):
        numref.conform.check(lambda x: x, from_="f32", to="bf16", level=1.0)


def test_level_as_the_cli_writes_it():
    """level=0 / "0" is the runner's l0 (numref conform --level 0): the same cases as "l0"."""
    kernel = lambda x: numref.cast(x, "bf16")  # noqa: E731
    counts = {repr(lv): numref.conform.check(kernel, from_="f16", to="bf16", level=lv, vectors=False).cases
              for lv in (0, "0", "l0")}
    assert len(set(counts.values())) == 1 and counts["0"] > 0, counts


def test_golden_vectors_catch_what_the_generated_cases_miss():
    """A kernel wrong on one f32 code that is in the suite's golden vector file
    (vectors/cast/ocp/f32-f8e4m3fn.vec) but not among the level-0 generated cases: it passes
    with vectors=False and fails with the vectors, the mismatch naming the file and line."""
    pol = str(numref.Policy("f8e4m3fn"))
    suite = numref._core.CastSuite("f32", "f8e4m3fn", "ocp", pol, "l0", 1)
    vdir = numref.conform._vectors_dir(None)
    vx, _, vy, _, where, files = suite.vector_cases(vdir)
    gen = np.empty(suite.size(), dtype=np.uint32)
    suite.fill(0, gen, None)
    only = sorted(set(vx) - set(gen.tolist()))
    assert files > 0 and len(vx) > 0 and only, "the vector file has codes the generator does not draw"
    bad = only[0]

    def kernel(x):
        y = numref.cast(x, "f8e4m3fn", raw=True)
        y[x.view(np.uint32) == bad] ^= 0x01  # one code off by one ulp
        return y

    r = numref.conform.check(kernel, from_="f32", to="f8e4m3fn", level="l0", vectors=False)
    assert r.ok and r.vectors is None and r.vector_cases == 0
    r = numref.conform.check(kernel, from_="f32", to="f8e4m3fn", level="l0")
    assert not r.ok and r.mismatches == vx.count(bad)
    assert r.vector_files == files and r.vector_cases == len(vx) and r.cases == suite.size() + len(vx)
    m = r.first[0]
    assert m.x == bad and m.where == where[vx.index(bad)] and m.where.startswith("cast/") and ".vec:" in m.where
    assert m.expected == vy[vx.index(bad)] and m.got == m.expected ^ 0x01
    assert m.where in r.report() and "MANIFEST verified" in r.report()


def test_golden_vector_directory_errors(tmp_path, monkeypatch):
    import shutil

    ok = lambda x: numref.cast(x, "f8e4m3fn")
    with pytest.raises(ValueError, match="vectors: '/nonexistent' is not a directory"):
        numref.conform.check(ok, from_="f32", to="f8e4m3fn", vectors="/nonexistent")
    monkeypatch.setenv("NUMREF_VECTORS", str(tmp_path / "none"))
    with pytest.raises(ValueError, match="golden vectors not found .*none.*vectors=False"):
        numref.conform.check(ok, from_="f32", to="f8e4m3fn")
    monkeypatch.delenv("NUMREF_VECTORS")
    # an edited file under an unchanged MANIFEST is refused, naming the file (as numref conform)
    d = tmp_path / "v"
    shutil.copytree(numref.conform._vectors_dir(None), d)
    f = d / "cast" / "ocp" / "f32-f8e4m3fn.vec"
    f.write_text(f.read_text().replace("begin\n", "begin\n# edited\n", 1))
    with pytest.raises(ValueError, match="cast/ocp/f32-f8e4m3fn.vec: sha256 differs"):
        numref.conform.check(ok, from_="f32", to="f8e4m3fn", level="l0", vectors=d)


def test_docs_example_output():
    """docs/python.md shows what its first numref.conform.check example prints; the page must
    show the real output (the golden-vector directory's path written as /path/to/numref/vectors)."""
    import os
    import re

    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "python.md")
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"^prints .*?\n```\n(.*?)```", text, re.M | re.S)
    assert blocks, "docs/python.md: no 'prints' block after the numref.conform.check example"
    shown = blocks[0].splitlines()[:2]
    r = numref.conform.check(lambda x: x.astype(ml_dtypes.float8_e4m3fn),
                             from_="bf16", to="f8e4m3fn", profile="ml_dtypes")
    live = str(r).splitlines()[:2]
    live[1] = live[1].replace(str(r.vectors), "/path/to/numref/vectors")
    assert shown == live, f"docs/python.md shows {shown}, the example prints {live}"
