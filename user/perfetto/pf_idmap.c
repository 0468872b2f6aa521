// SPDX-License-Identifier: MIT
/* Growth of the per-sequence iid map (pf_idmap.h). */
#include "pf_idmap.h"

#include <stdlib.h>

static void put(uint32_t *keys, uint32_t *vals, size_t nslots, uint32_t key, uint32_t val)
{
	size_t i = pf_idmap_slot(key, nslots);

	while (keys[i])
		i = (i + 1) & (nslots - 1);
	keys[i] = key;
	vals[i] = val;
}

static int grow(struct pf_idmap *m)
{
	size_t nslots = m->nslots ? m->nslots * 2 : 64;
	uint32_t *keys = calloc(nslots, sizeof(*keys));
	uint32_t *vals = malloc(nslots * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->nslots; i++)
		if (m->keys[i])
			put(keys, vals, nslots, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->nslots = nslots;
	return 0;
}

uint32_t pf_idmap_add(struct pf_idmap *m, uint32_t func)
{
	/* Keep the map at most half full so lookups stay short. */
	if ((size_t)(m->count + 1) * 2 > m->nslots && grow(m))
		return 0;
	put(m->keys, m->vals, m->nslots, func + 1, ++m->count);
	return m->count;
}

void pf_idmap_free(struct pf_idmap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct pf_idmap){ 0 };
}
