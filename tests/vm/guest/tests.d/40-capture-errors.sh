#!/bin/sh
# SPDX-License-Identifier: MIT
# mtrace-user record and doctor without the module: precise errors, exit 1.
out=$(mtrace-user record -- /bin/true 2>&1)
rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "/dev/mtrace does not exist: the mtrace kernel module is not loaded"; then
	echo "PASS capture-no-module"
else
	echo "FAIL capture-no-module: status $rc: $out"
fi
out=$(mtrace-user doctor 2>&1)
rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q "^FAIL  module "; then
	echo "PASS capture-doctor-no-module"
else
	echo "FAIL capture-doctor-no-module: status $rc: $out"
fi
