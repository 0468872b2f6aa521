// SPDX-License-Identifier: MIT
/*
 * Target for the capture tests: two threads ("main" and "spin-worker")
 * pinned to one CPU, so the simulated PT of that CPU is on while either
 * runs and the scheduler switches between them. Calls capture_marker()
 * once when GOFILE appears (a uprobe trigger target), returns from main
 * (exit_group with the worker still running) when STOPFILE appears.
 *   capture_spin CPU STOPFILE [GOFILE]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int stop;

__attribute__((noinline)) int capture_marker(int v)
{
	__asm__ volatile("" ::: "memory");
	return v + 1;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("capture_spin: sched_setaffinity");
		exit(2);
	}
}

static void *worker(void *arg)
{
	volatile unsigned long n = 0;

	pin(*(int *)arg);
	while (!atomic_load(&stop))
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	static int cpu;
	pthread_t th;
	int marked = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: capture_spin CPU STOPFILE [GOFILE]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	pin(cpu);
	if (pthread_create(&th, NULL, worker, &cpu) || pthread_setname_np(th, "spin-worker"))
		return 2;
	while (access(argv[2], F_OK)) {
		if (argc > 3 && !marked && access(argv[3], F_OK) == 0)
			marked = capture_marker(41) == 42;
	}
	/* Leave with the worker still running: exit_group must kill it. */
	return marked || argc == 3 ? 0 : 3;
}
