#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Installs every Debian/Ubuntu package that building mtrace, its tests and
# the QEMU VM rig need, then fetches the pinned test kernels (downloaded and
# unpacked into a cache, never installed). Safe to run again.
#   scripts/install-deps.sh            everything
#   scripts/install-deps.sh --build    only what `make` needs
set -euo pipefail

build_pkgs=(
	make gcc gcc-12 clang llvm pkg-config
	libipt-dev libcapstone-dev libbpf-dev bpftool
	libelf-dev libdw-dev libiberty-dev libzstd-dev zlib1g-dev libdeflate-dev
	dkms dwarves kmod
)
# perf: its Intel PT decoder is the tests' second judge of mtrace's
# (docs/perf-interop.md). Debian packages it as linux-perf, Ubuntu as linux-tools.
perf_pkgs=(linux-perf)
# shellcheck disable=SC1091
[ -r /etc/os-release ] && [ "$(. /etc/os-release && echo "${ID:-}")" = ubuntu ] &&
	perf_pkgs=(linux-tools-common linux-tools-generic)
test_pkgs=(
	qemu-system-x86 busybox-static cpio bc file xz-utils
	protobuf-compiler python3 python3-protobuf
	valgrind g++ gcc-multilib binutils
	chromium
	"${perf_pkgs[@]}"
)

want=("${build_pkgs[@]}")
[ "${1:-}" = --build ] || want+=("${test_pkgs[@]}")

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: run as root (scripts/as-root $0)" >&2
	exit 1
fi

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# DKMS builds the module for the running kernel from its headers, when the
# distribution packages them (custom kernels bring their own).
kheaders=linux-headers-$(uname -r)
if ! dpkg-query -W -f='${Status}' "$kheaders" 2>/dev/null | grep -q 'install ok installed'; then
	if apt-cache show "$kheaders" >/dev/null 2>&1; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$kheaders"
	elif [ ! -d "/lib/modules/$(uname -r)/build" ]; then
		echo "install-deps: no package $kheaders: mtrace.ko cannot be built for the running kernel" \
			"until its headers are installed (the tests use their own kernels)"
	fi
fi

if [ "${1:-}" != --build ]; then
	here=$(dirname "$0")
	# shellcheck source=tests/vm/kernels.env
	. "$here/../tests/vm/kernels.env"
	"$here/../tests/vm/fetch-kernel.sh" "$MTRACE_VM_KVER" >/dev/null
	"$here/../tests/vm/fetch-kernel.sh" "$MTRACE_OLD_KVER" --headers-only >/dev/null
	"$here/../tests/kmod/fetch-checkpatch.sh" >/dev/null
fi
echo "install-deps: done"
