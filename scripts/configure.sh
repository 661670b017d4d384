#!/usr/bin/env bash
# Configures ./build (Release, warnings as errors) with the given extra CMake arguments.
# A new build directory uses Ninja when it is installed (faster on few cores); an existing one
# keeps its generator.
set -euo pipefail
cd "$(dirname "$0")/.."
gen=()
if [ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DNUMREF_WERROR=ON "$@"
