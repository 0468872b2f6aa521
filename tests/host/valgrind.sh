#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The unit tests under valgrind's memcheck: one line per test binary,
# "PASS valgrind/test_NAME" only when the binary passed all its cases with
# zero memcheck errors and no definite leaks.
#
# memcheck cannot run ASan binaries, so the tests are built again without
# sanitizers, CFLAGS_SAN set to plain -O1, in a tree of their own
# ($O/valgrind; tests/lib/unit_rebuild.sh). The binaries checked are the
# unit tests the ASan build has ($O/san/tests/unit/test_*);
# VALGRIND_TESTS="test_a test_b" picks some,
# VALGRIND_TIMEOUT (seconds, default 600) bounds each run, VALGRIND_JOBS
# (default: one per CPU) runs binaries side by side. The few cases
# that depend on the process layout valgrind changes are listed below and
# skipped by name, visibly.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# Absolute: the helper links (unit_rebuild) are made from it.
tree=${O:-$top/build}
if ! O=$(cd "$tree" 2>/dev/null && pwd); then
	echo "SKIP valgrind: no build tree at $tree (run make check-unit first)"
	exit 0
fi
vgo=$O/valgrind
per_test=${VALGRIND_TIMEOUT:-600}

if ! command -v valgrind >/dev/null; then
	echo "SKIP valgrind: valgrind is not installed (apt-get install valgrind)"
	exit 0
fi

if [ -n "${VALGRIND_TESTS:-}" ]; then
	names=$VALGRIND_TESTS
else
	names=$(find "$O/san/tests/unit" -maxdepth 1 -name 'test_*' -type f -perm -u+x \
		-printf '%f\n' 2>/dev/null | sort)
fi
if [ -z "$names" ]; then
	echo "SKIP valgrind: no unit tests built in $O/san/tests/unit (run make check-unit first)"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Errors inside the libraries we link but do not own would belong in a
# suppression file here; none has been needed so far.
# shellcheck source=tests/lib/unit_rebuild.sh
. "$top/tests/lib/unit_rebuild.sh"
# shellcheck disable=SC2086 # the names are words
if ! unit_rebuild "$O" "$vgo" -O1 "$work/build.log" $names; then
	tail -30 "$work/build.log"
	echo "FAIL valgrind/build: the unsanitized unit tests did not build"
	exit 1
fi

# Cases that cannot pass under valgrind for reasons outside the code they
# test; each binary listed runs case by case, without these.
declare -A skip_cases=(
	# valgrind maps no [vdso] into the guest, and /proc/PID/cmdline (not
	# /proc/self/cmdline, which it rewrites) shows valgrind's command line.
	[test_capture_procfs]="collect_own_maps collect_own_threads"
)

# memcheck BIN [CASE]: runs it, output in $work/$n.out, log in $work/$n.vg.
# Returns the exit status; sets errors to memcheck's error count.
memcheck() {
	local rc
	timeout -k 10 "$per_test" valgrind --tool=memcheck --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
		--num-callers=30 --log-file="$work/$n.vg" "$@" >>"$work/$n.out" 2>&1
	rc=$?
	errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$work/$n.vg" | tail -1)
	cat "$work/$n.vg" >>"$work/$n.vglog"
	return $rc
}

# check_one NAME: all of one binary's lines, PASS/FAIL last.
check_one() {
	local n=$1 bin=$vgo/san/tests/unit/$1 rc=0 total_errors=0 cases c

	: >"$work/$n.out"
	: >"$work/$n.vglog"
	if [ -n "${skip_cases[$n]:-}" ]; then
		for c in $(sed -n 's/^MT_TEST(\([A-Za-z0-9_]*\)).*/\1/p' "$top/tests/unit/$n.c"); do
			if [[ " ${skip_cases[$n]} " == *" $c "* ]]; then
				echo "SKIP valgrind/$n/$c: depends on what valgrind changes in the process"
				continue
			fi
			memcheck "$bin" "$c" || rc=$?
			total_errors=$((total_errors + ${errors:-1}))
			[ "$rc" -eq 124 ] && break
		done
	else
		memcheck "$bin" || rc=$?
		total_errors=${errors:-1}
	fi
	cases=$(grep -c '^PASS ' "$work/$n.out")
	if [ "$rc" -eq 0 ] && [ "$total_errors" -eq 0 ]; then
		echo "PASS valgrind/$n: $cases cases, 0 memcheck errors"
		return
	fi
	# Indented: the unit suite already counts the test's own lines.
	grep -E '^(FAIL|SKIP) ' "$work/$n.out" | sed 's/^/  /'
	if [ "$rc" -eq 124 ]; then
		echo "FAIL valgrind/$n: timed out after ${per_test}s under valgrind"
	elif [ "$total_errors" -ne 0 ]; then
		grep -v '^==[0-9]*== *$' "$work/$n.vglog" | head -60
		echo "FAIL valgrind/$n: $total_errors memcheck errors (or definite leaks)"
	else
		echo "FAIL valgrind/$n: exited with status $rc under valgrind"
	fi
}

# In parallel (VALGRIND_JOBS, default one per CPU); reported in name order.
jobs_max=${VALGRIND_JOBS:-$(nproc)}
for n in $names; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	check_one "$n" >"$work/$n.result" 2>&1 &
done
wait
status=0
for n in $names; do
	cat "$work/$n.result"
	grep -q '^FAIL ' "$work/$n.result" && status=1
done
exit $status
