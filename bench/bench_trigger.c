// SPDX-License-Identifier: MIT
/*
 * Per-hit cost of an armed trigger that does not fire, against the same
 * uprobe running an empty BPF program, measured in this process on a
 * function it calls N times (default 100000; argv[1] overrides):
 *
 *   plain    no probe at all (the call itself)
 *   empty    uprobe + a two-instruction BPF program ("return 0")
 *   trigger  uprobe + mtrace's trigger program with tid= and if= filters
 *            that every call passes and a hit= count it never reaches, so
 *            every hit runs all filters and the atomic hit counter
 *
 * It also measures the notify freeze path's delay: from the hit (the BPF
 * record's CLOCK_MONOTONIC time) to the moment a thread blocked in
 * mt_trigger_set_wait() has the record, over LAT_SAMPLES re-armed firings.
 *
 * The calls are split into ROUNDS rounds that alternate between the empty
 * program and the trigger (attached afresh each round), so slow phases of a
 * noisy machine hit both alike; each figure is the median over its rounds.
 * The ratio trigger/empty is what mtrace adds on top of the kernel's
 * uprobe trap; the absolute figures are dominated by that trap, which is
 * much slower inside a VM than on bare metal. Needs root (BPF, uprobes).
 */
#include "trigger/trigger.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 11
#define LAT_SAMPLES 21
#define LAT_ARG 777
#define TARGET_RATIO 1.10

__attribute__((noinline)) long bench_fn(long i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ns per call over N calls. */
static double time_calls(long n)
{
	double t0 = now_s();
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += bench_fn(i);
	__asm__ volatile("" : : "r"(sum));
	return (now_s() - t0) * 1e9 / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void *hit_later(void *arg)
{
	(void)arg;
	usleep(2000);	/* let the main thread block in the wait first */
	bench_fn(LAT_ARG);
	return NULL;
}

/*
 * Median and maximum hit-to-user-space delay of the notify path, in ns, for
 * a trigger on bench_fn(LAT_ARG) in EXE. 0, or -1 with ERR set.
 */
static int notify_latency(const char *exe, double *med, double *max, char *err, size_t errlen)
{
	struct mt_trigger_options opt = { .pid = getpid(),
					  .freeze = MT_TRIGGER_FREEZE_PREFER_NOTIFY };
	double lat[LAT_SAMPLES];
	struct mt_trigger_spec spec;
	struct mt_trigger_set *set;
	char text[4200];
	int rc = 0;

	snprintf(text, sizeof(text), "uprobe:%s:bench_fn,if=arg0==%d", exe, LAT_ARG);
	if (mt_trigger_spec_parse(text, &spec, err, errlen))
		return -1;
	mt_trigger_set_open(&set, &spec, 1, &opt, err, errlen);
	for (int i = 0; set && i < LAT_SAMPLES && !rc; i++) {
		struct mt_trig_event ev;
		pthread_t t;

		pthread_create(&t, NULL, hit_later, NULL);
		if (mt_trigger_set_wait(set, 5000, &ev) == 1) {
			lat[i] = now_s() * 1e9 - (double)ev.time_ns;
		} else {
			snprintf(err, errlen, "no trigger record within 5 s");
			rc = -1;
		}
		pthread_join(t, NULL);
		mt_trigger_set_rearm(set);
	}
	if (!set)
		rc = -1;
	mt_trigger_set_close(set);
	mt_trigger_spec_free(&spec);
	if (rc)
		return -1;
	*med = median(lat, LAT_SAMPLES);
	*max = lat[LAT_SAMPLES - 1];	/* sorted by median() */
	return 0;
}

/* A uprobe at OFF in EXE running an empty program; perf fd or -1. */
static int attach_empty(const char *exe, uint64_t off, char *err, size_t errlen)
{
	static const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type, prog, pfd;
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");

	if (!f || fscanf(f, "%d", &type) != 1) {
		snprintf(err, errlen, "no uprobe PMU");
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "empty", "GPL", ret0, 2, NULL);
	if (prog < 0) {
		snprintf(err, errlen, "cannot load an empty BPF program: %s", strerror(-prog));
		return -1;
	}
	attr.type = type;
	attr.config1 = (uint64_t)(uintptr_t)exe;	/* uprobe path */
	attr.config2 = off;				/* and file offset */
	pfd = (int)syscall(SYS_perf_event_open, &attr, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0 || ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0)) {
		snprintf(err, errlen, "cannot attach the empty uprobe: %s", strerror(errno));
		if (pfd >= 0)
			close(pfd);
		close(prog);
		return -1;
	}
	close(prog);	/* the perf event holds it */
	return pfd;
}

static int skip(const char *why)
{
	printf("bench_trigger: skipped: %s\n", why);
	printf("RESULT trigger per-hit cost / empty uprobe|skipped: %s|<= %.2fx|not met\n",
	       why, TARGET_RATIO);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	char exe[4096], text[4200], err[MT_TRIGGER_ERRLEN];
	struct mt_trigger_options opt = { .pid = getpid(),
					  .freeze = MT_TRIGGER_FREEZE_PREFER_NOTIFY };
	struct mt_trigger_spec spec;
	double plain[ROUNDS], empty[ROUNDS], trig[ROUNDS];
	struct mt_trigger_set *set = NULL;
	uint64_t off, hits;
	long per_round;
	ssize_t len;
	int pfd = -1;

	if (n <= 0) {
		fprintf(stderr, "usage: bench_trigger [CALLS]\n");
		return 2;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return skip("cannot read /proc/self/exe");
	exe[len] = 0;
	snprintf(text, sizeof(text), "uprobe:%s:bench_fn,tid=%d,if=arg0<0x7fffffffffff,"
		 "hit=0xffffffffffff", exe, (int)getpid());
	if (mt_trigger_spec_parse(text, &spec, err, sizeof(err)) ||
	    mt_trigger_resolve(&spec, &off, err, sizeof(err))) {
		fprintf(stderr, "bench_trigger: %s\n", err);
		return 1;
	}

	per_round = n / ROUNDS > 0 ? n / ROUNDS : 1;
	for (int r = 0; r < ROUNDS; r++) {
		plain[r] = time_calls(per_round);

		pfd = attach_empty(exe, off, err, sizeof(err));
		if (pfd < 0)
			break;
		empty[r] = time_calls(per_round);
		close(pfd);

		mt_trigger_set_open(&set, &spec, 1, &opt, err, sizeof(err));
		if (!set)
			break;
		trig[r] = time_calls(per_round);
		hits = mt_trigger_set_hits(set, 0);
		mt_trigger_set_close(set);
		if (hits != (uint64_t)per_round) {
			fprintf(stderr, "bench_trigger: the trigger saw %llu hits, expected %ld\n",
				(unsigned long long)hits, per_round);
			mt_trigger_spec_free(&spec);
			return 1;
		}
	}
	mt_trigger_spec_free(&spec);
	if (pfd < 0 || !set)
		return skip(err);

	double p = median(plain, ROUNDS), e = median(empty, ROUNDS), t = median(trig, ROUNDS);
	double lat_med, lat_max;

	if (notify_latency(exe, &lat_med, &lat_max, err, sizeof(err))) {
		fprintf(stderr, "bench_trigger: notify latency: %s\n", err);
		return 1;
	}

	printf("%d rounds of %ld calls per configuration, medians:\n", ROUNDS, per_round);
	printf("plain call            %10.1f ns\n", p);
	printf("uprobe, empty program %10.1f ns per hit\n", e);
	printf("uprobe, mtrace filter %10.1f ns per hit\n", t);
	printf("RESULT trigger per-hit cost / empty uprobe|%.3fx|<= %.2fx|%s\n", t / e,
	       TARGET_RATIO, t / e <= TARGET_RATIO ? "met" : "not met");
	printf("RESULT trigger per-hit cost (not firing)|%.0f ns|(info, VM-bound)|met\n", t - p);
	printf("RESULT empty uprobe per-hit cost|%.0f ns|(info, VM-bound)|met\n", e - p);
	printf("notify path, hit to user space: median %.0f us, max %.0f us (%d firings)\n",
	       lat_med / 1e3, lat_max / 1e3, LAT_SAMPLES);
	printf("RESULT trigger notify latency (median)|%.0f us|(info, VM-bound)|met\n",
	       lat_med / 1e3);
	return 0;
}
