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
	return ns < 0 ? 0 : ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
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

/* The clock made of GIVEN (NG anchors) converts as the rule says for A
 * (N anchors: GIVEN in TSC order, without those that go back). */
static void check_clock_of(const struct mt_bundle_clock_entry *given, size_t ng,
			   const struct mt_bundle_clock_entry *a, size_t n, uint64_t hz)
{
	struct mt_clock c;
	uint64_t s = 0x9e3779b97f4a7c15ull + n;

	MT_ASSERT_EQ(mt_clock_init(&c, given, ng, hz), 0);
	MT_ASSERT_EQ(c.dropped, ng - n);
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

static void check_clock(const struct mt_bundle_clock_entry *a, size_t n, uint64_t hz)
{
	check_clock_of(a, n, a, n, hz);
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

/* A damaged bundle's anchors: out of TSC order, two going back in time,
 * the last near the clock's end. Those that go back are left out, the
 * rest convert by the rule, and no time goes back as the TSC grows or
 * wraps past UINT64_MAX: the writers refuse events out of order. */
MT_TEST(anchors_that_go_back_are_left_out)
{
	const struct mt_bundle_clock_entry a[] = {
		{ .tsc = 9000000, .boottime_ns = 4000000 },
		{ .tsc = 1000000, .boottime_ns = 500 },
		{ .tsc = 5000000, .boottime_ns = 100 },
		{ .tsc = 3000000, .boottime_ns = 1000500 },
		{ .tsc = 12000000, .boottime_ns = 3999999 },
		{ .tsc = 1ull << 40, .boottime_ns = 1ull << 62 },
	};
	const struct mt_bundle_clock_entry kept[] = { a[1], a[3], a[0], a[5] };
	uint64_t s = 7, last = 0, tsc = 0;
	struct mt_clock c;

	check_clock_of(a, 6, kept, 4, 0);
	check_clock_of(a, 6, kept, 4, 2000000000ull);
	MT_ASSERT_EQ(mt_clock_init(&c, a, 6, 0), 0);
	for (;;) {
		uint64_t ns = mt_clock_ns(&c, tsc), step = 1 + (rnd(&s) >> (8 + rnd(&s) % 56));

		MT_ASSERT_MSG(ns >= last, "tsc %llu: %llu after %llu", (unsigned long long)tsc,
			      (unsigned long long)ns, (unsigned long long)last);
		last = ns;
		if (step > UINT64_MAX - tsc)
			break;
		tsc += step;
	}
	MT_ASSERT_EQ(mt_clock_ns(&c, UINT64_MAX), UINT64_MAX);
	mt_clock_fini(&c);
}
