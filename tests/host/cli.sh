#!/bin/bash
# SPDX-License-Identifier: MIT
# mtrace-user's command-line surface: help, version, and bad invocations.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${O:-$top/build}/san/mtrace-user

suite=cli
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

expect_re version 0 "^mtrace-user $(cat "$top/VERSION")\$" "$bin" --version
expect_re help 0 '^usage: mtrace-user' "$bin" --help
expect_re no-args 2 '^usage: mtrace-user' "$bin"
expect_re unknown-command 2 "unknown command 'frobnicate'" "$bin" frobnicate
expect_re bundle-info 0 'format 1\.0, 15 sections' "$bin" bundle-info "$top/tests/fuzz/corpus/fuzz_bundle/sample-zstd.mtrace"
expect_re bundle-info-missing 1 'nonexistent' "$bin" bundle-info /nonexistent/x.mtrace

# decode without -o writes trace.pftrace in the working directory.
work=$(mktemp -d)
if (cd "$work" && "$bin" decode -q "$top/tests/fuzz/corpus/fuzz_bundle/sample-zstd.mtrace") >/dev/null 2>&1 &&
	[ -s "$work/trace.pftrace" ]; then
	echo "PASS cli/decode-default-output"
else
	echo "FAIL cli/decode-default-output: no trace.pftrace written by 'decode BUNDLE'"
fi
rm -rf "$work"

# Calls still running at the snapshot's end: ended (truncated) by default,
# left open with --keep-open. A generated snapshot frozen inside fib().
ptgen=${O:-$top/build}/rel/tests/ptgen/ptgen
prog=${O:-$top/build}/san/tests/ptgen/programs/recursion
work=$(mktemp -d)
if "$ptgen" -o "$work/r.mtrace" --trigger fib:20 -- "$prog" >/dev/null 2>&1 &&
	"$bin" decode -q -f json -o "$work/closed.json" "$work/r.mtrace" >/dev/null 2>&1 &&
	"$bin" decode -q --keep-open -f json -o "$work/open.json" "$work/r.mtrace" >/dev/null 2>&1; then
	counts() { python3 -c 'import json,sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
print(sum(e.get("ph") == "B" for e in ev), sum(e.get("ph") == "E" for e in ev))' "$1"; }
	read -r cb ce < <(counts "$work/closed.json")
	read -r ob oe < <(counts "$work/open.json")
	if [ "$cb" -eq "$ce" ] && [ "$ob" -eq "$cb" ] && [ "$oe" -lt "$ob" ]; then
		echo "PASS cli/decode-keep-open"
	else
		echo "FAIL cli/decode-keep-open: begins/ends $cb/$ce by default, $ob/$oe with --keep-open"
	fi
else
	echo "FAIL cli/decode-keep-open: could not generate or decode a snapshot frozen inside fib()"
fi

# The progress bar: drawn on a terminal (script(1) gives the decode one),
# erased before the summary lines, absent when stderr is not a terminal.
if "$ptgen" --walk "$prog" --insns 2000000 -o "$work/w.mtrace" >/dev/null 2>&1; then
	script -qec "$bin decode -o $work/w.pftrace $work/w.mtrace" /dev/null >"$work/tty.out" 2>&1
	tr '\r' '\n' <"$work/tty.out" >"$work/tty.lines"
	if grep -Eq 'decoding \[#* *\] +[0-9]+% of [0-9.]+ MiB of PT' "$work/tty.lines" &&
		grep -q $'\033\[K.*mtrace-user: wrote' "$work/tty.lines"; then
		echo "PASS cli/decode-progress-tty"
	else
		echo "FAIL cli/decode-progress-tty: $(head -c 600 "$work/tty.out" | cat -v)"
	fi
	if "$bin" decode -o "$work/w.pftrace" "$work/w.mtrace" 2>&1 | grep -q decoding; then
		echo "FAIL cli/decode-progress-pipe: a progress bar without a terminal"
	else
		echo "PASS cli/decode-progress-pipe"
	fi
else
	echo "FAIL cli/decode-progress-tty: could not generate a walk"
fi
rm -rf "$work"
