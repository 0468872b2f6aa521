/* SPDX-License-Identifier: MIT */
/*
 * The traced process: launched stopped before exec, or attached by pid.
 *
 * Exit detection keeps the maps readable: every thread is seized with
 * ptrace (PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE), so the thread that
 * ends the process stops in PTRACE_EVENT_EXIT before the kernel releases
 * its address space. ptrace is otherwise transparent: signals are passed
 * on, group stops kept (PTRACE_LISTEN). Tracer stops are reported as
 * SIGCHLD, so the capture loop waits on a signalfd, not on waitpid.
 * When ptrace is refused (e.g. a debugger is attached) a pidfd reports the
 * exit instead, too late to read the maps.
 */
#ifndef MTRACE_CAPTURE_TARGET_H
#define MTRACE_CAPTURE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mt_target {
	pid_t pid;                      /* thread-group id */
	int launched;                   /* a child of ours, started by mt_target_launch */
	int traced;                     /* ptrace-seized */
	int pidfd;                      /* exit notification when not traced; -1 otherwise */
	int release_fd;                 /* launch: write end of the "go" pipe */
	int exec_fd;                    /* launch: read end of the exec-status pipe */
	pid_t exit_tid;                 /* thread held in PTRACE_EVENT_EXIT, or 0 */
	pid_t *exiting;                 /* threads seen in their exit stop */
	size_t nexiting, capexiting;
	int gone;                       /* the process no longer exists */
	int status;                     /* wait status, when launched and gone */
	char warning[256];              /* attach went on with less: for the caller to report */
};

enum mt_target_event {
	MT_TARGET_RUNNING = 0,
	MT_TARGET_EXITING,              /* held at exit: maps still readable */
	MT_TARGET_GONE,                 /* exited (or exit not held) */
};

/*
 * Forks argv[0] (searched in PATH) and holds it before exec. The child
 * resets the signal mask and dispositions it inherits.
 */
int mt_target_launch(struct mt_target *t, char **argv, char *err, size_t errlen);
/* Where CMD would be run from (execvp's PATH search) into FOUND; 0 or -errno. */
int mt_target_find_command(const char *cmd, char *found, size_t len, char *err, size_t errlen);
/* The Tgid (process) of task id PID, or a negative errno. */
int mt_target_tgid(pid_t pid);

/* Checks that PID is a live process, not a thread id; *KTHREAD (unless
 * NULL): it is a kernel thread (no user code). 0 or -errno with a one-line
 * message. */
int mt_target_check_pid(pid_t pid, bool *kthread, char *err, size_t errlen);
/*
 * Checks that pid is a live process (not a thread id) and seizes its
 * threads. A refused ptrace is no error: the target is watched through a
 * pidfd instead and t->warning says what is lost.
 */
int mt_target_attach(struct mt_target *t, pid_t pid, char *err, size_t errlen);
/* Lets a launched child exec; fails with the exec error if exec failed. */
int mt_target_release(struct mt_target *t, char *err, size_t errlen);

/*
 * Handles every pending tracer stop and child exit (call on SIGCHLD, or on
 * pidfd readiness). Holds a process-ending thread at its exit stop.
 */
enum mt_target_event mt_target_poll(struct mt_target *t);
/* Lets a thread held at its exit stop finish exiting. */
void mt_target_let_exit(struct mt_target *t);
/* Stops tracing every thread (signals and group stops preserved). */
void mt_target_detach(struct mt_target *t);
/* Launched only: waits until the child has exited, returns its wait status. */
int mt_target_wait_exit(struct mt_target *t);
/* Kills a launched child that never ran its command (set-up failed before release). */
void mt_target_abort(struct mt_target *t);
/* Frees what the target holds (after detach or abort). */
void mt_target_free(struct mt_target *t);

#endif
