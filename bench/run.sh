#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh BENCH...: runs each benchmark (with $BENCH_ARGS), shows its output,
# and ends with one table of every RESULT line: figure, value, target, met.
# Exit status 1 if a benchmark failed to run (a missed target is reported,
# not an error: the table says so).
set -uo pipefail
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
for b in "$@"; do
	echo "== $(basename "$b")"
	# shellcheck disable=SC2086
	if ! "$b" ${BENCH_ARGS:-} | tee -a "$results"; then
		echo "run.sh: $(basename "$b") failed" >&2
		status=1
	fi
done
echo
printf '%-48s %-22s %-18s %s\n' figure value target met
sed -n 's/^RESULT //p' "$results" | while IFS='|' read -r fig val tgt met; do
	printf '%-48s %-22s %-18s %s\n' "$fig" "$val" "$tgt" "$met"
done
exit $status
