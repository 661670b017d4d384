#!/usr/bin/env python3
"""Checks docs/spec.md as a standard and writes docs/coverage.md (CTest spec_clauses).

  scripts/check-spec.py [--root DIR] [--write]

Reads the clauses of docs/spec.md (the headings "§N", "§N.M", "§A.M" of its parts and annexes)
and every file git tracks, and fails (exit 1, one line "file:line: ..." per finding) when:
  (a) a clause heading has no anchor <a id="sN.M"></a> right above it, or the clauses of a
      part or annex are not in numeric order without gaps (numbers only grow, spec Annex C);
  (b) a normative clause's text (outside informative notes, "> *Informative note.*", and the
      generated regions) names a source file or folder, a function, a test, an ABI version
      or a piece of history: those belong in informative notes or the annexes;
  (c) code, tests, vectors or docs cite a clause that does not exist ("§N.M"; "§N.M.K" cites
      item K of §N.M; sections of other documents, "IEEE 754 §6.2.3", "MoR §4.1.3", are not
      clause citations);
  (d) a normative clause is cited by no test and no golden-vector file;
  (e) docs/coverage.md differs from what this script writes (--write rewrites it).
Exit 0 when every check passed, 1 on a finding, 2 on bad usage or an unreadable spec.
"""
import argparse
import os
import re
import subprocess
import sys

HEADING = re.compile(r'^(#{2,4}) (?:§([0-9A-Z]+(?:\.[0-9]+)*) (.*)|Part (I|II|III|IV) — (.*)|Annex ([A-Z]) \((normative|informative)\) — (.*))$')
ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$')
# a clause citation; a section of another document is preceded by its name
CITE = re.compile(r'§([0-9]+|[A-C])((?:\.[0-9]+)*)')
EXTERNAL_BEFORE = re.compile(
    r'(IEEE 754|IEEE 754-2019|MoR|FIPS 180-4|\[MoR\]|\[MD\]|\[GWS\]|\[MX\]|\[OFP8\]|\[IEEE\]|\[P3109\]|PTX ISA|'
    r'paper|Appendix)\s*(§[0-9.]+\s*(,|and|/)\s*)*$')
BEGIN_GEN = re.compile(r'^<!-- BEGIN GENERATED (\S+)')
END_GEN = re.compile(r'^<!-- END GENERATED (\S+)')

# (b) what a normative clause may not name
LINT = [
    ('a source file', re.compile(r'\b[\w/.-]*\w\.(?:cpp|hpp|h|cuh|cu|py|sh|cmake|txt|md|json|toml|cfg)\b(?!\w)')),
    ('a folder of the tree', re.compile(r'(?<![\w/.-])(?:reference|cuda|conformance|tools|python|arith|scripts|bench|cmake|docs|tests)/')),
    ('a test', re.compile(r'\b(?:test_\w+|sweep_\w+|\w+_selftest|[A-Z][a-z]+(?:[A-Z][a-z0-9]+){3,})\b')),
    ('a function', re.compile(r'`[A-Za-z_][\w:]*(?:::\w+)+`|`[A-Za-z_][\w.:]*\([^`]*\)`|\b\w+::\w+\b')),
    ('an ABI version', re.compile(r'\bABI (?:version )?\d+\.\d+\b')),
    ('a piece of history', re.compile(r'\b(?:former(?:ly)?|appended|added later|was added|were added|used to be|previously|no longer|renamed|until version|since version|deprecated)\b', re.I)),
]

TEST_DIR = re.compile(r'(^|/)tests?/')


class SpecError(Exception):
    pass


class Clause:
    def __init__(self, cid, title, line, normative, has_body):
        self.cid, self.title, self.line, self.normative, self.has_body = cid, title, line, normative, has_body
        self.tests, self.vectors = set(), set()


def sort_key(cid):
    head, *rest = cid.split('.')
    return ((0, int(head)) if head.isdigit() else (1, head),) + tuple(int(r) for r in rest)


def parse_spec(lines):
    """[Clause] in document order, and findings of check (a)."""
    findings, clauses = [], []
    status = None        # normative / informative of the part or annex
    annex = None
    prev = {}            # parent id -> last child number, for order checks
    last_top = 0
    gen = None
    for i, line in enumerate(lines):
        if BEGIN_GEN.match(line):
            gen = BEGIN_GEN.match(line).group(1)
        elif END_GEN.match(line):
            gen = None
        m = HEADING.match(line)
        if not m or gen:
            continue
        if m.group(4):
            status, annex = 'normative', None
            continue
        if m.group(6):
            status, annex = m.group(7), m.group(6)
            cid = annex
            want = '§' + cid
        else:
            cid = m.group(2)
            want = '§' + cid
        if status is None:
            findings.append((i, '%s sits before the first part' % want))
            continue
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        a = ANCHOR.match(lines[k]) if k >= 0 else None
        if not a or a.group(1) != 's' + cid:
            findings.append((i, '%s has no anchor <a id="s%s"></a> above its heading' % (want, cid)))
        parts = cid.split('.')
        if len(parts) == 1 and cid.isdigit():
            if int(cid) != last_top + 1:
                findings.append((i, '%s follows §%d: clauses are numbered in order without gaps' % (want, last_top)))
            last_top = int(cid)
        elif len(parts) == 2:
            parent, num = parts[0], int(parts[1])
            if parent.isdigit() and int(parent) != last_top:
                findings.append((i, '%s sits under §%d' % (want, last_top)))
            if not parent.isdigit() and parent != annex:
                findings.append((i, '%s sits in Annex %s' % (want, annex)))
            if num != prev.get(parent, 0) + 1:
                findings.append((i, '%s follows §%s.%d: clauses are numbered in order without gaps'
                                 % (want, parent, prev.get(parent, 0))))
            prev[parent] = num
        title = m.group(3) or m.group(8)
        normative = status == 'normative' and '(informative)' not in title
        # a body: any text before the next heading other than anchors and blank lines
        body = False
        for nxt in lines[i + 1:]:
            if HEADING.match(nxt):
                break
            if nxt.strip() and not ANCHOR.match(nxt):
                body = True
                break
        clauses.append(Clause(cid, title, i, normative, body))
    return clauses, findings


def clause_spans(lines, clauses):
    """(clause, first line, end line) of each clause's own text."""
    heads = [c.line for c in clauses]
    out = []
    for n, c in enumerate(clauses):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        out.append((c, c.line + 1, end))
    return out


def abi_names(root):
    """The functions the C ABI declares (normative interface names, §32), read from its header."""
    try:
        text = open(os.path.join(root, 'conformance', 'include', 'numref', 'backend.h'), encoding='utf-8').read()
    except OSError:
        return set()
    return set(re.findall(r'\(\s*\*\s*(\w+)\s*\)\s*\(', text)) | set(re.findall(r'\b(numref_\w+)\s*\(', text))


def function_name(token):
    m = re.match(r'`?([A-Za-z_][\w.:]*?)(?:\(|`|$)', token)
    return m.group(1) if m else token


def lint(lines, clauses, allowed=frozenset()):
    findings = []
    for c, a, b in clause_spans(lines, clauses):
        if not c.normative:
            continue
        gen = False
        for i in range(a, b):
            line = lines[i]
            if BEGIN_GEN.match(line):
                gen = True
            if END_GEN.match(line):
                gen = False
                continue
            if gen or line.startswith('>') or ANCHOR.match(line) or line.startswith('<!--'):
                continue
            for what, rx in LINT:
                for m in rx.finditer(line):
                    if what == 'a function' and function_name(m.group(0)) in allowed:
                        continue
                    findings.append((i, '§%s (normative) names %s: %s (move it to an informative note)'
                                     % (c.cid, what, m.group(0))))
    return findings


def citations(text):
    """Yield (line number, clause id, item) of each clause citation in text."""
    for n, line in enumerate(text.split('\n')):
        for m in CITE.finditer(line):
            if EXTERNAL_BEFORE.search(line[:m.start()]):
                continue
            head = m.group(1)
            rest = [p for p in m.group(2).split('.') if p]
            cid = '.'.join([head] + rest[:1])
            item = rest[1] if len(rest) > 1 else None
            yield n, cid, item


def tracked_files(root):
    try:
        out = subprocess.run(['git', 'ls-files', '-z'], cwd=root, check=True, capture_output=True).stdout
        return sorted(p for p in out.decode().split('\0') if p)
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith('.') and not x.startswith('build')]
            files += [os.path.relpath(os.path.join(d, x), root) for x in names]
        return sorted(files)


def vector_suite(path):
    return os.path.dirname(path)


def render_coverage(clauses, version):
    out = ['<!-- Generated by scripts/check-spec.py --write from docs/spec.md and the citations of the',
           '     tests and golden vectors. Do not edit: re-run the script (CTest spec_clauses checks it). -->',
           '# Clause coverage',
           '',
           'For every clause of numref spec %s (docs/spec.md): the tests and the golden-vector suites' % version,
           '(folders of vectors/) that cite it. A normative clause that no test and no vector cites fails',
           'the default test suite, and so does a citation of a clause that does not exist. Informative',
           'clauses and annexes are listed without that requirement.',
           '',
           '| clause | title | kind | tests | vector suites |',
           '|---|---|---|---|---|']
    n_norm = n_cov = 0
    for c in clauses:
        kind = 'normative' if c.normative else 'informative'
        if c.normative and c.has_body:
            n_norm += 1
            n_cov += bool(c.tests or c.vectors)
        tests = ', '.join('`%s`' % t for t in sorted(c.tests)) or '—'
        vecs = ', '.join('`%s`' % v for v in sorted(c.vectors)) or '—'
        title = c.title.replace('|', '\\|')
        out.append('| [§%s](spec.md#s%s) | %s | %s | %s | %s |' % (c.cid, c.cid, title, kind, tests, vecs))
    out[8:8] = ['%d normative clauses with text, %d of them cited by a test or a vector file.' % (n_norm, n_cov), '']
    return '\n'.join(out) + '\n'


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')))
    ap.add_argument('--write', action='store_true', help='rewrite docs/coverage.md')
    args = ap.parse_args(argv)
    root = args.root
    spec_path = os.path.join(root, 'docs', 'spec.md')
    try:
        lines = open(spec_path, encoding='utf-8').read().split('\n')
    except OSError as e:
        print('check-spec: cannot read %s: %s' % (spec_path, e.strerror), file=sys.stderr)
        return 2
    clauses, findings = parse_spec(lines)
    findings = [('docs/spec.md', i, msg) for i, msg in findings]
    findings += [('docs/spec.md', i, msg) for i, msg in lint(lines, clauses, abi_names(root))]
    by_id = {c.cid: c for c in clauses}
    items = {}
    for c, a, b in clause_spans(lines, clauses):
        items[c.cid] = {m.group(1) for m in (re.match(r'^\s*(\d+)\. ', l) for l in lines[a:b]) if m}
    vm = re.search(r'^\*\*Spec version ([0-9.]+)\*\*', '\n'.join(lines[:10]), re.M)
    version = vm.group(1) if vm else '?'

    n_cites = 0
    for path in tracked_files(root):
        if path in ('CHANGES.md', 'docs/coverage.md', 'scripts/tests/test_check_spec.py'):  # history; fixtures
            continue
        if path.startswith('conformance/tests/abi_1_6/'):  # a frozen header: spec 0.1.0's numbers
            continue
        full = os.path.join(root, path)
        try:
            with open(full, encoding='utf-8') as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        if '§' not in text:
            continue
        if path == 'docs/spec.md':   # Annex C lists the numbers of earlier versions
            cut = text.find('<a id="sC"></a>')
            text = text if cut < 0 else text[:cut]
        for n, cid, item in citations(text):
            n_cites += 1
            c = by_id.get(cid)
            if c is None:
                findings.append((path, n, 'cites §%s, which docs/spec.md does not have' % cid))
                continue
            if item is not None and items.get(cid) and item not in items[cid]:
                findings.append((path, n, 'cites item %s of §%s, which has no item %s' % (item, cid, item)))
            if path.startswith('vectors/'):
                c.vectors.add(vector_suite(path))
            elif TEST_DIR.search(path):
                c.tests.add(path)
    for c in clauses:
        if c.normative and c.has_body and not (c.tests or c.vectors):
            findings.append(('docs/spec.md', c.line, 'normative §%s (%s) is cited by no test and no vector file'
                             % (c.cid, c.title)))
    coverage = render_coverage(clauses, version)
    cov_path = os.path.join(root, 'docs', 'coverage.md')
    if args.write:
        with open(cov_path, 'w', encoding='utf-8') as f:
            f.write(coverage)
    else:
        try:
            current = open(cov_path, encoding='utf-8').read()
        except OSError:
            current = None
        if current != coverage:
            findings.append(('docs/coverage.md', 0, 'differs from the clauses and citations: run scripts/check-spec.py --write'))
    for path, n, msg in findings:
        print('%s:%d: %s' % (path, n + 1, msg))
    if findings:
        print('check-spec: %d finding(s)' % len(findings), file=sys.stderr)
        return 1
    print('check-spec: %d clauses (%d normative), %d citations checked, every normative clause cited'
          % (len(clauses), sum(c.normative for c in clauses), n_cites))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
