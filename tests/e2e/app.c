// SPDX-License-Identifier: MIT
/*
 * The end-to-end test and demo target: a small "request server" with two
 * worker threads, each pinned to one CPU, and a slow path that is the
 * trigger. The script (tests/vm/guest/tests.d/70-e2e.sh) drives it through
 * files in CTLDIR:
 *
 *   a.ready   holds worker-a's tid: it runs on CPU 0 and spins until
 *             a.done exists, then exits (before the freeze: the capture
 *             must remember its name)
 *   b.start   lets worker-b start; b.ready holds its tid: it runs on CPU 1
 *             and spins until b.go exists, then calls slow_path() once,
 *             which fires the trigger
 *
 * The workers spin because the simulated PT backend only accepts bytes for a
 * CPU while a traced thread runs there, as real PT only writes then.
 *
 * The request functions below are what the PT generator walks (from
 * serve_requests) to make the trace the simulated hardware is fed: plain
 * direct calls, loops and branches, no library calls, no tail calls and no
 * jump tables (see the build flags in tests/e2e/rules.mk), so the walk
 * stays inside them and its ground truth is a real call tree of this
 * program. serve_requests never returns, so the walk never returns from
 * its start function.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((used, noinline))

static volatile unsigned sink;
static char ctldir[256];

API unsigned checksum(unsigned x, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		x = (x << 5) + x + i;
	return x;
}

API unsigned parse_header(unsigned req)
{
	unsigned h = req * 2654435761u;

	if (h & 1)
		h = checksum(h, 4);
	return h >> 3;
}

API unsigned lookup_cache(unsigned key)
{
	unsigned slot = key % 61;

	if (slot > 30)
		return 0;
	return checksum(slot, 3);
}

API unsigned encode_reply(unsigned v)
{
	for (unsigned i = 0; i < 4; i++)
		if (v & (1u << i))
			v = checksum(v, 2);
	return v;
}

API unsigned compress_block(unsigned v)
{
	unsigned r = checksum(v, 8);

	if (r & 2)
		r ^= checksum(r, 8);
	return r;
}

API unsigned slow_path(unsigned v)
{
	for (unsigned i = 0; i < 3; i++)
		v = compress_block(v + i);
	return encode_reply(v);
}

API unsigned fetch_backend(unsigned key)
{
	unsigned v = checksum(key, 6);

	if (v & 4)
		v = slow_path(v);
	return v;
}

API unsigned handle_request(unsigned req)
{
	unsigned key = parse_header(req), v = lookup_cache(key);

	if (!v)
		v = fetch_backend(key);
	return encode_reply(v);
}

API void serve_requests(void)
{
	for (unsigned req = 0;; req++)
		sink = handle_request(req);
}

static int ctl_exists(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", ctldir, name);
	return access(path, F_OK) == 0;
}

static void ctl_touch(const char *name, const char *text)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ctldir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static void nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* Pins the calling thread to @cpu, names it and says so in @ready. */
static void start_worker(int cpu, const char *name, const char *ready)
{
	char tid[32];

	pin(cpu);
	pthread_setname_np(pthread_self(), name);
	snprintf(tid, sizeof(tid), "%d\n", (int)gettid());
	ctl_touch(ready, tid);
}

static void *worker_a(void *arg)
{
	(void)arg;
	start_worker(0, "worker-a", "a.ready");
	while (!ctl_exists("a.done"))
		;
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	while (!ctl_exists("b.start"))
		nap();
	start_worker(1, "worker-b", "b.ready");
	while (!ctl_exists("b.go"))
		;
	sink = slow_path(sink);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc != 2 || strlen(argv[1]) >= sizeof(ctldir)) {
		fprintf(stderr, "usage: e2e_app CTLDIR\n");
		return 2;
	}
	strcpy(ctldir, argv[1]);
	if (pthread_create(&a, NULL, worker_a, NULL) || pthread_create(&b, NULL, worker_b, NULL))
		return 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
