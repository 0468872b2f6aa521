#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The VM suite: builds mtrace.ko against the pinned Debian 6.12 kernel, packs
# an initramfs with the module, mtrace-user, the guest programs and the guest
# tests, boots it under QEMU TCG and prints the guest's PASS/FAIL/SKIP lines
# (prefixed vm/). Exit status 0 only when the guest passed.
#   O=build tests/vm/run.sh      (make check-vm builds the prerequisites)
# Environment: MTRACE_VM_TIMEOUT (seconds, default 600), MTRACE_VM_KEEP=1
# keeps the work directory, MTRACE_VM_ONLY=GLOB runs only the guest tests
# whose names match (e.g. "2*-kmod-*"). Files the guest tests export end up
# in $O/vm/run/export.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export O
work=$O/vm/run
. tests/vm/kernels.env
kver=$MTRACE_VM_KVER

eval "$(tests/vm/fetch-kernel.sh "$kver")"
# The guest loads the module DKMS builds from the sources `make install`
# places in /usr/src, as users get it, in a private DKMS tree.
dkms_dir=$O/vm/dkms
rm -rf "$dkms_dir"
mkdir -p "$dkms_dir/tree"
ko=
if ! command -v dkms >/dev/null; then
	echo "dkms is not installed (scripts/install-deps.sh installs it)" >"$O/vm-kmod.log"
elif scripts/install.sh install "$dkms_dir/root" /usr "$O" "$(cat VERSION)" >"$O/vm-kmod.log" 2>&1 &&
	dkms build -m mtrace -v "$(cat VERSION)" -k "$kver" --kernelsourcedir "$KDIR" \
		--dkmstree "$dkms_dir/tree" --sourcetree "$dkms_dir/root/usr/src" >>"$O/vm-kmod.log" 2>&1; then
	ko=$(find "$dkms_dir/tree" -name mtrace.ko | head -1)
fi
[ -n "$ko" ] || {
	tail -30 "$O/vm-kmod.log"
	echo "FAIL vm/build-module: DKMS does not build mtrace.ko against $kver"
	exit 1
}

rm -rf "$work"
mkdir -p "$work"
tests/vm/mkinitramfs.sh "$work/initramfs.cpio.gz" "$ko" "$KCONFIG" "$kver"

timeout=${MTRACE_VM_TIMEOUT:-600}
t0=$(date +%s.%N)
rc=0
# panic_on_warn/oops=panic: any kernel WARN or oops ends the run as a failure.
timeout --foreground -k 5 "$timeout" qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp 2 -m 1G \
	-kernel "$KERNEL" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 quiet loglevel=5${MTRACE_VM_ONLY:+ rig.only=$MTRACE_VM_ONLY}" \
	-nographic -no-reboot -nic none \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-device virtio-serial-pci \
	-chardev file,id=results,path="$work/results.txt" \
	-device virtserialport,chardev=results,name=rig.out \
	-chardev file,id=files,path="$work/export.tar" \
	-device virtserialport,chardev=files,name=rig.files \
	</dev/null >"$work/console.log" 2>&1 || rc=$?
t1=$(date +%s.%N)
echo "vm: qemu exit status $rc after $(echo "$t1 - $t0" | bc)s (kernel $kver)"

tr -d '\r' <"$work/results.txt" >"$work/results.clean" 2>/dev/null || : >"$work/results.clean"
sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 vm\//p' "$work/results.clean"
grep '^RIG: ' "$work/results.clean" || true
# Files the guest tests exported (tests/vm/guest/init), e.g. the e2e trace.
mkdir -p "$work/export"
if [ -s "$work/export.tar" ] && ! tar -C "$work/export" -xf "$work/export.tar"; then
	echo "FAIL vm/export: the files the guest exported are damaged"
	rc=2
fi

verdict=pass
if ! grep -q '^RIG: DONE' "$work/results.clean"; then
	echo "FAIL vm/guest-finished: the guest did not finish its tests (crash, panic or timeout)"
	verdict=fail
elif [ "$rc" -ne 1 ] || grep -q '^FAIL ' "$work/results.clean"; then
	verdict=fail
fi
if [ $verdict = fail ]; then
	# Indented, so that the guest's own PASS/FAIL lines are not counted twice.
	echo "---- guest console (last 60 lines) ----"
	tr -d '\r' <"$work/console.log" | tail -60 | sed 's/^/  | /'
	echo "---- end of guest console ----"
	exit 1
fi
[ "${MTRACE_VM_KEEP:-0}" = 1 ] || rm -f "$work/initramfs.cpio.gz"
exit 0
