#!/usr/bin/env python3
"""scripts/check-layers.py on small synthetic trees (CTest check_layers_selftest): a clean tree
passes; each kind of crossing (an upward #include, an upward CMake path, a private src/ folder,
the build order, the rows' order, a folder without a row, an ambiguous include) fails with exit
status 1 and a line naming the file, the line and the two folders; a malformed layers file exits 2.
"""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check-layers.py")

# low <- high: the smallest tree with two layers, each with a public header and private code.
CLEAN = {
    "cmake/layers.txt": "# test layers\nlow:\nhigh: low\n",
    "CMakeLists.txt": "foreach(dir low high)\n  add_subdirectory(${dir})\nendforeach()\n",
    "low/CMakeLists.txt": "add_library(low INTERFACE)\ntarget_include_directories(low INTERFACE "
                          "${CMAKE_CURRENT_SOURCE_DIR}/include)\n",
    "low/include/low/a.hpp": "#pragma once\n#include <cstdint>\n#include \"low/detail.hpp\"\n",
    "low/include/low/detail.hpp": "#pragma once\n",
    "low/src/impl.hpp": "#pragma once\n",
    "low/src/impl.cpp": "#include \"impl.hpp\"\n#include \"low/a.hpp\"\n#include \"generated/version.hpp\"\n",
    "high/CMakeLists.txt": "add_executable(high src/main.cpp)\n"
                           "target_include_directories(high PRIVATE ${PROJECT_SOURCE_DIR}/low/include)\n",
    "high/include/high/b.hpp": "#pragma once\n#include \"low/a.hpp\"\n",
    "high/src/main.cpp": "// #include \"nothing\" in a comment is not an include\n#include \"high/b.hpp\"\n",
    "docs/notes.md": "#include \"high/b.hpp\" (not code)\n",
}


def run(tree, *extra):
    with tempfile.TemporaryDirectory() as d:
        for path, text in tree.items():
            full = os.path.join(d, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, "--root", d, *extra], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def changed(files):
    """CLEAN with some files replaced or added."""
    t = dict(CLEAN)
    t.update(files)
    return t


class CheckLayers(unittest.TestCase):
    def fails(self, tree, *needles, rc=1):
        code, out = run(tree)
        self.assertEqual(code, rc, out)
        for n in needles:
            self.assertIn(n, out)
        return out

    def test_clean_tree_passes(self):
        code, out = run(CLEAN)
        self.assertEqual(code, 0, out)
        self.assertIn("no use crosses a layer", out)

    def test_upward_include_fails(self):
        t = changed({"low/src/impl.cpp": "#include \"impl.hpp\"\n\n#include \"high/b.hpp\"\n"})
        out = self.fails(t, "low/src/impl.cpp:3:", "'high/include/high/b.hpp'", "layer 'low' uses layer 'high'")
        self.assertEqual(out.count("uses layer"), 1, out)

    def test_upward_include_from_a_header_fails(self):
        t = changed({"low/include/low/a.hpp": "#pragma once\n#include \"../../../high/include/high/b.hpp\"\n"})
        self.fails(t, "low/include/low/a.hpp:2:", "layer 'low' uses layer 'high'")

    def test_upward_cmake_path_fails(self):
        t = changed({"low/CMakeLists.txt": CLEAN["low/CMakeLists.txt"] +
                    "# ${PROJECT_SOURCE_DIR}/high in a comment is not a path\n"
                    "target_include_directories(low INTERFACE ${PROJECT_SOURCE_DIR}/high/include)\n"})
        self.fails(t, "low/CMakeLists.txt:4:", "path 'high/include'", "layer 'low' uses layer 'high'")

    def test_upward_relative_cmake_path_fails(self):
        t = changed({"low/CMakeLists.txt": "add_library(low INTERFACE)\n"
                    "target_include_directories(low INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/../high/include)\n"})
        self.fails(t, "low/CMakeLists.txt:2:", "path 'high/include'", "layer 'low' uses layer 'high'")

    def test_private_src_include_fails(self):
        t = changed({"high/src/main.cpp": "#include \"high/b.hpp\"\n#include \"impl.hpp\"\n"})
        self.fails(t, "high/src/main.cpp:2:", "'low/src/impl.hpp'", "private src/ folder of layer 'low'")

    def test_private_src_cmake_path_fails(self):
        t = changed({"high/CMakeLists.txt": CLEAN["high/CMakeLists.txt"] +
                    "target_include_directories(high PRIVATE ${PROJECT_SOURCE_DIR}/low/src)\n"})
        self.fails(t, "high/CMakeLists.txt:3:", "path 'low/src'", "private src/ folder of layer 'low'")

    def test_build_order_fails(self):
        t = changed({"CMakeLists.txt": "foreach(dir high low)\n  add_subdirectory(${dir})\nendforeach()\n"})
        self.fails(t, "CMakeLists.txt:1:", "adds 'high' before 'low', which 'high' uses")

    def test_row_order_fails(self):
        t = changed({"cmake/layers.txt": "high: low\nlow:\n"})
        self.fails(t, "cmake/layers.txt:1:", "layer 'high' uses 'low', whose row is not above it")

    def test_folder_without_row_fails(self):
        t = changed({"extra/tool.cpp": "int main() {}\n"})
        self.fails(t, "extra/tool.cpp:", "folder 'extra' has code but no row")

    def test_ambiguous_include_fails(self):
        t = changed({"high/include/b2/a.hpp": "#pragma once\n",
                    "cmake/layers.txt": "low:\nhigh: low\nthird: low high\n",
                    "third/x.cpp": "#include \"a.hpp\"\n"})
        self.fails(t, "third/x.cpp:1:", "is ambiguous", "high/include/b2/a.hpp", "low/include/low/a.hpp")

    def test_malformed_layers_file_exits_2(self):
        self.fails(changed({"cmake/layers.txt": "low\n"}), "cmake/layers.txt:1:", "expected 'folder:", rc=2)
        self.fails(changed({"cmake/layers.txt": "low:\nlow:\n"}), "folder 'low' has two rows", rc=2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
