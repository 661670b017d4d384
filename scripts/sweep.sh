#!/usr/bin/env bash
# Long sweeps (CTest label `exhaustive`), sharded. Builds the sweep programs (and only them: no
# CUDA kernels, tests or benchmarks) in ./build, then runs every sweep_* program of the build
# with the shard; each one exits non-zero on a mismatch, and so does this script (after running
# all of them).
#
# usage: scripts/sweep.sh [--shard I/N] [--only NAME] [--no-build] [--build-dir DIR] [-- ARGS...]
#   --shard I/N     run slice I of N (0 <= I < N) of every sweep; N machines / processes
#                   with I = 0..N-1 together cover every input. Default 0/1 (everything).
#   --only NAME     run only the sweep program NAME (e.g. sweep_f32)
#   --no-build      use the existing build directory as it is
#   --build-dir DIR the build directory (default ./build). A new one is configured without CUDA
#                   (-DNUMREF_CUDA=OFF: the sweeps run on the CPU); an existing one keeps its
#                   configuration, and only the sweep targets are built in it.
#   -- ARGS         passed to the sweep program(s), e.g.
#                   scripts/sweep.sh --only sweep_f32 -- --target f8e4m3fn --mode all --overflow all
# Example: 4 processes on one machine (each uses 2 threads):
#   for i in 0 1 2 3; do scripts/sweep.sh --no-build --shard $i/4 > sweep-$i.log & done; wait
set -euo pipefail
cd "$(dirname "$0")/.."
shard="0/1"
only=""
build=1
dir=build
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shard) [[ $# -ge 2 ]] || { echo "sweep.sh: --shard needs I/N" >&2; exit 2; }; shard="$2"; shift 2 ;;
    --only) [[ $# -ge 2 ]] || { echo "sweep.sh: --only needs a name" >&2; exit 2; }; only="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --build-dir) [[ $# -ge 2 && -n "$2" ]] || { echo "sweep.sh: --build-dir needs a directory" >&2; exit 2; }; dir="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "sweep.sh: unknown argument '$1' (see the header of scripts/sweep.sh)" >&2; exit 2 ;;
  esac
done
if ! [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]] || (( ${shard%/*} >= ${shard#*/} )); then
  echo "sweep.sh: bad --shard '$shard' (want I/N with 0 <= I < N)" >&2
  exit 2
fi
if (( build )); then
  # The sweep programs are reference/tests/sweep_*.cpp; build those targets alone.
  mapfile -t targets < <(find reference/tests -maxdepth 1 -name 'sweep_*.cpp' -printf '%f\n' | sed 's/\.cpp$//' | sort)
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    gen=()
    if command -v ninja > /dev/null 2>&1; then gen=(-G Ninja); fi
    echo "sweep.sh: configuring $dir (Release, no CUDA)"
    cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DNUMREF_WERROR=ON -DNUMREF_CUDA=OFF > /dev/null
  fi
  echo "sweep.sh: building ${targets[*]} in $dir"
  cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" > /dev/null
fi
mapfile -t sweeps < <(find "$dir" -type f -name 'sweep_*' -perm -u+x | sort)
if [[ -n "$only" ]]; then
  mapfile -t sweeps < <(printf '%s\n' "${sweeps[@]}" | grep -E "/${only}\$" || true)
fi
if [[ ${#sweeps[@]} -eq 0 ]]; then
  echo "sweep.sh: no sweep program found under $dir/${only:+ named $only}" >&2
  exit 2
fi
status=0
for s in "${sweeps[@]}"; do
  echo "== $s --shard $shard ${extra[*]:-}"
  start=$(date +%s)
  if "$s" --shard "$shard" "${extra[@]}"; then
    echo "== $s: PASS ($(( $(date +%s) - start )) s)"
  else
    echo "== $s: FAIL ($(( $(date +%s) - start )) s)"
    status=1
  fi
done
exit $status
