/* SPDX-License-Identifier: MIT */
/*
 * Per-sequence interning state: maps a function id to the iid it was given
 * on one packet sequence (iids are dense from 1 in first-use order, so the
 * hottest functions of a thread get one-byte iids).
 *
 * Function ids are handed out in first-use order too, so the busy ones are
 * small: those below PF_IDMAP_DIRECT get a plain array slot (one load per
 * lookup; the array grows to the largest id the sequence used, at most
 * 16 KiB: a process's hundreds of threads each use a few functions), the
 * rest go to a hash table that only grows with the functions the sequence
 * really uses.
 */
#ifndef MTRACE_PF_IDMAP_H
#define MTRACE_PF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define PF_IDMAP_DIRECT 4096u

/* Key and value side by side: a lookup touches one cache line. */
struct pf_idmap_slot {
	uint32_t key;		/* function id + 1, 0 = empty */
	uint32_t iid;
};

struct pf_idmap {
	uint32_t *direct;	/* iid by function id < ndirect, 0 = none */
	size_t ndirect;		/* a power of two, at most PF_IDMAP_DIRECT */
	struct pf_idmap_slot *slots;
	size_t nslots;		/* power of two */
	size_t nhashed;		/* entries in slots */
	uint32_t count;		/* iids handed out so far */
};

static inline size_t pf_idmap_index(uint32_t key, size_t nslots)
{
	/* Fibonacci hashing: function ids are dense, spread them out. */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (nslots - 1);
}

/* The iid of @func on this sequence, 0 when it has none yet. */
static inline uint32_t pf_idmap_get(const struct pf_idmap *m, uint32_t func)
{
	uint32_t key = func + 1;

	if (func < PF_IDMAP_DIRECT)
		return func < m->ndirect ? m->direct[func] : 0;
	if (!m->nslots)
		return 0;
	for (size_t i = pf_idmap_index(key, m->nslots);; i = (i + 1) & (m->nslots - 1)) {
		if (m->slots[i].key == key)
			return m->slots[i].iid;
		if (!m->slots[i].key)
			return 0;
	}
}

/* Gives @func the next iid and returns it; 0 when out of memory. */
uint32_t pf_idmap_add(struct pf_idmap *m, uint32_t func);
void pf_idmap_free(struct pf_idmap *m);

#endif
