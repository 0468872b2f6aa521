#!/bin/sh
# SPDX-License-Identifier: MIT
# Fault paths: allocation failure while configuring (the module's fail_alloc
# parameter: the guest kernel has no fault injection), a target that forks,
# starts a thread, execs and exits while armed, and the capture tool killed
# with the target held before exec, right after arming, and while it writes
# the bundle. Each time: the target is not left stopped or traced, no bundle
# is left under the output name, the module arms again, the kernel log
# stays clean.
T=/tmp/faults
ring=65536
PARAM=/sys/module/mtrace/parameters/fail_alloc
BAD='WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN'

. /tests.d/lib/capture.sh

# state PID: the State letter, or "gone"
state() {
	s=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$1/status 2>/dev/null)
	echo "${s:-gone}"
}

# free PID: neither stopped nor traced (a zombie or a reaped process is fine)
free() {
	s=$(state $1)
	case $s in t | T)
		echo "process $1 left in state $s"
		return 1 ;;
	esac
	[ "$s" = gone ] || [ "$s" = Z ] || grep -q "^TracerPid:[[:space:]]*0$" /proc/$1/status || {
		echo "process $1 still traced: $(grep TracerPid /proc/$1/status)"
		return 1
	}
}

# gone PID: exited (reaped or zombie) within 10 s
gone() {
	i=0
	while :; do
		case $(state $1) in gone | Z) return 0 ;; esac
		i=$((i + 1))
		[ $i -le 100 ] || { echo "process $1 still $(state $1)"; return 1; }
		sleep 0.1
	done
}

# held_threads PID: the threads of PID in a ptrace stop
held_threads() {
	for t in /proc/$1/task/*; do
		grep -q "^State:[[:space:]]*t" $t/status 2>/dev/null && echo "${t##*/}"
	done
}

# no process at all in a stopped or traced-stop state
none_stopped() {
	for s in /proc/[0-9]*/status; do
		if grep -q "^State:[[:space:]]*[tT]" "$s" 2>/dev/null; then
			echo "stopped: $s: $(grep -E '^(Name|State)' "$s" | tr '\n' ' ')"
			return 1
		fi
	done
}

# no bundle under NAME, and NAME.partial, if there, rejected by the reader
no_bundle() {
	[ ! -e "$1" ] || { echo "$1 exists"; return 1; }
	if [ -e "$1.partial" ] && mtrace-user bundle-info "$1.partial" >/dev/null 2>&1; then
		echo "$1.partial reads as a complete bundle"
		return 1
	fi
	return 0
}

# reusable TAG: a new capture arms, snapshots and writes a correct bundle
reusable() {
	fresh
	mtrace-user record -b 64K -o $T/again-$1.mtrace -- /bin/capture_spin 1 $T/spin \
		2>$T/again.log &
	rec=$!
	wait_file $T/spin/ready || { cat $T/again.log; kill -KILL $rec; return 1; }
	capture_inject $rec 1 5000 9 || return 1
	kill -INT $rec
	wait_for $T/again.log "snapshot written" || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/again.log; return 1; }
	capture_check $T/again-$1.mtrace --cpu 1 --total 5000 --seed 9 --ring $ring --path manual \
		--pid "$(target_of $T/again.log)" --exe /bin/capture_spin --thread spin-worker
}

# run_case NAME COMMAND...: PASS if it succeeds and the kernel log gained
# no warning, else FAIL with its output.
run_case() {
	name=$1
	shift
	bad0=$(dmesg | grep -cE "$BAD")
	rec=
	"$@" >$T/case.out 2>&1
	rc=$?
	# A case that failed half-way must not leave its capture owning the device.
	if [ -n "$rec" ] && kill -0 $rec 2>/dev/null; then
		kill -KILL $rec
		wait $rec
		touch $T/spin/stop
	fi
	bad1=$(dmesg | grep -cE "$BAD")
	if [ $rc -eq 0 ] && [ "$bad0" = "$bad1" ]; then
		echo "PASS $name"
	else
		[ "$bad0" = "$bad1" ] || echo "kernel log: $(dmesg | grep -E "$BAD" | tail -3)" >>$T/case.out
		echo "FAIL $name: $(tr '\n' ' ' <$T/case.out | cut -c1-600)"
	fi
	cat $T/case.out
}

# fail_alloc=N makes the N-th allocation of SET_CONFIG fail: the capture
# reports it, the command never runs, no bundle; then capturing works.
alloc_fail_capture() {
	# 1: the first CPU's ring; 4: one of its arrays; 8 is at most the
	# sideband of the first CPU, whatever the ring layout.
	for n in 1 4 8; do
		rm -f $T/ran
		echo $n >$PARAM
		out=$(mtrace-user record -b 64K -o $T/nomem.mtrace -- /bin/touch $T/ran 2>&1)
		rc=$?
		echo 0 >$PARAM
		echo "fail_alloc=$n: exit $rc: $out"
		[ $rc -eq 1 ] || return 1
		echo "$out" | grep -q "could not allocate 65536 bytes of ring per CPU" || return 1
		[ ! -e $T/ran ] || { echo "the command ran"; return 1; }
		no_bundle $T/nomem.mtrace || return 1
	done
	none_stopped && reusable nomem
}

# A launched shell forks a child program, which exits, then execs the real
# target: the bundle is the exec'd program's (maps, threads, injected trace).
exec_fork_capture() {
	fresh
	mtrace-user record -b 64K -o $T/ef.mtrace -- /bin/sh -c \
		"/bin/capture_spin 2>/dev/null; exec /bin/capture_spin 1 $T/spin" 2>$T/ef.log &
	rec=$!
	wait_file $T/spin/ready || { cat $T/ef.log; return 1; }
	capture_inject $rec 1 20000 13 || return 1
	touch $T/spin/stop
	wait $rec || { cat $T/ef.log; return 1; }
	cat $T/ef.log
	grep -q "exited with status 0" $T/ef.log || return 1
	capture_check $T/ef.mtrace --cpu 1 --total 20000 --seed 13 --ring $ring --path exit \
		--pid "$(target_of $T/ef.log)" --exe /bin/capture_spin --thread spin-worker || return 1
	none_stopped && reusable ef
}

# (a) SIGKILL while the launched target waits, forked but not yet exec'd,
# for set-up to finish. Large rings make configuring and arming (zeroing)
# last; the capture is stopped as soon as its child appears, and the stage
# is confirmed (the child still runs mtrace-user's image) before the kill.
# The child must exit without ever running the command.
killed_held_once() {
	fresh
	rm -f $T/held.mtrace $T/held.mtrace.partial
	mtrace-user record -b 32M -o $T/held.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/held.log &
	rec=$!
	child=
	i=0
	while [ -z "$child" ] && [ $i -lt 3000 ]; do
		child=$(cat /proc/$rec/task/$rec/children 2>/dev/null)
		child=${child%% *}
		i=$((i + 1))
	done
	kill -STOP $rec
	sleep 0.5
	exe=$(readlink /proc/$child/exe 2>/dev/null)
	if [ -z "$child" ] || [ "$exe" != /bin/mtrace-user ]; then
		kill -KILL $rec
		wait $rec
		kill -KILL $child 2>/dev/null
		echo "missed the stage (child '$child' runs '$exe')"
		return 2
	fi
	echo "capture $rec stopped with child $child held before exec"
	kill -KILL $rec
	wait $rec
	gone $child || return 1
	[ ! -e $T/spin/ready ] || { echo "the command ran"; return 1; }
	no_bundle $T/held.mtrace || return 1
	none_stopped && reusable held
}

killed_held() {
	for attempt in 1 2 3; do
		killed_held_once
		rc=$?
		[ $rc -eq 2 ] || return $rc
	done
	return 1
}

# (b) SIGKILL right after arming: the launched target runs on, untraced,
# and exits by itself.
killed_armed() {
	fresh
	rm -f $T/armed.mtrace $T/armed.mtrace.partial
	mtrace-user record -b 64K -o $T/armed.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/armed.log &
	rec=$!
	wait_for $T/armed.log "tracing process" || { cat $T/armed.log; return 1; }
	pid=$(target_of $T/armed.log)
	wait_file $T/spin/ready || return 1
	kill -KILL $rec
	wait $rec
	sleep 0.2
	echo "target $pid: state $(state $pid)"
	case $(state $pid) in R | S) ;; *) echo "target not running"; return 1 ;; esac
	free $pid || return 1
	touch $T/spin/stop
	gone $pid || return 1
	no_bundle $T/armed.mtrace || return 1
	none_stopped && reusable armed
}

# (c) SIGKILL while the bundle is written: an exit snapshot of a wrapped
# 32 MiB ring (the target is held in its exit stop meanwhile). The capture
# is stopped once the bundle file appears and the stage confirmed before
# the kill: nothing under the output name, the target finishes exiting.
killed_writing() {
	fresh
	rm -f $T/coll.mtrace $T/coll.mtrace.partial
	mtrace-user record -b 32M -o $T/coll.mtrace -- /bin/capture_spin 1 $T/spin 2>$T/coll.log &
	rec=$!
	wait_file $T/spin/ready || { cat $T/coll.log; return 1; }
	pid=$(target_of $T/coll.log)
	capture_inject $rec 1 $((33 << 20)) 5 || return 1
	touch $T/spin/stop
	i=0
	while [ ! -e $T/coll.mtrace.partial ] && [ ! -e $T/coll.mtrace ] && [ $i -lt 200000 ]; do
		i=$((i + 1))
	done
	kill -STOP $rec
	held=$(held_threads $pid)
	if [ ! -e $T/coll.mtrace.partial ] || [ -e $T/coll.mtrace ]; then
		if [ -e $T/coll.mtrace ] && ! grep -q "snapshot written" $T/coll.log; then
			echo "the bundle is being written under the output name itself"
		else
			echo "missed the stage: no partial bundle being written"
		fi
		kill -KILL $rec
		wait $rec
		cat $T/coll.log
		return 1
	fi
	echo "capture $rec stopped while writing $(wc -c <$T/coll.mtrace.partial) bytes; target $pid, threads in exit stop: $held"
	kill -KILL $rec
	wait $rec
	[ -n "$held" ] || { echo "target not held at exit during collection"; return 1; }
	gone $pid || return 1
	no_bundle $T/coll.mtrace || return 1
	[ -e $T/coll.mtrace.partial ] || { echo "no partial file"; return 1; }
	rm -f $T/coll.mtrace.partial
	none_stopped && reusable coll
}

mkdir -p $T
if ! insmod "$MTRACE_KO" sim=1; then
	echo "FAIL faults-load: insmod sim=1 failed"
	exit 0
fi
/bin/kmod_fault 3
run_case faults-alloc-capture alloc_fail_capture
/bin/kmod_follow
run_case faults-exec-fork-capture exec_fork_capture
run_case faults-killed-held-before-exec killed_held
run_case faults-killed-after-arm killed_armed
run_case faults-killed-writing-bundle killed_writing
if rmmod mtrace; then echo "PASS faults-unload"; else echo "FAIL faults-unload: rmmod failed"; fi
