#!/bin/bash
# SPDX-License-Identifier: MIT
#
# hw-validate.sh [WORKDIR]: on a machine with Intel PT, as root, after
# `make && make install` and `modprobe mtrace` (docs/hardware-validation.md):
# records the reference program tests/hw/refprog.c with mtrace (uprobe
# trigger on trigger_point) and with `perf record -e intel_pt//u`, and
# compares the trigger thread's calls (scripts/hw-compare.py). Exit status 0
# when they agree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
w=${1:-$(mktemp -d)}
mkdir -p "$w"
n=20000
mtrace=${MTRACE_USER:-mtrace-user}

die() { echo "hw-validate: $*" >&2; exit 2; }
[ -d /sys/bus/event_source/devices/intel_pt ] ||
	die "this machine has no intel_pt PMU: Intel PT is needed (bare metal, Broadwell or later)"
command -v perf >/dev/null || die "perf is not installed (Debian: linux-perf)"
"$mtrace" doctor >"$w/doctor.txt" 2>&1 || { cat "$w/doctor.txt"; die "mtrace-user doctor says a capture cannot work"; }
grep -q "SIMULATED" "$w/doctor.txt" && die "the module runs its simulated backend (reload it without sim=1)"

# The same flags as the generator's test programs: small readable call trees.
gcc -O1 -fno-inline -fno-optimize-sibling-calls -g -o "$w/refprog" "$top/tests/hw/refprog.c"

echo "hw-validate: mtrace..."
"$mtrace" -b 1M --trigger "uprobe:$w/refprog:trigger_point" -o "$w/mtrace.pftrace" \
	--keep-bundle "$w/mtrace.mtrace" -- "$w/refprog" "$n"
"$mtrace" decode -f text -o "$w/mtrace.txt" "$w/mtrace.mtrace"

echo "hw-validate: perf..."
perf record -q -e intel_pt//u -o "$w/perf.data" -- "$w/refprog" "$n"
perf script -i "$w/perf.data" --itrace=cr -F tid,flags,ip,sym,addr >"$w/perf.txt"

"$top/scripts/hw-compare.py" "$w/mtrace.txt" "$w/perf.txt" trigger_point | tee "$w/compare.txt"
echo "hw-validate: files in $w"
