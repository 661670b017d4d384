#!/usr/bin/env python3
"""Writes the generated regions of docs/spec.md and docs/profiles.md (CTest spec_docs_drift).

  scripts/gen-spec-docs.py [--check] [--numref PATH] [--root DIR]

A generated region is the text between "<!-- BEGIN GENERATED <name> -->" and
"<!-- END GENERATED <name> -->". Each restates data the code holds, written here from the code
and never by hand:
  contents      the spec's contents list, from its part, clause and annex headings
  formats       §2.1: `numref formats --markdown`, the rows that are not IEEE P3109 members
  p3109-k8      §2.5: the same table's P3109 members of 8 bits
  profiles      §10.1 and profiles.md: `numref profiles --markdown`
  policies      §10.1 and profiles.md: `numref profiles --policies --markdown` (every knob)
  rules         §10.2: `numref profiles --rules --markdown`
  recipes       §10.4: `numref profiles --recipes --markdown`
  scale-rules   §19.6: `numref quantize --rules --markdown`
  conversions-inputs, conversions
                §11.2: `numref conversions --inputs / --markdown` for the profiles that have cast
                vectors (vectors/cast/<profile>/), with the golden-vector file of each line
  abi           §32.3: the numbers of the C ABI, read from conformance/include/numref/backend.h
  abi-minor     §32.2: `numref abi --markdown`, the minor version of every family and value
With --check nothing is written: exit 1 and a diff when a region differs from its generator.
Exit 2 on bad usage, a missing binary, or a region marker that is missing or unbalanced.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
BEGIN = '<!-- BEGIN GENERATED %s -->'
END = '<!-- END GENERATED %s -->'


class GenError(Exception):
    pass


def run(numref, *args):
    try:
        return subprocess.run([numref, *args], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise GenError('%s %s failed: %s' % (numref, ' '.join(args), getattr(e, 'stderr', '') or e))


def table_rows(md):
    """The header, separator and rows of the first Markdown table in md, and what follows it."""
    lines = md.rstrip('\n').split('\n')
    table = [l for l in lines if l.startswith('|')]
    rest = [l for l in lines if not l.startswith('|') and l.strip()]
    return table[:2], table[2:], rest


def cells(row):
    return [c.strip() for c in row.strip().strip('|').split('|')]


# ---- contents -------------------------------------------------------------------------------
HEADING = re.compile(r'^(#{2,4}) (.*)$')
ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$')


def contents(spec_lines):
    out = []
    in_gen = False
    last_anchor = None
    for line in spec_lines:
        if line.startswith('<!-- BEGIN GENERATED'):
            in_gen = True
        elif line.startswith('<!-- END GENERATED'):
            in_gen = False
            continue
        if in_gen:
            continue
        a = ANCHOR.match(line)
        if a:
            last_anchor = a.group(1)
            continue
        m = HEADING.match(line)
        if not m or last_anchor is None:
            if line.strip():
                last_anchor = None
            continue
        level, text = len(m.group(1)), m.group(2)
        indent = '  ' * (level - 2)
        out.append('%s- [%s](#%s)' % (indent, text, last_anchor))
        last_anchor = None
    return '\n'.join(out)


# ---- tables of the CLI ----------------------------------------------------------------------
def formats(numref, p3109):
    head, rows, rest = table_rows(run(numref, 'formats', '--markdown'))
    keep = [r for r in rows if cells(r)[0].startswith('p3109_') == p3109 and
            (not p3109 or cells(r)[1] == '8')]
    out = head + keep
    if not p3109:
        out += [''] + rest
    return '\n'.join(out)


def conversions(numref, root, inputs):
    names = run(numref, 'profiles', '--names').split()
    with_vectors = [n for n in names if os.path.isdir(os.path.join(root, 'vectors', 'cast', n))]
    if not with_vectors:
        raise GenError('no profile has cast vectors under %s' % os.path.join(root, 'vectors', 'cast'))
    args = ['conversions', '--markdown'] + [x for n in with_vectors for x in ('--profile', n)]
    if inputs:
        return run(numref, *(args + ['--inputs'])).rstrip('\n')
    head, rows, _ = table_rows(run(numref, *args))
    out = [head[0] + ' golden vectors |', head[1] + '---|']
    for r in rows:
        c = cells(r)
        src, dst = c[0].split('→')
        path = 'vectors/cast/%s/%s-%s.vec' % (c[1], src, dst)
        if not os.path.isfile(os.path.join(root, path)):
            raise GenError('named conversion %s %s has no golden-vector file %s' % (c[1], c[0], path))
        out.append(r + ' `%s` |' % path)
    return '\n'.join(out)


# ---- the C ABI's numbers --------------------------------------------------------------------
DEFINE = re.compile(r'^#define (NUMREF_[A-Z0-9_]+) +([0-9]+)u\b\s*(?:/\*\s*(.*?)\s*\*/)?')
# the C ABI minor version a comment names ("(1.7)", "; ABI 1.5", "1.6"): history, Annex C.1
VERSION_MARK = re.compile(r'\s*\((?:ABI )?1\.\d+\)|;\s*(?:ABI )?1\.\d+$|^1\.\d+$')


def abi(root):
    path = os.path.join(root, 'conformance', 'include', 'numref', 'backend.h')
    text = open(path, encoding='utf-8').read()
    consts = []
    for line in text.split('\n'):
        m = DEFINE.match(line)
        if not m or m.group(1) in ('NUMREF_BACKEND_ABI_VERSION', 'NUMREF_BACKEND_ABI_MINOR'):
            continue
        meaning = VERSION_MARK.sub('', m.group(3) or '').strip(' ;,')
        consts.append((m.group(1), int(m.group(2)), meaning))

    def xlist(name):
        m = re.search(r'#define %s\(X\)((?:.*\\\n)*.*)' % name, text)
        if not m:
            raise GenError('%s: no %s' % (path, name))
        body = re.sub(r'/\*.*?\*/', '', m.group(1).replace('\\\n', ' '), flags=re.S)
        return re.findall(r'X\((\w+)(?:,\s*(\w+))?\)', body)

    p3109 = xlist('NUMREF_P3109_BINARY8_FORMAT_LIST') + xlist('NUMREF_P3109_MORE_FORMAT_LIST')
    fmt_names = {'NUMREF_FMT_' + up: low for up, low in xlist('NUMREF_FORMAT_LIST')}
    consts = [(c, v, meaning or ('the format ' + fmt_names[c] if c in fmt_names else ''))
              for c, v, meaning in consts]
    profiles = xlist('NUMREF_PROFILE_LIST')
    first_p3109 = 1 + max(v for c, v, _ in consts if c.startswith('NUMREF_FMT_'))
    out = ['| constant | value | meaning |', '|---|---|---|']
    for c, v, meaning in consts:
        out.append('| `%s` | %d | %s |' % (c, v, meaning or '—'))
    out += ['', 'The IEEE P3109 members (§2.5) are `NUMREF_FMT_P3109_K<K>P<P><S><D>` = %d … %d, in this order: %s.'
            % (first_p3109, first_p3109 + len(p3109) - 1, ', '.join(n for _, n in p3109)),
            '', '| profile constant | value | profile |', '|---|---|---|']
    for i, (up, low) in enumerate(profiles):
        out.append('| `NUMREF_PROFILE_%s` | %d | %s |' % (up, i, low or up.lower()))
    return '\n'.join(out)


# ---- regions --------------------------------------------------------------------------------
def replace_regions(text, gens, path):
    for name, make in gens:
        b, e = BEGIN % name, END % name
        i, j = text.find(b), text.find(e)
        if i < 0 or j < 0 or j < i or text.count(b) != 1 or text.count(e) != 1:
            raise GenError('%s: region %s must appear once, as "%s" ... "%s"' % (path, name, b, e))
        body = make(text)
        text = text[:i + len(b)] + '\n' + body + '\n' + text[j:]
    return text


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--check', action='store_true')
    ap.add_argument('--numref', default=None)
    ap.add_argument('--root', default=ROOT)
    a = ap.parse_args(argv)
    numref = a.numref or os.path.join(a.root, 'build', 'numref')
    if not (os.path.isfile(numref) and os.access(numref, os.X_OK)):
        print('gen-spec-docs: no numref binary at %s (build first, or pass --numref)' % numref, file=sys.stderr)
        return 2
    root = a.root
    spec_gens = [
        ('formats', lambda t: formats(numref, False)),
        ('p3109-k8', lambda t: formats(numref, True)),
        ('profiles', lambda t: run(numref, 'profiles', '--markdown').rstrip('\n')),
        ('policies', lambda t: run(numref, 'profiles', '--policies', '--markdown').rstrip('\n')),
        ('rules', lambda t: run(numref, 'profiles', '--rules', '--markdown').rstrip('\n')),
        ('recipes', lambda t: run(numref, 'profiles', '--recipes', '--markdown').rstrip('\n')),
        ('scale-rules', lambda t: run(numref, 'quantize', '--rules', '--markdown').rstrip('\n')),
        ('conversions-inputs', lambda t: conversions(numref, root, True)),
        ('conversions', lambda t: conversions(numref, root, False)),
        ('abi', lambda t: abi(root)),
        ('abi-minor', lambda t: run(numref, 'abi', '--markdown').rstrip('\n')),
        ('mma-knobs', lambda t: run(numref, 'mma', '--knobs', '--markdown').rstrip('\n')),
        ('mma-profiles', lambda t: run(numref, 'mma', '--profiles', '--markdown').rstrip('\n')),
        ('mma-recipes', lambda t: run(numref, 'mma', '--recipes', '--markdown').rstrip('\n')),
        # last: the contents list reads the headings of the text as generated
        ('contents', lambda t: contents(t.split('\n'))),
    ]
    profiles_gens = [
        ('profiles', lambda t: run(numref, 'profiles', '--markdown').rstrip('\n')),
        ('policies', lambda t: run(numref, 'profiles', '--policies', '--markdown').rstrip('\n')),
    ]
    drift = False
    try:
        for rel, gens in (('docs/spec.md', spec_gens), ('docs/profiles.md', profiles_gens)):
            path = os.path.join(root, rel)
            old = open(path, encoding='utf-8').read()
            new = replace_regions(old, gens, rel)
            if new == old:
                continue
            if a.check:
                drift = True
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                           rel, rel + ' (generated)', n=1))
            else:
                with open(path, 'w', encoding='utf-8') as f:
                    f.write(new)
                print('gen-spec-docs: wrote %s' % rel)
    except (GenError, OSError) as e:
        print('gen-spec-docs: %s' % e, file=sys.stderr)
        return 2
    if drift:
        print('gen-spec-docs: generated regions differ; run scripts/gen-spec-docs.py', file=sys.stderr)
        return 1
    print('gen-spec-docs: docs/spec.md and docs/profiles.md are up to date' if a.check else
          'gen-spec-docs: done')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
