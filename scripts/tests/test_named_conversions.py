#!/usr/bin/env python3
"""§11.2 named conversions: every line of the spec's tables is checked by its golden-vector file.

  scripts/tests/test_named_conversions.py [--root DIR]

For every line of the generated §11.2 results table of docs/spec.md (profile, source→target),
reads the line's golden-vector file (§31) and asserts: its header names the same operation,
formats and profile; every input of the line's classes (§11.2 inputs table) is a case of the
file; and the file's expected result is the code the table gives. Then checks hand-computed
lines against values derived here from the definitions (comments show the arithmetic), so that
a generator and a vector set that agreed on a wrong value would still fail.
Exit 0 when every line was checked, 1 on a failure, 2 when the tables are missing.
"""
import argparse
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))


def region(text, name):
    m = re.search(r'<!-- BEGIN GENERATED %s -->\n(.*?)<!-- END GENERATED %s -->' % (re.escape(name), re.escape(name)),
                  text, re.S)
    if not m:
        raise SystemExit('test_named_conversions: docs/spec.md has no generated region %s' % name)
    rows = [[c.strip() for c in l.strip().strip('|').split('|')] for l in m.group(1).split('\n') if l.startswith('|')]
    return rows[0], rows[2:]


def code(cell):
    return None if cell == '—' else cell.split(' = ')[0]


def read_vec(path):
    header, cases = {}, {}
    with open(path, encoding='utf-8') as f:
        body = False
        for line in f:
            line = line.rstrip('\n')
            if body:
                parts = line.split()
                if line == 'end':
                    break
                if len(parts) >= 2:
                    cases[parts[0]] = parts[1]
                continue
            if line == 'begin':
                body = True
                continue
            k, _, v = line.partition(' ')
            header[k] = v
    return header, cases


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', default=ROOT)
    root = ap.parse_args(argv).root
    text = open(os.path.join(root, 'docs', 'spec.md'), encoding='utf-8').read()
    ihead, irows = region(text, 'conversions-inputs')
    rhead, rrows = region(text, 'conversions')
    classes = ihead[1:]
    assert rhead[3:3 + len(classes)] == classes, (rhead, classes)
    inputs = {r[0]: [code(c) for c in r[1:]] for r in irows}
    failures = checked = 0
    table = {}
    for r in rrows:
        conv, prof, vec = r[0], r[1], r[-1].strip('`')
        src, dst = conv.split('→')
        results = [code(c) for c in r[3:3 + len(classes)]]
        table[(prof, conv)] = dict(zip(classes, results))
        header, cases = read_vec(os.path.join(root, vec))
        want = {'op': 'cast', 'from': src, 'to': dst, 'profile': prof}
        for k, v in want.items():
            if header.get(k) != v:
                print('%s: header %s is %r, the §11.2 line says %r' % (vec, k, header.get(k), v))
                failures += 1
        for cls, x, y in zip(classes, inputs[conv], results):
            if x is None:
                if y is not None:
                    print('§11.2 %s %s: class %s has no input but a result %s' % (prof, conv, cls, y))
                    failures += 1
                continue
            if x not in cases:
                print('%s: no case for the §11.2 input %s (%s)' % (vec, x, cls))
                failures += 1
            elif cases[x] != y:
                print('%s: input %s (%s) expects %s, the §11.2 table says %s' % (vec, x, cls, cases[x], y))
                failures += 1
            checked += 1

    # Hand-computed lines (independent of the generator):
    # f32->f8e4m3fn: max 448 = 1.75 * 2^8 (code 7e: exponent field 1111, fraction 110); the grid
    # step at 448 is 2^(8-3) = 32, so the tie is 448 + 16 = 464 = 0x43e80000 in f32, and the next
    # f32 above it is 43e80001 = 464.000030517578125. Round to nearest even sends the tie to the
    # even fraction 110 (448, 7e); above the tie the exact value exceeds the tie: overflow.
    #   cuda_satfinite (overflow=saturate): 448 -> 7e; NaN -> 7f (nan=ones); +Inf -> 7e (inf_sat=max)
    #   ocp (overflow=nonsat): 7f, the NaN of the infinity slot (§6.1 into an fn format)
    # Half the smallest subnormal 2^-9 is 2^-10 (3a800000): a tie between 0 and 2^-9, to even: 00.
    hand = {
        ('cuda_satfinite', 'f32→f8e4m3fn'): {'tie at max': '7e', 'above the tie': '7e', 'NaN': '7f', '+Inf': '7e',
                                             '-Inf': 'fe', 'min positive': '01', 'half of it': '00'},
        ('ocp', 'f32→f8e4m3fn'): {'tie at max': '7e', 'above the tie': '7f', '+Inf': '7f', 'half of it': '00'},
        # f32->f8e5m2: max 57344 = 1.75 * 2^15 (code 7b, fraction 11: odd), step 2^13, tie 61440:
        # to even goes up, to 2^16, past max: overflow, +Inf 7c under nonsat, 7b under saturate
        ('ocp', 'f32→f8e5m2'): {'tie at max': '7c', 'above the tie': '7c', '+Inf': '7c', 'NaN': '7e'},
        ('cuda_satfinite', 'f32→f8e5m2'): {'tie at max': '7b', 'above the tie': '7b', 'NaN': '7f'},
        # f32->f4e2m1fn: max 6 = 1.5 * 2^2, step 2, tie 7; finite format, no NaN: saturates to 6
        # (code 7); cuda_satfinite sends NaN to +max (nan_to_finite=max), ocp to +0 (zero)
        ('cuda_satfinite', 'f32→f4e2m1fn'): {'tie at max': '07', 'above the tie': '07', 'NaN': '07'},
        ('ocp', 'f32→f4e2m1fn'): {'NaN': '00', '+Inf': '07', '-Inf': '0f'},
    }
    for key, expect in hand.items():
        if key not in table:
            print('§11.2 has no line %s %s' % key)
            failures += 1
            continue
        for cls, y in expect.items():
            if table[key][cls] != y:
                print('§11.2 %s %s, %s: the table says %s, hand computation %s' % (key[0], key[1], cls, table[key][cls], y))
                failures += 1
            checked += 1
    if failures:
        print('test_named_conversions: %d failure(s)' % failures)
        return 1
    if checked == 0:
        print('test_named_conversions: nothing was checked')
        return 1
    print('test_named_conversions: %d named conversions, %d results checked against their vector files and by hand'
          % (len(rrows), checked))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
