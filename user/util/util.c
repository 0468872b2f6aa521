// SPDX-License-Identifier: MIT
/* See util.h. */
#include "util/mt_array.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mt_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	int u = 0;

	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else
		snprintf(buf, len, "%.3g%s", v, unit[u]);
}

uint32_t mt_names_add(struct mt_names *t, const char *s)
{
	size_t i;

	/* linear: a snapshot has thousands of functions, each added once */
	for (i = 0; i < t->n && strcmp(t->v[i], s); i++)
		;
	if (i < t->n)
		return (uint32_t)i;
	if (i >= UINT32_MAX || MT_ARRAY_GROW_TO(t->v, t->cap, i + 1))
		return UINT32_MAX;
	t->v[i] = strdup(s);
	if (!t->v[i])
		return UINT32_MAX;
	t->n++;
	return (uint32_t)i;
}

uint32_t mt_names_of(struct mt_names *t, uint32_t id)
{
	uint32_t i;

	if (id < t->nbyid && t->byid[id])
		return t->byid[id] - 1;
	if (MT_ARRAY_GROW_TO(t->byid, t->nbyid, (size_t)id + 1))
		return UINT32_MAX;
	i = mt_names_add(t, t->name(t->ctx, id));
	if (i != UINT32_MAX)
		t->byid[id] = i + 1;
	return i;
}

void mt_names_free(struct mt_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->byid);
	memset(t, 0, sizeof(*t));
}
