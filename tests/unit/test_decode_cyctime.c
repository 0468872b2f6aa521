// SPDX-License-Identifier: MIT
/*
 * The exact times from the cycles (decode/cyctime.h) on hand-made
 * streams: the chain of cycles runs on across a PSB+ that has a FUP; after
 * a bad packet the reading goes on at the next PSB where libipt's own
 * reading would (right after it, or a few bytes on); and a reading resumed
 * at a PSB with the chain kept there by another gives the times the
 * reading that went on gives, where a fresh one restarts at the PSB+'s TSC.
 */
#include "mt_test.h"

#include "decode/cyctime.h"

#include <intel-pt.h>
#include <string.h>

#define NOM 20	/* nominal ratio; with CBR 20 a cycle is a TSC tick */

struct stream {
	uint8_t b[256];
	size_t n;
	uint64_t psbs[8];
	size_t npsbs;
};

static void put(struct stream *s, const uint8_t *p, size_t n)
{
	MT_ASSERT(s->n + n <= sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void psb(struct stream *s)
{
	MT_ASSERT(s->npsbs < 8);
	s->psbs[s->npsbs++] = s->n;
	for (int i = 0; i < 8; i++)
		put(s, (const uint8_t[]){ 0x02, 0x82 }, 2);
}

/* PSB+ with TSC and CBR 20, and a FUP when ON (packets on there). */
static void psb_plus(struct stream *s, uint64_t tsc, int on)
{
	uint8_t t[8] = { 0x19 };

	psb(s);
	for (int i = 0; i < 7; i++)
		t[1 + i] = (uint8_t)(tsc >> (8 * i));
	put(s, t, sizeof(t));
	put(s, (const uint8_t[]){ 0x02, 0x03, 20, 0x00 }, 4);
	if (on)
		put(s, (const uint8_t[]){ 0x1d }, 1);	/* FUP, IP suppressed */
	put(s, (const uint8_t[]){ 0x02, 0x23 }, 2);
}

/* CYC of C cycles (C < 32: one byte), then a TNT: the time's packet. */
static void cyc_tnt(struct stream *s, uint8_t c)
{
	put(s, (const uint8_t[]){ (uint8_t)(c << 3 | 3), 0x06 }, 2);
}

static struct pt_config config(const struct stream *s, size_t from)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.nom_freq = NOM;
	cfg.begin = (uint8_t *)s->b + from;
	cfg.end = (uint8_t *)s->b + s->n;
	return cfg;
}

/* The time at the stream's end, read from offset FROM (a PSB). */
static uint64_t time_at_end(const struct stream *s, size_t from)
{
	struct pt_config cfg = config(s, from);
	struct mt_cyctime *t = mt_cyctime_new(&cfg);
	uint64_t at;

	MT_ASSERT(t != NULL);
	mt_cyctime_window(t, &cfg, from);
	at = mt_cyctime_at(t, s->n, s->psbs, s->npsbs);
	mt_cyctime_free(t);
	return at;
}

MT_TEST(chain_runs_across_a_psb_with_packets_on)
{
	struct stream s = { .n = 0 };

	psb_plus(&s, 1000, 1);
	cyc_tnt(&s, 8);
	cyc_tnt(&s, 10);
	psb_plus(&s, 1010, 1);
	cyc_tnt(&s, 4);
	/* 1000 + 8 + 10 + 4: the PSB+'s TSC only bounds the chain. */
	MT_ASSERT_EQ(time_at_end(&s, 0), 1022);
	/* Read from the second PSB alone, the chain starts at its TSC. */
	MT_ASSERT_EQ(time_at_end(&s, s.psbs[1]), 1014);
}

/* A bad packet loses the chain; the reading goes on at the next PSB,
 * right after it or GAP bytes on, and restarts at its TSC. */
MT_TEST(bad_packet_goes_on_at_the_next_psb)
{
	for (size_t gap = 0; gap < 8; gap++) {
		struct stream s = { .n = 0 };

		psb_plus(&s, 1000, 1);
		cyc_tnt(&s, 8);
		put(&s, (const uint8_t[]){ 0x05 }, 1);	/* no such opcode */
		for (size_t i = 0; i < gap; i++)
			put(&s, (const uint8_t[]){ 0x00 }, 1);
		psb_plus(&s, 5000, 1);
		cyc_tnt(&s, 8);
		MT_ASSERT_EQ(time_at_end(&s, 0), 5008);
	}
}

/* The chain kept where a reading passed the second PSB, given to a
 * reading that starts there: the times of the one that went on. */
MT_TEST(resumed_reading_gives_the_times_of_the_one_that_went_on)
{
	struct stream s = { .n = 0 };
	struct pt_config whole, from;
	struct mt_cyctime *t, *r;
	struct mt_cyc_chain c;
	uint64_t x, end_of_psb_plus;

	psb_plus(&s, 1000, 1);
	cyc_tnt(&s, 8);
	cyc_tnt(&s, 10);
	x = s.n;
	psb_plus(&s, 1010, 1);
	end_of_psb_plus = s.n;
	cyc_tnt(&s, 4);
	cyc_tnt(&s, 6);

	whole = config(&s, 0);
	t = mt_cyctime_new(&whole);
	MT_ASSERT(t != NULL);
	mt_cyctime_window(t, &whole, 0);
	mt_cyctime_mark(t, x);
	MT_ASSERT(!mt_cyctime_marked(t, x, &c));	/* not there yet */
	MT_ASSERT_EQ(mt_cyctime_at(t, s.n, s.psbs, s.npsbs), 1028);
	MT_ASSERT(mt_cyctime_marked(t, x, &c));
	MT_ASSERT_EQ(c.tsc, 1018);
	MT_ASSERT(!mt_cyctime_marked(t, x + 1, &c));

	from = config(&s, x);
	r = mt_cyctime_new(&from);
	MT_ASSERT(r != NULL);
	mt_cyctime_resume(r, &c, x, end_of_psb_plus);
	mt_cyctime_window(r, &from, x);
	MT_ASSERT_EQ(mt_cyctime_next(r), end_of_psb_plus);
	MT_ASSERT_EQ(mt_cyctime_at(r, end_of_psb_plus + 2, s.psbs, s.npsbs), 1022);
	MT_ASSERT_EQ(mt_cyctime_at(r, s.n, s.psbs, s.npsbs), 1028);
	mt_cyctime_free(r);
	mt_cyctime_free(t);
}
