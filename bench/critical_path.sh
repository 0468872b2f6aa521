#!/bin/bash
# SPDX-License-Identifier: MIT
#
# critical_path.sh [BUILD_DIR] [MiB of PT] [CPUs] [cyc]: the decoder's instruction-count
# critical path. Runs `bench_decode --child full` (one job) and `--child
# full2` (two jobs) under `valgrind --tool=callgrind --separate-threads=yes`
# on the random-walk bundle of that size (2 MiB by default; made by
# bench_decode if missing) on that many CPUs (2 by default; 1: one busy
# stream, which two jobs split into pieces), with CYC packets given "cyc",
# and prints the instructions of the one-job
# decode (all its threads), those of every thread of the two-job decode,
# and one-job total / the largest two-job thread: the speed-up two jobs
# could reach on two idle cores if only instructions counted (target
# >= 1.85x); then the same for eight jobs, with the sink's calls on the
# merge's thread and on their own. Run by hand (minutes under valgrind),
# not by `make bench`.
# BUILD_DIR defaults to ./build; bench_decode must be built there
# (`make O=BUILD_DIR BUILD_DIR/bench/bench_decode`).
set -euo pipefail
target=1.85
o=${1:-build}
mib=${2:-2}
cpus=${3:-2}
cyc=${4:-}
bench=$o/bench/bench_decode
if [ ! -x "$bench" ]; then
	echo "critical_path.sh: $bench is not built (make O=$o $bench)" >&2
	exit 2
fi
if ! command -v valgrind >/dev/null; then
	echo "critical_path.sh: valgrind is not installed" >&2
	exit 2
fi
bundle=$("$bench" --bundle "$mib" "$cpus" $cyc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions per thread of one run: "THREAD COUNT" lines, thread order.
# With --separate-threads=yes callgrind writes one file per thread,
# FILE-01, FILE-02, ..., each with a "totals:" line (Ir, the only event).
count() {
	local mode=$1 f n
	valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$work/$mode" \
		"$bench" --child "$mode" "$bundle" "$work/out.pftrace" >/dev/null 2>"$work/$mode.log" || {
		echo "critical_path.sh: the $mode run failed:" >&2
		tail -5 "$work/$mode.log" >&2
		exit 1
	}
	for f in "$work/$mode"-*; do
		n=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f")
		[ -n "$n" ] || { echo "critical_path.sh: no totals in $f" >&2; exit 1; }
		echo "${f##*-} $n"
	done
}

one=$(count full)
two=$(count full2)
total=$(awk '{ s += $2 } END { printf "%.0f", s }' <<<"$one")
echo "bundle: $bundle"
echo "one job: $total instructions in $(wc -l <<<"$one") thread(s)"
awk '{ printf "two jobs, thread %d: %.0f instructions\n", NR, $2 }' <<<"$two"
awk -v total="$total" -v target="$target" '
	$2 > max { max = $2 }
	{ sum += $2 }
	END {
		r = total / max
		printf "two jobs: %.0f instructions in all, largest thread %.0f\n", sum, max
		printf "RESULT instruction-count critical path (1 job / largest thread)|%.2fx|>= %.2fx|%s\n",
			r, target, (r >= target ? "met" : "not met")
	}' <<<"$two"

# Many cores: eight jobs, the sink's calls on the merge's thread and on a
# thread of their own (the default from 8 online CPUs): the merge's thread,
# which the jobs do not share, bounds the decode once the cores are many.
for m in m s; do
	many=$(count "full8$m")
	awk -v total="$total" -v m="$m" '
		NR == 1 { merge = $2 }
		$2 > max { max = $2 }
		END {
			where = m == "s" ? "on a thread of its own" : "on the merge'"'"'s thread"
			printf "eight jobs, the sink %s: merge thread %.0f, largest thread %.0f\n",
				where, merge, max
			printf "RESULT instruction-count critical path, 8 jobs, the sink %s (1 job / largest thread)|%.2fx|(info)|met\n",
				where, total / max
		}' <<<"$many"
done
