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

__all__ = ["check", "check_matmul", "CheckResult", "Mismatch", "ConformanceError"]


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


# ---- the mma family (spec §36 – §40, §31.10, §34.12) --------------------------------------------

_MMA_KINDS = ("random", "normal", "cancel", "subnormal", "spread", "specials", "zero_blocks", "extreme_scales")


def _mma_codes(rng, fmt_name: str, shape, kind: str, k_axis: int, block: int):
    """Random codes of an operand type for one of the §34.12 input kinds (as the runner draws them)."""
    from . import formats

    f = next(x for x in formats() if x["name"] == fmt_name)
    bits, man, exp_bits = f["bits"], f["man_bits"], f["exp_bits"]
    signed = f["signed"]
    n = int(_np.prod(shape))
    sign = (rng.integers(0, 2, n, dtype=_np.int64) << (bits - 1)) if signed else 0
    top = (1 << exp_bits) - 1
    bias = f["bias"]
    if kind == "random":
        x = rng.integers(0, 1 << bits, n, dtype=_np.int64)
    elif kind == "subnormal":
        x = sign | rng.integers(0, 1 << man, n, dtype=_np.int64)
    else:
        lo, hi = (0, top) if kind == "spread" else (max(1, bias - 3), min(top, bias + 3))
        x = sign | (rng.integers(lo, hi + 1, n, dtype=_np.int64) << man) | rng.integers(0, 1 << man, n, dtype=_np.int64)
        if kind != "spread":
            x[rng.random(n) < 1 / 12] = 0
    x = x.reshape(shape)
    if kind == "cancel":  # the second half of K negates the first
        y = _np.moveaxis(x, k_axis, -1)
        h = y.shape[-1] // 2
        y[..., h:2 * h] = y[..., :h] ^ (1 << (bits - 1))
    if kind == "zero_blocks" and block:
        y = _np.moveaxis(x, k_axis, -1)
        for j in range(0, y.shape[-1], block):
            if rng.random() < 0.5:
                y[..., j:j + block] = 0
    return (x & ((1 << bits) - 1)).astype(_np.uint32)


def _read_mma_vectors(d: str, profile: str, a_type: str, b_type: str, acc: str, block: int, scale_type: str):
    """§31.10 The cases of the golden mma files of this suite: [(path, line, k, M, N, columns)], the
    files verified against MANIFEST (sha256)."""
    import hashlib

    manifest = {}
    with open(os.path.join(d, "MANIFEST"), encoding="utf-8") as f:
        for line in f:
            h, _, rel = line.rstrip("\n").partition("  ")
            manifest[rel] = h
    out, files = [], 0
    mdir = os.path.join(d, "mma")
    if not os.path.isdir(mdir):
        return out, files
    for name in sorted(os.listdir(mdir)):
        rel = "mma/" + name
        path = os.path.join(mdir, name)
        data = open(path, "rb").read()
        if manifest.get(rel) != hashlib.sha256(data).hexdigest():
            raise ValueError(f"{path}: not the file MANIFEST lists (stale or edited)")
        lines = data.decode("utf-8").split("\n")
        head, i = {}, 1
        while lines[i] != "begin":
            key, _, value = lines[i].partition(" ")
            head[key] = value
            i += 1
        if (head.get("profile"), head.get("a"), head.get("b"), head.get("c")) != (profile, a_type, b_type, acc):
            continue
        if int(head.get("block", "0")) != block or (block and head.get("scale") != scale_type):
            continue
        files += 1
        cols = head["columns"].split()[1:]
        for j in range(i + 1, len(lines)):
            if lines[j] == "end":
                break
            words = lines[j].split("#")[0].split()
            m, n = (int(v) for v in words[0].split("x"))
            values = {c: [int(v, 16) for v in w.replace("/", ",").split(",")] for c, w in zip(cols, words[1:])}
            out.append((rel, j + 1, int(head["k"]), m, n, values))
    return out, files


def check_matmul(kernel, *, profile: str, a_type: str, b_type: str | None = None, acc: str = "f32",
                 block: int = 0, scale_type: str = "f8e8m0fnu", ks=(1, 16, 33, 64, 130), shape=(4, 4),
                 cases: int = 8, seed: int = 1, flags: bool = False, max_mismatches: int = 20,
                 raise_on_mismatch: bool = False, vectors=None) -> CheckResult:
    """Run a matrix-multiply kernel on mma conformance cases (spec §34.12) and compare every element
    of D with ``numref.matmul`` under ``profile``, bit for bit; then the suite's golden vectors
    (§31.10, vectors/mma/).

    kernel      ``kernel(a, b, c)`` — or ``kernel(a, b, c, sa, sb)`` with block scales — over NumPy
                arrays: a (M x K) and b (K x N) of the operand types' dtypes (``numref.dtype_of``;
                tf32 as float32, ue4m3 scales as uint8 codes), c (M x N) float32 or float16; it
                returns D as float32 / float16 or raw codes; with ``flags=True`` it returns (D,
                flags) and the §36.4 flags are compared too.
    profile     an MMA profile (``numref.mma_profiles()``): "sm90_wgmma_f8", "ideal", ...
    ks          the K of the generated cases, each rounded up to the block (steps and partial
                steps of every profile); ``cases`` cases per K, each with one of the 8 input kinds.
    vectors     as ``check``: the golden-vector directory, or False.
    Returns a CheckResult; raises ConformanceError when asked and any case fails.
    """
    from . import dtype_of, matmul, mma_profiles

    b_type = b_type or a_type
    names = [p["name"] for p in mma_profiles()]
    if profile not in names:
        raise ValueError(f"profile: unknown mma profile '{profile}' (known: {', '.join(names)})")
    label = f"mma {profile} {a_type}x{b_type}+{acc}" + (f" block {block} {scale_type}" if block else "")
    res = CheckResult(suite=label)
    rng = _np.random.default_rng([seed, len(label)])
    st_fmt = "f8e4m3fn" if scale_type == "ue4m3" else scale_type
    code_fmt = {"tf32": "f32"}

    def typed(codes, t):
        t = code_fmt.get(t, t)
        if t == "ue4m3":
            return codes.astype(_np.uint8)
        dt = dtype_of(t)
        return codes.astype(_np.dtype(dt).itemsize == 1 and _np.uint8 or
                            {2: _np.uint16, 4: _np.uint32}[_np.dtype(dt).itemsize]).view(dt)

    def run(A, B, C, SA, SB, where):
        M, N = C.shape
        exp_d, exp_f = matmul(A, B, C, profile=profile, a_type=a_type, b_type=b_type, acc=acc, block=block,
                              scale_type=scale_type, scales=None if SA is None else (SA, SB), flags=True, raw=True)
        args = [typed(A, a_type), typed(B, b_type), typed(C, acc)]
        if SA is not None:
            args += [typed(SA, scale_type), typed(SB, scale_type)]
        got = kernel(*args)
        got_f = None
        if flags:
            got, got_f = got
        g = _np.asarray(got)
        want = _np.uint32 if acc == "f32" else _np.uint16
        if g.dtype != want:
            g = g.view(want) if g.dtype.itemsize == _np.dtype(want).itemsize else g
        g = _np.asarray(g).reshape(M, N).astype(_np.uint32)
        e = _np.asarray(exp_d).reshape(M, N).astype(_np.uint32)
        bad = g != e
        if flags:
            bad |= _np.asarray(got_f).reshape(M, N) != exp_f
        res.cases += M * N
        for i, j in _np.argwhere(bad):
            res.mismatches += 1
            cls = "mma/value" if g[i, j] != e[i, j] else "mma/flags"
            res.classes[cls] = res.classes.get(cls, 0) + 1
            if len(res.first) < max_mismatches:
                gf = None if got_f is None else int(_np.asarray(got_f).reshape(M, N)[i, j])
                res.first.append(Mismatch(
                    x=int(i * N + j), r=None, got=int(g[i, j]), expected=int(e[i, j]), got_flags=gf,
                    expected_flags=int(exp_f[i, j]), cls=cls,
                    text=f"FAIL {label} {M}x{N}x{A.shape[1]} | element ({i}, {j}) | got {int(g[i, j]):x} | "
                         f"expected {int(e[i, j]):x} | {cls}", where=where))

    M, N = shape
    unit = block or 1
    for k in ks:
        K = -(-k // unit) * unit
        for n in range(cases):
            kind = _MMA_KINDS[n % len(_MMA_KINDS)]
            A = _mma_codes(rng, code_fmt.get(a_type, a_type), (M, K), kind, 1, block)
            B = _mma_codes(rng, code_fmt.get(b_type, b_type), (K, N), kind, 0, block)
            C = _mma_codes(rng, acc, (M, N), "normal" if kind != "random" else "random", 1, 0)
            SA = SB = None
            if block:
                nb = K // block
                base = 0x7F if st_fmt == "f8e8m0fnu" else 0x38
                SA = (base + rng.integers(-6, 7, (M, nb))).astype(_np.uint32)
                SB = (base + rng.integers(-6, 7, (nb, N))).astype(_np.uint32)
                if kind == "extreme_scales":
                    ext = [0x00, 0x01, 0x7F, 0xFE, 0xFF] if st_fmt == "f8e8m0fnu" else [0x00, 0x01, 0x7E, 0x7F, 0x80]
                    SA = rng.choice(ext, (M, nb)).astype(_np.uint32)
            run(A, B, C, SA, SB, f"generated K={K} #{n}")
    d = _vectors_dir(vectors)
    res.vectors = d
    if d is not None:
        found, res.vector_files = _read_mma_vectors(d, profile, a_type, b_type, acc, block, scale_type)
        for rel, line, K, m, n, v in found:
            A = _np.array(v["a"], dtype=_np.uint32).reshape(m, K)
            B = _np.array(v["b"], dtype=_np.uint32).reshape(K, n)
            C = _np.array(v["c"], dtype=_np.uint32).reshape(m, n)
            SA = _np.array(v["sa"], dtype=_np.uint32).reshape(m, K // block) if block else None
            SB = _np.array(v["sb"], dtype=_np.uint32).reshape(K // block, n) if block else None
            before = res.cases
            run(A, B, C, SA, SB, f"{rel}:{line}")
            res.vector_cases += res.cases - before
    if raise_on_mismatch and res.mismatches:
        raise ConformanceError(res)
    return res
