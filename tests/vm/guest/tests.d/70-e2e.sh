#!/bin/sh
# SPDX-License-Identifier: MIT
# End to end, as a user runs it: mtrace-user launches /bin/e2e_app with a
# uprobe trigger on slow_path and writes a Perfetto trace. This machine has
# no Intel PT, so the module's simulated backend is fed the PT generator's
# stream for this same binary at its real load address and this CPU's TSC:
# a 300k-instruction walk of worker-a on CPU 0 (more than the 8 KiB ring
# holds, so the ring drops the oldest data) and a walk of worker-b on CPU 1
# that ends where it enters slow_path, after which worker-b really calls
# slow_path. Everything else is real: the module's rings and sideband hook,
# the BPF trigger and its kfunc freeze, the mmap readout, the decoder and
# the writer. e2e_check compares the trace with the generator's truth.
# The trace, its bundle, the truths and a summary go to /tmp/rig-export/e2e, which the
# rig copies to the host (make demo shows them).
T=/tmp/e2e
RING=8192
APP=/bin/e2e_app
EXPORT=/tmp/rig-export/e2e
. /tests.d/lib/capture.sh

step() {
	echo "FAIL e2e-$1: $2"
	[ -f $T/rec.log ] && sed 's/^/#   /' $T/rec.log
	kill $rec 2>/dev/null
	touch $T/ctl/a.done $T/ctl/b.start $T/ctl/b.go
	wait
	rmmod mtrace
	exit 0
}

# gen NAME SEED ARGS...: the generator's walk of $APP as mapped in the
# target, starting at serve_requests, timed from now.
gen() {
	name=$1 seed=$2
	shift 2
	ptgen --walk $APP --bias "$bias" --start serve_requests \
		--slice 100000000 --ring-size $RING --tsc0 now --seed "$seed" \
		-t $T/$name.truth --raw $T/$name.pt "$@" >$T/$name.gen 2>&1 ||
		step "generate-$name" "$(cat $T/$name.gen)"
}

rm -rf $T
mkdir -p $T/ctl
# Real PT would show every switch the sideband records; the generator's
# stream shows none, so nothing else may run on a worker's CPU while its
# stream's time passes: this shell and its children keep to the other CPU.
taskset -p -c 1 $$ >/dev/null
t0=$(cut -d' ' -f1 /proc/uptime)
insmod "$MTRACE_KO" sim=1 || { echo "FAIL e2e-load: insmod sim=1 failed"; exit 0; }
mtrace-user -b 8K -o $T/trace.pftrace --keep-bundle $T/trace.mtrace --portable \
	--trigger uprobe:$APP:slow_path -- $APP $T/ctl \
	>$T/rec.log 2>&1 &
rec=$!

wait_for $T/ctl/a.ready "[0-9]" || step start "worker-a never became ready"
tid_a=$(cat $T/ctl/a.ready)
pid=$(pidof e2e_app)
bias=0x$(awk -v app=$APP '$6 == app && $3 == "00000000" { split($1, r, "-"); print r[1]; exit }' \
	/proc/$pid/maps)
[ "$bias" != 0x ] || step maps "no mapping of $APP in process $pid"

# worker-a spins on CPU 0: its stream goes to CPU 0's ring, made on CPU 1.
gen a 3 --insns 300000
capture_inject $rec 0 --file $T/a.pt >$T/inject-a.log 2>&1 ||
	step inject-a "$(cat $T/inject-a.log)"
taskset -p -c 0 $$ >/dev/null
touch $T/ctl/a.done $T/ctl/b.start
wait_for $T/ctl/b.ready "[0-9]" || step start "worker-b never became ready"
tid_b=$(cat $T/ctl/b.ready)
gen b 4 --insns 1000000 --trigger slow_path:12
capture_inject $rec 1 --file $T/b.pt >$T/inject-b.log 2>&1 ||
	step inject-b "$(cat $T/inject-b.log)"
touch $T/ctl/b.go
wait $rec || step capture "mtrace-user failed"
t1=$(cut -d' ' -f1 /proc/uptime)
sed 's/^/#   /' $T/rec.log
size_a=$(stat -c %s $T/a.pt)
echo "# generated: worker-a $size_a bytes, worker-b $(stat -c %s $T/b.pt) bytes; ring $RING"
grep -q "frozen by kfunc" $T/rec.log && echo "PASS e2e-kfunc-freeze" ||
	echo "FAIL e2e-kfunc-freeze: the capture did not freeze through the kfunc"
# The ring must have dropped worker-a's oldest bytes: the truth starts later.
if [ "$size_a" -gt $RING ] && ! grep -q "^visible 0 1 0$" $T/a.truth; then
	echo "PASS e2e-ring-wrapped: $size_a bytes into a $RING-byte ring"
else
	echo "FAIL e2e-ring-wrapped: worker-a's stream did not overrun the ring"
fi
e2e_check $T/trace.pftrace --binary "$APP=$bias" --thread "$tid_a:worker-a=$T/a.truth" \
	--thread "$tid_b:worker-b=$T/b.truth" --trigger "$tid_b=slow_path" --summary >$T/check.out 2>&1
cat $T/check.out
echo "# e2e: $(echo "$t1 - $t0" | bc) s from insmod to the trace"
mkdir -p $EXPORT
cp $T/trace.pftrace $T/trace.mtrace $T/a.truth $T/b.truth $EXPORT/ 2>/dev/null
sed -n '/^Trigger /,$p' $T/check.out >$EXPORT/summary.txt
rmmod mtrace || echo "FAIL e2e-unload: rmmod failed"
