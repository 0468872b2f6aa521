#!/bin/bash
# SPDX-License-Identifier: MIT
# The perf interop commands: export prints a perf command that works as
# printed, decode and convert read perf.data files, bad ones are refused.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${O:-$top/build}/san/mtrace-user
ptgen=${O:-$top/build}/rel/tests/ptgen/ptgen
prog=${O:-$top/build}/san/tests/ptgen/programs/plt

suite=perfdata
# shellcheck source=tests/lib/expect.sh
. "$top/tests/lib/expect.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
if ! "$ptgen" -o plt.mtrace -- "$prog" >/dev/null 2>&1; then
	echo "FAIL $suite/setup: the PT generator failed"
	exit 0
fi

expect_re export 0 '^  perf script -i out\.data --symfs out\.data\.symfs --itrace=cr' \
	"$bin" export --perf-data out.data plt.mtrace
# Counts of one are said in the singular (one CPU, one thread).
expect_re export-summary 0 '^wrote out\.data: 1 CPU, [0-9]+ bytes of PT, 1 thread, [0-9]+ maps, [0-9]+ switches;$' \
	"$bin" export --perf-data out.data plt.mtrace
expect_re export-usage 2 '^mtrace-user: export needs --perf-data OUT' "$bin" export plt.mtrace
expect_re export-bad-bundle 1 '^mtrace-user: .*not-there' \
	"$bin" export -p x.data not-there.mtrace

# The printed command, run as printed, decodes calls with symbols.
if command -v perf >/dev/null; then
	cmd=$("$bin" export --perf-data out.data plt.mtrace | sed -n 's/^  perf /perf /p')
	out=$(eval "$cmd" 2>&1)
	if grep -Eq 'call +[0-9a-f]+ main => +[0-9a-f]+ ' <<<"$out"; then
		echo "PASS $suite/printed-perf-command"
	else
		echo "FAIL $suite/printed-perf-command: '$cmd' shows no call from main"
	fi
	# perf report samples instructions (every 10th) with the binaries' symbols.
	out=$(perf report -i out.data --symfs out.data.symfs --stdio --itrace=i10 2>&1)
	if grep -Eq '^ +[0-9.]+% .* \[\.\] (main|cmp)' <<<"$out"; then
		echo "PASS $suite/perf-report"
	else
		echo "FAIL $suite/perf-report: no sampled symbol of the program: $(head -c 400 <<<"$out")"
	fi
else
	echo "SKIP $suite/printed-perf-command: perf not installed"
	echo "SKIP $suite/perf-report: perf not installed"
fi

# --kcore: a perf.data directory as perf record --kcore writes (the kernel
# part is tested with kernel bundles in tests/unit/test_perf_judge.c).
expect_re export-kcore-dir 0 '^  perf script -i dir\.data --symfs dir\.data\.symfs --itrace=cr' \
	"$bin" export --kcore --perf-data dir.data plt.mtrace
if [ -f dir.data/data ]; then
	echo "PASS $suite/kcore-dir-layout"
else
	echo "FAIL $suite/kcore-dir-layout: no dir.data/data"
fi
expect_re export-kcore-onto-file 2 'out\.data exists and is not a perf\.data directory' \
	"$bin" export --kcore --perf-data out.data plt.mtrace
expect_re decode-perf-data-dir 0 'wrote dir\.pftrace' \
	"$bin" decode --symfs dir.data.symfs -o dir.pftrace dir.data
expect_re convert-dir 0 '^wrote dirback\.mtrace: 1 CPU, ' \
	"$bin" convert --symfs dir.data.symfs dir.data -o dirback.mtrace
if command -v perf >/dev/null; then
	cmd=$("$bin" export --kcore --perf-data dir.data plt.mtrace | sed -n 's/^  perf /perf /p')
	if grep -Eq 'call +[0-9a-f]+ main => +[0-9a-f]+ ' <<<"$(eval "$cmd" 2>&1)"; then
		echo "PASS $suite/printed-perf-command-dir"
	else
		echo "FAIL $suite/printed-perf-command-dir: '$cmd' shows no call from main"
	fi
else
	echo "SKIP $suite/printed-perf-command-dir: perf not installed"
fi

expect_re decode-perf-data 0 'wrote plt\.pftrace' \
	"$bin" decode --symfs out.data.symfs -o plt.pftrace out.data
expect_re decode-perf-data-summary 0 '^mtrace-user: [0-9]+ bytes of PT from 1 CPU, 1 thread, [0-9]+ instructions, ' \
	"$bin" decode --symfs out.data.symfs -o plt.pftrace out.data
# A perf.data has no trigger: a window around it is refused, not placed at 0.
expect_re report-around-no-trigger 2 '^mtrace-user: out\.data: --around-trigger: there is no trigger' \
	"$bin" report --symfs out.data.symfs --around-trigger 1us out.data
expect_re decode-time-no-trigger 2 '^mtrace-user: out\.data: --time: there is no trigger' \
	"$bin" decode --symfs out.data.symfs -o t.pftrace --time T, out.data
# report reads a perf.data as decode does: the same calls as the bundle's
# (the perf.data has no trigger, so only the functions are compared).
if "$bin" report --json --symfs out.data.symfs out.data >perf.json &&
	"$bin" report --json plt.mtrace >bundle.json &&
	python3 -c 'import json, sys
f = [{x["name"]: (x["calls"], x["self_ns"]) for x in json.load(open(n))["snapshots"][0]["functions"]}
     for n in sys.argv[1:]]
assert f[0] == f[1] and "main" in f[0], f' perf.json bundle.json; then
	echo "PASS $suite/report-perf-data"
else
	echo "FAIL $suite/report-perf-data: $(head -c 300 perf.json)"
fi
expect_re convert 0 '^wrote back\.mtrace: 1 CPU, [0-9]+ bytes of PT, 1 thread, [0-9]+ maps, [0-9]+ switches, 1 binary embedded$' \
	"$bin" convert --symfs out.data.symfs out.data -o back.mtrace
expect_re convert-readable 0 'pt-data' "$bin" bundle-info back.mtrace
expect_re bundle-info-counts 0 '^records: [0-9]+ switches, [0-9]+ maps, 1 thread, 0 modules, 1 file, 0 kernel text ranges$' \
	"$bin" bundle-info back.mtrace
# To a pipe: standard output holds the bundle alone, the summary goes to stderr.
if "$bin" convert --symfs out.data.symfs out.data -o - 2>piped.err | cat >piped.mtrace &&
	"$bin" bundle-info piped.mtrace >/dev/null 2>&1 &&
	grep -q '^mtrace-user: wrote standard output: 1 CPU, ' piped.err; then
	echo "PASS $suite/convert-to-pipe"
else
	echo "FAIL $suite/convert-to-pipe: $(head -c 300 piped.err); $("$bin" bundle-info piped.mtrace 2>&1 | head -c 300)"
fi
# Binaries found nowhere are named, each with why; the bundle is still
# written (it decodes where they are). An empty build-id cache keeps
# ~/.debug out of it.
mkdir -p gone nocache
cp "$prog" gone/plt
if "$ptgen" -o gone.mtrace -- "$work/gone/plt" >/dev/null 2>&1 &&
	"$bin" export -p gone.data gone.mtrace >/dev/null 2>&1; then
	rm -r gone
	expect_re export-missing-binary 0 "^mtrace-user: warning: $work/gone/plt: not embedded in the bundle, and no such file here$" \
		"$bin" export -p gone-again.data gone.mtrace
	# A perf.data's missing code is looked for in perf's cache and a
	# --symfs tree, not in a bundle or by recording again (HOME: no cache).
	expect_re decode-missing-no-copy 3 "^mtrace-user:   $work/gone/plt: no such file, and no copy in perf's build-id cache$" \
		env HOME="$work/nocache" "$bin" decode -f text -o /dev/null gone.data
	expect_re decode-missing-advice 3 '^mtrace-user: traced code could not be decoded \(exit status 3\): find the files with --symfs gone\.data\.symfs \(what mtrace-user export wrote\) or --path-map OLD=NEW, or accept with --allow-missing$' \
		env HOME="$work/nocache" "$bin" decode -f text -o /dev/null gone.data
	expect_re decode-missing-advice-followed 0 'instructions' \
		env HOME="$work/nocache" "$bin" decode -f text -o /dev/null --symfs gone.data.symfs gone.data
	cp gone.data lone.data
	expect_re decode-missing-advice-symfs 3 '^mtrace-user: traced code could not be decoded \(exit status 3\): find the files with --symfs DIR or --path-map OLD=NEW, or accept with --allow-missing$' \
		env HOME="$work/nocache" "$bin" decode -f text -o /dev/null lone.data
	expect_re convert-missing-binary 0 "^mtrace-user: warning: $work/gone/plt: not embedded in the bundle: no such file here, and no copy in the build-id cache nocache$" \
		"$bin" convert --buildid-dir nocache gone.data -o gone-back.mtrace
	mkdir gone
	cp /bin/true gone/plt
	expect_re export-other-build 0 "^mtrace-user: warning: $work/gone/plt: not embedded in the bundle, and the file here has another build-id$" \
		"$bin" export -p gone-again.data gone.mtrace
	expect_re convert-other-build 0 "^mtrace-user: warning: $work/gone/plt: not embedded in the bundle: the file here has another build-id, and no copy under --symfs nocache or in the build-id cache nocache$" \
		"$bin" convert --symfs nocache --buildid-dir nocache gone.data -o gone-back.mtrace
else
	echo "FAIL $suite/convert-missing-binary: the PT generator or the export failed"
fi
# A binary recorded without a build-id: perf's cache, which names its
# copies by build-id, could not be searched, and both commands say so.
mkdir -p bare
cp "$prog" bare/plt
if objcopy --remove-section .note.gnu.build-id bare/plt &&
	"$ptgen" -o bare.mtrace -- "$work/bare/plt" >/dev/null 2>&1 &&
	"$bin" export -p bare.data bare.mtrace >/dev/null 2>&1; then
	rm -r bare
	expect_re decode-missing-no-build-id 3 "^mtrace-user:   $work/bare/plt: no such file, and no build-id was recorded for it, so perf's build-id cache could not be searched$" \
		env HOME="$work/nocache" "$bin" decode -f text -o /dev/null bare.data
	expect_re convert-missing-no-build-id 0 "^mtrace-user: warning: $work/bare/plt: not embedded in the bundle: no such file here, and no build-id was recorded for it, so perf's build-id cache could not be searched$" \
		"$bin" convert --buildid-dir nocache bare.data -o bare-back.mtrace
else
	echo "FAIL $suite/missing-no-build-id: objcopy, the PT generator or the export failed"
fi
expect_re convert-usage 2 '^mtrace-user: convert needs -o OUT' "$bin" convert out.data
expect_re convert-onto-input 2 'is the input out.data itself' "$bin" convert out.data -o out.data
expect_re export-onto-input 2 'is the input plt.mtrace itself' "$bin" export -p plt.mtrace plt.mtrace
# Inside a perf.data directory (perf record --kcore's layout): its data is
# an input too, and export --kcore replaces the files of the directory it
# writes, so a bundle among them is refused. KEPT is checked unchanged.
kept_case() {
	local name=$1 pattern=$2 kept=$3 orig=$4 out rc
	shift 4
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && grep -Eq -- "$pattern" <<<"$out" && cmp -s "$kept" "$orig"; then
		echo "PASS $suite/$name"
	else
		echo "FAIL $suite/$name: exit status $rc, $kept $(cmp -s "$kept" "$orig" && echo kept || echo changed): $out"
	fi
}
mkdir -p indir/kcore_dir kdir/kcore_dir
cp out.data indir/data
kept_case convert-onto-dir-input 'output indir/data is the input indir/data itself' \
	indir/data out.data "$bin" convert indir -o indir/data
kept_case decode-onto-dir-input 'output indir/data is the input indir/data itself' \
	indir/data out.data "$bin" decode -o indir/data indir
kept_case decode-stdout-onto-dir-input 'output \(standard output\) is the input indir/data' \
	indir/data out.data sh -c "'$bin' decode -f text -o - indir >>indir/data"
cp plt.mtrace kdir/data
kept_case export-kcore-over-bundle '--kcore would replace kdir/data, the bundle being exported' \
	kdir/data plt.mtrace "$bin" export --kcore -p kdir kdir/data
rm kdir/data
cp plt.mtrace kdir/kcore_dir/kcore
kept_case export-kcore-over-bundle-kcore '--kcore would replace kdir/kcore_dir/kcore, the bundle' \
	kdir/kcore_dir/kcore plt.mtrace "$bin" export --kcore -p kdir kdir/kcore_dir/kcore
# The working directory, or one holding it, cannot be replaced by a rename.
mkdir -p here
expect_re export-kcore-cwd 2 '^mtrace-user: \. holds the working directory, which cannot be replaced' \
	env -C here "$bin" export --kcore -p . ../plt.mtrace
# What cannot take a perf.data is bad usage, refused before the bundle is read.
expect_re export-to-device 2 '^mtrace-user: /dev/null is not a regular file: a perf\.data goes to a new file' \
	"$bin" export -p /dev/null plt.mtrace
mkdir -p notperf && touch notperf/mine
expect_re export-kcore-over-other-dir 2 '^mtrace-user: notperf exists and is not a perf\.data directory' \
	"$bin" export --kcore -p notperf plt.mtrace
[ -e notperf/mine ] || echo "FAIL $suite/export-kcore-over-other-dir-kept: notperf/mine is gone"
# A --symfs whose place for the program is the bundle itself: not copied there.
mkdir -p "sx$(dirname "$prog")"
cp plt.mtrace "sx$prog"
out=$("$bin" export -p sx.data --symfs sx "sx$prog" 2>&1)
if cmp -s "sx$prog" plt.mtrace && grep -q "not copied: sx$prog is the bundle being exported" <<<"$out"; then
	echo "PASS $suite/export-symfs-over-bundle"
else
	echo "FAIL $suite/export-symfs-over-bundle: $(cmp -s "sx$prog" plt.mtrace && echo kept || echo changed): $out"
fi
expect_re convert-not-perf 1 'not a perf\.data file' "$bin" convert plt.mtrace -o y.mtrace
# Output errors name the output, not the perf.data.
expect_re convert-disk-full 1 '^mtrace-user: writing /dev/full: write at offset [0-9]+: No space left on device' \
	"$bin" convert --symfs out.data.symfs out.data -o /dev/full
expect_re convert-no-dir 1 '^mtrace-user: cannot create a file in nodir for nodir/x\.mtrace: ' \
	"$bin" convert --symfs out.data.symfs out.data -o nodir/x.mtrace
# A bad perf.data among several inputs is named (its first record's size
# zeroed; its first record renamed, which leaves no AUXTRACE_INFO).
python3 -c 'import struct, sys
d = bytearray(open("out.data", "rb").read())
at = struct.unpack_from("<Q", d, 40)[0]
bad = bytearray(d)
struct.pack_into("<H", bad, at + 6, 0)
open("badrec.data", "wb").write(bad)
struct.pack_into("<I", d, at, 200)
open("nopt.data", "wb").write(d)'
expect_re report-bad-record 1 '^mtrace-user: badrec\.data: record at offset [0-9]+ \(type [0-9]+\): bad size 0$' \
	"$bin" report plt.mtrace badrec.data
expect_re decode-bad-record 1 '^mtrace-user: badrec\.data: record at offset [0-9]+ \(type [0-9]+\): bad size 0$' \
	"$bin" decode -o bad.pftrace badrec.data
# perf record killed before it ended: the header's data size is 0, the
# feature bits too, and the file ends after some records.
python3 -c 'import struct
d = bytearray(open("out.data", "rb").read())
struct.pack_into("<Q", d, 48, 0)
d[72:104] = bytes(32)
open("killed.data", "wb").write(d[:struct.unpack_from("<Q", d, 40)[0] + 256])'
expect_re convert-killed-record 1 "^mtrace-user: killed\.data: the header's data size is 0, so no record can be read: was 'perf record' properly terminated\?$" \
	"$bin" convert killed.data -o killed.mtrace
expect_re report-no-pt 1 '^mtrace-user: nopt\.data: no Intel PT in this perf\.data' \
	"$bin" report nopt.data plt.mtrace
# The commands that read only bundles say what reads a perf.data.
expect_re bundle-info-perf-data 1 '^mtrace-user: out\.data is a perf\.data file, not a bundle: decode and report read it' \
	"$bin" bundle-info out.data
expect_re export-perf-data 1 '^mtrace-user: out\.data is a perf\.data file, not a bundle' \
	"$bin" export -p again.data out.data
# Piped in, the same: saving it to a file does not make it a bundle.
expect_re export-perf-data-piped 1 '^mtrace-user: standard input: not an mtrace bundle: it is a perf\.data, and this command reads bundles: save it to a file, which decode and report read as it is and convert makes a bundle of$' \
	sh -c '"$1" export -p again.data - <out.data' sh "$bin"
expect_re bundle-info-perf-data-piped 1 '^mtrace-user: standard input: not an mtrace bundle: it is a perf\.data, and this command reads bundles' \
	sh -c 'cat out.data | "$1" bundle-info -' sh "$bin"
head -c 700 out.data >cut.data
expect_re decode-truncated 1 '^mtrace-user: cut\.data: .*truncated' "$bin" decode cut.data
expect_re report-truncated 1 '^mtrace-user: cut\.data: .*truncated' "$bin" report cut.data
# Temporaries are hidden (.tmp-XXXXXX-NAME, files/outfile.h).
if [ -e y.mtrace ] || ls -A | grep -q '^\.tmp-'; then
	echo "FAIL $suite/no-partial-output: a failed command left a file"
else
	echo "PASS $suite/no-partial-output"
fi
