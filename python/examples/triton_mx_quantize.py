"""An MX quantizer written in Triton, checked bit for bit by numref.conform.check.

The kernel: f32 -> f8e4m3fn in 1 x 32 blocks along each row, the OCP MX FLOOR scale (spec §16.2:
e = floor(log2 amax) - 8, clamped to [-127, 127], stored as the E8M0 code e + 127), elements
x * 2^-e rounded to nearest even and saturated to +-448 (§19.1, §19.2), a block holding a NaN or
an Inf poisoned (§13.3: scale FF, every code 7F). Everything is integer arithmetic on the bit
patterns, so the same kernel runs on a GPU and under Triton's CPU interpreter.

Run it on the CPU (no GPU needed):

    TRITON_INTERPRET=1 python3 python/examples/triton_mx_quantize.py

It prints numref's report (the conformance runner's suites and golden vectors for
quantize f32 -> f8e4m3fn under the ocp profile, those this kernel implements) and exits 0 when
every case matched, 1 on a mismatch. ``--bug`` breaks the rounding (ties away from zero) to show
a FAIL line. ``--record FILE.npz`` also writes the kernel's results per case (keyed by the case's
parameter text and input bytes): python/tests/test_triton_recorded.py replays them through the
same check in numref's default test suite, where Triton is not installed.
"""
import hashlib
import sys

import numpy as np

import torch
import triton
import triton.language as tl

import numref.conform

BLOCK = 32


@triton.jit
def _mx_floor_e4m3_kernel(x_ptr, codes_ptr, scales_ptr, cols, n_blocks_per_row, TIES_AWAY: tl.constexpr,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < cols
    bits = tl.load(x_ptr + row * cols + offs, mask=mask, other=0).to(tl.int32, bitcast=True)
    mag = bits & 0x7FFFFFFF
    special = tl.max(tl.where(mask & (mag >= 0x7F800000), 1, 0), axis=0)  # a NaN or an Inf poisons
    amax = tl.max(tl.where(mask, mag, 0), axis=0)
    # e = floor(log2 amax) - emax_elem(8); a subnormal or zero amax gives e < -127: clamped
    e = tl.minimum(tl.maximum(((amax >> 23) & 0xFF) - 127 - 8, -127), 127)
    # 2^-e as a binary32 bit pattern (2^-127 is the subnormal 0x00400000)
    f_bits = tl.where(e == 127, 0x00400000, (127 - e) << 23)
    f = f_bits.to(tl.float32, bitcast=True)
    x = bits.to(tl.float32, bitcast=True)
    y = x * f  # RN32, the kernel's first rounding (§19.2 apply=rn32)
    yb = y.to(tl.int32, bitcast=True)
    sign = (yb >> 24) & 0x80
    a = tl.minimum(yb & 0x7FFFFFFF, 0x43E00000)  # saturate to 448 before rounding
    # normal range (|y| >= 2^-6): drop 20 fraction bits, round to nearest even
    keep = (a >> 20) & 1
    half = 0x80000 if TIES_AWAY else 0x7FFFF + keep
    normal = ((a + half) >> 20) - (120 << 3)
    # subnormal range: multiples of 2^-9 -> integer q = |y| * 2^9, rounded to nearest even
    exp = (a >> 23) & 0xFF
    m = (a & 0x7FFFFF) | 0x800000
    s = tl.minimum(tl.maximum(14 - (exp - 127), 0), 31)  # shift taking m to units of 2^-9
    q = m >> s
    rem = m - (q << s)
    halfway = 1 << (s - 1)
    q = q + tl.where((rem > halfway) | ((rem == halfway) & ((q & 1) == 1)), 1, 0)
    q = tl.where(s >= 26, 0, q)  # below 2^-10: rounds to zero
    code = tl.where(exp >= 121, normal, q) | sign
    code = tl.where(special > 0, 0x7F, code)
    tl.store(codes_ptr + row * cols + offs, code.to(tl.uint8), mask=mask)
    scale = tl.where(special > 0, 0xFF, e + 127)
    tl.store(scales_ptr + row * n_blocks_per_row + blk, scale.to(tl.uint8))


def mx_floor_e4m3(x: torch.Tensor, ties_away: bool = False):
    """codes (uint8, x's shape) and E8M0 scales (uint8, one per 1 x 32 block, row-major)."""
    x = x.contiguous()
    rows, cols = x.shape
    nb = triton.cdiv(cols, BLOCK)
    codes = torch.empty((rows, cols), dtype=torch.uint8, device=x.device)
    scales = torch.empty((rows, nb), dtype=torch.uint8, device=x.device)
    _mx_floor_e4m3_kernel[(rows, nb)](x, codes, scales, cols, nb, TIES_AWAY=ties_away, BLOCK=BLOCK)
    return codes, scales


def implements(op) -> bool:
    """The suites this kernel is for: MX FLOOR, 1 x 32 blocks, the default element policy."""
    return (op.rule == "mx-floor" and (op.block_rows, op.block_cols) == (1, BLOCK) and op.apply == "rn32"
            and op.amax_nan == "propagate" and op.amax_inf == "propagate" and op.round == "rne"
            and op.overflow == "saturate" and op.daz == "0" and op.ftz == "0")


CHECK = dict(op="quantize:f32:f8e4m3fn", profile="ocp", level="l2", supported=implements)


def case_key(x, op) -> str:
    """A case's identity: its parameter text and the bytes of its input (row-major of the view)."""
    return hashlib.sha256(op.text.encode() + b"|" + np.ascontiguousarray(x).tobytes()).hexdigest()


def main(argv):
    bug = "--bug" in argv
    record = argv[argv.index("--record") + 1] if "--record" in argv else None
    recorded = {}

    def kernel(x, op):
        codes, scales = mx_floor_e4m3(x, ties_away=bug)
        if record:
            key = case_key(x.numpy(), op)
            recorded[key + "/codes"], recorded[key + "/scales"] = codes.numpy(), scales.numpy()
        return codes, scales

    result = numref.conform.check(kernel, array="torch", **CHECK)
    print(result.text, end="")
    print(result.report())
    if record:
        np.savez_compressed(record, **recorded)
        print(f"recorded {len(recorded) // 2} cases in {record}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
