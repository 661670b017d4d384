#!/usr/bin/env python3
"""numref pipe-protocol example backend (Python, standard library only).   spec §33

Run it under the conformance runner:

    numref conform --backend pipe:'python3 conformance/examples/pipe_backend.py' --profile ocp

It implements casts between f32, bf16, f16, f8e4m3fn and f8e5m2 (every pair except
f32 -> f32), with round=rne or rtz, both overflow modes, every NaN policy, and
inf_sat=max|keep; and one tensor operation: `quantize` with the per-tensor FP32 amax
scale (rule=amax, partition=tensor, spec §14.1, §19.2) from f32 / bf16 / f16 into
f8e4m3fn / f8e5m2; and one matrix multiply: `mma` under the profile `ideal` (spec §37: the
exact A·B + C rounded once to binary32) with A and B in any of those five formats and C in
f32, without block scales. Everything else it answers "no" to, and the runner counts those suites
as skipped. It reports no exception flags (flags=no) and no quantize counts, so the
runner compares result codes (and scales) only and says so.

The protocol, in short (docs/conformance.md has the full text):
    runner:  numref-pipe 1
    backend: numref-pipe 1 name=... version=... ops=cast profiles=ocp flags=no
    backend: ready                          (optionally preceded by "departure ..." lines)
    runner:  supports cast <from> <to> <profile|none> <key=value policy>
    backend: yes | no
    runner:  run cast <n> <from> <to> <profile|none> <key=value policy>
    runner:  n lines: <x in hex> [<r in hex> when round=sr]
    backend: n lines: <result in hex> [<flags in hex> when flags=yes], then: end
    runner:  quit
    runner:  run quantize <n> src=f32 elem=f8e4m3fn shape=RxC partition=tensor ... (key=value)
    runner:  n lines: <x0,x1,...>  (the source codes, row-major)
    backend: n lines: <code0,code1,...> <scale0,...>, then: end
    runner:  run mma <n> profile=ideal a=f8e4m3fn b=f8e4m3fn c=f32 shape=MxN k=K
    runner:  n lines: <a codes> <b codes> <c codes>  (row-major, values separated by ',')
    backend: n lines: <d codes>, then: end
A backend may answer "error <message>" instead of a reply.
"""
import sys
from fractions import Fraction

# name: (storage bits, exponent bits, fraction bits, bias, family) — spec §2.1.
# family "ieee": Inf and NaN at the all-ones exponent; "fn": NaN only at all-ones, no Inf.
FORMATS = {
    "f32": (32, 8, 23, 127, "ieee"),
    "bf16": (16, 8, 7, 127, "ieee"),
    "f16": (16, 5, 10, 15, "ieee"),
    "f8e4m3fn": (8, 4, 3, 7, "fn"),
    "f8e5m2": (8, 5, 2, 15, "ieee"),
}


class Fmt:
    def __init__(self, name):
        self.name = name
        self.bits, self.e, self.m, self.bias, self.family = FORMATS[name]
        self.sign_bit = 1 << (self.bits - 1)
        self.mag_mask = self.sign_bit - 1
        self.exp_ones = (1 << self.e) - 1
        self.emin = 1 - self.bias
        self.qmin = self.emin - self.m
        if self.family == "ieee":
            self.max_code = ((self.exp_ones - 1) << self.m) | ((1 << self.m) - 1)
            self.canonical_nan = (self.exp_ones << self.m) | (1 << (self.m - 1))
        else:  # fn: all-ones magnitude is NaN, the code below it is the largest number
            self.max_code = self.mag_mask - 1
            self.canonical_nan = self.mag_mask

    def decode(self, code):
        """(kind, sign, a, b): ('num', s, sig, exp) means (-1)^s * sig * 2^exp."""
        sign = 1 if code & self.sign_bit else 0
        mag = code & self.mag_mask
        ef, frac = mag >> self.m, mag & ((1 << self.m) - 1)
        if self.family == "ieee" and ef == self.exp_ones:
            return ("nan", sign, frac, 0) if frac else ("inf", sign, 0, 0)
        if self.family == "fn" and mag == self.mag_mask:
            return ("nan", sign, frac, 0)
        if ef == 0:
            return ("num", sign, frac, self.qmin)
        return ("num", sign, (1 << self.m) | frac, ef - self.bias - self.m)


def convert(x, src, dst, pol):
    kind, sign, a, b = src.decode(x)
    s = dst.sign_bit if sign else 0
    if kind == "nan":  # spec §6.3
        nan = pol["nan"]
        if nan == "ones":
            return dst.mag_mask
        if nan == "canonical":
            return dst.canonical_nan
        if nan == "sign" or dst.family == "fn":
            return dst.canonical_nan | s
        # payload: the fraction truncated / zero-extended, quiet bit set
        frac = a >> (src.m - dst.m) if src.m >= dst.m else a << (dst.m - src.m)
        return s | (dst.exp_ones << dst.m) | (frac & ((1 << dst.m) - 1)) | (1 << (dst.m - 1))
    if kind == "inf":  # spec §6.2
        if pol["overflow"] == "saturate" and pol["inf_sat"] == "max":
            return dst.max_code | s
        if dst.family == "ieee":
            return (dst.exp_ones << dst.m) | s
        return dst.canonical_nan | s
    sig, exp = a, b
    if sig == 0:
        return s
    # spec §4.1: the quantum of the result, the truncated candidate and the discarded bits
    e = exp + sig.bit_length() - 1
    q = max(e - dst.m, dst.qmin)
    shift = q - exp
    if shift <= 0:
        n, up = sig << -shift, False
    else:
        n, rem, half = sig >> shift, sig & ((1 << shift) - 1), 1 << (shift - 1)
        if pol["round"] == "rne":
            up = rem > half or (rem == half and n & 1 == 1)
        else:  # rtz
            up = False
    n += 1 if up else 0
    if n == 1 << (dst.m + 1):  # carried into the next binade
        n, q = n >> 1, q + 1
    if n == 0:
        return s
    code = n if n < (1 << dst.m) else ((q + dst.m + dst.bias) << dst.m) | (n - (1 << dst.m))
    if n >= (1 << dst.m) and q + dst.m + dst.bias > dst.exp_ones:
        code = dst.max_code + 1  # beyond any code: an overflow
    if code > dst.max_code:  # spec §6.1
        if pol["overflow"] == "saturate" or pol["round"] == "rtz":
            return dst.max_code | s
        if dst.family == "ieee":
            return (dst.exp_ones << dst.m) | s
        return dst.canonical_nan | s
    return code | s


def value_of(code, fmt):
    """The exact value of a finite code as a Fraction (spec §3.1)."""
    kind, sign, sig, exp = fmt.decode(code)
    v = Fraction(sig) * (Fraction(2) ** exp)
    return -v if sign else v


def rn32(v):
    """RN32 (spec §1.2): the binary32 code nearest to the exact value v, ties to even,
    overflow to Inf. Exact arithmetic: no double rounding through Python's floats."""
    sign = 0x80000000 if v < 0 else 0
    v = abs(v)
    if v == 0:
        return sign
    e = v.numerator.bit_length() - v.denominator.bit_length()
    if Fraction(2) ** e > v:
        e -= 1  # now 2^e <= v < 2^(e+1)
    q = max(e, -126) - 23  # the quantum of v's binade (subnormals included)
    n = v / Fraction(2) ** q
    whole = n.numerator // n.denominator
    frac = n - whole
    if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and whole & 1):
        whole += 1
    if whole == 1 << 24:
        whole, q = whole >> 1, q + 1
    if whole < 1 << 23:  # subnormal (or zero)
        return sign | whole
    field = q + 23 + 127
    if field >= 255:
        return sign | 0x7F800000
    return sign | (field << 23) | (whole - (1 << 23))


def quantize_amax(xs, src, dst, pol):
    """§14.1 S = RN32(q_max / amax) (clamped to FLT_MAX, 1.0 for amax 0), §19.2 codes of
    RN32(x * S); a NaN or Inf poisons the tensor (§13.3): scale NaN, every code NaN."""
    f32 = Fmt("f32")
    if any(src.decode(x)[0] != "num" for x in xs):
        nan = convert(0x7FC00000, f32, dst, pol)  # the canonical binary32 NaN, converted
        return [nan] * len(xs), 0x7FC00000
    amax = max(abs(value_of(x, src)) for x in xs)
    qmax = value_of(dst.max_code, dst)
    s = 0x3F800000 if amax == 0 else min(rn32(qmax / amax), 0x7F7FFFFF)
    sv = value_of(s, f32)
    codes = []
    for x in xs:
        v = value_of(x, src)
        y = rn32(v * sv)
        if v == 0 and src.decode(x)[1]:
            y = 0x80000000  # -0 * S = -0
        codes.append(convert(y, f32, dst, pol))
    return codes, s


def parse_quantize(words):
    """words = key=value parameters of a quantize suite -> (src, dst, policy, n) or None."""
    kv = dict(w.split("=", 1) for w in words)
    want = {"partition": "tensor", "transpose": "0", "rule": "amax", "amax_nan": "propagate",
            "amax_inf": "propagate", "apply": "rn32", "round": "rne", "overflow": "saturate",
            "inf_sat": "max", "daz": "0", "ftz": "0"}
    if any(kv.get(k) != v for k, v in want.items()):
        return None
    if kv.get("src") not in ("f32", "bf16", "f16") or kv.get("elem") not in ("f8e4m3fn", "f8e5m2"):
        return None
    if kv.get("nan") not in SUPPORTED["nan"]:
        return None
    rows, cols = (int(v) for v in kv["shape"].split("x"))
    return Fmt(kv["src"]), Fmt(kv["elem"]), kv, rows * cols


SUPPORTED = {
    "round": {"rne", "rtz"},
    "overflow": {"saturate", "nonsat"},
    "inf_sat": {"max", "keep"},
    "nan": {"payload", "sign", "canonical", "ones"},
    "daz": {"0"},
    "ftz": {"0"},
}


def parse(words):
    """words = [from, to, profile, key=value ...] -> (src, dst, policy) or None."""
    if len(words) < 3 or words[0] not in FORMATS or words[1] not in FORMATS:
        return None
    if words[0] == "f32" and words[1] == "f32":
        return None
    pol = dict(w.split("=", 1) for w in words[3:])
    for key, allowed in SUPPORTED.items():
        if pol.get(key) not in allowed:
            return None
    return Fmt(words[0]), Fmt(words[1]), pol


def parse_mma(words):
    """words = [key=value ...] of an mma suite (spec §34.12) -> (a, b, m, n, k) or None: only the
    profile `ideal` with a binary32 C and no block scales."""
    kv = dict(w.split("=", 1) for w in words if "=" in w)
    if kv.get("profile") != "ideal" or kv.get("c") != "f32" or "block" in kv:
        return None
    if kv.get("a") not in FORMATS or kv.get("b") not in FORMATS:
        return None
    m, n = (int(v) for v in kv["shape"].split("x"))
    return Fmt(kv["a"]), Fmt(kv["b"]), m, n, int(kv["k"])


def mma_ideal(a, b, c, fa, fb, m, n, k):
    """spec §37: each d_ij = RN32(c_ij + sum_k a_ik b_kj), the exact sum rounded once; a NaN
    operand, Inf x 0 or +Inf and -Inf give 7fc00000; -0 only when every addend is -0."""
    f32 = Fmt("f32")
    out = []
    for i in range(m):
        for j in range(n):
            terms = [(a[i * k + t], fa, b[t * n + j], fb) for t in range(k)]
            nan = pinf = ninf = False
            total = Fraction(0)
            all_neg_zero = True
            for x, fx, y, fy in terms:
                kx, sx = fx.decode(x)[:2]
                ky, sy = fy.decode(y)[:2]
                if kx == "nan" or ky == "nan":
                    nan = True
                elif kx == "inf" or ky == "inf":
                    zero = (kx != "inf" and value_of(x, fx) == 0) or (ky != "inf" and value_of(y, fy) == 0)
                    if zero:
                        nan = True
                    elif sx != sy:
                        ninf = True
                    else:
                        pinf = True
                else:
                    p = value_of(x, fx) * value_of(y, fy)
                    if p != 0 or sx == sy:
                        all_neg_zero = False
                    total += p
            cc = c[i * n + j]
            kc, sc = f32.decode(cc)[:2]
            if kc == "nan":
                nan = True
            elif kc == "inf":
                ninf, pinf = ninf or sc, pinf or not sc
            else:
                if value_of(cc, f32) != 0 or not sc:
                    all_neg_zero = False
                total += value_of(cc, f32)
            if nan or (pinf and ninf):
                out.append(0x7FC00000)
            elif pinf or ninf:
                out.append(0xFF800000 if ninf else 0x7F800000)
            elif total == 0:
                out.append(0x80000000 if all_neg_zero else 0)
            else:
                out.append(rn32(total))
    return out


def main():
    out = sys.stdout
    line = sys.stdin.readline()
    if not line.startswith("numref-pipe 1"):
        out.write("error expected 'numref-pipe 1'\n")
        return
    # abi=1.9: the C ABI version whose knob values and families this backend was written for (spec §33.2)
    out.write("numref-pipe 1 name=python-example version=1 ops=cast,quantize,mma profiles=ocp flags=no counts=no "
              "abi=1.9\n")
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return
        if words[0] == "supports":
            if words[1] == "quantize":
                ok = parse_quantize(words[2:]) is not None
            elif words[1] == "mma":
                ok = parse_mma(words[2:]) is not None
            else:
                ok = words[1] == "cast" and parse(words[2:]) is not None
            out.write("yes\n" if ok else "no\n")
        elif words[0] == "run" and words[1] == "mma":  # spec §33.9
            cases = [sys.stdin.readline() for _ in range(int(words[2]))]
            spec = parse_mma(words[3:])
            if spec is None:
                out.write("error unsupported request\n")
            else:
                fa, fb, m, n, k = spec
                for line_ in cases:
                    cols = [[int(h, 16) for h in col.replace("/", ",").split(",")] for col in line_.split()]
                    d = mma_ideal(cols[0], cols[1], cols[2], fa, fb, m, n, k)
                    out.write(",".join("%08x" % v for v in d) + "\n")
                out.write("end\n")
        elif words[0] == "run" and words[1] == "quantize":
            n = int(words[2])
            cases = [sys.stdin.readline() for _ in range(n)]
            spec = parse_quantize(words[3:])
            if spec is None:
                out.write("error unsupported request\n")
            else:
                src, dst, pol, count = spec
                for c in cases:
                    xs = [int(h, 16) for h in c.split()[0].split(",")]
                    if len(xs) != count:
                        out.write("error expected %d values\n" % count)
                        break
                    codes, scale = quantize_amax(xs, src, dst, pol)
                    out.write(",".join("%02x" % k for k in codes) + " %08x\n" % scale)
                else:
                    out.write("end\n")
        elif words[0] == "run":
            n = int(words[2])
            cases = [sys.stdin.readline() for _ in range(n)]
            conv = parse(words[3:]) if words[1] == "cast" else None
            if conv is None:
                out.write("error unsupported request\n")
            else:
                src, dst, pol = conv
                digits = 2 if dst.bits <= 8 else 4 if dst.bits <= 16 else 8
                res = [format(convert(int(c.split()[0], 16), src, dst, pol), "0%dx" % digits) for c in cases]
                for r in res:
                    out.write(r + "\n")
                out.write("end\n")
        else:
            out.write("error unknown command '%s'\n" % words[0])
        out.flush()


if __name__ == "__main__":
    main()
