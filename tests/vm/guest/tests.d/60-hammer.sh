#!/bin/sh
# SPDX-License-Identifier: MIT
# Randomised ioctl/mmap/open hammering from several processes and threads,
# then the module must still snapshot correctly and unload cleanly.
seed=${MTRACE_HAMMER_SEED:-$(date +%s)}
insmod "$MTRACE_KO" sim=1 || { echo "FAIL hammer-load: insmod sim=1"; exit 0; }
/bin/ioctl_hammer "$seed" "${MTRACE_HAMMER_SECONDS:-15}"
echo "hammer seed was $seed"
if rmmod mtrace; then echo "PASS hammer-unload"; else echo "FAIL hammer-unload: rmmod failed (seed $seed)"; fi
