#!/bin/bash
# SPDX-License-Identifier: MIT
# mtrace-user's command-line surface: help, version, and bad invocations.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${O:-$top/build}/san/mtrace-user

suite=cli
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

expect_re version 0 "^mtrace-user $(cat "$top/VERSION")\$" "$bin" --version
expect_re help 0 '^usage: mtrace-user' "$bin" --help
expect_re no-args 2 '^usage: mtrace-user' "$bin"
expect_re unknown-command 2 "unknown command 'frobnicate' \(see" "$bin" frobnicate
# `help [COMMAND]` as git and perf take it; a near miss is named.
expect_re help-command 0 '^usage: mtrace-user' "$bin" help
expect_re help-decode 0 '^usage: mtrace-user decode ' "$bin" help decode
expect_re help-help 0 '^usage: mtrace-user' "$bin" help help
expect_re help-unknown 2 "unknown command 'decod': did you mean 'decode'\?" "$bin" help decod
expect_re help-two 2 "help takes one command" "$bin" help decode report
expect_re typo-command 2 "unknown command 'recrod': did you mean 'record'\?" "$bin" recrod -- true
expect_re prefix-command 2 "unknown command 'conv': did you mean 'convert'\?" "$bin" conv x.data
expect_re ambiguous-prefix 2 "unknown command 're': did you mean 'record' or 'report'\?" "$bin" re
expect_re far-command 2 "^mtrace-user: unknown command 'frob' \(see" "$bin" frob
expect_re program-as-command 2 "to trace a program, 'mtrace-user -- ./app'" "$bin" ./app
# A bad option is named as typed or as the option it abbreviates, in every
# command (a value given to an option that takes none once printed
# getopt's code for it: '-\x01').
while IFS='|' read -r name cmd args msg; do
	# shellcheck disable=SC2086
	expect_re "option-$name" 2 "^mtrace-user: $msg \(see 'mtrace-user ${cmd:+$cmd }--help'\)\$" \
		"$bin" $cmd $args
done <<'EOF'
value-decode|decode|--allow-missing=yes x.mtrace|option '--allow-missing' takes no value
value-decode-binary|decode|--embedded-only=1 x.mtrace|option '--embedded-only' takes no value
value-decode-keep-open|decode|--keep-open=1 x.mtrace|option '--keep-open' takes no value
value-decode-short-too|decode|--quiet=1 x.mtrace|option '--quiet' takes no value
value-decode-abbreviated|decode|--allow=yes x.mtrace|option '--allow-missing' takes no value
value-help|decode|--help=x|option '--help' takes no value
value-report|report|--json=1 x.mtrace|option '--json' takes no value
value-export|export|--kcore=1 x.mtrace|option '--kcore' takes no value
value-record|record|--kernel=1 -- true|option '--kernel' takes no value
value-top-level||--dry-run=1 -- true|option '--dry-run' takes no value
ambiguous-decode|decode|--s chart x.mtrace|option '--s' is ambiguous: --svg, --symfs
ambiguous-record|record|--p=1 -- true|option '--p' is ambiguous: --pid, --psb-freq, --portable
needs-value-abbreviated|decode|--outp|option '--output' needs a value
needs-value-short|decode|-qo|option '-o' needs a value
unknown-long|convert|--bogus=1 x.data|unknown option '--bogus'
unknown-short-in-group|decode|--quiet -zq x.mtrace|unknown option '-z'
EOF
ptgen=${O:-$top/build}/rel/tests/ptgen/ptgen
prog=${O:-$top/build}/san/tests/ptgen/programs/recursion

# This file's own snapshot: a generated one, frozen inside fib().
fixture=$(mktemp -d)
snap=$fixture/fib.mtrace
"$ptgen" -o "$snap" --trigger fib:20 -- "$prog" >/dev/null 2>&1 ||
	echo "FAIL cli/fixture: could not generate $snap"

# bundle-info's count is the number of sections it lists.
if info=$("$bin" bundle-info "$snap" 2>&1); then
	listed=$(grep -cE '^ +[0-9]+  [a-z-]+ ' <<<"$info")
	if grep -qE "format 1\.0, $listed sections\$" <<<"$info" &&
		grep -qE '^ +[0-9]+  trigger ' <<<"$info"; then
		echo "PASS cli/bundle-info"
	else
		echo "FAIL cli/bundle-info: header disagrees with the $listed sections listed: $info"
	fi
else
	echo "FAIL cli/bundle-info: exit status $?: $info"
fi
expect_re bundle-info-missing 1 'nonexistent' "$bin" bundle-info /nonexistent/x.mtrace
# bundle-info parses its command line as decode does: '--' ends the
# options (a file may begin with '-'), options go anywhere, --help wins.
cp "$snap" "$fixture/-dash.mtrace"
expect_re bundle-info-dashdash 0 '^-dash\.mtrace: mtrace bundle format' \
	sh -c 'cd "$1" && "$2" bundle-info -- -dash.mtrace' sh "$fixture" "$bin"
expect_re bundle-info-dashdash-stdin 0 '^standard input: mtrace bundle format' \
	sh -c '"$1" bundle-info -- - <"$2"' sh "$bin" "$snap"
expect_re bundle-info-option-after-file 2 "^mtrace-user: unknown option '--bogus' \(see 'mtrace-user bundle-info --help'\)\$" \
	"$bin" bundle-info "$snap" --bogus
expect_re bundle-info-help-with-file 0 '^usage: mtrace-user bundle-info' "$bin" bundle-info --help "$snap"
expect bundle-info-two 2 "bundle-info takes one bundle, not also '$snap'" "$bin" bundle-info "$snap" "$snap"
expect doctor-option 2 "unknown option '--bogus' (see 'mtrace-user doctor --help')" "$bin" doctor --bogus
# An empty file name (an unset variable in a script) is bad usage, named,
# for every file a command takes: no file is looked for or written.
while IFS='|' read -r name what args; do
	eval "set -- $args"
	expect_re "empty-name-$name" 2 "^mtrace-user: empty file name for $what\$" "$bin" "$@"
done <<EOF
decode|the bundle|decode ''
decode-output|-o|decode -o '' '$snap'
decode-text-output|-o|decode -f text -o '' '$snap'
decode-symfs|--symfs|decode --symfs '' '$snap'
bundle-info|the bundle|bundle-info ''
report|a bundle|report '$snap' ''
export-output|--perf-data|export -p '' '$snap'
export-symfs|--symfs|export -p '$fixture/x.data' --symfs '' '$snap'
export|the bundle|export -p '$fixture/x.data' ''
convert-output|-o|convert -o '' '$fixture/x.data'
convert|the perf.data|convert -o '$fixture/x.mtrace' ''
convert-buildid-dir|--buildid-dir|convert --buildid-dir '' -o '$fixture/x.mtrace' '$fixture/x.data'
record-output|-o|record --dry-run -o '' -- true
top-level-output|-o|--dry-run -o '' -- true
top-level-keep-bundle|--keep-bundle|--dry-run --keep-bundle '' -- true
EOF

# decode without -o writes trace.pftrace in the working directory.
work=$(mktemp -d)
if (cd "$work" && "$bin" decode -q "$snap") >/dev/null 2>&1 &&
	[ -s "$work/trace.pftrace" ]; then
	echo "PASS cli/decode-default-output"
else
	echo "FAIL cli/decode-default-output: no trace.pftrace written by 'decode BUNDLE'"
fi
# -q: neither statistics nor the "wrote" line, which the default prints.
if (cd "$work" && "$bin" decode -q -o q.pftrace "$snap" 2>"$work/q.err") &&
	[ -s "$work/q.pftrace" ] && [ ! -s "$work/q.err" ] &&
	(cd "$work" && "$bin" decode -o v.pftrace "$snap" 2>"$work/v.err") &&
	grep -q '^mtrace-user: wrote v\.pftrace: ' "$work/v.err"; then
	echo "PASS cli/decode-quiet"
else
	echo "FAIL cli/decode-quiet: -q printed: $(cat "$work/q.err"); without: $(head -c 300 "$work/v.err")"
fi
rm -rf "$work"

# Calls still running at the snapshot's end: ended (truncated) by default,
# left open with --keep-open (the fixture is frozen inside fib()).
work=$(mktemp -d)
if "$bin" decode -q -f json -o "$work/closed.json" "$snap" >/dev/null 2>&1 &&
	"$bin" decode -q --keep-open -f json -o "$work/open.json" "$snap" >/dev/null 2>&1; then
	counts() { python3 -c 'import json,sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
print(sum(e.get("ph") == "B" for e in ev), sum(e.get("ph") == "E" for e in ev))' "$1"; }
	read -r cb ce < <(counts "$work/closed.json")
	read -r ob oe < <(counts "$work/open.json")
	if [ "$cb" -eq "$ce" ] && [ "$ob" -eq "$cb" ] && [ "$oe" -lt "$ob" ]; then
		echo "PASS cli/decode-keep-open"
	else
		echo "FAIL cli/decode-keep-open: begins/ends $cb/$ce by default, $ob/$oe with --keep-open"
	fi
else
	echo "FAIL cli/decode-keep-open: could not decode $snap"
fi

# The progress bar: drawn on a terminal (script(1) gives the decode one),
# erased before the summary lines, absent when stderr is not a terminal.
if "$ptgen" --walk "$prog" --insns 2000000 -o "$work/w.mtrace" >/dev/null 2>&1; then
	script -qec "$bin decode -o $work/w.pftrace $work/w.mtrace" /dev/null >"$work/tty.out" 2>&1
	tr '\r' '\n' <"$work/tty.out" >"$work/tty.lines"
	if grep -Eq 'decoding \[#* *\] +[0-9]+% of [0-9.]+ MiB of PT' "$work/tty.lines" &&
		grep -q $'\033\[K.*mtrace-user: wrote' "$work/tty.lines"; then
		echo "PASS cli/decode-progress-tty"
	else
		echo "FAIL cli/decode-progress-tty: $(head -c 600 "$work/tty.out" | cat -v)"
	fi
	if ! "$bin" decode -o "$work/w.pftrace" "$work/w.mtrace" >"$work/pipe.out" 2>&1 ||
		grep -q decoding "$work/pipe.out"; then
		echo "FAIL cli/decode-progress-pipe: a progress bar without a terminal"
	else
		echo "PASS cli/decode-progress-pipe"
	fi
else
	echo "FAIL cli/decode-progress-tty: could not generate a walk"
fi

# A stripped program's own functions are named by its file and address,
# found in its call-frame information: the addresses nm shows for them in
# the unstripped build, where they were one [unknown] region before. The
# generator traces the unstripped build (it starts at main); the decode
# reads the stripped one in its place (same build-id), as a snapshot from
# a machine with stripped binaries decodes.
mkdir -p "$work/strip/bin" "$work/strip/stripped"
cat >"$work/strip/strip.c" <<'EOF'
__attribute__((noinline)) static int leaf(int x) { return x * 7 + 3; }
__attribute__((noinline)) static int middle(int x) { return leaf(x) ^ leaf(x + 1); }
int main(int argc, char **argv) { int s = 0; for (int i = 0; i < 50; i++) s += middle(i + argc); return s == 42 && !argv; }
EOF
if cc -O2 -o "$work/strip/bin/prog" "$work/strip/strip.c" &&
	strip -o "$work/strip/stripped/prog" "$work/strip/bin/prog" &&
	"$ptgen" -o "$work/strip/p.mtrace" -- "$work/strip/bin/prog" >/dev/null 2>&1 &&
	"$bin" decode -q -f text --path-map "$work/strip/bin=$work/strip/stripped" \
		-o "$work/strip/p.txt" "$work/strip/p.mtrace"; then
	missing=
	for fn in leaf middle main; do
		name=$(printf 'prog+0x%x' "0x$(nm "$work/strip/bin/prog" | awk -v f=$fn '$3 == f { print $1 }')")
		awk -v n="$name" '$3 == "B" && $4 == n { found = 1 } END { exit !found }' \
			"$work/strip/p.txt" || missing="$missing $fn ($name)"
	done
	if [ -z "$missing" ] && ! grep -q ' B \[unknown\]' "$work/strip/p.txt"; then
		echo "PASS cli/decode-stripped-functions-named"
	else
		echo "FAIL cli/decode-stripped-functions-named: no slice for$missing: $(head -5 "$work/strip/p.txt")"
	fi
else
	echo "FAIL cli/decode-stripped-functions-named: could not build, trace or decode a stripped program"
fi

# Names from a binary can hold control characters (here an escape that
# clears the screen): decode's text and the report show them as \xNN, and so
# do messages quoting a path.
mkdir -p "$work/strip/renamed"
esc=$'\033'
if objcopy --redefine-sym "middle=mid${esc}[2Jdle" "$work/strip/bin/prog" "$work/strip/renamed/prog" &&
	"$bin" decode -q -f text --path-map "$work/strip/bin=$work/strip/renamed" \
		-o "$work/strip/r.txt" "$work/strip/p.mtrace" &&
	"$bin" report --color always --path-map "$work/strip/bin=$work/strip/renamed" \
		"$work/strip/p.mtrace" >"$work/strip/r.report" 2>&1; then
	if grep -qF ' B mid\x1b[2Jdle' "$work/strip/r.txt" && ! grep -q "$esc" "$work/strip/r.txt" &&
		grep -qF 'mid\x1b[2Jdle' "$work/strip/r.report" &&
		! grep -q "${esc}\[2J" "$work/strip/r.report"; then
		echo "PASS cli/names-with-controls-shown-escaped"
	else
		echo "FAIL cli/names-with-controls-shown-escaped: $(grep -a mid "$work/strip/r.txt" | head -2 | od -c | head -3)"
	fi
else
	echo "FAIL cli/names-with-controls-shown-escaped: could not rename, decode or report"
fi
expect path-with-controls-escaped 1 'no-such\x1b[2J.mtrace' "$bin" decode "$work/no-such${esc}[2J.mtrace"

# Narrowing options: bad values are usage errors, named in one line.
sample=$snap
expect decode-time-bad 2 "--time wants FROM,TO" "$bin" decode --time 5s "$sample"
expect decode-time-mixed 2 "both ends relative to the trigger" "$bin" decode --time T-1ms,5s "$sample"
expect decode-min-duration-bad 2 "--min-duration wants a duration: a number with ns, us, ms or s (e.g. 2ms), not '3parsecs'" "$bin" decode --min-duration 3parsecs "$sample"
expect decode-max-depth-bad 2 "--max-depth wants 1..4096" "$bin" decode --max-depth 0 "$sample"
expect decode-tid-bad 2 "--tid wants numbers" "$bin" decode --tid 12,x "$sample"
expect decode-around-bad 2 "--around-trigger wants a duration" "$bin" decode --around-trigger soon "$sample"
expect decode-function-empty 2 "--function wants a function's name" "$bin" decode --function '' "$sample"
# A .gz name gives gzip in every format, not only Perfetto's.
if "$bin" decode -q -f text -o "$work/t.txt" "$sample" &&
	"$bin" decode -q -f text -o "$work/t.txt.gz" "$sample" &&
	gunzip -c "$work/t.txt.gz" | cmp -s - "$work/t.txt" &&
	"$bin" decode -q -f svg -o "$work/t.svg.gz" "$sample" &&
	gunzip -c "$work/t.svg.gz" | tail -1 | grep -q '^</svg>$'; then
	echo "PASS cli/gz-every-format"
else
	echo "FAIL cli/gz-every-format: $(file "$work/t.txt.gz" "$work/t.svg.gz")"
fi
# A --debug-path directory that is not there: told, unless -q, and decoded.
expect debug-path-missing 0 "warning: --debug-path /nonexistent-dbg: No such file or directory" \
	"$bin" decode --debug-path ":.debug:/nonexistent-dbg" -o "$work/dbg.pftrace" "$sample"
expect report-debug-path-missing 0 "warning: --debug-path /etc/passwd: Not a directory" \
	"$bin" report --debug-path /etc/passwd "$sample"
if out=$("$bin" decode -q --debug-path /nonexistent-dbg -o "$work/dbg.pftrace" "$sample" 2>&1) &&
	[ -z "$out" ]; then
	echo "PASS cli/debug-path-missing-quiet"
else
	echo "FAIL cli/debug-path-missing-quiet: $out"
fi
expect decode-svg-other-format 2 "--svg chart is for --format svg, not --format json" \
	"$bin" decode --format json --svg chart "$sample"
if "$bin" decode -q --svg chart -o "$work/implied.svg" "$sample" &&
	grep -q '<svg' "$work/implied.svg"; then
	echo "PASS cli/decode-svg-implies-format"
else
	echo "FAIL cli/decode-svg-implies-format: $(head -c 100 "$work/implied.svg" 2>&1)"
fi
expect decode-format-bad 2 "unknown format 'pdf' (perfetto, json, text, svg)" "$bin" decode --format pdf "$sample"
# Narrowing to what the bundle does not hold: a mistyped thread or CPU is a
# usage error before anything is decoded, a narrowing that leaves no call
# fails, and either way the user's older output stays as it was.
old=$work/old.pftrace
echo "an older trace" >"$old"
expect decode-tid-absent 2 "--tid 424242: the bundle holds no thread 424242 of the traced process (its threads: " \
	"$bin" decode --tid 424242 -o "$old" "$sample"
expect decode-cpu-absent 2 "--cpu 77: the bundle holds no trace of CPU 77 (its CPUs: 0)" \
	"$bin" decode --cpu 0,77 -o "$old" "$sample"
expect report-cpu-absent 2 "--cpu 77: the bundle holds no trace of CPU 77" "$bin" report --cpu 77 "$sample"
# Among several bundles (whose thread ids differ), one that lacks the thread
# or CPU is named and left out; the others are reported (exit 1).
sample_tid=$("$bin" report --tid 424242 "$sample" 2>&1 | sed -n 's/.*its threads: \([0-9]*\).*/\1/p')
"$ptgen" -o "$work/other.mtrace" -- "$prog" >/dev/null 2>&1
expect decode-function-absent-in-tids 1 "no call of no_such_function (in the threads --tid names)" \
	"$bin" decode --tid "$sample_tid" --function no_such_function -o "$old" "$sample"
out=$("$bin" report --tid "$sample_tid" "$sample" "$work/other.mtrace" 2>&1)
rc=$?
if [ $rc -eq 1 ] &&
	grep -q "^mtrace-user: $work/other.mtrace: --tid $sample_tid: the bundle holds no thread" <<<"$out" &&
	grep -q "^$sample: a window of" <<<"$out"; then
	echo "PASS cli/report-several-tid-absent"
else
	echo "FAIL cli/report-several-tid-absent: exit status $rc: $(head -c 400 <<<"$out")"
fi
# A C++ function is named without its parameters, as a user writes it.
if "$ptgen" --cpus 2 -o "$work/exc.mtrace" -- "$(dirname "$prog")/exceptions" >/dev/null 2>&1; then
	expect decode-function-cxx 0 " B inner(int)" "$bin" decode -q -f text -o - --function inner "$work/exc.mtrace"
	expect decode-function-cxx-part 1 "the trace holds no call of inne" \
		"$bin" decode -q -f text -o - --function inne "$work/exc.mtrace"
	# Or mangled, as nm prints it (inner is static: _ZL): that function
	# only, not another overload.
	expect decode-function-mangled 0 " B inner(int)" \
		"$bin" decode -q -f text -o - --function _ZL5inneri "$work/exc.mtrace"
	expect report-function-mangled 0 "inner(int)" "$bin" report --function _ZL5inneri "$work/exc.mtrace"
	expect decode-function-mangled-other 1 "the trace holds no call of inner(short)" \
		"$bin" decode -q -f text -o - --function _ZL5inners "$work/exc.mtrace"
else
	echo "FAIL cli/decode-function-cxx: ptgen could not trace the exceptions program"
fi
expect decode-duration-too-long 2 "--min-duration 99999999999s: too long" \
	"$bin" decode --min-duration 99999999999s "$sample"
expect decode-function-absent 1 "nothing left to write: the trace holds no call of no_such_function" \
	"$bin" decode --function no_such_function -o "$old" "$sample"
expect decode-window-empty 1 "nothing left to write: the window ends at 1 ns, before the trace's first event at " \
	"$bin" decode -f text --time 0,1 -o "$old" "$sample"
expect decode-min-duration-empty 1 "nothing left to write: no call lasts 1000s or longer" \
	"$bin" decode -f svg --min-duration 1000s -o "$old" "$sample"
expect report-function-absent 1 "nothing left to write: the trace holds no call of no_such_function" \
	"$bin" report --function no_such_function "$sample"
if [ "$(cat "$old")" = "an older trace" ]; then
	echo "PASS cli/narrowed-to-nothing-keeps-output"
else
	echo "FAIL cli/narrowed-to-nothing-keeps-output: $old now holds $(head -c 100 "$old")"
fi
# A stream that is no bundle is refused at its first bytes, not read to
# its end (/dev/zero has none; timeout's status 124 would tell a hang).
expect decode-stream-not-bundle 1 "standard input: not an mtrace bundle (bad magic)" \
	sh -c 'timeout 60 "$1" decode -o "$2" - </dev/zero' sh "$bin" "$old"
# A bundle cut inside its header is truncated, also when its magic is
# whole but its version is not (8 to 11 bytes), from a file or a stream.
for size in 4 8 11; do
	head -c "$size" "$snap" >"$work/cut.mtrace"
	expect "cut-at-$size-file" 1 "$work/cut.mtrace: file header at offset 0: truncated: header needs 40 bytes, file has $size" \
		"$bin" bundle-info "$work/cut.mtrace"
	expect "cut-at-$size-stream" 1 "standard input: file header at offset 0: truncated: header needs 40 bytes, file has $size" \
		sh -c '"$1" bundle-info - <"$2"' sh "$bin" "$work/cut.mtrace"
done
# A named device is refused without being opened (its open can act: a
# watchdog's arms it); the unit test test_named_inputs watches for opens.
expect decode-named-device 1 "/dev/zero is a character device: name a file, or pipe the data into '-'" \
	timeout 60 "$bin" decode -o "$old" /dev/zero
expect convert-named-fifo 1 "a FIFO, not a regular file" \
	sh -c 'mkfifo "$1/convert.fifo" && timeout 60 "$2" convert "$1/convert.fifo" -o "$1/c.mtrace"' \
	sh "$work" "$bin"
expect convert-stdin 2 "convert reads a perf.data file, not standard input" \
	"$bin" convert - -o "$work/c.mtrace"
# A perf.data piped in is named for what it is (its header is read by
# offset, so it is read from a file only).
expect report-perf-data-piped 1 "standard input: not an mtrace bundle: it is a perf.data, which decode and report read from a file" \
	sh -c '"$1" export -p "$2/piped.data" "$3" >/dev/null && cat "$2/piped.data" | "$1" report -' \
	sh "$bin" "$work" "$sample"
expect report-perf-data-redirected 1 "standard input: not an mtrace bundle: it is a perf.data, which decode and report read from a file" \
	sh -c '"$1" report - <"$2/piped.data"' sh "$bin" "$work"
# A directory without a data file is told as what it lacks, by every
# command that reads perf's directories; an empty data file is named.
expect convert-dir-without-data 1 "$work/nodata.dir: a directory without a file 'data': not a perf.data directory" \
	sh -c 'mkdir -p "$1/nodata.dir" && "$2" convert "$1/nodata.dir" -o "$1/c.mtrace"' sh "$work" "$bin"
expect report-dir-without-data 1 "$work/nodata.dir: a directory without a file 'data'" \
	"$bin" report "$work/nodata.dir"
expect decode-dir-empty-data 1 "$work/nodata.dir: data: empty file" \
	sh -c ': >"$1/nodata.dir/data" && "$2" decode "$1/nodata.dir"' sh "$work" "$bin"
# The path once, not twice ("x: cannot open x: ...").
expect convert-missing 1 "mtrace-user: $work/none.data: No such file or directory" \
	"$bin" convert "$work/none.data" -o "$work/c.mtrace"
# A narrowed decode of a walk writes a trace, and fewer events than the whole.
if "$ptgen" --walk "$prog" --insns 20000 -o "$work/n.mtrace" >/dev/null 2>&1 &&
	"$bin" decode -q -f text -o "$work/all.txt" "$work/n.mtrace" &&
	"$bin" decode -q -f text --max-depth 4 --min-duration 20ns -o "$work/some.txt" "$work/n.mtrace" &&
	[ "$(wc -l <"$work/some.txt")" -gt 0 ] &&
	[ "$(wc -l <"$work/some.txt")" -lt "$(wc -l <"$work/all.txt")" ]; then
	echo "PASS cli/decode-narrowed"
else
	echo "FAIL cli/decode-narrowed: $(wc -l "$work"/*.txt 2>&1 | tr '\n' ' ')"
fi
# ptgen --piece: a walk made and generated in pieces decodes to the very
# events of the same walk made whole.
if "$ptgen" --walk "$prog" --insns 200000 --cpus 2 --piece 1000 -o "$work/p.mtrace" >/dev/null 2>&1 &&
	"$ptgen" --walk "$prog" --insns 200000 --cpus 2 --piece 0 -o "$work/p0.mtrace" >/dev/null 2>&1 &&
	"$bin" decode -q -f text -o "$work/p.txt" "$work/p.mtrace" &&
	"$bin" decode -q -f text -o "$work/p0.txt" "$work/p0.mtrace" &&
	[ "$(wc -l <"$work/p.txt")" -gt 1000 ] && cmp -s "$work/p.txt" "$work/p0.txt"; then
	echo "PASS cli/ptgen-walk-pieces"
else
	echo "FAIL cli/ptgen-walk-pieces: $(wc -l "$work"/p*.txt 2>&1 | tr '\n' ' ')"
fi
# report: the same walk as text within 80 columns, and as JSON.
expect report-width-bad 2 "--width wants 60..1000" "$bin" report --width 20 "$work/n.mtrace"
expect report-missing 1 "nonexistent" "$bin" report /nonexistent/x.mtrace
expect_re report-stdin 0 '^standard input: a window of' bash -c "'$bin' report - <'$work/n.mtrace'"
# One bundle of several that cannot be read is told and left out; the
# others are still reported, and the exit status says one failed.
"$bin" report "$work/n.mtrace" /nonexistent/x.mtrace "$work/n.mtrace" >"$work/part.txt" 2>"$work/part.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q '/nonexistent/x.mtrace' "$work/part.err" &&
	[ "$(grep -c '^Slowest calls, per function' "$work/part.txt")" -eq 2 ]; then
	echo "PASS cli/report-one-bundle-bad"
else
	echo "FAIL cli/report-one-bundle-bad: exit $rc, $(head -c 300 "$work/part.err")"
fi
if "$bin" report "$work/n.mtrace" >"$work/report.txt" 2>&1 &&
	grep -q "^Slowest calls, per function" "$work/report.txt" &&
	! awk 'length > 80 { bad = 1 } END { exit !bad }' "$work/report.txt" &&
	! grep -q $'\033' "$work/report.txt" &&
	"$bin" report --json "$work/n.mtrace" "$work/n.mtrace" >"$work/report.json" &&
	"$bin" report --max-depth 3 "$work/n.mtrace" >"$work/report3.txt" &&
	grep -q "^Slowest calls" "$work/report3.txt" &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["snapshots"]) == 2' \
		"$work/report.json"; then
	echo "PASS cli/report"
else
	echo "FAIL cli/report: $(head -c 400 "$work/report.txt")"
fi
rm -rf "$work" "$fixture"
