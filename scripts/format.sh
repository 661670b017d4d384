#!/usr/bin/env bash
# Formats numref's C, C++ and CUDA sources with the repository's .clang-format (clang-format 14,
# which scripts/setup.sh installs: other versions format differently, so the check pins it).
#
#   scripts/format.sh                  format every tracked source file in place
#   scripts/format.sh FILE...          format these files in place
#   scripts/format.sh --check          exit 1 and name each file that is not formatted (the
#                                      default test suite runs this: scripts/tests/test_format.sh)
#   scripts/format.sh --check FILE...  the same for these files
#   scripts/format.sh --changed [REV]  format the sources changed since REV (default HEAD), staged,
#                                      unstaged and untracked
# Exit status: 0 done (or formatted), 1 --check found unformatted files, 2 bad usage or no
# clang-format 14.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "format.sh: $1 (usage: format.sh [--check] [--changed [REV]] [FILE...])" >&2; exit 2; }
check=0; changed=0; rev=HEAD; files=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) [ $check -eq 0 ] || usage "--check given twice"; check=1 ;;
    --changed)
      [ $changed -eq 0 ] || usage "--changed given twice"; changed=1
      if [ $# -gt 1 ] && [[ "$2" != -* ]] && [ ! -f "$2" ]; then rev=$2; shift; fi ;;
    -*) usage "unknown option '$1'" ;;
    "") usage "an empty file name" ;;
    *) files+=("$1") ;;
  esac
  shift
done
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q 'version 14\.'; then cf=$c; break; fi
done
[ -n "$cf" ] || { echo "format.sh: needs clang-format 14 (scripts/setup.sh installs clang-format-14)" >&2; exit 2; }

is_source() { [[ "$1" =~ \.(c|h|cpp|hpp|cu|cuh)$ ]]; }
cd "$root"
if [ $changed -eq 1 ]; then
  [ ${#files[@]} -eq 0 ] || usage "--changed takes no file names"
  git rev-parse --verify -q "$rev^{commit}" >/dev/null || usage "--changed: '$rev' is not a commit"
  while IFS= read -r f; do is_source "$f" && [ -f "$f" ] && files+=("$f"); done < <(
    { git diff --name-only "$rev"; git diff --name-only --cached "$rev"; git ls-files --others --exclude-standard; } | sort -u)
  [ ${#files[@]} -gt 0 ] || { echo "format.sh: no changed source files since $rev"; exit 0; }
elif [ ${#files[@]} -eq 0 ]; then
  while IFS= read -r f; do is_source "$f" && files+=("$f"); done < <(git ls-files)
  [ ${#files[@]} -gt 0 ] || usage "no tracked source files found (not a git checkout?)"
else
  for f in "${files[@]}"; do [ -f "$f" ] || usage "no such file '$f'"; done
fi

if [ $check -eq 1 ]; then
  # one clang-format for all files; each violation is a line "FILE:LINE:COL: error: ..."
  report=$("$cf" --style=file --dry-run --Werror "${files[@]}" 2>&1 >/dev/null) || true
  mapfile -t bad < <(printf '%s\n' "$report" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
  if [ ${#bad[@]} -eq 0 ] && [ -n "$report" ]; then echo "format.sh: clang-format failed: $report" >&2; exit 2; fi
  for f in "${bad[@]}"; do echo "format.sh: not formatted: $f (run scripts/format.sh $f)"; done
  [ ${#bad[@]} -eq 0 ] || { echo "format.sh: ${#bad[@]} of ${#files[@]} files not formatted"; exit 1; }
  echo "format.sh: ${#files[@]} files formatted as .clang-format says"
else
  "$cf" --style=file -i "${files[@]}"
  echo "format.sh: formatted ${#files[@]} files"
fi
