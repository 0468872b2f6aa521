/* SPDX-License-Identifier: MIT */
/*
 * The one growable array of libmtrace: a plain pointer, a count and a
 * capacity kept by the caller, grown geometrically so that appending one
 * element at a time costs amortized O(1).
 *
 *	struct item *v = NULL;
 *	size_t n = 0, cap = 0;
 *
 *	if (MT_ARRAY_RESERVE(v, cap, n, 1))
 *		return -ENOMEM;
 *	v[n++] = item;
 */
#ifndef MTRACE_UTIL_ARRAY_H
#define MTRACE_UTIL_ARRAY_H

#include <stddef.h>

/*
 * Makes room in *arrp (an array of elem-byte elements, n in use, capacity
 * *cap) for `more` elements after the n: the capacity at least doubles, and
 * is at least n + more. 0, or -ENOMEM (also when the size would overflow;
 * -EINVAL for elem 0) with *arrp and *cap untouched. Elements the call adds
 * to the capacity are zeroed, so an array indexed by id reads 0 where unset.
 */
int mt_array_reserve(void *arrp, size_t *cap, size_t n, size_t more, size_t elem);

/* mt_array_reserve() for an array variable and its capacity variable. */
#define MT_ARRAY_RESERVE(arr, cap, n, more) \
	mt_array_reserve(&(arr), &(cap), (n), (more), sizeof(*(arr)))

/* Capacity for at least n elements of an array indexed by id. */
#define MT_ARRAY_GROW_TO(arr, cap, n) MT_ARRAY_RESERVE(arr, cap, 0, n)

#endif
