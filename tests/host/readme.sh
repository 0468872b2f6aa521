#!/bin/bash
# SPDX-License-Identifier: MIT
# The README's set-up commands work as written both as root on a machine
# without sudo and as a user with sudo: every step that needs root goes
# through scripts/as-root, which runs it directly as root and through sudo
# otherwise (a fake sudo here records what it was asked to run).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=readme
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

pass() { echo "PASS $suite/$1"; }
fail() { echo "FAIL $suite/$1: $2"; }

# The set-up section's first two command blocks: set up, then the tests.
mapfile -t cmds < <(awk '/^## Set up/ { s = 1; next } /^## / { s = 0 }
	s && /^```sh/ { b = 1; n++; next } s && /^```/ { b = 0; next } s && b && n <= 2' "$top/README.md")
if [ ${#cmds[@]} -eq 2 ]; then pass two-setup-commands; else fail two-setup-commands "${#cmds[@]} lines in the first two blocks"; fi

# Steps that need root must not use a bare sudo (absent on a root-only machine).
for i in "${!cmds[@]}"; do
	bad=
	IFS='&' read -ra steps <<<"${cmds[$i]//&&/&}"
	for step in "${steps[@]}"; do
		read -ra w <<<"$step"
		[ ${#w[@]} -eq 0 ] && continue
		case "${w[0]}" in
		sudo) bad="$bad '$step' (sudo)" ;;
		scripts/as-root | make) ;;
		*) bad="$bad '$step' (needs root, not through scripts/as-root)" ;;
		esac
		# make install writes /usr/local and DKMS: it needs root too.
		[ "${w[0]} ${w[1]:-}" = "make install" ] && bad="$bad '$step' (make install without scripts/as-root)"
	done
	if [ -z "$bad" ]; then pass "command-$((i + 1))-root-or-sudo"; else fail "command-$((i + 1))-root-or-sudo" "$bad"; fi
done

# A fake sudo that records what it was asked to run, first in PATH.
mkdir "$tmp/bin"
cat >"$tmp/bin/sudo" <<EOF2
#!/bin/sh
echo "sudo \$*" >>"$tmp/sudo.log"
EOF2
chmod 755 "$tmp/bin/sudo"

# As root: runs directly, never through sudo (there may be none).
out=$(PATH="$tmp/bin:$PATH" "$top/scripts/as-root" id -u 2>&1)
if [ "$out" = 0 ] && [ ! -e "$tmp/sudo.log" ]; then pass as-root-direct; else fail as-root-direct "$out, sudo log: $(cat "$tmp/sudo.log" 2>/dev/null)"; fi

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP $suite/as-user-through-sudo: needs root and setpriv to become another user"
	echo "SKIP $suite/as-user-without-sudo: needs root and setpriv to become another user"
	exit 0
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
touch "$tmp/sudo.log"
chmod 666 "$tmp/sudo.log"
out=$(as_nobody env PATH="$tmp/bin:/usr/bin:/bin" "$top/scripts/as-root" modprobe mtrace 2>&1)
if grep -qx "sudo modprobe mtrace" "$tmp/sudo.log" 2>/dev/null; then
	pass as-user-through-sudo
else
	fail as-user-through-sudo "sudo log: $(cat "$tmp/sudo.log" 2>/dev/null), output: $out"
fi
# A user without sudo gets one line saying what to do.
mkdir "$tmp/nosudo"
for t in sh id; do ln -s "$(command -v $t)" "$tmp/nosudo/$t"; done
out=$(as_nobody env PATH="$tmp/nosudo" "$top/scripts/as-root" modprobe mtrace 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$out" = "as-root: 'modprobe' needs root: run it as root (this user has no sudo)" ]; then
	pass as-user-without-sudo
else
	fail as-user-without-sudo "exit $rc: $out"
fi
