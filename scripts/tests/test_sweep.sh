#!/usr/bin/env bash
# scripts/sweep.sh as the README runs it (`./scripts/sweep.sh --shard 0/4`, read from README.md)
# builds the sweep programs only: a new build directory is configured with -DNUMREF_CUDA=OFF, an
# existing one is not reconfigured (never NUMREF_CUDA=AUTO, never the whole build), and every
# sweep program then runs with the shard. CMake is replaced by a stub on PATH that records its
# arguments and, for --build, creates stub sweep programs that record theirs (nothing is compiled).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
log="$tmp/log"
cat > "$tmp/cmake" <<STUB
#!/usr/bin/env bash
echo "cmake \$*" >> "$log"
if [[ "\$1" == --build ]]; then
  dir=\$2; shift 2
  while [[ \$# -gt 0 && "\$1" != --target ]]; do shift; done
  shift
  mkdir -p "\$dir/reference/tests"
  for t in "\$@"; do  # a stub sweep program that records its arguments
    printf '#!/bin/sh\necho "run %s \$*" >> "%s"\n' "\$t" "$log" > "\$dir/reference/tests/\$t"
    chmod +x "\$dir/reference/tests/\$t"
  done
else
  while [[ \$# -gt 0 && "\$1" != -B ]]; do shift; done
  mkdir -p "\$2" && touch "\$2/CMakeCache.txt"
fi
STUB
chmod +x "$tmp/cmake"
mapfile -t want < <(cd "$root/reference/tests" && ls sweep_*.cpp | sed 's/\.cpp$//' | sort)
[ ${#want[@]} -ge 3 ] || fail "expected at least three sweep_*.cpp programs, found: ${want[*]}"

line=$(grep -E '^\./scripts/sweep\.sh ' "$root/README.md" | head -1)
[ -n "$line" ] || fail "README.md has no ./scripts/sweep.sh command line"
read -r -a args <<< "${line%%#*}"
[ "${args[0]}" = ./scripts/sweep.sh ] || fail "README line: $line"
shard=""
for ((i = 1; i < ${#args[@]}; i++)); do [ "${args[$i]}" = --shard ] && shard=${args[$((i + 1))]}; done
[ -n "$shard" ] || fail "the README's sweep line gives no --shard: $line"

for pass in new existing; do
  : > "$log"
  out=$(cd "$root" && PATH="$tmp:$PATH" "${args[@]}" --build-dir "$tmp/b" 2>&1); rc=$?
  [ $rc -eq 0 ] || fail "$pass build dir: exit $rc: $out"
  grep -q "NUMREF_CUDA=AUTO" "$log" && fail "$pass build dir: CUDA requested: $(cat "$log")"
  configures=$(grep -c '^cmake -S' "$log")
  if [ $pass = new ]; then
    [ "$configures" -eq 1 ] && grep '^cmake -S' "$log" | grep -q -- "-DNUMREF_CUDA=OFF" \
      || fail "new build dir: expected one configure with -DNUMREF_CUDA=OFF: $(cat "$log")"
  else
    [ "$configures" -eq 0 ] || fail "existing build dir reconfigured: $(cat "$log")"
  fi
  b=$(grep '^cmake --build' "$log")
  [ "$(printf '%s\n' "$b" | wc -l)" -eq 1 ] || fail "$pass: expected one cmake --build: $(cat "$log")"
  [[ "$b" == *" --target ${want[*]}" ]] || fail "$pass: built '$b', expected the targets ${want[*]} only"
  for t in "${want[@]}"; do
    grep -qx "run $t --shard $shard" "$log" || fail "$pass: $t not run with --shard $shard: $(cat "$log")"
  done
done
echo "sweep.sh: the README line builds the sweep targets only (no CUDA) and runs ${#want[@]} sweeps with --shard $shard"
