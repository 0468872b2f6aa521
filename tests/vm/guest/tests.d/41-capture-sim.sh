#!/bin/sh
# SPDX-License-Identifier: MIT
# The capture workflow on the simulated backend: a launched, attached or
# triggered target, bytes injected into CPU 1's ring while the target runs
# there (capture_inject), and each bundle checked by capture_check.
ring=65536
T=/tmp/capture

. /tests.d/lib/capture.sh

# launched target, exit snapshot with wrapped ring
exit_snapshot() {
	fresh
	mtrace-user record -b 64K -o $T/exit.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/exit.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	capture_inject $rec 1 100003 7 || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/exit.log; return 1; }
	cat $T/exit.log
	grep -q "exited with status 0" $T/exit.log || return 1
	capture_check $T/exit.mtrace --cpu 1 --total 100003 --seed 7 --ring $ring --path exit \
		--pid "$(target_of $T/exit.log)" --exe /bin/capture_spin --thread spin-worker
}

# Ctrl-C: snapshot at once, the target runs on and exits by itself
sigint_snapshot() {
	fresh
	# The top-level form, keeping its bundle next to the trace.
	mtrace-user -b 64K -o $T/int.pftrace --keep-bundle $T/int.mtrace -- /bin/capture_spin 1 $T/spin \
		2>$T/int.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	capture_inject $rec 1 5000 11 || return 1
	kill -INT $rec
	wait_for $T/int.log "snapshot written to $T/int.mtrace" || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/int.log; return 1; }
	cat $T/int.log
	grep -q "exited with status 0" $T/int.log || return 1
	# the stream alone has no sync point: a trace with the trigger, no error
	grep -q " 0 decode errors" $T/int.log || return 1
	capture_check $T/int.mtrace --cpu 1 --total 5000 --seed 11 --ring $ring --path manual \
		--pid "$(target_of $T/int.log)" --exe /bin/capture_spin --thread spin-worker &&
		pftrace_check $T/int.pftrace --trigger "user request"
}

# -p PID with --snapshots 2 (SIGUSR1 each); the target is left running, untraced
attach_rearm() {
	fresh
	/bin/capture_spin 1 $T/spin &
	spin=$!
	mtrace-user record -p $spin -n 2 -b 64K -o $T/att.mtrace 2>$T/att.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	capture_inject $rec 1 3000 21 || return 1
	kill -USR1 $rec
	wait_for $T/att.log "re-armed for snapshot 2 of 2" || return 1
	capture_inject $rec 1 70001 22 || return 1
	kill -USR1 $rec
	wait $rec || { cat $T/att.log; return 1; }
	cat $T/att.log
	capture_check $T/att-1.mtrace --cpu 1 --total 3000 --seed 21 --ring $ring --path manual \
		--pid $spin --exe /bin/capture_spin --thread spin-worker || return 1
	capture_check $T/att-2.mtrace --cpu 1 --total 70001 --seed 22 --ring $ring --path manual \
		--pid $spin --exe /bin/capture_spin --thread spin-worker || return 1
	grep -q "^TracerPid:[[:space:]]*0$" /proc/$spin/status || return 1
	grep -q "^State:[[:space:]]*R" /proc/$spin/status || return 1
	touch $T/spin/stop
	wait $spin
}

# a uprobe trigger; $1 = --freeze path, $2 = expected bundle path
trigger_snapshot() {
	fresh
	spec=uprobe:/bin/capture_spin:capture_marker
	mtrace-user record --freeze "$1" -t $spec -b 64K -o $T/trig-$1.mtrace -- \
		/bin/capture_spin 1 $T/spin 2>$T/trig-$1.log &
	rec=$!
	wait_file $T/spin/ready || return 1
	capture_inject $rec 1 9000 31 || return 1
	touch $T/spin/go
	wait_for $T/trig-$1.log "snapshot written" || { cat $T/trig-$1.log; return 1; }
	touch $T/spin/stop
	wait $rec || { cat $T/trig-$1.log; return 1; }
	cat $T/trig-$1.log
	grep -q "exited with status 0" $T/trig-$1.log || return 1
	capture_check $T/trig-$1.mtrace --cpu 1 --total 9000 --seed 31 --ring $ring --path "$2" \
		--spec $spec --pid "$(target_of $T/trig-$1.log)" --exe /bin/capture_spin \
		--thread spin-worker --trigger-symbol capture_marker
}

# --kernel and --portable: kernel code, kallsyms and the executable in the bundle
kernel_embed() {
	fresh
	/bin/capture_spin 1 $T/spin &
	spin=$!
	mtrace-user record --kernel --portable -p $spin -o $T/kern.mtrace 2>$T/kern.log &
	rec=$!
	wait_for $T/kern.log "tracing process" || return 1
	kill -INT $rec
	wait $rec || { cat $T/kern.log; return 1; }
	cat $T/kern.log
	touch $T/spin/stop
	wait $spin || return 1
	capture_check $T/kern.mtrace --path manual --pid $spin --exe /bin/capture_spin \
		--thread spin-worker --embedded --kernel
}

# SIGKILL of the capture: the target runs on untraced, the module is reusable
killed_capture() {
	fresh
	/bin/capture_spin 1 $T/spin &
	spin=$!
	mtrace-user record -p $spin -o $T/killed.mtrace 2>$T/killed.log &
	rec=$!
	wait_for $T/killed.log "tracing process" || return 1
	kill -KILL $rec
	wait $rec
	[ ! -e $T/killed.mtrace ] || return 1
	grep -q "^TracerPid:[[:space:]]*0$" /proc/$spin/status || return 1
	mtrace-user record -p $spin -o $T/again.mtrace 2>$T/again.log &
	rec=$!
	wait_for $T/again.log "tracing process" || return 1
	kill -INT $rec
	wait $rec || return 1
	touch $T/spin/stop
	wait $spin || return 1
	capture_check $T/again.mtrace --path manual --pid $spin --exe /bin/capture_spin \
		--thread spin-worker
}

# errors with the module loaded
expect_error() {
	want=$1
	shift
	out=$("$@" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] && echo "$out" | grep -q "$want"
}

# A second record to the same name keeps the first bundle as NAME.old.
keep_older_bundle() {
	fresh
	mtrace-user record -b 64K -o $T/same.mtrace -- /bin/true 2>$T/same1.log ||
		{ cat $T/same1.log; return 1; }
	cp $T/same.mtrace $T/first.mtrace
	mtrace-user record -b 64K -o $T/same.mtrace -- /bin/true 2>$T/same2.log ||
		{ cat $T/same2.log; return 1; }
	cat $T/same2.log
	grep -q "the older bundle of that name is kept as $T/same.mtrace.old" $T/same2.log &&
		cmp $T/first.mtrace $T/same.mtrace.old && ! cmp -s $T/same.mtrace $T/same.mtrace.old
}

busy_device() {
	fresh
	mtrace-user record -o $T/busy.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/busy.log &
	rec=$!
	wait_for $T/busy.log "tracing process" || return 1
	expect_error "/dev/mtrace is busy: another capture owns it" mtrace-user record -- /bin/true
	rc=$?
	kill -INT $rec
	touch $T/spin/stop
	wait $rec
	return $rc
}

mkdir -p $T
if ! insmod "$MTRACE_KO" sim=1; then
	echo "FAIL capture-sim-load: insmod sim=1 failed"
	exit 0
fi
run_case capture-exit-snapshot exit_snapshot
run_case capture-sigint-snapshot sigint_snapshot
run_case capture-attach-rearm attach_rearm
run_case capture-trigger-kfunc trigger_snapshot auto kfunc
run_case capture-trigger-notify trigger_snapshot notify fallback
run_case capture-trigger-sigstop trigger_snapshot sigstop fallback
run_case capture-kernel-embed kernel_embed
run_case capture-killed-capture killed_capture
run_case capture-busy-device busy_device
run_case capture-keeps-older-bundle keep_older_bundle
run_case capture-no-such-pid expect_error "process 999999 does not exist" \
	mtrace-user record -p 999999
run_case capture-unsupported-mtc expect_error \
	"mtc-freq 5 is not supported by this CPU (supported: 0,3,6,9)" \
	mtrace-user record --mtc-freq 5 -- /bin/true
run_case capture-no-such-command expect_error \
	"cannot run '/bin/nonexistent': No such file or directory" \
	mtrace-user record -- /bin/nonexistent
run_case capture-doctor-sim sh -c 'mtrace-user doctor && mtrace-user doctor | grep -q "SIMULATED PT backend"'
rmmod mtrace
