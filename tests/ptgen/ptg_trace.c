// SPDX-License-Identifier: MIT
/* Single-step tracer (ptrace) recording every executed instruction. */
#include "ptg_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptg_sym.h"

#define REG(r) offsetof(struct user_regs_struct, r)

/* Per-thread stepping state. "pending" is the IP the thread stood at when it
 * last stopped: the next instruction it executes. It is appended to the
 * trace once a later stop shows it ran. */
struct tstate {
	bool pending_valid;
	bool fresh;	/* waiting for the initial SIGSTOP of a new thread */
	bool done;
	uint64_t pending;
};

struct tracer {
	struct ptg_run *run;
	struct tstate *st;
	size_t total, max;
	uint64_t ret_addr, ret_sp;	/* the start function returns there */
};

int ptg_thread_add_ips(struct ptg_thread *t, const uint64_t *ip, size_t n)
{
	if (t->n + n > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		uint64_t *v;

		while (cap < t->n + n)
			cap *= 2;
		v = realloc(t->ip, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->ip = v;
		t->cap = cap;
	}
	memcpy(t->ip + t->n, ip, n * sizeof(*ip));
	t->n += n;
	return 0;
}

int ptg_thread_add_async(struct ptg_thread *t, const struct ptg_async *a)
{
	if (t->nasync == t->capasync) {
		size_t cap = t->capasync ? t->capasync * 2 : 64;
		struct ptg_async *v = realloc(t->async, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->async = v;
		t->capasync = cap;
	}
	t->async[t->nasync++] = *a;
	return 0;
}

static int thread_index(struct tracer *tr, pid_t tid)
{
	struct ptg_run *run = tr->run;
	struct ptg_thread *nt;
	struct tstate *ns;

	for (size_t i = 0; i < run->nthr; i++)
		if (run->thr[i].tid == tid)
			return (int)i;
	nt = realloc(run->thr, (run->nthr + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	run->thr = nt;
	ns = realloc(tr->st, (run->nthr + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	tr->st = ns;
	memset(&run->thr[run->nthr], 0, sizeof(*nt));
	run->thr[run->nthr].tid = tid;
	run->thr[run->nthr].parent = -1;
	tr->st[run->nthr] = (struct tstate){ .fresh = true };
	return (int)run->nthr++;
}

static bool handler_installed(pid_t pid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/* Runs the child to the start symbol with a temporary int3 there. */
static int run_to_start(struct tracer *tr, const char *sym)
{
	struct ptg_run *run = tr->run;
	struct ptg_image early;
	uint64_t addr;
	long word;
	int status, err;

	err = ptg_image_capture(&early, run->pid);
	if (err)
		return err;
	err = ptg_sym_addr(&early, run->exe, sym, &addr);
	ptg_image_fini(&early);
	if (err)
		return err;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, run->pid, addr, 0);
	if (errno || ptrace(PTRACE_POKETEXT, run->pid, addr, (word & ~0xffL) | 0xcc))
		goto fail;
	for (int sig = 0;;) {
		if (ptrace(PTRACE_CONT, run->pid, 0, sig) || waitpid(run->pid, &status, 0) < 0)
			goto fail;
		if (!WIFSTOPPED(status)) {
			fprintf(stderr, "ptgen: %s ended before reaching %s\n", run->exe, sym);
			return -ESRCH;
		}
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP &&
		    (uint64_t)ptrace(PTRACE_PEEKUSER, run->pid, REG(rip), 0) == addr + 1)
			break;
	}
	if (ptrace(PTRACE_POKETEXT, run->pid, addr, word) ||
	    ptrace(PTRACE_POKEUSER, run->pid, REG(rip), addr))
		goto fail;
	run->start_addr = addr;
	tr->ret_sp = (uint64_t)ptrace(PTRACE_PEEKUSER, run->pid, REG(rsp), 0);
	tr->ret_addr = (uint64_t)ptrace(PTRACE_PEEKDATA, run->pid, tr->ret_sp, 0);
	tr->ret_sp += 8;
	return 0;
fail:
	fprintf(stderr, "ptgen: ptrace on %d failed: %s\n", (int)run->pid, strerror(errno));
	return -errno;
}

/* Ends tracing: remembers where each live thread stood, kills the process. */
static void stop_all(struct tracer *tr)
{
	struct ptg_run *run = tr->run;

	for (size_t i = 0; i < run->nthr; i++)
		if (!tr->st[i].done && tr->st[i].pending_valid)
			run->thr[i].end_ip = tr->st[i].pending;
	kill(run->pid, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static bool is_syscall(const struct ptg_run *run, uint64_t ip)
{
	static const uint8_t syscall_insn[2] = { 0x0f, 0x05 };
	uint8_t code[2];

	return ptg_image_read(&run->image, ip, code, sizeof(code)) == sizeof(code) &&
	       !memcmp(code, syscall_insn, sizeof(code));
}

/* Thread @i just ran the instruction at @ip. After a system call that can
 * map or unmap code (dlopen, dlclose, JIT-style mmap and mprotect), the
 * image learns the new mappings, as the capture's maps records would. */
static int after_insn(struct tracer *tr, int i, pid_t tid, uint64_t ip)
{
	struct ptg_run *run = tr->run;
	long nr;

	if (!is_syscall(run, ip))
		return 0;
	errno = 0;
	nr = ptrace(PTRACE_PEEKUSER, tid, REG(orig_rax), 0);
	if (errno)
		return -errno;
	if (nr != SYS_mmap && nr != SYS_mprotect && nr != SYS_munmap && nr != SYS_mremap)
		return 0;
	return ptg_image_refresh(&run->image, run->pid, i, run->thr[i].n - 1, &run->mev,
				 &run->nmev);
}

/* One ptrace stop of thread @i; returns 1 when tracing should end. */
static int on_stop(struct tracer *tr, int i, pid_t tid, int status)
{
	struct ptg_thread *t = &tr->run->thr[i];
	struct tstate *s = &tr->st[i];
	int sig = WSTOPSIG(status), event = status >> 16, inject = 0, err = 0;
	uint64_t rip;

	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child;
		int c;

		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &child))
			return -errno;
		c = thread_index(tr, (pid_t)child);
		if (c < 0)
			return c;
		t = &tr->run->thr[i];	/* thread_index may have moved the array */
		tr->run->thr[c].parent = i;
		tr->run->thr[c].parent_index = t->n;
		return ptrace(PTRACE_SINGLESTEP, tid, 0, 0) ? -errno : 0;
	}
	errno = 0;
	rip = (uint64_t)ptrace(PTRACE_PEEKUSER, tid, REG(rip), 0);
	if (errno)
		return -errno;
	if (sig == SIGSTOP && s->fresh) {
		s->fresh = false;
	} else if (sig == SIGTRAP && !event) {
		if (s->pending_valid)
			err = ptg_thread_add_ips(t, &s->pending, 1);
		if (!err && s->pending_valid)
			err = after_insn(tr, i, tid, s->pending);
		tr->total++;
	} else if (event) {
		return ptrace(PTRACE_SINGLESTEP, tid, 0, 0) ? -errno : 0;
	} else {
		/* A signal stops the thread before delivery. If it executed the
		 * pending instruction first, record that; a handler entry becomes
		 * an async event, an ignored signal changes nothing. */
		inject = sig;
		if (s->pending_valid && rip != s->pending) {
			err = ptg_thread_add_ips(t, &s->pending, 1);
			if (!err)
				err = after_insn(tr, i, tid, s->pending);
			s->pending = rip;
		}
		if (!err && handler_installed(tr->run->pid, sig)) {
			err = ptg_thread_add_async(t, &(struct ptg_async){ t->n, rip, sig });
			s->pending_valid = false;
			return err ? err : ptrace(PTRACE_SINGLESTEP, tid, 0, inject) ? -errno : 0;
		}
	}
	if (err)
		return err;
	s->pending = rip;
	s->pending_valid = true;
	if (i == 0 && rip == tr->ret_addr &&
	    (uint64_t)ptrace(PTRACE_PEEKUSER, tid, REG(rsp), 0) == tr->ret_sp)
		return 1;
	if (tr->total >= tr->max) {
		fprintf(stderr, "ptgen: stopping after %zu instructions\n", tr->total);
		return 1;
	}
	return ptrace(PTRACE_SINGLESTEP, tid, 0, inject) ? -errno : 0;
}

/* A thread is gone while standing at @pending. If that is a SYSCALL, it was
 * the exit and ran; otherwise the thread was killed there (a fatal signal,
 * another thread's exit_group) and that is where its trace ends. */
static int thread_gone(const struct ptg_run *run, struct ptg_thread *t, uint64_t pending)
{
	if (is_syscall(run, pending))
		return ptg_thread_add_ips(t, &pending, 1);
	t->end_ip = pending;
	return 0;
}

static int step_loop(struct tracer *tr)
{
	struct ptg_run *run = tr->run;
	int status, err = ptrace(PTRACE_SINGLESTEP, run->pid, 0, 0) ? -errno : 0;

	tr->st[0] = (struct tstate){ .pending_valid = true, .pending = run->start_addr };
	while (!err) {
		pid_t tid = waitpid(-1, &status, __WALL);
		int i;

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			return errno == ECHILD ? 0 : -errno;
		}
		i = thread_index(tr, tid);
		if (i < 0)
			return i;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tr->st[i].pending_valid && !tr->st[i].done)
				err = thread_gone(run, &run->thr[i], tr->st[i].pending);
			tr->st[i].done = true;
			tr->st[i].pending_valid = false;
			continue;
		}
		err = on_stop(tr, i, tid, status);
		if (err == 1) {
			stop_all(tr);
			return 0;
		}
	}
	fprintf(stderr, "ptgen: tracing failed: %s\n", strerror(-err));
	stop_all(tr);
	return err;
}

int ptg_trace_run(struct ptg_run *run, char *const argv[], const struct ptg_trace_opts *o)
{
	struct tracer tr = { .run = run, .max = o && o->max_insns ? o->max_insns : 10000000 };
	char path[64], exe[PATH_MAX];
	ssize_t len;
	int status, err;

	memset(run, 0, sizeof(*run));
	run->pid = fork();
	if (run->pid < 0)
		return -errno;
	if (!run->pid) {
		/* Fixed addresses make runs repeatable. */
		personality(ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execv(argv[0], argv);
		fprintf(stderr, "ptgen: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(run->pid, &status, 0) < 0 || !WIFSTOPPED(status)) {
		fprintf(stderr, "ptgen: %s did not start\n", argv[0]);
		return -ECHILD;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)run->pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	err = len < 0 ? -errno : 0;
	if (!err) {
		exe[len] = 0;
		run->exe = strdup(exe);
		err = run->exe ? 0 : -ENOMEM;
	}
	if (!err && ptrace(PTRACE_SETOPTIONS, run->pid, 0, PTRACE_O_EXITKILL))
		err = -errno;
	if (!err)
		err = run_to_start(&tr, o && o->start_sym ? o->start_sym : "main");
	if (!err)
		err = ptg_image_capture(&run->image, run->pid);
	if (!err && ptrace(PTRACE_SETOPTIONS, run->pid, 0,
			   PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE))
		err = -errno;
	if (!err)
		err = thread_index(&tr, run->pid) < 0 ? -ENOMEM : 0;
	if (!err)
		err = step_loop(&tr);
	else
		stop_all(&tr);
	free(tr.st);
	if (err)
		ptg_run_fini(run);
	return err;
}

size_t ptg_run_insns(const struct ptg_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->nthr; i++)
		n += run->thr[i].n;
	return n;
}

void ptg_run_fini(struct ptg_run *run)
{
	for (size_t i = 0; i < run->nthr; i++) {
		free(run->thr[i].ip);
		free(run->thr[i].async);
	}
	free(run->thr);
	free(run->exe);
	for (size_t i = 0; i < run->nmev; i++)
		free(run->mev[i].path);
	free(run->mev);
	ptg_image_fini(&run->image);
	memset(run, 0, sizeof(*run));
}
