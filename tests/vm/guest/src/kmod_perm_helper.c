// SPDX-License-Identifier: MIT
/*
 * A privileged helper opens /dev/mtrace and hands the descriptor to an
 * unprivileged process (uid 1000, no capabilities). The module checks the
 * caller of each ioctl, not the opener, so with that descriptor the process
 * may trace what it could ptrace (its own processes) and nothing more:
 * not another user's process, not a process of its own uid with other
 * saved or effective ids, not a non-dumpable one, not every process
 * (system-wide), not the kernel. Run twice: the descriptor passed over a
 * Unix socket (SCM_RIGHTS) to a process that never had privileges, and
 * kept across the helper's own setuid to 1000.
 *   kmod_perm_helper
 */
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kmod_guest.h"

#define USER 1000
#define OTHER 1001

/* Drops every capability and becomes uid (all of real, effective, saved). */
static void become(uid_t uid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
	    syscall(SYS_capset, &h, d)) {
		printf("FAIL perm-helper-setup: %s\n", strerror(errno));
		exit(1);
	}
}

/* A process that sleeps until killed, created as root with these ids. */
static pid_t sleeper(uid_t ruid, uid_t euid, int dumpable)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (setresgid(USER, USER, USER) || setresuid(ruid, euid, ruid) ||
	    prctl(PR_SET_DUMPABLE, dumpable)) {
		printf("FAIL perm-helper-setup: sleeper: %s\n", strerror(errno));
		_exit(1);
	}
	for (;;)
		pause();
}

static long config(int fd, pid_t pid, __u32 extra)
{
	struct mtrace_config c = kg_config(pid, 64 << 10, 4096);

	c.flags |= extra;
	return kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c);
}

struct victims {
	pid_t other, mixed, nodump, own;
};

/* As uid USER without capabilities, with a descriptor someone else opened. */
static void use_passed_fd(const char *how, int fd, const struct victims *v)
{
	char n[96];
	long r;

#define CASE(name) (snprintf(n, sizeof(n), "perm-helper-%s-%s", how, name), n)
	kg_check(CASE("no-caps"), open(MTRACE_DEVICE, O_RDWR) < 0 && errno == EPERM,
		 "this process could open the device itself");
	r = config(fd, v->other, 0);
	kg_check(CASE("other-user"), r == -EPERM, "SET_CONFIG for uid %d's process: %ld", OTHER,
		 r);
	r = config(fd, v->mixed, 0);
	kg_check(CASE("other-euid"), r == -EPERM,
		 "SET_CONFIG for a process with real uid %d, effective %d: %ld", USER, OTHER, r);
	r = config(fd, v->nodump, 0);
	kg_check(CASE("non-dumpable"), r == -EPERM,
		 "SET_CONFIG for a non-dumpable process: %ld", r);
	r = config(fd, 0, 0);
	kg_check(CASE("system-wide"), r == -EPERM, "SET_CONFIG system-wide: %ld", r);
	r = config(fd, getpid(), MTRACE_CFG_KERNEL);
	kg_check(CASE("kernel"), r == -EPERM, "SET_CONFIG with kernel tracing: %ld", r);
	/* By design the descriptor lets its holder trace what it may ptrace. */
	r = config(fd, v->own, 0);
	kg_check(CASE("own-process"), r == 0 && !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 !kg_ioctl(fd, MTRACE_IOC_DISARM, NULL), "SET_CONFIG/ARM for uid %d's own process: %ld",
		 USER, r);
	r = config(fd, getpid(), 0);
	kg_check(CASE("self"), r == 0, "SET_CONFIG for itself: %ld", r);
#undef CASE
}

static int wait_ok(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int send_fd(int sock, int fd)
{
	char byte = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(buf, 0, sizeof(buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char byte, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* SCM_RIGHTS to a process that dropped its privileges before the open. */
static int over_socket(const struct victims *v)
{
	int sv[2], fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 0;
	pid = fork();
	if (!pid) {
		close(sv[0]);
		become(USER);
		fd = recv_fd(sv[1]);
		if (!kg_check("perm-helper-scm-received", fd >= 0, "%s", strerror(errno)))
			_exit(1);
		use_passed_fd("scm", fd, v);
		_exit(kg_failures != 0);
	}
	close(sv[1]);
	fd = kg_open();
	if (send_fd(sv[0], fd))
		kg_check("perm-helper-scm-send", 0, "%s", strerror(errno));
	close(fd);	/* the receiver holds the only reference now */
	close(sv[0]);
	return wait_ok(pid);
}

/* The opener itself drops to uid USER, keeping the descriptor. */
static int across_setuid(const struct victims *v)
{
	pid_t pid = fork();

	if (!pid) {
		int fd = kg_open();

		become(USER);
		use_passed_fd("setuid", fd, v);
		_exit(kg_failures != 0);
	}
	return wait_ok(pid);
}

int main(void)
{
	struct victims v = {
		.other = sleeper(OTHER, OTHER, 1),
		.mixed = sleeper(USER, OTHER, 1),
		.nodump = sleeper(USER, USER, 0),
		.own = sleeper(USER, USER, 1),
	};
	int ok;

	usleep(200000);	/* let them take their ids */
	ok = over_socket(&v);
	ok &= across_setuid(&v);
	kill(v.other, SIGKILL);
	kill(v.mixed, SIGKILL);
	kill(v.nodump, SIGKILL);
	kill(v.own, SIGKILL);
	while (wait(NULL) > 0)
		;
	return !ok;
}
