#!/bin/bash
# SPDX-License-Identifier: MIT
# The test runners: case selection, --list, --help, unknown names, how a
# failed check is reported (values in decimal and hex, no leak report
# burying it), and the PT round trip's command line.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
self=$O/san/tests/lib/mt_test_selftest
rt=$O/san/tests/ptgen/ptg_roundtrip

suite=runner
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

expect list 0 'fails_after_leaking' "$self" --list
expect help 0 'usage: mt_test_selftest' "$self" --help
expect one-case 0 'PASS mt_test_selftest/passes' "$self" passes
expect unknown-case 2 "no case named 'pases'" "$self" pases
expect unknown-case-among-known 2 "no case named 'nosuch'" "$self" passes nosuch
expect unknown-option 2 "unknown option '--bogus'" "$self" --bogus

# The failing case leaks a block; its FAIL line must be the news, not LeakSanitizer.
out=$("$self" fails_after_leaking 2>&1)
rc=$?
verdict() { # NAME OK WHY
	if [ "$2" = yes ]; then echo "PASS $suite/$1"; else echo "FAIL $suite/$1: $3: $(head -c 600 <<<"$out")"; fi
}
[ "$rc" -eq 1 ] && ok=yes || ok=no
verdict failed-case-status $ok "exit status $rc, expected 1"
grep -q 'FAIL mt_test_selftest/fails_after_leaking: .*(-22 (0xffffffffffffffea) != 0 (0x0))$' <<<"$out" &&
	ok=yes || ok=no
verdict failed-case-values $ok "no FAIL line with the values in decimal and hex"
grep -q 'LeakSanitizer' <<<"$out" && ok=no || ok=yes
verdict failed-case-no-leak-report $ok "a leak report after the FAIL line"

expect roundtrip-help 0 'usage: ptg_roundtrip' "$rt" --help
expect roundtrip-list 0 'walk' "$rt" --list
expect roundtrip-unknown 2 "no case named 'nosuch'" "$rt" nosuch

# The host tests that rebuild the unit tests under another tool skip when
# their build tree is missing, and build nothing elsewhere (valgrind.sh,
# given tests by name, once built into /valgrind, the tree named by an
# empty O).
missing=$(mktemp -u)
for tool in valgrind tsan; do
	O=$missing VALGRIND_TESTS=test_util_array TSAN_TESTS=test_decode_pipe \
		expect "$tool-without-tree" 0 "SKIP $tool: no " "$top/tests/host/$tool.sh"
	[ ! -e "$missing" ] && [ ! -e "/$tool" ] && ok=yes || ok=no
	out=$(ls -d "$missing" "/$tool" 2>&1)
	verdict "$tool-without-tree-builds-nothing" $ok "a tree was made"
done
