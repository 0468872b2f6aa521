// SPDX-License-Identifier: MIT
/* TSC → nanoseconds; see clock.h. */
#include "decode/clock.h"

void mt_clock_init(struct mt_clock *c, const struct mt_bundle_clock_entry *anchors, size_t n,
		   uint64_t tsc_hz)
{
	c->anchors = anchors;
	c->n = n;
	c->tsc_hz = tsc_hz;
}

/* ns at TSC on the line through anchors A and B (128-bit: no overflow,
 * no floating-point rounding). */
static uint64_t on_line(const struct mt_bundle_clock_entry *a,
			const struct mt_bundle_clock_entry *b, uint64_t tsc)
{
	__int128 dt = (__int128)tsc - a->tsc;
	__int128 ns = (__int128)a->boottime_ns +
		      dt * ((__int128)b->boottime_ns - a->boottime_ns) / ((__int128)b->tsc - a->tsc);

	return ns < 0 ? 0 : (uint64_t)ns;
}

static uint64_t at_rate(uint64_t origin_tsc, uint64_t origin_ns, uint64_t hz, uint64_t tsc)
{
	__int128 ns = (__int128)origin_ns + ((__int128)tsc - origin_tsc) * 1000000000 / hz;

	return ns < 0 ? 0 : (uint64_t)ns;
}

uint64_t mt_clock_ns(const struct mt_clock *c, uint64_t tsc)
{
	size_t lo = 0, hi;

	if (c->n >= 2) {
		/* The pair around tsc (or the first/last pair outside). */
		hi = c->n - 1;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (c->anchors[mid].tsc <= tsc)
				lo = mid;
			else
				hi = mid;
		}
		if (c->anchors[hi].tsc != c->anchors[lo].tsc)
			return on_line(&c->anchors[lo], &c->anchors[hi], tsc);
	}
	if (c->n >= 1 && c->tsc_hz)
		return at_rate(c->anchors[0].tsc, c->anchors[0].boottime_ns, c->tsc_hz, tsc);
	if (c->tsc_hz)
		return at_rate(0, 0, c->tsc_hz, tsc);
	return tsc;
}
