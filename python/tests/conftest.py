# The tests import the numref package found on sys.path: in the CMake build tree CTest sets
# PYTHONPATH=<build>/python (test `python_pytest`, label `python`); after `pip install .` the
# installed one. NUMREF_CLI names the `numref` binary for the tests that compare with it.
import os
import shutil

import pytest


@pytest.fixture(scope="session")
def numref_cli():
    path = os.environ.get("NUMREF_CLI") or shutil.which("numref")
    if not path or not os.path.exists(path):
        pytest.skip("the numref CLI binary is not available (set NUMREF_CLI)")
    return path
