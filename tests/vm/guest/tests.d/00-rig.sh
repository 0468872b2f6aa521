#!/bin/sh
# SPDX-License-Identifier: MIT
# The guest itself: the facts every other guest test relies on.
check() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "PASS $name"; else echo "FAIL $name: '$*' failed"; fi
}
check rig-two-cpus test "$(grep -c ^processor /proc/cpuinfo)" -eq 2
check rig-kernel-btf test -s /sys/kernel/btf/vmlinux
check rig-bpffs grep -q ' /sys/fs/bpf bpf ' /proc/mounts
check rig-no-intel-pt sh -c '! grep -qw intel_pt /proc/cpuinfo'
check rig-module-present test -s "$MTRACE_KO"
check rig-mtrace-user /bin/mtrace-user --version
