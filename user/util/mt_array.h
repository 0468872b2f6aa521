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
#include <stdint.h>
#include <string.h>

/*
 * Makes room in *arrp (an array of elem-byte elements, n in use, capacity
 * *cap) for `more` elements after the n: the capacity at least doubles, and
 * is at least n + more. 0, or -ENOMEM (also when the size would overflow;
 * -EINVAL for elem 0) with *arrp and *cap untouched. Elements the call adds
 * to the capacity are zeroed, so an array indexed by id reads 0 where unset.
 */
int mt_array_reserve(void *arrp, size_t *cap, size_t n, size_t more, size_t elem);

/* qsort() order of uint64_t values, ascending. */
int mt_array_cmp_u64(const void *a, const void *b);

/* Whether CAP already holds N + MORE elements. */
static inline int mt_array_has_room(size_t cap, size_t n, size_t more)
{
	return cap >= n && cap - n >= more;
}

/* mt_array_reserve() for an array variable and its capacity variable; when
 * there is room already it costs a comparison, not a call (hot loops grow
 * arrays one element at a time). */
#define MT_ARRAY_RESERVE(arr, cap, n, more) \
	(mt_array_has_room((cap), (n), (more)) ? 0 \
	 : mt_array_reserve(&(arr), &(cap), (n), (more), sizeof(*(arr))))

/*
 * An array used as a queue, its elements [*head, *n) still wanted: once
 * more than MIN are done with and they are most of it, moves the rest to
 * the front (amortized O(1) per element), so that a queue that never
 * empties holds what is queued, not everything it ever held.
 */
static inline void mt_array_drop_head(void *arr, size_t *head, size_t *n, size_t elem, size_t min)
{
	if (*head <= min || *head * 2 <= *n)
		return;
	memmove(arr, (char *)arr + *head * elem, (*n - *head) * elem);
	*n -= *head;
	*head = 0;
}

#define MT_ARRAY_DROP_HEAD(arr, head, n, min) \
	mt_array_drop_head((arr), &(head), &(n), sizeof(*(arr)), (min))

/* Capacity for at least n elements of an array indexed by id. */
#define MT_ARRAY_GROW_TO(arr, cap, n) MT_ARRAY_RESERVE(arr, cap, 0, n)

/*
 * In arr (n elements of elem bytes, sorted by the uint64_t at byte offset
 * `offset` of each), the index of the first element whose key is above
 * `key`: n when there is none, and the element before it, if any, is the
 * last one starting at or below `key` (the range or symbol holding it).
 * Inline: the decoder's address lookups run it for every function.
 */
static inline size_t mt_array_upper_bound(const void *arr, size_t n, size_t elem, size_t offset,
					  uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)arr + mid * elem + offset, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* mt_array_upper_bound() on an array variable sorted by its uint64_t FIELD
 * (a field of another size does not compile). */
#define MT_ARRAY_UPPER_BOUND(arr, n, field, key)                                              \
	((void)sizeof(char[sizeof((arr)->field) == sizeof(uint64_t) ? 1 : -1]),              \
	 mt_array_upper_bound((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), \
			      (key)))

#endif
