# SPDX-License-Identifier: MIT
# Shared by the capture tests (sourced as /tests.d/lib/capture.sh); $T is
# the test's scratch directory.

# wait_for LOG PATTERN: until a line matches (30 s at most).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 300 ] || return 1
		sleep 0.1
	done
}

# run_case NAME COMMAND...: PASS if it succeeds, else FAIL with its output.
run_case() {
	name=$1
	shift
	if "$@" >$T/case.out 2>&1; then
		echo "PASS $name"
	else
		echo "FAIL $name: $(tr '\n' ' ' <$T/case.out)"
	fi
	cat $T/case.out
}

# wait_file PATH: until it exists (30 s at most).
wait_file() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le 300 ] || return 1
		sleep 0.1
	done
}

# fresh: an empty control directory for capture_spin
fresh() {
	rm -rf $T/spin
	mkdir -p $T/spin
}

# target_of LOG: the pid mtrace-user reported tracing
target_of() {
	sed -n 's/.*tracing process \([0-9]*\).*/\1/p' "$1" | head -1
}
