"""The Triton MX quantizer of python/examples/triton_mx_quantize.py, replayed (issue 31 item 1).

The live run (Triton's CPU interpreter, TRITON_INTERPRET=1) is the CTest test python_peers (label
peers): it checks the kernel with numref.conform.check and records its results per case in
tests/fixtures/triton_mx_quantize.npz (``--record``). Here, without Triton, the recorded results go
through the same check: the same suites (op, profile, level, the kernel's supported=) and golden
vectors, compared bit for bit. A case the recording lacks fails (the suites changed: record again,
`TRITON_INTERPRET=1 python3 python/examples/triton_mx_quantize.py --record
python/tests/fixtures/triton_mx_quantize.npz`).
"""
import hashlib
import os

import numpy as np
import pytest

import numref.conform as nc

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "triton_mx_quantize.npz")
# the example's CHECK, restated: the example imports triton, which this test must not need
SUPPORTED = dict(rule="mx-floor", apply="rn32", amax_nan="propagate", amax_inf="propagate", round="rne",
                 overflow="saturate", daz="0", ftz="0")


def implements(op):
    return (op.block_rows, op.block_cols) == (1, 32) and all(op.params.get(k) == v for k, v in SUPPORTED.items())


def test_the_recorded_triton_kernel_conforms():
    rec = np.load(FIXTURE)
    used = set()

    def replay(x, op):
        key = hashlib.sha256(op.text.encode() + b"|" + np.ascontiguousarray(x).tobytes()).hexdigest()
        if key + "/codes" not in rec:
            raise KeyError(f"no recorded result for the case {op.text} (record again: see this file's docstring)")
        used.add(key)
        return rec[key + "/codes"], rec[key + "/scales"]

    r = nc.check(replay, op="quantize:f32:f8e4m3fn", profile="ocp", level="l2", supported=implements)
    assert r.ok, r.report()
    assert r.cases == len(used) == len(rec.files) // 2 > 0


def test_a_changed_recording_fails():
    rec = dict(np.load(FIXTURE))
    k = next(k for k in rec if k.endswith("/codes"))
    rec[k] = rec[k].copy()
    rec[k].reshape(-1)[0] ^= 1

    def replay(x, op):
        key = hashlib.sha256(op.text.encode() + b"|" + np.ascontiguousarray(x).tobytes()).hexdigest()
        return rec[key + "/codes"], rec[key + "/scales"]

    r = nc.check(replay, op="quantize:f32:f8e4m3fn", profile="ocp", level="l2", supported=implements)
    assert r.mismatches == 1, r.report()


def test_the_example_and_this_test_select_the_same_suites():
    src = open(os.path.join(os.path.dirname(__file__), "..", "examples", "triton_mx_quantize.py")).read()
    assert 'CHECK = dict(op="quantize:f32:f8e4m3fn", profile="ocp", level="l2", supported=implements)' in src
    for k, v in SUPPORTED.items():
        assert f'op.{k} == "{v}"' in src, k
    assert "(op.block_rows, op.block_cols) == (1, BLOCK)" in src and "BLOCK = 32" in src
