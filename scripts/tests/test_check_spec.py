#!/usr/bin/env python3
"""Self-test of scripts/check-spec.py (CTest spec_clauses_selftest): a small tree that passes, and
one defect at a time that must fail with a message naming it."""
import os
import shutil
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'check-spec.py')

SPEC = '''# spec

**Spec version 9.9.9** (test).

<a id="part-i"></a>

## Part I — Formats

<a id="s1"></a>

### §1 Rounding

<a id="s1.1"></a>

#### §1.1 Ties

A tie rounds to even.

> *Informative note.* reference/src/round.cpp implements it (a note may name files).

<a id="s1.2"></a>

#### §1.2 Overflow

1. An overflow gives the largest finite value.
2. An infinity stays.

<a id="sA"></a>

## Annex A (informative) — Kernels

<a id="sA.1"></a>

### §A.1 Files

cuda/src/cast.cu holds them (informative: no finding).
'''
TEST = '// §1.1 ties to even; §1.2 item 2: Inf stays (IEEE 754 §6.2.3 is another document)\n'


def run(root, *extra):
    p = subprocess.run([sys.executable, CHECKER, '--root', root, *extra], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def tree(spec=SPEC, test=TEST, extra=None):
    root = tempfile.mkdtemp(prefix='check-spec-')
    os.makedirs(os.path.join(root, 'docs'))
    os.makedirs(os.path.join(root, 'reference', 'tests'))
    with open(os.path.join(root, 'docs', 'spec.md'), 'w', encoding='utf-8') as f:
        f.write(spec)
    with open(os.path.join(root, 'reference', 'tests', 'test_round.cpp'), 'w', encoding='utf-8') as f:
        f.write(test)
    for path, text in (extra or {}).items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), 'w', encoding='utf-8') as f:
            f.write(text)
    rc, out = run(root, '--write')  # docs/coverage.md as the checker writes it
    return root, rc, out


failures = []


def expect(name, rc, out, want_rc, needle):
    if rc != want_rc or needle not in out:
        failures.append('%s: exit %d (want %d), output lacks %r:\n%s' % (name, rc, want_rc, needle, out))


root, rc, out = tree()
expect('clean tree', rc, out, 0, 'every normative clause cited')
rc, out = run(root)
expect('clean tree, check', rc, out, 0, '(3 normative)')
cov = open(os.path.join(root, 'docs', 'coverage.md'), encoding='utf-8').read()
if 'reference/tests/test_round.cpp' not in cov or '[§1.1](spec.md#s1.1)' not in cov:
    failures.append('coverage.md lacks the test or the clause link:\n' + cov)
with open(os.path.join(root, 'docs', 'coverage.md'), 'a', encoding='utf-8') as f:
    f.write('edited by hand\n')
rc, out = run(root)
expect('stale coverage.md', rc, out, 1, 'docs/coverage.md:1: differs')
shutil.rmtree(root)

cases = [
    ('missing anchor', SPEC.replace('<a id="s1.2"></a>\n', ''), TEST, 'has no anchor'),
    ('gap in numbering', SPEC.replace('§1.2 Overflow', '§1.3 Overflow').replace('s1.2"', 's1.3"'),
     TEST.replace('§1.2', '§1.3'), 'without gaps'),
    ('file in normative text', SPEC.replace('A tie rounds to even.', 'A tie rounds to even (reference/src/round.cpp).'),
     TEST, 'names a source file'),
    ('ABI version in normative text', SPEC.replace('A tie rounds to even.', 'A tie rounds to even (ABI 1.4).'),
     TEST, 'names an ABI version'),
    ('history in normative text', SPEC.replace('An infinity stays.', 'An infinity stays (formerly NaN).'),
     TEST, 'names a piece of history'),
    ('citation of a missing clause', SPEC, TEST + '// §1.7\n', 'cites §1.7, which docs/spec.md does not have'),
    ('citation of a missing item', SPEC, TEST + '// §1.2.3\n', 'has no item 3'),
    ('uncited normative clause', SPEC, '// §1.1 only\n', 'normative §1.2 (Overflow) is cited by no test'),
]
for name, spec, test, needle in cases:
    root = tempfile.mkdtemp(prefix='check-spec-')
    os.makedirs(os.path.join(root, 'docs'))
    os.makedirs(os.path.join(root, 'reference', 'tests'))
    open(os.path.join(root, 'docs', 'spec.md'), 'w', encoding='utf-8').write(spec)
    open(os.path.join(root, 'reference', 'tests', 'test_round.cpp'), 'w', encoding='utf-8').write(test)
    rc, out = run(root, '--write')
    expect(name, rc, out, 1, needle)
    shutil.rmtree(root)

# a vector file counts as a citation; a file outside tests/ and vectors/ does not
root, rc, out = tree(test='// §1.1\n', extra={'vectors/cast/x.vec': 'clause §1.2\n'})
expect('vector citation', rc, out, 0, 'every normative clause cited')
shutil.rmtree(root)
root, rc, out = tree(test='// §1.1\n', extra={'reference/src/round.cpp': '// §1.2\n'})
expect('source citation is not a test', rc, out, 1, 'normative §1.2 (Overflow) is cited by no test')
shutil.rmtree(root)

if failures:
    print('\n\n'.join(failures))
    print('test_check_spec: %d failure(s)' % len(failures))
    sys.exit(1)
print('test_check_spec: %d cases passed' % (3 + len(cases) + 2))
