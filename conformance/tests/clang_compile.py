#!/usr/bin/env python3
"""The fuzz build's sources compile with clang (issue 31 item 7).

The documented fuzz build (-DNUMREF_FUZZ=ON, README "long runs") compiles the whole library with
clang; the everyday build uses GCC, so code that only GCC's libstdc++ use accepts (a std::pair of
an incomplete type, say) would break the fuzz build unnoticed. This test compiles (syntax and
semantic checks, -fsyntax-only) every source of the libraries the fuzz programs link
(reference/src, conformance/src) and the fuzz programs themselves with clang, with the project's
warning flags as errors.

usage: clang_compile.py CLANGXX SOURCE_DIR BUILD_DIR [JOBS]
  CLANGXX     clang++ to use; empty or missing: the test is skipped (exit 77)
  SOURCE_DIR  the project's source tree
  BUILD_DIR   the build tree (for the generated reference/include/numref/version.hpp)
exit status: 0 all compile, 1 one or more do not (each failure printed), 2 bad usage, 77 skipped
"""
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys

FLAGS = ["-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-Wno-sign-conversion",
         "-Werror", "-DNUMREF_VERSION=\"0.0.0\"", "-DNUMREF_SOURCE_VECTORS_DIR=\"vectors\"",
         "-DNUMREF_BACKEND_BUILD_DIR=\"backends\""]


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) not in (4, 5):
        print("clang_compile.py: expected CLANGXX SOURCE_DIR BUILD_DIR [JOBS] (--help for more)", file=sys.stderr)
        return 2
    clang, src, build = argv[1], argv[2], argv[3]
    jobs = int(argv[4]) if len(argv) == 5 and argv[4].isdigit() else 2
    if not clang or not (os.path.isfile(clang) or shutil.which(clang)):
        print("SKIPPED: clang++ not found (install clang: scripts/setup.sh lists it as optional)")
        return 77
    if not os.path.isdir(os.path.join(src, "conformance", "src")):
        print(f"clang_compile.py: '{src}' is not the numref source tree", file=sys.stderr)
        return 2
    files = sorted(glob.glob(os.path.join(src, "reference", "src", "*.cpp")))
    for pat in ("src/*.cpp", "src/ops/*.cpp", "src/ops/*/*.cpp", "fuzz/*.cpp"):
        files += sorted(glob.glob(os.path.join(src, "conformance", pat)))
    inc = ["-I" + os.path.join(src, "reference", "include"), "-I" + os.path.join(build, "reference", "include"),
           "-I" + os.path.join(src, "conformance", "include"), "-I" + os.path.join(src, "conformance", "src")]

    def one(f):
        r = subprocess.run([clang] + FLAGS + inc + [f], capture_output=True, text=True)
        return f, r.returncode, r.stdout + r.stderr

    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for f, rc, out in ex.map(one, files):
            if rc != 0:
                bad += 1
                print(f"FAIL {os.path.relpath(f, src)}\n{out}")
    print(f"{len(files) - bad} of {len(files)} sources compile with {clang}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
