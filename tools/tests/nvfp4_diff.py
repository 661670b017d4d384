#!/usr/bin/env python3
"""Differential test: `numref quantize --profile torchao_nvfp4 / torchao_nvfp4_block` against torchao.

spec §18.5, §18.6, §19.9 (elem_nan=bits), §10.4; docs/profiles.md (torchao_nvfp4).

usage: nvfp4_diff.py NUMREF [--tensors N] [--profiles a,b] [--record F.npz | --replay F.npz]
  NUMREF: the numref CLI.  --tensors N: tensors per (profile, source dtype) (default 2 000).

The peer is torchao 0.18's NVFP4Tensor.to_nvfp4 (prototype/mx_formats/nvfp4_tensor.py, the eager
torch path, block 16, element f4e2m1fn): torchao_nvfp4 passes the per-tensor scale its workflows
compute (use_dynamic_per_tensor_scale: per_tensor_amax_to_scale(torch.max(torch.abs(x)))),
torchao_nvfp4_block passes none. Each tensor is 4 x 64 (16 blocks of 1 x 16), as binary32 and as
bf16 (the top halves; to_nvfp4 takes both). The mix (seeded): a tensor-level exponent, then per
block random magnitudes over a span of binades below it, random finite bit patterns, all-zero
blocks (both signs), blocks with a NaN (0x7FC00000 / 0xFFC00000), with +-Inf, subnormal amaxes,
block amaxes at E4M3 rounding boundaries of amax / 6 (and of amax / 6 / p), tensors near FLT_MAX,
tiny tensors whose p = t_amax / 2688 underflows, all-zero, all-NaN and all-Inf tensors; in three
tensors of four the NaN and Inf are replaced by finite values (with the per-tensor scale a NaN
anywhere makes the whole tensor NaN), and in every third the blocks of four random positions are
remade so that RN32(RN32(amax / 6) / p) lies at an E4M3 midpoint, +- 3 ulps.

Compared, bit for bit: every E4M3 block scale and every FP4 code (NaN blocks included), and the
dequantized binary32 values (NVFP4Tensor.dequantize(torch.float32) against `--fake-quant f32`)
wherever torchao's value is not NaN and the tensor amax is finite. Declared (docs/profiles.md):
a dequantized NaN is numref's canonical NaN, not torchao's payload; a tensor whose amax is +Inf
dequantizes to NaN in numref (§18.5), where torchao gives +-Inf for a non-zero code and NaN for a
zero one — the run counts both and fails if one of them is not as declared.

torch's NaN bits depend on the CPU path (ATEN_CPU_CAPABILITY): the profile follows the AVX-512
kernels (torch.max(torch.abs(x)) of a binary32 tensor with a NaN is 0xFFFFFFFF, §18.5); the run
prints the capability and a recording keeps it. A live run also checks the declared departure on
the scalar kernels (a child process with ATEN_CPU_CAPABILITY=default: 0x7FC00000, so scale 0x7F and
code 0x3 where the profile gives 0xFF and 0xC).

--record F.npz writes torchao's scales, codes and dequantized values (with the seed, the tensor
count, the inputs' sha256 and the torch / torchao versions) to a new file; --replay F.npz compares
numref with such a recording without torch (the default-suite test cli_recipe_torchao_nvfp4_recorded
replays tools/tests/fixtures/torchao-0.18-nvfp4.npz). Exit status 1 on any difference (the first is
listed), 0 when there is none.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

import numpy as np

PROFILES = {"torchao_nvfp4": True, "torchao_nvfp4_block": False}  # with the per-tensor scale?
ROWS, COLS, BLOCK = 4, 64, 16
SEED = 20261128
F32_MAX = 0x7F7FFFFF
# E4M3 values (positive finite codes 0x01 .. 0x7E), for amaxes at its rounding boundaries
E4M3 = np.array([(2.0 ** (e - 7)) * (1 + m / 8) if e else 2.0 ** -6 * m / 8
                 for e in range(16) for m in range(8)][1:127], dtype=np.float64)


def f32_bits(v):
    return np.asarray(v, dtype=np.float32).view(np.uint32)


def gen_block(rng, top):
    """One block of 16 binary32 codes; top: the tensor's largest binade (an exponent)."""
    kind = rng.integers(0, 12)
    if kind == 0:  # random finite bit patterns
        b = rng.integers(0, 2 ** 32, BLOCK, dtype=np.uint64).astype(np.uint32)
        return np.where((b & 0x7F800000) == 0x7F800000, b & 0xBFFFFFFF, b).astype(np.uint32)
    if kind == 1:  # zeros of both signs
        return np.where(rng.integers(0, 2, BLOCK) == 1, 0x80000000, 0).astype(np.uint32)
    span = int(rng.integers(1, 40))
    e = rng.integers(top - span, top + 1, BLOCK)
    v = rng.uniform(1.0, 2.0, BLOCK) * np.exp2(e.astype(np.float64)) * np.where(rng.integers(0, 2, BLOCK), -1, 1)
    with np.errstate(over="ignore"):
        b = f32_bits(v.astype(np.float32))
    b = np.where((b & 0x7F800000) == 0x7F800000, (b & 0x80000000) | F32_MAX, b).astype(np.uint32)
    if kind == 2:  # a NaN
        b[rng.integers(0, BLOCK)] = rng.choice([0x7FC00000, 0xFFC00000])
    elif kind == 3:  # an infinity
        b[rng.integers(0, BLOCK)] = rng.choice([0x7F800000, 0xFF800000])
    elif kind == 4:  # amax / 6 at an E4M3 boundary (midpoint between two E4M3 values, +- ulps)
        i = rng.integers(0, len(E4M3) - 1)
        mid = (E4M3[i] + E4M3[i + 1]) / 2 * 6 * 2.0 ** int(rng.integers(-20, 20))
        a = f32_bits(np.float32(mid)).astype(np.int64) + rng.integers(-3, 4)
        b[rng.integers(0, BLOCK)] = np.uint32(a) | (0x80000000 if rng.integers(0, 2) else 0)
    elif kind == 5:  # subnormal magnitudes
        b = (rng.integers(0, 0x00800000, BLOCK) | (rng.integers(0, 2, BLOCK) << 31)).astype(np.uint32)
    return b


def gen_tensor(rng, t):
    """Tensor t (4 x 64 binary32 codes): special tensors first, then mixes."""
    special = {0: 0x00000000, 1: 0x7FC00000, 2: 0x7F800000, 3: 0x80000000}
    if t in special:
        return np.full((ROWS, COLS), special[t], dtype=np.uint32)
    top = int(rng.choice([rng.integers(-140, 128), 127, -126, -130, -140, 0, 3]))
    blocks = [gen_block(rng, top) for _ in range(ROWS * COLS // BLOCK)]
    x = np.concatenate(blocks).reshape(ROWS, COLS)
    if t % 4 != 2:  # three tensors in four without NaN / Inf (a NaN anywhere makes every value NaN)
        x = np.where((x & 0x7F800000) == 0x7F800000, x & 0x807FFFFF, x).astype(np.uint32)
    mag = x & 0x7FFFFFFF
    if t % 3 == 0 and not (mag >= 0x7F800000).any() and mag.max() > 0:
        # blocks whose s = RN32(RN32(amax / 6) / p) lies at an E4M3 midpoint (+- ulps), p = RN32(t_amax / 2688)
        t_amax = np.uint32(mag.max()).view(np.float32)
        p = np.float32(t_amax / np.float32(2688))
        for blk in rng.integers(0, ROWS * COLS // BLOCK, 4):
            i = rng.integers(0, len(E4M3) - 1)
            a = f32_bits(np.float32((E4M3[i] + E4M3[i + 1]) / 2 * 6 * float(p))).astype(np.int64) + rng.integers(-3, 4)
            if not 0 < a < int(mag.max()):
                continue
            fill = f32_bits(np.float32(np.uint32(a).view(np.float32)) * rng.uniform(0, 1, BLOCK).astype(np.float32))
            fill[rng.integers(0, BLOCK)] = np.uint32(a)
            sign = (rng.integers(0, 2, BLOCK) << 31).astype(np.uint32)
            x.reshape(-1, BLOCK)[blk] = fill | sign
    return x


def inputs(n):
    rng = np.random.default_rng(SEED)
    return np.stack([gen_tensor(rng, t) for t in range(n)])


def as_bf16(x):
    """bf16 patterns from the top halves (a NaN stays a NaN: its top half keeps a quiet bit)."""
    return (x >> 16).astype(np.uint16)


def torchao_run(xs, two, bf16):
    import torch
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale
    scales, codes, deq = [], [], []
    for x in xs:
        if bf16:
            xt = torch.from_numpy(x.astype(np.int16)).view(torch.bfloat16)
        else:
            xt = torch.from_numpy(x.view(np.int32)).view(torch.float32)
        pts = per_tensor_amax_to_scale(torch.max(torch.abs(xt))) if two else None
        q = NVFP4Tensor.to_nvfp4(xt, per_tensor_scale=pts)
        d = q.qdata.view(torch.uint8).numpy().reshape(ROWS, COLS // 2)
        c = np.stack([d & 0xF, d >> 4], -1).reshape(ROWS, COLS)
        scales.append(q.scale.view(torch.uint8).numpy().reshape(-1).copy())
        codes.append(c.astype(np.uint8))
        deq.append(q.dequantize(torch.float32).view(torch.int32).numpy().view(np.uint32).reshape(-1).copy())
    return np.stack(scales), np.stack(codes), np.stack(deq)


def numref_run(numref, xs, prof, bf16, tmp, shape=(ROWS, COLS)):
    """numref's scales, codes and dequantized values of every tensor: one CLI call per tensor."""
    scales, codes, deq = [], [], []
    inp = os.path.join(tmp, "x.npy")
    prefix = os.path.join(tmp, "out")
    for x in xs:
        extra = []
        if bf16:
            np.save(inp, x)
            extra = ["--input-format", "bf16"]
        else:
            np.save(inp, x.view(np.float32))
        cmd = [numref, "quantize", "--input", inp, "--format", "f4e2m1fn", "--profile", prof, "--out", prefix,
               "--max-blocks", "0", "--fake-quant", "f32"] + extra
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"numref failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
        scales.append(np.load(prefix + ".scales.npy").astype(np.uint8).reshape(-1))
        codes.append(np.load(prefix + ".codes.npy").astype(np.uint8).reshape(shape))
        deq.append(np.load(prefix + ".fakequant.npy").view(np.uint32).reshape(-1))
    return np.stack(scales), np.stack(codes), np.stack(deq)


def tensor_amax_inf(xs):
    """Per tensor: its amax is +Inf (an infinity and no NaN)."""
    mag = xs.reshape(len(xs), -1) & 0x7FFFFFFF
    return (mag == 0x7F800000).any(axis=1) & ~(mag > 0x7F800000).any(axis=1)


def compare(label, xs, got, want, two):
    (gs, gc, gd), (ws, wc, wd) = got, want
    fails = 0
    bad_s = np.argwhere(gs != ws)
    bad_c = np.argwhere(gc != wc)
    if len(bad_s):
        t, b = bad_s[0]
        print(f"  FIRST scale difference: tensor {t} block {b}: numref {gs[t, b]:#04x}, torchao {ws[t, b]:#04x}; "
              f"block {[hex(v) for v in xs[t].reshape(-1, BLOCK)[b]]}")
        fails += 1
    if len(bad_c):
        t, i, j = bad_c[0]
        print(f"  FIRST code difference: tensor {t} ({i}, {j}) x={xs[t][i, j]:#x}: numref {gc[t, i, j]:#x}, "
              f"torchao {wc[t, i, j]:#x}; scale {ws[t, (i * COLS + j) // BLOCK]:#04x}")
        fails += 1
    # dequantized values: equal where torchao's is not NaN and the tensor amax is finite
    inf_t = tensor_amax_inf(xs) if two else np.zeros(len(xs), dtype=bool)
    w_nan = (wd & 0x7FFFFFFF) > 0x7F800000
    g_nan = (gd & 0x7FFFFFFF) > 0x7F800000
    fin = ~inf_t[:, None]
    bad_d = np.argwhere(fin & ((w_nan != g_nan) | (~w_nan & (gd != wd))))
    if len(bad_d):
        t, k = bad_d[0]
        print(f"  FIRST dequantized difference: tensor {t} element {k}: numref {gd[t, k]:#010x}, torchao {wd[t, k]:#010x}")
        fails += 1
    # declared: dequantized NaNs are numref's canonical NaN; a tensor of amax +Inf dequantizes to NaN
    nan_payload = int((fin & w_nan & (gd != wd)).sum())
    declared_inf = int(inf_t.sum())
    inf_ok = all(g_nan[t].all() and (w_nan[t] | ((wd[t] & 0x7FFFFFFF) == 0x7F800000)).all() and w_nan[t].any()
                 for t in np.nonzero(inf_t)[0])
    if not inf_ok:
        print("  the declared departure for a tensor of amax +Inf did not hold (numref all NaN, torchao +-Inf / NaN)")
        fails += 1
    n = gs.size
    print(f"{label}: {len(xs)} tensors, {n} scales, {gc.size} codes, {gd.size} dequantized values: "
          f"{len(bad_s)} scales, {len(bad_c)} codes, {len(bad_d)} values differ; declared: {nan_payload} NaN "
          f"payloads of dequantized values, {declared_inf} tensors of amax +Inf dequantized as NaN")
    return fails


# The declared CPU-path departure: on torch's scalar kernels torch.max(torch.abs(x)) of a binary32 tensor
# with a NaN is 0x7FC00000 (AVX-512: 0xFFFFFFFF, what the profile follows), so the finite block's scale
# is 0x7F and its codes 0x3 where the profile gives 0xFF and 0xC.
CPU_PATH_PROBE = '''
import numpy as np, torch
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale
x = torch.tensor([float("nan")] + [1.0] * 31, dtype=torch.float32).reshape(1, 32)
q = NVFP4Tensor.to_nvfp4(x, per_tensor_scale=per_tensor_amax_to_scale(torch.max(torch.abs(x))))
d = q.qdata.view(torch.uint8).numpy().reshape(-1)
print(torch.backends.cpu.get_cpu_capability(), q.scale.view(torch.uint8).numpy().reshape(-1)[1], int(d[8] & 0xF))
'''


def check_cpu_path(numref, tmp):
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default")
    r = subprocess.run([sys.executable, "-c", CPU_PATH_PROBE], capture_output=True, text=True, env=env)
    want = r.stdout.split() if r.returncode == 0 else []
    x = np.array([[0x7FC00000] + [0x3F800000] * 31], dtype=np.uint32)
    gs, gc, _ = numref_run(numref, [x.reshape(1, 32)], "torchao_nvfp4", False, tmp, shape=(1, 32))
    ok = want == ["DEFAULT", "127", "3"] and int(gs[0][1]) == 0xFF and int(gc[0].reshape(-1)[16]) == 0xC
    print(f"declared CPU-path departure (ATEN_CPU_CAPABILITY=default, binary32 tensor with a NaN): torchao "
          f"{' '.join(want) or r.stderr.strip()[-200:]} (DEFAULT 127 3 declared: scale 0x7F, code 0x3), numref "
          f"{int(gs[0][1]):#04x} {int(gc[0].reshape(-1)[16]):#x} (0xff 0xc): {'as declared' if ok else 'CHANGED'}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("numref")
    ap.add_argument("--tensors", type=int, default=2000)
    ap.add_argument("--profiles", default=",".join(PROFILES))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--record")
    g.add_argument("--replay")
    a = ap.parse_args()
    profiles = [p for p in a.profiles.split(",") if p]
    for p in profiles:
        if p not in PROFILES:
            print(f"nvfp4_diff.py: unknown profile {p!r} (known: {', '.join(PROFILES)})", file=sys.stderr)
            return 2
    rec = None
    if a.replay:
        rec = np.load(a.replay, allow_pickle=False)
        a.tensors = int(rec["tensors"])
        print(f"replaying {a.replay}: torch {rec['torch']}, torchao {rec['torchao']}, "
              f"ATEN_CPU_CAPABILITY {rec['capability']}")
    xs = inputs(a.tensors)
    digest = hashlib.sha256(xs.tobytes()).hexdigest()
    if rec is not None and str(rec["sha256"]) != digest:
        print(f"nvfp4_diff.py: this NumPy generates other inputs than the recording ({digest} != {rec['sha256']})",
              file=sys.stderr)
        return 2
    out = {"tensors": a.tensors, "seed": SEED, "sha256": digest}
    if rec is None:
        try:
            import torch
            import torchao
        except ImportError as e:
            print(f"nvfp4_diff.py: torchao is needed (NUMREF_PEERS=1 scripts/setup.sh): {e}", file=sys.stderr)
            return 1
        out.update(torch=torch.__version__, torchao=torchao.__version__,
                   capability=torch.backends.cpu.get_cpu_capability())
        print(f"torch {torch.__version__}, torchao {torchao.__version__}, ATEN_CPU_CAPABILITY "
              f"{torch.backends.cpu.get_cpu_capability()}")
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        for prof in profiles:
            for bf16 in (False, True):
                src = as_bf16(xs) if bf16 else xs
                key = f"{prof}_{'bf16' if bf16 else 'f32'}"
                if rec is not None:
                    want = (rec[key + "_scales"], rec[key + "_codes"], rec[key + "_deq"])
                else:
                    want = torchao_run(src, PROFILES[prof], bf16)
                    out[key + "_scales"], out[key + "_codes"], out[key + "_deq"] = want
                got = numref_run(a.numref, src, prof, bf16, tmp)
                x32 = (src.astype(np.uint32) << 16) if bf16 else src
                fails += compare(key, x32, got, want, PROFILES[prof])
        if rec is None and "torchao_nvfp4" in profiles:
            fails += check_cpu_path(a.numref, tmp)
    return finish(a.record, out, fails)


def finish(record, out, fails):
    """Writes the recording (to a new file only), prints the verdict; the exit status."""
    if record:
        if os.path.exists(record):
            print(f"{os.path.basename(sys.argv[0])}: {record} exists; record to a new file", file=sys.stderr)
            return 2
        np.savez_compressed(record, **out)
        print(f"recorded {record}")
    print("OK: 0 differences" if fails == 0 else "FAILED")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
