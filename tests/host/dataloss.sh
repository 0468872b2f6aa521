#!/bin/bash
# SPDX-License-Identifier: MIT
# Nothing the user had is lost: outputs never replace inputs and are written
# atomically (failure, ENOSPC, Ctrl-C keep the old file); record checks
# everything before it arms or launches; decode tells what it could not
# decode; inputs from pipes and FIFOs; one-line errors with one prefix.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "${O:-$top/build}")	# the tests change directory
bin=$build/san/mtrace-user
ptgen=$build/rel/tests/ptgen/ptgen
programs=$build/san/tests/ptgen/programs
corpus=$top/tests/fuzz/corpus/fuzz_bundle

suite=dataloss
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

work=$(mktemp -d)
mnt=
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "PASS $suite/$1"; }
fail() { echo "FAIL $suite/$1: $2"; }
# leftovers DIR: temporary outputs left behind, if any.
leftovers() { find "$1" -maxdepth 1 -name '.tmp-*' | tr '\n' ' '; }

# ---- 1. an output that is an input is refused, the bundle untouched ------
cp "$corpus/sample-zstd.mtrace" "$work/b.mtrace"
cp "$work/b.mtrace" "$work/orig"
ln -s b.mtrace "$work/sym.mtrace"
ln "$work/b.mtrace" "$work/hard.mtrace"
for how in same sym hard; do
	case $how in
	same) out=$work/b.mtrace ;;
	sym) out=$work/sym.mtrace ;;
	hard) out=$work/hard.mtrace ;;
	esac
	for fmt in perfetto text; do
		expect "same-file-$how-$fmt" 2 "is the input $work/b.mtrace itself" \
			"$bin" decode -f "$fmt" -o "$out" "$work/b.mtrace"
		cmp -s "$work/b.mtrace" "$work/orig" || fail "same-file-$how-$fmt-kept" "the bundle changed"
	done
done
# Another spelling of the bundle's path is no link to it.
for how in relative absolute; do
	out=./b.mtrace
	[ $how = absolute ] && out=$work/b.mtrace
	expect_re "same-file-spelled-$how" 2 "^mtrace-user: output $out is the input b\.mtrace itself: choose another output file\$" \
		sh -c 'cd "$1" && "$2" decode -o "$3" b.mtrace' sh "$work" "$bin" "$out"
done
# Through standard output too (>> appends to the bundle itself).
"$bin" decode -q -f text "$work/b.mtrace" >>"$work/b.mtrace" 2>"$work/err"
rc=$?
if [ $rc -eq 2 ] && cmp -s "$work/b.mtrace" "$work/orig" && grep -q 'is the input' "$work/err"; then
	pass same-file-stdout
else
	fail same-file-stdout "exit $rc, $(cat "$work/err")"
fi
# Standard input named as such, as standard output is.
expect same-file-stdin-stdout 2 "output (standard output) is the input (standard input) itself: choose another output file" \
	sh -c '"$1" decode -q -f text - <"$2" >>"$2"' sh "$bin" "$work/b.mtrace"
cmp -s "$work/b.mtrace" "$work/orig" || fail same-file-stdin-stdout-kept "the bundle changed"
# An output appended to standard output (>>) keeps what the file held:
# standard output is written through, not opened anew (which truncated it).
for fmt in text json perfetto svg; do
	echo "kept line" >"$work/appended"
	if "$bin" decode -q -f "$fmt" -o - "$work/b.mtrace" >>"$work/appended" 2>"$work/err" &&
		[ "$(head -n 1 "$work/appended")" = "kept line" ] &&
		[ "$(wc -c <"$work/appended")" -gt 10 ]; then
		pass "append-to-stdout-$fmt"
	else
		fail "append-to-stdout-$fmt" "first line '$(head -c 40 "$work/appended")': $(cat "$work/err")"
	fi
done

# ---- 2. atomic outputs -------------------------------------------------------
# A walk big enough that its decode takes a while (for Ctrl-C) and whose
# trace does not fit a 1 MiB file system (for ENOSPC).
if ! "$ptgen" --walk "$programs/recursion" --insns 20000000 -o "$work/w.mtrace" >/dev/null 2>&1; then
	fail walk "ptgen could not generate a walk"
fi
echo "the previous trace" >"$work/old.pftrace"
# A background job starts with SIGINT ignored; Ctrl-C reaches a foreground one: restore it.
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
	"$bin" decode -q -o "$work/old.pftrace" "$work/w.mtrace" 2>"$work/err" &
pid=$!
seen=
# Signalled once the decode writes: into its temporary, or (without one) into the file itself.
for _ in $(seq 1 2000); do
	if [ -n "$(leftovers "$work")" ] || ! grep -qx "the previous trace" "$work/old.pftrace"; then
		seen=1
		kill -INT $pid
		break
	fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.005
done
wait $pid
rc=$?
if [ -z "$seen" ]; then
	echo "SKIP $suite/ctrl-c-keeps-old: the decode ended before it was seen writing"
elif [ "$(cat "$work/old.pftrace")" = "the previous trace" ] && [ -z "$(leftovers "$work")" ] &&
	[ $rc -eq 130 ]; then
	pass ctrl-c-keeps-old
else
	fail ctrl-c-keeps-old "exit $rc, old file: $(head -c 40 "$work/old.pftrace" | tr -d '\0' | cat -v), left: $(leftovers "$work")"
fi

mnt=$work/tiny
mkdir "$mnt"
if mount -t tmpfs -o size=1m tmpfs "$mnt" 2>"$work/mount.err"; then
	echo "the previous trace" >"$mnt/t.pftrace"
	"$bin" decode -q -o "$mnt/t.pftrace" "$work/w.mtrace" 2>"$work/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q 'No space left on device' "$work/err" &&
		grep -q 't.pftrace was left as it was before' "$work/err" &&
		[ "$(cat "$mnt/t.pftrace")" = "the previous trace" ] && [ -z "$(leftovers "$mnt")" ]; then
		pass enospc-keeps-old
	else
		fail enospc-keeps-old "exit $rc, $(cat "$work/err"), old: $(head -c 40 "$mnt/t.pftrace" | tr -d '\0' | cat -v), left: $(leftovers "$mnt")"
	fi
	# A gzip output too, told in the same words.
	echo "the previous trace" >"$mnt/t.json.gz"
	out=$("$bin" decode -q -f json -o "$mnt/t.json.gz" "$work/w.mtrace" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$(cat "$mnt/t.json.gz")" = "the previous trace" ] &&
		grep -qx "mtrace-user: $mnt/t.json.gz: write failed: No space left on device" <<<"$out" &&
		grep -qx "mtrace-user: $mnt/t.json.gz was left as it was before" <<<"$out" &&
		[ -z "$(leftovers "$mnt")" ]; then
		pass enospc-gz-keeps-old
	else
		fail enospc-gz-keeps-old "exit $rc, $out, left: $(leftovers "$mnt")"
	fi
	# record refuses up front when the worst-case bundle cannot fit.
	expect record-no-room 1 "not enough room for a snapshot in $mnt" \
		"$bin" record -o "$mnt/s.mtrace" -- /bin/true
	umount "$mnt"
	mnt=
else
	echo "SKIP $suite/enospc-keeps-old: cannot mount a tmpfs ($(head -1 "$work/mount.err"))"
	echo "SKIP $suite/enospc-gz-keeps-old: cannot mount a tmpfs"
	echo "SKIP $suite/record-no-room: cannot mount a tmpfs"
fi

# A device is written in place: a failed write there kept nothing, and
# says nothing of it. Every format tells a failed write in one wording.
for fmt in perfetto json text svg; do
	out=$("$bin" decode -q -f $fmt -o /dev/full "$corpus/sample-zstd.mtrace" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$out" = "mtrace-user: /dev/full: write failed: No space left on device" ]; then
		pass "device-write-fails-$fmt"
	else
		fail "device-write-fails-$fmt" "exit $rc: $out"
	fi
done
# A gzip output's failed write is told as any other's, not in zlib's
# words: through a link to /dev/full, a small trace fails as zlib ends
# it, a larger one while it is written (the full disk below, when root).
ln -s /dev/full "$work/full.gz"
while read -r name fmt bundle; do
	expect_re "gz-write-fails-$name" 1 "^mtrace-user: $work/full\.gz: write failed: No space left on device\$" \
		"$bin" decode -q -f "$fmt" -o "$work/full.gz" "$bundle"
done <<EOF
perfetto-at-end perfetto $corpus/sample-zstd.mtrace
json-at-end json $corpus/sample-zstd.mtrace
json-while-written json $work/w.mtrace
text text $corpus/sample-zstd.mtrace
svg svg $corpus/sample-zstd.mtrace
EOF
expect_re text-stdout-write-fails 1 "^mtrace-user: standard output: write failed: No space left on device\$" \
	sh -c '"$1" decode -q -f text "$2" >/dev/full' sh "$bin" "$corpus/sample-zstd.mtrace"
# The mode of a replaced file is kept; a symlinked output replaces its target.
echo old >"$work/mode.pftrace"
chmod 640 "$work/mode.pftrace"
ln -s mode.pftrace "$work/link.pftrace"
if "$bin" decode -q -o "$work/link.pftrace" "$corpus/sample-zstd.mtrace" 2>/dev/null &&
	[ -L "$work/link.pftrace" ] && [ "$(stat -c %a "$work/mode.pftrace")" = 640 ] &&
	! grep -qx old "$work/mode.pftrace"; then
	pass replace-keeps-mode-and-link
else
	fail replace-keeps-mode-and-link "$(ls -l "$work/mode.pftrace" "$work/link.pftrace")"
fi
# A .gz output reports the size on disk, and the size before compression
# (and its one event as one).
out=$("$bin" decode -o "$work/t.pftrace.gz" "$corpus/sample-zstd.mtrace" 2>&1)
size=$(stat -c %s "$work/t.pftrace.gz")
if grep -q "wrote $work/t.pftrace.gz: 1 event, $size bytes ([0-9]* before compression)" <<<"$out"; then
	pass gz-real-size
else
	fail gz-real-size "file has $size bytes: $out"
fi
# So does every format written to a file: its size, and the size before
# compression when there was any.
for fmt in text svg; do
	for name in "t.$fmt" "t.$fmt.gz"; do
		out=$("$bin" decode -f $fmt -o "$work/$name" "$corpus/sample-zstd.mtrace" 2>&1)
		size=$(stat -c %s "$work/$name")
		want="wrote $work/$name: $size bytes"
		[ "$name" = "t.$fmt" ] || want="$want ($(gunzip -c "$work/$name" | wc -c) before compression)"
		if grep -qxF "mtrace-user: $want" <<<"$out"; then
			pass "written-size-$name"
		else
			fail "written-size-$name" "no '$want' in: $out"
		fi
	done
done

# An output FIFO nobody reads yet: the open waits, said in one line while
# no reader is there, and the reader that comes gets the whole output.
# Each way outputs are opened: the bundle writer (convert), the trace
# writer (Perfetto) and stdio (text).
fifo=$work/out.fifo
waiting="mtrace-user: waiting for a reader on $fifo (a FIFO nobody reads yet; Ctrl-C to stop)"
# start_to_fifo CMD...: CMD started ($pid) on a new $fifo; 0 once it says
# it waits, 1 when it has not after 10 s.
start_to_fifo() {
	rm -f "$fifo"
	mkfifo "$fifo"
	"$@" >"$work/fifo-out.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 200); do
		grep -qxF "$waiting" "$work/fifo-out.log" && return 0
		sleep 0.05
	done
	return 1
}
# to_fifo NAME CHECK CMD...: CMD says it waits, then ends with status 0
# once read; CHECK FILE judges what was read.
to_fifo() {
	local name=$1 check=$2 rc
	shift 2
	start_to_fifo "$@" && pass "output-fifo-says-waiting-$name" ||
		fail "output-fifo-says-waiting-$name" "no notice after 10 s: $(cat "$work/fifo-out.log")"
	timeout 20 cat "$fifo" >"$work/from-fifo"
	timeout 20 tail --pid=$pid -f /dev/null
	wait $pid
	rc=$?
	if [ $rc -eq 0 ] && $check "$work/from-fifo"; then
		pass "output-fifo-$name"
	else
		fail "output-fifo-$name" "exit $rc: $(cat "$work/fifo-out.log")"
	fi
}
is_bundle() { "$bin" bundle-info "$1" >/dev/null 2>&1; }
same_trace() { cmp -s "$1" "$work/direct.pftrace"; }
same_text() { cmp -s "$1" "$work/direct.txt"; }
"$bin" export -p "$work/fifo.data" "$corpus/sample-zstd.mtrace" >/dev/null 2>&1
"$bin" decode -q -o "$work/direct.pftrace" "$corpus/sample-zstd.mtrace" 2>/dev/null
"$bin" decode -q -f text -o "$work/direct.txt" "$corpus/sample-zstd.mtrace" 2>/dev/null
to_fifo convert is_bundle "$bin" convert -o "$fifo" "$work/fifo.data"
to_fifo perfetto same_trace "$bin" decode -q -o "$fifo" "$corpus/sample-zstd.mtrace"
to_fifo text same_text "$bin" decode -q -f text -o "$fifo" "$corpus/sample-zstd.mtrace"
# Ctrl-C ends the wait (SIGINT restored as for ctrl-c-keeps-old).
start_to_fifo python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
	"$bin" convert -o "$fifo" "$work/fifo.data"
kill -INT $pid
timeout 20 tail --pid=$pid -f /dev/null
wait $pid
rc=$?
[ $rc -eq 130 ] && pass output-fifo-ctrl-c || fail output-fifo-ctrl-c "exit $rc: $(cat "$work/fifo-out.log")"

# ---- 3. record validates before arming or launching -------------------------
rm -f "$work/marker"
for form in record top; do
	if [ $form = record ]; then cmd=("$bin" record); else cmd=("$bin"); fi
	mkdir "$work/$form"
	out=$(cd "$work/$form" && "${cmd[@]}" --trigger uprobe:/nonexistent:fn -- touch "$work/marker" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q "trigger 'uprobe:/nonexistent:fn': cannot open /nonexistent" <<<"$out" &&
		! grep -q module <<<"$out" && [ ! -e "$work/marker" ] && [ -z "$(ls -A "$work/$form")" ]; then
		pass "missing-trigger-file-first-$form"
	else
		fail "missing-trigger-file-first-$form" "exit $rc, marker $([ -e "$work/marker" ] && echo created || echo absent): $out"
	fi
done
expect missing-symbol 1 "function 'no_such_fn' not found in /bin/true" \
	"$bin" record -t uprobe:/bin/true:no_such_fn -- /bin/true
expect missing-command 1 "cannot run 'no-such-command-xyz': command not found in PATH" \
	"$bin" record -- no-such-command-xyz
expect command-is-directory 1 "cannot run '$work': it is a directory" \
	"$bin" record --dry-run -- "$work"
expect output-is-command 2 "output /bin/true is the input /bin/true itself" \
	"$bin" record -o /bin/true -- /bin/true
expect trace-output-is-trigger-file 2 "output $programs/recursion is the input" \
	"$bin" -o "$programs/recursion" -t "uprobe:$programs/recursion:main" -- true
ln -sf "$programs/recursion" "$work/b.mtrace.pftrace"
expect trace-output-links-to-trigger-file 2 "is the input $programs/recursion itself" \
	"$bin" -o "$work/b.mtrace.pftrace" -t "uprobe:$programs/recursion:main" -- true
rm -f "$work/b.mtrace.pftrace"
# A program or library named as an output (here a copy of one, standing
# for the libc or the program a process runs through env or a shell).
cp "$programs/recursion" "$work/some-program"
cp "$work/some-program" "$work/some-program.orig"
expect output-is-a-program 2 "output $work/some-program is a program or library (an ELF file)" \
	"$bin" record --dry-run -o "$work/some-program" -- env "$work/some-program"
expect trace-output-is-a-program 2 "output $work/some-program is a program or library" \
	"$bin" --dry-run -o "$work/some-program" -- true
expect decode-output-is-a-program 2 "output $work/some-program is a program or library" \
	"$bin" decode -o "$work/some-program" "$work/b.mtrace"
if cmp -s "$work/some-program" "$work/some-program.orig"; then
	pass output-program-kept
else
	fail output-program-kept "the program named as an output changed"
fi
# The trace and the kept bundle, spelt two ways before either exists.
expect keep-bundle-is-trace-spelt-otherwise 2 "the same file as the Perfetto trace" \
	"$bin" --dry-run -o "$work/new.pftrace" --keep-bundle "$work/./new.pftrace" -- true
expect output-dir-missing 1 "cannot create a file in /nonexistent-dir" \
	"$bin" record -o /nonexistent-dir/x.mtrace -- /bin/true
expect dead-pid 1 "process 2147483646 does not exist" "$bin" record -p 2147483646
expect pid-self 1 "is this mtrace-user itself" sh -c 'exec "$0" record --dry-run -p $$' "$bin"
expect pid-twice 2 "-p given twice" "$bin" record --dry-run -p 1 -p 2
# A tid= filter on another process's thread could never fire.
expect tid-filter-other-process 1 "thread 1 is one of process 1, not of the command" \
	"$bin" record --dry-run -t "uprobe:$programs/recursion:fib,tid=1" -- "$programs/recursion"
# A child that exited and was not reaped yet: a zombie, nothing to trace.
out=$(python3 -c 'import subprocess, sys, time
child = subprocess.Popen(["true"])
time.sleep(0.5)
r = subprocess.run([sys.argv[1], "record", "--dry-run", "-p", str(child.pid)],
                   capture_output=True, text=True)
print(r.returncode, r.stderr)' "$bin" 2>&1)
if grep -q '^1 .*has exited: a zombie' <<<"$out"; then
	pass pid-zombie
else
	fail pid-zombie "$out"
fi
# -p is checked before anything is armed, in a dry run too: a thread id
# names its process, a kernel thread has no user code.
python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(60,)).start()' &
multi=$!
tid=
for _ in $(seq 100); do
	tid=$(ls "/proc/$multi/task" 2>/dev/null | grep -vx "$multi" | head -1)
	[ -n "$tid" ] && break
	sleep 0.1
done
expect pid-is-thread 1 "$tid is a thread of process $multi: give -p $multi" \
	"$bin" record --dry-run -p "$tid"
kill "$multi" 2>/dev/null
kthread=$(for s in /proc/[0-9]*/stat; do
	awk '{ sub(/.*\) /, ""); if (int($7 / 2097152) % 2) { print FILENAME; exit } }' "$s" 2>/dev/null
done | head -1 | cut -d/ -f3)
if [ -n "$kthread" ]; then
	expect pid-is-kernel-thread 1 "process $kthread ($(cat "/proc/$kthread/comm")) is a kernel thread: it runs no user code to trace; add --kernel" \
		"$bin" record --dry-run -p "$kthread"
	expect pid-kernel-thread-with-kernel 0 "would trace process $kthread" \
		"$bin" record --dry-run --kernel -p "$kthread"
else
	echo "SKIP $suite/pid-is-kernel-thread: no kernel thread visible in /proc"
fi
if [ ! -e /sys/bus/event_source/devices/kprobe ]; then
	expect kprobe-unsupported 1 "this kernel has no kprobes" "$bin" record -t kprobe:do_sys_open -- /bin/true
else
	expect kprobe-no-function 1 "the kernel has no function 'no_such_kernel_fn_xyz'" \
		"$bin" record -t kprobe:no_such_kernel_fn_xyz -- /bin/true
fi
out=$("$bin" record --dry-run -o "$work/d.mtrace" -t "uprobe:$programs/recursion:fib,tid=4000007" -- touch "$work/marker" 2>&1)
rc=$?
addr=$(nm "$programs/recursion" | awk '$3 == "fib" { print $1 }' | sed 's/^0*//')
if [ $rc -eq 0 ] && grep -q "dry run: nothing is armed, launched or written" <<<"$out" &&
	grep -q "would run /usr/bin/touch" <<<"$out" &&
	grep -q "$programs/recursion, fib at 0x$addr (file offset 0x[0-9a-f]*), thread 4000007 only" <<<"$out" &&
	grep -q "to $work/d.mtrace (worst case" <<<"$out" &&
	[ ! -e "$work/marker" ] && [ ! -e "$work/d.mtrace" ]; then
	pass dry-run
else
	fail dry-run "exit $rc (fib at 0x$addr): $out"
fi

# ---- 3b. standard output holds data only, and never binary on a terminal ---
"$ptgen" -o "$work/s.mtrace" -- "$programs/recursion" >/dev/null 2>&1 ||
	fail stdout-fixture "the PT generator failed"
# on_tty CMD...: runs CMD with a terminal (script(1)) as its standard output.
on_tty() { script -qec "$(printf '%q ' "$@")" /dev/null | head -c 600 | cat -v; }
if command -v script >/dev/null; then
	expect decode-binary-to-terminal 2 "not writing a Perfetto trace to the terminal" \
		on_tty "$bin" decode -o - "$work/s.mtrace"
	expect record-bundle-to-terminal 2 "not writing a snapshot bundle to the terminal" \
		on_tty "$bin" record -o - -- touch "$work/tty-marker"
	expect trace-to-terminal 2 "not writing a Perfetto trace to the terminal" \
		on_tty "$bin" -o - -- touch "$work/tty-marker"
	# A terminal named as the output, not standard output: once written to.
	expect decode-binary-to-dev-tty 2 "not writing a Perfetto trace to the terminal /dev/tty" \
		on_tty "$bin" decode -o /dev/tty "$work/s.mtrace"
	expect record-bundle-to-dev-tty 2 "not writing a snapshot bundle to the terminal /dev/tty" \
		on_tty "$bin" record -o /dev/tty -- touch "$work/tty-marker"
	# A pseudo-terminal by its name, standard output elsewhere.
	expect_re decode-binary-to-pty 2 "not writing a Perfetto trace to the terminal /dev/pts/[0-9]+" \
		on_tty bash -c 't=$(tty) && exec "$0" decode -o "$t" "$1" >/dev/null' "$bin" "$work/s.mtrace"
	# Text is for terminals.
	script -qec "$(printf '%q ' "$bin" decode -q -f text -o /dev/tty "$work/s.mtrace"); echo rc=\$?" \
		/dev/null >"$work/tty.txt" 2>&1
	if grep -q '^rc=0' "$work/tty.txt" && grep -q ' B ' "$work/tty.txt"; then
		pass text-to-dev-tty
	else
		fail text-to-dev-tty "$(tail -c 300 "$work/tty.txt")"
	fi
	if [ -e "$work/tty-marker" ]; then
		fail terminal-refused-first "the target ran before the output was refused"
	else
		pass terminal-refused-first
	fi
else
	fail decode-binary-to-terminal "script(1) is missing (package bsdutils)"
fi
# Decoded to a pipe: the same bytes as to a file, the summary on stderr.
if "$bin" decode -o - "$work/s.mtrace" 2>"$work/s.err" | cat >"$work/piped.pftrace" &&
	"$bin" decode -q -o "$work/file.pftrace" "$work/s.mtrace" &&
	cmp -s "$work/piped.pftrace" "$work/file.pftrace" &&
	grep -q '^mtrace-user: wrote standard output: ' "$work/s.err"; then
	pass decode-to-pipe
else
	fail decode-to-pipe "$(head -c 300 "$work/s.err")"
fi
expect svg-to-pipe-named 0 "wrote standard output" \
	bash -c '"$0" decode -f svg -o - "$1" >/dev/null' "$bin" "$work/s.mtrace"
# perf.data is read by seeking: only a file holds it, and a refused or
# failed export leaves no symfs behind.
out=$(cd "$work" && "$bin" export -p - s.mtrace 2>&1)
rc=$?
if [ $rc -eq 2 ] && grep -q "name a file, not standard output" <<<"$out" &&
	[ ! -e "$work/-.symfs" ]; then
	pass export-to-stdout
else
	fail export-to-stdout "exit $rc: $out; $(ls "$work")"
fi
mkfifo "$work/f.data"
expect export-onto-fifo 2 "f.data is not a regular file" \
	"$bin" export -p "$work/f.data" "$work/s.mtrace"
if [ -e "$work/f.data.symfs" ]; then
	fail export-onto-fifo-no-symfs "$work/f.data.symfs was made"
else
	pass export-onto-fifo-no-symfs
fi
# Several snapshots each go to a file named after -o: not "--1", not /dev/null-1.
expect snapshots-to-stdout 2 "-o - with --snapshots 2: each snapshot goes to a file named after it" \
	"$bin" record -n 2 -o - -- touch "$work/n-marker"
expect snapshots-to-device 2 "-o /dev/null with --snapshots 3: each snapshot goes to a file" \
	"$bin" record -n 3 -o /dev/null -- touch "$work/n-marker"
if [ -e "$work/n-marker" ] || [ -e /dev/null-1 ] || ls -A "$work" | grep -q '^--1'; then
	fail snapshots-refused-first "the target ran or a numbered file was made"
else
	pass snapshots-refused-first
fi
# Every output a capture will write is checked before it starts: the
# trace beside a kept bundle, and the longest of the numbered names.
expect trace-dir-missing-keep-bundle 1 "cannot create a file in $work/nodir for $work/nodir/t.pftrace" \
	"$bin" --dry-run --keep-bundle "$work/k.mtrace" -o "$work/nodir/t.pftrace" -- true
long=$(printf 'n%.0s' {1..253})
expect numbered-name-too-long 1 "output file name too long (256 bytes, at most 255 in $work)" \
	"$bin" record --dry-run -n 10 -o "$work/$long" -- true
expect numbered-name-fits 0 "dry run: nothing is armed" \
	"$bin" record --dry-run -n 9 -o "$work/$long" -- true
out=$("$bin" record --dry-run -o - -- /bin/true 2>&1)
if grep -q "to standard output (worst case [0-9.]* MiB each)\$" <<<"$out"; then
	pass dry-run-to-stdout
else
	fail dry-run-to-stdout "$out"
fi

# ---- 4. missing code is told, with its own exit status ----------------------
mkdir -p "$work/app" "$work/moved" "$work/root/$work/app"
cp "$programs/threads" "$work/app/threads"
if (cd "$work/app" && "$ptgen" --cpus 2 -o "$work/thr.mtrace" -- ./threads) >/dev/null 2>&1; then
	expect all-present 0 "3 threads" "$bin" decode -o "$work/t.pftrace" "$work/thr.mtrace"
	mv "$work/app/threads" "$work/moved/threads"
	out=$("$bin" decode -q -o "$work/t.pftrace" "$work/thr.mtrace" 2>&1)
	rc=$?
	if [ $rc -eq 3 ] && grep -q "missing code: 1 mapping had no usable binary" <<<"$out" &&
		grep -q "$work/app/threads: no such file, and no copy in the bundle" <<<"$out" &&
		grep -q "2 of the bundle's 3 threads have no decoded code" <<<"$out" &&
		grep -q "stretch.* of code without a binary, between" <<<"$out"; then
		pass missing-binary-exit-3
	else
		fail missing-binary-exit-3 "exit $rc: $out"
	fi
	expect allow-missing 0 "accepted with --allow-missing" \
		"$bin" decode -q --allow-missing -o "$work/t.pftrace" "$work/thr.mtrace"
	expect path-map 0 "3 threads" \
		"$bin" decode --path-map "$work/app=$work/moved" -o "$work/t.pftrace" "$work/thr.mtrace"
	cp "$work/moved/threads" "$work/root/$work/app/threads"
	expect symfs 0 "3 threads" \
		"$bin" decode --symfs "$work/root" -o "$work/t.pftrace" "$work/thr.mtrace"
	# A relative --symfs is taken from the working directory, as perf's is.
	expect symfs-relative 0 "3 threads" \
		env -C "$work" "$bin" decode --symfs root -o t.pftrace thr.mtrace
	mv "$work/moved/threads" "$work/app/threads"
	expect embedded-only-says-not-embedded 3 "$work/app/threads: not embedded in the bundle (--embedded-only ignores local files)" \
		"$bin" decode -q --embedded-only -o "$work/t.pftrace" "$work/thr.mtrace"
else
	fail missing-binary-exit-3 "ptgen could not trace the threads program"
fi
expect bad-path-map 2 "--path-map wants OLD=NEW with two absolute paths, not 'a=b'" \
	"$bin" decode --path-map a=b "$work/thr.mtrace"
# Places to look that do not exist are typos, not a silent fall-back to
# the recorded paths.
expect path-map-missing 2 "--path-map $work/nowhere: No such file or directory" \
	"$bin" decode --path-map "$work/app=$work/nowhere" "$work/thr.mtrace"
expect symfs-missing 2 "--symfs $work/nowhere: No such file or directory" \
	"$bin" decode --symfs "$work/nowhere" "$work/thr.mtrace"
expect symfs-not-dir 2 "--symfs $work/thr.mtrace: not a directory" \
	"$bin" decode --symfs "$work/thr.mtrace" "$work/thr.mtrace"
expect convert-symfs-missing 2 "--symfs $work/nowhere: No such file or directory" \
	"$bin" convert --symfs "$work/nowhere" -o "$work/c.mtrace" "$work/x.data"
expect convert-buildid-dir-missing 2 "--buildid-dir $work/nowhere: No such file or directory" \
	"$bin" convert --buildid-dir "$work/nowhere" -o "$work/c.mtrace" "$work/x.data"

# ---- 5. inputs: -, pipes, FIFOs, decompression cap --------------------------
expect stdin 0 "wrote $work/s.pftrace" sh -c "\"$bin\" decode -o \"$work/s.pftrace\" - <\"$corpus/sample-zstd.mtrace\""
expect pipe 0 "wrote $work/s.pftrace" sh -c "cat \"$corpus/sample-zstd.mtrace\" | \"$bin\" decode -o \"$work/s.pftrace\" -"
expect bundle-info-stdin 0 "standard input: mtrace bundle format" \
	sh -c "\"$bin\" bundle-info - <\"$corpus/sample-zstd.mtrace\""
mkfifo "$work/fifo"
"$bin" decode -o "$work/f.pftrace" "$work/fifo" >"$work/fifo.out" 2>&1 &
pid=$!
sleep 1.5
if grep -q "waiting for data on $work/fifo" "$work/fifo.out"; then
	pass fifo-says-waiting
else
	fail fifo-says-waiting "no notice after 1.5 s: $(cat "$work/fifo.out")"
fi
cat "$corpus/sample-zstd.mtrace" >"$work/fifo"
timeout 20 tail --pid=$pid -f /dev/null
wait $pid
rc=$?
[ $rc -eq 0 ] && grep -q "wrote $work/f.pftrace" "$work/fifo.out" && pass fifo-input ||
	fail fifo-input "exit $rc: $(cat "$work/fifo.out")"
# A FIFO nobody writes to: the open itself never blocks (the wait is in poll, with a notice).
mkfifo "$work/fifo2"
timeout 3 "$bin" bundle-info "$work/fifo2" >"$work/fifo2.out" 2>&1
grep -q "waiting for data on $work/fifo2" "$work/fifo2.out" && pass fifo-open-no-block ||
	fail fifo-open-no-block "$(cat "$work/fifo2.out")"
# "-" with a terminal as standard input: told at once, not a silent wait
# for an end of file (python3 gives the command a pseudo-terminal).
for cmd in decode report bundle-info; do
	out=$(python3 - "$bin" "$cmd" <<'PY'
import os, subprocess, sys
_, tty = os.openpty()
p = subprocess.Popen([sys.argv[1], sys.argv[2], "-"], stdin=tty,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    _, err = p.communicate(timeout=10)
    print(p.returncode, err.decode().strip())
except subprocess.TimeoutExpired:
    p.kill()
    print("waited 10 s")
PY
)
	if [ "$out" = "1 mtrace-user: standard input is a terminal: pipe a bundle into it or name the bundle's file" ]; then
		pass "stdin-terminal-$cmd"
	else
		fail "stdin-terminal-$cmd" "$out"
	fi
done
expect directory-input 1 "$work: a directory without a file 'data': not a perf.data directory (perf record --kcore's), nor a bundle" "$bin" decode "$work"
expect max-decompressed 1 "more than the limit of 1024 (--max-decompressed SIZE raises it)" \
	"$bin" decode --max-decompressed 1K -o "$work/x.pftrace" "$corpus/sample-zstd.mtrace"
expect bad-max-decompressed 2 "--max-decompressed: invalid size 'lots'" \
	"$bin" decode --max-decompressed lots "$corpus/sample-zstd.mtrace"
# A size of 0 once printed the uninitialised error buffer.
expect_re zero-max-decompressed 2 "^mtrace-user: --max-decompressed wants a size above 0, not '0'\$" \
	"$bin" decode --max-decompressed 0 "$corpus/sample-zstd.mtrace"

# ---- 6. errors: one prefix, one line, the real cause -------------------------
expect_re no-errno-after-success 1 '^mtrace-user: .*future-minor.mtrace: the bundle has no pt-config section: it cannot be decoded$' \
	"$bin" decode -o "$work/x.pftrace" "$corpus/future-minor.mtrace"
expect bundle-info-flags-reject 1 "decode: refused: the bundle has no pt-config section" \
	"$bin" bundle-info "$corpus/future-minor.mtrace"
expect bundle-info-decodable 0 "decode: possible" "$bin" bundle-info "$corpus/sample-zstd.mtrace"
for c in "decode --bogus x" "record --bogus" "--bogus" "bundle-info --bogus" "decode -o" "record -p"; do
	# shellcheck disable=SC2086
	out=$("$bin" $c 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q '^mtrace-user: ' <<<"$out" &&
		! grep -q usage <<<"$out"; then
		pass "one-line-usage-error:${c// /_}"
	else
		fail "one-line-usage-error:${c// /_}" "exit $rc: $out"
	fi
done
out=$("$bin" decode -o "$work/x.pftrace" "$corpus/sample-zstd.mtrace" 2>&1)
if ! grep -qv '^mtrace-user: ' <<<"$out"; then pass one-prefix; else fail one-prefix "$out"; fi

# ---- 7. zero instructions are explained --------------------------------------
expect zero-insns-explained 0 "no instructions decoded: none of the 11256 bytes of PT holds a sync point (PSB)" \
	"$bin" decode -o "$work/x.pftrace" "$corpus/sample-raw.mtrace"
