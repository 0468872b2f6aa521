#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The unit tests that run the decoder and the writer on several threads,
# under ThreadSanitizer: one line per test binary, "PASS tsan/test_NAME"
# only when the binary passed all its cases and ThreadSanitizer reported
# nothing (a data race, a lock misused, a leaked thread).
#
# ThreadSanitizer cannot be combined with ASan, so the tests are built
# again with -fsanitize=thread, in a tree of their own ($O/tsan;
# tests/lib/unit_rebuild.sh).
# TSAN_TESTS="test_a test_b" picks others, TSAN_TIMEOUT (seconds, default
# 900) bounds each run. The binaries run one at a time: ThreadSanitizer
# slows them five to twenty times, and their own threads fill the cores.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# Absolute: the helper links (unit_rebuild) are made from it.
tree=${O:-$top/build}
if ! O=$(cd "$tree" 2>/dev/null && pwd) || [ ! -d "$O/san/tests/ptgen/programs" ]; then
	echo "SKIP tsan: no unit tests built in $tree (run make check-unit first)"
	exit 0
fi
tso=$O/tsan
per_test=${TSAN_TIMEOUT:-900}
# The streaming replay, the stream split into pieces and its pipe, the
# open-time checks of the streams, the writer's thread, the sink's calls
# on a thread of their own (the Perfetto output's too), and every
# ground-truth program with one job and with several.
names=${TSAN_TESTS:-test_decode_stream test_decode_split test_decode_pipe test_decode_ptcheck
	test_decode_bundle test_perfetto_writer test_perfetto_decode_late test_decode_truth}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The runtime must start on this kernel: older ones abort on the wider
# address-space randomisation of newer kernels, which is no fault of the
# code under test.
printf 'int main(void) { return 0; }\n' >"$work/probe.c"
if ! cc -fsanitize=thread -o "$work/probe" "$work/probe.c" >"$work/probe.log" 2>&1; then
	echo "SKIP tsan: the compiler cannot build with -fsanitize=thread ($(head -1 "$work/probe.log"))"
	exit 0
fi
if ! "$work/probe" >"$work/probe.log" 2>&1; then
	echo "SKIP tsan: ThreadSanitizer's runtime does not start on this kernel ($(grep -m1 -i 'fatal\|error' "$work/probe.log"))"
	exit 0
fi

# shellcheck source=tests/lib/unit_rebuild.sh
. "$top/tests/lib/unit_rebuild.sh"
# shellcheck disable=SC2086 # the names are words
if ! unit_rebuild "$O" "$tso" "-O1 -g -fsanitize=thread" "$work/build.log" $names; then
	tail -30 "$work/build.log"
	echo "FAIL tsan/build: the unit tests did not build with -fsanitize=thread"
	exit 1
fi

status=0
for n in $names; do
	out=$work/$n.out
	TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
		timeout -k 10 "$per_test" "$tso/san/tests/unit/$n" >"$out" 2>&1
	rc=$?
	cases=$(grep -c '^PASS ' "$out")
	if [ "$rc" -eq 0 ] && ! grep -q 'ThreadSanitizer' "$out"; then
		echo "PASS tsan/$n: $cases cases, no ThreadSanitizer report"
		continue
	fi
	status=1
	# Indented: the unit suite already counts the test's own lines.
	grep -E '^(FAIL|SKIP) ' "$out" | sed 's/^/  /'
	if [ "$rc" -eq 124 ]; then
		echo "FAIL tsan/$n: timed out after ${per_test}s under ThreadSanitizer"
	elif grep -q 'WARNING: ThreadSanitizer' "$out"; then
		sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY/p' "$out" | head -80
		echo "FAIL tsan/$n: ThreadSanitizer reported $(grep -c 'WARNING: ThreadSanitizer' "$out") problem(s)"
	else
		tail -20 "$out"
		echo "FAIL tsan/$n: exited with status $rc under ThreadSanitizer"
	fi
done
exit $status
