#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The unit tests under valgrind's memcheck: one line per test binary,
# "PASS valgrind/test_NAME" only when the binary passed all its cases with
# zero memcheck errors and no definite leaks.
#
# memcheck cannot run ASan binaries, so the tests are built a second time
# without sanitizers: the ordinary build rules with CFLAGS_SAN set to plain
# -O1, in a separate tree ($O/valgrind). The same rules mean the same
# sources, flags and extra objects as the ASan binaries, with no list kept
# here. The binaries checked are the unit tests the ASan build has
# ($O/san/tests/unit/test_*); VALGRIND_TESTS="test_a test_b" picks some.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
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
bins=()
for n in $names; do
	bins+=("$vgo/san/tests/unit/$n")
done
if ! make -C "$top" -s O="$vgo" CFLAGS_SAN=-O1 "${bins[@]}" >"$work/build.log" 2>&1; then
	tail -30 "$work/build.log"
	echo "FAIL valgrind/build: the unsanitized unit tests did not build"
	exit 1
fi

status=0
for n in $names; do
	bin=$vgo/san/tests/unit/$n
	timeout -k 10 "$per_test" valgrind --tool=memcheck --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
		--num-callers=30 --log-file="$work/$n.vg" "$bin" >"$work/$n.out" 2>&1
	rc=$?
	errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$work/$n.vg" | tail -1)
	cases=$(grep -c '^PASS ' "$work/$n.out")
	if [ "$rc" -eq 0 ] && [ "${errors:-x}" = 0 ]; then
		echo "PASS valgrind/$n: $cases cases, 0 memcheck errors"
		continue
	fi
	status=1
	if [ "$rc" -eq 124 ]; then
		echo "FAIL valgrind/$n: timed out after ${per_test}s under valgrind"
	elif [ "$rc" -eq 99 ] || [ "${errors:-0}" != 0 ]; then
		grep -v '^==[0-9]*== *$' "$work/$n.vg" | head -60
		echo "FAIL valgrind/$n: ${errors:-?} memcheck errors (or definite leaks)"
	else
		# Indented: the unit suite already counts the test's own lines.
		grep -E '^(FAIL|SKIP) ' "$work/$n.out" | sed 's/^/  /'
		echo "FAIL valgrind/$n: exited with status $rc under valgrind"
	fi
done
exit $status
