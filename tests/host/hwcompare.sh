#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The comparison step of the hardware validation (scripts/hw-compare.py) on
# small made-up inputs in the formats of `mtrace-user decode -f text` and
# `perf script --itrace=cr -F tid,flags,ip,sym,addr`: the real procedure
# needs Intel PT, but the comparison itself must be right.
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=hwcompare
. "$top/tests/lib/expect.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cmp=$top/scripts/hw-compare.py

# mtrace: thread 42 hit the trigger; its ring held the last four calls.
cat >"$d/mt.txt" <<'TXT'
1000 42 B handle inferred
1000 42 B parse
1010 42 E parse
1020 42 B lookup
1030 42 B [untraced]
1040 42 E [untraced]
1050 42 E lookup
1060 43 B other
1070 42 B render
1080 42 E render
1090 42 B trigger_point
1100 42 E trigger_point truncated
1095 trigger 42 0x401136 trigger_point
TXT
perf_line() { printf '%8d  %-20s %16x %s =>  %16x %s\n' "$1" "$2" 4198400 caller 4198500 "$3"; }
{
	perf_line 7 call main
	perf_line 7 call render
	perf_line 7 return render
	perf_line 9 call parse
	perf_line 7 call parse
	perf_line 7 call lookup
	perf_line 7 return lookup
	perf_line 7 call render
	perf_line 7 call trigger_point
	perf_line 7 call parse
} >"$d/perf.txt"

expect equal 0 "EQUAL: mtrace's 4 calls are perf's last 4" "$cmp" "$d/mt.txt" "$d/perf.txt" trigger_point
expect_re counts 0 "^lookup +1 +1$" "$cmp" "$d/mt.txt" "$d/perf.txt" trigger_point
sed 's/ B lookup/ B lookup_v2/' "$d/mt.txt" >"$d/mt-diff.txt"
expect different 1 "DIFFERENT: call 1 of mtrace's 4: mtrace lookup_v2, perf lookup" \
	"$cmp" "$d/mt-diff.txt" "$d/perf.txt" trigger_point
head -3 "$d/perf.txt" >"$d/perf-short.txt"
expect perf-without-trigger 2 "no call of trigger_point" \
	"$cmp" "$d/mt.txt" "$d/perf-short.txt" trigger_point
grep -v trigger "$d/mt.txt" >"$d/mt-notrig.txt"
expect mtrace-without-trigger 2 "no trigger line" \
	"$cmp" "$d/mt-notrig.txt" "$d/perf.txt" trigger_point
expect usage 2 "usage: hw-compare.py MTRACE_TEXT PERF_SCRIPT TRIGGER_SYMBOL" "$cmp" "$d/mt.txt"
