#!/bin/sh
# SPDX-License-Identifier: MIT
# The trigger set chooses the kfunc freeze path and freezes from the probe.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL trigger-kfunc-load-module: insmod failed"; exit 0; }
/bin/trigger_kfunc
# The programs' reference on the module BTF goes after an RCU grace period.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	rmmod mtrace 2>/dev/null && exit 0
	sleep 1
done
echo "FAIL trigger-kfunc-unload: module still in use 10s after the triggers closed"
rmmod mtrace
