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

# ---- issue 31 item 11 ------------------------------------------------------------------------
# --help prints the verb's help on stdout, exit 0, like every other verb
rc, out, err = run("--help")
check(rc == 0 and "usage: numref gaussws" in out and "--seed" in out and err == "", "--help: rc=%d %r" % (rc, err))

# §30.3 the generator, written here from the spec text (never from numref's code):
#   mix = the SplitMix64 finaliser, gamma = 0x9E3779B97F4A7C15, all mod 2^64;
#   k = mix(mix(mix(mix(seed) ^ layer) ^ step) ^ (I * 2^32 + J)),
#   z = mix(k + (e // 4 + 1) * gamma), u = (z >> (16 * (e % 4))) & 0xFFFF;
# §30.2 |R| = 2 if (u0|u1)&u2&...&u9, else 1 if (u10|u11)&(u12|u13)&u14, else 0; u15 the sign;
# §30.9 packed: nibble k mod 8 of word k // 8, bit 3 the sign, bits 0-2 |R|.
M64 = (1 << 64) - 1


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def words(seed, layer, step, bi, bj, count):
    k = mix(mix(mix(mix(seed) ^ layer) ^ step) ^ ((bi << 32) + bj))
    return [(mix((k + (e // 4 + 1) * 0x9E3779B97F4A7C15) & M64) >> (16 * (e % 4))) & 0xFFFF for e in range(count)]


def noise(u):
    b = [(u >> i) & 1 for i in range(16)]
    a = (b[0] | b[1]) & b[2] & b[3] & b[4] & b[5] & b[6] & b[7] & b[8] & b[9]
    m = 2 if a else (1 if (b[10] | b[11]) & (b[12] | b[13]) & b[14] else 0)
    return -m if (m and b[15]) else m


def packed(rs):
    out = [0] * ((len(rs) + 7) // 8)
    for k, r in enumerate(rs):
        out[k // 8] |= ((8 if r < 0 else 0) | abs(r)) << (4 * (k % 8))
    return out


# the words docs/gaussws.md pins (seed 1, layer 2, step 3, block (0, 1)): checks this model
check([hex(x) for x in words(1, 2, 3, 0, 1, 4)] == ["0x97ea", "0xda08", "0x33ab", "0x6019"],
      "the generator model gives docs/gaussws.md's words")
with tempfile.TemporaryDirectory() as d:
    P = lambda n: os.path.join(d, n)  # noqa: E731
    np.save(P("w1k.npy"), np.ones((32, 32), dtype=np.float32))  # one block: element k = e = i * 32 + j
    # seed / layer / step are u64 (§30.3), parsed exactly: 2^53 + 1 is not 2^53 (a double would merge them)
    for seed, layer, step in ((2**53 + 1, 0, 0), (2**53, 0, 0), (2**64 - 1, 2**64 - 1, 2**64 - 1),
                              (2**63, 2**53 + 1, 2**62 + 3)):
        rc, out, err = run("--w", P("w1k.npy"), "--bt", "4", "--seed", str(seed), "--layer", str(layer),
                           "--step", str(step), "--out-r", P("r.npy"))
        check(rc == 0, "seed %d layer %d step %d: rc=%d %r" % (seed, layer, step, rc, err))
        if rc == 0:
            want = packed([noise(u) for u in words(seed, layer, step, 0, 0, 1024)])
            got = [int(x) for x in np.load(P("r.npy"))]
            check(got == want, "seed %d layer %d step %d: packed R differs from §30.3's generator" % (seed, layer, step))
    check(packed([noise(u) for u in words(2**53 + 1, 0, 0, 0, 0, 1024)]) !=
          packed([noise(u) for u in words(2**53, 0, 0, 0, 0, 1024)]), "seeds 2^53 and 2^53 + 1 give different R")
    for opt in ("--seed", "--layer", "--step"):
        for bad, needle in ((str(2**64), "18446744073709551615"), (str(10**30), "18446744073709551615"),
                            ("-1", "malformed"), ("1e3", "malformed")):
            args = ["--w", P("w1k.npy"), "--bt", "4", "--seed", "1", "--out-r", P("x.npy")]
            if opt == "--seed":
                args[5] = bad
            else:
                args += [opt, bad]
            rc, out, err = run(*args)
            check(rc == 2 and opt in err and needle in err and err.count("\n") == 1,
                  "%s %s: rc=%d %r" % (opt, bad, rc, err))

    # --out is (m, n): the leading axes of w flattened into m (docs/gaussws.md), also for 1-D and 3-D w
    for shape, m, n in (((2, 3, 40), 6, 40), ((40,), 1, 40)):
        np.save(P("wn.npy"), np.ones(shape, dtype=np.float32))
        rc, out, err = run("--w", P("wn.npy"), "--bt", "4", "--seed", "1", "--out", P("o.npy"))
        check(rc == 0 and np.load(P("o.npy")).shape == (m, n), "w of shape %s: --out shape (%d, %d)" % (shape, m, n))

    # --grad's format is its own dtype, whatever w's: a bf16 w (--input-format bf16) with an f32
    # gradient, an f32 w with a bf16 gradient. 1.0 everywhere, b_t = 4: s = 1/8; T = sum R over
    # the block, from the same words as above (seed 1, block (0, 0), e = i * 32 + j).
    ones_bf16 = np.full((4, 8), 0x3F80, dtype=np.uint16)  # bf16 1.0
    np.save(P("wb.npy"), ones_bf16)
    np.save(P("wf.npy"), np.ones((4, 8), dtype=np.float32))
    np.save(P("gf.npy"), np.ones((4, 8), dtype=np.float32))
    np.save(P("gb.npy"), ones_bf16)
    u = words(1, 0, 0, 0, 0, 1024)
    T = sum(noise(u[i * 32 + j]) for i in range(4) for j in range(8))
    results = []
    for wfile, fmt, gfile in (("wb.npy", ["--input-format", "bf16"], "gf.npy"), ("wf.npy", [], "gb.npy"),
                              ("wf.npy", [], "gf.npy"), ("wb.npy", ["--input-format", "bf16"], "gb.npy")):
        rc, out, err = run("--w", P(wfile), *fmt, "--bt", "4", "--seed", "1", "--grad", P(gfile), "--out-grad", P("d.npy"))
        check(rc == 0, "w %s, grad %s: rc=%d %r" % (wfile, gfile, rc, err))
        results.append(int(np.load(P("d.npy")).view(np.uint32)[0, 0]) if rc == 0 else None)
    # -ln2 * T / 8 for the T of this block: its sign and rough size (the exact value: test above)
    dv = np.array(results[:1], dtype=np.uint32).view(np.float32)[0] if results[0] is not None else float("nan")
    check(len(set(results)) == 1 and abs(dv - (-np.log(2) * T / 8)) <= 1e-6 * max(1, abs(T)),
          "dL/db_t the same for every w / g format pair and = -ln2*T/8 (T=%d): %r %r" % (T, results, dv))

    # s = +Inf (§30.4): e = RN32(2^(1 - b_t)) = +Inf for b_t <= -127 (2^128 overflows), and also at an
    # ordinary b_t when max|w| * e overflows: max|w| = 2^127, b_t = 0: s = RN32(2^127 * 2) = +Inf.
    # Then w_hat = +-Inf where R != 0 and the exact value is +-inf; R = 0 keeps w.
    # b_t = -126.5: e = 2^127.5 is finite, s = e (max|w| = 1), so w_hat is finite.
    u8 = np.zeros((1, 8), dtype=np.uint16)
    u8[0, 1] = 0x7C00  # R = +1 (B)
    u8[0, 2] = 0xFC00  # R = -1
    np.save(P("u8.npy"), u8)
    for amax, bt, inf in ((2.0**127, "0", True), (1.0, "-127", True), (1.0, "-126.5", False), (2.0**127, "1", False)):
        w = np.zeros((1, 8), dtype=np.float32)
        w[0, 0] = amax
        np.save(P("wi.npy"), w)
        rc, out, err = run("--w", P("wi.npy"), "--bt", bt, "--bits", P("u8.npy"), "--out", P("o.npy"),
                           "--exact-out", P("v.txt"))
        h = [int(x) for x in np.load(P("o.npy")).ravel()] if rc == 0 else []
        v = open(P("v.txt")).read().split() if rc == 0 else []
        name = "max|w| = %r, b_t = %s" % (amax, bt)
        check(rc == 0, name + ": rc=%d %r" % (rc, err))
        if rc == 0 and inf:
            check(h[1:3] == [0x7F80, 0xFF80] and v[1:3] == ["inf", "-inf"], name + ": s = +Inf: %r %r" % (h[:3], v[:3]))
        elif rc == 0:
            check(h[1] not in (0x7F80, 0xFF80) and h[1] & 0x7F80 != 0x7F80 and "inf" not in v[1],
                  name + ": s finite: %r %r" % (h[:3], v[:3]))
        check(rc != 0 or v[0] == float(amax).hex().replace("0x1.0000000000000p", "0x1p"),
              name + ": R = 0 keeps w: %r" % v[:1])

if FAILS:
    print("%d failure(s)" % len(FAILS))
    sys.exit(1)
print("ok")
