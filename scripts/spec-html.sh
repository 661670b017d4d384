#!/usr/bin/env bash
# numref — render docs/spec.md to one standalone HTML file (pandoc from the distribution,
# scripts/setup.sh installs it) and check that every in-page link (#s4.2, #part-i, ...) lands on
# an element with that id. The CTest test spec_html runs it.
#
# usage: scripts/spec-html.sh [--out FILE]        (default: build/spec.html)
# Exit 0: written and every link resolves; 1: a link names no anchor; 2: bad usage, no pandoc,
# or an output that is an input or a file this script did not write.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
spec="$root/docs/spec.md"
out="$root/build/spec.html"
marker='numref-spec-html'
seen_out=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out)
      [ $# -ge 2 ] || { echo "spec-html: --out needs a file" >&2; exit 2; }
      [ -n "$2" ] || { echo "spec-html: --out: empty value" >&2; exit 2; }
      [ "$seen_out" = 0 ] || { echo "spec-html: --out given twice" >&2; exit 2; }
      out=$2; seen_out=1; shift 2 ;;
    --out=*)
      [ -n "${1#--out=}" ] || { echo "spec-html: --out: empty value" >&2; exit 2; }
      [ "$seen_out" = 0 ] || { echo "spec-html: --out given twice" >&2; exit 2; }
      out=${1#--out=}; seen_out=1; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "spec-html: unknown argument '$1' (usage: spec-html.sh [--out FILE])" >&2; exit 2 ;;
  esac
done
command -v pandoc >/dev/null 2>&1 || { echo "spec-html: pandoc is not installed (scripts/setup.sh installs it)" >&2; exit 2; }
outdir=$(dirname "$out")
[ -d "$outdir" ] || { echo "spec-html: no directory $outdir for $out" >&2; exit 2; }
if [ -e "$out" ] && [ "$(realpath "$out")" = "$(realpath "$spec")" ]; then
  echo "spec-html: the output $out is the input docs/spec.md" >&2; exit 2
fi
if [ -e "$out" ] && ! grep -q "$marker" "$out" 2>/dev/null; then
  echo "spec-html: $out exists and was not written by spec-html.sh; not overwriting it" >&2; exit 2
fi
version=$(sed -n 's/^\*\*Spec version \([0-9.]*\)\*\*.*/\1/p' "$spec" | head -1)
[ -n "$version" ] || { echo "spec-html: docs/spec.md states no Spec version" >&2; exit 2; }
tmp=$(mktemp "$outdir/.spec-html.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# gfm: GitHub's Markdown (pipe tables, raw HTML anchors); the headings keep pandoc's own ids too.
pandoc --from gfm --to html5 --standalone --metadata title="numref specification $version" \
  --variable header-includes="<meta name=\"generator\" content=\"$marker\">" \
  --output "$tmp" "$spec"
python3 - "$tmp" <<'PY'
import re, sys
html = open(sys.argv[1], encoding='utf-8').read()
ids = set(re.findall(r'\bid="([^"]+)"', html))
links = re.findall(r'href="#([^"]+)"', html)
missing = sorted({l for l in links if l not in ids})
for l in missing:
    print('spec-html: link #%s names no anchor' % l)
clauses = [i for i in ids if re.fullmatch(r's([0-9]+|[A-Z])(\.[0-9]+)*', i)]
if missing:
    sys.exit(1)
if not links or not clauses:
    print('spec-html: no in-page links or clause anchors found: nothing was checked')
    sys.exit(1)
print('spec-html: %d in-page links resolve, %d clause anchors' % (len(links), len(clauses)))
PY
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "spec-html: wrote $out"
