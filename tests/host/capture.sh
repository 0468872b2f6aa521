#!/bin/bash
# SPDX-License-Identifier: MIT
# mtrace-user record/doctor on this host, where /dev/mtrace never exists:
# the precise messages and exit statuses for bad arguments and a missing
# or wrong device, and that a launched command never runs when set-up fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${O:-$top/build}/san/mtrace-user
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

suite=capture
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

if [ -e /dev/mtrace ]; then
	echo "SKIP capture/no-device: this machine has /dev/mtrace"
else
	expect no-device 1 "/dev/mtrace does not exist: the mtrace kernel module is not loaded" \
		"$bin" record -- /bin/true
	expect no-device-top-level 1 "the mtrace kernel module is not loaded" \
		"$bin" -o "$tmp/x.pftrace" -- /bin/true
	# A dry run's plan is sound here, and it says a capture could not start.
	expect dry-run-no-device 0 "warning: a capture could not start here: /dev/mtrace does not exist" \
		"$bin" record --dry-run -- /bin/true
	# The command must not run when the capture cannot start.
	expect no-device-command-not-run 1 "not loaded" "$bin" record -- touch "$tmp/ran"
	if [ -e "$tmp/ran" ]; then
		echo "FAIL capture/command-not-run: the command ran although tracing never started"
	else
		echo "PASS capture/command-not-run"
	fi
	# Nothing is left beside the output: no trace, no directory for the bundles.
	left=$(ls -A "$tmp")
	[ -z "$left" ] && echo "PASS capture/nothing-left-on-error" ||
		echo "FAIL capture/nothing-left-on-error: left behind: $left"
	if [ -e /proc/modules ]; then
		expect doctor-no-module 1 "FAIL  module         /dev/mtrace does not exist" "$bin" doctor
	else
		expect doctor-no-module 1 "FAIL  module         this kernel has no module support (CONFIG_MODULES is off" "$bin" doctor
	fi
fi
# Another driver's character device is told by sysfs, not opened; record
# and doctor say the same of it.
if [ -e /sys/dev/char/1:3 ]; then
	expect not-a-device 1 "mtrace-user: /dev/null is a character device but not mtrace's (class mem, device null)" \
		env MTRACE_DEVICE=/dev/null "$bin" record -- /bin/true
	expect doctor-not-a-device 1 "FAIL  device         /dev/null is a character device but not mtrace's (class mem, device null)" \
		env MTRACE_DEVICE=/dev/null "$bin" doctor
else
	# Without sysfs the open and GET_VERSION tell.
	expect not-a-device 1 "/dev/null is not an mtrace device (GET_VERSION: Inappropriate ioctl for device)" \
		env MTRACE_DEVICE=/dev/null "$bin" record -- /bin/true
fi
# Anything else named as the device is not opened: a FIFO's open would
# wait for a writer, beyond the reach of Ctrl-C.
mkfifo "$tmp/fifo"
expect not-a-device-fifo 1 "$tmp/fifo is not an mtrace device: it is a FIFO" \
	timeout -s KILL 20 env MTRACE_DEVICE="$tmp/fifo" "$bin" record -- /bin/true
expect doctor-not-a-device-fifo 1 "FAIL  device         $tmp/fifo is not an mtrace device: it is a FIFO" \
	timeout -s KILL 20 env MTRACE_DEVICE="$tmp/fifo" "$bin" doctor
# What doctor says of the CPU depends on the machine: another vendor's has
# no PT at all; of an Intel one without PT (a hypervisor's vCPU, say) CPUID
# tells. A machine with PT passes that check.
vendor=$(awk -F': *' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
if [ "$vendor" != GenuineIntel ]; then
	expect doctor-cpu 1 "has no Intel PT; mtrace needs an Intel CPU (Broadwell or later) on bare metal" \
		"$bin" doctor
elif ! grep -qw intel_pt /proc/cpuinfo; then
	expect doctor-cpu 1 "FAIL  cpu            $(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo): CPUID reports no Intel PT" \
		"$bin" doctor
else
	echo "SKIP capture/doctor-cpu: this CPU has Intel PT"
fi
# --allow-missing belongs to the forms that decode.
expect allow-missing-top-level 0 "dry run: nothing is armed" "$bin" --allow-missing --dry-run -- /bin/true
expect allow-missing-record 2 "--allow-missing is for 'mtrace-user [OPTIONS] -- CMD' and decode" \
	"$bin" record --allow-missing -- /bin/true
# A bundle's name in any case is not the top-level form's trace.
expect top-level-bundle-name-upper 2 "-o $tmp/X.MTRACE: this form writes a Perfetto trace" \
	"$bin" --dry-run -o "$tmp/X.MTRACE" -- /bin/true
expect help 0 "usage: mtrace-user record [OPTIONS]" "$bin" record --help
expect doctor-help 0 "usage: mtrace-user doctor" "$bin" doctor --help
expect doctor-args 2 "doctor takes no arguments, not 'extra'" "$bin" doctor extra
expect no-target 2 "no target: give -p PID, --system-wide or -- CMD [ARGS]" "$bin" record
expect empty-command 2 "no command after '--'" "$bin" record --
expect two-targets 2 "choose one target" "$bin" record -p 1 -- /bin/true
expect system-wide-and-pid 2 "choose one target" "$bin" record -a -p 1
expect buffer-not-pow2 2 "--buffer-size 3145728 is not a power of two" "$bin" record -b 3M -- /bin/true
expect buffer-too-small 2 "--buffer-size 1024 is out of range: the ring per CPU holds 4K to 256M" \
	"$bin" record -b 1K -- /bin/true
expect buffer-too-big 2 "out of range" "$bin" record -b 1G -- /bin/true
expect buffer-bad-unit 2 "invalid size '4Q': unknown unit 'Q' (use K, M or G)" \
	"$bin" record -b 4Q -- /bin/true
expect bad-pid 2 "invalid pid 'abc': expected an integer" "$bin" record -p abc
expect zero-pid 2 "invalid pid '0'" "$bin" record -p 0
expect bad-snapshots 2 "invalid --snapshots '0': expected an integer from 1 to 10000" \
	"$bin" record -n 0 -- /bin/true
expect bad-mtc 2 "invalid --mtc-freq '16': expected an integer from 0 to 15" \
	"$bin" record --mtc-freq 16 -- /bin/true
expect bad-cyc 2 "invalid --cyc threshold 'x'" "$bin" record --cyc=x -- /bin/true
expect bad-timing 2 "invalid timing preset 'fast': expected low, normal or high" \
	"$bin" record --timing fast -- /bin/true
expect bad-freeze 2 "invalid --freeze path: expected auto, notify or sigstop" \
	"$bin" record --freeze now -- /bin/true
expect bad-trigger 2 "trigger 'uprobe:'" "$bin" record -t uprobe: -- /bin/true
expect unknown-option 2 "see 'mtrace-user record --help'" "$bin" record --frobnicate -- /bin/true
expect top-level-help 0 "Perfetto trace to write (default trace.pftrace)" "$bin" -q --help
expect record-help-names-bundle 0 "bundle to write (default trace.mtrace)" "$bin" record --help
expect record-help-portable 0 "--portable         copy the mapped executables and libraries" "$bin" record --help
expect top-level-bundle-name 2 "-o x.mtrace: this form writes a Perfetto trace; 'mtrace-user record -o FILE' writes a bundle" \
	"$bin" -o x.mtrace -- /bin/true
expect keep-bundle-is-output 2 "--keep-bundle t.pftrace: the same file as the Perfetto trace" \
	"$bin" -o t.pftrace --keep-bundle t.pftrace -- /bin/true
expect record-keep-bundle 2 "--keep-bundle is for 'mtrace-user [OPTIONS] -- CMD'" \
	"$bin" record --keep-bundle x.mtrace -- /bin/true
expect unknown-top-level-option 2 "unknown option '--frobnicate' (see 'mtrace-user --help')" "$bin" --frobnicate
expect too-many-triggers 2 "at most 8 --trigger options, not 9" "$bin" record \
	-t kprobe:a -t kprobe:a -t kprobe:a -t kprobe:a -t kprobe:a -t kprobe:a -t kprobe:a \
	-t kprobe:a -t kprobe:a -- /bin/true
