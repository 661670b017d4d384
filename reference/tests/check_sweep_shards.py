#!/usr/bin/env python3
"""sweep_p3109 --shard I/N: N shards do the work once in total (issue 31 item 4).

Runs `sweep_p3109 --plan --shard I/N` (lists the shard's work units without converting) for
N = 1, 2, 3, 7 and checks that the shards' units are disjoint, that their union is the units of
the whole run (--shard 0/1, and no --shard at all), that their conversion counts add up to the
whole run's, and that no shard is left without work. A bad --shard is exit 2.

usage: check_sweep_shards.py path/to/sweep_p3109
"""
import re
import subprocess
import sys

PROG = None
FAILURES = []


def plan(*args):
    """The units (test, index, from, to) -> conversions of one --plan run."""
    p = subprocess.run([PROG, "--plan", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        FAILURES.append(f"{' '.join(args) or '(no --shard)'}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        return {}
    units = {}
    for m in re.finditer(r"^unit (\S+) (\d+) (\S+) (\S+) (\d+)$", p.stdout, re.M):
        key = (m.group(1), int(m.group(2)), m.group(3), m.group(4))
        if key in units:
            FAILURES.append(f"{args}: unit {key} listed twice")
        units[key] = int(m.group(5))
    return units


def main():
    global PROG
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    PROG = sys.argv[1]
    whole = plan("--shard", "0/1")
    if plan() != whole:
        FAILURES.append("no --shard differs from --shard 0/1")
    tests = {k[0] for k in whole}
    if len(tests) != 3 or len(whole) < 3 * 140:
        FAILURES.append(f"the whole run lists {len(whole)} units of tests {sorted(tests)}")
    total = sum(whole.values())
    if total < 250_000_000:
        FAILURES.append(f"the whole run has {total} conversions (the sweep's own bound is 2.5e8)")
    for n in (2, 3, 7):
        seen = {}
        for i in range(n):
            part = plan("--shard", f"{i}/{n}")
            if not part:
                FAILURES.append(f"shard {i}/{n} has no units")
            for k, c in part.items():
                if k in seen:
                    FAILURES.append(f"unit {k} in shards {seen[k]}/{n} and {i}/{n}")
                seen[k] = i
                if whole.get(k) != c:
                    FAILURES.append(f"unit {k}: {c} conversions in shard {i}/{n}, {whole.get(k)} in the whole run")
            share = sum(part.values())
            if n > 1 and share > 0.75 * total:
                FAILURES.append(f"shard {i}/{n} has {share} of {total} conversions")
        if set(seen) != set(whole):
            FAILURES.append(f"N={n}: {len(set(whole) - set(seen))} units in no shard, "
                            f"{len(set(seen) - set(whole))} not in the whole run")
        got = sum(whole[k] for k in seen if k in whole)
        if got != total:
            FAILURES.append(f"N={n}: the shards do {got} conversions, the whole run {total}")
    for bad in ("3/3", "1/0", "x", "1/2/3"):
        p = subprocess.run([PROG, "--plan", "--shard", bad], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or "--shard" not in p.stderr:
            FAILURES.append(f"--shard {bad}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
    if FAILURES:
        print("FAIL:\n  " + "\n  ".join(FAILURES[:40]), file=sys.stderr)
        return 1
    print(f"OK: {len(whole)} units, {total} conversions; shards of 2, 3 and 7 partition them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
