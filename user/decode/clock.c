// SPDX-License-Identifier: MIT
/* TSC → nanoseconds; see clock.h. */
#include "decode/clock.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void line_init(struct mt_clock_line *l, uint64_t tsc0, uint64_t ns0, __int128 num,
		      uint64_t den)
{
	*l = (struct mt_clock_line){ tsc0, ns0, num, { 0 }, 0, 0 };
	if (den)
		mt_udiv_init(&l->div, den);
	if (num > 0 && num <= UINT64_MAX) {
		/* The short way while the product fits and the sum cannot
		 * pass UINT64_MAX, which the wide way clamps at. */
		unsigned __int128 room = (unsigned __int128)(UINT64_MAX - ns0) * den / num;

		l->num64 = (uint64_t)num;
		l->max_delta = UINT64_MAX / l->num64;
		if (room < l->max_delta)
			l->max_delta = (uint64_t)room;
	}
}

/* When the product does not fit in 64 bits (or TSC is before the line's
 * start): 128-bit arithmetic, no overflow, no floating-point rounding. The
 * distance and the slope's numerator (never negative, mt_clock_init())
 * are below 2^64 each, so their product fits. */
uint64_t mt_clock_line_ns_wide(const struct mt_clock_line *l, uint64_t tsc)
{
	bool back = tsc < l->tsc0;
	unsigned __int128 d = back ? l->tsc0 - tsc : tsc - l->tsc0;
	unsigned __int128 q = d * (unsigned __int128)l->num / l->div.den;

	if (back)
		return q >= l->ns0 ? 0 : l->ns0 - (uint64_t)q;
	return q >= UINT64_MAX - l->ns0 ? UINT64_MAX : l->ns0 + (uint64_t)q;
}

static int by_tsc(const void *a, const void *b)
{
	const struct mt_bundle_clock_entry *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->boottime_ns < y->boottime_ns ? -1 : x->boottime_ns > y->boottime_ns;
}

int mt_clock_init(struct mt_clock *c, const struct mt_bundle_clock_entry *anchors, size_t n,
		  uint64_t tsc_hz)
{
	*c = (struct mt_clock){ .tsc_hz = tsc_hz };
	c->anchors = malloc((n ? n : 1) * sizeof(*c->anchors));
	if (!c->anchors)
		return -ENOMEM;
	if (n)
		memcpy(c->anchors, anchors, n * sizeof(*anchors));
	qsort(c->anchors, n, sizeof(*c->anchors), by_tsc);
	for (size_t i = 0; i < n; i++) {
		if (c->n && c->anchors[i].boottime_ns < c->anchors[c->n - 1].boottime_ns)
			c->dropped++;
		else
			c->anchors[c->n++] = c->anchors[i];
	}
	anchors = c->anchors;
	n = c->n;
	if (tsc_hz)
		line_init(&c->rate, n ? anchors[0].tsc : 0, n ? anchors[0].boottime_ns : 0,
			  1000000000, tsc_hz);
	if (n < 2)
		return 0;
	c->lines = calloc(n - 1, sizeof(*c->lines));
	if (!c->lines)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < n; i++)
		if (anchors[i + 1].tsc != anchors[i].tsc)
			line_init(&c->lines[i], anchors[i].tsc, anchors[i].boottime_ns,
				  (__int128)anchors[i + 1].boottime_ns - anchors[i].boottime_ns,
				  anchors[i + 1].tsc - anchors[i].tsc);
	return 0;
}

void mt_clock_fini(struct mt_clock *c)
{
	free(c->lines);
	free(c->anchors);
	c->lines = NULL;
	c->anchors = NULL;
}

void mt_clock_find(const struct mt_clock *c, uint64_t tsc, struct mt_clock_piece *p)
{
	size_t lo = 0, hi;

	*p = (struct mt_clock_piece){ c->tsc_hz ? &c->rate : NULL, 0, UINT64_MAX };
	if (c->n < 2)
		return;
	/* The pair around tsc (or the first/last pair outside): anchors[lo]
	 * <= tsc < anchors[hi], but for the first and last pair, which the
	 * times outside the anchors extend. */
	hi = c->n - 1;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->anchors[mid].tsc <= tsc)
			lo = mid;
		else
			hi = mid;
	}
	if (lo)
		p->lo = c->anchors[lo].tsc;
	if (hi < c->n - 1)
		p->hi = c->anchors[hi].tsc;
	if (c->anchors[hi].tsc != c->anchors[lo].tsc)
		p->line = &c->lines[lo];
}

uint64_t mt_clock_ns(const struct mt_clock *c, uint64_t tsc)
{
	struct mt_clock_piece p;

	mt_clock_find(c, tsc, &p);
	return mt_clock_piece_ns(&p, tsc);
}
