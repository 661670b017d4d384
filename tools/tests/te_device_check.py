#!/usr/bin/env python3
"""Device check (scripts/gpu-check.sh step te-kernels): TransformerEngine's own CUDA quantizers on
the blocks where its CPU test references and the te_* profiles part (issue 30 item 5,
docs/profiles.md), against `numref quantize --profile P`.

usage: te_device_check.py NUMREF
  Needs a GPU and TransformerEngine (transformer_engine.pytorch) with a CUDA torch. Exit 0 when
  every element code agrees, 1 on a difference, 77 when TransformerEngine or a GPU is missing.

Blocks (row 0 of a 128 x 128 binary32 tensor, the other rows zero):
  - code 00: x = 0x800011B4 in a block of amax 0x00019422 (te_mxfp8: 0x80, te_mxfp8_2_13: 0x81);
  - NaN and Inf: [NaN, 448, ...], [Inf, 1, -1, ...] (the kernels ignore NaN in the amax; an Inf
    amax gives scale 1.0 for the FP8 current / block recipes, E8M0 FE for MXFP8).
MXFP8 is compared with te_mxfp8_2_13 for TE >= 2.13 and te_mxfp8 before (the exp2f_rcp change of
commit 71971e33d); the codes of row 0 are compared (the scale layouts differ between quantizers).

NVFP4 (issue 30 item 4; NVFP4Quantizer, a GPU with FP4 conversions: Blackwell): te_nvfp4 (1 x 16) and
te_nvfp4_2d (with_2d_quantization, 16 x 16) on the elements where TE's CPU reference
(pytorch/custom_recipes/reference_nvfp4.py) and the kernel's cvt.rn.satfinite.e2m1x2.f32 may part,
which the profiles answer as the kernel (docs/profiles.md): a NaN element ([NaN, 1, -1, ...]: the
reference gives code 0, numref 0x7, cvt's NaN), -0 ([1, -0, ...]: reference 0x0, numref 0x8) and an
Inf tensor ([Inf, 1, -1, ...]: S_enc = 1.0). Row 0's FP4 codes (two per byte, low nibble first).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

BLOCKS = {
    "code00": [0x00019422, 0x800011B4],
    "nan": [0x7FC00000, 0x43E00000, 0x3F800000],
    "inf": [0x7F800000, 0x3F800000, 0xBF800000],
}


def tensor_of(vals):
    x = np.zeros((128, 128), dtype=np.uint32)
    x[0, :len(vals)] = vals
    return x


def numref_codes(numref, x, prof, fmt, tmp):
    inp, out = os.path.join(tmp, "x.npy"), os.path.join(tmp, "out")
    np.save(inp, x.view(np.float32))
    cmd = [numref, "quantize", "--input", inp, "--format", fmt, "--profile", prof, "--out", out, "--max-blocks", "0"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"numref failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return np.load(out + ".codes.npy").reshape(128, 128)[0]


NVFP4_BLOCKS = {
    "nan": [0x7FC00000, 0x3F800000, 0xBF800000],
    "negzero": [0x3F800000, 0x80000000, 0xBF800000],
    "inf": [0x7F800000, 0x3F800000, 0xBF800000],
}


def nvfp4_checks(numref, dev, tmp):
    """te_nvfp4 / te_nvfp4_2d against NVFP4Quantizer (rowwise data: 128 x 64 bytes of FP4 pairs)."""
    import torch
    import transformer_engine_torch as tex
    try:
        from transformer_engine.pytorch.tensor.nvfp4_tensor import NVFP4Quantizer
    except ImportError as e:
        print(f"nvfp4: not run: {e}")
        return 0
    bad = 0
    for prof, two_d in (("te_nvfp4", False), ("te_nvfp4_2d", True)):
        for name, vals in NVFP4_BLOCKS.items():
            x = tensor_of(vals)
            q = NVFP4Quantizer(tex.DType.kFloat4E2M1, rowwise=True, columnwise=False, with_2d_quantization=two_d)
            try:
                t = q(torch.from_numpy(x.view(np.float32).copy()).to(dev))
            except RuntimeError as e:  # no FP4 conversions on this GPU
                print(f"{prof} {name}: not run: {str(e).splitlines()[0]}")
                continue
            d = t._rowwise_data.view(torch.uint8).cpu().numpy().reshape(128, 64)[0]
            got = np.stack([d & 0xF, d >> 4], -1).reshape(-1)
            want = numref_codes(numref, x, prof, "f4e2m1fn", tmp)
            diff = np.nonzero(got != want)[0]
            bad += diff.size
            print(f"{prof} {name}: {diff.size} differing codes" +
                  "".join(f"; [{i}] x={int(x[0, i]):#010x} TE {int(got[i]):#x} numref {int(want[i]):#x}"
                          for i in diff[:4]))
    return bad


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import torch
        import transformer_engine
        import transformer_engine_torch as tex
        from transformer_engine.pytorch.tensor.float8_blockwise_tensor import Float8BlockQuantizer
        from transformer_engine.pytorch.tensor.float8_tensor import Float8CurrentScalingQuantizer
        from transformer_engine.pytorch.tensor.mxfp8_tensor import MXFP8Quantizer
    except ImportError as e:
        print(f"te_device_check: not run: {e} (TransformerEngine is not installed)")
        return 77
    if not torch.cuda.is_available():
        print("te_device_check: not run: no CUDA device")
        return 77
    ver = tuple(int(v) for v in transformer_engine.__version__.split(".")[:2])
    mx_prof = "te_mxfp8_2_13" if ver >= (2, 13) else "te_mxfp8"
    dev = torch.device("cuda")
    e4m3 = tex.DType.kFloat8E4M3
    quantizers = {
        mx_prof: (lambda: MXFP8Quantizer(e4m3, rowwise=True, columnwise=False), "_rowwise_data"),
        "te_float8_current": (lambda: Float8CurrentScalingQuantizer(e4m3, dev, columnwise=False), "_data"),
        "te_float8_current_pow2": (lambda: Float8CurrentScalingQuantizer(e4m3, dev, columnwise=False,
                                                                         force_pow_2_scales=True), "_data"),
        "te_float8_block": (lambda: Float8BlockQuantizer(e4m3, rowwise=True, columnwise=False, force_pow_2_scales=True,
                                                         block_scaling_dim=1), "_rowwise_data"),
        "te_float8_block_f32": (lambda: Float8BlockQuantizer(e4m3, rowwise=True, columnwise=False,
                                                             force_pow_2_scales=False, block_scaling_dim=1),
                                "_rowwise_data"),
    }
    bad = 0
    print(f"TransformerEngine {transformer_engine.__version__}, {torch.cuda.get_device_name()}")
    with tempfile.TemporaryDirectory() as tmp:
        for prof, (make, field) in quantizers.items():
            for name, vals in BLOCKS.items():
                x = tensor_of(vals)
                t = make()(torch.from_numpy(x.view(np.float32).copy()).to(dev))
                got = getattr(t, field).view(torch.uint8).cpu().numpy().reshape(128, 128)[0]
                want = numref_codes(sys.argv[1], x, prof, "f8e4m3fn", tmp)
                diff = np.nonzero(got != want)[0]
                bad += diff.size
                print(f"{prof} {name}: {diff.size} differing codes" +
                      "".join(f"; [{i}] x={int(x[0, i]):#010x} TE {int(got[i]):#04x} numref {int(want[i]):#04x}"
                              for i in diff[:4]))
        bad += nvfp4_checks(sys.argv[1], dev, tmp)
    print(f"te_device_check: {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
