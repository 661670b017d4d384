"""numref.conform.check with torch, jax and Triton kernels (CTest python_peers, label peers;
NUMREF_PEERS=1 scripts/setup.sh installs the libraries). Issue 31 item 1.

- torch: inputs arrive as torch tensors over numref's memory through DLPack (no copy: a transposed
  view keeps its strides), results may be torch tensors of any dtype, float8 included.
- jax: inputs arrive as jax arrays, results may be jax arrays.
- Triton: python/examples/triton_mx_quantize.py under Triton's CPU interpreter (TRITON_INTERPRET=1)
  passes, its --bug variant fails with a FAIL line, and its results match the recording the
  default suite replays (tests/fixtures/triton_mx_quantize.npz).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import numref
import numref.conform as nc

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "triton_mx_quantize.py")


def _quantize(x_np, r_np, op):
    p = op.params
    q = numref.quantize(x_np.view(np.dtype(f"u{x_np.dtype.itemsize}")), op.elem, src=op.source,
                        partition=p["partition"], scale=p["rule"], group=p.get("group", "tensor"),
                        amax_nan=p["amax_nan"], amax_inf=p["amax_inf"], apply=p.get("apply"),
                        profile=p.get("profile"), policy=op.policy, recipe=op.recipe or None,
                        random=None if r_np is None else r_np.reshape(-1), fake_quant=None, path="reference")
    return q


def test_torch_tensors_in_and_out():
    import torch

    strided = []

    def kernel(x, r=None, *, op):
        assert isinstance(x, torch.Tensor) and x.device.type == "cpu"
        if op.transpose == "1" and op.rows > 1 and op.cols > 1:
            strided.append(x.stride() == (op.row_stride, op.col_stride) and not x.is_contiguous())
        xn = x.view(torch.int32).numpy() if x.dtype == torch.float32 else x.view(torch.int16).numpy()
        q = _quantize(xn, None if r is None else r.numpy(), op)
        codes = torch.from_numpy(np.array(q.raw_codes)).view(torch.float8_e4m3fn)
        s = np.array(q.scales).reshape(-1)
        scales = torch.from_numpy(s) if s.dtype == np.float32 else torch.from_numpy(s.view(np.uint8))
        out = {"codes": codes, "scales": scales,
               "group_mantissa": torch.from_numpy(np.array(q.group_mantissa).reshape(-1).astype(np.int64)),
               "tensor_amax": torch.tensor([float(q.tensor_amax or 0)], dtype=torch.float32)}
        return {k: out[k] for k in op.outputs}

    r = nc.check(kernel, op="quantize:*:f8e4m3fn", profile="ocp", level="l1", array="torch",
                 supported=lambda op: op.source in ("f32", "bf16"))
    assert r.ok and r.cases > 0, r.report()
    assert strided and all(strided)


def test_jax_arrays_in_and_out():
    import jax.numpy as jnp

    def kernel(x, r=None, *, op):
        assert type(x).__module__.startswith("jax")
        q = _quantize(np.asarray(x), None if r is None else np.asarray(r), op)
        out = {"codes": jnp.asarray(q.codes), "scales": jnp.asarray(q.scales).reshape(-1),
               "group_mantissa": jnp.asarray(np.array(q.group_mantissa).reshape(-1)),
               "tensor_amax": jnp.asarray([q.tensor_amax or 0], dtype=jnp.float32)}
        return {k: out[k] for k in op.outputs}

    r = nc.check(kernel, op="quantize:bf16:f8e5m2", profile="ocp", level="l0", array="jax")
    assert r.ok and r.cases > 0, r.report()


def _example(*args):
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, EXAMPLE, *args], capture_output=True, text=True, env=env, timeout=900)


def test_triton_example_under_the_interpreter(tmp_path):
    rec = tmp_path / "rec.npz"
    p = _example("--record", str(rec))
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 failed" in p.stdout and "0 mismatches" in p.stdout
    live, fixture = np.load(rec), np.load(os.path.join(HERE, "..", "tests", "fixtures", "triton_mx_quantize.npz"))
    assert sorted(live.files) == sorted(fixture.files)
    for k in live.files:
        assert np.array_equal(live[k], fixture[k]), k
    p = _example("--bug")
    assert p.returncode == 1 and "FAIL quantize f32->f8e4m3fn" in p.stdout and "| tie |" in p.stdout, p.stdout
