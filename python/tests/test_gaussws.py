"""numref.gaussws (spec §30) against hand computation and against `numref gaussws`."""
import subprocess

import ml_dtypes
import numpy as np
import pytest

import numref

# §30.2 words: R = +1 (u10, u12, u14), -1 (and u15), +2 (u0, u2..u9).
P1, M1, P2 = 0x5400, 0xD400, 0x03FD


def test_hand_values_one_element():
    # w = 1, b_t = 1: s = RN32(1 * 2^(1 - 1)) = 1 (§30.4); w_hat = w + R s (§30.5).
    w = np.float32([[1.0]])
    for word, want in ((P1, 2.0), (M1, 0.0), (P2, 3.0), (0, 1.0)):
        r = numref.gaussws(w, bt=1, bits=np.uint16([[word]]))
        assert r.w_hat.dtype == ml_dtypes.bfloat16 and float(r.w_hat[0, 0]) == want
        assert r.scale.tolist() == [[1.0]]
    assert int(numref.gaussws(w, bt=1, bits=np.uint16([[M1]])).w_hat.view(np.uint16)[0, 0]) == 0x0000  # +0
    # §30.7 dL/db_t = RN32(-ln2 * s * T), T = g R = 1: RN32(-ln 2) = 0xBF317218
    r = numref.gaussws(w, bt=1, bits=np.uint16([[P1]]), grad=np.float32([[1.0]]))
    assert int(r.grad_bt.view(np.uint32)[0, 0]) == 0xBF317218
    # §30.9 packing: +1 is nibble 0x1
    assert r.r.tolist() == [[1]] and r.r_packed.tolist() == [0x1]


def test_bitwidth_from_bi():
    # §30.8 b_i = 1, b_init = 6, b_target = 4: b_t = 6, s = 1 * 2^-5
    r = numref.gaussws(np.float32([[1.0]]), bi=1.0, bits=np.uint16([[P1]]))
    assert r.bt.tolist() == [[6.0]] and r.scale.tolist() == [[2.0 ** -5]]
    r = numref.gaussws(np.float32([[1.0]]), bi=0.5, b_init=8, b_target=2, bits=np.uint16([[P1]]))
    assert r.bt.tolist() == [[5.0]]


def test_poisoned_block_and_ragged_shape():
    w = np.ones((33, 40), dtype=np.float32)
    w[0, 0] = np.inf  # block (0, 0) holds an Inf: every element NaN, s NaN (§30.6)
    r = numref.gaussws(w, bt=4, seed=3)
    assert r.scale.shape == (2, 2) and np.isnan(r.scale[0, 0]) and not np.isnan(r.scale[1, 1])
    assert np.all(r.w_hat.view(np.uint16)[:32, :32] == 0x7FC0)
    assert r.r_packed.size == (33 * 40 + 7) // 8


@pytest.mark.parametrize("wdt,noise,sum", [("f32", "seed", "exact"), ("bf16", "bits", "exact"), ("f32", "bits", "f32")])
def test_equals_cli(numref_cli, tmp_path, wdt, noise, sum):
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((45, 70)) * 0.05).astype(np.float32)
    w[40:, 64:] = 0  # an all-zero (ragged) block
    g = (rng.standard_normal((45, 70)) * 1e-3).astype(np.float32)
    bt = np.float32([[4, 4.5, 7], [1.25, 12, 2.75]])  # 2 x 3 blocks
    np.save(tmp_path / "bt.npy", bt)
    np.save(tmp_path / "g.npy", g)
    cmd = [numref_cli, "gaussws", "--bt-file", str(tmp_path / "bt.npy"), "--sum", sum, "--out", str(tmp_path / "y.npy"),
           "--out-r", str(tmp_path / "r.npy"), "--grad", str(tmp_path / "g.npy"), "--out-grad", str(tmp_path / "d.npy")]
    if wdt == "bf16":
        w = w.astype(ml_dtypes.bfloat16)
        np.save(tmp_path / "w.npy", w.view(np.uint16))
        cmd += ["--w", str(tmp_path / "w.npy"), "--input-format", "bf16"]
        g = g.astype(ml_dtypes.bfloat16)  # --input-format names the format of w and g
        np.save(tmp_path / "g.npy", g.view(np.uint16))
    else:
        np.save(tmp_path / "w.npy", w)
        cmd += ["--w", str(tmp_path / "w.npy")]
    kw = {}
    if noise == "seed":
        cmd += ["--seed", "11", "--layer", "2", "--step", "9"]
        kw = dict(seed=11, layer=2, step=9)
    else:
        u = rng.integers(0, 65536, size=(45, 70), dtype=np.uint16)
        np.save(tmp_path / "u.npy", u)
        cmd += ["--bits", str(tmp_path / "u.npy")]
        kw = dict(bits=u)
    subprocess.run(cmd, check=True, capture_output=True)
    r = numref.gaussws(w, bt=bt, sum=sum, grad=g, **kw)
    assert np.array_equal(r.w_hat.view(np.uint16), np.load(tmp_path / "y.npy"))
    assert np.array_equal(r.r_packed, np.load(tmp_path / "r.npy"))
    assert np.array_equal(r.grad_bt.view(np.uint32), np.load(tmp_path / "d.npy").view(np.uint32))


def test_bad_inputs():
    w = np.float32([[1.0, 2.0]])
    u = np.uint16([[0, 0]])
    with pytest.raises(ValueError, match="exactly one of bt=, bi="):
        numref.gaussws(w, bits=u)
    with pytest.raises(ValueError, match="exactly one of bt=, bi="):
        numref.gaussws(w, bt=4, bi=1, bits=u)
    with pytest.raises(ValueError, match="exactly one of seed=, bits="):
        numref.gaussws(w, bt=4)
    with pytest.raises(ValueError, match="do not apply to bits="):
        numref.gaussws(w, bt=4, bits=u, layer=1)
    with pytest.raises(TypeError, match="bits: expected a uint16 array"):
        numref.gaussws(w, bt=4, bits=np.int32([[0, 0]]))
    with pytest.raises(ValueError, match="bits: expected one word per element"):
        numref.gaussws(w, bt=4, bits=np.uint16([0]))
    with pytest.raises(ValueError, match="one value per 32 x 32 block"):
        numref.gaussws(w, bt=np.float32([4, 4]), seed=1)
    with pytest.raises(ValueError, match="b_t of block 0 is not finite"):
        numref.gaussws(w, bt=np.inf, seed=1)
    with pytest.raises(ValueError, match="sum"):
        numref.gaussws(w, bt=4, seed=1, sum="f16")
    with pytest.raises(TypeError, match="float32 or bfloat16"):
        numref.gaussws(np.float16([[1.0]]), bt=4, seed=1)
    with pytest.raises(ValueError, match="grad: expected w's 2 elements"):
        numref.gaussws(w, bt=4, seed=1, grad=np.float32([1.0]))
    with pytest.raises(ValueError, match="seed: expected an integer"):
        numref.gaussws(w, bt=4, seed=-1)
