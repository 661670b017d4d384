#!/usr/bin/env bash
# README command 2: install what is missing, build, and run the whole default test suite.
# Long sweeps (CTest label `exhaustive`) and the libFuzzer runs (label `fuzz`, a build of
# its own with -DNUMREF_FUZZ=ON) are not part of it: see scripts/sweep.sh and README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build --output-on-failure -j"$jobs" -LE "exhaustive|fuzz"
