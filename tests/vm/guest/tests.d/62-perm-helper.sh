#!/bin/sh
# SPDX-License-Identifier: MIT
# A descriptor of /dev/mtrace opened by a privileged helper and handed to an
# unprivileged user grants no more than tracing that user's own processes.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL perm-helper-load: insmod failed"; exit 0; }
/bin/kmod_perm_helper
rmmod mtrace || echo "FAIL perm-helper-unload: rmmod failed"
