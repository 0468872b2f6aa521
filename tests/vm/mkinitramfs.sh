#!/bin/bash
# SPDX-License-Identifier: MIT
#
# mkinitramfs.sh OUT.cpio.gz MODULE.ko KCONFIG KVER
# Packs the test guest: static busybox, /init, the module, mtrace-user, the
# guest programs built under $O/vm/bin with the shared libraries they need,
# and the guest test scripts.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$1") ko=$2 kconfig=$3 kver=$4
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export O
busybox=$(command -v busybox)
file -L "$busybox" | grep -q 'statically linked' || {
	echo "mkinitramfs: need a static busybox (package busybox-static)" >&2
	exit 1
}
st=$(mktemp -d)
trap 'rm -rf "$st"' EXIT
# mktemp makes the directory 0700; as the guest's root it must let every user in.
chmod 755 "$st"
mkdir -p "$st"/{bin,sbin,lib,dev,proc,sys,tmp,boot,tests.d}
cp "$busybox" "$st/bin/busybox"
for a in $("$busybox" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$st/bin/$a"
done
install -m 755 "$top/tests/vm/guest/init" "$st/init"
cp "$ko" "$st/lib/mtrace.ko"
cp "$top"/tests/vm/guest/tests.d/*.sh "$st/tests.d/" 2>/dev/null || true
# Shell helpers the tests source (/tests.d/lib is not a test: init runs /tests.d/*.sh).
mkdir -p "$st/tests.d/lib"
cp "$top"/tests/vm/guest/lib/*.sh "$st/tests.d/lib/"
# bpftool's feature probes read the kernel config.
cp "$kconfig" "$st/boot/config-$kver"

# Programs and, for each, the shared libraries and loader ldd names.
add_program() {
	cp "$1" "$st/bin/"
	for l in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
		[ -e "$st$l" ] && continue
		mkdir -p "$st$(dirname "$l")"
		cp -L "$l" "$st$l"
	done
}
add_program "$O/mtrace-user"
for p in "$O"/vm/bin/*; do
	[ -x "$p" ] && add_program "$p"
done
add_program "$(command -v bpftool)"

mknod -m 600 "$st/dev/console" c 5 1
mknod -m 666 "$st/dev/null" c 1 3
(cd "$st" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet | gzip -1 >"$out")
