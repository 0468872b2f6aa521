#!/bin/sh
# SPDX-License-Identifier: MIT
# Kernel, module and BPF JIT text copied from /proc/kcore into a bundle and
# checked against fresh reads (kcore_check).
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kcore-capture-load: insmod failed"; exit 0; }
mkdir -p /tmp/kcore
/bin/kcore_check /tmp/kcore/capture.mtrace
rmmod mtrace || echo "FAIL kcore-capture-unload: rmmod failed"
