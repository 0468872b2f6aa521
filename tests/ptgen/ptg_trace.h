/* SPDX-License-Identifier: MIT */
/*
 * Single-step tracer: runs a program under ptrace from a start symbol
 * (breakpoint there, so libc start-up is not stepped) until that function
 * returns or the process ends, and records per thread every executed
 * instruction address plus the points where a signal handler was entered.
 */
#ifndef PTG_TRACE_H
#define PTG_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptg_image.h"

/* A signal handler was entered before instruction @index of the thread
 * (so ip[index] is the handler); @resume_ip is where the thread had been
 * interrupted, the IP its sigreturn goes back to. */
struct ptg_async {
	size_t index;
	uint64_t resume_ip;
	int signo;
};

struct ptg_thread {
	pid_t tid;
	int parent;		/* index of the creating thread, -1 for the first */
	size_t parent_index;	/* instruction index of the clone syscall in the parent */
	uint64_t *ip;		/* executed instructions, in order */
	size_t n, cap;
	struct ptg_async *async;
	size_t nasync, capasync;
	uint64_t end_ip;	/* where the trace stopped or the thread was killed;
				 * 0 if the thread exited by syscall */
};

struct ptg_run {
	pid_t pid;
	char *exe;		/* resolved path of the executable */
	uint64_t start_addr;	/* address of the start symbol */
	struct ptg_image image;	/* captured when the start symbol was hit, and
				 * every executable mapping created later */
	struct ptg_map_event *mev;	/* mappings created and removed later */
	size_t nmev;
	struct ptg_thread *thr;
	size_t nthr;
};

struct ptg_trace_opts {
	const char *start_sym;	/* default "main" */
	size_t max_insns;	/* stop after this many instructions in all (0: 10M) */
};

/* Append @n executed instructions / one asynchronous event to @t; -ENOMEM. */
int ptg_thread_add_ips(struct ptg_thread *t, const uint64_t *ip, size_t n);
int ptg_thread_add_async(struct ptg_thread *t, const struct ptg_async *a);

int ptg_trace_run(struct ptg_run *run, char *const argv[], const struct ptg_trace_opts *o);
size_t ptg_run_insns(const struct ptg_run *run);
void ptg_run_fini(struct ptg_run *run);

#endif
