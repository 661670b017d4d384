"""numref.testing: assertions for pytest (or any test runner) whose failure message is the
conformance runner's mismatch text (spec §34.4).

    import numref.testing as nt

    def test_my_mx_quantizer():
        nt.assert_conforms(my_quantizer, op="quantize:f32:f8e4m3fn", profile="ocp",
                           supported=lambda op: op.rule == "mx-floor")

    def test_my_cast_on_my_inputs():
        nt.assert_cast_equal(my_cast(x), x, "f8e4m3fn", profile="cuda_satfinite")

``assert_conforms`` runs ``numref.conform.check`` (the generated suites and golden vectors of any op
family) and fails with its report: one FAIL line per mismatch (inputs, got, expected, class, where
the case came from). The ``assert_*_equal`` helpers compare a result you already have, on your own
inputs, with numref's, and fail naming each differing element in the same form.
"""
from __future__ import annotations

import numpy as _np

from . import _core

__all__ = ["assert_conforms", "assert_cast_equal", "assert_quantize_equal"]


def assert_conforms(kernel, op="cast", **kwargs):
    """``numref.conform.check(kernel, op, **kwargs)``; AssertionError with the runner's report when
    a case mismatches or nothing was compared. Returns the CheckResult when every case matched."""
    from . import conform

    res = conform.check(kernel, op, **kwargs)
    if not res.ok:
        raise AssertionError(res.report())
    return res


def _codes_of(a, fmt: str, what: str):
    """Unsigned codes of an array of format fmt's dtype, or the codes themselves."""
    from . import _code_dtype, dtype_of

    a = _np.asarray(a)
    want = _code_dtype(fmt)
    if a.dtype.kind == "u":
        if a.dtype.itemsize > want.itemsize and a.size and int(a.max()) >= 1 << (8 * want.itemsize):
            raise ValueError(f"{what}: a code does not fit {fmt}")
        return a.astype(want)
    if a.dtype != dtype_of(fmt):
        raise TypeError(f"{what}: expected {dtype_of(fmt)} values or unsigned codes of {fmt}, got dtype {a.dtype}")
    return _np.ascontiguousarray(a).view(want)


def _fail(head: str, lines: list[str], n: int, shown: int):
    more = f"\n  ... and {n - shown} more" if n > shown else ""
    raise AssertionError(head + "\n" + "\n".join("  " + s for s in lines) + more)


def assert_cast_equal(actual, x, to: str, *, src: str | None = None, profile: str = "ocp", policy=None,
                      random=None, max_mismatches: int = 20, **knobs):
    """Asserts that ``actual`` (to's dtype or raw codes, x's shape) equals ``numref.cast(x, to, ...)``
    bit for bit. The message gives, per differing element, its index and the runner's text
    (class: input: got, expected — §34.4)."""
    from . import Policy, _codes, _random_values, cast

    to_ = _core.canonical_format(to, "to")
    src_, xc = _codes(x, src)
    pol = Policy(to_, profile, policy, src=src_, **knobs)
    r = _random_values(random, xc.size, pol.sr_bits) if pol.round == "sr" else None
    expected = cast(xc, to_, src=src_, profile=profile, policy=str(pol), random=r, raw=True)
    got = _codes_of(actual, to_, "actual")
    if got.shape != expected.shape:
        raise AssertionError(f"cast {src_}->{to_}: actual has shape {got.shape}, x has {expected.shape}")
    bad = _np.flatnonzero(got.reshape(-1) != expected.reshape(-1))
    if bad.size == 0:
        return
    suite = _core.CastSuite(src_, to_, profile, str(pol), "l0", 1)
    xs, gs, es = xc.reshape(-1), got.reshape(-1), expected.reshape(-1)
    lines = []
    for i in bad[:max_mismatches]:
        m = suite.mismatch(int(xs[i]), 0 if r is None else int(r[i]), int(es[i]), 0, int(gs[i]), None)
        where = tuple(int(v) for v in _np.unravel_index(int(i), got.shape)) if got.ndim > 1 else int(i)
        if m is None:  # equal under the runner's comparison cannot happen for differing codes of one format
            lines.append(f"[{where}] got {int(gs[i]):x}, expected {int(es[i]):x}")
            continue
        cls, inputs, got_t, exp_t = m
        lines.append(f"[{where}] {cls}: {inputs}: got {got_t}, expected {exp_t}")
    _fail(f"cast {suite.label}: {bad.size} of {got.size} elements differ", lines, bad.size,
          min(bad.size, max_mismatches))


def assert_quantize_equal(codes, scales, x, fmt: str, *, max_mismatches: int = 20, **quantize_kwargs):
    """Asserts that ``codes`` and ``scales`` equal ``numref.quantize(x, fmt, **quantize_kwargs)``'s
    bit for bit (codes: the element format's dtype or raw codes, shaped as x's 2-D view; scales: one
    per block, block-row-major, float32 / ml_dtypes scale values or raw codes). The message names
    each differing block scale and element with the block's amax context."""
    from . import quantize

    q = quantize(x, fmt, **quantize_kwargs)
    sfmt = q.scale_format
    exp_codes = _np.asarray(q.raw_codes)
    exp_scales = _codes_of(q.scales, sfmt, "expected scales").reshape(-1)
    got_codes = _codes_of(codes, _core.canonical_format(fmt, "fmt"), "codes")
    got_scales = _codes_of(scales, sfmt, "scales").reshape(-1)
    if got_codes.size != exp_codes.size:
        raise AssertionError(f"quantize: codes has {got_codes.size} elements, expected {exp_codes.size}")
    if got_scales.size != exp_scales.size:
        raise AssertionError(f"quantize: scales has {got_scales.size} values, expected {exp_scales.size} "
                             f"(one per block, grid {tuple(q.scales.shape)})")
    got_codes = got_codes.reshape(exp_codes.shape)
    lines = []
    bad_s = _np.flatnonzero(got_scales != exp_scales)
    bad_c = _np.argwhere(got_codes != exp_codes)
    grid = q.scales.shape
    for b in bad_s[:max_mismatches]:
        lines.append(f"scale of block {tuple(int(v) for v in _np.unravel_index(int(b), grid))}: got {int(got_scales[b]):x}, "
                     f"expected {int(exp_scales[b]):x} ({sfmt})")
    for i, j in bad_c[:max(0, max_mismatches - len(lines))]:
        lines.append(f"element ({i}, {j}): got {int(got_codes[i, j]):02x}, expected {int(exp_codes[i, j]):02x} ({fmt})")
    n = bad_s.size + len(bad_c)
    if n:
        _fail(f"quantize -> {fmt}: {bad_s.size} of {exp_scales.size} scales, {len(bad_c)} of {exp_codes.size} "
              f"codes differ", lines, n, len(lines))
