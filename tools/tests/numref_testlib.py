"""Helpers shared by numref's Python tests (tools/tests/, conformance/tests/).

  VerbChecks   the failures of one test program, and `numref VERB ...` with its exit status checked
  splitmix64   the generator of docs/quantize.md (`--seed`), written here independently of
               reference/include/numref/splitmix64.hpp
  ml_dtypes_formats()  format name (spec §2.1) -> NumPy / ml_dtypes dtype, for the formats
               NumPy and ml_dtypes implement

Standard library only at import time; ml_dtypes_formats() imports numpy and ml_dtypes.
A test program in another directory puts this one on sys.path first.
"""
import subprocess


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


def numref_cast_codes(numref, src, dst, codes, r=None, options=()):
    """`numref cast --from SRC --to DST OPTIONS` on the integer codes (and, for --round sr, the
    random values r, one per code); returns the result codes as an int64 NumPy array. A non-zero
    exit or a wrong number of lines raises SystemExit naming the cast."""
    import numpy as np
    rows = codes.tolist() if r is None else zip(codes.tolist(), r.tolist())
    text = "".join(f"{c:x}\n" for c in rows) if r is None else "".join(f"{c:x} {v:x}\n" for c, v in rows)
    p = subprocess.run([numref, "cast", "--from", src, "--to", dst, *options], input=text.encode(),
                       capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: numref cast {src}->{dst} {' '.join(options)} exited {p.returncode}: "
                         f"{p.stderr.decode().strip()}")
    out = np.array([int(line.split()[0], 16) for line in p.stdout.decode().splitlines()], dtype=np.int64)
    if len(out) != len(codes):
        raise SystemExit(f"FAIL: numref cast {src}->{dst} wrote {len(out)} lines for {len(codes)} cases")
    return out
