#!/usr/bin/env python3
"""numref gaussws (spec §30): hand-worked values, the noise table, outputs and usage errors.

Expected values are hand computations (comments), never the command's own output."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

NUMREF = sys.argv[1]
FAILS = []


def run(*args):
    p = subprocess.run([NUMREF, "gaussws", *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


# Eq. 10, both signs: Pr(±2) = 3/2048, Pr(±1) = (9/64)(1 - 3/1024) = 9189/65536, Pr(0) = 23483/32768.
rc, out, err = run("--noise-table")
check(rc == 0, "noise-table exit 0")
for line in ("-2  96/65536 = 3/2048", "-1  9189/65536 = 9189/65536", "+0  46966/65536 = 23483/32768",
             "+1  9189/65536 = 9189/65536", "+2  96/65536 = 3/2048", "sum 65536/65536 = 1"):
    check(line in out, "noise-table line " + line)

with tempfile.TemporaryDirectory() as d:
    P = lambda n: os.path.join(d, n)  # noqa: E731
    # 40 x 70: blocks 2 x 3, the last row and column ragged. Block (0,0): a = 1, b_t = 4 -> s = 1/8.
    w = np.zeros((40, 70), dtype=np.float32)
    w[0, 0] = 1.0
    w[0, 1] = 1.0
    w[0, 2] = -0.0
    w[33, 0] = np.inf  # poisons block (1, 0)
    np.save(P("w.npy"), w)
    u = np.zeros((40, 70), dtype=np.uint16)
    u[0, 0] = 0x7C00   # B = (u10|u11)&(u12|u13)&u14 = 1, A = 0, sign 0 -> R = +1
    u[0, 1] = 0x83FF   # A = (u0|u1)&u2..u9 = 1, sign 1 -> R = -2
    np.save(P("u.npy"), u)
    g = np.zeros((40, 70), dtype=np.float32)
    g[0, 0] = 1.0      # T = 1 * 1 -> dL/db_t = -ln2 / 8 = RN32: 0xBDB17218
    np.save(P("g.npy"), g)
    rc, out, err = run("--w", P("w.npy"), "--bt", "4", "--bits", P("u.npy"), "--out", P("h.npy"),
                       "--out-r", P("r.npy"), "--grad", P("g.npy"), "--out-grad", P("d.npy"), "--exact-out", P("v.txt"))
    check(rc == 0, "forward exit 0: " + err)
    h = np.load(P("h.npy"))
    check(h.shape == (40, 70) and h.dtype == np.uint16, "w_hat shape / dtype")
    check(int(h[0, 0]) == 0x3F90, "1 + 1/8 = 1.125 -> bf16 0x3F90")
    check(int(h[0, 1]) == 0x3F40, "1 - 2/8 = 0.75 -> bf16 0x3F40")
    check(int(h[0, 2]) == 0x8000, "-0 with R = 0 stays -0")
    check(int(h[33, 1]) == 0x7FC0 and int(h[39, 31]) == 0x7FC0, "poisoned block -> NaN")
    r = np.load(P("r.npy"))
    check(r.shape == ((40 * 70 + 7) // 8,) and r.dtype == np.uint32, "packed R shape")
    check(int(r[0]) == 0xA1, "packed R: nibble 0 = +1 (0x1), nibble 1 = -2 (0xA)")
    dd = np.load(P("d.npy")).view(np.uint32)
    check(dd.shape == (2, 3), "gradient shape = blocks")
    check(int(dd[0, 0]) == 0xBDB17218, "dL/db_t = RN32(-ln2/8)")
    check(int(dd[1, 0]) == 0x7FC00000, "poisoned block gradient NaN")
    v = open(P("v.txt")).read().split()
    check(v[0] == "0x1.2p+0" and v[1] == "0x1.8p-1", "exact values 1.125 and 0.75: " + " ".join(v[:2]))
    check(v[33 * 70] == "nan", "exact value of a poisoned element")

    # Eq. 11: b_i = 1 with the defaults (6, 4) is b_t = 6; the generator is the same either way.
    np.save(P("bi.npy"), np.ones((2, 3), dtype=np.float32))
    rc1, _, e1 = run("--w", P("w.npy"), "--bi-file", P("bi.npy"), "--seed", "7", "--layer", "2", "--out", P("a.npy"))
    rc2, _, e2 = run("--w", P("w.npy"), "--bt", "6", "--seed", "7", "--layer", "2", "--out", P("b.npy"))
    check(rc1 == 0 and rc2 == 0 and (np.load(P("a.npy")) == np.load(P("b.npy"))).all(), "b_i = 1 equals b_t = b_init")

    # Usage errors: one line, exit 2, nothing overwritten.
    before = open(P("w.npy"), "rb").read()
    for args, needle in (
        (("--w", P("w.npy"), "--bt", "4", "--seed", "1", "--out", P("w.npy")), "also an input"),
        (("--w", P("w.npy"), "--bt", "nan", "--seed", "1", "--out", P("x.npy")), "--bt"),
        (("--w", P("w.npy"), "--bt", "4", "--out", P("x.npy")), "--seed"),
        (("--w", P("w.npy"), "--bt-file", P("u.npy"), "--seed", "1", "--out", P("x.npy")), "<f4"),
        (("--w", P("w.npy"), "--bt", "4", "--bits", P("bi.npy"), "--out", P("x.npy")), "<u2"),
        (("--w", P("w.npy"), "--bt", "4", "--seed", "1", "--sum", "f64", "--out", P("x.npy")), "--sum"),
        (("--w", P("w.npy"), "--bt", "4", "--seed", "1", "--out", P("x.npy"), "--out-r", P("x.npy")), "two outputs"),
        (("--w", P("w.npy"), "--bt", "4", "--seed", "1"), "nothing to do"),
    ):
        rc, out, err = run(*args)
        check(rc == 2 and needle in err and err.count("\n") == 1, "usage error %s: rc=%d %r" % (needle, rc, err))
    check(open(P("w.npy"), "rb").read() == before, "input untouched")
    check(not os.path.exists(P("x.npy")), "no output after an error")

if FAILS:
    print("%d failure(s)" % len(FAILS))
    sys.exit(1)
print("ok")
