// SPDX-License-Identifier: MIT
/* Thread on a CPU at a TSC; see sideband.h. */
#include "decode/sideband.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_switch(const void *a, const void *b)
{
	const struct mt_bundle_switch_entry *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

int mt_sideband_init(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n,
		     struct mt_task fallback)
{
	sb->sw = malloc((n ? n : 1) * sizeof(*sw));
	if (!sb->sw)
		return -ENOMEM;
	if (n)
		memcpy(sb->sw, sw, n * sizeof(*sw));
	qsort(sb->sw, n, sizeof(*sw), cmp_switch);
	sb->n = n;
	sb->fallback = fallback;
	return 0;
}

void mt_sideband_fini(struct mt_sideband *sb)
{
	free(sb->sw);
	sb->sw = NULL;
	sb->n = 0;
}

/* Index of the first record of a later CPU, or later than TSC on CPU. */
static size_t after(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	size_t lo = 0, hi = sb->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mt_bundle_switch_entry *s = &sb->sw[mid];

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

	if (lo > 0 && sb->sw[lo - 1].cpu == cpu)
		return (struct mt_task){ sb->sw[lo - 1].next_pid, sb->sw[lo - 1].next_tid };
	if (lo < sb->n && sb->sw[lo].cpu == cpu)
		return (struct mt_task){ sb->sw[lo].prev_pid, sb->sw[lo].prev_tid };
	return sb->fallback;
}

int mt_sideband_no_switch(const struct mt_sideband *sb, uint32_t cpu, uint64_t from, uint64_t to)
{
	size_t i = after(sb, cpu, from);

	return i == sb->n || sb->sw[i].cpu != cpu || sb->sw[i].tsc > to;
}

uint64_t mt_sideband_trace_off(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc)
{
	uint32_t target = sb->fallback.pid;

	if (!target)
		return UINT64_MAX;
	for (size_t i = after(sb, cpu, tsc); i < sb->n && sb->sw[i].cpu == cpu; i++)
		if (sb->sw[i].next_pid != target || !sb->sw[i].next_tid)
			return sb->sw[i].tsc;
	return UINT64_MAX;
}
