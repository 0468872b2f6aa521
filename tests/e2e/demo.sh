#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make demo: the end-to-end scenario (tests/vm/guest/tests.d/70-e2e.sh) in
# the QEMU guest, on any x86-64 machine, and its trace here as demo.pftrace
# with a short summary in demo-summary.txt. The module runs its simulated
# backend there, so the PT bytes come from the PT generator, not from a CPU.
# The snapshot bundle stays next to the trace as demo.mtrace, to decode again.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export O
dest=$PWD
log=$O/demo.log

echo "mtrace demo: booting the test VM (QEMU, no KVM needed) with the demo scenario..."
t0=$(date +%s.%N)
if ! MTRACE_VM_ONLY='70-*' "$top/tests/vm/run.sh" >"$log" 2>&1; then
	grep -E '^(FAIL|vm:)' "$log" || tail -40 "$log"
	echo "mtrace demo: the scenario failed; the whole log is in $log" >&2
	exit 1
fi
t1=$(date +%s.%N)
ex=$O/vm/run/export/e2e
cp "$ex/trace.pftrace" "$dest/demo.pftrace"
cp "$ex/trace.mtrace" "$dest/demo.mtrace"
cp "$ex/summary.txt" "$dest/demo-summary.txt"
# The copy on this side must still obey trace_processor's import rules.
"$O/vm/bin/pftrace_check" "$dest/demo.pftrace" --process e2e_app --thread worker-b \
	--trigger-symbol slow_path >"$O/demo-check.log" 2>&1 || {
	cat "$O/demo-check.log"
	echo "mtrace demo: demo.pftrace fails the import-rule check" >&2
	exit 1
}

cat <<EOF

What ran: mtrace-user --trigger uprobe:/bin/e2e_app:slow_path -- /bin/e2e_app
inside a Debian 6.12 guest, with the real mtrace module, BPF trigger, kfunc
freeze, sideband, capture, decoder and Perfetto writer. This machine has no
Intel PT (and QEMU does not emulate it), so the module's simulated backend
was fed PT bytes made by mtrace's PT generator from a walk of e2e_app's own
code at its real load address; the trace was checked against the
generator's ground truth ($(grep -c '^PASS' "$log") checks passed), and the copy here
passes the import-rule check ($(sed 's/^[^:]*: //' "$O/demo-check.log" | head -1)).

$(cat "$dest/demo-summary.txt")

Wrote $dest/demo.pftrace, its snapshot bundle $dest/demo.mtrace and
$dest/demo-summary.txt in $(printf '%.0f' "$(echo "$t1 - $t0" | bc)") s.
The bundle is portable (it holds e2e_app and its libraries): decode it
again here, e.g. as a text timeline, to practise on it:
  $O/mtrace-user decode -o demo.pftrace demo.mtrace
  $O/mtrace-user decode --format=text -o demo.txt demo.mtrace
Open demo.pftrace at https://ui.perfetto.dev (Open trace file): worker-a and
worker-b are threads of e2e_app, the trigger is an instant on the
"mtrace trigger" track.
EOF
