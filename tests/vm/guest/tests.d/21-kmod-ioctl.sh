#!/bin/sh
# SPDX-License-Identifier: MIT
# The /dev/mtrace ABI with both ToPA layouts of the simulated backend.
for layout in "1 abi" "2 single"; do
	set -- $layout
	if ! insmod "$MTRACE_KO" sim="$1"; then
		echo "FAIL kmod-ioctl-load-sim$1: insmod failed"
		continue
	fi
	/bin/kmod_ioctl "$2"
	if rmmod mtrace; then echo "PASS kmod-ioctl-unload-sim$1"
	else echo "FAIL kmod-ioctl-unload-sim$1: rmmod failed"; fi
done
