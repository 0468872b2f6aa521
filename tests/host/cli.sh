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
