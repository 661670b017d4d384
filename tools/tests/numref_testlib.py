"""Helpers shared by numref's Python tests (tools/tests/, conformance/tests/).

  VerbChecks   the failures of one test program, and `numref VERB ...` with its exit status checked
  splitmix64   the generator of docs/quantize.md (`--seed`), written here independently of
               reference/include/numref/splitmix64.hpp
  ml_dtypes_formats()  format name (spec §2.1) -> NumPy / ml_dtypes dtype, for the formats
               NumPy and ml_dtypes implement
  LAYOUT, f32_inputs(), code_inputs()  the inputs of the differential tests against other
               libraries (peer_diff.py, gfloat_diff.py): every code of a <= 16-bit format, and
               the structured + seeded random binary32 set
  numref_cast()  `numref cast` on an array of codes through .npy files (or text lines: with r
               values for round=sr, or from a P3109 row), the result codes as an array

Standard library only at import time; ml_dtypes_formats() imports numpy and ml_dtypes, the
differential helpers import numpy.
A test program in another directory puts this one on sys.path first.
"""
import os
import subprocess
import tempfile


class VerbChecks:
    """check() records a failure (and prints it); run() runs `numref VERB ARGS...` and checks
    its exit status; finish() prints the verdict and returns the program's exit status."""

    def __init__(self, numref, verb):
        self.numref, self.verb, self.failures = numref, verb, []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
            print("FAIL:", what)

    def run(self, *args, expect=0):
        p = subprocess.run([self.numref, self.verb, *args], capture_output=True, text=True)
        self.check(p.returncode == expect,
                   f"numref {self.verb} {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stderr}")
        return p

    def finish(self):
        if self.failures:
            print(f"{len(self.failures)} failure(s)")
            return 1
        print(f"all numref {self.verb} CLI checks passed")
        return 0


M64 = (1 << 64) - 1


def splitmix64(seed):
    """The outputs of splitmix64 seeded with `seed` (64-bit wrap-around), without end:
    s += 0x9E3779B97F4A7C15; z = s; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB; z ^ (z >> 31)."""
    s = seed & M64
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def ml_dtypes_formats():
    """Format name (§2.1) -> the NumPy dtype of that format (numpy's own or ml_dtypes')."""
    import ml_dtypes
    import numpy as np
    return {
        "f32": np.float32,
        "bf16": ml_dtypes.bfloat16,
        "f16": np.float16,
        "f8e4m3fn": ml_dtypes.float8_e4m3fn,
        "f8e5m2": ml_dtypes.float8_e5m2,
        "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
        "f6e3m2fn": ml_dtypes.float6_e3m2fn,
        "f6e2m3fn": ml_dtypes.float6_e2m3fn,
        "f4e2m1fn": ml_dtypes.float4_e2m1fn,
    }


# ---- differential tests against other libraries (peer_diff.py, gfloat_diff.py) ------------

# Format name (§2.1) -> (bits, exponent bits, fraction bits).
LAYOUT = {"f32": (32, 8, 23), "bf16": (16, 8, 7), "f16": (16, 5, 10), "f8e4m3fn": (8, 4, 3), "f8e5m2": (8, 5, 2),
          "f8e8m0fnu": (8, 8, 0), "f6e3m2fn": (6, 3, 2), "f6e2m3fn": (6, 2, 3), "f4e2m1fn": (4, 2, 1),
          "f8e4m3fnuz": (8, 4, 3), "f8e5m2fnuz": (8, 5, 2), "f8e4m3b11fnuz": (8, 4, 3), "f8e4m3": (8, 4, 3),
          "f8e3m4": (8, 3, 4)}


def splitmix64_array(seed, count):
    """The first `count` outputs of splitmix64(seed) as a NumPy uint64 array (the same numbers
    as the generator above; state i is seed + i * 0x9E3779B97F4A7C15 mod 2^64)."""
    import numpy as np
    with np.errstate(over="ignore"):
        s = np.uint64(seed & M64) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (s ^ (s >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def f32_structured():
    """The structured binary32 codes (sorted): both signs x every exponent field x the fractions
    0, 1, 2, all ones, all ones - 1 and a few others; for the target fraction widths m = 0, 1, 2, 3
    (E8M0, FP4, FP6, FP8) every grid point and tie of the binade +- 1 ulp (so every target's max
    finite, the overflow tie and just beyond); for m = 7, 10 (bf16, f16) the first two and the last
    ties and the last grid point +- 1 ulp; f32 max finite, +-Inf, subnormals, +-0 and NaN payloads of
    both signs (quiet and signaling)."""
    fracs = {0, 1, 2, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x400001, 0x3FFFFF, 0x5FFFFF, 0x600000, 0x200000, 0x100000}
    for m in (0, 1, 2, 3, 7, 10):
        half = 1 << (22 - m)  # half a target ulp: tie points are its odd multiples, grid points its even ones
        ks = range(1 << (m + 1)) if m <= 3 else (1, 3, (1 << (m + 1)) - 2, (1 << (m + 1)) - 1)
        fracs |= {(k * half + d) & 0x7FFFFF for k in ks for d in (-1, 0, 1)}
    s = {(sg << 31) | (e << 23) | f for sg in (0, 1) for e in range(256) for f in fracs}
    s |= {0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x00000001, 0x80000001, 0x007FFFFF}
    s |= {0x7FC00000 | p for p in (0, 1, 0x1234, 0x3FFFFF)} | {0x7F800000 | p for p in (1, 0x2000, 0x3FFFFF)}
    s |= {c | 0x80000000 for c in list(s) if (c & 0x7F800000) == 0x7F800000}
    return sorted(s)


def f32_inputs(n, seed=20240601):
    """The structured binary32 set, then the high halves of splitmix64(seed) in stream order, each
    new code added until there are n (or the structured set alone if it is larger); sorted
    int64 array."""
    import numpy as np
    base = np.array(f32_structured(), dtype=np.int64)
    if n <= len(base):
        return base
    count = (n - len(base)) * 101 // 100 + 4096  # room for the repeats of 32-bit codes
    while True:
        stream = (splitmix64_array(seed, count) >> np.uint64(32)).astype(np.int64)
        fresh = stream[~np.isin(stream, base)]
        _, first = np.unique(fresh, return_index=True)
        if len(first) >= n - len(base):
            keep = fresh[np.sort(first)[:n - len(base)]]
            return np.sort(np.concatenate([base, keep]))
        count *= 2


def code_inputs(fmt, f32_count):
    """Every code of a <= 16-bit format, or f32_inputs(f32_count) for f32; int64 array."""
    import numpy as np
    bits = LAYOUT[fmt][0]
    return np.arange(1 << bits, dtype=np.int64) if bits <= 16 else f32_inputs(f32_count)


_NPY_STORAGE = {32: "<f4", 16: "<u2", 8: "|u1", 6: "|u1", 4: "|u1"}  # numref cast --input/--output dtypes


def numref_cast(numref, src, dst, codes, args=(), r=None):
    """`numref cast --from src --to dst ARGS` on the int64 array `codes`; the result codes as an
    int64 array. Without r the codes go through --input / --output .npy files; with r (round=sr,
    one value per code) through text lines 'code r'. A failing run raises SystemExit naming it."""
    import numpy as np
    cmd = [numref, "cast", "--from", src, "--to", dst, *args]
    if r is not None or src not in LAYOUT:  # round=sr, or a row with no .npy mapping here (P3109)
        text = ("".join(f"{c:x}\n" for c in codes.tolist()) if r is None
                else "".join(f"{c:x} {v:x}\n" for c, v in zip(codes.tolist(), r.tolist())))
        p = subprocess.run(cmd, input=text.encode(), capture_output=True)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr.decode().strip()}")
        out = np.array([int(line.split()[0], 16) for line in p.stdout.decode().splitlines()], dtype=np.int64)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            fin, fout = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
            store = _NPY_STORAGE[LAYOUT[src][0]]
            raw = codes.astype(np.uint32 if LAYOUT[src][0] == 32 else np.uint16 if LAYOUT[src][0] == 16 else np.uint8)
            np.save(fin, raw.view(np.float32) if store == "<f4" else raw.astype(np.dtype(store)))
            p = subprocess.run(cmd + ["--input", fin, "--output", fout], capture_output=True)
            if p.returncode != 0:
                raise SystemExit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr.decode().strip()}")
            res = np.load(fout)
            width = res.dtype.itemsize
            out = res.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[width]).astype(np.int64)
    if len(out) != len(codes):
        raise SystemExit(f"FAIL: {' '.join(cmd)} wrote {len(out)} results for {len(codes)} cases")
    return out
