// SPDX-License-Identifier: MIT
/*
 * TSC to nanoseconds (decode/clock.h): every conversion against a plain
 * 128-bit computation of the documented rule, and the pieces the replay
 * converts with (mt_clock_find()): each holds the TSC it was found for,
 * and converts every TSC of its range as mt_clock_ns() does.
 */
#include "../lib/mt_test.h"

#include "decode/clock.h"

#include <stdlib.h>

/* The rule of clock.h, written out: the pair around TSC (the first or
 * last for times outside the anchors), or the rate, or the raw TSC. */
static uint64_t expected_ns(const struct mt_bundle_clock_entry *a, size_t n, uint64_t hz,
			    uint64_t tsc)
{
	__int128 tsc0, ns0, num, den, ns;
	size_t i = 0;

	while (n >= 2 && i + 2 < n && a[i + 1].tsc <= tsc)
		i++;
	if (n >= 2 && a[i + 1].tsc != a[i].tsc) {
		tsc0 = a[i].tsc;
		ns0 = a[i].boottime_ns;
		num = (__int128)a[i + 1].boottime_ns - a[i].boottime_ns;
		den = a[i + 1].tsc - a[i].tsc;
	} else if (hz) {
		tsc0 = n ? a[0].tsc : 0;
		ns0 = n ? a[0].boottime_ns : 0;
		num = 1000000000;
		den = hz;
	} else {
		return tsc;
	}
	ns = ns0 + ((__int128)tsc - tsc0) * num / den;
	return ns < 0 ? 0 : (uint64_t)ns;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* TSC values worth trying: the anchors and their neighbours, the ends of
 * the range, and random ones near the anchors and anywhere. */
static uint64_t probe(const struct mt_bundle_clock_entry *a, size_t n, uint64_t *s, int k)
{
	uint64_t r = rnd(s);

	if (k == 0)
		return 0;
	if (k == 1)
		return UINT64_MAX;
	if (!n || r % 4 == 0)
		return r >> (r % 64);
	return a[r % n].tsc + (r >> 60) - 8;
}

static void check_clock(const struct mt_bundle_clock_entry *a, size_t n, uint64_t hz)
{
	struct mt_clock c;
	uint64_t s = 0x9e3779b97f4a7c15ull + n;

	MT_ASSERT_EQ(mt_clock_init(&c, a, n, hz), 0);
	for (int k = 0; k < 20000; k++) {
		uint64_t tsc = probe(a, n, &s, k), in[3];
		struct mt_clock_piece p;

		MT_ASSERT_EQ(mt_clock_ns(&c, tsc), expected_ns(a, n, hz, tsc));
		mt_clock_find(&c, tsc, &p);
		MT_ASSERT(p.lo <= tsc);
		MT_ASSERT(tsc < p.hi || p.hi == UINT64_MAX);
		/* Every TSC of the range converts alike through the piece. */
		in[0] = p.lo;
		in[1] = p.hi == UINT64_MAX ? UINT64_MAX : p.hi - 1;
		in[2] = p.lo + rnd(&s) % (p.hi - p.lo);
		for (int i = 0; i < 3; i++)
			MT_ASSERT_EQ(mt_clock_piece_ns(&p, in[i]), expected_ns(a, n, hz, in[i]));
	}
	mt_clock_fini(&c);
}

MT_TEST(no_anchors_raw_tsc_or_the_rate)
{
	check_clock(NULL, 0, 0);
	check_clock(NULL, 0, 2400000000ull);
}

MT_TEST(one_anchor_is_the_origin_of_the_rate)
{
	const struct mt_bundle_clock_entry a[] = { { .tsc = 5000000, .boottime_ns = 7000 } };

	check_clock(a, 1, 3000000000ull);
	check_clock(a, 1, 0);
}

/* Pairs of equal TSC (the rate between them), a clock that runs slower
 * and faster than the rate, a jump of ns so large that the product needs
 * 128 bits, and times before the first anchor (clamped at 0). */
MT_TEST(anchors_piecewise_with_repeats_and_wide_products)
{
	const struct mt_bundle_clock_entry a[] = {
		{ .tsc = 1000000, .boottime_ns = 500 },
		{ .tsc = 3000000, .boottime_ns = 1000500 },
		{ .tsc = 3000000, .boottime_ns = 1000600 },
		{ .tsc = 3000100, .boottime_ns = 1000700 },
		{ .tsc = 9000000, .boottime_ns = 4000000 },
		{ .tsc = 9000001, .boottime_ns = UINT64_MAX / 2 },
		{ .tsc = 1ull << 40, .boottime_ns = UINT64_MAX / 2 + 10 },
	};

	check_clock(a, sizeof(a) / sizeof(a[0]), 2000000000ull);
	check_clock(a, sizeof(a) / sizeof(a[0]), 0);
	check_clock(a, 2, 0);
}

MT_TEST(the_last_pair_repeated_falls_back_to_the_rate)
{
	const struct mt_bundle_clock_entry a[] = {
		{ .tsc = 100, .boottime_ns = 1000 },
		{ .tsc = 200, .boottime_ns = 2000 },
		{ .tsc = 200, .boottime_ns = 2500 },
	};

	check_clock(a, 3, 1000000000ull);
	check_clock(a, 3, 0);
}
