#!/bin/bash
# SPDX-License-Identifier: MIT
#
# decode --format=svg in a real browser: headless Chromium renders the flame
# graph and the flame chart of a generated snapshot; the page must load
# without a console message or script error, its script must have drawn
# the labels, the outermost frame must be labelled in full, a zoom (URL
# fragment #zoom=ID) must make a frame too narrow for its name show it, and
# a search (#search=RE) must find it. The file must need no network.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
bin=$O/san/mtrace-user
ptgen=$O/rel/tests/ptgen/ptgen
prog=$O/san/tests/ptgen/programs/indirect-nopie
browser=$(command -v chromium || true)

if [ -z "$browser" ]; then
	echo "SKIP svg/render: chromium not installed (scripts/install-deps.sh)"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# render FILE[#FRAGMENT] OUT: the DOM after the page's script ran, and the
# browser's log (console messages are lines with ":CONSOLE").
render() {
	local profile
	profile=$(mktemp -d -p "$work")
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --enable-logging=stderr --v=0 \
		--dump-dom "file://$1" >"$2.dom" 2>"$2.log"
}

# check NAME DOM LOG: loaded, scripted, no console message, no error.
loaded() {
	local name=$1 out=$2
	if grep -q ':CONSOLE' "$out.log"; then
		echo "FAIL svg/$name: console: $(grep ':CONSOLE' "$out.log" | head -3)"
	elif grep -q 'data-error=' "$out.dom"; then
		echo "FAIL svg/$name: $(grep -o 'data-error="[^"]*"' "$out.dom")"
	elif ! grep -q 'data-ready="1"' "$out.dom"; then
		echo "FAIL svg/$name: the script did not run to its end ($(head -c 300 "$out.log"))"
	else
		return 0
	fi
	return 1
}

labels() { grep -o '<text y="[0-9.]*" x="[0-9.]*">[^<]*</text>' "$1.dom" | sed 's/<[^>]*>//g'; }

if ! "$ptgen" --walk "$prog" --insns 20000 --trigger classify:100 -o "$work/w.mtrace" \
	>/dev/null 2>&1 || ! "$bin" decode -q -f text -o "$work/w.txt" "$work/w.mtrace"; then
	echo "FAIL svg/render: could not generate and decode a walk"
	exit 0
fi
outer=$(awk '$3 == "B" { print $4; exit }' "$work/w.txt")

for kind in graph chart; do
	svg=$work/$kind.svg
	narrow=
	[ $kind = chart ] && narrow="--around-trigger 3us"
	# shellcheck disable=SC2086
	if ! "$bin" decode -q -f svg --svg $kind $narrow -o "$svg" "$work/w.mtrace"; then
		echo "FAIL svg/$kind: decode --format=svg --svg $kind failed"
		continue
	fi
	if grep -Eq '(href|src)=|url\(|@import' "$svg"; then
		echo "FAIL svg/$kind-self-contained: $(grep -Eo '(href|src)=[^ ]*|url\([^)]*\)' "$svg" | head -3)"
	else
		echo "PASS svg/$kind-self-contained"
	fi
	render "$svg" "$work/$kind"
	if loaded "$kind-loads" "$work/$kind"; then
		echo "PASS svg/$kind-loads"
	fi
	if grep -qx "$outer" <<<"$(labels "$work/$kind")"; then
		echo "PASS svg/$kind-frames: '$outer' labelled, $(labels "$work/$kind" | wc -l) labels"
	else
		echo "FAIL svg/$kind-frames: no label '$outer' in: $(labels "$work/$kind" | sort -u | head -20 | tr '\n' ' ')"
	fi
	# A frame 2-12 px wide with a name of 6 characters or more: too narrow
	# for its label until zoomed into.
	pick=$(grep -o '<g class="f" data-id="[0-9]*"[^>]*data-n="[^"]\{6,\}"><title>[^<]*</title><rect x="[0-9.]*" y="[0-9]*" width="\([2-9]\|1[0-2]\)\.[0-9]*"' "$svg" | head -1)
	id=$(sed 's/.*data-id="\([0-9]*\)".*/\1/' <<<"$pick")
	name=$(sed 's/.*data-n="\([^"]*\)".*/\1/' <<<"$pick")
	if [ -z "$pick" ]; then
		echo "FAIL svg/$kind-zoom: no narrow frame to zoom into"
		continue
	fi
	render "$svg#zoom=$id" "$work/$kind-zoom"
	if loaded "$kind-zoom" "$work/$kind-zoom" && grep -q "data-zoom=\"$id\"" "$work/$kind-zoom.dom" &&
		grep -qx "$name" <<<"$(labels "$work/$kind-zoom")"; then
		echo "PASS svg/$kind-zoom: frame $id ($name) labelled once zoomed"
	else
		echo "FAIL svg/$kind-zoom: frame $id ($name) not labelled after #zoom=$id"
	fi
	render "$svg#search=^$name\$" "$work/$kind-search"
	if loaded "$kind-search" "$work/$kind-search" &&
		grep -Eq 'data-matched="[1-9][0-9]*"' "$work/$kind-search.dom" &&
		grep -q 'id="matched"[^>]*>Matched [1-9]' "$work/$kind-search.dom"; then
		echo "PASS svg/$kind-search: $(grep -o 'id="matched"[^>]*>Matched [^<]*' \
			"$work/$kind-search.dom" | sed 's/.*>//')"
	else
		echo "FAIL svg/$kind-search: nothing matched ^$name\$"
	fi
done
