#!/bin/sh
# SPDX-License-Identifier: MIT
# The owner is killed while armed with the rings mapped: nothing is left
# behind, the device can be owned again, the module unloads.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-death-load: insmod failed"; exit 0; }
hold() {
	/bin/kmod_hold >/tmp/hold.out 2>&1 &
	pid=$!
	for i in 1 2 3 4 5 6 7 8 9 10; do
		grep -q ready /tmp/hold.out && return 0
		sleep 1
	done
	echo "FAIL kmod-death-$1: owner never armed: $(cat /tmp/hold.out)"
	kill -9 $pid
	return 1
}
if hold first; then
	if rmmod mtrace 2>/dev/null; then echo "FAIL kmod-death-unload-refused: unloaded while owned"
	else echo "PASS kmod-death-unload-refused"; fi
	kill -9 $pid
	wait $pid
	echo "PASS kmod-death-killed"
fi
if hold second; then
	echo "PASS kmod-death-reopen"
	kill -9 $pid
	wait $pid
fi
if rmmod mtrace; then echo "PASS kmod-death-unload"; else echo "FAIL kmod-death-unload: rmmod failed"; fi
