#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Compiles mtrace.ko with W=1 against Debian's 6.1 and 6.12 headers (fetched,
# not installed) and fails on any compiler or modpost warning; checks that the
# 6.12 build carries module BTF (the kfunc needs it); runs checkpatch --strict
# over the kernel sources.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
O=${O:-build}
case $O in /*) ;; *) O=$top/$O ;; esac
export O
mkdir -p "$O"
. tests/vm/kernels.env

build() {
	local kver=$1 mode=$2 kdir log ko
	kdir=$(tests/vm/fetch-kernel.sh "$kver" $mode | sed -n 's/^KDIR=//p') || {
		echo "FAIL kmod/fetch-$kver: cannot fetch the headers"
		return
	}
	log=$O/kmod-$kver.log
	if ! ko=$(scripts/build-kmod.sh "$kdir" "$O/kmod/$kver" W=1 2>"$log"); then
		tail -20 "$log"
		echo "FAIL kmod/build-$kver: build failed (log: $log)"
		return
	fi
	if grep -iE 'warning:|error:' "$log"; then
		echo "FAIL kmod/build-$kver: warnings with W=1"
		return
	fi
	echo "PASS kmod/build-$kver"
	BUILT_KO=$ko
}

BUILT_KO=
build "$MTRACE_OLD_KVER" --headers-only
BUILT_KO=
build "$MTRACE_VM_KVER" ""
if [ -n "$BUILT_KO" ]; then
	if readelf -S "$BUILT_KO" | grep -q '\.BTF '; then
		echo "PASS kmod/module-btf-$MTRACE_VM_KVER"
	else
		echo "FAIL kmod/module-btf-$MTRACE_VM_KVER: no .BTF section (is pahole installed?)"
	fi
fi

checkpatch=$(tests/kmod/fetch-checkpatch.sh) || { echo "FAIL kmod/checkpatch: cannot fetch checkpatch.pl"; exit 0; }
# Known-false positives on out-of-tree code: there is no kernel tree for
# MAINTAINERS/SPDX lookups, and the uapi header is shared with user space.
files=$(ls kmod/*.[ch] include/uapi/linux/*.h 2>/dev/null)
if [ -z "$files" ]; then
	echo "FAIL kmod/checkpatch: no kernel sources found"
	exit 0
fi
out=$("$checkpatch" --no-tree --strict --terse --show-types -f $files 2>&1 | grep -E '^[^ ]+:[0-9]+: (ERROR|WARNING|CHECK):')
if [ -n "$out" ]; then
	echo "$out"
	echo "FAIL kmod/checkpatch: $(echo "$out" | wc -l) findings"
else
	echo "PASS kmod/checkpatch"
fi
