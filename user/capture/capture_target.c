// SPDX-License-Identifier: MIT
/* The traced process (see capture_target.h). */
#include "capture/capture_target.h"
#include "util/errmsg.h"
#include "util/regfile.h"
#include "util/mt_array.h"
#include "capture/capture_procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEIZE_OPTS (PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE)
#define SIGKILL_BIT (1ULL << (SIGKILL - 1))
#define DETACH_WAIT_MS 1000
#define PF_EXITING 0x00000004U /* task flag (include/linux/sched.h), in /proc/TID/stat */

static void target_init(struct mt_target *t)
{
	memset(t, 0, sizeof(*t));
	t->pidfd = t->release_fd = t->exec_fd = -1;
}

/* execvp's PATH search, done up front so a typo fails before arming. */
int mt_target_find_command(const char *cmd, char *found, size_t len, char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		struct stat st;

		/* A directory passes access(X_OK); execve() would refuse it only
		 * after arming. */
		if (!stat(cmd, &st) && !S_ISREG(st.st_mode))
			return mt_errmsg(err, errlen, EACCES, "cannot run '%s': it is %s", cmd,
					 mt_file_kind(st.st_mode));
		if (access(cmd, X_OK) == 0) {
			snprintf(found, len, "%s", cmd);
			return 0;
		}
		return mt_errmsg(err, errlen, errno, "cannot run '%s': %s", cmd, strerror(errno));
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) {
			snprintf(found, len, "%s", buf);
			return 0;
		}
		p += n + (p[n] == ':');
	}
	return mt_errmsg(err, errlen, ENOENT, "cannot run '%s': command not found in PATH", cmd);
}

static int seize(pid_t tid)
{
	return ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)SEIZE_OPTS) == 0 ? 0 : -errno;
}

/* Seizes every thread; threads created meanwhile by a seized thread are seized by the kernel. */
static int seize_all(pid_t pid)
{
	char path[64];
	int added;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		if (!d)
			return -errno;
		added = 0;
		while ((de = readdir(d))) {
			long tid = strtol(de->d_name, NULL, 10);
			int e;

			if (tid <= 0)
				continue;
			e = seize((pid_t)tid);
			if (e == 0) {
				added = 1;
			} else if (e == -ESRCH || (e == -EPERM && mt_thread_tracer(pid, (pid_t)tid) == getpid())) {
				/* Gone, or already ours (an earlier pass, or seized at its creation). */
				continue;
			} else {
				closedir(d);
				return e;
			}
		}
		closedir(d);
	} while (added);
	return 0;
}

int mt_target_launch(struct mt_target *t, char **argv, char *err, size_t errlen)
{
	char found[4096];
	int go[2], st[2], e;

	target_init(t);
	if ((e = mt_target_find_command(argv[0], found, sizeof(found), err, errlen)))
		return e;
	if (pipe2(go, O_CLOEXEC))
		return mt_errmsg(err, errlen, errno, "pipe: %s", strerror(errno));
	if (pipe2(st, O_CLOEXEC)) {
		e = errno;
		close(go[0]);
		close(go[1]);
		return mt_errmsg(err, errlen, e, "pipe: %s", strerror(e));
	}
	t->pid = fork();
	if (t->pid < 0) {
		e = errno;
		close(go[0]);
		close(go[1]);
		close(st[0]);
		close(st[1]);
		return mt_errmsg(err, errlen, e, "fork: %s", strerror(e));
	}
	if (t->pid == 0) {
		sigset_t none;
		char c;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		close(st[0]);
		/* EOF instead of the go byte: set-up failed, never run the command. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(st[1], &e, sizeof(e)) != sizeof(e))
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	t->launched = 1;
	t->release_fd = go[1];
	t->exec_fd = st[0];
	if ((e = seize(t->pid))) {
		mt_target_abort(t);
		return mt_errmsg(err, errlen, -e, "cannot ptrace the child: %s", strerror(-e));
	}
	t->traced = 1;
	return 0;
}

int mt_target_tgid(pid_t pid)
{
	char path[64], buf[1024];
	FILE *f;
	int tgid = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* Task PID's state letter and flags, the third and ninth fields of
 * /proc/PID/stat (the name before them may hold spaces and ')'). */
static int task_stat(pid_t pid, char *state, unsigned long *flags)
{
	char path[64], buf[1024], *p;
	int rc = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) == 2)
		rc = 0;
	fclose(f);
	return rc;
}

int mt_target_check_pid(pid_t pid, bool *kthread, char *err, size_t errlen)
{
	unsigned long flags = 0;
	char state = 0;
	int tgid;

	if (kill(pid, 0) && errno == ESRCH)
		return mt_errmsg(err, errlen, ESRCH, "process %d does not exist", (int)pid);
	tgid = mt_target_tgid(pid);
	if (tgid < 0)
		return mt_errmsg(err, errlen, ESRCH, "process %d does not exist", (int)pid);
	if (tgid != pid)
		return mt_errmsg(err, errlen, EINVAL,
				 "%d is a thread of process %d: give -p %d (all its threads are traced)",
				 (int)pid, tgid, tgid);
	if (pid == getpid())
		return mt_errmsg(err, errlen, EINVAL, "process %d is this mtrace-user itself",
				 (int)pid);
	task_stat(pid, &state, &flags);
	if (state == 'Z')
		return mt_errmsg(err, errlen, ESRCH,
				 "process %d has exited: a zombie its parent has not reaped, with nothing left to trace",
				 (int)pid);
	if (kthread)
		*kthread = flags & 0x00200000;	/* PF_KTHREAD */
	return 0;
}

int mt_target_attach(struct mt_target *t, pid_t pid, char *err, size_t errlen)
{
	int e;

	target_init(t);
	t->pid = pid;
	if ((e = mt_target_check_pid(pid, NULL, err, errlen)))
		return e;
	e = seize_all(pid);
	if (e == 0) {
		t->traced = 1;
		return 0;
	}
	if (e == -ESRCH || e == -ENOENT)
		return mt_errmsg(err, errlen, ESRCH, "process %d exited before tracing started",
				 (int)pid);
	/* Not fatal: only the maps at exit are lost. Undo a partial seize. */
	mt_target_detach(t);
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0)
		return mt_errmsg(err, errlen, errno, "cannot watch process %d: %s", (int)pid,
				 strerror(errno));
	snprintf(t->warning, sizeof(t->warning),
		 "cannot ptrace process %d (%s; a debugger attached?): an exit snapshot will have no memory maps",
		 (int)pid, strerror(-e));
	return 0;
}

int mt_target_release(struct mt_target *t, char *err, size_t errlen)
{
	ssize_t n;
	int e = 0;

	if (!t->launched || t->release_fd < 0)
		return 0;
	n = write(t->release_fd, "g", 1);
	close(t->release_fd);
	t->release_fd = -1;
	if (n != 1)
		return mt_errmsg(err, errlen, EPIPE, "the child process died before it could run its command");
	/* EOF: exec succeeded (the pipe is close-on-exec); else the child's errno. */
	do
		n = read(t->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(t->exec_fd);
	t->exec_fd = -1;
	if (n == sizeof(e))
		return mt_errmsg(err, errlen, e, "cannot run the command: %s", strerror(e));
	return 0;
}

static int seen_exiting(const struct mt_target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nexiting; i++)
		if (t->exiting[i] == tid)
			return 1;
	return 0;
}

static void note_exiting(struct mt_target *t, pid_t tid)
{
	if (MT_ARRAY_RESERVE(t->exiting, t->capexiting, t->nexiting, 1))
		return; /* only makes the exit test more conservative */
	t->exiting[t->nexiting++] = tid;
}

/* A thread that will still run user code: not exiting, not dying, not dead. */
static int thread_lives_on(pid_t pid, long tid)
{
	char path[64], buf[512], state = 'X', *p;
	unsigned long long pending = 0;
	unsigned int flags = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the comm, which may itself hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return 0;
	if (state == 'Z' || state == 'X' || (flags & PF_EXITING))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%ld/status", (int)pid, tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "SigPnd: %llx", &pending) == 1)
			break;
	fclose(f);
	return !(pending & SIGKILL_BIT);
}

/*
 * Whether the thread stopped in its exit ends the whole process:
 * exit_group() and fatal signals queue SIGKILL to every other thread, which
 * then reach their own exit stop (PF_EXITING comes only after it), so any
 * other thread with none of these lives on and only `exiting` is leaving
 * (pthread_exit).
 */
static int process_ending(const struct mt_target *t, pid_t exiting)
{
	pid_t pid = t->pid;
	char path[64];
	struct dirent *de;
	DIR *d;
	int live = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 1;
	while (!live && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0 && tid != exiting && !seen_exiting(t, (pid_t)tid))
			live = thread_lives_on(pid, tid);
	}
	closedir(d);
	return !live;
}

static void handle_stop(struct mt_target *t, pid_t tid, int status, enum mt_target_event *ev)
{
	int event = status >> 16, sig = WSTOPSIG(status);

	switch (event) {
	case PTRACE_EVENT_EXIT:
		note_exiting(t, tid);
		if (!t->exit_tid && process_ending(t, tid)) {
			t->exit_tid = tid;
			*ev = MT_TARGET_EXITING;
			return;
		}
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	case PTRACE_EVENT_STOP:
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, tid, NULL, NULL); /* group stop: stay stopped */
		else
			ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	case 0:
		/* Signal-delivery stop: deliver the signal as if untraced. */
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
		return;
	default:
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
}

enum mt_target_event mt_target_poll(struct mt_target *t)
{
	enum mt_target_event ev = t->exit_tid ? MT_TARGET_EXITING : MT_TARGET_RUNNING;
	int status;
	pid_t tid;

	if (t->gone)
		return MT_TARGET_GONE;
	if (!t->traced && !t->launched) {
		struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

		/* Only the pidfd: readable once the process has exited. */
		if (poll(&p, 1, 0) > 0)
			t->gone = 1;
		return t->gone ? MT_TARGET_GONE : ev;
	}
	while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
		if (WIFSTOPPED(status)) {
			handle_stop(t, tid, status, &ev);
		} else if (tid == t->pid) {
			t->gone = 1;
			t->status = status;
		}
	}
	return t->gone ? MT_TARGET_GONE : ev;
}

void mt_target_let_exit(struct mt_target *t)
{
	if (t->exit_tid)
		ptrace(PTRACE_CONT, t->exit_tid, NULL, NULL);
	t->exit_tid = 0;
}

/*
 * Detaches one thread from whatever stop it is in, passing on a pending
 * signal. A thread that is exiting may never stop again (and a blocking
 * wait could then deadlock on a zombie leader), so the wait is bounded:
 * such a thread is detached by the kernel as it dies.
 */
static int detach_one(pid_t tid)
{
	int status, sig = 0;

	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return 0; /* not (or no longer) ours */
	for (int ms = 0; ms < DETACH_WAIT_MS; ms++) {
		pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

		if (r < 0 || (r == tid && !WIFSTOPPED(status)))
			return 1;
		if (r == tid) {
			if ((status >> 16) == 0)
				sig = WSTOPSIG(status);
			ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

void mt_target_detach(struct mt_target *t)
{
	char path[64];
	int any;

	if (t->exit_tid) {
		ptrace(PTRACE_DETACH, t->exit_tid, NULL, NULL);
		t->exit_tid = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	/* Repeat: a thread may have been created (and auto-attached) during a pass. */
	do {
		DIR *d = opendir(path);
		struct dirent *de;

		any = 0;
		if (!d)
			break;
		while ((de = readdir(d))) {
			long tid = strtol(de->d_name, NULL, 10);

			if (tid > 0)
				any |= detach_one((pid_t)tid);
		}
		closedir(d);
	} while (any);
	t->traced = 0;
}

int mt_target_wait_exit(struct mt_target *t)
{
	while (t->launched && !t->gone) {
		int status;
		pid_t r = waitpid(t->pid, &status, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		t->gone = 1;
		t->status = status;
	}
	return t->status;
}

void mt_target_free(struct mt_target *t)
{
	free(t->exiting);
	t->exiting = NULL;
	t->nexiting = t->capexiting = 0;
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
}

void mt_target_abort(struct mt_target *t)
{
	if (t->release_fd >= 0)
		close(t->release_fd); /* the child sees EOF and exits without exec */
	if (t->exec_fd >= 0)
		close(t->exec_fd);
	t->release_fd = t->exec_fd = -1;
	if (t->launched && !t->gone) {
		if (t->traced)
			mt_target_detach(t);
		mt_target_wait_exit(t);
	}
}
