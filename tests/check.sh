#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Runs the named test suites (unit host kmod vm), echoes their output and ends
# with the tally "N passed, N failed, N skipped". Exit status 0 only when no
# case failed. A test program that exits non-zero without reporting a FAIL
# line (a crash, a sanitizer abort, a timeout) counts as one failure.
set -uo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
# Test programs see an absolute O and none of the calling make's flags.
case $O in /*) ;; *) O=$PWD/$O ;; esac
export O
unset MAKEFLAGS MFLAGS MAKELEVEL
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run NAME TIMEOUT CMD...: one program, output tallied.
run() {
	local name=$1 limit=$2 out rc
	shift 2
	out=$(mktemp)
	timeout -k 10 "$limit" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	grep -E '^(PASS|FAIL|SKIP) ' "$out" >>"$log"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		[ "$rc" -eq 124 ] && why="timed out after ${limit}s" || why="exited with status $rc"
		echo "FAIL $name: $why" | tee -a "$log"
	fi
	rm -f "$out"
}

for suite in "$@"; do
	echo "== suite: $suite"
	case $suite in
	unit)
		for t in ${TEST_PROGRAMS:-}; do
			run "$(basename "$t")" 600 "$t"
		done ;;
	host)
		for t in tests/host/*.sh; do
			[ -e "$t" ] && run "host/$(basename "$t" .sh)" 900 "$t"
		done ;;
	fuzz)
		for f in ${FUZZ_BINS:-}; do
			run "fuzz/$(basename "$f")" $((${FUZZ_SECONDS:-30} + 120)) tests/fuzz/run.sh "$f" "${FUZZ_SECONDS:-30}"
		done ;;
	kmod)
		run kmod-compile 900 tests/kmod/compile-check.sh ;;
	vm)
		run vm 1800 tests/vm/run.sh ;;
	*)
		echo "check.sh: unknown suite '$suite' (unit, host, fuzz, kmod, vm)" >&2
		exit 2 ;;
	esac
done

passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
skipped=$(grep -c '^SKIP ' "$log")
if [ "$failed" -gt 0 ]; then
	echo "== failures:"
	grep '^FAIL ' "$log"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
