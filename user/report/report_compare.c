// SPDX-License-Identifier: MIT
/* Several snapshots side by side: the triggering function's latency
 * across them, and what the slowest did differently; see report.h. */
#include "report/report.h"
#include "util/mt_array.h"

#include <stdlib.h>
#include <string.h>

/* FN's inclusive time in REP (by name), 0 when it never ran there. */
static uint64_t incl_of(const struct mt_report *rep, const char *fn)
{
	for (size_t i = 0; i < rep->nfns; i++)
		if (!strcmp(rep->fns[i].name, fn))
			return rep->fns[i].incl;
	return 0;
}

int mt_report_compare(struct mt_report *const *reps, size_t n, struct mt_rep_compare *c)
{
	uint64_t *lat = calloc(n ? n : 1, sizeof(*lat)), *col = calloc(n ? n : 1, sizeof(*col));
	const struct mt_report *slow = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!lat || !col || !n)
		goto out;
	snprintf(c->symbol, sizeof(c->symbol), "%s", reps[0]->trigger_symbol);
	for (size_t i = 0; i < n; i++) {
		const struct mt_report *r = reps[i];

		if (r->trigger_latency < 0 || strcmp(r->trigger_symbol, c->symbol))
			continue;
		lat[c->n++] = (uint64_t)r->trigger_latency;
		if (!slow || r->trigger_latency > slow->trigger_latency) {
			slow = r;
			c->slowest = i;
		}
	}
	if (c->n < 2)
		goto out;
	qsort(lat, c->n, sizeof(*lat), mt_array_cmp_u64);
	c->min = lat[0];
	c->p50 = lat[(c->n - 1) / 2];
	c->max = lat[c->n - 1];
	/* Per function of the slowest: its inclusive time against the
	 * median over the compared snapshots; the largest growths. */
	for (size_t f = 0; f < slow->nfns; f++) {
		size_t k = 0;
		int64_t delta;

		for (size_t i = 0; i < n; i++)
			if (reps[i]->trigger_latency >= 0 && !strcmp(reps[i]->trigger_symbol, c->symbol))
				col[k++] = incl_of(reps[i], slow->fns[f].name);
		qsort(col, k, sizeof(*col), mt_array_cmp_u64);
		delta = (int64_t)slow->fns[f].incl - (int64_t)col[(k - 1) / 2];
		if (delta <= 0)
			continue;
		for (size_t j = 0; j <= c->ngrew && j < 8; j++) {
			if (j == c->ngrew || delta > c->grew[j].delta) {
				size_t move = (c->ngrew < 8 ? c->ngrew : 7) - j;

				memmove(&c->grew[j + 1], &c->grew[j], move * sizeof(c->grew[0]));
				c->grew[j].fn = f;
				c->grew[j].delta = delta;
				if (c->ngrew < 8)
					c->ngrew++;
				break;
			}
		}
	}
	rc = 0;
out:
	free(lat);
	free(col);
	return rc;
}
