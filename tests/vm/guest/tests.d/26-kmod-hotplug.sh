#!/bin/sh
# SPDX-License-Identifier: MIT
# CPU hotplug while armed: PT stops on the CPU going down, the snapshot
# completes without it, and the CPU is traced again once back.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-hp-load: insmod failed"; exit 0; }
/bin/kmod_ioctl hotplug
echo 1 >/sys/devices/system/cpu/cpu1/online 2>/dev/null
rmmod mtrace || echo "FAIL kmod-hp-unload: rmmod failed"
