"""numref: the bit-exact reference for low-precision ML numerics, from Python.

Every function reads numref's own tables (the formats of spec §2.1, the policy knobs and
profiles of §10) through the C++ extension ``numref._core``; nothing is listed twice here.

    >>> import numpy as np, numref
    >>> numref.cast(np.float32([464.00003]), "f8e4m3fn", raw=True)   # OCP, non-saturating
    array([127], dtype=uint8)

Errors are ``ValueError`` (bad value, unknown name) or ``TypeError`` (bad type) carrying the
message of the ``numref`` command, the option named by its keyword (``round=`` for ``--round``).
"""
from __future__ import annotations

import os as _os
import textwrap as _textwrap
from fractions import Fraction as _Fraction

import numpy as _np

from . import _core

__version__: str = _core.__version__

__all__ = ["__version__", "cast", "formats", "profiles", "knobs", "explain", "Policy", "dtype_of", "format_of"]

_FORMATS = {f["name"]: f for f in _core.formats()}
_KNOBS = {k["key"]: k for k in _core.knobs()}


def formats() -> list[dict]:
    """The format table (spec §2.1): one dict per format with its name, widths, bias,
    encoding family (``specials``), max finite and canonical NaN codes, source and aliases."""
    return [dict(f) for f in _FORMATS.values()]


def profiles() -> list[dict]:
    """The named profiles (spec §10), one dict per row of the profile table, in table order: name,
    summary, the policy for narrow (<= 8-bit) and wide targets in the §10.3 text form, and the
    quantization recipe (§10.4: a dict of rule, partition, knobs, amax_nan, elements (None: every
    format) and source; None for a profile without one)."""
    return _core.profiles()


def _fill_names(doc: str | None, marker: str, names) -> str | None:
    """``doc`` with the line holding ``marker`` filled with ``names``, wrapped at that line's
    indentation: the profile lists of the docstrings below are read from the table at import."""
    if doc is None:  # python -OO
        return None
    out = []
    for line in doc.split("\n"):
        if marker in line:
            indent = line[: len(line) - len(line.lstrip())]
            out += _textwrap.wrap(line.strip().replace(marker, ", ".join(names)), width=100, initial_indent=indent,
                                  subsequent_indent=indent, break_on_hyphens=False)
        else:
            out.append(line)
    return "\n".join(out)


def knobs() -> list[dict]:
    """The policy knob table (spec §10.3): key, words (values in order), type, clause."""
    return [dict(k) for k in _KNOBS.values()]


def _canonical(name: str, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what}: expected a format name (str), got {type(name).__name__}")
    return _core.canonical_format(name, what)


# ---- NumPy / ml_dtypes types of the formats ---------------------------------------------------
# The dtype of a format is named after it: "f32" -> float32, "bf16" -> bfloat16,
# "f8e4m3fn" -> float8_e4m3fn, "int8" -> int8 (ml_dtypes' spelling of the same names).

def _dtype_name(fmt: str) -> str:
    if fmt.startswith("bf"):
        return "b" + _dtype_name(fmt[1:])
    if fmt.startswith("f"):
        i = 1
        while i < len(fmt) and fmt[i].isdigit():
            i += 1
        return "float" + fmt[1:i] + ("_" + fmt[i:] if i < len(fmt) else "")
    return fmt


def dtype_of(fmt: str) -> _np.dtype:
    """The NumPy dtype holding values of format ``fmt`` (NumPy's own for f32/f16/int8,
    ml_dtypes' for the others)."""
    fmt = _canonical(fmt, "fmt")
    name = _dtype_name(fmt)
    if hasattr(_np, name):
        return _np.dtype(getattr(_np, name))
    import ml_dtypes

    if not hasattr(ml_dtypes, name):
        # e.g. the IEEE P3109 rows (spec §2.5): no NumPy or ml_dtypes type holds them
        raise ValueError(f"{fmt}: neither NumPy nor ml_dtypes {ml_dtypes.__version__} has a dtype for it "
                         f"(looked for {name}); use its raw codes: raw=True for results, src={fmt!r} for inputs")
    return _np.dtype(getattr(ml_dtypes, name))


def format_of(dtype) -> str:
    """The numref format of a NumPy / ml_dtypes dtype (TypeError when it has none)."""
    dt = _np.dtype(dtype)
    for name in _FORMATS:
        try:
            if dtype_of(name) == dt:
                return name
        except ValueError:
            continue
    raise TypeError(
        f"dtype {dt} is not a numref format (float32, float16, ml_dtypes' bfloat16 / float8 / float6 / "
        f"float4 types, int8), and not raw codes: pass unsigned codes with src=FORMAT"
    )


def _code_dtype(fmt: str) -> _np.dtype:
    bits = _FORMATS[fmt]["bits"]
    return _np.dtype(_np.uint8 if bits <= 8 else _np.uint16 if bits <= 16 else _np.uint32)


# ---- policies ---------------------------------------------------------------------------------

def _knob_text(key: str, value) -> str:
    k = _KNOBS.get(key)
    if k is None:
        # the C++ side names the knobs it knows
        return str(value)
    if k["type"] == "bool":
        if isinstance(value, bool) or value in (0, 1):
            return "1" if value else "0"
        if isinstance(value, str):
            return value
        raise TypeError(f"{key}: expected a bool or 0/1, got {value!r}")
    if k["type"] == "int":
        if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
            raise TypeError(f"{key}: expected an int, got {value!r}")
        return str(int(value))
    if not isinstance(value, str):
        raise TypeError(f"{key}: expected one of {'|'.join(k['words'])} (str), got {value!r}")
    return value


class Policy:
    """A conversion policy (spec §4–§10) resolved for a target format, as ``numref cast`` builds
    it: the profile's policy for the target (narrow <= 8 bits or wide, §10.1), then ``policy``
    (the §10.3 text form ``"key=value ..."``, or another Policy), then the single knobs, one
    keyword per row of numref's knob table (``numref.knobs()``): round, sr_bits, sr_variant,
    overflow, inf_sat, nan, nan_to_finite, e8m0_round, zero_to_nozero, negative, daz, ftz,
    tininess, int_range, e8m0_low, inf_nan. An explicit ``round`` also sets ``e8m0_round="follow"`` (§7.1).

    Each knob is an attribute; ``str(policy)`` is the canonical §10.3 description.
    """

    __slots__ = ("to", "_desc", "_values")

    def __init__(self, to: str = "f8e4m3fn", profile: str | None = "ocp", policy=None, *, src: str | None = None,
                 **knobs):
        self.to = _canonical(to, "to")
        src = "" if src is None else _canonical(src, "src")
        if profile is not None and not isinstance(profile, str):
            raise TypeError(f"profile: expected a profile name (str), got {type(profile).__name__}")
        if isinstance(policy, Policy):
            settings, profile = policy._desc, None if profile == "ocp" else profile
        elif policy is None:
            settings = ""
        elif isinstance(policy, str):
            settings = policy
        else:
            raise TypeError(f"policy: expected a Policy or a 'key=value ...' str, got {type(policy).__name__}")
        pairs = [(k, _knob_text(k, v)) for k, v in knobs.items() if v is not None]
        # src given: the profile's pair rules for src -> to apply (spec §10.2), as numref cast --from
        self._desc = _core.resolve_policy(self.to, profile or "", settings, pairs, src)
        self._values = _core.policy_values(self.to, self._desc)

    def __getattr__(self, key):
        try:
            return object.__getattribute__(self, "_values")[key]
        except KeyError:
            raise AttributeError(key) from None

    def __str__(self) -> str:
        return self._desc

    def __repr__(self) -> str:
        return f"numref.Policy(to={self.to!r}, profile=None, policy={self._desc!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Policy) and self._values == other._values

    def __hash__(self) -> int:
        return hash(self._desc)

    def as_dict(self) -> dict:
        """Every knob's value."""
        return dict(self._values)


# ---- explain ----------------------------------------------------------------------------------

def explain(fmt: str, code: int) -> dict:
    """The fields, class and exact value of one code of ``fmt`` (spec §3.1, §3.4; what
    ``numref explain FMT HEX`` prints). ``value`` is the exact value as a ``Fraction``
    (None for Inf / NaN)."""
    fmt = _canonical(fmt, "fmt")
    if isinstance(code, bool) or not isinstance(code, (int, _np.integer)):
        raise TypeError(f"code: expected an int, got {type(code).__name__}")
    if code < 0:
        raise ValueError(f"code: {code} is negative (codes are unsigned bit patterns)")
    r = _core.explain(fmt, int(code))
    if r["significand"] is not None:
        mag = _Fraction(r["significand"]) * (_Fraction(2) ** r["exponent"])
        r["value"] = -mag if r["sign"] else mag
    else:
        r["value"] = None
    return r


# ---- cast -------------------------------------------------------------------------------------

def _random_values(random, n: int, k: int):
    if random is None:
        return None
    if isinstance(random, (int, _np.integer)) and not isinstance(random, bool):
        gen = _np.random.Generator(_np.random.PCG64(int(random)))
        return gen.integers(0, 1 << k, size=n, dtype=_np.uint64).astype(_np.uint32)
    r = _np.asarray(random)
    if r.dtype.kind not in "ui":
        raise TypeError(f"random: expected an int seed or an integer array of r values, got dtype {r.dtype}")
    if r.size != n:
        raise ValueError(f"random: expected {n} r values (one per element), got {r.size}")
    if r.dtype.kind == "i" and r.size and r.min() < 0:
        raise ValueError("random: r values must be non-negative (0 <= r < 2^k, §4.3)")
    if r.size and int(r.max()) > 0xFFFFFFFF:
        raise ValueError("random: r values must fit in 32 bits (0 <= r < 2^k, §4.3)")
    return _np.ascontiguousarray(r.reshape(-1), dtype=_np.uint32)


def _threads(threads) -> int:
    """The threads= argument (issue 32): None = every core (os.cpu_count()), else a positive int."""
    if threads is None:
        return _os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, (int, _np.integer)):
        raise TypeError(f"threads: expected a positive int (1 = the calling thread only; None = every core), "
                        f"got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads: expected a positive int (1 = the calling thread only; None = every core), "
                         f"got {int(threads)}")
    return int(threads)


def _contiguous(x):
    """x itself when C-contiguous (a read-only array stays read-only: nothing writes to it), else
    a C-contiguous copy; a 0-d array stays 0-d (np.ascontiguousarray would make it 1-d)."""
    return x if x.flags.c_contiguous else _np.array(x, order="C")


def _profile_name(profile):
    """A profile argument that must name a profile: anything but a known name is refused with the
    message of ``numref cast --profile`` (None and '' included)."""
    names = [p["name"] for p in profiles()]
    if not isinstance(profile, str) or profile not in names:
        shown = profile if isinstance(profile, str) else repr(profile)
        raise ValueError(f"profile: unknown profile '{shown}' (known: {', '.join(names)})")
    return profile


def _codes(x, src):
    """(canonical source format, C-contiguous unsigned code array) of the input; no copy for a
    C-contiguous input."""
    if not isinstance(x, _np.ndarray):
        if src is None and not hasattr(x, "dtype"):
            raise TypeError(
                f"x: expected a NumPy array (float32, float16, ml_dtypes types) or unsigned codes with src=, "
                f"got {type(x).__name__}"
            )
        x = _np.asarray(x)
    if src is not None:
        src = _canonical(src, "src")
        want = _code_dtype(src)
        if x.dtype.kind != "u":
            raise TypeError(f"src={src}: raw codes must be an unsigned integer array ({want}), got dtype {x.dtype}")
        if x.dtype != want:
            raise TypeError(f"src={src}: raw codes of {src} are {want}, got dtype {x.dtype}")
        return src, _contiguous(x)
    fmt = format_of(x.dtype)
    return fmt, _contiguous(x).view(_code_dtype(fmt))


def cast(x, to: str, *, src: str | None = None, profile: str = "ocp", policy=None, random=None,
         flags: bool = False, raw: bool = False, path: str = "auto", threads: int | None = None, **knobs):
    """Convert every element of ``x`` to format ``to`` (spec §11), bit for bit as ``numref cast``.

    x        a NumPy array of float32, float16, int8 or an ml_dtypes type (bfloat16, float8_e4m3fn,
             float8_e5m2, float8_e8m0fnu, float6_e3m2fn, float6_e2m3fn, float4_e2m1fn), or unsigned
             codes (uint8 / uint16 / uint32 by the width) of the format named by ``src``.
    to       the target format (name or alias, ``numref.formats()``).
    profile  ocp (default) or another profile of ``numref.profiles()`` (§10):
             {profiles}.
    policy   a ``Policy`` or the §10.3 text ``"key=value ..."`` applied on the profile.
    **knobs  single knobs (``round="rtz"``, ``overflow="saturate"``, ``nan="ones"``, ``sr_bits=8``,
             ...; ``numref.knobs()``), applied last.
    random   for round="sr": an array of r values (one per element, 0 <= r < 2^sr_bits) or an
             int seed (r drawn with NumPy's PCG64).
    flags    also return the exception flags (§9) per element, uint8: 0x01 inexact,
             0x02 underflow, 0x04 overflow, 0x10 invalid.
    raw      return the result codes (uint8 / uint16 / uint32) instead of the typed array; needed
             for a format no NumPy / ml_dtypes dtype holds (the IEEE P3109 rows, spec §2.5:
             ``dtype_of`` raises ValueError for them, and so does ``cast`` without raw=True).
    path     "auto" / "fast": the cpu-fast engine (proven equal to the reference by the
             conformance suite); "reference": the reference Converter.
    threads  how many threads share a large conversion (at least 2^20 elements, by element
             ranges): None (default) every core (``os.cpu_count()``), 1 the calling thread only.
             The result is the same for every value.

    Returns an array of the target's dtype (or raw codes) of ``x``'s shape, and with
    ``flags=True`` the pair (result, flags). The conversion releases the GIL; the only array
    allocated is the result (and the flags).
    """
    to = _canonical(to, "to")
    _profile_name(profile)
    if path not in ("auto", "fast", "reference"):
        raise ValueError(f"path: expected 'auto', 'fast' or 'reference', got {path!r}")
    nthreads = _threads(threads)
    typed = None if raw else dtype_of(to)  # a format with no dtype (P3109) is refused before any work
    src, codes = _codes(x, src)
    pol = policy if isinstance(policy, Policy) and profile == "ocp" and not knobs and policy.to == to else None
    if pol is None:
        pol = Policy(to, profile, policy, src=src, **knobs)
    out = _np.empty(codes.shape, dtype=_code_dtype(to))
    fl = _np.empty(codes.shape, dtype=_np.uint8) if flags else None
    r = None
    if pol.round == "sr":
        r = _random_values(random, codes.size, pol.sr_bits)
    elif random is not None:
        raise ValueError("random applies only to stochastic rounding (round='sr')")
    _core.cast_codes(codes, out, fl, r, src, to, str(pol), "reference" if path == "reference" else "fast", nthreads)
    res = out if raw else out.view(typed)
    return (res, fl) if flags else res


# ---- quantize ---------------------------------------------------------------------------------

class Quantized:
    """The result of ``numref.quantize`` (spec §19.4): ``codes`` (the element format's dtype, or
    int8; raw codes in ``raw_codes``), ``scales`` (per block, block-row-major, shape = the block
    grid; float32 for binary32 scale rules, else the scale format's ml_dtypes type),
    ``group_mantissa`` (GAM, uint32 per group), ``tensor_amax`` (NVFP4, float32), ``dequantized``
    (float32, §19.3), ``fake_quant`` (the fake_quant format's dtype, §19.6, or None) and the
    counts ``saturated``, ``flushed``, ``nan``, ``inf`` (§19.5), ``policy`` (the element policy),
    ``path`` ("fast": cpu-fast's block quantization, "reference"). On the fast path
    ``dequantized`` and ``fake_quant`` are computed from the codes and scales when first read, and
    the counts by the reference."""

    _COUNTS = ("saturated", "flushed", "nan", "inf")
    _LAZY = ("dequantized", "fake_quant")

    def __init__(self, counts=None, lazy=None, **kw):
        self.__dict__.update(kw)
        self._counts = counts  # a callable giving the §19.5 counts when the fast path left them out
        self._lazy = lazy  # a callable giving dequantized / fake_quant by name when the fast path left them out

    def __getattr__(self, key):
        # the counts of a cpu-fast result: computed by the reference on first use (cpu-fast's block
        # quantization gives codes, scales and tensors, not the counts)
        if key in Quantized._COUNTS and self.__dict__.get("_counts") is not None:
            self.__dict__.update(self._counts())
            self._counts = None
            return self.__dict__[key]
        if key in Quantized._LAZY and self.__dict__.get("_lazy") is not None:
            self.__dict__[key] = self._lazy(key)
            return self.__dict__[key]
        raise AttributeError(key)

    def __repr__(self):
        return (f"numref.Quantized(codes={self.codes.shape} {self.codes.dtype}, scales={self.scales.shape} "
                f"{self.scales.dtype}, saturated={self.saturated}, flushed={self.flushed}, nan={self.nan}, inf={self.inf})")


def quantize(x, fmt: str, *, partition: str | None = None, scale: str | None = None, group: str = "tensor",
             amax_nan: str | None = None, amax_inf: str | None = None, apply: str | None = None,
             dequant: str = "divide", profile: str | None = None, policy=None, recipe: str | None = None,
             q_max=None, random=None, fake_quant: str | None = "bf16", transpose: bool = False,
             src: str | None = None, path: str = "auto", threads: int | None = None, **knobs) -> Quantized:
    """Quantize a tensor (spec §19), as ``numref quantize``.

    x          1-D or 2-D (or more: the leading dimensions are the rows) array of float32, float16,
               bfloat16 or an 8-bit float, or raw codes with ``src=``; ``transpose`` quantizes its
               transpose (§12.1).
    fmt        element format: f8e4m3fn, f8e5m2, f6e3m2fn, f6e2m3fn, f4e2m1fn, int8.
    partition  tensor (default) | rows | cols | channel:rows | channel:cols | block:RxC (§12.2).
    scale      amax (default) | amax-recip | amax-dequant | pow2 | mx-floor | mx-ceil | mx-even | mx-rceil |
               mx-rceil-f32 | gam | nvfp4 | int8 | int8-127.5 | pow2-recip (§14–§20); ``group`` the GAM
               groups.
    amax_nan, amax_inf  propagate (default: poisons the block) | ignore (§13.2).
    recipe     recipe knobs "key=word ..." (§19.8: amax_floor, scale_exp, zero_code, inf_block,
               nan_block, elem_nan, mx_descale, nan_scale, zero_sign, scale_round, zero_divisor, divisor,
               elem_exp, nvfp4_scale).
    q_max      an explicit q_max (§14.4): a number that is exactly a binary32 value.
    apply      rn32 | fused (§19.2); dequant  divide | reciprocal (§19.3).
    profile, policy, **knobs  the element policy as in ``cast``; without profile, policy or
               overflow it is the ocp narrow policy with overflow="saturate" (§19.1). The profile's
               wide policy (default ocp) decodes NaN codes and makes the fake-quant output. A profile
               with a quantization recipe (§10.4: those of ``numref.profiles()`` with a ``recipe``)
               also sets the rule, partition, recipe knobs and amax policy,
               as ``numref quantize --profile`` does: ``partition`` and ``q_max`` override it, a
               ``scale``, ``recipe``, ``amax_nan`` or ``amax_inf`` that differs is a ValueError.
               The recipe profiles: {recipe_profiles}.
    random     for round="sr": one r per element (element order) or an int seed.
    fake_quant the format of the fake-quant output (bf16 default, f16, f32; None: none).
    path       "auto" / "fast": cpu-fast's block quantization (conformance/backends/cpu_fast, held to
               the reference by the conformance suite) where it takes the operation (every scale
               kind but nvfp4; not ``apply="fused"`` for float elements), else the reference;
               "reference": the reference. The result is the same; on the fast path the counts
               (saturated, flushed, nan, inf) are computed by the reference when first read
               (``result.path`` says which path ran). On the fast path ``dequantized`` and
               ``fake_quant`` are computed when first read.
    threads    how many threads share the fast path's work on a large tensor (at least 2^20
               elements; by row ranges): None (default) every core (``os.cpu_count()``), 1 the
               calling thread only. The result is the same for every value; the reference path
               uses one thread.
    """
    if path not in ("auto", "fast", "reference"):
        raise ValueError(f"path: expected 'auto', 'fast' or 'reference', got {path!r}")
    fmt = _canonical(fmt, "fmt")
    nthreads = _threads(threads)
    for name, v in (("partition", partition), ("scale", scale), ("group", group), ("amax_nan", amax_nan),
                    ("amax_inf", amax_inf), ("dequant", dequant), ("recipe", recipe)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{name}: expected a str, got {type(v).__name__}")
    q_code = None
    if q_max is not None:
        if isinstance(q_max, bool) or not isinstance(q_max, (int, float, str, _np.floating, _np.integer)):
            raise TypeError(f"q_max: expected a number, got {type(q_max).__name__}")
        try:
            qv = float(q_max)
        except ValueError:
            raise ValueError(f"q_max: {q_max!r} is not a number") from None
        q32 = _np.float32(qv)
        if not _np.isfinite(q32) or float(q32) != qv:
            raise ValueError(f"q_max: {q_max!r} is not a finite binary32 value (q_max must be exact, §14.4)")
        q_code = int(q32.view(_np.uint32))
    custom = profile is not None or policy is not None or "overflow" in knobs
    if not custom:
        knobs = dict(knobs, overflow="saturate")
    pol = Policy(fmt, profile or "ocp", policy, **knobs)
    wide = Policy("f32", profile or "ocp")
    src, codes = _codes(x, src)
    if codes.ndim == 0 or codes.size == 0:
        raise ValueError("x: expected a non-empty array of at least one dimension")
    codes2 = codes.reshape(1, -1) if codes.ndim == 1 else codes.reshape(-1, codes.shape[-1])
    if transpose:
        codes2 = _np.ascontiguousarray(codes2.T)
    rows, cols = codes2.shape
    r = _random_values(random, rows * cols, pol.sr_bits) if pol.round == "sr" else None
    if r is None and random is not None:
        raise ValueError("random applies only to stochastic rounding (round='sr')")
    if pol.round == "sr" and r is None:
        raise ValueError("stochastic rounding (round=sr) needs random=: one r per element or an int seed (§5)")
    args = (codes2, rows, cols, src, fmt, profile or "ocp", partition, group, scale, recipe, amax_nan, amax_inf,
            q_code, apply, dequant, str(pol), str(wide), r, fake_quant)
    d = _core.quantize(*args, "reference" if path == "reference" else "fast", nthreads)

    def counts():
        ref = _core.quantize(*args, "reference")
        return {k: ref[k] for k in Quantized._COUNTS}

    ff = None if fake_quant is None else _canonical(fake_quant, "fake_quant")

    def fake_array(codes32):
        """fake-quant codes (uint32 from the reference, uint16 / uint32 from the fast path) typed."""
        return codes32.astype(_code_dtype(ff), copy=False).view(dtype_of(ff)).reshape(rows, cols)

    if isinstance(d["codes"], bytes):
        raw = _np.frombuffer(d["codes"], dtype=_np.uint8).reshape(rows, cols)
    else:
        raw = d["codes"]  # the fast path's array (read-only, no copy)
    sfmt = d["scale_format"]
    scales = _np.frombuffer(d["scales"], dtype=_np.uint32).astype(_code_dtype(sfmt)).view(dtype_of(sfmt))
    gm = _np.frombuffer(d["group_mantissa"], dtype=_np.uint32)
    if "group_grid" in d:
        gm = gm.reshape(d["group_grid"])
    tensors, lazy = {}, None
    if "lazy" in d:
        fast = d["lazy"]

        def lazy(key):
            if key == "dequantized":
                return fast.dequantized().view(_np.float32)
            return None if ff is None else fake_array(fast.fake_quant())
    else:
        tensors["dequantized"] = _np.frombuffer(d["dequantized"], dtype=_np.uint32).view(_np.float32).reshape(rows, cols)
        tensors["fake_quant"] = None if d["fake_quant"] is None else fake_array(
            _np.frombuffer(d["fake_quant"], dtype=_np.uint32))
    return Quantized(
        raw_codes=raw, codes=raw.view(dtype_of(fmt)), scales=scales.reshape(d["grid"]), scale_format=sfmt,
        group_mantissa=gm,
        tensor_amax=None if d["tensor_amax"] is None else _np.uint32(d["tensor_amax"]).view(_np.float32),
        policy=d["policy"], path=d["path"], lazy=lazy, **tensors,
        **({k: d[k] for k in Quantized._COUNTS} if d["counts_exact"] else {"counts": counts}))


_PROFILE_ROWS = _core.profiles()
cast.__doc__ = _fill_names(cast.__doc__, "{profiles}", [p["name"] for p in _PROFILE_ROWS])
quantize.__doc__ = _fill_names(quantize.__doc__, "{recipe_profiles}", [p["name"] for p in _PROFILE_ROWS if p["recipe"]])
del _PROFILE_ROWS

__all__ += ["quantize", "Quantized"]


# ---- MoR --------------------------------------------------------------------------------------

def _sum(d: dict) -> dict:
    """An exact error sum (§22.3): S as an int, the sum as a Fraction (S * 2^-149), the counts."""
    out = dict(d)
    out["sum"] = _Fraction(d["S"], 1 << -d["scale_exp"])
    del out["scale_exp"]
    return out


class MorResult:
    """The result of ``numref.mor`` (spec §25–§27). Tensor recipe: ``decision`` ("f8e4m3fn" or the
    fake format), ``quantized``, ``verdict`` (accept, reason), ``error`` (the exact error sum: ``S``
    an int, ``sum`` a Fraction, ``n`` ...), ``mean_relative_error`` (a Fraction: sum / n, exact),
    ``mean`` (its RN32, float32), ``threshold`` (a Fraction), ``scales`` (the E4M3 scales).
    Sub-tensor recipes: ``types`` (per block: f8e4m3fn / f8e5m2 / bf16, shaped as the block grid),
    ``eq3`` / ``eq4`` verdicts, ``e4m3_sum`` / ``e5m2_sum`` per block, ``blocks_of`` /
    ``elements_of`` per type, ``fake`` (the output tensor)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        if self.recipe == "tensor":
            return f"numref.MorResult(decision={self.decision!r}, mean_relative_error={self.mean_relative_error})"
        return f"numref.MorResult(recipe={self.recipe!r}, blocks_of={self.blocks_of})"


def mor(x, recipe: str = "tensor", *, partition: str = "block:128x128", threshold: str | None = None,
        scale: str = "gam", fake: str = "bf16", transpose: bool = False, src: str | None = None,
        threads: int | None = None) -> MorResult:
    """Mixture of Representations on one tensor, as ``numref mor`` (spec §25–§27; docs/mor.md).

    recipe     tensor (E4M3 or the fake format for the whole tensor, MoR Eq. 1–2) | subtensor3 |
               subtensor2 (per block, [f8e4m3fn, f8e5m2, bf16] / [f8e4m3fn, bf16], Eq. 3–4).
    partition  the E4M3 scaling partition (tensor recipe) or the block partition.
    threshold  tensor recipe: "0.045" (default), "4.5%", "9/200" — read exactly (§23.2).
    scale      gam (default) or another FP8 scale rule; fake  bf16 | f16 | f32.
    threads    the error sums are evaluated by ranges of block rows on this many threads (default
               None: every core; 1: the calling thread); the result is the same for every count.
    """
    for name, v in (("recipe", recipe), ("partition", partition), ("scale", scale), ("fake", fake)):
        if not isinstance(v, str):
            raise TypeError(f"{name}: expected a str, got {type(v).__name__}")
    if threshold is not None and not isinstance(threshold, str):
        raise TypeError(f"threshold: expected a str such as '0.045', '4.5%' or '9/200' (read exactly), "
                        f"got {type(threshold).__name__}")
    src, codes = _codes(x, src)
    if codes.ndim == 0 or codes.size == 0:
        raise ValueError("x: expected a non-empty array of at least one dimension")
    codes2 = codes.reshape(1, -1) if codes.ndim == 1 else codes.reshape(-1, codes.shape[-1])
    if transpose:
        codes2 = _np.ascontiguousarray(codes2.T)
    rows, cols = codes2.shape
    d = _core.mor(codes2, rows, cols, src, recipe, partition, threshold, scale, fake, _threads(threads))
    if recipe == "tensor":
        err = _sum(d["error"])
        sfmt = d["scale_format"]
        return MorResult(
            recipe=recipe, decision=d["decision"], quantized=d["quantized"], verdict=d["verdict"], error=err,
            mean_relative_error=err["sum"] / err["n"] if err["n"] else None,
            mean=_np.uint32(d["mean"]).view(_np.float32), threshold=_Fraction(*d["threshold"]),
            scales=_np.array(d["scales"], dtype=_np.uint32).astype(_code_dtype(sfmt)).view(dtype_of(sfmt)),
            group_mantissa=_np.array(d["group_mantissa"], dtype=_np.uint32))
    fk = _canonical(fake, "fake")
    return MorResult(
        recipe=recipe, types=_np.array(d["types"], dtype=object).reshape(d["grid"]), eq3=d["eq3"], eq4=d["eq4"],
        e4m3_sum=[_sum(e) for e in d["e4m3_sum"]], e5m2_sum=[_sum(e) for e in d["e5m2_sum"]],
        blocks_of=dict(zip(("f8e4m3fn", "f8e5m2", "bf16"), d["blocks_of"])),
        elements_of=dict(zip(("f8e4m3fn", "f8e5m2", "bf16"), d["elements_of"])),
        fake=_np.frombuffer(d["fake"], dtype=_np.uint32).astype(_code_dtype(fk)).view(dtype_of(fk)).reshape(rows, cols))


__all__ += ["mor", "MorResult"]

class GaussWSResult:
    """The result of :func:`gaussws`: ``w_hat`` (bfloat16, w's 2-D shape), ``r`` (int8 noise R in
    -2..2, w's shape), ``r_packed`` (uint32: eight 4-bit sign-magnitude nibbles per word, §30.9),
    ``scale`` (float32 s per 32 x 32 block; NaN for a block holding a NaN or Inf), ``bt`` (float32
    b_t per block) and ``grad_bt`` (float32 dL/db_t per block, or None without ``grad``)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        g = "" if self.grad_bt is None else f", grad_bt={self.grad_bt!r}"
        return f"GaussWSResult(w_hat={self.w_hat!r}, scale={self.scale!r}{g})"


def _f32_code(v, name: str) -> int:
    try:
        f = _np.float32(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a number, got {type(v).__name__}") from None
    if float(f) != float(v) and not (_np.isnan(f) and _np.isnan(v)):
        raise ValueError(f"{name}: {v!r} is not a binary32 value (give it as numpy.float32)")
    return int(_np.array([f], dtype=_np.float32).view(_np.uint32)[0])


def _per_block(v, grid, name: str):
    """A scalar, or an array of grid shape (or grid-many elements), as float32 codes per block."""
    a = _np.asarray(v)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected numbers, got dtype {a.dtype}")
    if a.ndim == 0:
        a = _np.full(grid, _f32_code(a.item(), name), dtype=_np.uint32)
        return a
    if a.size != grid[0] * grid[1]:
        raise ValueError(f"{name}: expected one value per 32 x 32 block, shape {grid[0]}x{grid[1]}, got shape "
                         f"{'x'.join(map(str, a.shape))}")
    f = a.astype(_np.float32)
    if a.dtype.kind == "f" and not _np.array_equal(f.astype(a.dtype), a, equal_nan=True):
        raise ValueError(f"{name}: values that are not binary32 (give a float32 array)")
    return _np.ascontiguousarray(f.reshape(-1)).view(_np.uint32)


def gaussws(w, bt=None, *, bi=None, b_init=6.0, b_target=4.0, seed=None, layer: int = 0, step: int = 0,
            bits=None, sum: str = "exact", grad=None, src: str | None = None) -> GaussWSResult:
    """Gaussian weight sampling on one matrix, as ``numref gaussws`` (spec §30; docs/gaussws.md).

    w        float32 or bfloat16 array (1-D: one row; 2-D), or raw codes with src="f32" / "bf16".
    bt       b_t: a number (every block) or one value per 32 x 32 block; or
    bi       b_i per block (or a number) with b_init, b_target: b_t = RN32(b_target + b_i (b_init - b_target)).
    seed     the generator's key with layer and step (§30.3); or
    bits     uint16 words, one per element of w (§30.2).
    sum      "exact" (one rounding, §30.5) or "f32" (the variant RNE_bf16(RN32(w + R s))).
    grad     dL/dw_hat (float32 or bfloat16, w's size): also returns dL/db_t per block (§30.7).
    """
    if (bt is None) == (bi is None):
        raise ValueError("give exactly one of bt=, bi=")
    if (seed is None) == (bits is None):
        raise ValueError("give exactly one of seed=, bits=")
    if bits is not None and (layer or step):
        raise ValueError("layer= and step= select generator bits; they do not apply to bits=")
    if not isinstance(sum, str) or sum not in ("exact", "f32"):
        raise ValueError(f"sum: {sum!r} is not 'exact' or 'f32'")
    wfmt, codes = _codes(w, src)
    if wfmt not in ("f32", "bf16"):
        raise TypeError(f"w: expected float32 or bfloat16 values, got {wfmt}")
    if codes.ndim == 0 or codes.size == 0 or codes.ndim > 2:
        raise ValueError("w: expected a non-empty 1-D or 2-D array")
    codes2 = codes.reshape(1, -1) if codes.ndim == 1 else codes
    rows, cols = codes2.shape
    grid = ((rows + 31) // 32, (cols + 31) // 32)
    if bt is not None:
        btc = _per_block(bt, grid, "bt")
    else:
        bic = _per_block(bi, grid, "bi")
        btc = _np.array(_core.gaussws_bitwidth(bic, _f32_code(b_init, "b_init"), _f32_code(b_target, "b_target")),
                        dtype=_np.uint32)
    key = None
    if seed is not None:
        for name, v in (("seed", seed), ("layer", layer), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, (int, _np.integer)) or not 0 <= int(v) < 2**64:
                raise ValueError(f"{name}: expected an integer in 0..2^64-1, got {v!r}")
        key = [int(seed), int(layer), int(step)]
    u = None
    if bits is not None:
        u = _np.asarray(bits)
        if u.dtype != _np.uint16:
            raise TypeError(f"bits: expected a uint16 array (16 random bits per element), got dtype {u.dtype}")
        if u.size != codes2.size:
            raise ValueError(f"bits: expected one word per element of w ({codes2.size}), got {u.size}")
        u = _np.ascontiguousarray(u.reshape(-1))
    g = None
    gfmt = "f32"
    if grad is not None:
        gfmt, g = _codes(grad, None)
        if gfmt not in ("f32", "bf16"):
            raise TypeError(f"grad: expected float32 or bfloat16 values, got {gfmt}")
        if g.size != codes2.size:
            raise ValueError(f"grad: expected w's {codes2.size} elements, got {g.size}")
        g = _np.ascontiguousarray(g.reshape(-1))
    d = _core.gaussws(_np.ascontiguousarray(codes2.reshape(-1)), rows, cols, wfmt, _np.ascontiguousarray(btc), key, u,
                      sum, g, gfmt)
    grid = tuple(d["grid"])
    f32 = lambda b: _np.frombuffer(b, dtype=_np.uint32).view(_np.float32).reshape(grid)  # noqa: E731
    return GaussWSResult(
        w_hat=_np.frombuffer(d["w_hat"], dtype=_np.uint32).astype(_np.uint16).view(dtype_of("bf16")).reshape(rows, cols),
        r=_np.frombuffer(d["r"], dtype=_np.int8).reshape(rows, cols).copy(),
        r_packed=_np.frombuffer(d["r_packed"], dtype=_np.uint32).copy(),
        scale=f32(d["scale"]).copy(), bt=_np.asarray(btc, dtype=_np.uint32).view(_np.float32).reshape(grid).copy(),
        grad_bt=f32(d["grad_bt"]).copy() if "grad_bt" in d else None)


__all__ += ["gaussws", "GaussWSResult"]

from . import conform  # noqa: E402  (uses the names above)


def backward_error(a, b, d) -> dict:
    """The backward error of a computed product d of a and b (spec §29.1, [MD] Eq. 3):
    BE_ij = RN32(|sum_k a_ik b_kj - d_ij| / sum_k |a_ik| |b_kj|), the numerator exact.

    a, b   2-D arrays (M x K, K x N) of float32, bfloat16, float16 or an 8-bit float: the
           operands before any quantization.
    d      M x N float32: the product as computed (e.g. ``numref.matmul(a, b, recipe=...)`` or a
           kernel's output).
    Returns {"be": M x N float32, "max": float32, "mean": float32 (RN32 of the exact mean)}.
    ValueError for NaN / Inf in a, b or d, mismatched shapes, or a non-zero d where every product
    of its row and column is zero."""
    A, B = _np.asarray(a), _np.asarray(b)
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"a, b: expected 2-D arrays, got {A.ndim} and {B.ndim} dimensions")
    fa, fb = format_of(A.dtype), format_of(B.dtype)
    D = _np.asarray(d)
    if D.dtype != _np.float32:
        raise TypeError(f"d: expected float32 values, got dtype {D.dtype}")
    M, K = A.shape
    if B.shape[0] != K or D.shape != (M, B.shape[1]):
        raise ValueError(f"shapes: a {A.shape}, b {B.shape} and d {D.shape} do not form d = a @ b")
    N = B.shape[1]
    r = _core.backward_error(_np.ascontiguousarray(A).view(_code_dtype(fa)), fa,
                             _np.ascontiguousarray(B).view(_code_dtype(fb)), fb, M, K, N,
                             _np.ascontiguousarray(D).view(_np.uint32), )
    f32 = lambda c: _np.uint32(c).view(_np.float32)  # noqa: E731
    return {"be": _np.frombuffer(r["be"], dtype=_np.uint32).view(_np.float32).reshape(M, N).copy(),
            "max": f32(r["max"]), "mean": f32(r["mean"])}


__all__ += ["backward_error"]


def mma_profiles() -> list[dict]:
    """The MMA instruction profiles (spec §39.1): name, instruction, operand types, accumulators,
    scale types, blocks, the model's knobs (§38.6) and the evidence."""
    return _core.mma_profiles()


def _mma_operand(x, typ, what):
    """(type name, uint32 codes) of a matmul operand: float32 / float16 / ml_dtypes arrays name their
    type (float32 read as tf32 when typ="tf32"), unsigned codes need typ."""
    x = _np.asarray(x)
    if x.ndim != 2:
        raise ValueError(f"{what}: expected a 2-D array, got {x.ndim} dimensions")
    if x.dtype.kind == "u":
        if typ is None:
            raise TypeError(f"{what}: unsigned codes need their type ({what}_type=)")
        return typ, _np.ascontiguousarray(x).astype(_np.uint32)
    fmt = format_of(x.dtype)
    if typ is not None and typ != fmt and not (typ == "tf32" and fmt == "f32"):
        raise TypeError(f"{what}_type={typ} does not match the array's dtype {x.dtype}")
    return typ or fmt, _np.ascontiguousarray(x).view(_code_dtype(fmt)).astype(_np.uint32)


def matmul(a, b, c=None, *, profile: str = "ideal", a_type: str | None = None, b_type: str | None = None,
           acc: str = "f32", scales=None, block: int = 0, scale_type: str = "f8e8m0fnu", model: str = "",
           promote: int = 0, split_k: int = 1, recipe: str | None = None, recipe_format: str = "f8e4m3fn",
           flags: bool = False, raw: bool = False):
    """D = a @ b + c under an MMA instruction profile, bit for bit as ``numref mma`` (spec §36 – §40;
    docs/mma.md).

    a, b      2-D arrays (M x K, K x N) of float16, bfloat16, float8_e4m3fn, float8_e5m2,
              float6_e3m2fn, float6_e2m3fn, float4_e2m1fn or float32 (a_type="tf32" reads float32 as
              tf32), or unsigned codes with a_type= / b_type=.
    c         M x N float32 or float16 (default +0 of ``acc``).
    profile   "ideal" (the exact sum rounded once, §37) or an instruction profile (§39), e.g.
              "sm90_wgmma_f8"; ``numref.mma_profiles()`` lists them.
    scales    (sa, sb) block scales: sa M x K/block, sb K/block x N, as float8_e8m0fnu arrays or uint8
              codes (scale_type="ue4m3" for NVFP4's unsigned E4M3); with block= 16 or 32.
    model     "key=value ..." overriding the profile's knobs (§38.6).
    promote   promote partial sums into binary32 every ``promote`` elements of K (§40.1).
    split_k   slices of K added to c in order (§40.2).
    recipe    a recipe profile with a GEMM (§40.6; ``numref mma --recipes``): a and b (float32,
              bfloat16 or float16) are quantized along K by it into ``recipe_format`` (default
              f8e4m3fn) and its scales used as its library's GEMM does — the instruction's block
              scales (the MX recipes, e.g. "te_mxfp8" with "sm100_tcgen05_mxf8f6f4") or §40.5
              promotion ("deepgemm" with "sm90_wgmma_f8").
    flags     also return the §9 flags per element (uint8).
    raw       return D's codes (uint32 / uint16) instead of float32 / float16.
    The computation releases the GIL.
    """
    at, A = _mma_operand(a, a_type, "a")
    bt, B = _mma_operand(b, b_type, "b")
    M, K = A.shape
    if B.shape[0] != K:
        raise ValueError(f"b: expected K = {K} rows (a's columns), got {B.shape[0]}")
    N = B.shape[1]
    if c is None:
        C = _np.zeros((M, N), dtype=_np.uint32)
    else:
        acc, C = _mma_operand(c, None if _np.asarray(c).dtype.kind != "u" else acc, "c")
        if C.shape != (M, N):
            raise ValueError(f"c: expected shape {(M, N)}, got {C.shape}")
    sa = sb = None
    if scales is not None:
        if not block:
            raise ValueError("scales: give block= (16 or 32) with the scales")
        def scale_codes(v):  # float8_e8m0fnu / float8_e4m3fn arrays, or unsigned codes of any width
            v = _np.ascontiguousarray(_np.asarray(v))
            if v.dtype.kind != "u" and v.dtype.itemsize != 1:
                raise TypeError(f"scales: expected 1-byte scale values or unsigned codes, got dtype {v.dtype}")
            return (v if v.dtype.kind == "u" else v.view(_np.uint8)).astype(_np.uint32)

        sa, sb = (scale_codes(v) for v in scales)
    if recipe is not None and not isinstance(recipe, str):
        raise TypeError(f"recipe: expected a recipe profile name, got {type(recipe).__name__}")
    d, f = _core.matmul(A, B, C, M, N, K, at, bt, acc, profile, block, scale_type, sa, sb, model, promote, split_k,
                        recipe, recipe_format)
    if raw:
        out = d if acc == "f32" else d.astype(_np.uint16)
    else:
        out = d.view(_np.float32) if acc == "f32" else d.astype(_np.uint16).view(_np.float16)
    return (out, f) if flags else out
