#!/usr/bin/env python3
"""CLI tests of `numref mor` (spec §21 – §28).

Usage: test_mor_cli.py PATH/TO/numref

Expected values come from hand computation (the comments; the same worked examples as
reference/tests/test_mor.cpp and test_stats.cpp) or from an independent implementation of
tensor-level MoR with NumPy float32 arithmetic and ml_dtypes conversions (IEEE binary32
multiply / divide / subtract with round-to-nearest-even, RNE conversions to float8_e4m3fn and
bfloat16 — the operations the spec names) and exact Python fractions for the sum, the mean
and the threshold. Needs numpy and ml_dtypes (scripts/setup.sh installs them); fails, never
skips, without them.
"""
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from fractions import Fraction

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numref_testlib import VerbChecks  # noqa: E402  (tools/tests/numref_testlib.py)

NUMREF = sys.argv[1] if len(sys.argv) > 1 else "build/numref"
CHECKS = VerbChecks(NUMREF, "mor")
check, run = CHECKS.check, CHECKS.run


def bits32(a):
    return int(np.asarray(a, dtype=np.float32).reshape(()).view(np.uint32))


def rn32_bits(fr):
    """Binary32 bits of the non-negative Fraction fr rounded to nearest, ties to even."""
    if fr == 0:
        return 0
    e = fr.numerator.bit_length() - fr.denominator.bit_length()
    if Fraction(2) ** e > fr:
        e -= 1
    q = max(e, -126) - 23
    scaled = fr / Fraction(2) ** q
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    return bits32(np.float32(float(n * Fraction(2) ** q)))


def gam_tensor_mor(x, br, bc, threshold):
    """Tensor-level MoR (spec §26) in NumPy float32 + ml_dtypes: GAM scales (§17) with one group,
    rn32 application, E4M3 RNE, dequantize by division, BF16; e = |x - q| / |x| in float32."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    br = rows if br == 0 else min(br, rows)
    bc = cols if bc == 0 else min(bc, cols)
    qmax = np.float32(448)
    gamax = np.float32(np.abs(x).max())
    s_g = np.float32(1) if gamax == 0 else np.float32(qmax / gamax)
    m_g = bits32(s_g) & 0x7FFFFF
    fake = np.zeros_like(x)
    codes = []
    for i in range(0, rows, br):
        for j in range(0, cols, bc):
            blk = x[i:i + br, j:j + bc]
            bamax = np.float32(np.abs(blk).max())
            s_b = np.float32(1) if bamax == 0 else np.float32(qmax / bamax)
            b = bits32(s_b)
            e_b = ((b >> 23) & 0xFF) - 127
            if m_g > (b & 0x7FFFFF):
                e_b -= 1
            codes.append(e_b + 127)
            G = np.array([((e_b + 127) << 23) | m_g], dtype=np.uint32).view(np.float32)[0]
            y = (blk * G).astype(np.float32)
            v = y.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
            fake[i:i + br, j:j + bc] = (v / G).astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)
    nz = x != 0
    e = (np.abs(x[nz] - fake[nz]) / np.abs(x[nz])).astype(np.float32)
    total = sum((Fraction(float(v)) for v in e), Fraction(0))
    n = int(nz.sum())
    mean = total / n if n else Fraction(0)
    return {"sum": total, "n": n, "mean_bits": rn32_bits(mean), "quantized": mean < threshold, "codes": codes}


def main():
    tmp = tempfile.mkdtemp(prefix="numref-mor-")
    P = lambda name: os.path.join(tmp, name)

    # ---- §26 hand-worked: accepted at 4.5 %, rejected at 4.4 % -------------------------------
    # [448, 1.0625, 1.0625, 1.0625]: G = 1; 1.0625 is the E4M3 tie 1 | 1.125 -> 1; e = RN32(1/17)
    # = 0x3D70F0F1 three times; mean = 3 · 0xF0F0F1 · 2^-30 -> RN32 0x3D34B4B5 = 0.04412.
    x = np.array([448, 1.0625, 1.0625, 1.0625], dtype=np.float32)
    np.save(P("a.npy"), x.astype(ml_dtypes.bfloat16))
    p = run("--input", P("a.npy"), "--input-format", "bf16")
    check("mean       3d34b4b5 = 0x1.69696ap-5" in p.stdout, f"hand mean in text:\n{p.stdout}")
    check("decision   f8e4m3fn (accepted)" in p.stdout, f"decision at 4.5 %:\n{p.stdout}")
    check("bin        [4%,4.5%)" in p.stdout, f"bin:\n{p.stdout}")
    for th in ("0.044", "4.4%", "11/250"):
        p = run("--input", P("a.npy"), "--input-format", "bf16", "--threshold", th)
        check("decision   bf16 (threshold)" in p.stdout, f"decision at {th}:\n{p.stdout}")
    s = json.loads(run("--input", P("a.npy"), "--input-format", "bf16", "--json").stdout)
    check(s["metric"]["mean"]["hex"] == "3d34b4b5" and s["metric"]["mean"]["hexfloat"] == "0x1.69696ap-5",
          f"JSON mean {s['metric']['mean']}")
    check(Fraction(s["metric"]["mean"]["value"]) == Fraction(0xB4B4B5, 2 ** 28), "JSON mean value is exact")
    check(Fraction(s["metric"]["error"]["sum"]["value"]) == 3 * Fraction(0xF0F0F1, 2 ** 28), "JSON exact sum")
    check(s["metric"]["error"]["n"] == 4 and s["bin"] == 8 and s["quantized"] and s["reason"] == "accepted",
          f"JSON decision {s}")
    check(s["threshold"] == {"num": 9, "den": 200, "text": "0.045"}, f"threshold {s['threshold']}")
    check(s["scales"]["group_mantissa"] == "000000" and s["scales"]["codes"] == ["7f"], f"scales {s['scales']}")

    # ---- per tensor rejects, per block accepts (flushed values, MoR §4.1.3) -------------------
    # [448, 448, 2^-10, 2^-10]: per tensor 2^-10 ties to 0 (half of 2^-9): e = 1 twice, mean 0.5;
    # per 1x2 block the small block gets G = 2^18 (code 0x91) and everything is exact.
    np.save(P("b.npy"), np.array([448, 448, 2 ** -10, 2 ** -10], dtype=np.float32))
    t = json.loads(run("--input", P("b.npy"), "--partition", "tensor", "--json").stdout)
    check(t["decision"] == "bf16" and t["metric"]["mean"]["hex"] == "3f000000", f"per tensor {t}")
    b = json.loads(run("--input", P("b.npy"), "--partition", "block:1x2", "--json").stdout)
    check(b["decision"] == "f8e4m3fn" and b["metric"]["mean"]["hex"] == "00000000", f"per block {b}")
    check(b["scales"]["codes"] == ["7f", "91"], f"per-block scales {b['scales']}")

    # ---- NumPy + ml_dtypes differential (GAM, every partition kind) ---------------------------
    rng = np.random.default_rng(2024)
    for case in range(12):
        shape = (int(rng.integers(1, 90)), int(rng.integers(1, 90)))
        x = (rng.standard_normal(shape) * np.exp(rng.standard_normal(shape) * rng.uniform(0.2, 2.5))).astype(np.float32)
        x[rng.random(shape) < 0.05] = 0
        bf = case % 2 == 1
        if bf:
            x = x.astype(ml_dtypes.bfloat16).astype(np.float32)
            np.save(P("d.npy"), x.astype(ml_dtypes.bfloat16))
        else:
            np.save(P("d.npy"), x)
        part, br, bc = [("block:32x32", 32, 32), ("tensor", 0, 0), ("channel:rows", 1, 0), ("channel:cols", 0, 1),
                        ("block:7x5", 7, 5), ("block:128x128", 128, 128)][case % 6]
        th = ["0.045", "0.03", "0.02"][case % 3]
        want = gam_tensor_mor(x, br, bc, Fraction(th))
        args = ["--input", P("d.npy"), "--partition", part, "--threshold", th, "--json", "--max-blocks", "100000"]
        if bf:
            args += ["--input-format", "bf16"]
        got = json.loads(run(*args).stdout)
        m = got["metric"]
        check(Fraction(m["error"]["sum"]["value"]) == want["sum"] and m["error"]["n"] == want["n"],
              f"case {case} ({part}): exact sum {m['error']} vs {float(want['sum'])} over {want['n']}")
        check(int(m["mean"]["hex"], 16) == want["mean_bits"], f"case {case}: mean {m['mean']['hex']} vs {want['mean_bits']:08x}")
        check(got["quantized"] == want["quantized"], f"case {case}: decision {got['decision']}")
        check([int(c, 16) for c in got["scales"]["codes"]] == want["codes"], f"case {case}: scale codes")

    # ---- transpose: channel:rows of X = channel:cols of Xᵀ = --transpose channel:cols of X ----
    x = (rng.standard_normal((40, 24)) * np.exp(rng.standard_normal((40, 24)))).astype(np.float32)
    np.save(P("x.npy"), x)
    np.save(P("xt.npy"), np.ascontiguousarray(x.T))
    r1 = json.loads(run("--input", P("x.npy"), "--partition", "channel:rows", "--json").stdout)
    r2 = json.loads(run("--input", P("xt.npy"), "--partition", "channel:cols", "--json").stdout)
    r3 = json.loads(run("--input", P("x.npy"), "--transpose", "--partition", "channel:cols", "--json").stdout)
    check(r1["metric"] == r2["metric"] == r3["metric"] and r1["decision"] == r2["decision"] == r3["decision"],
          "per-channel transpose symmetry")
    check(r3["input"]["rows"] == 24 and r3["input"]["transposed"], f"transposed shape {r3['input']}")

    # ---- §27 sub-tensor -----------------------------------------------------------------------
    # [1, 2^-20]: E4M3 flushes 2^-20 (sum 1), E5M2 keeps it (sum 0): Eq. 3 fails; max/min = 2^20 <
    # 57344 / 2^-14: E5M2 (three-way); the two-way recipe keeps BF16. Outputs equal the input.
    np.save(P("s.npy"), np.array([1, 2 ** -20], dtype=np.float32).astype(ml_dtypes.bfloat16))
    p = run("--input", P("s.npy"), "--input-format", "bf16", "--recipe", "subtensor3", "--partition", "block:1x2",
            "--out", P("s3"))
    check(np.load(P("s3.types.npy")).tolist() == [[1]], "three-way type map")
    check(np.load(P("s3.fakequant.npy")).tolist() == [[0x3F80, 0x3580]], "three-way output")
    check("f8e5m2 (Eq. 3 not_lower, Eq. 4 accepted)" in p.stdout, f"three-way text:\n{p.stdout}")
    run("--input", P("s.npy"), "--input-format", "bf16", "--recipe", "subtensor2", "--partition", "block:1x2",
        "--out", P("s2"))
    check(np.load(P("s2.types.npy")).tolist() == [[2]], "two-way type map")
    j = json.loads(run("--input", P("s.npy"), "--input-format", "bf16", "--recipe", "subtensor3", "--partition",
                       "block:1x2", "--json").stdout)
    blk = j["blocks"][0]
    check(blk["type"] == "f8e5m2" and blk["eq3"] == "not_lower" and blk["eq4"] == "accepted", f"JSON block {blk}")
    check(Fraction(blk["e4m3"]["sum"]["value"]) == 1 and Fraction(blk["e5m2"]["sum"]["value"]) == 0, "block sums")
    check(j["counts"]["f8e5m2"] == {"blocks": 1, "elements": 2}, f"counts {j['counts']}")

    # ---- several inputs: fallback percentage, histogram, heatmap -----------------------------
    d = P("dir")
    os.mkdir(d)
    np.save(os.path.join(d, "fc2@0.npy"), np.array([448, 448, 2 ** -10, 2 ** -10], dtype=np.float32))  # 50 %: >= 5.5 %
    np.save(os.path.join(d, "fc2@1.npy"), np.array([448, 1.0625, 1.0625, 1.0625], dtype=np.float32))  # 4.41 %: bin 8
    np.save(os.path.join(d, "w.npy"), np.array([448, 288, 0, 1], dtype=np.float32))  # exact: bin 0
    h = json.loads(run("--input", d, "--json").stdout)
    check(h["fallback"] == {"count": 1, "total": 3, "percent": "33.33"}, f"fallback {h['fallback']}")
    rows = {r["name"]: r for r in h["histogram"]["rows"]}
    check(rows["fc2"]["counts"] == [0] * 8 + [1, 0, 0, 1] and rows["fc2"]["observations"] == 2, f"fc2 row {rows['fc2']}")
    check(rows["w"]["counts"] == [1] + [0] * 11, f"w row {rows['w']}")
    check(len(h["histogram"]["bins"]) == 12 and h["histogram"]["bins"][11] == ">=5.5%", "bin labels")
    p = run("--input", os.path.join(d, "fc2@0.npy"), os.path.join(d, "w.npy"), "--svg", P("h.svg"))
    check("fallback   1 of 2 tensors (50.00 %)" in p.stdout, f"text fallback:\n{p.stdout}")
    run("--input", d, "--svg", P("h.svg"))
    root = ET.parse(P("h.svg")).getroot()
    check(root.tag == "{http://www.w3.org/2000/svg}svg", f"svg root {root.tag}")
    cells = [e for e in root.iter() if e.get("class") == "cell"]
    check(len(cells) == 2 * 12, f"heatmap cells: {len(cells)} (2 tensors x 12 bins)")
    check(len([e for e in root.iter() if e.get("class") == "threshold"]) == 1, "threshold line")

    # ---- §28.2 --reset-every: one histogram per tensor per N steps (MoR §4.1.3: 6000) ----------
    # fc2@0 (>= 5.5 %) and fc2@1 (bin 8) are steps 0 and 1; a third observation at step 6000 starts
    # the window [6000, 12000) of fc2; with N = 6000, w.npy (no step) is refused.
    dw = P("windows")
    os.mkdir(dw)
    for name in ("fc2@0.npy", "fc2@1.npy"):
        os.link(os.path.join(d, name), os.path.join(dw, name))
    np.save(os.path.join(dw, "fc2@step6000.npy"), np.array([448, 288, 0, 1], dtype=np.float32))  # exact: bin 0
    hw = json.loads(run("--input", dw, "--json", "--reset-every", "6000").stdout)["histogram"]["rows"]
    check([(r["name"], r.get("steps"), r["observations"]) for r in hw] == [("fc2", [0, 6000], 2), ("fc2", [6000, 12000], 1)],
          f"windowed rows {hw}")
    check(hw[0]["counts"] == [0] * 8 + [1, 0, 0, 1] and hw[1]["counts"] == [1] + [0] * 11, f"windowed counts {hw}")
    pw = run("--input", dw, "--reset-every", "6000")
    check("fc2 steps [6000,12000)" in pw.stdout, f"windowed text rows:\n{pw.stdout}")
    one = json.loads(run("--input", dw, "--json", "--reset-every", "2").stdout)["histogram"]["rows"]
    check([r.get("steps") for r in one] == [[0, 2], [6000, 6002]], f"--reset-every 2 rows {one}")
    e = run("--input", d, "--reset-every", "6000", expect=2).stderr
    check("w.npy" in e and "training step" in e, f"--reset-every with a file without a step: {e}")
    check("--reset-every" in run("--input", dw, "--reset-every", "0", expect=2).stderr, "--reset-every 0")
    check("several inputs" in run("--input", P("b.npy"), "--reset-every", "10", expect=2).stderr, "--reset-every, one input")

    # ---- §28.4 moments (test_stats Moments.HandWorked) ---------------------------------------
    np.save(P("m.npy"), np.array([1, 2, 3, 4], dtype=np.float32))
    mo = json.loads(run("--input", P("m.npy"), "--stats", "--json").stdout)["moments"]
    check(mo["mean"]["hex"] == "40200000" and mo["variance"]["hex"] == "3fa00000" and mo["skewness"]["hex"] == "00000000"
          and mo["kurtosis"]["hex"] == "3fd1eb85", f"moments {mo}")

    # ---- errors ------------------------------------------------------------------------------
    check("--input" in run(expect=2).stderr, "missing --input")
    check("unknown recipe" in run("--input", P("b.npy"), "--recipe", "x", expect=2).stderr, "bad recipe")
    check("negative" in run("--input", P("b.npy"), "--threshold", "-0.1", expect=2).stderr, "negative threshold")
    check("--threshold" in run("--input", P("b.npy"), "--threshold", "1e-2", expect=2).stderr, "malformed threshold")
    check("tensor recipe" in run("--input", P("b.npy"), "--recipe", "subtensor3", "--threshold", "0.1", expect=2).stderr,
          "threshold with subtensor")
    check("--input-format" in run("--input", P("a.npy"), expect=2).stderr, "'<V2' without --input-format")
    os.mkdir(P("empty"))
    check("no .npy" in run("--input", P("empty"), expect=2).stderr, "empty directory")
    check("several inputs" in run("--input", P("b.npy"), "--svg", P("x.svg"), expect=2).stderr, "--svg with one input")
    check("--out" in run("--input", P("b.npy"), "--out", P("o"), expect=2).stderr, "--out with the tensor recipe")
    check("--scale" in run("--input", P("b.npy"), "--scale", "nvfp4", expect=2).stderr, "nvfp4 is not an FP8 MoR rule")
    check("--partition" in run("--input", P("b.npy"), "--partition", "block:0x2", expect=2).stderr, "bad partition")
    with open(P("bad.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
    check(".npy" in run("--input", P("bad.npy"), expect=2).stderr, "malformed .npy")
    check("--fake" in run("--input", P("b.npy"), "--fake", "f8e4m3fn", expect=2).stderr, "bad --fake")

    return CHECKS.finish()


if __name__ == "__main__":
    sys.exit(main())
