#!/bin/bash
# SPDX-License-Identifier: MIT
#
# install.sh install|uninstall DESTDIR PREFIX BUILDDIR VERSION  (run by make)
# Installs mtrace-user, its man page and the BPF objects, places the module
# sources in /usr/src/mtrace-VERSION and, when installing into the live
# system, registers them with DKMS and installs the module for the running
# kernel (or tells how, when that kernel's headers are missing).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
action=$1 dest=$2 prefix=$3 build=$4 version=$5
case $build in /*) ;; *) build=$top/$build ;; esac
bindir=$dest$prefix/bin
mandir=$dest$prefix/share/man/man1
bpfdir=$dest$prefix/lib/mtrace/bpf
srcdir=$dest/usr/src/mtrace-$version
live_dkms() { [ -z "$dest" ] && command -v dkms >/dev/null; }

case $action in
install)
	install -D -m 755 "$build/mtrace-user" "$bindir/mtrace-user"
	install -D -m 644 "$top/docs/mtrace-user.1" "$mandir/mtrace-user.1"
	mkdir -p "$bpfdir"
	for o in "$build"/bpf/*.bpf.o; do
		[ -e "$o" ] && install -m 644 "$o" "$bpfdir/"
	done
	rm -rf "$srcdir"
	mkdir -p "$srcdir"
	cp -r "$top/Kbuild" "$top/VERSION" "$top/dkms.conf" "$top/kmod" "$top/include" "$srcdir/"
	if live_dkms; then
		dkms status -m mtrace -v "$version" | grep -q . || dkms add -m mtrace -v "$version"
		if [ -d "/lib/modules/$(uname -r)/build" ]; then
			dkms install -m mtrace -v "$version"
		else
			echo "install: no headers for the running kernel $(uname -r): mtrace is registered with DKMS" \
				"and builds once they are installed (apt-get install linux-headers-$(uname -r))"
		fi
	fi
	;;
uninstall)
	if live_dkms && dkms status -m mtrace -v "$version" | grep -q .; then
		dkms remove -m mtrace -v "$version" --all
	fi
	rm -f "$bindir/mtrace-user" "$mandir/mtrace-user.1"
	rm -rf "$bpfdir" "$srcdir"
	rmdir "$dest$prefix/lib/mtrace" 2>/dev/null || true
	;;
*)
	echo "install.sh: unknown action '$action'" >&2
	exit 2
	;;
esac
