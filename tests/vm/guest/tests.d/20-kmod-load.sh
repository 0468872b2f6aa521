#!/bin/sh
# SPDX-License-Identifier: MIT
# Loading mtrace.ko: refused without Intel PT, bad parameters rejected,
# the simulated backend loads with its device, module BTF and modinfo.
check() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "PASS $name"; else echo "FAIL $name: '$*' failed"; fi
}
# Lines the module (not the kernel's taint notices) logged since line $1.
module_lines() {
	dmesg | grep 'mtrace: ' | tail -n +$(($1 + 1)) |
		grep -v -e 'taints kernel' -e 'module verification failed'
}

before=$(dmesg | grep -c 'mtrace: ')
if insmod "$MTRACE_KO" 2>/dev/null; then
	echo "FAIL kmod-refuses-without-pt: loaded on a CPU without Intel PT"
	rmmod mtrace
else
	# busybox insmod tries finit_module, then init_module: one line each.
	other=$(module_lines "$before" | grep -vc 'mtrace: Intel PT not usable: the kernel reports no intel_pt feature (absent, or clearcpuid=intel_pt) (load with sim=1 for the simulated backend)$')
	refusals=$(module_lines "$before" | grep -c 'Intel PT not usable')
	if [ "$refusals" -ge 1 ] && [ "$other" -eq 0 ]; then echo "PASS kmod-refuses-without-pt"
	else echo "FAIL kmod-refuses-without-pt: $(module_lines "$before" | head -3)"; fi
fi
check kmod-rejects-bad-sim sh -c "! insmod $MTRACE_KO sim=3"
check kmod-rejects-sim-vmx-without-sim sh -c "! insmod $MTRACE_KO sim_vmx=1"
# busybox modinfo needs modules.dep; read the same .modinfo strings directly.
check kmod-modinfo-version sh -c "strings $MTRACE_KO | grep -q '^version=[0-9][0-9.]*$'"
check kmod-modinfo-abi sh -c "strings $MTRACE_KO | grep -qx 'mtrace_abi=2'"
for round in 1 2 3; do
	check kmod-load-sim-$round insmod "$MTRACE_KO" sim=1
	check kmod-device-$round sh -c "ls -l /dev/mtrace | grep -q '^crw-rw-rw-'"
	check kmod-btf-$round test -s /sys/kernel/btf/mtrace
	check kmod-param-$round grep -qx 1 /sys/module/mtrace/parameters/sim
	check kmod-unload-$round rmmod mtrace
	check kmod-device-gone-$round test ! -e /dev/mtrace
done
check kmod-load-banner sh -c "dmesg | grep -q 'mtrace: version .*, ABI 2, simulated backend'"
