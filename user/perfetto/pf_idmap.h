/* SPDX-License-Identifier: MIT */
/*
 * Per-sequence interning state: maps a function id to the iid it was given
 * on one packet sequence (iids are dense from 1 in first-use order, so the
 * hottest functions of a thread get one-byte iids).
 */
#ifndef MTRACE_PF_IDMAP_H
#define MTRACE_PF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct pf_idmap {
	uint32_t *keys;		/* function id + 1, 0 = empty */
	uint32_t *vals;		/* iid */
	size_t nslots;		/* power of two */
	uint32_t count;		/* iids handed out so far */
};

static inline size_t pf_idmap_slot(uint32_t key, size_t nslots)
{
	/* Fibonacci hashing: function ids are dense, spread them out. */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (nslots - 1);
}

/* The iid of @func on this sequence, 0 when it has none yet. */
static inline uint32_t pf_idmap_get(const struct pf_idmap *m, uint32_t func)
{
	uint32_t key = func + 1;

	if (!m->nslots)
		return 0;
	for (size_t i = pf_idmap_slot(key, m->nslots);; i = (i + 1) & (m->nslots - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (!m->keys[i])
			return 0;
	}
}

/* Gives @func the next iid and returns it; 0 when out of memory. */
uint32_t pf_idmap_add(struct pf_idmap *m, uint32_t func);
void pf_idmap_free(struct pf_idmap *m);

#endif
