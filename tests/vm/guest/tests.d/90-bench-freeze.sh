#!/bin/sh
# SPDX-License-Identifier: MIT
# Freeze latency, kfunc path against the fallback path (informational
# RESULT lines; one PASS when the measurement ran).
insmod "$MTRACE_KO" sim=1 || { echo "FAIL bench-freeze-ran: insmod failed"; exit 0; }
/bin/bench_freeze
# The programs' reference on the module BTF goes after an RCU grace period.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	rmmod mtrace 2>/dev/null && exit 0
	sleep 1
done
echo "FAIL bench-freeze-unload: module still in use 10s after the triggers closed"
rmmod mtrace
