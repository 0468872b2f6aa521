// SPDX-License-Identifier: MIT
/* Growth of the per-sequence iid map (pf_idmap.h). */
#include "pf_idmap.h"

#include <stdlib.h>
#include <string.h>

static void put(struct pf_idmap_slot *slots, size_t nslots, struct pf_idmap_slot s)
{
	size_t i = pf_idmap_index(s.key, nslots);

	while (slots[i].key)
		i = (i + 1) & (nslots - 1);
	slots[i] = s;
}

static int grow(struct pf_idmap *m)
{
	size_t nslots = m->nslots ? m->nslots * 2 : 64;
	struct pf_idmap_slot *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < m->nslots; i++)
		if (m->slots[i].key)
			put(slots, nslots, m->slots[i]);
	free(m->slots);
	m->slots = slots;
	m->nslots = nslots;
	return 0;
}

/* Room in the direct array for FUNC (< PF_IDMAP_DIRECT). */
static int grow_direct(struct pf_idmap *m, uint32_t func)
{
	size_t n = m->ndirect ? m->ndirect : 64;
	uint32_t *d;

	while (n <= func)
		n *= 2;
	d = realloc(m->direct, n * sizeof(*d));
	if (!d)
		return -1;
	memset(d + m->ndirect, 0, (n - m->ndirect) * sizeof(*d));
	m->direct = d;
	m->ndirect = n;
	return 0;
}

uint32_t pf_idmap_add(struct pf_idmap *m, uint32_t func)
{
	if (func < PF_IDMAP_DIRECT) {
		if (func >= m->ndirect && grow_direct(m, func))
			return 0;
		m->direct[func] = ++m->count;
		return m->count;
	}
	/* Keep the table at most half full so lookups stay short. */
	if ((m->nhashed + 1) * 2 > m->nslots && grow(m))
		return 0;
	m->nhashed++;
	put(m->slots, m->nslots, (struct pf_idmap_slot){ .key = func + 1, .iid = ++m->count });
	return m->count;
}

void pf_idmap_free(struct pf_idmap *m)
{
	free(m->direct);
	free(m->slots);
	*m = (struct pf_idmap){ 0 };
}
