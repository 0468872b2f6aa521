#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh BENCH...: runs each benchmark (with $BENCH_ARGS), shows its output,
# and ends with one table of every RESULT line: figure, value, target, met,
# followed by each benchmark's run time (the whole run should stay under 10
# minutes) and the load average (other processes make every figure noisier).
# Exit status 1 if a benchmark failed to run (a missed target is reported,
# not an error: the table says so).
set -uo pipefail
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
times=
start=$SECONDS
for b in "$@"; do
	echo "== $(basename "$b")"
	t0=$SECONDS
	# shellcheck disable=SC2086
	if ! "$b" ${BENCH_ARGS:-} | tee -a "$results"; then
		echo "run.sh: $(basename "$b") failed" >&2
		status=1
	fi
	times="$times $(basename "$b") $((SECONDS - t0))s,"
done
echo
printf '%-48s %-22s %-18s %s\n' figure value target met
sed -n 's/^RESULT //p' "$results" | while IFS='|' read -r fig val tgt met; do
	printf '%-48s %-22s %-18s %s\n' "$fig" "$val" "$tgt" "$met"
done
echo
echo "run time:${times%,}; total $((SECONDS - start))s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
