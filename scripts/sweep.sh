#!/usr/bin/env bash
# Long sweeps (CTest label `exhaustive`), sharded. Builds ./build (scripts/build.sh), then
# runs every sweep_* program of the build with the shard; each one exits non-zero on a
# mismatch, and so does this script (after running all of them).
#
# usage: scripts/sweep.sh [--shard I/N] [--only NAME] [--no-build] [-- ARGS...]
#   --shard I/N  run slice I of N (0 <= I < N) of every sweep; N machines / processes
#                with I = 0..N-1 together cover every input. Default 0/1 (everything).
#   --only NAME  run only the sweep program NAME (e.g. sweep_f32)
#   --no-build   use the existing ./build as it is
#   -- ARGS      passed to the sweep program(s), e.g.
#                scripts/sweep.sh --only sweep_f32 -- --target f8e4m3fn --mode all --overflow all
# Example: 4 processes on one machine (each uses 2 threads):
#   for i in 0 1 2 3; do scripts/sweep.sh --no-build --shard $i/4 > sweep-$i.log & done; wait
set -euo pipefail
cd "$(dirname "$0")/.."
shard="0/1"
only=""
build=1
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --shard) [[ $# -ge 2 ]] || { echo "sweep.sh: --shard needs I/N" >&2; exit 2; }; shard="$2"; shift 2 ;;
    --only) [[ $# -ge 2 ]] || { echo "sweep.sh: --only needs a name" >&2; exit 2; }; only="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "sweep.sh: unknown argument '$1' (see the header of scripts/sweep.sh)" >&2; exit 2 ;;
  esac
done
if ! [[ "$shard" =~ ^[0-9]+/[0-9]+$ ]] || (( ${shard%/*} >= ${shard#*/} )); then
  echo "sweep.sh: bad --shard '$shard' (want I/N with 0 <= I < N)" >&2
  exit 2
fi
if (( build )); then ./scripts/build.sh > /dev/null; fi
mapfile -t sweeps < <(find build -type f -name 'sweep_*' -perm -u+x | sort)
if [[ -n "$only" ]]; then
  mapfile -t sweeps < <(printf '%s\n' "${sweeps[@]}" | grep -E "/${only}\$" || true)
fi
if [[ ${#sweeps[@]} -eq 0 ]]; then
  echo "sweep.sh: no sweep program found under build/${only:+ named $only}" >&2
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
