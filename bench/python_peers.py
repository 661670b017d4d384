"""CPU peer row (issue 32 item 3): f32 -> f8e4m3fn casts and MX 1 x 32 FLOOR quantization on one
input, torch / ml_dtypes / torchao against numref, elements per wall second (best of --repeat).

  PYTHONPATH=build/python python3 bench/python_peers.py --size 4096 --repeat 5

torch uses every thread (torch.get_num_threads()); torchao's to_mx runs its eager CPU path
(scaling_mode FLOOR, block 32). numref.cast / numref.quantize run with threads=1 and with every
core. Speed is never asserted; docs/performance.md carries the numbers with machine and load."""
import argparse
import os
import sys

import ml_dtypes
import numpy as np
import torch
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.mx_tensor import to_mx

import numref

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_quantize import best  # noqa: E402  (the same timing: a warm-up call, then the best of `repeat`)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.size
    rng = np.random.default_rng(42)
    x = (rng.standard_normal((n, n)) * np.exp2(rng.integers(-8, 8, (n, n)))).astype(np.float32)
    xt = torch.from_numpy(x)
    cores = os.cpu_count() or 1
    rows = [
        (f"torch .to(float8_e4m3fn), {torch.get_num_threads()} threads", lambda: xt.to(torch.float8_e4m3fn)),
        ("ml_dtypes astype(float8_e4m3fn)", lambda: x.astype(ml_dtypes.float8_e4m3fn)),
        ("torchao to_mx FLOOR 1 x 32 (eager CPU)",
         lambda: to_mx(xt, torch.float8_e4m3fn, 32, ScaleCalculationMode.FLOOR)),
        ("numref.cast, threads=1", lambda: numref.cast(x, "f8e4m3fn", raw=True, threads=1)),
        (f"numref.cast, threads={cores}", lambda: numref.cast(x, "f8e4m3fn", raw=True, threads=cores)),
        ("numref.quantize mx-floor 1 x 32, threads=1",
         lambda: numref.quantize(x, "f8e4m3fn", partition="block:1x32", scale="mx-floor", threads=1).raw_codes),
        (f"numref.quantize mx-floor 1 x 32, threads={cores}",
         lambda: numref.quantize(x, "f8e4m3fn", partition="block:1x32", scale="mx-floor", threads=cores).raw_codes),
        ("numref.quantize profile=torchao_mx_floor, threads=1",
         lambda: numref.quantize(x, "f8e4m3fn", profile="torchao_mx_floor", threads=1).raw_codes),
    ]
    print(f"{n} x {n} f32 -> f8e4m3fn, best of {a.repeat}; G/s = elements per wall second")
    for name, fn in rows:
        t = best(fn, a.repeat)
        print(f"{name:55s} {n * n / t / 1e9:7.3f} G/s  ({t * 1e3:8.1f} ms)")


if __name__ == "__main__":
    main()
