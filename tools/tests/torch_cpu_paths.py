#!/usr/bin/env python3
"""Differential test: where torch's NaN bits depend on the CPU path, pinned (issue 30 item 2).

spec §10.1 (the torch-based profiles), §14.5; docs/profiles.md "torch's CPU paths".

usage: torch_cpu_paths.py NUMREF

torch's CPU kernels run a vectorised loop over whole chunks of a contiguous range and a scalar
loop over the rest, and which ISA the vectorised loop uses is ATEN_CPU_CAPABILITY (default, avx2,
avx512). Some NaN bits differ between these paths. numref's profiles model one path each; this
test runs torch under every capability this CPU has and checks that torch still behaves as
docs/profiles.md describes — the departures it declares — and that numref still gives what that
page says it gives. A change on either side fails:

1. `Tensor.to(torch.float32)` from float16: the vectorised chunks of 8 keep a NaN's sign and
   payload (quieted; numref's `torch` / `torch_default` cast profiles), the scalar rest gives
   7FFFFFFF for every NaN. The rest of a range [b, e) is its last (e − b) mod 8 elements; with
   T threads a tensor of n ≥ 32768 elements is cut into min(T, ⌈n / 32768⌉) ranges of ⌈n / tasks⌉
   (at::parallel_for's grain 32768). numref does not model the scalar rest (declared departure).
2. torchao 0.18 float8 training, tensorwise, a tensor with a NaN: the scale is NaN with bits by
   source dtype and path (default: 7FC00000 for every source; avx2 / avx512: f32 FFFFFFFF, bf16
   7FC00000, f16 FFC00000); numref's `torchao_float8` gives FFFFFFFF (the f32 source on
   avx2 / avx512) for every source (declared departure).
3. torchao 0.18 float8 inference (`_choose_scale_float8`) per tensor, an f16 tensor of NaNs: the
   one-element f16 scale converts to binary32 in the scalar rest: 7FFFFFFF on every path; numref's
   `torchao_float8_inference` gives 7FC00000 (declared departure).

Prints one line per check; exits 1 when one differs, 2 on a usage error, 0 otherwise. A missing
torch or torchao is a failure, never a skip: install them with NUMREF_PEERS=1 scripts/setup.sh.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

GRAIN = 32768  # at::internal::GRAIN_SIZE
CHUNK = 8  # the vectorised f16 -> f32 conversion's chunk
SIZES = [(5, 1), (15, 1), (71, 1), (40001, 2), (65541, 2), (100003, 2), (100003, 1)]
F16_NANS = [0x7E00, 0xFE00, 0x7C01, 0x7FFF]
# item 2: the tensorwise training scale of a tensor with a NaN, by path and source dtype
TRAINING_NAN_SCALE = {"default": {"f32": 0x7FC00000, "bf16": 0x7FC00000, "f16": 0x7FC00000},
                      "vector": {"f32": 0xFFFFFFFF, "bf16": 0x7FC00000, "f16": 0xFFC00000}}
NUMREF_TRAINING_NAN_SCALE = 0xFFFFFFFF
INFERENCE_F16_NAN_SCALE = 0x7FFFFFFF
NUMREF_INFERENCE_F16_NAN_SCALE = 0x7FC00000


def scalar_positions(n, threads):
    """The positions of a contiguous n-element tensor that torch's scalar loop converts."""
    tasks = 1 if n < GRAIN else min(threads, -(-n // GRAIN))
    size = -(-n // tasks)
    out = []
    for b in range(0, n, size):
        e = min(n, b + size)
        out.extend(range(e - (e - b) % CHUNK, e))
    return out


def probe():
    """Runs in a child with ATEN_CPU_CAPABILITY set: torch's observations as JSON."""
    import torch
    from torchao.float8.config import ScalingGranularity
    from torchao.float8.float8_utils import tensor_to_scale
    from torchao.quantization.quant_primitives import _choose_scale_float8
    obs = {"capability": torch.backends.cpu.get_cpu_capability(), "to_f32": {}, "training": {}}
    for code in F16_NANS:
        for n, t in SIZES:
            torch.set_num_threads(t)
            x = torch.from_numpy(np.full(n, code, dtype=np.uint16).view(np.int16)).view(torch.float16)
            y = x.to(torch.float32).view(torch.int32).numpy().view(np.uint32)
            obs["to_f32"][f"{code:x} {n} {t}"] = {"ones": np.nonzero(y == 0x7FFFFFFF)[0].tolist(),
                                                  "other": sorted({int(v) for v in y[y != 0x7FFFFFFF]})}
    torch.set_num_threads(1)
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16), ("f16", torch.float16)):
        x = torch.linspace(-3, 3, 16 * 32, dtype=torch.float32).reshape(16, 32).to(dt)
        x[3, 5] = float("nan")
        s = tensor_to_scale(x, torch.float8_e4m3fn, scaling_granularity=ScalingGranularity.TENSORWISE)
        obs["training"][name] = int(s.view(torch.int32).item()) & 0xFFFFFFFF
    x = torch.full((4, 32), float("nan"), dtype=torch.float16)
    s = _choose_scale_float8(x, block_size=[4, 32], float8_dtype=torch.float8_e4m3fn)
    obs["inference_f16"] = int(s.view(torch.int32).item()) & 0xFFFFFFFF
    print(json.dumps(obs))


def numref_cast(numref, codes):
    r = subprocess.run([numref, "cast", "--from", "f16", "--to", "f32", "--profile", "torch"],
                       input="\n".join(f"{c:04x}" for c in codes), capture_output=True, text=True, check=True)
    return [int(line.split()[0], 16) for line in r.stdout.splitlines()]


def numref_scale(numref, tmp, profile, dtype):
    x = np.linspace(-3, 3, 16 * 32, dtype=np.float32).reshape(16, 32)
    x[3, 5] = np.nan
    args = []
    if dtype == "f16":
        x = x.astype(np.float16)
    elif dtype == "bf16":  # the top half of each binary32 pattern, rounded to nearest even by numpy's bits
        b = x.view(np.uint32)
        x = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
        x[3, 5] = 0x7FC0
        args = ["--input-format", "bf16"]
    if profile == "torchao_float8_inference":
        x = np.full((4, 32), np.nan, dtype=np.float16)
        args = []
    path = os.path.join(tmp, "x.npy")
    np.save(path, x)
    out = os.path.join(tmp, f"{profile}-{dtype}")
    subprocess.run([numref, "quantize", "--input", path, "--format", "f8e4m3fn", "--profile", profile, "--out", out]
                   + args, capture_output=True, text=True, check=True)
    return int(np.load(out + ".scales.npy").view(np.uint32).ravel()[0])


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--probe":
        probe()
        return 0
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    numref = sys.argv[1]
    bad = 0

    def check(what, ok, detail=""):
        nonlocal bad
        print(f"{'ok  ' if ok else 'FAIL'} {what}{'' if ok else ': ' + detail}")
        bad += 0 if ok else 1

    vector = dict(zip(F16_NANS, numref_cast(numref, F16_NANS)))
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ("f32", "bf16", "f16"):
            got = numref_scale(numref, tmp, "torchao_float8", dtype)
            check(f"numref torchao_float8 tensorwise NaN scale, {dtype} source: {got:08x}",
                  got == NUMREF_TRAINING_NAN_SCALE, f"docs say {NUMREF_TRAINING_NAN_SCALE:08x}")
        got = numref_scale(numref, tmp, "torchao_float8_inference", "f16")
        check(f"numref torchao_float8_inference f16 NaN scale: {got:08x}", got == NUMREF_INFERENCE_F16_NAN_SCALE,
              f"docs say {NUMREF_INFERENCE_F16_NAN_SCALE:08x}")
    seen = set()
    for cap in ("default", "avx2", "avx512"):
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
        r = subprocess.run([sys.executable, __file__, "--probe"], env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL torch / torchao under ATEN_CPU_CAPABILITY={cap}: {r.stderr.strip()[-400:]}")
            return 1
        obs = json.loads(r.stdout.strip().splitlines()[-1])
        got_cap = obs["capability"].lower()
        if got_cap in seen:  # the CPU lacks this ISA: torch fell back to a path already checked
            print(f"---- {cap}: not on this CPU (torch runs {got_cap})")
            continue
        seen.add(got_cap)
        path = "default" if got_cap == "default" else "vector"
        for key, o in obs["to_f32"].items():
            code, n, t = (int(v, 16) if i == 0 else int(v) for i, v in enumerate(key.split()))
            want = scalar_positions(n, t)
            check(f"{cap}: f16 {code:04x} x {n} on {t} thread(s) -> f32: 7FFFFFFF at {len(o['ones'])} scalar "
                  f"positions, {[f'{v:08x}' for v in o['other']]} elsewhere",
                  o["ones"] == want and o["other"] == ([vector[code]] if len(want) < n else []),
                  f"model: {len(want)} positions {want[:8]}..., the rest {vector[code]:08x} (numref torch)")
        for dtype, want in TRAINING_NAN_SCALE[path].items():
            got = obs["training"][dtype]
            check(f"{cap}: torchao float8 tensorwise NaN scale, {dtype} source: {got:08x}", got == want,
                  f"docs say {want:08x}")
        check(f"{cap}: torchao float8 inference f16 NaN scale: {obs['inference_f16']:08x}",
              obs["inference_f16"] == INFERENCE_F16_NAN_SCALE, f"docs say {INFERENCE_F16_NAN_SCALE:08x}")
    print(f"{bad} of the checks above differ from docs/profiles.md")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
