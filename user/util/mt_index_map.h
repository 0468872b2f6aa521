/* SPDX-License-Identifier: MIT */
/*
 * Dense indexes for 64-bit keys (CPU numbers, a thread's pid and tid): the
 * caller keeps what it has per key in an array, and the map says where.
 * Open addressing, at most half full, so a look-up is a hash and a probe
 * or two whatever the count: a busy machine's snapshot has thousands of
 * threads, and sinks look one up for every event.
 */
#ifndef MTRACE_UTIL_INDEX_MAP_H
#define MTRACE_UTIL_INDEX_MAP_H

#include <stddef.h>
#include <stdint.h>

struct mt_index_map {
	uint64_t *keys;
	uint32_t *vals;		/* index + 1; 0: a free slot */
	size_t cap, n;
};

/* KEY's index, or -1. */
int64_t mt_index_map_get(const struct mt_index_map *m, uint64_t key);
/* Maps KEY (not in the map) to INDEX; 0 or -ENOMEM. */
int mt_index_map_put(struct mt_index_map *m, uint64_t key, uint32_t index);
void mt_index_map_free(struct mt_index_map *m);

/* The key of a thread. */
static inline uint64_t mt_index_map_task(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/*
 * KEY's element of the caller's array *ARRP (*N elements of ELEM bytes,
 * capacity *CAP, grown as mt_array_reserve() does), indexed through M:
 * found, or appended zeroed for the caller to fill (*ADDED set). NULL when
 * out of memory.
 */
void *mt_index_map_slot(struct mt_index_map *m, uint64_t key, void *arrp, size_t *n,
			size_t *cap, size_t elem, int *added);

#endif
