#!/usr/bin/env python3
"""Checks that every source of a unity build compiles on its own.

The libraries compile in unity batches (NUMREF_UNITY_BUILD, docs/contributing.md "Build time:
unity batches"): a source that forgot an #include, or that uses a file-local name of another
source in its batch, still compiles there and breaks `-DNUMREF_UNITY_BUILD=OFF`. This script
reads the build directory's compile_commands.json, finds each unity file (…/Unity/unity_*.cxx)
and the sources it includes, and runs the unity file's own compile command on each source alone
with -fsyntax-only (same flags, warnings as errors when the build has them), JOBS at a time.

usage: check-standalone.py BUILD_DIR [--jobs N]
Exit 0: every source compiled alone (the count is printed); 1: some did not (their errors are
printed); 2: bad usage, or a build directory without unity batches (nothing would be checked).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys


def fail_usage(msg):
    print(f"check-standalone: {msg}", file=sys.stderr)
    sys.exit(2)


def sources_of(unity_file):
    with open(unity_file, encoding="utf-8") as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), flags=re.M)


def standalone_command(command, unity_file, source):
    args = shlex.split(command)
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT"):
            skip = True
            continue
        if a in ("-c", "-MD") or a == unity_file:
            continue
        out.append(a)
    return out + ["-fsyntax-only", source]


def main():
    ap = argparse.ArgumentParser(add_help=True, description=__doc__.split("\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    if a.jobs < 1:
        fail_usage(f"--jobs must be at least 1, got {a.jobs}")
    db = os.path.join(a.build_dir, "compile_commands.json")
    if not os.path.isfile(db):
        fail_usage(f"{db}: no such file (configure the build directory first)")
    with open(db, encoding="utf-8") as f:
        entries = json.load(f)
    work = []
    for e in entries:
        if not re.search(r"/Unity/unity_\d+_cxx\.cxx$", e["file"]):
            continue
        if not os.path.isfile(e["file"]):
            fail_usage(f"{e['file']}: listed in compile_commands.json but absent (build the tree first)")
        for src in sources_of(e["file"]):
            work.append((e["directory"], standalone_command(e["command"], e["file"], src), src))
    if not work:
        fail_usage(f"{db}: no unity batches (configured with NUMREF_UNITY_BUILD=OFF?): nothing to check")

    def run(item):
        d, cmd, src = item
        p = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
        return src, p.returncode, p.stdout + p.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for src, rc, text in ex.map(run, work):
            if rc != 0:
                failed += 1
                print(f"FAILED alone: {src}\n{text}", end="" if text.endswith("\n") else "\n")
    print(f"check-standalone: {len(work) - failed} of {len(work)} unity-batched sources compile alone")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
