#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fetch-kernel.sh KVER [--headers-only]
# Downloads Debian's kernel image and headers for KVER (e.g.
# 6.12.117+deb12-amd64) and unpacks them into the cache WITHOUT installing
# them: installing runs mkinitramfs for minutes and changes the host.
# Prints shell assignments KDIR=... KERNEL=... KCONFIG=... for eval.
# The cache is $MTRACE_CACHE (default ~/.cache/mtrace); a finished fetch is
# reused.
set -euo pipefail
kver=${1:?usage: fetch-kernel.sh KVER [--headers-only]}
headers_only=${2:-}
cache=${MTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mtrace}
prefix=$cache/kernels/$kver
kdir=$prefix/usr/src/linux-headers-$kver

if [ ! -e "$prefix/.complete${headers_only}" ]; then
	rm -rf "$prefix.tmp"
	mkdir -p "$prefix.tmp/debs"
	# The arch headers depend on their -common tree and on kbuild; ask apt
	# for the exact names instead of guessing the naming scheme per series.
	download() {
		pkgs=("linux-headers-$kver")
		while read -r dep; do pkgs+=("$dep"); done < <(apt-cache depends "linux-headers-$kver" 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-\(headers\|kbuild\)-[^ ]*\)$/\1/p')
		[ -z "$headers_only" ] && pkgs+=("linux-image-$kver")
		[ ${#pkgs[@]} -gt 1 ] &&
			(cd "$prefix.tmp/debs" && apt-get download -q -o APT::Sandbox::User=root "${pkgs[@]}" >&2)
	}
	# A stale package list is the usual cause of a failed download.
	download || { [ "$(id -u)" -eq 0 ] && apt-get update -q >&2 && download; } || {
		echo "fetch-kernel: cannot download the kernel packages for $kver; if Debian no longer serves this ABI, pin a current one in tests/vm/kernels.env" >&2
		exit 1
	}
	for deb in "$prefix.tmp"/debs/linux-headers-*.deb "$prefix.tmp"/debs/linux-kbuild-*.deb; do
		dpkg-deb -x "$deb" "$prefix.tmp"
	done
	if [ -z "$headers_only" ]; then
		dpkg-deb --fsys-tarfile "$prefix.tmp"/debs/linux-image-*.deb |
			tar -x -C "$prefix.tmp" "./boot/vmlinuz-$kver" "./boot/config-$kver"
	fi
	rm -rf "$prefix.tmp/debs"
	# Unpacked outside /, the headers' paths to the -common tree and to
	# kbuild must be re-pointed into the same prefix.
	sed -i "s#^include /usr/src/#include $prefix/usr/src/#" "$prefix.tmp/usr/src/linux-headers-$kver/Makefile"
	for l in "$prefix.tmp/usr/src/linux-headers-$kver"/{scripts,tools}; do
		if [ -L "$l" ]; then
			t=$(readlink "$l")
			case $t in /*) ln -sfn "$prefix$t" "$l" ;; *) ;; esac
		fi
	done
	rm -rf "$prefix"
	mv "$prefix.tmp" "$prefix"
	# Only a complete fetch is ever reused.
	touch "$prefix/.complete${headers_only}"
	[ -z "$headers_only" ] && touch "$prefix/.complete--headers-only"
fi
echo "KDIR=$kdir"
[ -z "$headers_only" ] && echo "KERNEL=$prefix/boot/vmlinuz-$kver" && echo "KCONFIG=$prefix/boot/config-$kver"
exit 0
