// SPDX-License-Identifier: MIT
/*
 * Target for the capture tests: two threads ("main" and "spin-worker")
 * pinned to one CPU, so the simulated PT of that CPU is on while either
 * runs and the scheduler switches between them. In DIR it creates "ready"
 * once both threads run, calls capture_marker() once when "go" appears (a
 * uprobe trigger target), writes "tsc" (the TSC read by the main thread,
 * so a time at which it runs on CPU) each time "tsc-want" appears, and
 * returns from main (exit_group with the worker still running) when
 * "stop" appears.
 *   capture_spin CPU DIR
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <x86intrin.h>

static atomic_int stop, worker_running;

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
	atomic_store(&worker_running, 1);
	while (!atomic_load(&stop))
		n++;
	return NULL;
}

/* Answers a "tsc-want": the file appears whole (renamed into place). */
static int write_tsc(const char *want, const char *tmp, const char *out)
{
	unsigned long long tsc = __rdtsc();
	FILE *f = fopen(tmp, "w");

	if (!f || fprintf(f, "%llu\n", tsc) < 0 || fclose(f) || rename(tmp, out) ||
	    unlink(want)) {
		perror("capture_spin: tsc");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static int cpu;
	char ready[256], go[256], stopfile[256], want[256], tsc[256], tsc_tmp[256];
	pthread_t th;
	int marked = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: capture_spin CPU DIR\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	snprintf(ready, sizeof(ready), "%s/ready", argv[2]);
	snprintf(go, sizeof(go), "%s/go", argv[2]);
	snprintf(stopfile, sizeof(stopfile), "%s/stop", argv[2]);
	snprintf(want, sizeof(want), "%s/tsc-want", argv[2]);
	snprintf(tsc, sizeof(tsc), "%s/tsc", argv[2]);
	snprintf(tsc_tmp, sizeof(tsc_tmp), "%s/tsc.tmp", argv[2]);
	pin(cpu);
	if (pthread_create(&th, NULL, worker, &cpu) || pthread_setname_np(th, "spin-worker"))
		return 2;
	while (!atomic_load(&worker_running))
		;
	f = fopen(ready, "w");
	if (!f)
		return 2;
	fclose(f);
	while (access(stopfile, F_OK)) {
		if (!marked && access(go, F_OK) == 0)
			marked = capture_marker(41) == 42;
		if (access(want, F_OK) == 0 && write_tsc(want, tsc_tmp, tsc))
			return 2;
	}
	/* Leave with the worker still running: exit_group must kill it. */
	return 0;
}
