// SPDX-License-Identifier: MIT
/* Thread on a CPU at a TSC; see sideband.h. */
#include "decode/sideband.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Records in (cpu, tsc) order; equal ones in file order, the later wins. */
static int cmp_switch(const void *a, const void *b, void *arg)
{
	const struct mt_bundle_switch_entry *sw = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct mt_bundle_switch_entry *x = &sw[i], *y = &sw[j];

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return i < j ? -1 : i > j;
}

int mt_sideband_init(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n,
		     struct mt_task fallback)
{
	/* An index of 4 bytes a record, not a copy of 32: switch-heavy
	 * snapshots hold millions of them. */
	if (n > UINT32_MAX)
		return -ENOMEM;
	sb->order = malloc((n ? n : 1) * sizeof(*sb->order));
	if (!sb->order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sb->order[i] = (uint32_t)i;
	qsort_r(sb->order, n, sizeof(*sb->order), cmp_switch, (void *)sw);
	sb->sw = sw;
	sb->n = n;
	sb->fallback = fallback;
	return 0;
}

void mt_sideband_fini(struct mt_sideband *sb)
{
	free(sb->order);
	sb->order = NULL;
	sb->sw = NULL;
	sb->n = 0;
}

/* The Ith record in (cpu, tsc) order. */
static const struct mt_bundle_switch_entry *rec(const struct mt_sideband *sb, size_t i)
{
	return &sb->sw[sb->order[i]];
}

/* Index of the first record of a later CPU, or later than TSC on CPU. */
static size_t after(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	size_t lo = 0, hi = sb->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mt_bundle_switch_entry *s = rec(sb, mid);

		if (s->cpu < cpu || (s->cpu == cpu && s->tsc <= tsc))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct mt_task mt_sideband_task(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	size_t lo = after(sb, cpu, tsc);

	if (lo > 0 && rec(sb, lo - 1)->cpu == cpu)
		return (struct mt_task){ rec(sb, lo - 1)->next_pid, rec(sb, lo - 1)->next_tid };
	if (lo < sb->n && rec(sb, lo)->cpu == cpu)
		return (struct mt_task){ rec(sb, lo)->prev_pid, rec(sb, lo)->prev_tid };
	return sb->fallback;
}

int mt_sideband_no_switch(const struct mt_sideband *sb, uint32_t cpu, uint64_t from, uint64_t to)
{
	size_t i = after(sb, cpu, from);

	return i == sb->n || rec(sb, i)->cpu != cpu || rec(sb, i)->tsc > to;
}

uint64_t mt_sideband_trace_off(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	uint32_t target = sb->fallback.pid;

	if (!target)
		return UINT64_MAX;
	for (size_t i = after(sb, cpu, tsc); i < sb->n && rec(sb, i)->cpu == cpu; i++)
		if (rec(sb, i)->next_pid != target || !rec(sb, i)->next_tid)
			return rec(sb, i)->tsc;
	return UINT64_MAX;
}
