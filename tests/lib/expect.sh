# SPDX-License-Identifier: MIT
# Shared by the host tests (sourced): one PASS/FAIL line per checked command.
# The caller sets $suite, the prefix of every case name.

# check_cmd NAME STATUS GREPMODE PATTERN CMD...: the command's exit status
# and a line of its output (stdout and stderr), matched with grep -GREPMODE.
check_cmd() {
	local name=$1 want=$2 mode=$3 pattern=$4 out rc
	shift 4
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $suite/$name: exit status $rc, expected $want; output: $out"
	elif ! grep -q"$mode" -- "$pattern" <<<"$out"; then
		echo "FAIL $suite/$name: output lacks '$pattern': $out"
	else
		echo "PASS $suite/$name"
	fi
}

# expect NAME STATUS TEXT CMD...: output contains TEXT literally.
expect() { check_cmd "$1" "$2" F "$3" "${@:4}"; }
# expect_re NAME STATUS REGEX CMD...: output matches an extended regex.
expect_re() { check_cmd "$1" "$2" E "$3" "${@:4}"; }
