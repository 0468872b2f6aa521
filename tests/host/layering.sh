#!/bin/bash
# SPDX-License-Identifier: MIT
# The layering of libmtrace (docs/development.md, Layering): every folder
# under user/ has a row in the table there, and includes the headers of the
# folders its row names only (user/util/ and include/ are open to all).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=layering

# rows DOC: "FOLDER ALLOWED..." per table row; ALLOWED is "*" for "every folder below".
rows() {
	awk '/^## Layering/ { on = 1; next } /^## / { on = 0 } on && /^\| `[a-z_]+\/` \|/' "$1" |
	while IFS='|' read -r _ folder _ calls _; do
		folder=${folder//[\` \/]/}
		if [[ $calls == *"every folder below"* ]]; then
			echo "$folder *"
		else
			# shellcheck disable=SC2016 # the backquotes are literal
			echo "$folder $(grep -o '`[a-z_]*/`' <<<"$calls" | tr -d '`/' | tr '\n' ' ')"
		fi
	done
}

# violations ROOT DOC: one line per folder without a row and per include its row forbids.
violations() {
	local root=$1 table dir folder allowed inc
	table=$(rows "$2")
	for dir in "$root"/user/*/; do
		folder=$(basename "$dir")
		allowed=$(awk -v f="$folder" '$1 == f { $1 = ""; print; found = 1 } END { if (!found) print "-" }' <<<"$table")
		if [ "$allowed" = "-" ]; then
			echo "user/$folder/ has no row in the table"
			continue
		fi
		[ "$allowed" = " *" ] && continue
		grep -Ho '^#include "[a-z_]*/' "$dir"*.[ch] 2>/dev/null | sed 's|#include "||; s|/$||' |
		while IFS=: read -r file inc; do
			case " $folder util uapi mtrace $allowed " in
			*" $inc "*) ;;
			*) echo "${file#"$root"/} includes $inc/, which user/$folder/ may not call" ;;
			esac
		done
	done
}

verdict() { # NAME OUTPUT-THAT-MUST-BE-EMPTY
	if [ -z "$2" ]; then echo "PASS $suite/$1"; else echo "FAIL $suite/$1: $(head -c 800 <<<"$2")"; fi
}

doc=$top/docs/development.md
n=$(rows "$doc" | wc -l)
[ "$n" -ge 10 ] && v="" || v="only $n rows read from the table"
verdict table-read "$v"
verdict tree "$(violations "$top" "$doc")"

# The check itself: a forbidden include and a folder without a row are found.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/user/sym" "$tmp/user/newfolder"
printf '#include "decode/decode.h"\n#include "util/mt_array.h"\n' >"$tmp/user/sym/x.c"
out=$(violations "$tmp" "$doc")
grep -q 'user/sym/x.c includes decode/' <<<"$out" && grep -q 'user/newfolder/ has no row' <<<"$out" &&
	! grep -q 'util/' <<<"$out" && v="" || v="violations not found: $out"
verdict detects-violations "$v"
