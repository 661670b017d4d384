#!/usr/bin/env python3
"""CTest driver of the RTL example (label `rtl`; docs/hardware.md).

    check_rtl.py skip REASON                                   -> exit 77 (CTest: skipped)
    check_rtl.py conform pass|defect NUMREF SIM VECTORS_DIR
    check_rtl.py memh    pass|defect NUMREF SIM VECTORS_DIR WORK_DIR
    check_rtl.py by-hand SOURCE_DIR NUMREF PARENT_DIR

conform: runs `numref conform --backend pipe:SIM --ops cast:f32:f8e4m3fn --profile
cuda_satfinite` (SIM: the Verilator model as a pipe backend, spec §33). `pass` expects exit 0
with cases compared and none failed; `defect` (the design built with SEEDED_DEFECT_TIES_AWAY)
expects exit 1 and, among the decoded mismatch lines, the tie 1.0625 (x = 3f880000, exactly
between f8e4m3fn 1 = 38 and 1.125 = 39; round to nearest even gives 38, ties away 39).

memh: exports vectors/cast/cuda_satfinite/f32-f8e4m3fn.vec with `numref vectors export --to
memh` (spec §31.8) and runs SIM, the SystemVerilog testbench that reads it with $readmemh.
`pass` expects exit 0 and every record matching; `defect` exit 1 with MISMATCH lines.

by-hand: docs/hardware.md shows the commands of conformance/examples/rtl/memh_by_hand.sh (the
lines between its "by hand" markers, verbatim); the script, run from SOURCE_DIR into a new
directory under PARENT_DIR (removed after a pass), exports, verilates and runs the testbench:
exit 0 and every record matching.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SUITE = ["--ops", "cast:f32:f8e4m3fn", "--profile", "cuda_satfinite"]
VEC = os.path.join("cast", "cuda_satfinite", "f32-f8e4m3fn.vec")


def fail(msg, out=""):
    sys.stdout.write(out)
    print("FAILED: " + msg)
    sys.exit(1)


def run(cmd, timeout=300):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return p.returncode, p.stdout


def conform(mode, numref, sim, vectors):
    cmd = [numref, "conform", "--no-progress", "--jobs", "2", "--max-errors", "0", "--vectors", vectors,
           "--backend", "pipe:" + sim] + SUITE
    rc, out = run(cmd)
    summary = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", out)
    if not summary:
        fail("no summary line in the report", out)
    passed, failed = int(summary.group(1)), int(summary.group(2))
    if mode == "pass":
        if rc != 0 or failed != 0 or passed == 0:
            fail("expected exit 0, cases passed and none failed; got exit %d, %d passed, %d failed" % (rc, passed, failed), out)
    else:
        if rc != 1 or failed == 0:
            fail("expected exit 1 with failures (the seeded defect); got exit %d, %d failed" % (rc, failed), out)
        # The decoded report line of the hand-computed tie (spec §4.2, §34.4): the inputs, what
        # the design returned and what the spec says, in hex and as exact values.
        want = "x=3f880000 (1.0625) | got 39 (1.125) ---x | expected 38 (1) ---x | tie"
        if want not in out:
            fail("the report does not decode the tie 1.0625 as '%s'" % want, out)
    sys.stdout.write(out)
    print("OK: %s, exit %d, %d passed, %d failed" % (mode, rc, passed, failed))


def memh(mode, numref, sim, vectors, work):
    os.makedirs(work, exist_ok=True)
    memh_file = os.path.join(work, "f32-f8e4m3fn.cuda_satfinite.memh")
    rc, out = run([numref, "vectors", "export", "--to", "memh", "--out", memh_file, os.path.join(vectors, VEC)])
    if rc != 0:
        fail("numref vectors export failed (exit %d)" % rc, out)
    with open(os.path.join(vectors, VEC)) as f:
        count = int(re.search(r"^count (\d+)$", f.read(), re.M).group(1))
    rc, out = run([sim, "+vectors=" + memh_file])
    if mode == "pass":
        if rc != 0 or ("%d records, 0 mismatches" % count) not in out:
            fail("expected exit 0 and '%d records, 0 mismatches'; got exit %d" % (count, rc), out)
    else:
        if rc != 1 or "MISMATCH record" not in out:
            fail("expected exit 1 and MISMATCH lines (the seeded defect); got exit %d" % rc, out)
    sys.stdout.write(out)
    print("OK: memh %s, exit %d" % (mode, rc))


def by_hand(src, numref, parent):
    script = os.path.join(src, "conformance", "examples", "rtl", "memh_by_hand.sh")
    text = open(script).read()
    m = re.search(r"# --- by hand \(docs/hardware.md\) ---\n(.*?)# --- end by hand ---", text, re.S)
    if not m:
        fail("%s has no by-hand markers" % script, text)
    doc = open(os.path.join(src, "docs", "hardware.md")).read()
    if m.group(1) not in doc:
        fail("docs/hardware.md does not show the by-hand lines of memh_by_hand.sh verbatim", m.group(1))
    work = os.path.join(tempfile.mkdtemp(prefix="by_hand.", dir=parent), "out")  # a new directory
    p = subprocess.run(["bash", script, work, numref], cwd=src, capture_output=True, text=True)
    out = p.stdout + p.stderr
    with open(os.path.join(src, "vectors", VEC)) as f:
        count = int(re.search(r"^count (\d+)$", f.read(), re.M).group(1))
    if p.returncode != 0 or ("%d records, 0 mismatches" % count) not in out:
        fail("expected exit 0 and '%d records, 0 mismatches'; got exit %d" % (count, p.returncode), out)
    shutil.rmtree(os.path.dirname(work))
    print("OK: by-hand flow of docs/hardware.md, %d records" % count)


def main(argv):
    if len(argv) >= 2 and argv[1] == "skip":
        print("SKIPPED: " + " ".join(argv[2:]))
        return 77
    if len(argv) == 6 and argv[1] == "conform" and argv[2] in ("pass", "defect"):
        conform(argv[2], *argv[3:])
        return 0
    if len(argv) == 7 and argv[1] == "memh" and argv[2] in ("pass", "defect"):
        memh(argv[2], *argv[3:])
        return 0
    if len(argv) == 5 and argv[1] == "by-hand":
        by_hand(*argv[2:])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
