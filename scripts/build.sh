#!/usr/bin/env bash
# Builds everything in ./build: the libraries, the CLI, every test, benchmark and backend, and
# the CUDA kernels for every supported architecture when nvcc is found (scripts/main.sh may have
# configured the same directory for its narrower job; this resets CUDA to the full build).
# Extra arguments go to CMake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
./scripts/configure.sh -DNUMREF_CUDA=AUTO -UNUMREF_CUDA_ARCHITECTURES "$@"
cmake --build build -j"$jobs"
