#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh FUZZER SECONDS: runs one libFuzzer target for SECONDS, starting from
# its checked-in seeds (tests/fuzz/corpus/NAME/, copied so the run never
# writes to the source tree). A crash, leak, sanitizer report or timeout of
# one input fails it; the reproducer is kept and named.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1 secs=$2
name=$(basename "$bin")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
seeds=$top/tests/fuzz/corpus/$name
[ -d "$seeds" ] && cp -r "$seeds"/. "$work/corpus/"
keep=${O:-$top/build}/fuzz/crashes/$name
mkdir -p "$keep"
if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
	-print_final_stats=1 -artifact_prefix="$keep/" "$work/corpus" >"$work/log" 2>&1; then
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	echo "PASS fuzz/$name: ${execs:-?} inputs in ${secs}s, corpus $(ls "$work/corpus" | wc -l) files"
else
	tail -40 "$work/log"
	echo "FAIL fuzz/$name: reproducer in $keep/"
	exit 1
fi
