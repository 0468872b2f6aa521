#!/bin/sh
# SPDX-License-Identifier: MIT
# The generator's kernel mode over this kernel's own text: a bundle recorded
# with --kernel carries the copies; ptgen walks them from do_syscall_64
# (tracing of CPL 0 only) and libipt must decode the stream back to the
# walked path; then mtrace's decoder, given the generated bundle, must find
# exactly the generator's calls and returns and name every called kernel
# function as kallsyms does (kcore_decode_check). The same again with user
# and kernel code traced together.
# It may run anywhere; 63-kcore-kwalk-kprobes walks text patched by kprobes.
T=/tmp/kcore-kwalk
if ! command -v ptgen >/dev/null; then
	echo "SKIP kcore-kwalk-roundtrip: ptgen is not in the guest image"
	exit 0
fi
mkdir -p $T
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kcore-kwalk-load: insmod failed"; exit 0; }
if ! mtrace-user record --kernel -o $T/k.mtrace -- /bin/true >$T/record.out 2>&1; then
	echo "FAIL kcore-kwalk-record: $(tr '\n' ' ' <$T/record.out)"
elif ptgen --kwalk $T/k.mtrace --start do_syscall_64 --insns 200000 --seed 5 --check --stats \
	-o $T/walk.mtrace -t $T/walk.truth >$T/walk.out 2>&1 &&
	grep -q "check cpu 0: ok, 200000 instructions" $T/walk.out; then
	echo "PASS kcore-kwalk-roundtrip"
	grep -E "^(cpu 0|threads|generator|libipt)" $T/walk.out
	/bin/kcore_decode_check $T/walk.mtrace $T/walk.truth
else
	echo "FAIL kcore-kwalk-roundtrip: $(tr '\n' ' ' <$T/walk.out)"
fi
# User and kernel traced together: a walk over libc (system calls every few
# instructions) with kernel excursions from entry_SYSCALL_64 and the timer
# interrupt over the same copies; libipt must decode it back, and the
# decoder must nest every excursion above the user frame it left.
LIBC=/lib/x86_64-linux-gnu/libc.so.6
if [ ! -f $T/k.mtrace ]; then
	echo "SKIP ukwalk-roundtrip: no kernel bundle"
elif ptgen --walk $LIBC --with-kernel $T/k.mtrace --insns 20000 --irq-every 500 --seed 7 \
	--check --stats -o $T/uk.mtrace -t $T/uk.truth >$T/uk.out 2>$T/uk.err &&
	grep -q "check cpu 0: ok" $T/uk.out; then
	echo "PASS ukwalk-roundtrip"
	grep -E "^(kernel|cpu 0|threads|check)" $T/uk.out
	/bin/kcore_decode_check $T/uk.mtrace $T/uk.truth ukwalk-decode
else
	echo "FAIL ukwalk-roundtrip: $(cat $T/uk.out $T/uk.err | grep -v 'no instruction at' | tr '\n' ' ')"
fi
rmmod mtrace || echo "FAIL kcore-kwalk-unload: rmmod failed"
