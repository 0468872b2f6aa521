#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hw-compare.py MTRACE_TEXT PERF_SCRIPT TRIGGER_SYMBOL

Compares the calls of the thread that hit the trigger, as mtrace decoded
them (mtrace-user decode -f text) and as perf decoded them from its own
recording of another run of the same deterministic program (perf script
--itrace=cr -F tid,flags,ip,sym,addr). mtrace keeps only what its ring
held, so its calls must be exactly the last calls perf saw up to the first
call of TRIGGER_SYMBOL. Prints per-function call counts over that window
and the sequences near the trigger. Exit status: 0 equal, 1 different,
2 unusable input.
"""
import collections
import re
import sys

PERF_LINE = re.compile(
    r"^\s*(\d+)\s+(.*?)\s+[0-9a-f]+\s+\S+\s+=>\s+[0-9a-f]+\s+(\S+)\s*$")


def mtrace_calls(path):
    """(trigger tid, trigger symbol, [callee names]) from mtrace's text dump."""
    calls = collections.defaultdict(list)
    trig = None
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[1] == "trigger":
                trig = (int(p[2]), p[4])
            elif len(p) == 4 and p[2] == "B" and not p[3].startswith("["):
                calls[int(p[1])].append(p[3])
    if not trig:
        raise ValueError(f"{path}: no trigger line")
    return trig[0], trig[1], calls[trig[0]]


def perf_calls(path, trigger):
    """Calls of the thread that first called TRIGGER, up to that call."""
    calls = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            m = PERF_LINE.match(line)
            if not m or m.group(2).strip() != "call":
                continue
            tid, callee = int(m.group(1)), m.group(3).split("+")[0]
            calls[tid].append(callee)
            if callee == trigger:
                return calls[tid]
    raise ValueError(f"{path}: no call of {trigger}")


def main(argv):
    if len(argv) != 4:
        print("usage: " + __doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        tid, sym, mt = mtrace_calls(argv[1])
        pf = perf_calls(argv[2], argv[3])
    except (OSError, ValueError) as e:
        print(f"hw-compare: {e}", file=sys.stderr)
        return 2
    if sym != argv[3] or not mt or mt[-1] != argv[3]:
        print(f"hw-compare: mtrace's trigger is {sym} and its last call "
              f"{mt[-1] if mt else 'none'}, not {argv[3]}", file=sys.stderr)
        return 1
    window = pf[-len(mt):]
    diff = next((i for i, (a, b) in enumerate(zip(mt, window)) if a != b), None)
    if len(window) < len(mt):
        diff = 0
    print(f"mtrace: {len(mt)} calls on thread {tid} up to the trigger; "
          f"perf: {len(pf)} calls up to its first {argv[3]}")
    cm, cp = collections.Counter(mt), collections.Counter(window)
    print(f"{'function':24} {'mtrace':>8} {'perf':>8}")
    for name in sorted(set(cm) | set(cp), key=lambda n: -cm[n]):
        print(f"{name:24} {cm[name]:8} {cp[name]:8}{'' if cm[name] == cp[name] else '  <-'}")
    print("last calls before the trigger (mtrace | perf):")
    for a, b in list(zip(mt, window))[-10:]:
        print(f"  {a:30} {b}")
    if diff is not None:
        print(f"DIFFERENT: call {diff} of mtrace's {len(mt)}: mtrace {mt[diff]}, "
              f"perf {window[diff] if diff < len(window) else 'nothing'}")
        return 1
    print(f"EQUAL: mtrace's {len(mt)} calls are perf's last {len(mt)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
