// SPDX-License-Identifier: MIT
/*
 * What a per-process trace follows while armed (docs/kernel-module.md:
 * the target's threads, including later ones, matched by tgid): a thread
 * created after arming is traced, a forked child is not, the process is
 * still traced after exec (same tgid), and after it exits nothing is.
 * The simulated writer reveals whether CPU 1 traces: it accepts bytes only
 * while TraceEn is set. The target and everything it starts is pinned to
 * CPU 1, so whichever of them spins there decides. The frozen sideband must
 * agree (the child never marked as target, the late thread marked), and
 * the session must re-arm after the target is gone; a target reaped before
 * its last switch stops being traced too. A re-arm then must not
 * trace another user's process that was given the target's old pid
 * (ns_last_pid picks the number).
 *   kmod_follow                     (the test)
 *   kmod_follow spin CMDFD STATUSFD (the image the target execs)
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kmod_guest.h"

#define SAMPLES 20

static int cmd_fd, st_fd;	/* target side: commands in, reports out */
static atomic_int thread_stop;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		printf("FAIL kmod-follow-pin: %s\n", strerror(errno));
		exit(1);
	}
}

static void report(int v)
{
	if (write(st_fd, &v, sizeof(v)) != sizeof(v))
		_exit(3);
}

/* Target side: sleeps (off CPU) until the next command. */
static char wait_cmd(void)
{
	struct pollfd p = { .fd = cmd_fd, .events = POLLIN };
	char c;

	while (poll(&p, 1, -1) != 1 || read(cmd_fd, &c, 1) != 1)
		if (errno != EINTR && errno != EAGAIN)
			_exit(3);
	return c;
}

/* Target side: spins (on CPU) until a command arrives. */
static char spin_cmd(void)
{
	char c;

	while (read(cmd_fd, &c, 1) != 1)
		if (errno != EAGAIN)
			_exit(3);
	return c;
}

static void *spinner(void *arg)
{
	(void)arg;
	report((int)syscall(SYS_gettid));
	while (!atomic_load(&thread_stop))
		;
	return NULL;
}

static void __attribute__((noreturn)) target(void)
{
	char fds[2][16];
	pthread_t th;
	pid_t child;

	pin(1);
	for (;;) {
		switch (spin_cmd()) {
		case 'f':	/* fork a spinning child, then sleep */
			child = fork();
			if (!child)
				for (;;)
					;
			report(child);
			wait_cmd();
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			report(0);
			break;
		case 't':	/* a spinning thread, the main thread sleeps */
			if (pthread_create(&th, NULL, spinner, NULL))
				_exit(3);
			wait_cmd();
			atomic_store(&thread_stop, 1);
			pthread_join(th, NULL);
			report(0);
			break;
		case 'e':
			snprintf(fds[0], sizeof(fds[0]), "%d", cmd_fd);
			snprintf(fds[1], sizeof(fds[1]), "%d", st_fd);
			execl("/proc/self/exe", "kmod_follow", "spin", fds[0], fds[1], (char *)NULL);
			_exit(3);
		default:
			_exit(3);
		}
	}
}

/* The exec'd image: spins until 'x'. */
static int spin_image(char **argv)
{
	cmd_fd = atoi(argv[2]);
	st_fd = atoi(argv[3]);
	report((int)getpid());
	spin_cmd();
	return 0;
}

static int ctl_fd[2], rep_fd[2];

static int expect(void)
{
	int v;

	if (read(rep_fd[0], &v, sizeof(v)) != sizeof(v)) {
		printf("FAIL kmod-follow-protocol: the target stopped answering\n");
		exit(1);
	}
	return v;
}

static void command(char c)
{
	if (write(ctl_fd[1], &c, 1) != 1)
		exit(1);
}

/* How many of SAMPLES injections into CPU 1 the "hardware" took. */
static int traced_samples(int fd)
{
	static const unsigned char b[64] = { 1 };
	int on = 0, i;

	usleep(100000);	/* let the scheduler settle on CPU 1 */
	for (i = 0; i < SAMPLES; i++) {
		long r = kg_inject(fd, 1, b, sizeof(b));

		if (r > 0)
			on++;
		else if (r != -EAGAIN)
			printf("kmod_follow: SIM_INJECT: %s\n", strerror((int)-r));
		usleep(5000);
	}
	return on;
}

static void traced(int fd, const char *name, int want_on)
{
	int on = traced_samples(fd);

	printf("kmod_follow: %s: CPU 1 traced in %d of %d samples\n", name, on, SAMPLES);
	if (want_on)
		kg_check(name, on >= SAMPLES / 2, "CPU 1 traced in only %d of %d samples", on,
			 SAMPLES);
	else
		kg_check(name, on == 0, "CPU 1 traced in %d of %d samples", on, SAMPLES);
}

/* The sideband of CPU 1: the child never a target, the late thread one. */
static void check_sideband(int fd, pid_t child, pid_t thread)
{
	static struct mtrace_sb_record r[4096];
	struct mtrace_sb_read rd = { .cpu = 1, .count = 4096,
		.records_ptr = (__u64)(unsigned long)r };
	unsigned int i, child_seen = 0, child_marked = 0, thread_marked = 0;

	if (!kg_check("kmod-follow-sideband-read", !kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &rd),
		      "%s", strerror(errno)))
		return;
	for (i = 0; i < rd.count; i++) {
		if (r[i].prev_pid == (__u32)child || r[i].next_pid == (__u32)child)
			child_seen++;
		if ((r[i].prev_pid == (__u32)child && r[i].flags & MTRACE_SB_PREV_TARGET) ||
		    (r[i].next_pid == (__u32)child && r[i].flags & MTRACE_SB_NEXT_TARGET))
			child_marked++;
		if (r[i].next_tid == (__u32)thread && r[i].flags & MTRACE_SB_NEXT_TARGET)
			thread_marked++;
	}
	printf("kmod_follow: %u sideband records on CPU 1: child in %u (marked %u), late thread marked in %u\n",
	       rd.count, child_seen, child_marked, thread_marked);
	kg_check("kmod-follow-sideband-child", child_seen && !child_marked,
		 "child %d in %u records, %u marked as target", child, child_seen, child_marked);
	kg_check("kmod-follow-sideband-thread", thread_marked > 0,
		 "thread %d never switched in as target", thread);
}

/* A process of uid 1001 spinning on CPU 1, with pid want if it can get it. */
static pid_t reuse_pid(pid_t want)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	pid_t pid;

	if (f) {
		fprintf(f, "%d", (int)want - 1);
		fclose(f);
	}
	pid = fork();
	if (!pid) {
		pin(1);
		if (setresgid(1001, 1001, 1001) || setresuid(1001, 1001, 1001))
			_exit(1);
		for (;;)
			;
	}
	return pid;
}

/*
 * A target reaped before its last switch: its parent ignores SIGCHLD, so
 * exit_notify() releases it and detaches its thread group pid before it
 * leaves CPU 1. Trace there must stop all the same (it used to stay on,
 * tracing whatever ran next).
 */
static void reaped_target(void)
{
	struct mtrace_config c;
	pid_t t;
	int fd;

	signal(SIGCHLD, SIG_IGN);
	t = fork();
	if (!t) {
		pin(1);
		for (;;)
			;
	}
	fd = kg_open();
	c = kg_config(t, 1 << 20, 4096);
	if (kg_check("kmod-follow-reaped-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		     !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno))) {
		traced(fd, "kmod-follow-reaped-target", 1);
		kill(t, SIGKILL);
		traced(fd, "kmod-follow-reaped-exit", 0);
		kg_check("kmod-follow-reaped-disarm", !kg_freeze(fd, MTRACE_PATH_MANUAL, 0) &&
			 !kg_ioctl(fd, MTRACE_IOC_DISARM, NULL), "%s", strerror(errno));
	}
	kill(t, SIGKILL);
	close(fd);
	signal(SIGCHLD, SIG_DFL);
}

int main(int argc, char **argv)
{
	struct mtrace_config c;
	pid_t t, child, thread, after_exec, reuse;
	char exe[256] = "";
	char path[64];
	int fd, status;

	if (argc == 4 && !strcmp(argv[1], "spin"))
		return spin_image(argv);
	pin(0);
	if (pipe(ctl_fd) || pipe(rep_fd))
		return 1;
	t = fork();
	if (!t) {
		cmd_fd = ctl_fd[0];
		st_fd = rep_fd[1];
		fcntl(cmd_fd, F_SETFL, O_NONBLOCK);
		target();
	}
	fd = kg_open();
	c = kg_config(t, 1 << 20, 4096);
	c.sb_records = 4096;
	if (!kg_check("kmod-follow-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		      !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno))) {
		kill(t, SIGKILL);
		return 1;
	}
	traced(fd, "kmod-follow-target", 1);

	command('f');
	child = expect();
	traced(fd, "kmod-follow-fork-not-traced", 0);
	command('r');
	expect();
	traced(fd, "kmod-follow-after-fork", 1);

	command('t');
	thread = expect();
	traced(fd, "kmod-follow-new-thread", 1);
	command('r');
	expect();

	command('e');
	after_exec = expect();
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)t);
	{
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(exe, 1, sizeof(exe) - 1, f) : 0;

		if (f)
			fclose(f);
		exe[n] = '\0';
	}
	kg_check("kmod-follow-exec-same-pid", after_exec == t && !strcmp(exe, "kmod_follow") &&
		 !strcmp(exe + strlen(exe) + 1, "spin"), "pid %d, argv0 '%s'", after_exec, exe);
	traced(fd, "kmod-follow-after-exec", 1);

	command('x');
	kg_check("kmod-follow-exit", waitpid(t, &status, 0) == t && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 0, "target status %#x", status);
	traced(fd, "kmod-follow-after-exit", 0);

	kg_check("kmod-follow-freeze", !kg_freeze(fd, MTRACE_PATH_EXIT, 0) &&
		 kg_status(fd).state == MTRACE_STATE_FROZEN, "%s", strerror(errno));
	check_sideband(fd, child, thread);
	reuse = reuse_pid(t);
	kg_check("kmod-follow-rearm", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 kg_status(fd).state == MTRACE_STATE_ARMED, "%s", strerror(errno));
	if (reuse == t)
		traced(fd, "kmod-follow-pid-reuse-not-traced", 0);
	else
		printf("SKIP kmod-follow-pid-reuse-not-traced: the new process got pid %d, not %d\n",
		       (int)reuse, (int)t);
	kill(reuse, SIGKILL);
	waitpid(reuse, NULL, 0);
	kg_check("kmod-follow-disarm", !kg_freeze(fd, MTRACE_PATH_MANUAL, 0) &&
		 !kg_ioctl(fd, MTRACE_IOC_DISARM, NULL), "%s", strerror(errno));
	close(fd);
	reaped_target();
	return kg_failures != 0;
}
