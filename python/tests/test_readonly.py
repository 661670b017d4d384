"""Inputs as users hold them (issue 31): read-only arrays (np.load(mmap_mode='r'), np.frombuffer,
setflags(write=False)) are read, never written; a 0-d input keeps its shape; profile=None is
refused with the CLI's message. Every result equals the one of a writable copy."""
import numpy as np
import pytest

import numref


def _readonly_variants(a, tmp_path):
    """The same values as a memory map, a frombuffer view and a write-protected array."""
    path = tmp_path / "x.npy"
    np.save(path, a)
    mm = np.load(path, mmap_mode="r")
    fb = np.frombuffer(a.tobytes(), dtype=a.dtype).reshape(a.shape)
    ro = a.copy()
    ro.setflags(write=False)
    for v in (mm, fb, ro):
        assert not v.flags.writeable
    return [mm, fb, ro]


def test_cast_reads_readonly_arrays(tmp_path):
    # 448 is E4M3's largest value (7e), 1.5 is 3c (§3.3: 1.5 = 2^0 * 1.100b: exponent 7, fraction 100)
    a = np.float32([[1.5, 448.0], [-1.5, 0.0]])
    want = numref.cast(a.copy(), "f8e4m3fn", raw=True)
    assert want.tolist() == [[0x3C, 0x7E], [0xBC, 0x00]]
    for v in _readonly_variants(a, tmp_path):
        assert numref.cast(v, "f8e4m3fn", raw=True).tolist() == want.tolist()


def test_quantize_mor_gaussws_read_readonly_arrays(tmp_path):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    q = numref.quantize(a.copy(), "f8e4m3fn", partition="block:1x32", scale="mx-rceil")
    m = numref.mor(np.tile(a, (4, 2)))
    g = numref.gaussws(a.copy(), bt=4, seed=1)
    for v in _readonly_variants(a, tmp_path):
        qv = numref.quantize(v, "f8e4m3fn", partition="block:1x32", scale="mx-rceil")
        assert np.array_equal(qv.raw_codes, q.raw_codes) and np.array_equal(qv.scales.view(np.uint8), q.scales.view(np.uint8))
        gv = numref.gaussws(v, bt=4, seed=1)
        assert np.array_equal(gv.w_hat.view(np.uint16), g.w_hat.view(np.uint16))
    big = np.tile(a, (4, 2))
    for v in _readonly_variants(big, tmp_path):
        mv = numref.mor(v)
        assert (mv.decision, mv.mean, mv.threshold) == (m.decision, m.mean, m.threshold)
        assert np.array_equal(np.asarray(mv.quantized).view(np.uint8), np.asarray(m.quantized).view(np.uint8))


def test_zero_d_input_keeps_its_shape():
    x = np.float32(1.5).reshape(())
    y = numref.cast(x, "f8e4m3fn", raw=True)
    assert y.shape == () and int(y) == 0x3C


@pytest.mark.parametrize("bad", [None, "", "nope"])
def test_profile_must_name_a_profile(bad):
    with pytest.raises(ValueError, match=r"profile: unknown profile '.*' \(known: ocp, ieee, "):
        numref.cast(np.float32([1.0]), "f8e4m3fn", profile=bad)
