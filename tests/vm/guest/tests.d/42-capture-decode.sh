#!/bin/sh
# SPDX-License-Identifier: MIT
# Decoding what the simulated backend captured: `record` then `decode`, and
# the top-level form, which decodes each snapshot straight to Perfetto.
# CPU 1's ring gets pt_gap_header's bytes (a PSB+ at a TSC the target read on
# CPU 1, then a packet the decoder must reject) and capture_inject's stream,
# which is not PT and holds no sync point: each decode must succeed with
# exactly one decode error, a gap on the target's thread that ran on CPU 1
# at that TSC. Traces are checked by pftrace_check (Perfetto's import rules,
# replayed by the unit tests' reader), bundles by capture_check.
T=/tmp/capture-decode
SPEC=uprobe:/bin/capture_spin:capture_marker

. /tests.d/lib/capture.sh

# feed REC SEED: the gap header, then 5000 stream bytes (the 64K ring does
# not wrap), into CPU 1's ring of the capture REC. The header's TSC is one
# capture_spin's main thread read, so CPU 1 ran the target then: other
# tasks get CPU 1 too, so a TSC read elsewhere may fall in their time.
feed() {
	rm -f $T/spin/tsc
	touch $T/spin/tsc-want
	wait_file $T/spin/tsc &&
		taskset -c 0 pt_gap_header $T/gap.pt "$(cat $T/spin/tsc)" &&
		taskset -c 0 capture_inject $1 1 --file $T/gap.pt &&
		taskset -c 0 capture_inject $1 1 5000 $2
}

# pftrace_gap TRACE TRIGGER-REASON [ARGS]: a clean trace with the trigger
# and the one gap on a thread of capture_spin.
pftrace_gap() {
	f=$1 reason=$2
	shift 2
	pftrace_check $f --process capture_spin --gaps --trigger "$reason" "$@"
}

# (a) record, then decode the bundle to Perfetto and to text
record_then_decode() {
	fresh
	mtrace-user record -b 64K -o $T/rt.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/rt.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	feed $rec 51 || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/rt.log; return 1; }
	cat $T/rt.log
	mtrace-user decode $T/rt.mtrace -o $T/rt.pftrace 2>$T/dec.log || { cat $T/dec.log; return 1; }
	cat $T/dec.log
	# The vdso exists in no file: the capture copies it, decode finds it.
	if grep -q '\[vdso\]' $T/dec.log; then echo "the bundle lacks the vdso"; return 1; fi
	grep -q " 1 decode error, " $T/dec.log || return 1
	pftrace_gap $T/rt.pftrace "target exit" || return 1
	mtrace-user decode -q -f text $T/rt.mtrace >$T/rt.txt || return 1
	cat $T/rt.txt
	[ "$(grep -c ' GAP decode error$' $T/rt.txt)" = 1 ] && grep -q ' trigger ' $T/rt.txt
}

# (b) the top-level form, three snapshots taken by SIGUSR1: three traces
snapshots_to_perfetto() {
	fresh
	rm -rf $T/multi
	mkdir -p $T/multi
	mtrace-user -n 3 -b 64K -o $T/multi/trace.pftrace -- /bin/capture_spin 1 $T/spin \
		2>$T/multi.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	# n, not i: the helpers use i.
	for n in 1 2 3; do
		# The ring is cleared at each arm: feed it only once re-armed.
		[ $n = 1 ] || wait_for $T/multi.log "re-armed for snapshot $n of 3" ||
			{ cat $T/multi.log; return 1; }
		feed $rec 6$n || return 1
		kill -USR1 $rec
		wait_for $T/multi.log "snapshot $n taken" || { cat $T/multi.log; return 1; }
	done
	touch $T/spin/stop
	wait $rec || { cat $T/multi.log; return 1; }
	cat $T/multi.log
	files=$(ls -A $T/multi | tr '\n' ' ')
	echo "files: $files"
	[ "$files" = "trace-1.pftrace trace-2.pftrace trace-3.pftrace " ] || return 1
	for n in 1 2 3; do
		grep -q "decoding snapshot $n of 3 into $T/multi/trace-$n.pftrace" $T/multi.log &&
			pftrace_gap $T/multi/trace-$n.pftrace "user request" || return 1
	done
}

# (c) the top-level form with a uprobe trigger, default output name
trigger_to_perfetto() {
	fresh
	rm -rf $T/trig
	mkdir -p $T/trig
	sh -c "cd $T/trig && exec mtrace-user -t $SPEC -b 64K -- /bin/capture_spin 1 $T/spin" \
		2>$T/trig.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	feed $rec 71 || return 1
	touch $T/spin/go
	wait_for $T/trig.log "snapshot 1 taken" || { cat $T/trig.log; return 1; }
	touch $T/spin/stop
	wait $rec || { cat $T/trig.log; return 1; }
	cat $T/trig.log
	[ "$(ls -A $T/trig)" = trace.pftrace ] || return 1
	pftrace_gap $T/trig/trace.pftrace $SPEC --trigger-symbol capture_marker
}

# (d) a CPU onlined while armed has no ring: the bundle flags it, and
# decode names the CPU and the time from which its code is missing.
cpu_onlined_while_armed() {
	fresh
	echo 0 >/sys/devices/system/cpu/cpu1/online || return 1
	taskset -c 0 mtrace-user record -b 64K -o $T/hp.mtrace -- /bin/capture_spin 0 $T/spin \
		2>$T/hp.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	echo 1 >/sys/devices/system/cpu/cpu1/online || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/hp.log; return 1; }
	cat $T/hp.log
	grep -q 'CPU 1 came online while armed' $T/hp.log || return 1
	mtrace-user bundle-info $T/hp.mtrace | grep -q 'pt cpu 1: no ring' || return 1
	mtrace-user decode $T/hp.mtrace -o $T/hp.pftrace 2>$T/hpdec.log
	cat $T/hpdec.log
	grep -q 'missing CPU: CPU 1 came online while armed and had no ring: code that ran there from .* on is not in the trace' \
		$T/hpdec.log
}

mkdir -p $T
if ! insmod "$MTRACE_KO" sim=1; then
	echo "FAIL capture-decode-load: insmod sim=1 failed"
	exit 0
fi
# run NAME FUNCTION: the case, then whatever a failed case left running is ended.
run() {
	rec=
	run_case "$@"
	[ -z "$rec" ] || kill $rec 2>/dev/null
	touch $T/spin/stop
	wait
}

run capture-decode-record-roundtrip record_then_decode
run capture-decode-snapshots snapshots_to_perfetto
run capture-decode-trigger trigger_to_perfetto
run capture-decode-cpu-onlined cpu_onlined_while_armed
echo 1 >/sys/devices/system/cpu/cpu1/online 2>/dev/null
rmmod mtrace
