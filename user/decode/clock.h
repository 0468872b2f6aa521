/* SPDX-License-Identifier: MIT */
/* TSC → nanoseconds with the bundle's clock anchors. */
#ifndef MTRACE_DECODE_CLOCK_H
#define MTRACE_DECODE_CLOCK_H

#include "mtrace/bundle_format.h"
#include "decode/udiv.h"

#include <stddef.h>
#include <stdint.h>

/* ns = ns0 + (tsc - tsc0) * num / den; every event is converted, so the
 * division is done as a multiply and shifts when the product fits in 64
 * bits (see clock.c). */
struct mt_clock_line {
	uint64_t tsc0, ns0;
	__int128 num;
	struct mt_udiv div;	/* by den */
	/* The 64-bit product's range: (tsc - tsc0) * num fits for tsc - tsc0
	 * <= max_delta (0 when num itself does not fit). */
	uint64_t num64, max_delta;
};

struct mt_clock {
	/* The bundle's anchors in TSC order, without those whose time goes
	 * back (dropped of them): conversion never goes back in time. */
	struct mt_bundle_clock_entry *anchors;
	size_t n, dropped;
	uint64_t tsc_hz;	/* used with fewer than two anchors */
	struct mt_clock_line *lines;	/* through anchors i and i + 1 */
	struct mt_clock_line rate;	/* from the first anchor (or 0) at tsc_hz */
};

/*
 * ANCHORS (N of them) pair TSC readings with CLOCK_BOOTTIME. They are put
 * in TSC order, and one whose CLOCK_BOOTTIME is below an earlier one's is
 * dropped (a damaged bundle): the conversion then never goes back as the
 * TSC grows, which the writers rely on. With two or more anchors, times are
 * interpolated piecewise linearly (and extrapolated from the nearest
 * pair); with one, it is the origin and TSC_HZ the rate; with none, ns =
 * tsc * 1e9 / TSC_HZ, or the raw TSC when the rate is unknown too. Times
 * are clamped to [0, UINT64_MAX]. Returns 0, or -ENOMEM.
 */
int mt_clock_init(struct mt_clock *c, const struct mt_bundle_clock_entry *anchors, size_t n,
		  uint64_t tsc_hz);
void mt_clock_fini(struct mt_clock *c);
uint64_t mt_clock_ns(const struct mt_clock *c, uint64_t tsc);

/*
 * The line that converts every TSC in [lo, hi): the replay converts a
 * million nearby times, and finds their line once instead of searching the
 * anchors for each (mt_clock_find(), then mt_clock_piece_ns() while the
 * times stay in the range). mt_clock_ns() is the same two steps.
 */
struct mt_clock_piece {
	const struct mt_clock_line *line;	/* NULL: ns = tsc (no rate known) */
	uint64_t lo, hi;
};

void mt_clock_find(const struct mt_clock *c, uint64_t tsc, struct mt_clock_piece *p);
uint64_t mt_clock_line_ns_wide(const struct mt_clock_line *l, uint64_t tsc);

static inline uint64_t mt_clock_piece_ns(const struct mt_clock_piece *p, uint64_t tsc)
{
	const struct mt_clock_line *l = p->line;

	if (!l)
		return tsc;
	if (tsc >= l->tsc0 && tsc - l->tsc0 <= l->max_delta)
		return l->ns0 + mt_udiv(&l->div, (tsc - l->tsc0) * l->num64);
	return mt_clock_line_ns_wide(l, tsc);
}

#endif
