// SPDX-License-Identifier: MIT
/*
 * The traced process on this kernel (ptrace works without the module):
 * launch held before exec, the exit hold with the address space intact
 * (also when the worker thread exits first, or when main's exit_group
 * kills a running worker), attach errors, and detach leaving the target
 * running untraced. Targets are compiled here.
 */
#include "mt_test.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture_procfs.h"
#include "capture/capture_target.h"

/*
 * argv[1] = mode: "kill" (main exits while the pinned worker spins),
 * "join" (the worker returns first, main exits after joining it),
 * "spin" (runs until killed).
 */
static const char target_src[] =
	"#define _GNU_SOURCE\n"
	"#include <pthread.h>\n#include <sched.h>\n#include <stdatomic.h>\n"
	"#include <string.h>\n#include <unistd.h>\n"
	"static atomic_int up;\n"
	"static void pin(void){cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);sched_setaffinity(0,sizeof s,&s);}\n"
	"static void *spin(void *a){(void)a;pin();atomic_store(&up,1);for(;;);return 0;}\n"
	"static void *quit(void *a){(void)a;return 0;}\n"
	"int main(int c,char**v){pthread_t t;pin();if(c<2)return 2;\n"
	" if(!strcmp(v[1],\"join\")){pthread_create(&t,0,quit,0);pthread_join(t,0);usleep(20000);return 0;}\n"
	" pthread_create(&t,0,spin,0);while(!atomic_load(&up));\n"
	" if(!strcmp(v[1],\"spin\"))for(;;)pause();\n"
	" usleep(20000);return 0;}\n";

static char dir[] = "/tmp/mt-target-XXXXXX";
static char prog[300];
static char err[512];

__attribute__((destructor)) static void remove_dir(void)
{
	char cmd[400];

	if (prog[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
}

static void build_target(void)
{
	char cmd[1024];
	FILE *f;

	if (prog[0])
		return;
	if (!mkdtemp(dir))
		mt_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
	snprintf(prog, sizeof(prog), "%s/target", dir);
	snprintf(cmd, sizeof(cmd), "cc -x c - -o %s -pthread 2>&1", prog);
	f = popen(cmd, "w");
	MT_ASSERT(f);
	fputs(target_src, f);
	if (pclose(f) != 0)
		mt_skip("no C compiler to build the target");
}

/* Runs the target's event loop as the capture does: SIGCHLD through a signalfd. */
static enum mt_target_event next_event(struct mt_target *t, int sfd)
{
	for (;;) {
		struct pollfd p = { .fd = sfd, .events = POLLIN };
		struct signalfd_siginfo si;
		enum mt_target_event ev;

		MT_ASSERT_MSG(poll(&p, 1, 10000) == 1, "no SIGCHLD within 10 s");
		MT_ASSERT(read(sfd, &si, sizeof(si)) == sizeof(si));
		ev = mt_target_poll(t);
		if (ev != MT_TARGET_RUNNING)
			return ev;
	}
}

static int open_sigchld(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigprocmask(SIG_BLOCK, set, NULL);
	return signalfd(-1, set, SFD_CLOEXEC);
}

/* The program mapped executable, and its command line, as read from the held process. */
static int maps_show_program(const struct mt_target *t)
{
	struct mt_map_list l = { 0 };
	struct mt_thread_list th = { 0 };
	int found = 0, cmdline = 0;

	MT_ASSERT_EQ(mt_maps_collect(&l, t->pid, t->exit_tid, 1), 0);
	for (size_t i = 0; i < l.n; i++)
		found |= !strcmp(l.maps[i].path, prog) && (l.maps[i].prot & MT_BUNDLE_PROT_EXEC);
	mt_maps_free(&l);
	MT_ASSERT_EQ(mt_threads_collect(&th, t->pid, t->exit_tid, 1), 0);
	for (size_t i = 0; i < th.n; i++)
		cmdline |= th.t[i].tid == (uint32_t)t->pid && th.t[i].cmdline_len > strlen(prog) &&
			   !strcmp(th.t[i].cmdline, prog);
	mt_threads_free(&th);
	return found && cmdline;
}

/* Lets a target held at its exit go; it must exit with status 0. */
static void let_held_target_exit(struct mt_target *t, int sfd, const sigset_t *set)
{
	mt_target_let_exit(t);
	mt_target_detach(t);
	MT_ASSERT(WIFEXITED(mt_target_wait_exit(t)));
	MT_ASSERT_EQ(WEXITSTATUS(t->status), 0);
	mt_target_free(t);
	close(sfd);
	sigprocmask(SIG_UNBLOCK, set, NULL);
}

static void run_to_exit(const char *mode)
{
	char *argv[] = { prog, (char *)mode, NULL };
	struct mt_target t;
	sigset_t set;
	int sfd;

	build_target();
	sfd = open_sigchld(&set);
	MT_ASSERT_EQ(mt_target_launch(&t, argv, err, sizeof(err)), 0);
	MT_ASSERT(t.traced && t.launched);
	MT_ASSERT_EQ(mt_target_release(&t, err, sizeof(err)), 0);
	MT_ASSERT_EQ(next_event(&t, sfd), MT_TARGET_EXITING);
	MT_ASSERT(t.exit_tid > 0);
	MT_ASSERT_MSG(maps_show_program(&t), "maps of the held process lack %s", prog);
	let_held_target_exit(&t, sfd, &set);
}

MT_TEST(exit_held_when_main_kills_worker)
{
	run_to_exit("kill");
}

MT_TEST(thread_exit_is_not_process_exit)
{
	/* The worker's own exit must not be taken for the end: only main's is. */
	char *argv[] = { prog, "join", NULL };
	struct mt_target t;
	sigset_t set;
	int sfd;

	build_target();
	sfd = open_sigchld(&set);
	MT_ASSERT_EQ(mt_target_launch(&t, argv, err, sizeof(err)), 0);
	MT_ASSERT_EQ(mt_target_release(&t, err, sizeof(err)), 0);
	MT_ASSERT_EQ(next_event(&t, sfd), MT_TARGET_EXITING);
	MT_ASSERT_EQ(t.exit_tid, t.pid);
	MT_ASSERT(maps_show_program(&t));
	let_held_target_exit(&t, sfd, &set);
}

MT_TEST(launch_errors)
{
	char *missing[] = { "mt-no-such-command-here", NULL };
	char text[400], want[500], *notexec[] = { text, NULL };
	struct mt_target t;
	FILE *f;

	MT_ASSERT_EQ(mt_target_launch(&t, missing, err, sizeof(err)), -ENOENT);
	MT_ASSERT_STREQ(err, "cannot run 'mt-no-such-command-here': command not found in PATH");
	build_target();
	snprintf(text, sizeof(text), "%s/data.txt", dir);
	f = fopen(text, "w");
	MT_ASSERT(f);
	fclose(f);
	MT_ASSERT_EQ(chmod(text, 0644), 0);
	MT_ASSERT_EQ(mt_target_launch(&t, notexec, err, sizeof(err)), -EACCES);
	snprintf(want, sizeof(want), "cannot run '%s': Permission denied", text);
	MT_ASSERT_STREQ(err, want);
}

MT_TEST(aborted_launch_never_runs_the_command)
{
	char marker[400], *argv[] = { "touch", marker, NULL };
	struct mt_target t;

	build_target();
	snprintf(marker, sizeof(marker), "%s/ran", dir);
	MT_ASSERT_EQ(mt_target_launch(&t, argv, err, sizeof(err)), 0);
	mt_target_abort(&t);
	MT_ASSERT(t.gone);
	MT_ASSERT(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 127);
	MT_ASSERT(access(marker, F_OK) != 0);
	mt_target_free(&t);
}

MT_TEST(attach_and_detach)
{
	char *argv[] = { prog, "spin", NULL };
	struct mt_target t;
	pid_t child, worker = 0;
	char path[96], line[256];
	FILE *f;

	build_target();
	child = fork();
	MT_ASSERT(child >= 0);
	if (child == 0) {
		execv(prog, argv);
		_exit(127);
	}
	/* The worker exists once the task list has two entries. */
	for (int i = 0; i < 1000 && !worker; i++) {
		snprintf(path, sizeof(path), "ls /proc/%d/task", (int)child);
		f = popen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (atoi(line) != child)
				worker = atoi(line);
		if (f)
			pclose(f);
		usleep(1000);
	}
	MT_ASSERT(worker > 0);
	MT_ASSERT_EQ(mt_target_attach(&t, worker, err, sizeof(err)), -EINVAL);
	snprintf(line, sizeof(line), "%d is a thread of process %d: give -p %d", (int)worker,
		 (int)child, (int)child);
	MT_ASSERT(strstr(err, line));
	MT_ASSERT_EQ(mt_target_attach(&t, child, err, sizeof(err)), 0);
	MT_ASSERT(t.traced);
	MT_ASSERT_EQ(mt_thread_tracer(child, child), getpid());
	MT_ASSERT_EQ(mt_thread_tracer(child, worker), getpid());
	mt_target_detach(&t);
	MT_ASSERT_EQ(mt_thread_tracer(child, child), 0);
	MT_ASSERT_EQ(mt_thread_tracer(child, worker), 0);
	MT_ASSERT_EQ(kill(child, 0), 0);
	mt_target_free(&t);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	MT_ASSERT_EQ(mt_target_attach(&t, child, err, sizeof(err)), -ESRCH);
	MT_ASSERT(strstr(err, "does not exist"));
}
