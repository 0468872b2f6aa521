#!/bin/sh
# SPDX-License-Identifier: MIT
# Kernel text capture without its privileges names the missing one: the
# library (kcore_perm) and `mtrace-user record --kernel`.
T=/tmp/kcore-perm
mkdir -p $T
kptr=$(cat /proc/sys/kernel/kptr_restrict)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
/bin/kcore_perm

# record_case NAME PATTERN EXPECTED_STATUS COMMAND...: the output matches PATTERN
record_case() {
	name=$1 want=$2 status=$3
	shift 3
	"$@" >$T/$name.out 2>&1
	rc=$?
	if [ $rc -eq "$status" ] && grep -q "$want" $T/$name.out; then
		echo "PASS $name"
	else
		echo "FAIL $name: exit $rc, wanted $status and '$want': $(tr '\n' ' ' <$T/$name.out)"
	fi
}

echo 1 >/proc/sys/kernel/kptr_restrict
echo 2 >/proc/sys/kernel/perf_event_paranoid
if insmod "$MTRACE_KO" sim=1; then
	record_case kcore-perm-record-as-user "needs CAP_PERFMON or CAP_SYS_ADMIN" 1 \
		/bin/kcore_perm user mtrace-user record --kernel -o /tmp/kp.mtrace -- /bin/true
	record_case kcore-perm-record-without-rawio "warning: .*CAP_SYS_RAWIO" 0 \
		/bin/kcore_perm root-without 17 mtrace-user record --kernel -o $T/rawio.mtrace -- /bin/true
	record_case kcore-perm-record-without-syslog "warning: .*CAP_SYSLOG" 0 \
		/bin/kcore_perm root-without 34 mtrace-user record --kernel -o $T/syslog.mtrace -- /bin/true
	record_case kcore-perm-record-as-root "ktext" 0 \
		sh -c "mtrace-user record --kernel -o $T/root.mtrace -- /bin/true &&
		       mtrace-user bundle-info $T/root.mtrace"
	rmmod mtrace || echo "FAIL kcore-perm-unload: rmmod failed"
else
	echo "FAIL kcore-perm-load: insmod failed"
fi
echo "$kptr" >/proc/sys/kernel/kptr_restrict
echo "$paranoid" >/proc/sys/kernel/perf_event_paranoid
