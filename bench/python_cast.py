#!/usr/bin/env python3
"""numref.cast throughput from Python (issue 13): 16 M elements f32 -> f8e4m3fn and
bf16 -> f8e4m3fn (OCP profile, RNE), elements per second on one core, against ml_dtypes'
astype on the same input. Never asserted by a test; the numbers go in docs/performance.md.

    PYTHONPATH=build/python python3 bench/python_cast.py [--n 16777216] [--repeat 5]

Input: uniformly random values in [-512, 512) (the target's range and a little beyond it), the
bf16 input being the f32 input rounded by numref. Each timing is the best of --repeat runs of
one call (output allocation included); numref's conversion and ml_dtypes' astype run on the
calling thread only, so the rates are given per CPU second of that thread (time.thread_time:
robust to other jobs on a shared machine, apart from cache and frequency effects) and, in
brackets, per wall-clock second.
"""
import argparse
import os
import platform
import time

import ml_dtypes
import numpy as np

import numref


def best(fn, repeat):
    """(best thread CPU seconds, best wall seconds) of `repeat` calls."""
    cpu = wall = float("inf")
    for _ in range(repeat):
        c0, w0 = time.thread_time(), time.perf_counter()
        fn()
        cpu = min(cpu, time.thread_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall


def rate(n, t):
    return f"{n / t[0] / 1e9:6.3f} G/s ({n / t[1] / 1e9:.3f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    x32 = np.random.default_rng(1).uniform(-512, 512, a.n).astype(np.float32)
    x16 = numref.cast(x32, "bf16")
    print(f"numref {numref.__version__}, ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}, "
          f"Python {platform.python_version()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, n = {a.n}")
    for name, x in (("f32 -> f8e4m3fn", x32), ("bf16 -> f8e4m3fn", x16)):
        numref.cast(x[:4096], "f8e4m3fn")  # prepare (the bf16 table) outside the timing
        with np.errstate(invalid="ignore", over="ignore"):
            t_nr = best(lambda: numref.cast(x, "f8e4m3fn", threads=1), a.repeat)
            t_nf = best(lambda: numref.cast(x, "f8e4m3fn", flags=True, threads=1), a.repeat)
            t_ml = best(lambda: x.astype(ml_dtypes.float8_e4m3fn), a.repeat)
        print(f"{name:17s} numref.cast {rate(a.n, t_nr)}   with flags {rate(a.n, t_nf)}   "
              f"ml_dtypes astype {rate(a.n, t_ml)}")


if __name__ == "__main__":
    main()
