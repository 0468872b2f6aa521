#!/bin/sh
# SPDX-License-Identifier: MIT
# The generator's kernel mode over text that kprobes have patched, after the
# tests above loaded and unloaded BPF programs and kprobes: int3
# breakpoints (optimisation off, so they stay int3) a few instructions into
# vfs_read, where the walk starts, and into other functions on the system
# call paths. libipt must decode the stream back to the walked path; the
# walk stops at a breakpoint (its handler does not resume at the byte after
# it) instead of running the middle of the instruction it replaced; the
# decoder finds the walk's calls and returns (kcore_decode_check).
T=/tmp/kcore-kwalk-kprobes
K=/sys/kernel/tracing
if ! command -v ptgen >/dev/null; then
	echo "SKIP kcore-kwalk-kprobes: ptgen is not in the guest image"
	exit 0
fi
if [ ! -w $K/kprobe_events ] || [ ! -w /proc/sys/debug/kprobes-optimization ]; then
	echo "SKIP kcore-kwalk-kprobes: no kprobe events in tracefs"
	exit 0
fi
mkdir -p $T
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kcore-kwalk-kprobes-load: insmod failed"; exit 0; }
opt=$(cat /proc/sys/debug/kprobes-optimization)
echo 0 >/proc/sys/debug/kprobes-optimization
# Past the ENDBR and the ftrace call site; only offsets at an instruction
# boundary register. One breakpoint per function.
n=0
for f in vfs_read ksys_read __do_sys_getpid schedule; do
	for off in 9 10 11 12 13 14 15 16; do
		echo "p:kwalk$n $f+$off" >>$K/kprobe_events 2>/dev/null && { n=$((n + 1)); break; }
	done
done
if [ $n -eq 0 ] || ! echo 1 >$K/events/kprobes/enable; then
	echo "FAIL kcore-kwalk-kprobes-arm: $n kprobes registered"
elif ! mtrace-user record --kernel -o $T/k.mtrace -- /bin/true >$T/record.out 2>&1; then
	echo "FAIL kcore-kwalk-kprobes-record: $(tr '\n' ' ' <$T/record.out)"
elif ptgen --kwalk $T/k.mtrace --start vfs_read --insns 200000 --seed 5 --check --stats \
	-o $T/walk.mtrace -t $T/walk.truth >$T/walk.out 2>&1 &&
	grep -q "check cpu 0: ok, 200000 instructions" $T/walk.out; then
	echo "PASS kcore-kwalk-kprobes"
	echo "kcore-kwalk-kprobes: $n breakpoints"
	grep -E "^(cpu 0|libipt)" $T/walk.out
	/bin/kcore_decode_check $T/walk.mtrace $T/walk.truth kwalk-kprobes-decode
else
	echo "FAIL kcore-kwalk-kprobes: $(grep -v '^ptgen: no instruction' $T/walk.out | tr '\n' ' ')"
fi
echo 0 >$K/events/kprobes/enable
echo >$K/kprobe_events
echo "$opt" >/proc/sys/debug/kprobes-optimization
rm -rf $T
rmmod mtrace || echo "FAIL kcore-kwalk-kprobes-unload: rmmod failed"
