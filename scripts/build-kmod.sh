#!/bin/bash
# SPDX-License-Identifier: MIT
#
# build-kmod.sh KDIR OUTDIR [make args...]
# Builds mtrace.ko against the kernel build tree KDIR in a copy of the module
# sources at OUTDIR (Kbuild writes objects next to the sources, and kernels
# before 6.13 cannot place them elsewhere). Prints the path of the module.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=$1 out=$2
shift 2
[ -f "$kdir/Makefile" ] || { echo "build-kmod: $kdir is not a kernel build directory" >&2; exit 1; }
mkdir -p "$out"
# Copy only what the module build reads; -p keeps mtimes so rebuilds stay incremental.
cp -rp "$top/Kbuild" "$top/VERSION" "$top/kmod" "$top/include" "$out/"
# A calling make passes its command-line variables (O= among them, which
# Kbuild would take as its output directory) through MAKEFLAGS: drop them.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$kdir" M="$(cd "$out" && pwd)" "$@" modules >&2
echo "$out/mtrace.ko"
