/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Types for the module's pure logic (capabilities, configuration encoding,
 * ToPA arithmetic). Those files also compile in user space so that unit
 * tests can run them; outside the kernel this maps the few kernel types
 * they use onto the C library.
 */
#ifndef MTRACE_TYPES_H
#define MTRACE_TYPES_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;

#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))

/* The kernel's memchr_inv(): the first byte of p[0, n) that is not c. */
static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const unsigned char *b = p;

	for (; n; n--, b++)
		if (*b != (unsigned char)c)
			return (void *)b;
	return NULL;
}
#endif

/* Whether the n bytes at p are all zero (reserved fields of the ABI). */
static inline bool mtrace_zeroed(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

static inline bool mtrace_is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

#endif /* MTRACE_TYPES_H */
