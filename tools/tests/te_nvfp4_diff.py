#!/usr/bin/env python3
"""Differential test: `numref quantize --profile te_nvfp4 / te_nvfp4_2d` against TransformerEngine's
NVFP4 reference quantizer.

spec §18, §13.6 (inf_block=one_scale with nvfp4), §10.4; docs/profiles.md (te_nvfp4).

usage: te_nvfp4_diff.py NUMREF (--te DIR [--record F.npz] [--te-version C] | --replay F.npz) [--tensors N]
  NUMREF: the numref CLI.  --te DIR: a TransformerEngine checkout (TransformerEngine is a CUDA
  package; its reference needs torch only).  --tensors N: tensors per profile and dtype (default 500).

The peer is TE's pure-torch reference, transformer_engine/pytorch/custom_recipes/reference_nvfp4.py
NVFP4QuantizerRef._quantize_blockwise_reference(x, global_amax, tile_len_x=16, tile_len_y=1 or 16,
pow_2_scales=False), loaded by path with its transformer_engine imports stubbed in sys.modules (the
GEMM types, the quantized-tensor base classes; reference_utils.py is loaded from the checkout). The
global amax is torch.max(torch.abs(x)) of the tensor, as TE's amax kernel computes it (NaN ignored;
the inputs hold no NaN). Each tensor is 32 x 64, binary32 and bf16 (top halves): te_nvfp4 blocks of
1 x 16, te_nvfp4_2d tiles of 16 x 16 (the reference repeats each tile's scale on its 16 rows; one is
compared). The mix is nvfp4_diff.py's (zeros, +-Inf, subnormal and FLT_MAX-range amaxes, E4M3
midpoints) without NaN: the reference gives code 0 to a NaN element, where the kernel's
cvt.rn.satfinite.e2m1x2.f32 gives what numref's cuda profile gives (a declared difference of the
reference, settled on a GPU by scripts/gpu-check.sh te-kernels).

Compared, bit for bit: every E4M3 scale and every FP4 code. Declared: where the scaled value is -0
(x = -0, or a negative x whose product underflows), the reference's cast_to_fp4x2 gives code 0x0 and
the kernel's cvt (and numref) 0x8 — counted, and a failure if any other code differs.

--record F.npz writes the reference's scales and codes (with the inputs' sha256 and the torch
version); --replay F.npz compares numref with it without torch or TE (the default-suite test
cli_recipe_te_nvfp4_recorded replays tools/tests/fixtures/te-nvfp4-reference.npz). Exit status 1 on
any difference, 0 when there is none.
"""
import argparse
import enum
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvfp4_diff import as_bf16, finish, gen_block  # noqa: E402  (the same block mix)

PROFILES = {"te_nvfp4": 1, "te_nvfp4_2d": 16}  # tile_len_y
ROWS, COLS, BLOCK = 32, 64, 16
SEED = 20261129


def gen_tensor(rng, t):
    if t == 0:
        return np.zeros((ROWS, COLS), dtype=np.uint32)
    if t == 1:
        return np.full((ROWS, COLS), 0x80000000, dtype=np.uint32)
    top = int(rng.choice([rng.integers(-140, 128), 127, -126, 0, 3]))
    x = np.concatenate([gen_block(rng, top) for _ in range(ROWS * COLS // BLOCK)]).reshape(ROWS, COLS)
    nan = (x & 0x7FFFFFFF) > 0x7F800000
    x = np.where(nan, x & 0x803FFFFF, x).astype(np.uint32)  # NaN -> a finite value of the same sign
    if t % 3 != 2:  # two tensors in three without Inf
        x = np.where((x & 0x7FFFFFFF) == 0x7F800000, x & 0x807FFFFF, x).astype(np.uint32)
    return x


def inputs(n):
    rng = np.random.default_rng(SEED)
    return np.stack([gen_tensor(rng, t) for t in range(n)])


def load_reference(te_dir):
    """reference_nvfp4.NVFP4QuantizerRef from a TransformerEngine checkout, imports stubbed."""
    d = os.path.join(os.path.abspath(te_dir), "transformer_engine", "pytorch", "custom_recipes")

    def mod(name, **kw):
        m = types.ModuleType(name)
        m.__dict__.update(kw)
        sys.modules[name] = m
        return m

    class Base:
        def __init__(self, *a, **k):
            pass

    mod("transformer_engine")
    mod("transformer_engine.pytorch")
    mod("transformer_engine.pytorch.quantized_tensor", QuantizedTensorStorage=Base, Quantizer=Base)
    cr = mod("transformer_engine.pytorch.custom_recipes")
    cr.gemm = mod("transformer_engine.pytorch.custom_recipes.gemm",
                  GEMMType=enum.Enum("GEMMType", "FPROP DGRAD WGRAD"), MMParams=object)

    def load(name, path):
        spec = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(spec)
        sys.modules[name] = m
        spec.loader.exec_module(m)
        return m

    cr.reference_utils = load("transformer_engine.pytorch.custom_recipes.reference_utils",
                              os.path.join(d, "reference_utils.py"))
    return load("transformer_engine.pytorch.custom_recipes.reference_nvfp4",
                os.path.join(d, "reference_nvfp4.py")).NVFP4QuantizerRef


def te_run(ref, xs, tile_y, bf16):
    import torch
    scales, codes = [], []
    for x in xs:
        xt = (torch.from_numpy(x.astype(np.int16)).view(torch.bfloat16) if bf16
              else torch.from_numpy(x.view(np.int32)).view(torch.float32))
        amax = torch.max(torch.abs(xt)).to(torch.float32).reshape(1)
        q, s = ref._quantize_blockwise_reference(xt, amax, 16, tile_y, pow_2_scales=False, eps=0.0)
        s = s.view(torch.uint8).numpy().reshape(ROWS, COLS // BLOCK)
        if tile_y == 16:
            s = s[::16]
        d = q.numpy().reshape(ROWS, COLS // 2)
        scales.append(s.reshape(-1).copy())
        codes.append(np.stack([d & 0xF, d >> 4], -1).reshape(ROWS, COLS).astype(np.uint8))
    return np.stack(scales), np.stack(codes)


def numref_run(numref, xs, prof, bf16, tmp):
    scales, codes = [], []
    inp, prefix = os.path.join(tmp, "x.npy"), os.path.join(tmp, "out")
    for x in xs:
        if bf16:
            np.save(inp, x)
        else:
            np.save(inp, x.view(np.float32))
        cmd = [numref, "quantize", "--input", inp, "--format", "f4e2m1fn", "--profile", prof, "--out", prefix,
               "--max-blocks", "0"] + (["--input-format", "bf16"] if bf16 else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"numref failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
        scales.append(np.load(prefix + ".scales.npy").astype(np.uint8).reshape(-1))
        codes.append(np.load(prefix + ".codes.npy").astype(np.uint8).reshape(ROWS, COLS))
    return np.stack(scales), np.stack(codes)


def compare(label, x32, got, want):
    (gs, gc), (ws, wc) = got, want
    bad_s = np.argwhere(gs != ws)
    neg = (x32 >> 31) == 1
    declared = (wc == 0x0) & (gc == 0x8) & neg
    bad_c = np.argwhere((gc != wc) & ~declared)
    if len(bad_s):
        t, b = bad_s[0]
        print(f"  FIRST scale difference: tensor {t} block {b}: numref {gs[t, b]:#04x}, TE reference {ws[t, b]:#04x}")
    if len(bad_c):
        t, i, j = bad_c[0]
        print(f"  FIRST code difference: tensor {t} ({i}, {j}) x={x32[t, i, j]:#010x}: numref {gc[t, i, j]:#x}, "
              f"TE reference {wc[t, i, j]:#x}")
    print(f"{label}: {len(x32)} tensors, {gs.size} scales, {gc.size} codes: {len(bad_s)} scales, {len(bad_c)} codes "
          f"differ; declared: {int(declared.sum())} codes 0x8 (numref, the kernel's cvt) for the reference's 0x0 "
          f"(a -0 scaled value)")
    return int(len(bad_s) > 0) + int(len(bad_c) > 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("numref")
    ap.add_argument("--tensors", type=int, default=500)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--te")
    g.add_argument("--replay")
    ap.add_argument("--record")
    ap.add_argument("--te-version", help="the TransformerEngine commit, when DIR is not a git checkout")
    a = ap.parse_args()
    rec = None
    if a.replay:
        rec = np.load(a.replay, allow_pickle=False)
        a.tensors = int(rec["tensors"])
        print(f"replaying {a.replay}: TransformerEngine {rec['te']}, torch {rec['torch']}")
    xs = inputs(a.tensors)
    digest = hashlib.sha256(xs.tobytes()).hexdigest()
    if rec is not None and str(rec["sha256"]) != digest:
        print(f"te_nvfp4_diff.py: this NumPy generates other inputs than the recording", file=sys.stderr)
        return 2
    out = {"tensors": a.tensors, "seed": SEED, "sha256": digest}
    ref = None
    if rec is None:
        import torch
        ref = load_reference(a.te)
        head = subprocess.run(["git", "-C", a.te, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        out.update(torch=torch.__version__, te=a.te_version or head.stdout.strip() or a.te)
        print(f"TransformerEngine {out['te']} reference_nvfp4.py, torch {torch.__version__}")
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for prof, tile_y in PROFILES.items():
            for bf16 in (False, True):
                src = as_bf16(xs) if bf16 else xs
                key = f"{prof}_{'bf16' if bf16 else 'f32'}"
                if rec is not None:
                    want = (rec[key + "_scales"], rec[key + "_codes"])
                else:
                    want = te_run(ref, src, tile_y, bf16)
                    out[key + "_scales"], out[key + "_codes"] = want
                got = numref_run(a.numref, src, prof, bf16, tmp)
                fails += compare(key, (src.astype(np.uint32) << 16) if bf16 else src, got, want)
    return finish(a.record, out, fails)


if __name__ == "__main__":
    sys.exit(main())
