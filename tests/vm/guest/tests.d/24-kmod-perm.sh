#!/bin/sh
# SPDX-License-Identifier: MIT
# Capabilities and ptrace rights needed to use /dev/mtrace.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-perm-load: insmod failed"; exit 0; }
/bin/kmod_perm
rmmod mtrace || echo "FAIL kmod-perm-unload: rmmod failed"
