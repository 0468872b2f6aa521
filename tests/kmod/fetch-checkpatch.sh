#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Puts the kernel's checkpatch.pl (and the data files it reads) into the
# cache, taken from Debian's linux-source package without installing it.
# Prints the script's path.
set -euo pipefail
cache=${MTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mtrace}
dir=$cache/checkpatch
if [ ! -x "$dir/checkpatch.pl" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root linux-source-6.12 >&2)
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.12_*.deb |
		tar -x -C "$tmp" ./usr/src/linux-source-6.12.tar.xz
	tar -xJf "$tmp/usr/src/linux-source-6.12.tar.xz" -C "$tmp" --strip-components=2 \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	mkdir -p "$dir"
	cp "$tmp"/checkpatch.pl "$tmp"/spelling.txt "$tmp"/const_structs.checkpatch "$dir/"
fi
echo "$dir/checkpatch.pl"
