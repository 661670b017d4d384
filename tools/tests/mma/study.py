#!/usr/bin/env python3
"""How far each FP8 instruction profile is from the ideal result (docs/mma.md, spec §37 / §38).

usage: study.py NUMREF

A 64 x 4096 by 4096 x 64 e4m3 GEMM with C = +0, values from a standard normal distribution
("gaussian") and the same with 1 % of the values multiplied by 64 ("outliers"), quantized to
e4m3 by ml_dtypes (rne). For each profile: the median and largest relative difference from the
`ideal` profile's D (the exact sum rounded once to binary32), and the share of elements equal to it.

Then the quantized GEMM end to end (spec §40.6) on the binary32 tensors: the §29.1 backward error
of D against the unquantized product, per recipe and instruction (max and mean over the elements).
"""
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

SHAPE = (64, 64, 4096)  # M, N, K


def distributions(seed=7):
    """The study's two value distributions, drawing in turn from one generator seeded with `seed`."""
    rng = np.random.default_rng(seed)
    return (("gaussian", lambda s: rng.standard_normal(s)),
            ("outliers", lambda s: rng.standard_normal(s) * np.where(rng.random(s) < 0.01, 64, 1)))


PROFILES = ("ideal", "sm89_mma_f8", "sm90_wgmma_f8", "sm100_tcgen05_f8f6f4", "sm120_mma_f8")


def main(numref):
    M, N, K = SHAPE
    with tempfile.TemporaryDirectory() as t:
        for name, gen in distributions():
            A = gen((M, K)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
            B = gen((K, N)).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
            np.save(os.path.join(t, "a.npy"), A.view(np.uint8))
            np.save(os.path.join(t, "b.npy"), B.view(np.uint8))
            outs = {}
            for prof in PROFILES:
                out = os.path.join(t, prof + ".npy")
                subprocess.run([numref, "mma", "--profile", prof, "--a", os.path.join(t, "a.npy"), "--a-type",
                                "f8e4m3fn", "--b", os.path.join(t, "b.npy"), "--b-type", "f8e4m3fn", "--out", out],
                               check=True, capture_output=True)
                outs[prof] = np.load(out).astype(np.float64)
            ideal = outs["ideal"]
            for prof in PROFILES[1:]:
                rel = np.abs(outs[prof] - ideal) / np.abs(ideal)
                print(f"{name:9s} {prof:22s} relative difference from ideal: median {np.median(rel):.2e}, "
                      f"max {rel.max():.2e}; equal to ideal {np.mean(outs[prof] == ideal) * 100:5.1f} %")


RECIPE_RUNS = (("te_mxfp8", "sm100_tcgen05_mxf8f6f4"), ("torchao_mx_floor", "sm100_tcgen05_mxf8f6f4"),
               ("deepgemm", "sm90_wgmma_f8"))


def backward_errors(numref):
    M, N, K = SHAPE
    with tempfile.TemporaryDirectory() as t:
        for name, gen in distributions():
            np.save(os.path.join(t, "x.npy"), gen((M, K)).astype(np.float32))
            np.save(os.path.join(t, "w.npy"), gen((K, N)).astype(np.float32))
            for recipe, prof in RECIPE_RUNS:
                be = os.path.join(t, "be.npy")
                subprocess.run([numref, "mma", "--profile", prof, "--a", os.path.join(t, "x.npy"), "--b",
                                os.path.join(t, "w.npy"), "--recipe", recipe, "--out", os.path.join(t, "d.npy"),
                                "--backward-error", be], check=True, capture_output=True)
                v = np.load(be).astype(np.float64)
                print(f"{name:9s} {recipe:17s} {prof:22s} backward error (§29.1): median {np.median(v):.2e}, "
                      f"max {v.max():.2e}")


if __name__ == "__main__":
    main(sys.argv[1])
    backward_errors(sys.argv[1])
