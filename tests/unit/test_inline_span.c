// SPDX-License-Identifier: MIT
/*
 * mt_inl_span() (decode/inlines.h) against its definition: the part of a
 * function around an address that no inline range begins or ends in,
 * bounded by the extent given. Ranges are random, overlapping, sharing
 * ends, some outside the function (bad DWARF), and every address of the
 * function is asked, with the whole extent and with narrower ones.
 */
#include "decode/inlines.h"
#include "mt_test.h"

#include <errno.h>
#include <stdlib.h>

#define START 0x401000u
#define SIZE 300u

/* The definition: every range end at or before AT raises the low bound,
 * every one after AT lowers the high bound. */
static void reference(const struct mt_inl_range *r, int n, uint64_t at, uint64_t *lo,
		      uint64_t *hi)
{
	for (int i = 0; i < n; i++) {
		uint64_t ends[2] = { r[i].lo, r[i].hi };

		for (int k = 0; k < 2; k++) {
			if (ends[k] <= at && ends[k] > *lo)
				*lo = ends[k];
			if (ends[k] > at && ends[k] < *hi)
				*hi = ends[k];
		}
	}
}

/* N random ranges in absolute addresses (malloc'ed), and a copy relative
 * to START in REL. */
static struct mt_inl_range *random_ranges(unsigned int *seed, int n, struct mt_inl_range *rel)
{
	struct mt_inl_range *r = malloc((size_t)n * sizeof(*r));

	for (int i = 0; r && i < n; i++) {
		uint64_t lo = (uint64_t)(rand_r(seed) % (SIZE + 40)), len = 1 + rand_r(seed) % 60;

		/* A few below the start: they wrap when made relative. */
		if (rand_r(seed) % 16 == 0)
			lo = (uint64_t)-(int64_t)(1 + rand_r(seed) % 8);
		r[i] = (struct mt_inl_range){ START + lo, START + lo + len, 10 + (uint32_t)i,
					      1 + (uint32_t)(rand_r(seed) % 3) };
		rel[i] = (struct mt_inl_range){ lo, lo + len, r[i].id, r[i].depth };
	}
	return r;
}

MT_TEST(span_matches_its_definition)
{
	struct mt_inl_ranges rs = { .defer = MT_INL_DEFER_ALWAYS };
	const struct mt_cs_fn fn = { START, START + SIZE, 7 };
	struct mt_inl_range rel[64];
	unsigned int seed = 1;

	for (int round = 0; round < 200; round++) {
		int n = 1 + (int)(rand_r(&seed) % 64);
		struct mt_inl_range *r = random_ranges(&seed, n, rel);

		MT_ASSERT(r);
		MT_ASSERT_EQ(mt_inl_ranges_keep(&rs, fn.id, fn.start, r, n), n);
		for (uint64_t at = 0; at < SIZE; at++) {
			uint64_t from = at / 2, to = at + (SIZE - at) / 2 + 1;
			uint64_t bounds[2][2] = { { 0, SIZE }, { from, to } };

			for (int k = 0; k < 2; k++) {
				uint64_t lo = START + bounds[k][0], hi = START + bounds[k][1];
				uint64_t want_lo = bounds[k][0], want_hi = bounds[k][1];

				reference(rel, n, at, &want_lo, &want_hi);
				MT_ASSERT_EQ(mt_inl_span(&rs, NULL, NULL, &fn, START + at, &lo, &hi), 0);
				MT_ASSERT_MSG(lo == START + want_lo && hi == START + want_hi,
					      "round %d at %llu: [%llx, %llx) for [%llx, %llx)", round,
					      (unsigned long long)at, (unsigned long long)lo,
					      (unsigned long long)hi,
					      (unsigned long long)(START + want_lo),
					      (unsigned long long)(START + want_hi));
			}
		}
	}
	mt_inl_ranges_fini(&rs);
}

/* Outside the function, or a function whose ranges are not had, the
 * extent is left alone. */
MT_TEST(span_leaves_the_extent_alone)
{
	struct mt_inl_ranges rs = { .defer = MT_INL_DEFER_ALWAYS };
	const struct mt_cs_fn fn = { START, START + SIZE, 7 }, other = { START, START + SIZE, 8 };
	struct mt_inl_range *r = malloc(sizeof(*r));
	uint64_t lo = START, hi = START + SIZE;

	MT_ASSERT(r);
	*r = (struct mt_inl_range){ START + 10, START + 20, 11, 1 };
	MT_ASSERT_EQ(mt_inl_ranges_keep(&rs, fn.id, fn.start, r, 1), 1);
	MT_ASSERT_EQ(mt_inl_span(&rs, NULL, NULL, &fn, START + SIZE, &lo, &hi), 0);
	MT_ASSERT(lo == START && hi == START + SIZE);
	MT_ASSERT_EQ(mt_inl_span(&rs, NULL, NULL, &other, START + 15, &lo, &hi), -EAGAIN);
	MT_ASSERT(lo == START && hi == START + SIZE);
	MT_ASSERT_EQ(mt_inl_span(&rs, NULL, NULL, &fn, START + 15, &lo, &hi), 0);
	MT_ASSERT(lo == START + 10 && hi == START + 20);
	mt_inl_ranges_fini(&rs);
}
