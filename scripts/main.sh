#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job — the
# conformance suite on the built-in backends at level 1.
#
# It builds only what that job runs: the `numref` CLI and the backend plugins (no tests,
# benchmarks or fuzz programs), and the CUDA kernels only for a GPU that is present, for that
# GPU's architecture alone (CMake's `native`). The test command (scripts/test.sh) builds
# everything, CUDA for every supported architecture, in the same build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  cuda=(-DNUMREF_CUDA=AUTO -DNUMREF_CUDA_ARCHITECTURES=native)
  echo "main: GPU present: CUDA kernels for its architecture only"
else
  cuda=(-DNUMREF_CUDA=OFF)
  echo "main: no GPU: CUDA kernels not built (scripts/test.sh still compiles them when nvcc exists)"
fi
./scripts/configure.sh "${cuda[@]}"
cmake --build build -j"$jobs" --target numref
exec build/numref conform --backend all --level 1
