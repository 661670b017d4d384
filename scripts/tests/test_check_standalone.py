#!/usr/bin/env python3
"""scripts/check-standalone.py on a small synthetic build directory (CTest
check_standalone_selftest): two sources in one unity batch, where b.cpp uses std::string that
only a.cpp includes — the batch compiles, b.cpp alone does not, and the script says so (exit 1,
naming b.cpp); with the include added, exit 0 and "2 of 2"; a compile_commands.json without
unity batches, and a missing one, exit 2.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check-standalone.py")
CXX = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++") or shutil.which("clang++")

A = '#include <string>\nstd::string a_name() { return "a"; }\n'
B_BROKEN = 'std::string b_name() { return "b"; }\n'
B_FIXED = '#include <string>\n' + B_BROKEN


def make(d, b_text, unity=True):
    src = os.path.join(d, "src")
    os.makedirs(os.path.join(d, "build", "Unity"), exist_ok=True)
    os.makedirs(src, exist_ok=True)
    for name, text in (("a.cpp", A), ("b.cpp", b_text)):
        with open(os.path.join(src, name), "w", encoding="utf-8") as f:
            f.write(text)
    entries = []
    if unity:
        u = os.path.join(d, "build", "Unity", "unity_0_cxx.cxx")
        with open(u, "w", encoding="utf-8") as f:
            f.write(f'/* generated */\n#include "{src}/a.cpp"\n\n#include "{src}/b.cpp"\n')
        entries.append({"directory": os.path.join(d, "build"), "file": u,
                        "command": f"{CXX} -std=c++20 -Wall -Werror -o Unity/unity_0_cxx.cxx.o -c {u}"})
    else:
        s = os.path.join(src, "a.cpp")
        entries.append({"directory": os.path.join(d, "build"), "file": s,
                        "command": f"{CXX} -std=c++20 -o a.o -c {s}"})
    with open(os.path.join(d, "build", "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(entries, f)
    return os.path.join(d, "build")


def run(build):
    return subprocess.run([sys.executable, SCRIPT, build, "--jobs", "2"], capture_output=True, text=True)


@unittest.skipIf(CXX is None, "no C++ compiler")
class CheckStandalone(unittest.TestCase):
    def test_the_batch_compiles_but_a_source_alone_does_not(self):
        with tempfile.TemporaryDirectory() as d:
            build = make(d, B_BROKEN)
            # The premise: the unity batch itself compiles (a.cpp's include covers b.cpp).
            u = os.path.join(build, "Unity", "unity_0_cxx.cxx")
            self.assertEqual(subprocess.run([CXX, "-std=c++20", "-fsyntax-only", u]).returncode, 0)
            p = run(build)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn("FAILED alone: " + os.path.join(d, "src", "b.cpp"), p.stdout)
            self.assertNotIn("FAILED alone: " + os.path.join(d, "src", "a.cpp"), p.stdout)
            self.assertIn("1 of 2 unity-batched sources compile alone", p.stdout)

    def test_every_source_alone(self):
        with tempfile.TemporaryDirectory() as d:
            p = run(make(d, B_FIXED))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("2 of 2 unity-batched sources compile alone", p.stdout)

    def test_nothing_to_check_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            p = run(make(d, B_FIXED, unity=False))
            self.assertEqual(p.returncode, 2)
            self.assertIn("no unity batches", p.stderr)
            p = run(os.path.join(d, "absent"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("no such file", p.stderr)


if __name__ == "__main__":
    unittest.main()
