// SPDX-License-Identifier: MIT
/*
 * Without the privileges, kernel text capture must say which one is missing:
 * /proc/kcore needs CAP_SYS_RAWIO, real kallsyms addresses need CAP_SYSLOG
 * (with kernel.kptr_restrict <= 1; 2 hides them from everyone).
 *   kcore_perm                       the library cases, as PASS/FAIL lines
 *   kcore_perm user CMD ARGS         runs CMD as uid 1001 without capabilities
 *   kcore_perm root-without N CMD    runs CMD as root without capability N
 * busybox has no setpriv; the last two let the script check mtrace-user.
 */
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "bundle/bundle.h"
#include "kcore/kcore.h"
#include "kcore/kcore_capture.h"
#include "kmod_guest.h"

#define USER_UID 1001

static void die(const char *what)
{
	printf("FAIL kcore-perm-setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Sets the effective and permitted sets to exactly caps (a bit mask). */
static void set_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	for (int i = 0; i < 2; i++)
		d[i].effective = d[i].permitted = (uint32_t)(caps >> (32 * i));
	if (syscall(SYS_capset, &h, d))
		die("capset");
}

static uint64_t current_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		die("capget");
	return d[0].permitted | (uint64_t)d[1].permitted << 32;
}

/* uid 1001 keeping exactly caps. */
static void become_user(uint64_t caps)
{
	if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(USER_UID, USER_UID, USER_UID) ||
	    setresuid(USER_UID, USER_UID, USER_UID))
		die("setresuid");
	set_caps(caps);
}

/* Root without capability cap, now and across exec (bounding set). */
static void become_root_without(int cap)
{
	if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
		die("PR_CAPBSET_DROP");
	set_caps(current_caps() & ~(1ULL << cap));
}

/* mt_kcore_capture() into a scratch bundle: its result and message. */
static int try_capture(char *err, size_t errlen)
{
	struct mt_kcore_capture_stats st;
	struct mt_bundle_writer *w;
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/tmp/kcore-perm-%d.mtrace", getpid());
	rc = mt_bundle_writer_create(&w, path, NULL, err, errlen);
	if (!rc)
		rc = mt_kcore_capture(w, NULL, &st, err, errlen);
	mt_bundle_writer_free(w);
	unlink(path);
	return rc;
}

/* Runs fn in a child that first drops privileges with drop(arg). */
static void in_child(void (*drop)(uint64_t), uint64_t arg, void (*fn)(void))
{
	pid_t pid = fflush(stdout) ? -1 : fork();
	int status;

	if (pid < 0)
		die("fork");
	if (!pid) {
		drop(arg);
		fn();
		fflush(stdout);
		_exit(kg_failures != 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		kg_check("kcore-perm-child", 0, "a check crashed");
	else
		kg_failures += WEXITSTATUS(status) != 0;
}

static void drop_rawio(uint64_t unused)
{
	(void)unused;
	become_root_without(CAP_SYS_RAWIO);
}

static void kcore_open_as_user(void)
{
	struct mt_kcore *k;
	char err[512] = "";
	int rc = mt_kcore_open(&k, "/proc/kcore", err, sizeof(err));

	kg_check("kcore-perm-open-as-user", (rc == -EACCES || rc == -EPERM) &&
		 strstr(err, "CAP_SYS_RAWIO"), "rc %d: %s", rc, err);
}

static void kcore_open_without_rawio(void)
{
	struct mt_kcore *k;
	char err[512] = "";
	int rc = mt_kcore_open(&k, "/proc/kcore", err, sizeof(err));

	kg_check("kcore-perm-open-root-without-rawio", rc == -EPERM && strstr(err, "CAP_SYS_RAWIO"),
		 "rc %d: %s", rc, err);
}

/* No capability at all: the first thing missing is CAP_SYSLOG (kallsyms). */
static void capture_as_user(void)
{
	char err[512] = "";
	int rc = try_capture(err, sizeof(err));

	kg_check("kcore-perm-capture-needs-syslog", rc == -EACCES && strstr(err, "CAP_SYSLOG"),
		 "rc %d: %s", rc, err);
}

/* CAP_SYSLOG but no CAP_SYS_RAWIO: only CAP_SYS_RAWIO is named. */
static void capture_with_syslog_only(void)
{
	char err[512] = "";
	int rc = try_capture(err, sizeof(err));

	kg_check("kcore-perm-capture-needs-rawio", rc && strstr(err, "CAP_SYS_RAWIO") &&
		 !strstr(err, "CAP_SYSLOG"), "rc %d: %s", rc, err);
}

static int write_sysctl(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, value, strlen(value)) == (ssize_t)strlen(value);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* kptr_restrict=2 hides addresses even from root: the message says so. */
static void capture_kptr_restrict_2(void)
{
	char err[512] = "";
	int rc;

	if (write_sysctl("/proc/sys/kernel/kptr_restrict", "2"))
		die("kptr_restrict=2");
	rc = try_capture(err, sizeof(err));
	if (write_sysctl("/proc/sys/kernel/kptr_restrict", "1"))
		die("kptr_restrict=1");
	kg_check("kcore-perm-kptr-restrict-2", rc == -EACCES && strstr(err, "kptr_restrict"),
		 "rc %d: %s", rc, err);
}

static void run_library_cases(void)
{
	/* Deterministic: real addresses for CAP_SYSLOG holders only. */
	if (write_sysctl("/proc/sys/kernel/kptr_restrict", "1") ||
	    write_sysctl("/proc/sys/kernel/perf_event_paranoid", "2"))
		die("sysctl");
	in_child(become_user, 0, kcore_open_as_user);
	in_child(drop_rawio, 0, kcore_open_without_rawio);
	in_child(become_user, 0, capture_as_user);
	in_child(become_user, 1ULL << CAP_SYSLOG, capture_with_syslog_only);
	capture_kptr_restrict_2();
}

int main(int argc, char **argv)
{
	if (argc == 1) {
		run_library_cases();
		return kg_failures != 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "user")) {
		become_user(0);
		execvp(argv[2], argv + 2);
	} else if (argc >= 4 && !strcmp(argv[1], "root-without")) {
		become_root_without(atoi(argv[2]));
		execvp(argv[3], argv + 3);
	} else {
		fprintf(stderr, "usage: kcore_perm [user CMD ARGS | root-without CAP CMD ARGS]\n");
		return 2;
	}
	die(argv[1]);
}
