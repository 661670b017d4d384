#!/usr/bin/env python3
"""numref.cast and numref.quantize from Python on 1 and 2 threads (issue 32), with CPU peers on
the same inputs: torch's `.to(torch.float8_e4m3fn)` on all of torch's threads and ml_dtypes'
astype. Never asserted by a test; torch and ml_dtypes are benchmark-only dependencies (a peer that
is not installed is reported as such). The numbers go in docs/performance.md.

    PYTHONPATH=build/python python3 bench/python_quantize.py [--sizes 2048,8192] [--repeat 3]

Input: an N x N float32 tensor of standard-normal values scaled by 2^k, k uniform in [-8, 8)
(NumPy PCG64, seed 1), and its bf16 rounding. Each rate is N^2 elements over the best wall-clock
time of --repeat calls (output allocation included; the first call of each configuration, which
builds cpu-fast's tables, is not timed). numref.quantize returns codes and scales; its
dequantized / fake-quant tensors are computed only when read, and are not read here.
"""
import argparse
import os
import platform
import time

import numpy as np

import numref


def best(fn, repeat):
    fn()  # warm: tables, page faults of the first output
    t = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


QUANTIZE = [
    ("MX 1x32 mx-floor (default policy)", dict(partition="block:1x32", scale="mx-floor")),
    ("profile torchao_mx_floor", dict(profile="torchao_mx_floor")),
    ("profile te_mxfp8", dict(profile="te_mxfp8")),
    ("profile deepgemm (1x128)", dict(profile="deepgemm")),
    ("amax 128x128", dict(partition="block:128x128")),
    ("amax per tensor", dict()),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    print(f"numref {numref.__version__}, numpy {np.__version__}, Python {platform.python_version()}, "
          f"torch {torch.__version__ if torch else 'not installed'} ({torch.get_num_threads() if torch else 0} threads), "
          f"ml_dtypes {ml_dtypes.__version__ if ml_dtypes else 'not installed'}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()}")
    for n in (int(s) for s in a.sizes.split(",")):
        rng = np.random.default_rng(1)
        x32 = (rng.standard_normal((n, n), dtype=np.float32) * np.exp2(rng.integers(-8, 8, (n, n))).astype(np.float32))
        x16 = numref.cast(x32, "bf16")
        N = n * n
        print(f"-- {n} x {n} ({N} elements)")
        rows = []
        for src, x in (("f32", x32), ("bf16", x16)):
            for th in (1, 2):
                t = best(lambda: numref.cast(x, "f8e4m3fn", threads=th), a.repeat)
                rows.append((f"numref.cast {src} -> f8e4m3fn, threads={th}", t))
            if torch is not None:
                tx = torch.from_numpy(x32) if src == "f32" else torch.from_numpy(x32).to(torch.bfloat16)
                t = best(lambda: tx.to(torch.float8_e4m3fn), a.repeat)
                rows.append((f"torch .to(float8_e4m3fn) {src}, {torch.get_num_threads()} threads", t))
            if ml_dtypes is not None and n <= 4096:
                with np.errstate(invalid="ignore", over="ignore"):
                    t = best(lambda: x.astype(ml_dtypes.float8_e4m3fn), a.repeat)
                rows.append((f"ml_dtypes astype {src} -> float8_e4m3fn", t))
        for name, kw in QUANTIZE:
            for src, x in (("f32", x32), ("bf16", x16)):
                for th in (1, 2):
                    q = numref.quantize(x, "f8e4m3fn", threads=th, **kw)
                    t = best(lambda: numref.quantize(x, "f8e4m3fn", threads=th, **kw), a.repeat)
                    rows.append((f"numref.quantize {name}, {src}, threads={th} [{q.path}]", t))
        for name, t in rows:
            print(f"{name:70s} {t * 1e3:9.1f} ms  {N / t / 1e9:7.3f} G/s")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
