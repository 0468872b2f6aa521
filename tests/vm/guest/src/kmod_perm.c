// SPDX-License-Identifier: MIT
/*
 * Who may use /dev/mtrace: without CAP_PERFMON or CAP_SYS_ADMIN nobody
 * opens it; with CAP_PERFMON only, a user may trace its own processes but
 * not another user's (ptrace-attach rule) and not the kernel (needs
 * CAP_SYS_ADMIN).
 */
#include <signal.h>
#include <sys/wait.h>

#include "kmod_guest.h"

/*
 * Opened as root before dropping privileges, so that the unprivileged
 * open below does not depend on the search permissions of "/".
 */
static int devdir;

static int run_as(uid_t uid, int perfmon, pid_t victim)
{
	pid_t pid = fork();
	int status, fd;
	struct mtrace_config c;

	if (pid)
		return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
		       WEXITSTATUS(status) : 1;
	kg_become(uid, perfmon);
	fd = openat(devdir, "mtrace", O_RDWR);
	if (!perfmon)
		exit(!kg_check("kmod-perm-open-needs-cap", fd < 0 && errno == EPERM,
			       "opened without CAP_PERFMON"));
	if (!kg_check("kmod-perm-open-perfmon", fd >= 0, "%s", strerror(errno)))
		exit(1);
	c = kg_config(victim, 64 << 10, 4096);
	kg_check("kmod-perm-other-user", kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) ==
		 -EPERM, "traced another user's process");
	c = kg_config(getpid(), 64 << 10, 4096);
	c.flags |= MTRACE_CFG_KERNEL;
	kg_check("kmod-perm-kernel-needs-admin",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EPERM,
		 "kernel tracing without CAP_SYS_ADMIN");
	c.flags &= ~MTRACE_CFG_KERNEL;
	kg_check("kmod-perm-own-process", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c),
		 "%s", strerror(errno));
	exit(kg_failures != 0);
}

int main(void)
{
	pid_t victim;
	int rc;

	devdir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	victim = fork();

	if (!victim) {
		kg_become(1001, 0);
		pause();
		_exit(0);
	}
	usleep(100000);		/* let it drop its ids */
	rc = run_as(65534, 0, victim) | run_as(1000, 1, victim);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	return rc;
}
