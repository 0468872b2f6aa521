/* SPDX-License-Identifier: MIT */
/* The calling thread's CPU time, for the decoder's per-thread figures. */
#ifndef MTRACE_UTIL_CPUTIME_H
#define MTRACE_UTIL_CPUTIME_H

#include <stdint.h>
#include <time.h>

/* In ns; 0 when the clock cannot be read. */
static inline uint64_t mt_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
