#!/usr/bin/env python3
"""Differential test: `numref mma --profile P` against MMA-Sim (mmasim 2.1.1) bit for bit.

spec §38 (the fused truncated dot-product-add model), §39 (instruction profiles); docs/mma.md.

usage: mma_peer.py NUMREF [--products N] [--only SUBSTR] [--shard I/N] [--seed S]
                          [--record F.npz | --replay F.npz]

Every instruction MMA-Sim models on NVIDIA GPUs (mma.sync of sm_70 .. sm_120, wgmma of sm_90a,
tcgen05.mma of sm_100a, and the block-scaled kinds; f64 excluded: it is an FMA chain, not a
dot product numref models) and AMD's CDNA3 (v_mfma f16 / bf16 / xf32 / fp8 / bf8 / f32) and CDNA1 /
CDNA2 (v_mfma f32: the FMA chain, §38.9; f16 / bf16: CDNA1's exact steps, §38.10, CDNA2's
flush-to-zero steps, §38.11; every f64 instruction excluded: an algorithm numref does not model
yet) is mapped to the numref profile named after it (PROFILE_OF below)
and run on the same inputs by both: at least N products per instruction (default 1 048 576)
in batches of eight input kinds — random codes of the whole format (specials included),
normally distributed values, cancelling pairs, subnormals only, exponents spread past the
alignment window, sparse NaN / Inf, zero blocks, and extreme block scales (E8M0 00 / FE / FF,
ue4m3 zero, subnormal, NaN) — with C drawn the same way (Inf, NaN and values near the binary32
maximum included). Every D must be equal, NaN bits included — except under the profiles whose
MMA-Sim model runs in the host CPU's floating point (NAN_ANY below: the FMA chains, the exact and
the flush-to-zero steps), where MMA-Sim's NaN bits are its CPU's: a NaN there equals any NaN (the
declared departure of spec §39.2's note).

--record F.npz --base G.npz writes F as G with the selected instructions' slices recorded anew
(added, or replacing G's of the same instruction): a new instruction joins the fixture without
re-recording the others.

--record F.npz keeps a small slice of every instruction (its inputs and MMA-Sim's D, each input
kind represented) in a new file; --replay F.npz compares numref with such a recording without
torch or mmasim (the default-suite test cli_mma_recorded). Prints one line per instruction and
the total; exits 1 on any difference (showing the first ones), 2 on a usage error, 0 otherwise.
A missing mmasim is a failure, never a skip: install it with NUMREF_PEERS=1 scripts/setup.sh.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

GEN = {"Volta": "sm70", "Turing": "sm75", "Ampere": "sm80", "Ada Lovelace": "sm80", "Hopper": "sm90",
       "Blackwell": "sm100", "RTX Blackwell": "sm120"}
# PTX operand type -> numref operand type (§36.2)
NTYPE = {"f32": "f32", "tf32": "tf32", "f16": "f16", "bf16": "bf16", "e4m3": "f8e4m3fn", "e5m2": "f8e5m2",
         "e3m2": "f6e3m2fn", "e2m3": "f6e2m3fn", "e2m1": "f4e2m1fn", "ue8m0": "f8e8m0fnu", "ue4m3": "ue4m3",
         "fp8": "f8e4m3fnuz", "bf8": "f8e5m2fnuz", "xf32": "tf32"}  # the last three: AMD's names
BITS = {"f32": 32, "tf32": 32, "f16": 16, "bf16": 16, "f8e4m3fn": 8, "f8e5m2": 8, "f6e3m2fn": 6, "f6e2m3fn": 6,
        "f4e2m1fn": 4, "f8e8m0fnu": 8, "ue4m3": 8, "f8e4m3fnuz": 8, "f8e5m2fnuz": 8}


def kind_of(a_type, kind):
    if kind:
        return kind
    if a_type == "tf32":
        return "tf32"
    if a_type in ("f16", "bf16"):
        return "f16"
    return "f8"


def profile_of(api, arch, instr, a_type, kind):
    """PROFILE_OF: the numref profile (§39) an MMA-Sim instruction is checked against."""
    k = kind_of(a_type, kind)
    if api == "mma":
        gen = GEN[arch]
        if arch == "Volta" or (arch == "Turing" and instr.startswith("m8n8k4")):
            gen = "sm70"
        if arch == "Ada Lovelace" and k == "f8":
            gen = "sm89"
        return f"{gen}_mma_{k}"
    if api == "wgmma":
        return f"sm90_wgmma_{k}"
    if api == "tcgen05":
        return f"sm100_tcgen05_{k}"
    raise ValueError(api)


def instructions():
    """(api, arch, instruction, profile, a, b, c, block, scale) for every NVIDIA instruction MMA-Sim models."""
    from mmasim.nv_ptx import isa_mma, isa_wgmma, isa_tcgen05mma
    out = []
    for arch, lst in isa_mma.mma_shape_and_type.items():
        for s in lst:
            q = s.split(".")
            kind = None
            if len(q) == 6:
                _, kind, d, a, b, c = q
                kind = kind.removeprefix("kind::")
            else:
                _, d, a, b, c = q
            if a == "f64":
                continue
            out.append(("mma", arch, s, profile_of("mma", arch, s, a, kind), a, b, d, 0, None))
    for arch, lst in isa_mma.mma_block_scale_shape_and_type.items():
        for s in lst:
            _, kind, block, d, a, b, c, st = s.split(".")
            kind = kind.removeprefix("kind::")
            out.append(("mma_bs", arch, s, f"{GEN[arch]}_mma_{kind}", a, b, d, int(block[5:]), st))
    for arch, lst in isa_wgmma.wgmma_shape_and_type.items():
        for s in lst:
            if not s.startswith("m64n8k"):
                continue  # the arithmetic does not depend on N
            _, d, a, b = s.split(".")
            out.append(("wgmma", arch, s, profile_of("wgmma", arch, s, a, None), a, b, d, 0, None))
    for arch, lst in isa_tcgen05mma.tcgen05mma_shape_and_type.items():
        for s in lst:
            if not s.startswith("m64n8k"):
                continue
            _, kind, d, a, b = s.split(".")
            kind = kind.removeprefix("kind::")
            out.append(("tcgen05", arch, s, f"sm100_tcgen05_{kind_of(a, None) if kind == 'f16' else kind}", a, b, d,
                        0, None))
    from mmasim.amd import isa_mfma
    for suffix in isa_mfma.arch_mfma_suffix["CDNA3"]:
        _, a, b = mfma_parts(suffix)
        if a in ("f32", "f64"):
            continue  # the FMA chains: at the end (the earlier instructions keep their seeds)
        kind = "f8" if a in ("fp8", "bf8") else "xf32" if a == "xf32" else "f16"
        out.append(("mfma", "CDNA3", suffix, f"cdna3_mfma_{kind}", a, b, "f32", 0, None))
    for arch, lst in isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type.items():
        for s in lst:
            if not s.startswith("m128n8k"):
                continue
            _, kind, block, d, a, b, st = s.split(".")
            kind = kind.removeprefix("kind::")
            out.append(("tcgen05_bs", arch, s, f"sm100_tcgen05_{kind}", a, b, d, int(block[5:]), st))
    for arch in ("CDNA1", "CDNA2", "CDNA3"):  # the f32 FMA chains (§38.9); f64 not modelled
        for suffix in isa_mfma.arch_mfma_suffix[arch]:
            _, a, b = mfma_parts(suffix)
            if a == "f32":
                out.append(("mfma", arch, suffix, f"{arch.lower()}_mfma_f32", a, b, "f32", 0, None))
    for arch in ("CDNA1", "CDNA2"):  # f16 / bf16: exact steps (§38.10), flush-to-zero steps (§38.11)
        for suffix in isa_mfma.arch_mfma_suffix[arch]:
            _, a, b = mfma_parts(suffix)
            if a in ("f16", "bf16"):
                # CDNA2's bf16 _1k instructions fuse as many products as its f16 ones (kind f16)
                kind = "bf16" if a == "bf16" and not suffix.endswith("_1k") else "f16"
                out.append(("mfma", arch, suffix, f"{arch.lower()}_mfma_{kind}", a, b, "f32", 0, None))
    return out


# The profiles whose MMA-Sim model computes in the host CPU's floating point (§38.9 – §38.11): a
# NaN result equals any NaN (MMA-Sim's NaN bits are its CPU's, the declared departure of §39.2).
NAN_ANY = {"cdna1_mfma_f32", "cdna2_mfma_f32", "cdna3_mfma_f32", "cdna1_mfma_f16", "cdna1_mfma_bf16",
           "cdna2_mfma_f16", "cdna2_mfma_bf16"}


def mfma_parts(suffix):
    """(K, a, b) of an AMD v_mfma suffix: f32_32x32x2f32, f32_32x32x8bf16_1k (CDNA1 / CDNA2),
    f32_32x32x2_f32, f32_32x32x1_2b_f32, f32_16x16x32_fp8_bf8 (CDNA3)."""
    q = suffix.split("_")
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)([a-z]\w*)?", q[1])
    if m.group(4):
        return int(m.group(3)), m.group(4), m.group(4)
    if q[-1] in ("fp8", "bf8") and len(q) == 4:
        return int(m.group(3)), q[2], q[3]
    return int(m.group(3)), q[-1], q[-1]


def instruction_k(instr):
    if "_" in instr and "." not in instr:  # AMD: f32_MxNxK...
        return mfma_parts(instr)[0]
    shape = instr.split(".")[0]
    return int(shape.split("k")[1])


# ---- inputs -----------------------------------------------------------------------------------
KINDS = ["random", "normal", "cancel", "subnormal", "spread", "specials", "zero_blocks", "extreme_scales"]


def mask_of(t):
    return (1 << BITS[t]) - 1


def field_widths(t):
    return {"f32": (8, 23), "tf32": (8, 23), "f16": (5, 10), "bf16": (8, 7), "f8e4m3fn": (4, 3), "f8e5m2": (5, 2),
            "f6e3m2fn": (3, 2), "f6e2m3fn": (2, 3), "f4e2m1fn": (2, 1), "f8e4m3fnuz": (4, 3), "f8e5m2fnuz": (5, 2)}[t]


def finite_codes(rng, t, n, exp_lo=None, exp_hi=None):
    """Random finite codes of t (NaN / Inf encodings replaced by max finite)."""
    e, m = field_widths(t)
    ones = (1 << e) - 1
    lo = 0 if exp_lo is None else exp_lo
    hi = ones if exp_hi is None else exp_hi
    ef = rng.integers(lo, hi + 1, n, dtype=np.int64)
    mf = rng.integers(0, 1 << m, n, dtype=np.int64)
    s = rng.integers(0, 2, n, dtype=np.int64)
    code = (s << (e + m)) | (ef << m) | mf
    mag = code & ((1 << (e + m)) - 1)
    if t in ("f32", "tf32", "f16", "bf16", "f8e5m2"):
        bad = (mag >> m) == ones  # an Inf / NaN encoding: one binade lower
        code[bad] = (s[bad] << (e + m)) | ((ones - 1) << m) | mf[bad]
    elif t == "f8e4m3fn":
        code[mag == 0x7F] = (s[mag == 0x7F] << 7) | 0x7E
    elif t in ("f8e4m3fnuz", "f8e5m2fnuz"):
        code[code == 0x80] = 0  # the fnuz NaN
    return code


def specials(t):
    if t in ("f32", "tf32"):
        return [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001]
    if t == "f16":
        return [0x7C00, 0xFC00, 0x7E00, 0xFC01]
    if t == "bf16":
        return [0x7F80, 0xFF80, 0x7FC0, 0xFF81]
    if t == "f8e5m2":
        return [0x7C, 0xFC, 0x7E, 0xFF]
    if t == "f8e4m3fn":
        return [0x7F, 0xFF]
    if t in ("f8e4m3fnuz", "f8e5m2fnuz"):
        return [0x80]
    return []


def operand(rng, t, shape, kind, k_axis, block):
    n = int(np.prod(shape))
    e, m = field_widths(t)
    if kind == "random":
        x = rng.integers(0, 1 << BITS[t], n, dtype=np.int64)
    elif kind == "normal":
        x = normal_codes(rng, t, n)
    elif kind == "subnormal":
        x = (rng.integers(0, 2, n, dtype=np.int64) << (e + m)) | rng.integers(0, 1 << m, n, dtype=np.int64)
        if t in ("f8e4m3fnuz", "f8e5m2fnuz"):
            x[x == 0x80] = 0
    elif kind == "spread":
        x = finite_codes(rng, t, n)
    else:
        x = normal_codes(rng, t, n)
    x = x.reshape(shape)
    if kind == "cancel":  # pairs x, -x along K: the sum cancels to what the other terms leave
        idx = [slice(None)] * len(shape)
        half = shape[k_axis] // 2
        src = [slice(None)] * len(shape)
        src[k_axis] = slice(0, half)
        idx[k_axis] = slice(half, 2 * half)
        x[tuple(idx)] = x[tuple(src)] ^ (1 << (e + m))
    if kind == "specials":
        sp = specials(t)
        if sp:
            flat = x.reshape(-1)
            pick = rng.random(n) < 0.02
            flat[pick] = rng.choice(sp, int(pick.sum()))
    if kind == "zero_blocks" and block:
        y = np.moveaxis(x, k_axis, -1)
        for j in range(0, y.shape[-1], block):
            if rng.random() < 0.5:
                y[..., j:j + block] = 0
    return x & mask_of(t)


def normal_codes(rng, t, n):
    import ml_dtypes
    dt = {"f32": np.float32, "tf32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
          "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "f6e3m2fn": ml_dtypes.float6_e3m2fn,
          "f6e2m3fn": ml_dtypes.float6_e2m3fn, "f4e2m1fn": ml_dtypes.float4_e2m1fn,
          "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz}[t]
    v = (rng.standard_normal(n) * np.exp2(rng.integers(-3, 4, n))).astype(np.float32)
    with np.errstate(all="ignore"):
        y = v.astype(dt)
    st = {1: np.uint8, 2: np.uint16, 4: np.uint32}[np.dtype(dt).itemsize]
    return y.view(st).astype(np.int64)


def scale_codes(rng, st, shape, kind):
    n = int(np.prod(shape))
    if st == "ue8m0":
        x = 127 + rng.integers(-6, 7, n, dtype=np.int64)
        if kind == "extreme_scales":
            x = rng.choice([0, 1, 2, 125, 127, 129, 252, 253, 254, 255], n)
        elif kind == "random":
            x = rng.integers(0, 256, n, dtype=np.int64)
    else:  # ue4m3: sign bit ignored
        x = 0x38 + rng.integers(-12, 13, n, dtype=np.int64)
        if kind == "extreme_scales":
            x = rng.choice([0x00, 0x01, 0x07, 0x08, 0x7E, 0x7F, 0x80, 0xB8, 0xFF], n)
        elif kind == "random":
            x = rng.integers(0, 256, n, dtype=np.int64)
    return x.reshape(shape)


def c_codes(rng, d, shape, kind):
    n = int(np.prod(shape))
    if kind == "random":
        x = rng.integers(0, 1 << BITS[d], n, dtype=np.int64)
    elif kind == "specials":
        x = normal_codes(rng, d, n)
        big = 0x7F7FFFFF if d == "f32" else 0x7BFF
        pick = rng.random(n) < 0.2
        x[pick] = rng.choice(specials(d) + [big, big | (1 << (BITS[d] - 1)), big - 1], int(pick.sum()))
    elif kind in ("subnormal", "cancel"):
        x = np.where(rng.random(n) < 0.5, 0, normal_codes(rng, d, n))
    else:
        x = normal_codes(rng, d, n)
    return x.reshape(shape) & mask_of(d)


def make_inputs(rng, ins, M, N, K, kind):
    api, arch, instr, prof, a, b, d, block, st = ins
    ta, tb, tc = NTYPE[a], NTYPE[b], NTYPE[d]
    A = operand(rng, ta, (M, K), kind, 1, block)
    B = operand(rng, tb, (K, N), kind, 0, block)
    C = c_codes(rng, tc, (M, N), kind)
    SA = SB = None
    if block:
        SA = scale_codes(rng, st, (M, K // block), kind)
        SB = scale_codes(rng, st, (K // block, N), kind)
    return A, B, C, SA, SB


# ---- mmasim -----------------------------------------------------------------------------------
def run_mmasim(ins, A, B, C, SA, SB):
    import torch
    from mmasim.nv_ptx import sim
    api, arch, instr, prof, a, b, d, block, st = ins
    tdt = {"f32": torch.float32, "tf32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
           "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "fp8": torch.float8_e4m3fnuz,
           "bf8": torch.float8_e5m2fnuz, "xf32": torch.float32}

    def tens(codes, t, packed=False, k_axis=1):
        if t in ("e3m2", "e2m3", "e2m1"):
            x = codes.astype(np.uint8)
            if packed:  # two e2m1 per byte along K, the even element in the high nibble
                x = np.moveaxis(x, k_axis, -1)
                x = (x[..., 0::2] << 4) | x[..., 1::2]
                x = np.ascontiguousarray(np.moveaxis(x, -1, k_axis))
            elif t == "e2m1":
                x = x << 2  # MMA-Sim holds f4 in bits 5:2 of a byte (f6 in bits 5:0)
            return torch.from_numpy(x.astype(np.uint8))
        bits = {"f32": np.int32, "tf32": np.int32, "xf32": np.int32, "f16": np.int16, "bf16": np.int16}.get(t, np.uint8)
        raw = torch.from_numpy(codes.astype({np.int32: np.uint32, np.int16: np.uint16}.get(bits, bits))
                               .view(bits).copy())
        return raw.view(tdt[t])

    if api == "mfma":
        from mmasim.amd import sim as amd_sim
        op = amd_sim.MFMA(arch, instr)
        D = op(tens(A, a), tens(B, b, k_axis=0), tens(C, d))
    elif api in ("mma", "wgmma", "tcgen05"):
        cls = {"mma": sim.MMA, "wgmma": sim.WGMMA, "tcgen05": sim.TCGen05MMA}[api]
        op = cls(arch, instr)
        D = op(tens(A, a), tens(B, b, k_axis=0), tens(C, d))
    else:
        cls = sim.MMABlockScale if api == "mma_bs" else sim.TCGen05MMABlockScale
        op = cls(arch, instr)
        packed = op.packing == 2
        sdt = torch.float8_e8m0fnu if st == "ue8m0" else torch.float8_e4m3fn
        sa = torch.from_numpy(SA.astype(np.uint8)).view(sdt)
        sb = torch.from_numpy(SB.astype(np.uint8)).view(sdt)
        D = op(tens(A, a, packed, 1), tens(B, b, packed, 0), tens(C, d), sa, sb)
    out = D.contiguous()
    if out.dtype == torch.float32:
        return out.view(torch.int32).numpy().view(np.uint32).astype(np.int64)
    return out.view(torch.int16).numpy().view(np.uint16).astype(np.int64)


# ---- numref -----------------------------------------------------------------------------------
def save_codes(path, codes, t):
    st = {8: np.uint8, 6: np.uint8, 4: np.uint8, 16: np.uint16, 32: np.uint32}[BITS[t]]
    np.save(path, codes.astype(st))


def run_numref(numref, tmp, ins, A, B, C, SA, SB):
    api, arch, instr, prof, a, b, d, block, st = ins
    ta, tb, tc = NTYPE[a], NTYPE[b], NTYPE[d]
    p = {x: os.path.join(tmp, x + ".npy") for x in ("a", "b", "c", "sa", "sb")}
    out = os.path.join(tmp, "d.npy")
    if os.path.exists(out):
        os.remove(out)
    save_codes(p["a"], A, ta)
    save_codes(p["b"], B, tb)
    if tc == "f32":
        np.save(p["c"], C.astype(np.uint32).view(np.float32))
    else:
        np.save(p["c"], C.astype(np.uint16).view(np.float16))
    cmd = [numref, "mma", "--profile", prof, "--a", p["a"], "--a-type", ta, "--b", p["b"], "--b-type", tb,
           "--c", p["c"], "--out", out]
    if block:
        save_codes(p["sa"], SA, NTYPE[st])
        save_codes(p["sb"], SB, NTYPE[st])
        cmd += ["--block", str(block), "--scale-type", NTYPE[st], "--scale-a", p["sa"], "--scale-b", p["sb"]]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    D = np.load(out)
    return D.view(np.uint32 if D.dtype == np.float32 else np.uint16).astype(np.int64)


def is_nan32(x):
    return ((x & 0x7F800000) == 0x7F800000) & ((x & 0x7FFFFF) != 0)


def compare(name, D_peer, D_numref, A, B, C, shown, nan_any=False):
    differ = D_peer != D_numref
    if nan_any:  # NAN_ANY profiles (binary32 D): a NaN equals any NaN
        differ &= ~(is_nan32(D_peer) & is_nan32(D_numref))
    diff = np.argwhere(differ)
    for i, j in diff[:max(0, 3 - shown)]:
        print(f"  DIFF {name} at ({i},{j}): mmasim {int(D_peer[i, j]):x} numref {int(D_numref[i, j]):x} | "
              f"a {' '.join(f'{int(v):x}' for v in A[i])} | b {' '.join(f'{int(v):x}' for v in B[:, j])} | "
              f"c {int(C[i, j]):x}")
    return len(diff)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("numref")
    ap.add_argument("--products", type=int, default=1 << 20)
    ap.add_argument("--only", default="")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--seed", type=int, default=20261128)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--record")
    g.add_argument("--replay")
    ap.add_argument("--base", help="with --record: a recording to keep the other instructions of")
    args = ap.parse_args()
    if args.base and not args.record:
        print("mma_peer.py: --base needs --record", file=sys.stderr)
        return 2
    try:
        si, sn = (int(v) for v in args.shard.split("/"))
        assert 0 <= si < sn
    except (ValueError, AssertionError):
        print(f"mma_peer.py: --shard {args.shard!r} is not I/N with 0 <= I < N", file=sys.stderr)
        return 2
    if args.record and os.path.exists(args.record):
        print(f"mma_peer.py: --record {args.record} exists; not overwriting it", file=sys.stderr)
        return 2
    total = bad = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.replay:
            rec = np.load(args.replay, allow_pickle=False)
            meta = json.loads(str(rec["meta"]))
            print(f"replaying {args.replay}: {meta['peer']}, recorded {meta['date']}")
            flat = {w: rec[f"u{w}"].astype(np.int64) for w in (8, 16, 32)}

            def get(key):
                w, off, shape = meta["arrays"][key]
                return flat[w][off:off + int(np.prod(shape))].reshape(shape)
            for n, item in enumerate(meta["items"]):
                ins, kind = tuple(item[:-1]), item[-1]
                if args.only not in ins[2] and args.only not in ins[3]:
                    continue
                A, B, C, Dp = (get(f"{n}_{x}") for x in ("A", "B", "C", "D"))
                SA = get(f"{n}_SA") if ins[7] else None
                SB = get(f"{n}_SB") if ins[7] else None
                Dn = run_numref(args.numref, tmp, ins, A, B, C, SA, SB)
                k = compare(f"{ins[1]} {ins[2]} / {ins[3]} [{kind}]", Dp, Dn, A, B, C, bad, ins[3] in NAN_ANY)
                bad += k
                total += Dp.size * A.shape[1]
                checked += 1
            print(f"{checked} recorded slices of {len(meta['instructions'])} instructions, {total} products, "
                  f"{bad} differing results")
            return 1 if bad or checked == 0 else 0
        try:
            import torch
            import mmasim
            from mmasim.nv_ptx import sim  # noqa: F401  (builds its CPU FMA helper on first import)
        except ImportError as e:
            print(f"mma_peer.py: {e}; install torch and mmasim 2.1.1 with NUMREF_PEERS=1 scripts/setup.sh",
                  file=sys.stderr)
            return 1
        version = f"mmasim {getattr(mmasim, '__version__', '2.1.1')}, torch {torch.__version__}"
        print(f"peer: {version}")
        arrays = {}
        meta = {"peer": version, "date": datetime.date.today().isoformat(), "instructions": [], "items": []}
        for idx, ins in enumerate(instructions()):
            if idx % sn != si or (args.only not in ins[2] and args.only not in ins[3]):
                continue
            rng = np.random.default_rng([args.seed, idx])
            K = instruction_k(ins[2])
            N = 8
            rows = max(len(KINDS), -(-args.products // (N * K)))
            per_kind = -(-rows // len(KINDS))
            n_diff = 0
            for kind in KINDS:
                A, B, C, SA, SB = make_inputs(rng, ins, per_kind, N, K, kind)
                Dp = run_mmasim(ins, A, B, C, SA, SB)
                Dn = run_numref(args.numref, tmp, ins, A, B, C, SA, SB)
                n_diff += compare(f"{ins[1]} {ins[2]} / {ins[3]} [{kind}]", Dp, Dn, A, B, C, bad + n_diff,
                                  ins[3] in NAN_ANY)
                total += Dp.size * K
                if args.record:  # two rows and four columns of every kind: 8 dot products
                    n = len(meta["items"])
                    meta["items"].append(list(ins) + [kind])
                    arrays.update({f"{n}_A": A[:2], f"{n}_B": B[:, :4], f"{n}_C": C[:2, :4], f"{n}_D": Dp[:2, :4]})
                    if SA is not None:
                        arrays.update({f"{n}_SA": SA[:2], f"{n}_SB": SB[:, :4]})
            print(f"{ins[1]:14s} {ins[2]:58s} {ins[3]:24s} {per_kind * len(KINDS) * N * K:9d} products  "
                  f"{n_diff} differ")
            bad += n_diff
            checked += 1
            if args.record:
                meta["instructions"].append(list(ins))
        if args.record and args.base:  # G's slices of the other instructions first, renumbered
            base = np.load(args.base, allow_pickle=False)
            bmeta = json.loads(str(base["meta"]))
            bflat = {w: base[f"u{w}"].astype(np.int64) for w in (8, 16, 32)}
            new_ins = [list(i) for i in meta["instructions"]]
            kept, kept_arrays = [], {}
            for n, item in enumerate(bmeta["items"]):
                if item[:-1] in new_ins:
                    continue
                m = len(kept)
                kept.append(item)
                for x in ("A", "B", "C", "D", "SA", "SB"):
                    if f"{n}_{x}" in bmeta["arrays"]:
                        w, off, shape = bmeta["arrays"][f"{n}_{x}"]
                        kept_arrays[f"{m}_{x}"] = bflat[w][off:off + int(np.prod(shape))].reshape(shape)
            for n, item in enumerate(meta["items"]):
                m = len(kept)
                kept.append(item)
                for x in ("A", "B", "C", "D", "SA", "SB"):
                    if f"{n}_{x}" in arrays:
                        kept_arrays[f"{m}_{x}"] = arrays[f"{n}_{x}"]
            meta["items"], arrays = kept, kept_arrays
            meta["instructions"] = [i for i in bmeta["instructions"] if i not in new_ins] + new_ins
            meta["peer"] = bmeta["peer"]
        if args.record:  # one flat array per element width, the meta JSON names each slice
            meta["arrays"] = {}
            flat = {8: [], 16: [], 32: []}
            used = {8: 0, 16: 0, 32: 0}
            for key, v in arrays.items():
                w = 32 if v.max(initial=0) > 0xFFFF else 16 if v.max(initial=0) > 0xFF else 8
                meta["arrays"][key] = [w, used[w], list(v.shape)]
                flat[w].append(v.reshape(-1))
                used[w] += v.size
            arrays = {f"u{w}": np.concatenate(flat[w] or [np.zeros(0, np.int64)]).astype(f"uint{w}") for w in flat}
            arrays["meta"] = np.array(json.dumps(meta))
            np.savez_compressed(args.record, **arrays)
    print(f"{checked} instructions, {total} products, {bad} differing results")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
