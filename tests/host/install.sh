#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make install / uninstall into a staging directory, and a DKMS build of the
# installed module sources against the pinned 6.12 headers in a private DKMS
# tree (the host's own kernel cannot load modules, and its DKMS state is
# left alone).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
O=${O:-build}
version=$(cat VERSION)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

ok() { echo "PASS install/$1"; }
bad() { echo "FAIL install/$1: $2"; }

if make -s O="$O" install DESTDIR="$stage" PREFIX=/usr >"$stage.log" 2>&1; then
	missing=
	for f in usr/bin/mtrace-user usr/share/man/man1/mtrace-user.1 \
		"usr/src/mtrace-$version/dkms.conf" "usr/src/mtrace-$version/Kbuild" \
		"usr/src/mtrace-$version/include/uapi/linux/mtrace.h"; do
		[ -e "$stage/$f" ] || missing="$missing $f"
	done
	for src in bpf/*.bpf.c; do
		[ -e "$src" ] || continue
		o=usr/lib/mtrace/bpf/$(basename "$src" .c).o
		[ -e "$stage/$o" ] || missing="$missing $o"
	done
	[ -z "$missing" ] && ok files || bad files "not installed:$missing"
	"$stage/usr/bin/mtrace-user" --version | grep -qx "mtrace-user $version" &&
		ok version || bad version "installed mtrace-user does not report $version"
else
	bad files "make install failed: $(tail -3 "$stage.log")"
fi
rm -f "$stage.log"

grep -qx "PACKAGE_VERSION=\"$version\"" dkms.conf && ok dkms-conf-version ||
	bad dkms-conf-version "dkms.conf PACKAGE_VERSION differs from VERSION ($version)"

# DKMS: add + build from the installed sources, isolated from the host's DKMS state.
. tests/vm/kernels.env
kdir=$(tests/vm/fetch-kernel.sh "$MTRACE_VM_KVER" --headers-only | sed -n 's/^KDIR=//p')
if command -v dkms >/dev/null && [ -n "$kdir" ]; then
	mkdir -p "$stage/dkms"
	if dkms build -m mtrace -v "$version" -k "$MTRACE_VM_KVER" --kernelsourcedir "$kdir" \
		--dkmstree "$stage/dkms" --sourcetree "$stage/usr/src" >"$stage/dkms.log" 2>&1; then
		ko=$(find "$stage/dkms" -name 'mtrace.ko*' | head -1)
		if [ -n "$ko" ] && modinfo -F version "$ko" | grep -qx "$version"; then
			ok dkms-build
		else
			bad dkms-build "no module with version $version in the DKMS tree"
		fi
	else
		bad dkms-build "$(tail -5 "$stage/dkms.log")"
	fi
else
	echo "SKIP install/dkms-build: dkms or the 6.12 headers are missing (scripts/install-deps.sh)"
fi

make -s O="$O" uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null 2>&1
left=$(cd "$stage" && find usr -type f 2>/dev/null)
[ -z "$left" ] && ok uninstall || bad uninstall "left behind: $left"
