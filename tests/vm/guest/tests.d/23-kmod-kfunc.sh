#!/bin/sh
# SPDX-License-Identifier: MIT
# Freeze from a real uprobe BPF program through the mtrace_freeze kfunc.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-kfunc-load-module: insmod failed"; exit 0; }
/bin/kmod_kfunc
# The program's reference on the module BTF is dropped after an RCU grace
# period, so unloading may need a moment.
for i in 1 2 3 4 5 6 7 8 9 10; do
	rmmod mtrace 2>/dev/null && { echo "PASS kmod-kfunc-unload"; exit 0; }
	sleep 1
done
echo "FAIL kmod-kfunc-unload: module still in use 10s after the BPF program ended"
rmmod mtrace
