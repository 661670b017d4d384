"""numref.conform: check a Python kernel against the reference, bit for bit (spec §34).

    >>> import ml_dtypes, numref
    >>> r = numref.conform.check(lambda x: x.astype(ml_dtypes.float8_e4m3fn),
    ...                          from_="f32", to="f8e4m3fn", profile="ml_dtypes")
    >>> r.ok, r.cases
    (True, ...)

The cases are those of ``numref conform`` for the suite (from_, to, profile + knobs): the cast
family's generator of the conformance library (every code of a <= 16-bit source from level l1 on,
every 8-bit code always; for f32 the boundary codes of the target and random TestFloat-like
codes), its reference results, comparison (§34.4) and mismatch text; then the suite's golden
vectors (§31, §34.2: the files of numref's vector directory for the suite and the divergence
files' answers for its profile, expected results as written in the files, MANIFEST checked).
The vectors ship inside the package (numref/vectors); ``NUMREF_VECTORS`` or ``vectors=DIR``
name another directory, ``vectors=False`` runs the generated cases only.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as _np

from . import _core

__all__ = ["check", "CheckResult", "Mismatch", "ConformanceError"]


class ConformanceError(AssertionError):
    """Raised by ``check(..., raise_on_mismatch=True)``; ``.result`` holds the CheckResult."""

    def __init__(self, result: "CheckResult"):
        super().__init__(result.report())
        self.result = result


@dataclass(frozen=True)
class Mismatch:
    """One failing case: the operand (x, and r for round=sr), the codes got and expected, the
    runner's class (§34.4: "tie", "overflow/saturation", "nan/sign", ...) and its text."""

    x: int
    r: int | None
    got: int
    expected: int
    got_flags: int | None
    expected_flags: int
    cls: str
    text: str
    where: str = ""  # "generated #INDEX" or the golden vector's "FILE.vec:LINE" (as numref conform's FAIL lines)


@dataclass
class CheckResult:
    """What check() found: the suite (label), counts and the first mismatches."""

    suite: str
    cases: int = 0  # generated and golden-vector cases
    mismatches: int = 0
    first: list[Mismatch] = field(default_factory=list)
    classes: dict[str, int] = field(default_factory=dict)
    vectors: str | None = None  # the golden-vector directory read (None: vectors=False)
    vector_files: int = 0  # cast vector files read (MANIFEST verified)
    vector_cases: int = 0  # the suite's cases among them

    @property
    def ok(self) -> bool:
        return self.cases > 0 and self.mismatches == 0

    def report(self) -> str:
        head = f"{self.suite}: {self.cases} cases, {self.mismatches} mismatches"
        if self.classes:
            head += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(self.classes.items())) + ")"
        vec = ("vectors: skipped (vectors=False)" if self.vectors is None else
               f"vectors: {self.vectors} ({self.vector_files} files, MANIFEST verified; {self.vector_cases} cases of this suite)")
        return "\n".join([head, "  " + vec] + ["  " + m.text + (f" ({m.where})" if m.where else "") for m in self.first])

    def __str__(self) -> str:
        return self.report()


def _kernel_codes(got, n: int, to: str, what: str):
    """The kernel's result as unsigned codes of the target (uint8/16/32 by width)."""
    from . import _code_dtype, dtype_of

    want = _code_dtype(to)
    a = _np.asarray(got)
    if a.size != n:
        raise ValueError(f"{what}: the kernel returned {a.size} values for {n} inputs")
    if a.dtype == dtype_of(to) or a.dtype == want:
        return _np.ascontiguousarray(a.reshape(-1)).view(want).astype(_np.uint32)
    raise TypeError(f"{what}: the kernel returned dtype {a.dtype}; expected {dtype_of(to)} or raw codes {want}")


def _vectors_dir(vectors):
    """§34.2 The golden-vector directory: vectors=DIR, else $NUMREF_VECTORS, else the package's
    own (numref/vectors, installed with it), else the source tree this module was built from
    (a CMake build tree); None for vectors=False. Not finding them is an error, as for
    ``numref conform``: a check of generated cases only must be asked for."""
    if vectors is False:
        return None
    if vectors is not None and vectors is not True:
        if not isinstance(vectors, (str, os.PathLike)):
            raise TypeError(f"vectors: expected a directory, True or False, got {type(vectors).__name__}")
        d = os.fspath(vectors)
        if not os.path.isdir(d):
            raise ValueError(f"vectors: '{d}' is not a directory")
        return d
    env = os.environ.get("NUMREF_VECTORS")
    looked = [env] if env else [os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors")]
    for d in looked:
        if os.path.isfile(os.path.join(d, "MANIFEST")):
            return d
    built = "" if env else _core.default_vectors_dir()
    if built:
        return built
    where = ", ".join(looked + ([] if env else ["the source tree this module was built from"]))
    raise ValueError(f"golden vectors not found (looked in {where}); pass vectors=DIR, set NUMREF_VECTORS, "
                     f"or vectors=False for the generated cases only")


def check(kernel, op: str = "cast", *, from_: str, to: str, profile: str = "ocp", policy=None,
          level="l1", seed: int = 1, flags: bool = False, batch: int = 1 << 16,
          max_mismatches: int = 20, raise_on_mismatch: bool = False, vectors=None, **knobs) -> CheckResult:
    """Run ``kernel`` on the conformance cases of the cast suite (from_ -> to under profile and
    knobs, as ``numref cast``) and compare every result with the reference, bit for bit.

    kernel   a callable over NumPy arrays: ``kernel(x)`` (``kernel(x, r)`` for round="sr", r the
             uint32 random values of §5) with x of from_'s dtype (``numref.dtype_of``), returning
             the results as to's dtype or as raw unsigned codes; with ``flags=True`` it returns
             (results, flags) and the §9 flags (uint8 bits) are compared too.
    level    l0 | l1 (default) | l2 | exhaustive: the runner's levels (§34.3); 0, 1, 2 (int or
             text) as ``numref conform --level`` writes them are the same levels.
    vectors  the golden-vector directory (default: $NUMREF_VECTORS, else the package's own);
             False: the generated cases only. The suite's vector cases run after the generated
             ones; a mismatch there names its file and line (``Mismatch.where``).
    Returns a CheckResult (counts, the first ``max_mismatches`` mismatches with their class and
    the runner's text: inputs, got, expected); raises ConformanceError when asked and any
    case fails.
    """
    from . import Policy, _code_dtype, _canonical, _profile_name, dtype_of

    if op != "cast":
        raise ValueError(f"op: only 'cast' kernels can be checked from Python so far, got {op!r}")
    if not callable(kernel):
        raise TypeError(f"kernel: expected a callable, got {type(kernel).__name__}")
    from_ = _canonical(from_, "from_")
    to = _canonical(to, "to")
    _profile_name(profile)
    if batch < 1:
        raise ValueError(f"batch: expected a positive number of cases, got {batch}")
    if isinstance(level, bool) or not isinstance(level, (int, str)):
        raise TypeError(f"level: expected l0|l1|l2|exhaustive or 0|1|2, got {type(level).__name__}")
    if str(level) in ("0", "1", "2"):  # the CLI's spelling (numref conform --level 1)
        level = "l" + str(level)
    pol = Policy(to, profile, policy, **knobs)
    vdir = _vectors_dir(vectors)  # before any work: a missing directory is a usage error
    suite = _core.CastSuite(from_, to, profile, str(pol), level, seed)
    res = CheckResult(suite=suite.label, vectors=vdir)
    in_dtype = dtype_of(from_)
    in_codes = _code_dtype(from_)

    def run(xs, rs, ey, ef, where):
        """The kernel on one batch; its mismatches into res."""
        n = xs.size
        x = xs.astype(in_codes).view(in_dtype)
        out = kernel(x, rs.copy()) if suite.sr else kernel(x)
        gf = None
        if flags:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("kernel: with flags=True the kernel must return (results, flags)")
            out, gf = out
            gf = _np.asarray(gf).reshape(-1).astype(_np.uint32)
            if gf.size != n:
                raise ValueError(f"kernel: returned {gf.size} flags for {n} inputs")
        gy = _kernel_codes(out, n, to, "kernel")
        bad = gy != ey
        if gf is not None:
            bad |= gf != ef
        for i in _np.flatnonzero(bad):
            m = suite.mismatch(int(xs[i]), int(rs[i]) if rs is not None else 0, int(ey[i]), int(ef[i]), int(gy[i]),
                               None if gf is None else int(gf[i]))
            if m is None:  # equal under the runner's comparison
                continue
            cls, inputs, got_t, exp_t = m
            res.mismatches += 1
            res.classes[cls] = res.classes.get(cls, 0) + 1
            if len(res.first) < max_mismatches:
                res.first.append(Mismatch(
                    x=int(xs[i]), r=int(rs[i]) if rs is not None else None, got=int(gy[i]), expected=int(ey[i]),
                    got_flags=None if gf is None else int(gf[i]), expected_flags=int(ef[i]), cls=cls,
                    text=f"{cls}: {inputs}: got {got_t}, expected {exp_t}", where=where(int(i))))
        res.cases += n

    # §34.3 the generated cases, the reference computing the expected results
    total = suite.size()
    first = 0
    while first < total:
        n = min(batch, total - first)
        xs = _np.empty(n, dtype=_np.uint32)
        rs = _np.empty(n, dtype=_np.uint32) if suite.sr else None
        suite.fill(first, xs, rs)
        ey = _np.empty(n, dtype=_np.uint32)
        ef = _np.empty(n, dtype=_np.uint32)
        suite.expected(xs, rs, ey, ef)
        run(xs, rs, ey, ef, lambda i, f=first: f"generated #{f + i}")
        first += n
    # §34.2 the golden vectors: expected results as the files give them
    if vdir is not None:
        vx, vr, vy, vf, vwhere, res.vector_files = suite.vector_cases(vdir)
        res.vector_cases = len(vx)
        for b in range(0, len(vx), batch):
            sl = slice(b, b + batch)
            xs = _np.array(vx[sl], dtype=_np.uint32)
            rs = _np.array(vr[sl], dtype=_np.uint32) if suite.sr else None
            run(xs, rs, _np.array(vy[sl], dtype=_np.uint32), _np.array(vf[sl], dtype=_np.uint32),
                lambda i, b=b: vwhere[b + i])
    if raise_on_mismatch and not res.ok:
        raise ConformanceError(res)
    return res
