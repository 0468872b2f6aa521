#!/bin/sh
# SPDX-License-Identifier: MIT
# The module against the strict PT model: registers given back, VMX,
# private mappings, the ring memory bound, set-user-ID exec of a target.
# Progress on the console, in case a step hangs.
mark() { echo "kmod-strict: $*" >/dev/kmsg; }
load() {
	mark "insmod $*"
	insmod "$MTRACE_KO" "$@" || { echo "FAIL kmod-strict-load: insmod $*"; return 1; }
}
unload() { rmmod mtrace || echo "FAIL kmod-strict-unload: rmmod failed"; }

load sim=1 && { /bin/kmod_strict regs; /bin/kmod_strict mmap; unload; }
load sim=2 && { /bin/kmod_strict regs; unload; }
load sim=1 sim_vmx=1 && {
	dmesg -c >/dev/null
	/bin/kmod_strict vmx-refused
	if dmesg | grep -q 'cannot arm: .*KVM'; then echo "PASS kmod-vmx-message-names-kvm"
	else echo "FAIL kmod-vmx-message-names-kvm: $(dmesg | tail -2)"; fi
	unload
}
load sim=1 sim_vmx=2 && { /bin/kmod_strict vmx-ok; unload; }
load sim=1 && {
	echo 64 >/sys/module/mtrace/parameters/ring_limit_kb
	/bin/kmod_strict limit
	unload
}
# The PT sequences cannot be kprobed (a probe there could freeze between
# an RDMSR and its WRMSR); other module code can.
load sim=1 && {
	ev=/sys/kernel/tracing/kprobe_events
	for f in mtrace_cpu_resume_task mtrace_cpu_stop_local mtrace_ptseq_stop mtrace_msr_write; do
		if echo "p:mtk_$f $f" >>$ev 2>/dev/null; then
			echo "FAIL kmod-noprobe-$f: kprobe accepted"
			echo "-:mtk_$f" >>$ev
		else
			echo "PASS kmod-noprobe-$f"
		fi
	done
	if echo "p:mtk_arm mtrace_arm" >>$ev; then
		echo "PASS kmod-probe-other-code"
		echo "-:mtk_arm" >>$ev
	else
		echo "FAIL kmod-probe-other-code: kprobe on mtrace_arm refused (kprobe_events unusable?)"
	fi
	unload
}
mark "exec tests"
cp /bin/kmod_strict /tmp/suid_helper && chown 0:0 /tmp/suid_helper && chmod 4755 /tmp/suid_helper
cp /bin/kmod_strict /tmp/plain_helper && chmod 755 /tmp/plain_helper
load sim=1 && { /bin/kmod_strict setuid /tmp/suid_helper; /bin/kmod_strict plain /tmp/plain_helper; unload; }
rm -f /tmp/suid_helper /tmp/plain_helper
