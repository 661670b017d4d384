"""numref.mor (spec §25–§27) against hand reasoning and against `numref mor --json`."""
import json
import subprocess
from fractions import Fraction

import numpy as np
import pytest

import numref


def test_exact_tensor_is_accepted_with_zero_error():
    # Powers of two share one exponent range: E4M3 with the GAM scale reproduces them exactly, so
    # the error sum is exactly 0 (§22) and E4M3 is accepted (0 < 9/200, Eq. 2).
    r = numref.mor(np.float32([1, 2, 4, 0.5, -8, 0.25]), partition="tensor")
    assert r.decision == "f8e4m3fn" and r.quantized
    assert r.error["S"] == 0 and r.error["sum"] == 0 and r.error["n"] == 6
    assert r.threshold == Fraction(9, 200)


@pytest.mark.parametrize("recipe", ["tensor", "subtensor3", "subtensor2"])
def test_mor_equals_cli(numref_cli, tmp_path, recipe):
    x = (np.random.default_rng(2).standard_normal((8, 64)) * 3).astype(np.float32)
    x[5, 40:48] *= 3000  # a wide block
    np.save(tmp_path / "m.npy", x)
    out = subprocess.run([numref_cli, "mor", "--input", str(tmp_path / "m.npy"), "--recipe", recipe, "--partition",
                          "block:4x32", "--json"], check=True, capture_output=True, text=True).stdout
    cli = json.loads(out)
    r = numref.mor(x, recipe, partition="block:4x32")
    if recipe == "tensor":
        assert r.decision == cli["decision"] and r.verdict["reason"] == cli["reason"]
        m = cli["metric"]
        assert r.error["sum"] == Fraction(m["error"]["sum"]["value"]) and r.error["n"] == m["error"]["n"]
        assert f"{int(r.mean.view(np.uint32)):08x}" == m["mean"]["hex"]
        assert r.mean_relative_error == r.error["sum"] / r.error["n"]
    else:
        assert list(r.types.reshape(-1)) == [b["type"] for b in cli["blocks"]]
        assert [v["reason"] for v in r.eq3] == [b["eq3"] for b in cli["blocks"]]
        assert [s["sum"] for s in r.e4m3_sum] == [Fraction(b["e4m3"]["sum"]["value"]) for b in cli["blocks"]]
        assert r.blocks_of == {k: v["blocks"] for k, v in cli["counts"].items()}


def test_mor_bad_inputs():
    x = np.float32([1, 2])
    with pytest.raises(ValueError, match="recipe: unknown recipe 'mixed'"):
        numref.mor(x, "mixed")
    with pytest.raises(ValueError, match="scale: 'nvfp4' is not a scale rule for FP8 MoR"):
        numref.mor(x, scale="nvfp4")
    with pytest.raises(ValueError, match="threshold applies to the tensor recipe only"):
        numref.mor(x, "subtensor3", threshold="0.1")
    with pytest.raises(TypeError, match="read exactly"):
        numref.mor(x, threshold=0.045)
