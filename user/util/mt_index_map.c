// SPDX-License-Identifier: MIT
/* Dense indexes for 64-bit keys; see mt_index_map.h. */
#include "util/mt_index_map.h"

#include "util/mt_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot(const struct mt_index_map *m, uint64_t key)
{
	/* Fibonacci hashing: cap is a power of two. */
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (m->cap - 1);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

int64_t mt_index_map_get(const struct mt_index_map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = slot(m, key);
	return m->vals[i] ? (int64_t)m->vals[i] - 1 : -1;
}

/* Room for one more key, the map at most half full. */
static int room(struct mt_index_map *m)
{
	struct mt_index_map g = { 0 };

	if (2 * (m->n + 1) <= m->cap)
		return 0;
	g.cap = m->cap ? 2 * m->cap : 64;
	g.keys = malloc(g.cap * sizeof(*g.keys));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i]) {
			size_t j = slot(&g, m->keys[i]);

			g.keys[j] = m->keys[i];
			g.vals[j] = m->vals[i];
		}
	}
	g.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

int mt_index_map_put(struct mt_index_map *m, uint64_t key, uint32_t index)
{
	size_t i;

	if (index == UINT32_MAX || room(m))
		return -ENOMEM;
	i = slot(m, key);
	m->keys[i] = key;
	m->vals[i] = index + 1;
	m->n++;
	return 0;
}

void mt_index_map_free(struct mt_index_map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct mt_index_map){ 0 };
}

void *mt_index_map_slot(struct mt_index_map *m, uint64_t key, void *arrp, size_t *n,
			size_t *cap, size_t elem, int *added)
{
	int64_t i = mt_index_map_get(m, key);
	char **arr = arrp;

	*added = i < 0;
	if (i >= 0)
		return *arr + (size_t)i * elem;
	if (*n >= UINT32_MAX || mt_array_reserve(arrp, cap, *n, 1, elem) ||
	    mt_index_map_put(m, key, (uint32_t)*n))
		return NULL;
	return memset(*arr + (*n)++ * elem, 0, elem);
}
