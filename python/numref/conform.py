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

__all__ = ["check", "check_matmul", "CheckResult", "Mismatch", "ConformanceError"]  # + the runner's, below


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
    skipped: int = 0  # cases of suites the kernel declined (supported=) or cannot be offered
    text: str = ""  # the runner's text report (families other than cast)

    @property
    def ok(self) -> bool:
        return self.cases > 0 and self.mismatches == 0

    def report(self) -> str:
        head = f"{self.suite}: {self.cases} cases, {self.mismatches} mismatches"
        if self.classes:
            head += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(self.classes.items())) + ")"
        vec = ("vectors: skipped (vectors=False)" if self.vectors is None else
               f"vectors: {self.vectors} ({self.vector_files} files, MANIFEST verified; {self.vector_cases} cases of this suite)")
        return "\n".join([head, "  " + vec] + ["  " + m.text + (f" ({m.where})" if m.where and
                                                               not isinstance(m, CaseMismatch) else "")
                                              for m in self.first])

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


def check(kernel, op="cast", *, from_: str | None = None, to: str | None = None, profile="ocp", policy=None,
          level="l1", seed: int = 1, flags: bool = False, batch: int = 1 << 16,
          max_mismatches: int = 20, raise_on_mismatch: bool = False, vectors=None, supported=None,
          counts: bool = False, array: str = "numpy", **knobs) -> CheckResult:
    """Run ``kernel`` on the conformance cases of an op family and compare every result with the
    reference, bit for bit (spec §34).

    op "cast" (the default) checks one cast suite, from_ -> to under profile and knobs, as
    ``numref cast`` — described below. Every other op family (scale, quantize, dequantize,
    fake-quant, mor, mor-sub, gaussws, mma) runs through the conformance runner itself, in this
    process, exactly as a C plugin would: see the section "Other op families" at the end.

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

    Other op families
    -----------------
    op       the family, or the runner's --ops selectors (§34.1) as a string or a list:
             "quantize", "quantize:f32:f8e4m3fn", ["scale", "dequantize"], "mma:sm90_wgmma_f8".
    profile  the profile(s) the kernel claims (a name or a list; recipe profiles such as
             "torchao_mx_floor" or "te_mxfp8" bring their recipe's rule, partitions and knobs).
             Ignored by mma, whose profile is the selector's word.
    supported  ``supported(op) -> bool``: the suites the kernel implements (default: every
             suite selected); the others are counted as skipped, never failed.
    counts   the kernel reports the §19.5 counts of quantize / fake-quant.
    flags    the kernel reports the §36.4 flags of mma.
    array    "numpy" (default), "torch" (inputs as torch CPU tensors over the same memory,
             through DLPack, no copy) or "jax" (jax arrays); results may be NumPy, torch (any
             device) or jax arrays of the format's dtype, or raw unsigned codes.
    level, seed, vectors, max_mismatches: as for casts ("vectors" False: generated cases only).

    The kernel is called once per case — one whole tensor, MoR tensor, GaussWS matrix or
    D = A·B + C — as ``kernel(*inputs, op=op)`` (or ``kernel(*inputs)`` when it takes no ``op``),
    ``op`` describing the case (``Op``: its family, numbers and every word of the parameter
    text: ``op.rule``, ``op.elem``, ``op.partition``, ``op.block_rows``, ``op.outputs`` ...).
    The inputs, in order, are those of the C ABI (backend.h), typed by their format:

    ===========  ===========================================  =========================================
    family       inputs                                       outputs (``op.outputs``, in this order)
    ===========  ===========================================  =========================================
    scale        x (rows x cols view, strides as given)       amax, scales [, group_mantissa] [, tensor_amax]
    quantize     x [, r (uint32, round=sr)]                   codes, scales [, group_mantissa] [, tensor_amax] [, counts]
    dequantize   codes, scales [, group_mantissa] [, tensor_amax]   values (binary32)
    fake-quant   x [, r]                                      values (op.out_format) [, counts]
    mor          x                                            decision, reason, mean, group_mantissa, error_sum, scales
    mor-sub      x                                            type, eq3, eq4, e4m3_sum, e5m2_sum, e4m3_scales,
                                                              e5m2_scales, group_mantissa, values
    gaussws      w, bt (float32), noise, g                    r_packed, scale, w_hat, grad
    mma          a, b, c [, sa, sb]                           d [, flags]
    ===========  ===========================================  =========================================

    Scales, amaxes and group mantissas are stored codes (uint32; binary32 scales may be returned
    as float32, E8M0 / E4M3 ones as their ml_dtypes type). The GaussWS noise is the uint16 array u
    or the key tuple (seed, layer, step). MoR decisions / types are 0 f8e4m3fn, 1 f8e5m2, 2 kept
    (or those names), reasons an index of ``REASONS`` (or its name); an exact error sum is the 9
    words of §22.3 or the tuple (S, n, nonfinite_input, nonfinite_quant, zeros) with S the Python
    int sum * 2^149. The kernel returns a tuple in the order of ``op.outputs`` or a dict keyed by
    those names. Inputs view numref's memory during the call: copy what you keep. An exception
    in the kernel ends the run and is raised again by check(); a run in which the kernel
    supported no case raises ValueError (nothing was compared).
    """
    from . import Policy, _code_dtype, _canonical, _profile_name, dtype_of

    if not callable(kernel):
        raise TypeError(f"kernel: expected a callable, got {type(kernel).__name__}")
    selectors = _selectors(op)
    if any(sel.split(":")[0] != "cast" for sel in selectors):
        if from_ is not None or to is not None or policy is not None or knobs:
            raise ValueError("from_, to, policy and policy knobs are for op='cast'; the other families take "
                             "their suites from op's selectors and profile")
        return _check_runner(kernel, selectors, profile, level=level, seed=seed, flags=flags, counts=counts,
                             max_mismatches=max_mismatches, raise_on_mismatch=raise_on_mismatch, vectors=vectors,
                             supported=supported, array=array)
    if len(selectors) != 1 or selectors[0] != "cast":
        raise ValueError(f"op: a cast kernel is checked with op='cast' and from_= / to=, got {op!r}")
    if from_ is None or to is None:
        raise TypeError("check(op='cast') needs from_= and to=")
    if supported is not None or counts or array != "numpy":
        raise ValueError("supported=, counts= and array= are for the families other than cast")
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


# ---- every other op family: the conformance runner over Python callables (spec §32, §34) ------

REASONS: tuple[str, ...] = tuple(_core.mor_reasons())  # §25.3, NUMREF_REASON_* order
BLOCK_TYPES: tuple[str, ...] = tuple(_core.mor_block_types())  # §27.4, NUMREF_BLOCK_* order (bf16 = kept)
__all__ += ["Op", "CaseMismatch", "REASONS", "BLOCK_TYPES"]


@dataclass(frozen=True)
class CaseMismatch:
    """One failing case of a tensor, MoR, GaussWS or mma suite, as the runner reports it (§34.4):
    the suite (op family, label, parameter text), the mismatch class, where the case came from
    ("generated:<suite>#<index>" or "<vector file>:<line>"), and the texts of the FAIL line."""

    op: str
    label: str
    params: str
    cls: str
    where: str
    inputs: str
    got: str
    expected: str
    detail: str
    text: str  # the runner's FAIL line


class Op:
    """One case the runner asks the kernel for: ``family``, the op struct's numbers (``rows``,
    ``cols``, ``block_rows``, ``n_blocks``, ``m``, ``k`` ... as backend.h names them), format names
    (``source``, ``element``, ``out_format``, ...), ``text`` (the canonical parameter text, §33.6)
    and each of its words as an attribute (``op.rule``, ``op.elem``, ``op.partition``,
    ``op.profile``, ``op.round`` ...; ``op.params`` holds them all), and ``outputs``: the names of
    the results the kernel returns, in order."""

    def __init__(self, family: str, fields: dict, outputs=()):
        self.family = family
        self.__dict__.update(fields)
        self.params = dict(w.split("=", 1) for w in fields.get("text", "").split() if "=" in w)
        self.outputs = tuple(outputs)

    def __getattr__(self, name):  # the words of the parameter text
        params = self.__dict__.get("params", {})
        if name in params:
            return params[name]
        raise AttributeError(f"{self.__dict__.get('family', 'op')} op has no field or parameter {name!r}")

    def __repr__(self):
        return f"numref.conform.Op({self.family} {self.__dict__.get('text', '')})"


def _selectors(op) -> list[str]:
    """check()'s op: a family or --ops selector, or a list of them (§34.1)."""
    items = [op] if isinstance(op, str) else list(op) if isinstance(op, (list, tuple)) else None
    if not items or any(not isinstance(o, str) or not o or not o.split(":")[0] for o in items):
        raise ValueError(f"op: expected an op family or --ops selector (e.g. 'quantize:f32:f8e4m3fn') or a list "
                         f"of them, got {op!r}")
    if len(set(items)) != len(items):
        raise ValueError(f"op: a selector is given twice in {op!r}")
    return items


def _takes_op(kernel) -> bool:
    import inspect

    try:
        sig = inspect.signature(kernel)
    except (TypeError, ValueError):
        return False
    return any(p.name == "op" or p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def _to_numpy(a, what: str):
    """A kernel's result as a NumPy array: NumPy as is; torch tensors through DLPack (moved to the
    CPU first; float types as their bit patterns, which DLPack and NumPy share); jax arrays and
    anything else through np.asarray."""
    mod = type(a).__module__
    if mod.startswith("torch"):
        import torch

        t = a.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype.is_floating_point or t.dtype.itemsize == 0:
            t = t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
            return _np.from_dlpack(t).view({1: _np.uint8, 2: _np.uint16, 4: _np.uint32, 8: _np.uint64}[t.element_size()])
        return _np.from_dlpack(t)
    try:
        return _np.asarray(a)
    except Exception as e:  # noqa: BLE001 — name the result that could not be read
        raise TypeError(f"{what}: the kernel returned {type(a).__name__}, not an array ({e})") from None


def _store_codes(out, a, what: str):
    """Writes a kernel result into the runner's buffer `out` (unsigned codes): unsigned / signed
    integers as codes, any other dtype (float32, bfloat16, ml_dtypes' float8 ...) by its bit pattern."""
    a = _to_numpy(a, what)
    if a.size != out.size:
        raise ValueError(f"{what}: the kernel returned {a.size} values, the case has {out.size} "
                         f"(shape {tuple(out.shape)})")
    width = out.dtype.itemsize
    if a.dtype.kind == "b":
        a = a.astype(_np.uint8)
    if a.dtype.kind in "ui":
        v = a.reshape(-1)
        if v.size and (int(v.min()) < 0 and a.dtype.itemsize > width or int(v.max()) >= 1 << (8 * width)):
            raise ValueError(f"{what}: a code does not fit {8 * width} bits (range {v.min()} .. {v.max()})")
        if a.dtype.kind == "i" and a.dtype.itemsize <= width:
            v = v.view(_np.dtype(f"u{a.dtype.itemsize}"))
        out.reshape(-1)[:] = v.astype(out.dtype)
        return
    if a.dtype.kind in "OSUM" or a.dtype.itemsize > width:  # objects, strings, datetimes; too wide
        raise TypeError(f"{what}: the kernel returned dtype {a.dtype} ({a.dtype.itemsize} bytes), "
                        f"expected codes of at most {width} bytes or their unsigned integers")
    u = _np.ascontiguousarray(a).reshape(-1).view(_np.dtype(f"u{a.dtype.itemsize}"))
    out.reshape(-1)[:] = u.astype(out.dtype)


def _store_names(out, a, names, what: str):
    """MoR decisions / reasons: numbers or names."""
    if isinstance(a, str) or (isinstance(a, (list, tuple)) and a and isinstance(a[0], str)):
        words = [a] if isinstance(a, str) else list(a)
        try:
            a = [names.index({"kept": "bf16"}.get(w, w)) for w in words]
        except ValueError:
            raise ValueError(f"{what}: unknown name in {words!r} (known: {', '.join(names)})") from None
    _store_codes(out, _np.asarray(a, dtype=_np.int64), what)


def _store_sum(out, a, what: str):
    """An exact error sum (§22.3): 9 words, a (S, n, nonfinite_input, nonfinite_quant, zeros) tuple
    with S the Python int sum * 2^149, or numref.mor's dict; several of them for mor-sub."""
    many = out.ndim == 2

    def words(v):
        if isinstance(v, dict):
            v = (v["S"], v["n"], v["nonfinite_input"], v["nonfinite_quant"], v["zeros"])
        if len(v) == 5:
            S = int(v[0])
            if S < 0 or S >= 1 << 320:
                raise ValueError(f"{what}: S = {S} is not a 320-bit unsigned sum")
            return [(S >> (64 * i)) & ((1 << 64) - 1) for i in range(5)] + [int(x) for x in v[1:]]
        if len(v) == 9:
            return [int(x) for x in v]
        raise ValueError(f"{what}: expected 9 words or (S, n, nonfinite_input, nonfinite_quant, zeros)")

    if isinstance(a, dict) or (not many and len(a) == 5 and not hasattr(a[0], "__len__")):
        rows = [words(a)]
    elif not many:
        rows = [words(list(_np.asarray(a).reshape(-1)) if not isinstance(a, (list, tuple)) else a)]
    else:
        rows = [words(v) for v in a]
    if len(rows) != (out.shape[0] if many else 1):
        raise ValueError(f"{what}: the kernel returned {len(rows)} sums, the case has {out.shape[0] if many else 1}")
    for w in rows:
        if any(x < 0 or x >= 1 << 64 for x in w):
            raise ValueError(f"{what}: a word does not fit 64 bits")
    out.reshape(-1, 9)[:] = _np.array(rows, dtype=_np.uint64)


class _Dispatch:
    """The Python side of the backend table (conform_table.cpp): the runner's questions and
    cases go to the user's kernel; its first exception is kept and raised again by check()."""

    _TYPED = {"x": "source", "codes": "element", "w": "w_format", "g": "g_format",
              "a": "a_format", "b": "b_format", "c": "c_format", "sa": "scale_format", "sb": "scale_format"}

    def __init__(self, kernel, supported, array: str):
        self.kernel, self.user_supported, self.array = kernel, supported, array
        self.takes_op = _takes_op(kernel)
        self.exc: BaseException | None = None
        self.calls = 0

    def supported(self, family, fields):
        if self.exc is not None:
            return False
        if self.user_supported is None:
            return True
        try:
            return bool(self.user_supported(Op(family, fields)))
        except BaseException as e:  # noqa: BLE001 — raised again by check()
            self.exc = e
            return False

    def _typed(self, name, a, op):
        """An input as the kernel sees it: codes viewed as the format's dtype where one exists."""
        from . import dtype_of

        if name == "bt":
            return self._framework(a.view(_np.float32))
        if name == "key":
            return tuple(int(v) for v in a)
        fmt = getattr(op, self._TYPED.get(name, ""), None) if name in self._TYPED else None
        if fmt and not (name in ("a", "b") and getattr(op, name + "_ignore", 0)):  # tf32 stays f32 below
            try:
                dt = dtype_of(fmt if fmt != "ue4m3" else "f8e4m3fn")
            except (ValueError, TypeError):
                dt = None
            if dt is not None:
                if a.dtype.itemsize != dt.itemsize:  # mma operands arrive one per uint32
                    a = a.astype(_np.dtype(f"u{dt.itemsize}"))
                a = a.view(dt)
        elif name in ("a", "b") and fmt:
            a = a.view(_np.float32)
        return self._framework(a)

    def _framework(self, a):
        if self.array == "numpy":
            return a
        if self.array == "torch":
            import torch

            dt = getattr(torch, a.dtype.name, None) if a.dtype.kind == "V" or a.dtype.name.startswith(("float8", "bfloat")) else None
            raw = a if dt is None else a.view(_np.dtype(f"u{a.dtype.itemsize}"))
            t = torch.from_dlpack(raw)
            return t if dt is None else t.view(dt)
        import jax.numpy as jnp  # jax cannot alias read-only memory: its arrays are copies

        return jnp.asarray(a)

    def __call__(self, family, fields, ins, outs):
        if self.exc is not None:
            return "stopped: the kernel raised an exception"
        try:
            op = Op(family, fields, tuple(outs))
            args = [self._typed(k, v, op) for k, v in ins.items()]
            self.calls += 1
            res = self.kernel(*args, op=op) if self.takes_op else self.kernel(*args)
            self._store(op, res, outs)
        except BaseException as e:  # noqa: BLE001 — raised again by check()
            self.exc = e
            return f"{type(e).__name__}: {e}"
        return None

    def _store(self, op, res, outs):
        names = list(outs)
        if isinstance(res, dict):
            missing = [n for n in names if n not in res]
            extra = [n for n in res if n not in outs]
            if missing or extra:
                raise ValueError(f"{op.family}: the kernel's dict " + (f"lacks {missing}" if missing else "") +
                                 (" and " if missing and extra else "") + (f"has unknown {extra}" if extra else "") +
                                 f" (expected {names})")
            vals = [res[n] for n in names]
        else:
            vals = list(res) if isinstance(res, (tuple, list)) else [res]
            if len(vals) != len(names):
                raise ValueError(f"{op.family}: the kernel returned {len(vals)} results, expected {len(names)}: "
                                 f"{', '.join(names)} (op.outputs)")
        for n, v in zip(names, vals):
            what = f"{op.family} result '{n}'"
            if n in ("decision", "type"):
                _store_names(outs[n], v, BLOCK_TYPES, what)
            elif n in ("reason", "eq3", "eq4"):
                _store_names(outs[n], v, REASONS, what)
            elif n.endswith("sum"):
                _store_sum(outs[n], v, what)
            else:
                _store_codes(outs[n], v, what)


def _runner_result(report: dict, text: str, max_mismatches: int) -> CheckResult:
    b = report["backends"][0]
    label = ", ".join(sorted({f"{s['op']} {s['profile']}" for s in b.get("suites", [])})) or "(no suite)"
    res = CheckResult(suite=label)
    summ = b.get("summary", {})
    res.mismatches = int(summ.get("failed", 0))
    res.cases = int(summ.get("passed", 0)) + res.mismatches
    res.skipped = int(summ.get("skipped", 0))
    res.text = text
    vec = b.get("vectors") or ""
    res.vectors = None if vec in ("", "none") or vec.startswith("none") else vec.split(" (")[0]
    if "(" in vec and "files" in vec:
        try:
            res.vector_files = int(vec.split("(")[1].split()[0])
        except ValueError:
            pass
    res.vector_cases = sum(int(s["cases"]) for s in b.get("suites", []) if str(s.get("source", "")).endswith(".vec"))
    for m in b.get("mismatches", []):
        res.classes[m["class"]] = res.classes.get(m["class"], 0) + 1
        if len(res.first) < max_mismatches:
            t = m["text"]
            line = (f"FAIL {m['op']} {m['label']} | {t['inputs']} | got {t['got']} | expected {t['expected']} | "
                    f"{m['class']} | {m['where']}" + (f" | {t['detail']}" if t.get("detail") else ""))
            res.first.append(CaseMismatch(op=m["op"], label=m["label"], params=m["params"], cls=m["class"],
                                          where=m["where"], inputs=t["inputs"], got=t["got"],
                                          expected=t["expected"], detail=t.get("detail") or "", text=line))
    return res


def _check_runner(kernel, selectors, profile, *, level, seed, flags, counts, max_mismatches, raise_on_mismatch,
                  vectors, supported, array) -> CheckResult:
    """check() for every family but cast: the runner in this process over a backend table whose
    entry points call the kernel (python/src/conform_table.cpp)."""
    import json
    import tempfile

    from . import _profile_name

    if array not in ("numpy", "torch", "jax"):
        raise ValueError(f"array: expected 'numpy', 'torch' or 'jax', got {array!r}")
    if supported is not None and not callable(supported):
        raise TypeError(f"supported: expected a callable or None, got {type(supported).__name__}")
    if isinstance(level, bool) or not isinstance(level, (int, str)):
        raise TypeError(f"level: expected l0|l1|l2|exhaustive or 0|1|2, got {type(level).__name__}")
    level = "l" + str(level) if str(level) in ("0", "1", "2") else str(level)
    if max_mismatches < 0:
        raise ValueError(f"max_mismatches: expected a count >= 0, got {max_mismatches}")
    profiles = [profile] if isinstance(profile, str) else list(profile) if isinstance(profile, (list, tuple)) else None
    if not profiles:
        raise ValueError(f"profile: expected a profile name or a list of them, got {profile!r}")
    if len(set(profiles)) != len(profiles):
        raise ValueError(f"profile: a profile is given twice in {profile!r}")
    for p in profiles:
        _profile_name(p)
    vdir = _vectors_dir(vectors)
    families = sorted({sel.split(":")[0] for sel in selectors})
    disp = _Dispatch(kernel, supported, array)
    name = getattr(kernel, "__name__", type(kernel).__name__)
    name = "python:" + ("".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in name) or "kernel")
    with tempfile.TemporaryDirectory(prefix="numref-check-") as tmp:
        out = os.path.join(tmp, "report.json")
        status, text = _core.conform_run(disp.supported, disp, name,
                                         " ".join(families), selectors, profiles, level, seed,
                                         "none" if vdir is None else vdir, max_mismatches, counts, flags, out)
        report = json.load(open(out, encoding="utf-8")) if os.path.exists(out) else None
    if disp.exc is not None:
        raise disp.exc
    if status == 130:
        raise KeyboardInterrupt
    if report is None or status == 3:
        raise RuntimeError("numref.conform.check: the run failed:\n" + text)
    if status == 2:
        why = report.get("nothing_compared") or text.strip().splitlines()[-1:]
        raise ValueError(f"numref.conform.check: nothing compared: {why}" if report.get("nothing_compared")
                         else "numref.conform.check: the run stopped:\n" + text)
    res = _runner_result(report, text, max_mismatches)
    if raise_on_mismatch and not res.ok:
        raise ConformanceError(res)
    return res
