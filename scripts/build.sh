#!/usr/bin/env bash
# Configure and build numref into ./build (Release, warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNUMREF_WERROR=ON "$@"
cmake --build build -j"$jobs"
