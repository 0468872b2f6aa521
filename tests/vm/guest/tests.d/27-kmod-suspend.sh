#!/bin/sh
# SPDX-License-Identifier: MIT
# Suspend while armed (up to the task freezer, pm_test): PT stops and the
# snapshot is kept, frozen with path POWER.
[ -w /sys/power/pm_test ] || { echo "SKIP kmod-pm: kernel without PM_DEBUG"; exit 0; }
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-pm-load: insmod failed"; exit 0; }
/bin/kmod_ioctl power
rmmod mtrace || echo "FAIL kmod-pm-unload: rmmod failed"
