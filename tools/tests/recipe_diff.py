#!/usr/bin/env python3
"""Differential test: `numref quantize --profile P` against the torchao recipe that P names.

spec §10.4 (recipe profiles), §13.5 – §13.7, §16.8, §16.9, §16.11, §19.8 – §19.10; docs/profiles.md.

usage: recipe_diff.py NUMREF [--blocks N] [--profiles a,b,...] [--formats f,g,...] [--record F.npz | --replay F.npz]
                      [--microxcaling DIR] [--nan-payloads shared|distinct] [--library TEXT]
  NUMREF: the numref CLI.  --blocks N: blocks per (profile, element format) (default 100 000).
  Profiles: torchao_mx_floor, torchao_mx_ceil, torchao_mx_even, torchao_mx_rceil (torchao 0.18
  prototype.mx_formats.mx_tensor.to_mx, block 32, CPU eager) with the element formats f8e4m3fn,
  f8e5m2, f6e2m3fn, f6e3m2fn, f4e2m1fn; torchao_float8 and torchao_float8_pow2 (torchao 0.18
  float8.float8_utils.tensor_to_scale, rowwise = axiswise dim -1, then x * scale clamped and
  cast as hp_tensor_and_scale_to_float8 does) with f8e4m3fn and f8e5m2, plus 24 tensorwise
  tensors of 16 x 32 (the first blocks, which include the zero, NaN and Inf examples).

Each block is 32 binary32 values; the mix (seeded): random magnitudes over the whole exponent
range, random finite bit patterns, all-zero blocks (both zero signs), blocks with NaN (quiet
0x7FC00000 / 0xFFC00000), with +-Inf, with both, subnormal amax, amax within +-4 ulps of
q_max * 2^k for every element format, amax near FLT_MAX, amax at 2^k +- ulps. Every stored scale
and every element code must be equal, NaN bits included. Prints one line per (profile, format)
and exits 1 on any difference (listing the first), 0 when there is none. A missing torchao is
a failure, never a skip: install it with NUMREF_PEERS=1 scripts/setup.sh.

Profile torchao_float8_inference (not in the default --profiles): torchao 0.18 float8 inference,
quantization/quant_primitives.py _choose_scale_float8 + _quantize_affine_float8 (what
Float8Tensor.from_hp runs with the torch kernel), per row (block [1, 32]) and per tensor, on the
binary32 blocks and on bf16 blocks made of their top halves; run it with
ATEN_CPU_CAPABILITY=default (torch's vectorised f32 -> bf16 conversion turns the NaN scale of a bf16
row into 0xFFFF, docs/profiles.md).

Profiles microxcaling and microxcaling_even (not in the default --profiles): microxcaling's
mx/mx_ops.py _quantize_mx (CPU path, scale_bits 8, block 32 along the last axis, round "nearest" /
"even") from a checkout named by
--microxcaling DIR (it is not on PyPI), against `numref quantize --profile microxcaling
--fake-quant f32`: microxcaling returns fake-quantized binary32 values, so those are compared,
NaN bits included. Run it with ATEN_CPU_CAPABILITY=default (torch's scalar kernels: the profile's
NaN rule, spec §13.7 first_nan) and --nan-payloads shared (NaNs with payloads, both signs, quiet
and signalling). --nan-payloads distinct gives every NaN its own payload; where two NaNs meet in
one operation IEEE 754 leaves open which one results, and the report counts those separately.

Profiles te_float8_current, te_float8_current_pow2, te_float8_block and te_float8_block_f32 (not
in the default --profiles): TransformerEngine's CPU test references (tests/pytorch/references:
ref_per_tensor_cs_cast for Float8CurrentScaling with force_pow_2_scales off / on, per tensor of 4 x
128; BlockwiseQuantizerReference.quantize for Float8BlockScaling with pow_2_scales on / off, tiles
1 x 128 and 128 x 128) from a checkout named by --te DIR (TransformerEngine is a CUDA package; the
references need torch only), on the blocks without NaN or Inf (there the references and the
kernels the profiles model part: docs/profiles.md), four blocks to a row of 128, as binary32 and
as bf16, with E4M3 and E5M2. Every scale_inv and code must be equal. Live runs also check the
declared departure of te_float8_block_f32 (bf16 tiles of tiny amax).

Profiles deepgemm and deepgemm_f32 (not in the default --profiles): DeepGEMM's
deep_gemm/utils/math.py (plain torch; DeepGEMM itself installs only with CUDA) loaded by path from a
checkout named by --deepgemm DIR: per_token_cast_to_fp8 (blocks 1 x 128) and per_block_cast_to_fp8
(128 x 128 tiles, `--partition block:128x128`) with use_ue8m0=True (deepgemm) and False
(deepgemm_f32), on all the blocks (NaN and Inf ones included), four to a row of 128, as binary32 and
as bf16. Every scale (sf, binary32) and code must be equal. deepgemm_f32's NaN blocks follow torch's
AVX2 / AVX-512 kernels (docs/profiles.md): run it with those (the default on x86-64 that has them).

--record F.npz writes torchao's scales and codes of every check (and the seed, block count,
the inputs' sha256, the torch / torchao versions) to a new file; --replay F.npz compares numref
with such a recording without torch (the default-suite test cli_recipe_torchao_recorded replays
tools/tests/fixtures/torchao-0.18-recipes.npz: 1 024 blocks). A replay regenerates the inputs
from the seed and refuses a NumPy whose generator gives other blocks (sha256).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

FMT_QMAX = {"f8e4m3fn": 448.0, "f8e5m2": 57344.0, "f6e2m3fn": 7.5, "f6e3m2fn": 28.0, "f4e2m1fn": 6.0}
MX_PROFILES = {"torchao_mx_floor": "FLOOR", "torchao_mx_ceil": "CEIL", "torchao_mx_even": "EVEN",
               "torchao_mx_rceil": "RCEIL"}
F8_PROFILES = {"torchao_float8": False, "torchao_float8_pow2": True}
# microxcaling's element format names; its _quantize_mx returns the fake-quantized binary32 tensor
MX_REF_FORMATS = {"f8e4m3fn": "fp8_e4m3", "f8e5m2": "fp8_e5m2", "f6e2m3fn": "fp6_e2m3", "f6e3m2fn": "fp6_e3m2",
                  "f4e2m1fn": "fp4_e2m1", "int8": "int8"}
BLOCK = 32
# the microxcaling profiles and the round argument of _quantize_mx each reproduces
MICROXCALING = {"microxcaling": "nearest", "microxcaling_even": "even", "microxcaling_floor": "floor"}
# the TransformerEngine profiles: (per tensor or per tile, power-of-two scales) of TE's CPU test
# references (tests/pytorch/references: ref_per_tensor_cs_cast, BlockwiseQuantizerReference)
TE_PROFILES = {"te_float8_current": ("tensor", False), "te_float8_current_pow2": ("tensor", True),
               "te_float8_block": ("block", True), "te_float8_block_f32": ("block", False)}
TE_FORMATS = ("f8e4m3fn", "f8e5m2")
# the DeepGEMM profiles: use_ue8m0 of deep_gemm/utils/math.py's per_token_cast_to_fp8 /
# per_block_cast_to_fp8 (f8e4m3fn only; blocks of 128)
DG_PROFILES = {"deepgemm": True, "deepgemm_f32": False}
DG_BLOCK = 128
TE_TILE = 128
# the smallest bf16 amax (bits) for which q_max / amax is finite in binary32 for both E4M3 (448;
# 0x03E1) and E5M2 (57344)
TE_BF16_TINY = 0x0761


def make_blocks(n, seed, nan_payloads=""):
    """n x 32 binary32 bit patterns (uint32). nan_payloads "shared": the NaNs of each NaN block
    then get one random payload, each NaN its own sign and quiet bit, and one NaN block in eight a
    second NaN; "distinct": every NaN its own random payload."""
    rng = np.random.default_rng(seed)
    out = np.zeros((n, BLOCK), dtype=np.uint32)
    kinds = rng.choice(10, size=n, p=[0.30, 0.10, 0.05, 0.06, 0.06, 0.02, 0.08, 0.20, 0.05, 0.08])
    for i in range(n):
        k = kinds[i]
        sign = rng.integers(0, 2, BLOCK, dtype=np.uint32) << 31
        if k == 1:  # random finite bit patterns
            b = rng.integers(0, 0x7F800000, BLOCK, dtype=np.uint32)
            out[i] = b | sign
            continue
        if k == 2:  # all zero
            out[i] = sign
            continue
        # a target amax, then the other elements below it
        if k == 6:  # subnormal amax
            amax = int(rng.integers(1, 0x00800000))
        elif k == 7:  # amax within +-4 ulps of q_max * 2^j (any element format)
            q = float(rng.choice(list(FMT_QMAX.values())))
            j = int(rng.integers(-140, 110))
            base = np.float32(q * 2.0 ** j) if -126 <= j + np.log2(q) < 127 else np.float32(q)
            amax = int(np.array([base], dtype=np.float32).view(np.uint32)[0]) + int(rng.integers(-4, 5))
        elif k == 8:  # near FLT_MAX
            amax = 0x7F7FFFFF - int(rng.integers(0, 0x200000))
        elif k == 9:  # 2^j +- a few ulps
            amax = (int(rng.integers(1, 255)) << 23) + int(rng.integers(-3, 4))
        else:  # random magnitude
            amax = int(rng.integers(0x00000001, 0x7F800000))
        amax = max(1, min(amax, 0x7F7FFFFF))
        mags = rng.integers(0, amax + 1, BLOCK, dtype=np.uint64).astype(np.uint32)
        if rng.random() < 0.3:  # also small elements far below the amax
            mags = (mags >> np.uint32(rng.integers(0, 23))).astype(np.uint32)
        mags[rng.integers(0, BLOCK)] = amax
        b = mags | sign
        if k in (3, 5):  # NaN
            for _ in range(int(rng.integers(1, 3))):
                b[rng.integers(0, BLOCK)] = 0x7FC00000 | (int(rng.integers(0, 2)) << 31)
        if k in (4, 5):  # Inf
            b[rng.integers(0, BLOCK)] = 0x7F800000 | (int(rng.integers(0, 2)) << 31)
        out[i] = b
    out[0] = 0
    out[1, :] = 0x48E00001  # the RCEIL example: amax 448 * 2^10 * (1 + 2^-23)
    out[2, :] = 0x497FFFFF  # pow2 example for float8 (scale near 2^20 for small amax)
    if nan_payloads:  # a generator of its own: the blocks above stay those of the recordings
        g = np.random.default_rng(seed + 1)
        for i in range(n):
            nans = np.nonzero(((out[i] & 0x7F800000) == 0x7F800000) & ((out[i] & 0x007FFFFF) != 0))[0]
            if nans.size == 0:
                continue
            if g.random() < 0.125:
                nans = np.append(nans, g.integers(0, BLOCK))
            payload = int(g.integers(1, 0x00400000))
            for j in nans:
                if nan_payloads == "distinct":
                    payload = int(g.integers(1, 0x00400000))
                quiet = int(g.integers(0, 2)) << 22
                out[i, j] = (int(g.integers(0, 2)) << 31) | 0x7F800000 | quiet | payload
    return out


def torch_codes(t, fmt):
    """uint8 codes of a torchao low-precision tensor (float8 dtypes, unpacked fp6, packed fp4)."""
    import torch
    if fmt in ("f8e4m3fn", "f8e5m2"):
        return t.contiguous().view(torch.uint8).numpy().astype(np.uint8)
    if fmt == "f4e2m1fn":
        p = t.contiguous().view(torch.uint8).numpy().astype(np.uint8).reshape(-1)
        u = np.empty(p.size * 2, dtype=np.uint8)
        u[0::2] = p & 0xF
        u[1::2] = p >> 4
        return u
    return t.contiguous().numpy().astype(np.uint8)


def torchao_mx(x_bits, fmt, mode):
    import torch
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.mx_tensor import to_mx
    dt = {"f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2, "f6e2m3fn": DTYPE_FP6_E2M3,
          "f6e3m2fn": DTYPE_FP6_E3M2, "f4e2m1fn": torch.float4_e2m1fn_x2}[fmt]
    x = torch.from_numpy(x_bits.view(np.float32).copy())
    scale, data = to_mx(x, dt, BLOCK, getattr(ScaleCalculationMode, mode))
    return scale.view(torch.uint8).numpy().reshape(-1).astype(np.uint32), torch_codes(data, fmt).reshape(-1)


def torchao_float8(x_bits, fmt, pow2):
    import torch
    from torchao.float8.config import ScalingGranularity
    from torchao.float8.float8_utils import tensor_to_scale, to_fp8_saturated
    dt = {"f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}[fmt]
    x = torch.from_numpy(x_bits.view(np.float32).copy())
    scale = tensor_to_scale(x, dt, scaling_granularity=ScalingGranularity.AXISWISE, axiswise_dim=-1,
                            round_scales_to_power_of_2=pow2)
    data = to_fp8_saturated(x.to(torch.float32) * scale, dt)  # hp_tensor_and_scale_to_float8
    return scale.view(torch.int32).numpy().reshape(-1).astype(np.uint32), torch_codes(data, fmt).reshape(-1)


def torchao_float8_tensorwise(x_bits, fmt, pow2):
    import torch
    from torchao.float8.float8_utils import tensor_to_scale, to_fp8_saturated
    dt = {"f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}[fmt]
    x = torch.from_numpy(x_bits.view(np.float32).copy())
    scale = tensor_to_scale(x, dt, round_scales_to_power_of_2=pow2)  # TENSORWISE
    data = to_fp8_saturated(x.to(torch.float32) * scale, dt)
    return scale.view(torch.int32).numpy().reshape(-1).astype(np.uint32), torch_codes(data, fmt).reshape(-1)


def torchao_inference(x_bits, fmt, rowwise):
    """torchao 0.18 float8 inference (Float8Tensor.from_hp, torch kernel): _choose_scale_float8 then
    _quantize_affine_float8, per tensor or per row; x_bits uint32 (binary32) or uint16 (bf16)."""
    import torch
    from torchao.quantization.quant_primitives import _choose_scale_float8, _quantize_affine_float8
    dt = {"f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}[fmt]
    if x_bits.dtype == np.uint16:
        x = torch.from_numpy(x_bits.view(np.int16).copy()).view(torch.bfloat16)
    else:
        x = torch.from_numpy(x_bits.view(np.float32).copy())
    block = [1, x.shape[1]] if rowwise else list(x.shape)
    scale = _choose_scale_float8(x, block, dt)
    data = _quantize_affine_float8(x, scale, dt)
    return scale.view(torch.int32).numpy().reshape(-1).astype(np.uint32), torch_codes(data, fmt).reshape(-1)


def microxcaling_mx(x_bits, fmt, rnd="nearest"):
    """microxcaling's _quantize_mx (CPU path, scale_bits 8, block 32 along the last axis, round
    rnd): no scales (it returns values), the fake-quantized binary32 bits."""
    import torch
    from mx.mx_ops import _quantize_mx
    x = torch.from_numpy(x_bits.view(np.float32).copy())
    y = _quantize_mx(x, 8, MX_REF_FORMATS[fmt], axes=[-1], block_size=BLOCK, round=rnd)
    return np.zeros(0, dtype=np.uint32), y.numpy().view(np.uint32).reshape(-1).copy()


def te_inputs(x):
    """The TransformerEngine checks' inputs: the blocks of x without NaN or Inf (TE's references
    and its kernels part there: item 5 of issue 30, docs/profiles.md), four to a row of 128, as
    binary32 ("te_f32") and as bf16 ("te_bf16": their top halves, less the rows whose bf16 amax is
    non-zero and so small that q_max / amax overflows binary32, where te_float8_block_f32 departs: docs/profiles.md)."""
    fin = x[np.all((x & 0x7F800000) != 0x7F800000, axis=1)]
    fin = fin[:fin.shape[0] // 4 * 4].reshape(-1, TE_TILE)
    xb = bf16_of(fin)
    amax = (xb & 0x7FFF).max(axis=1)
    return {"te_f32": fin, "te_bf16": xb[(amax == 0) | (amax >= TE_BF16_TINY)]}


def te_tensor(x_bits):
    import torch
    if x_bits.dtype == np.uint16:
        return torch.from_numpy(x_bits.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(x_bits.view(np.float32).copy())


def te_reference(x_bits, fmt, kind, pow2, tile=(1, TE_TILE)):
    """TE's CPU test references (imported from --te DIR): per tensor ref_per_tensor_cs_cast
    (Float8CurrentScaling, force_pow_2_scales=pow2), per tile BlockwiseQuantizerReference.quantize
    (Float8BlockScaling, pow_2_scales=pow2, eps 0, tiles 1 x 128 or 128 x 128); scale_inv and codes."""
    import torch
    from transformer_engine.pytorch import DType
    dt = {"f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2}[fmt]
    x = te_tensor(x_bits)
    if kind == "tensor":
        from references.ref_per_tensor_cs import ref_per_tensor_cs_cast
        te_dt = {"f8e4m3fn": DType.kFloat8E4M3, "f8e5m2": DType.kFloat8E5M2}[fmt]
        qx, sx, _, _ = ref_per_tensor_cs_cast(x, fp8_dtype=te_dt, force_pow_2_scales=pow2, amax_epsilon=0.0)
    else:
        from references.blockwise_quantizer_reference import BlockwiseQuantizerReference
        r = BlockwiseQuantizerReference().quantize(x, dt, eps=0.0, pow_2_scales=pow2, quant_tile_shape=tile,
                                                   munge_scale_shapes=False)
        qx, sx = r.data, r.scale
    return sx.contiguous().view(torch.int32).numpy().reshape(-1).astype(np.uint32), torch_codes(qx, fmt).reshape(-1)


def te_import(te_dir):
    """Makes TE's tests/pytorch/references importable without TransformerEngine's CUDA package:
    ref_per_tensor_cs imports two names from it (DType, TE_DType_To_Torch), given here."""
    import types
    import torch
    sys.path.insert(0, os.path.join(os.path.abspath(te_dir), "tests", "pytorch"))
    dtype = types.SimpleNamespace(kFloat8E4M3="kFloat8E4M3", kFloat8E5M2="kFloat8E5M2")
    pkg = types.ModuleType("transformer_engine")
    pt = types.ModuleType("transformer_engine.pytorch")
    pt.DType = dtype
    const = types.ModuleType("transformer_engine.pytorch.constants")
    const.TE_DType_To_Torch = {"kFloat8E4M3": torch.float8_e4m3fn, "kFloat8E5M2": torch.float8_e5m2}
    pkg.pytorch = pt
    pt.constants = const
    sys.modules.update({"transformer_engine": pkg, "transformer_engine.pytorch": pt,
                        "transformer_engine.pytorch.constants": const})


def te_checks(tx, profiles):
    """(name, x, numref arguments, TE's (scale_inv, codes), input name) for the TE profiles."""
    out = []
    for prof in profiles:
        kind, pow2 = TE_PROFILES[prof]
        for fmt in TE_FORMATS:
            for inp, xs in tx.items():
                if kind == "block":
                    out.append((f"{prof} {fmt} {inp} 1x128", xs, (prof, fmt), te_reference(xs, fmt, kind, pow2), inp))
                    n = xs.shape[0] // TE_TILE * TE_TILE
                    if n:
                        out.append((f"{prof} {fmt} {inp} 128x128", xs[:n], (prof, fmt, "--partition", "block:128x128"),
                                    te_reference(xs[:n], fmt, kind, pow2, (TE_TILE, TE_TILE)), inp))
                else:  # tensors of 4 rows of 128
                    for t in range(min(24, xs.shape[0] // 4)):
                        xt = xs[t * 4:(t + 1) * 4]
                        out.append((f"{prof} {fmt} {inp} tensor {t}", xt, (prof, fmt),
                                    te_reference(xt, fmt, kind, pow2), inp))
    return out


def te_declared(numref, tmp):
    """The declared departure of te_float8_block_f32 (docs/profiles.md): a bf16 tile of amax 2^-133
    (448 / amax overflows binary32): TE's value_for_inf is bf16's largest finite value, so its
    scale_inv is RN32(1 / 0x7F7F0000) = 0x00202020; numref keeps FLT_MAX: RN32(1 / FLT_MAX) = 0x00200000.
    Returns the number of failures (0 while both hold)."""
    xs = np.zeros((1, TE_TILE), dtype=np.uint16)
    xs[0, 0] = 0x0001
    want = te_reference(xs, "f8e4m3fn", "block", False)[0][0]
    got = numref_run(numref, xs, "f8e4m3fn", "te_float8_block_f32", [], tmp)[0][0]
    ok = int(want) == 0x00202020 and int(got) == 0x00200000
    print(f"te_float8_block_f32 declared departure (bf16 amax 2^-133): TE {int(want):#010x} (0x00202020 "
          f"declared), numref {int(got):#010x} (0x00200000): {'as declared' if ok else 'CHANGED'}")
    return 0 if ok else 1


def dg_inputs(x):
    """The DeepGEMM checks' inputs: every block (NaN and Inf ones too), four to a row of 128, as
    binary32 ("dg_f32") and as bf16 ("dg_bf16", their top halves)."""
    rows = x[:x.shape[0] // 4 * 4].reshape(-1, DG_BLOCK)
    return {"dg_f32": rows, "dg_bf16": bf16_of(rows)}


def dg_import(dg_dir):
    """deep_gemm/utils/math.py of a DeepGEMM checkout, loaded by path (it needs torch only)."""
    import importlib.util
    path = os.path.join(os.path.abspath(dg_dir), "deep_gemm", "utils", "math.py")
    spec = importlib.util.spec_from_file_location("deepgemm_math", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def deepgemm_reference(dg, x_bits, ue8m0, tile):
    """DeepGEMM's per_token_cast_to_fp8 (tile 1 x 128) or per_block_cast_to_fp8 (128 x 128) on CPU:
    sf (binary32 bits, block-row-major) and the e4m3 codes."""
    import torch
    x = te_tensor(x_bits)
    if tile == 1:
        q, sf = dg.per_token_cast_to_fp8(x, use_ue8m0=ue8m0)
    else:
        q, sf = dg.per_block_cast_to_fp8(x, use_ue8m0=ue8m0)
    sf = sf.contiguous().view(torch.int32).numpy().reshape(-1).astype(np.uint32)
    if ue8m0:  # the power of two 2^(c - 127) as binary32: its exponent field is the E8M0 code (pack_ue8m0_to_int)
        if np.any(sf & 0x807FFFFF):
            sys.exit("recipe_diff: DeepGEMM gave a UE8M0 sf that is not a positive power of two")
        sf = sf >> 23
    return sf, torch_codes(q, "f8e4m3fn").reshape(-1)


def dg_checks(dg, dx, profiles):
    """(name, x, numref arguments, DeepGEMM's (sf, codes), input name) for the DeepGEMM profiles."""
    out = []
    for prof in profiles:
        for inp, xs in dx.items():
            out.append((f"{prof} f8e4m3fn {inp} 1x128", xs, (prof, "f8e4m3fn"),
                        deepgemm_reference(dg, xs, DG_PROFILES[prof], 1), inp))
            n = xs.shape[0] // DG_BLOCK * DG_BLOCK
            if n:
                out.append((f"{prof} f8e4m3fn {inp} 128x128", xs[:n], (prof, "f8e4m3fn", "--partition", "block:128x128"),
                            deepgemm_reference(dg, xs[:n], DG_PROFILES[prof], DG_BLOCK), inp))
    return out


def numref_run(numref, x_bits, fmt, prof, extra, tmp):
    inp = os.path.join(tmp, "x.npy")
    if x_bits.dtype == np.uint16:  # bf16 patterns
        np.save(inp, x_bits)
        extra = ["--input-format", "bf16"] + extra
    else:
        np.save(inp, x_bits.view(np.float32))
    prefix = os.path.join(tmp, "out")
    for suffix in (".codes.npy", ".scales.npy"):
        if os.path.exists(prefix + suffix):
            os.remove(prefix + suffix)
    fq = prof in MICROXCALING  # compared on the fake-quantized values
    if fq and os.path.exists(prefix + ".fakequant.npy"):
        os.remove(prefix + ".fakequant.npy")
    cmd = [numref, "quantize", "--input", inp, "--format", fmt, "--profile", prof, "--out", prefix,
           "--max-blocks", "0"] + (["--fake-quant", "f32"] if fq else []) + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"numref failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    if fq:
        return np.zeros(0, dtype=np.uint32), np.load(prefix + ".fakequant.npy").view(np.uint32).reshape(-1)
    codes = np.load(prefix + ".codes.npy").reshape(-1)
    s = np.load(prefix + ".scales.npy")
    scales = (s.view(np.uint32) if s.dtype == np.float32 else s.astype(np.uint32)).reshape(-1)
    return scales, codes


def compare(name, x_bits, got, want):
    (gs, gc), (ws, wc) = got, want
    bad_s = np.nonzero(gs != ws)[0]
    bad_c = np.nonzero(gc != wc)[0]
    what = "values" if gc.dtype == np.uint32 else "codes"
    print(f"{name}: {x_bits.shape[0]} blocks, {gc.size} elements: {bad_s.size} differing scales, "
          f"{bad_c.size} differing {what}")
    for b in bad_s[:5]:
        print(f"  block {b}: scale numref {gs[b]:#x} library {ws[b]:#x}; amax bits "
              f"{max(int(v) & (0x7FFF if x_bits.dtype == np.uint16 else 0x7FFFFFFF) for v in x_bits[b]):#010x}")
    if what == "values" and bad_c.size:
        # IEEE 754 §6.2.3 leaves open which NaN an operation on two NaNs returns: count the
        # differing values where the library returned another NaN of the same block
        flat = x_bits.reshape(-1)
        other = 0
        for i in bad_c:
            b = i // x_bits.shape[1]
            blk = x_bits[b]
            nans = {(int(v) | 0x00400000) & 0x7FFFFFFF for v in blk
                    if (v & 0x7F800000) == 0x7F800000 and (v & 0x007FFFFF) != 0}
            own = (int(flat[i]) | 0x00400000) & 0x7FFFFFFF
            other += int(int(wc[i]) in nans and int(wc[i]) != own and gc[i] == own)
        print(f"  of which {other} are a NaN element given another NaN of its block (two NaN operands)")
    for i in bad_c[:5]:
        b = i // x_bits.shape[1]
        print(f"  element {i} (block {b}) x={int(x_bits.reshape(-1)[i]):#010x}: numref {gc[i]:#x} library {wc[i]:#x}")
    return bad_s.size + bad_c.size


def bf16_of(x):
    """The bf16 inputs of a block set: the top half of each binary32 pattern."""
    return (x >> 16).astype(np.uint16)


def torchao_checks(x, xb, profiles, formats):
    """(name, x, numref arguments, torchao's (scales, codes)) for every check, with torchao run;
    xb = bf16_of(x), the bf16 inputs (checks slice it, and a recording names their rows in it)."""
    out = []
    for prof in profiles:
        for fmt in formats:
            if prof in MX_PROFILES:
                out.append((f"{prof} {fmt}", x, (prof, fmt), torchao_mx(x, fmt, MX_PROFILES[prof])))
            elif prof in F8_PROFILES:
                if fmt not in ("f8e4m3fn", "f8e5m2"):
                    continue
                out.append((f"{prof} {fmt}", x, (prof, fmt, "--partition", "rows"),
                            torchao_float8(x, fmt, F8_PROFILES[prof])))
                # tensorwise: 24 tensors of 16 consecutive blocks (rows), each one block
                for t in range(24):
                    xt = x[t * 16:(t + 1) * 16]
                    out.append((f"{prof} {fmt} tensorwise {t}", xt, (prof, fmt),
                                torchao_float8_tensorwise(xt, fmt, F8_PROFILES[prof])))
            elif prof == "torchao_float8_inference":
                if fmt not in ("f8e4m3fn", "f8e5m2"):
                    continue
                # binary32 input and bf16 input (the top half of each binary32 pattern)
                for name, xs in (("f32", x), ("bf16", xb)):
                    out.append((f"{prof} {fmt} {name} rowwise", xs, (prof, fmt, "--partition", "rows"),
                                torchao_inference(xs, fmt, True)))
                    for t in range(24):
                        xt = xs[t * 16:(t + 1) * 16]
                        out.append((f"{prof} {fmt} {name} tensorwise {t}", xt, (prof, fmt),
                                    torchao_inference(xt, fmt, False)))
            elif prof in MICROXCALING:
                out.append((f"{prof} {fmt}", x, (prof, fmt), microxcaling_mx(x, fmt, MICROXCALING[prof])))
            else:
                sys.exit(f"recipe_diff: unknown profile {prof}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("numref")
    ap.add_argument("--blocks", type=int, default=100_000)
    ap.add_argument("--profiles", default=",".join(list(MX_PROFILES) + list(F8_PROFILES)))
    ap.add_argument("--formats", default=",".join(FMT_QMAX))
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--record", default="", help="also write torchao's outputs to this .npz (a new file)")
    ap.add_argument("--replay", default="", help="compare with the torchao outputs recorded in this .npz (no torch)")
    ap.add_argument("--microxcaling", default="", metavar="DIR",
                    help="a microxcaling checkout (the directory holding its mx package): profile microxcaling")
    ap.add_argument("--te", default="", metavar="DIR",
                    help="a TransformerEngine checkout (tests/pytorch/references): the te_* profiles")
    ap.add_argument("--deepgemm", default="", metavar="DIR",
                    help="a DeepGEMM checkout (deep_gemm/utils/math.py): the deepgemm profiles")
    ap.add_argument("--library", default="", help="with --record: the peer's version text to record "
                    "(default: the torch / torchao versions; required for microxcaling, e.g. its commit)")
    ap.add_argument("--nan-payloads", choices=["shared", "distinct"], default="",
                    help="NaNs with random payloads (one per block, or one per NaN) and signs, quiet and "
                    "signalling (microxcaling)")
    a = ap.parse_args()
    profiles = a.profiles.split(",")
    if a.record and a.replay:
        sys.exit("recipe_diff: --record and --replay exclude each other")
    if a.replay:
        # a recorded run (the default suite, without torch): its seed, blocks and inputs' sha256
        try:
            rec = np.load(a.replay, allow_pickle=False)
            meta = json.loads(bytes(rec["meta"]).decode())
        except (OSError, ValueError, KeyError) as e:
            print(f"recipe_diff: --replay {a.replay}: {e}", file=sys.stderr)
            return 2
        x = make_blocks(meta["blocks"], meta["seed"], meta.get("nan_payloads", ""))
        if hashlib.sha256(x.tobytes()).hexdigest() != meta["x_sha256"]:
            print(f"recipe_diff: --replay {a.replay}: this NumPy generates other input blocks than the "
                  "recording (sha256 differs); record again with NUMREF_PEERS=1", file=sys.stderr)
            return 2
        lib = meta.get("library") or f"torch {meta['torch']}, torchao {meta['torchao']}"
        print(f"replaying {lib} ({meta['date']}): {meta['blocks']} blocks, seed {meta['seed']}")
        checks = []
        bases = {"f32": x, "bf16": bf16_of(x), **te_inputs(x), **dg_inputs(x)}
        for i, c in enumerate(meta["checks"]):
            rows = slice(c["rows"][0], c["rows"][1])
            xs = bases[c.get("input", "f32")]
            checks.append((c["name"], xs[rows], tuple(c["args"]), (rec[f"s{i}"], rec[f"c{i}"]), c.get("input", "f32")))
    else:
        try:
            import torch
            if any(p not in MICROXCALING and p not in TE_PROFILES and p not in DG_PROFILES for p in profiles):
                import torchao
        except ImportError as e:
            sys.exit(f"recipe_diff: {e}: install torch and torchao 0.18 (NUMREF_PEERS=1 scripts/setup.sh)")
        # the peers that are no PyPI package: a checkout each, named by its option; a recording names its commit
        for peer, need, path, missing, lib in (
                (MICROXCALING, a.microxcaling, ("mx", "mx_ops.py"), "profile microxcaling needs --microxcaling DIR, "
                 "a directory with mx/mx_ops.py (a microxcaling checkout)", "microxcaling"),
                (TE_PROFILES, a.te, ("tests", "pytorch", "references", "blockwise_quantizer_reference.py"),
                 "the te_* profiles need --te DIR, a TransformerEngine checkout with tests/pytorch/references",
                 "TransformerEngine"),
                (DG_PROFILES, a.deepgemm, ("deep_gemm", "utils", "math.py"), "the deepgemm profiles need --deepgemm "
                 "DIR, a DeepGEMM checkout with deep_gemm/utils/math.py", "DeepGEMM")):
            if not set(peer) & set(profiles):
                continue
            if not need or not os.path.isfile(os.path.join(need, *path)):
                print(f"recipe_diff: {missing}", file=sys.stderr)
                return 2
            if a.record and not a.library:
                print(f"recipe_diff: --record with {lib} needs --library (its commit)", file=sys.stderr)
                return 2
        if set(MICROXCALING) & set(profiles):
            sys.path.insert(0, os.path.abspath(a.microxcaling))
        te = [p for p in profiles if p in TE_PROFILES]
        if te:
            te_import(a.te)
        dgp = [p for p in profiles if p in DG_PROFILES]
        if a.record and os.path.exists(a.record):
            sys.exit(f"recipe_diff: --record {a.record} exists (not overwritten)")
        x = make_blocks(a.blocks, a.seed, a.nan_payloads)
        xb = bf16_of(x)
        checks = [c + ("bf16" if c[1].dtype == np.uint16 else "f32",)
                  for c in torchao_checks(x, xb, [p for p in profiles if p not in TE_PROFILES and p not in DG_PROFILES],
                                          a.formats.split(","))]
        tx = te_inputs(x)
        checks += te_checks(tx, te)
        dx = dg_inputs(x)
        if dgp:
            checks += dg_checks(dg_import(a.deepgemm), dx, dgp)
    total = compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, xs, args, want, _ in checks:
            got = numref_run(a.numref, xs, args[1], args[0], list(args[2:]), tmp)
            total += compare(name, xs, got, want)
            compared += int(want[1].size)
        if not a.replay and "te_float8_block_f32" in profiles:
            total += te_declared(a.numref, tmp)
    if a.record:
        from importlib.metadata import version
        meta = {"seed": a.seed, "blocks": a.blocks, "x_sha256": hashlib.sha256(x.tobytes()).hexdigest(),
                "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"), "checks": [],
                "nan_payloads": a.nan_payloads, "aten_cpu_capability": torch.backends.cpu.get_cpu_capability()}
        if any(p not in MICROXCALING and p not in TE_PROFILES and p not in DG_PROFILES for p in profiles):
            meta["torchao"] = version("torchao")
        if a.library:
            meta["library"] = f"{a.library} (torch {torch.__version__})"
        arrays = {}
        bases = {"f32": x, "bf16": xb, **tx, **dx}
        for i, (name, xs, args, want, inp) in enumerate(checks):
            base = bases[inp]
            r0 = int((xs.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // base.strides[0])
            if not np.array_equal(base[r0:r0 + xs.shape[0]], xs):
                sys.exit(f"recipe_diff: --record: check {name} is not a slice of its input")
            meta["checks"].append({"name": name, "args": list(args), "rows": [r0, r0 + xs.shape[0]], "input": inp})
            # codes as bytes; microxcaling's fake-quantized values as binary32 bits
            arrays[f"s{i}"] = want[0].astype(np.uint32)
            arrays[f"c{i}"] = want[1].astype(np.uint32 if want[1].dtype == np.uint32 else np.uint8)
        tmpf = a.record + ".tmp.npz"
        np.savez_compressed(tmpf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
        os.replace(tmpf, a.record)
        print(f"recorded {len(checks)} checks to {a.record}")
    print(f"total: {total} differences ({compared} element codes compared)")
    if compared == 0:
        print("recipe_diff: nothing compared", file=sys.stderr)
        return 1
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
