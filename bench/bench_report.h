/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: a CPU-time clock, best-of-N timing, and the
 * "RESULT figure|value|target|met" lines that bench/run.sh tabulates.
 */
#ifndef MTRACE_BENCH_REPORT_H
#define MTRACE_BENCH_REPORT_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Process CPU time, system time included: on a shared machine, time spent
 * waiting for a CPU would swamp wall-clock figures. The variants compared
 * are single-threaded, so on an idle machine this equals wall time.
 */
static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* OUT = the fastest of REPEAT runs of EXPR; EXPR < 0 makes the caller return 1. */
#define BENCH_BEST(repeat, expr, out)                                   \
	do {                                                            \
		(out) = 1e30;                                           \
		for (int i_ = 0; i_ < (repeat); i_++) {                 \
			double t0_ = bench_now(), t_;                   \
			if ((expr) < 0)                                 \
				return 1;                               \
			t_ = bench_now() - t0_;                         \
			if (t_ < (out))                                 \
				(out) = t_;                             \
		}                                                       \
	} while (0)

/* The directory of this executable (O/bench), where benchmarks keep data. */
static inline int bench_self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* One figure against its target; CMP is ">=" or "<=". */
static inline void bench_result(const char *fig, double val, const char *unit, const char *cmp,
				double target)
{
	int met = !strcmp(cmp, ">=") ? val >= target : val <= target;

	printf("RESULT %s|%.2f%s|%s %.2f%s|%s\n", fig, val, unit, cmp, target, unit,
	       met ? "met" : "not met");
}

#endif
