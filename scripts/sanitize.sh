#!/usr/bin/env bash
# The default test suite under AddressSanitizer and UndefinedBehaviorSanitizer: configures a
# build directory of its own with -DNUMREF_SANITIZE=address,undefined (a UBSan finding aborts,
# so the test that hit it fails; warnings are still errors), builds every target and runs
# ctest -LE "exhaustive|fuzz|peers" (README.md, "long runs"). Slow: expect several times the
# plain build and test time.
#
# usage: scripts/sanitize.sh [--build-dir DIR] [-j N] [--no-build] [-- CTEST_ARGS...]
#   --build-dir DIR  the sanitizer build directory (default build-asan)
#   -j N             parallel compile and test jobs (default: nproc)
#   --no-build       run the tests of the existing DIR as it is
#   -- CTEST_ARGS    passed to ctest after the default ones, e.g. -- -R conform_
# Exit status: 0 every test passed, 1 a build or test failure (the failing tests are listed),
# 2 a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="build-asan"
jobs=$(nproc 2>/dev/null || echo 2)
build=1
extra=()
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --build-dir) [[ $# -ge 2 && -n "$2" ]] || { echo "sanitize.sh: --build-dir needs a directory" >&2; exit 2; }
                 dir="$2"; shift 2 ;;
    -j) [[ $# -ge 2 ]] || { echo "sanitize.sh: -j needs a number" >&2; exit 2; }; jobs="$2"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    --no-build) build=0; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "sanitize.sh: unknown argument '$1' (see scripts/sanitize.sh --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then
  echo "sanitize.sh: bad -j '$jobs' (want a positive number)" >&2
  exit 2
fi
if (( build )); then
  gen=()  # a new build directory uses Ninja when it is installed (as scripts/configure.sh)
  if [[ ! -f "$dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi
  cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUMREF_SANITIZE=address,undefined \
    -DNUMREF_CUDA=OFF -DNUMREF_BUILD_BENCH=OFF || exit 1
  cmake --build "$dir" -j"$jobs" || { echo "sanitize.sh: the sanitizer build failed" >&2; exit 1; }
elif [[ ! -f "$dir/CTestTestfile.cmake" ]]; then
  echo "sanitize.sh: --no-build: '$dir' is not a configured build directory" >&2
  exit 2
fi
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"
if ctest --test-dir "$dir" -j"$jobs" -LE "exhaustive|fuzz|peers" --output-on-failure "${extra[@]}"; then
  echo "sanitize.sh: the default suite passed under address,undefined ($dir)"
else
  echo "sanitize.sh: failures under address,undefined ($dir): see above" >&2
  exit 1
fi
