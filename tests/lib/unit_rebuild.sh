# SPDX-License-Identifier: MIT
# Shared by the host tests that run unit tests under another tool
# (sourced): valgrind cannot run ASan binaries, and ThreadSanitizer cannot
# be combined with ASan, so those tests build the unit tests again by the
# ordinary rules, with other sanitizer flags, in a tree of their own. The
# same rules mean the same sources, flags and extra objects as the ASan
# binaries, with no list kept in the callers.

# unit_rebuild O TREE CFLAGS LOG NAME...: builds the unit tests NAME... in
# TREE with CFLAGS_SAN=CFLAGS (make's output in LOG), and gives TREE the
# helpers some tests find next to their own binary (the PT generator and
# its test programs, see fx_ptgen_paths() in
# tests/unit/test_decode_fixture.h), which run as child processes, so that
# the ordinary ones in O serve. Returns make's status.
unit_rebuild() {
	local o=$1 tree=$2 cflags=$3 log=$4 n helper bins=()
	shift 4
	for n in "$@"; do
		bins+=("$tree/san/tests/unit/$n")
	done
	make -C "$(dirname "${BASH_SOURCE[0]}")/../.." -s -j"$(nproc)" O="$tree" \
		CFLAGS_SAN="$cflags" "${bins[@]}" >"$log" 2>&1 || return
	for helper in rel/tests/ptgen/ptgen san/tests/ptgen/programs; do
		if [ -e "$o/$helper" ] && [ ! -e "$tree/$helper" ]; then
			mkdir -p "$(dirname "$tree/$helper")"
			ln -sfn "$o/$helper" "$tree/$helper"
		fi
	done
}
