#!/usr/bin/env bash
# numref — the device checks, in one command, on a machine with an NVIDIA GPU.
#
#   scripts/gpu-check.sh [--build DIR] [--results FILE] [--shard I/N]
#
# 1. configures and builds DIR (default build-gpu) in Release for the present GPU's
#    architecture only (its compute capability from nvidia-smi), with the CUDA benchmarks;
# 2. ctest -L cuda-device          the kernels on the GPU against the reference;
#    its FP8 mma.sync test (test_cuda_device_mma_sync) also runs alone so that the results file
#    keeps what it printed: on sm_89 / sm_120 its pass or failure against sm89_mma_f8 /
#    sm120_mma_f8, elsewhere (sm_90, sm_100) how many D elements each FP8 profile reproduces;
# 3. numref conform --backend cuda --level 1 (every family, the mma model kernels of
#    cuda/src/mma.cu included: every fdpa profile against the reference, spec §A.12 item 10);
# 4. numref conform --backend cuda --level exhaustive --ops cast --shard I/N (default 0/16:
#    one shard of every <=16-bit input and every f32 input of the unary casts; the other
#    shards are the same command with another I, e.g. as a job array);
# 5. the CUDA benchmarks (bench_cuda_cast, bench_cuda_quant, bench_cuda_gaussws);
# 6. te-kernels: where TransformerEngine is installed, its CUDA quantizers on the code-00, NaN
#    and Inf blocks against the te_* profiles (tools/tests/te_device_check.py; issue 30 item 5),
#    and its NVFP4Quantizer (1-D and 2-D) on NaN, -0 and Inf elements against te_nvfp4 /
#    te_nvfp4_2d (issue 30 item 4; needs a GPU with FP4 conversions);
#    without it the step is recorded as not run (exit 77 of the script), not as a failure;
# and writes FILE (default gpu-check-results.md): a dated section for docs/performance.md with
# the device, the commit, each step's command, status and time, the conformance summaries and
# the benchmark tables. Every step has a time limit; the whole run is sized for 20 minutes on
# an H100. Exit 0 only when every step passed; 77 (SKIPPED) without a GPU; 2 on bad usage;
# 1 when a step failed (the results file says which).
set -uo pipefail
cd "$(dirname "$0")/.."

build=build-gpu
results=gpu-check-results.md
shard=0/16
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --results) results=${2:?--results needs a file}; shift 2 ;;
    --shard) shard=${2:?--shard needs I/N}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$shard" =~ ^[0-9]+/[1-9][0-9]*$ ]] || (( ${shard%/*} >= ${shard#*/} )); then
  echo "gpu-check: --shard expects I/N with 0 <= I < N, got '$shard'" >&2; exit 2
fi

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: SKIPPED: no NVIDIA GPU here (nvidia-smi -L failed or is missing)"
  exit 77
fi
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
if ! [[ "$cc" =~ ^[0-9]+$ ]]; then echo "gpu-check: cannot read the compute capability ('$cc')" >&2; exit 2; fi
jobs=$(nproc 2>/dev/null || echo 2)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
steps=""

# run NAME LIMIT_S CMD...: runs a step with a time limit, keeps its output, records the verdict.
run() {
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS rc
  echo "== gpu-check: $name: $*"
  timeout --kill-after=10 "$limit" "$@" > "$tmp/$name.log" 2>&1
  rc=$?
  tail -n 25 "$tmp/$name.log"
  local verdict=passed
  if (( rc == 124 || rc == 137 )); then verdict="TIMED OUT after ${limit} s"; failed=1
  elif (( rc != 0 )); then verdict="FAILED (exit $rc)"; failed=1; fi
  steps+="| $name | \`$*\` | $verdict | $((SECONDS - t0)) s |"$'\n'
  return $rc
}

run configure 300 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DNUMREF_WERROR=ON -DNUMREF_CUDA=ON \
  "-DNUMREF_CUDA_ARCHITECTURES=${cc}-real" -DNUMREF_BUILD_BENCH=ON
run build 600 cmake --build "$build" -j"$jobs"
if (( failed == 0 )); then
  run cuda-device 300 ctest --test-dir "$build" -L cuda-device --output-on-failure
  # mma-sync: exit 77 (an architecture no profile names for FP8 mma.sync) is a survey, not a failure
  timeout --kill-after=10 120 "$build/test_cuda_device_mma_sync" > "$tmp/mma-sync.log" 2>&1
  rc=$?
  tail -n 25 "$tmp/mma-sync.log"
  if (( rc == 77 )); then steps+="| mma-sync | \`test_cuda_device_mma_sync\` | survey (skipped): see below | - |"$'\n'
  elif (( rc != 0 )); then failed=1; steps+="| mma-sync | \`test_cuda_device_mma_sync\` | FAILED (exit $rc) | - |"$'\n'
  else steps+="| mma-sync | \`test_cuda_device_mma_sync\` | passed | - |"$'\n'; fi
  run conform-level1 300 "$build/numref" conform --backend cuda --level 1
  run conform-exhaustive-cast 300 "$build/numref" conform --backend cuda --level exhaustive --ops cast --shard "$shard"
  run bench-cast 180 "$build/bench_cuda_cast" --benchmark_min_time=0.2
  run bench-quant 240 "$build/bench_cuda_quant" --benchmark_min_time=0.2
  run bench-gaussws 180 "$build/bench_cuda_gaussws" --benchmark_min_time=0.2
  # te-kernels: exit 77 (TransformerEngine not installed) is recorded as not run
  timeout --kill-after=10 120 python3 tools/tests/te_device_check.py "$build/numref" > "$tmp/te-kernels.log" 2>&1
  rc=$?
  tail -n 25 "$tmp/te-kernels.log"
  if (( rc == 77 )); then steps+="| te-kernels | \`tools/tests/te_device_check.py\` | not run: $(tail -n 1 "$tmp/te-kernels.log") | - |"$'\n'
  elif (( rc != 0 )); then failed=1; steps+="| te-kernels | \`tools/tests/te_device_check.py\` | FAILED (exit $rc) | - |"$'\n'
  else steps+="| te-kernels | \`tools/tests/te_device_check.py\` | passed | - |"$'\n'; fi
fi

{
  echo "### $(date -u +%Y-%m-%d): $gpu (sm_$cc)"
  echo
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)'), \`scripts/gpu-check.sh --shard $shard\`, $(uname -srm), $jobs CPU cores."
  echo
  echo "| step | command | verdict | time |"
  echo "|---|---|---|---|"
  printf '%s' "$steps"
  if [ -f "$tmp/mma-sync.log" ]; then
    echo; echo "\`mma-sync\` (FP8 mma.sync against the instruction profiles):"; echo; echo '```'
    grep -vE "^\[ *(RUN|OK) *\]" "$tmp/mma-sync.log" | tail -n 20
    echo '```'
  fi
  for s in conform-level1 conform-exhaustive-cast te-kernels; do
    if [ -f "$tmp/$s.log" ]; then
      echo; echo "\`$s\` summary:"; echo; echo '```'
      grep -E "passed, .* failed|departures|ERROR|INTERRUPTED|INCOMPLETE" "$tmp/$s.log" | tail -n 12
      echo '```'
    fi
  done
  for b in bench-cast bench-quant bench-gaussws; do
    if [ -f "$tmp/$b.log" ]; then
      echo; echo "\`$b\`:"; echo; echo '```'
      grep -vE "^\*\*\*|^-+$|^Run on|^CPU Caches|^  L[0-9]|^Load Average" "$tmp/$b.log" | tail -n 40
      echo '```'
    fi
  done
} > "$results.tmp" && mv "$results.tmp" "$results"
echo "gpu-check: results in $results"
if (( failed )); then echo "gpu-check: FAILED (see $results)"; exit 1; fi
echo "gpu-check: all steps passed"
