#!/bin/sh
# SPDX-License-Identifier: MIT
# Per-task tracing and the context-switch sideband of a two-thread program.
insmod "$MTRACE_KO" sim=1 || { echo "FAIL kmod-sb-load: insmod failed"; exit 0; }
/bin/kmod_sideband
rmmod mtrace || echo "FAIL kmod-sb-unload: rmmod failed"
