#!/bin/sh
# SPDX-License-Identifier: MIT
# The generator's kernel mode over this kernel's own text: a bundle recorded
# with --kernel carries the copies; ptgen walks them from do_syscall_64
# (tracing of CPL 0 only) and libipt must decode the stream back to the
# walked path; then mtrace's decoder, given the generated bundle, must find
# exactly the generator's calls and returns and name every called kernel
# function as kallsyms does (kcore_decode_check).
# It runs before the other guest tests on purpose: after them (BPF programs,
# kprobes and the module have patched kernel text) the seeded walk reaches
# code where the generator's stream and libipt's decode disagree, an open
# generator defect recorded in docs/kernel-tracing.md.
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
rmmod mtrace || echo "FAIL kcore-kwalk-unload: rmmod failed"
