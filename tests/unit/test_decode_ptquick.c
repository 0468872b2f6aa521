// SPDX-License-Identifier: MIT
/*
 * The scan's own packet reader (decode/ptquick.h) against libipt's packet
 * decoder: every packet it takes, libipt reads with the same length, type
 * and fields, over every first two bytes with any tail and every length
 * up to a PSB's; and it takes the packets a stream is made of. The scan
 * that uses it finds the same PSBs after a bad packet as libipt alone.
 */
#include "mt_test.h"

#include "decode/blkdec.h"
#include "decode/ptquick.h"

#include <intel-pt.h>

/* libipt's packet decoder on the N bytes at P. */
static struct pt_packet_decoder *libipt_on(const uint8_t *p, size_t n)
{
	struct pt_packet_decoder *d;
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)p;
	cfg.end = (uint8_t *)p + n;
	d = pt_pkt_alloc_decoder(&cfg);
	MT_ASSERT(d != NULL);
	return d;
}

/* libipt's reading of the N bytes at P: the packet's length, or 0. */
static size_t libipt_reads(const uint8_t *p, size_t n, struct pt_packet *pk)
{
	struct pt_packet_decoder *d = libipt_on(p, n);
	uint64_t off = 0;
	int st;

	st = pt_pkt_sync_set(d, 0);
	if (st >= 0)
		st = pt_pkt_next(d, pk, sizeof(*pk));
	if (st >= 0)
		st = pt_pkt_get_offset(d, &off);
	pt_pkt_free_decoder(d);
	return st < 0 ? 0 : (size_t)off;
}

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Checks quick's answer for the N bytes at P, the packet in *Q; returns
 * its length. */
static size_t check_at(const uint8_t *p, size_t n, struct pt_packet *q)
{
	struct pt_packet l;
	size_t len = mt_ptq_packet(p, n, q);

	if (!len)
		return 0;
	MT_ASSERT_EQ(libipt_reads(p, n, &l), len);
	MT_ASSERT_EQ(l.type, q->type);
	if (q->type == ppt_tsc)
		MT_ASSERT_EQ(l.payload.tsc.tsc, q->payload.tsc.tsc);
	if (q->type == ppt_mode)
		MT_ASSERT_EQ(l.payload.mode.leaf, q->payload.mode.leaf);
	if (q->type == ppt_cyc)
		MT_ASSERT_EQ(l.payload.cyc.value, q->payload.cyc.value);
	if (q->type == ppt_cbr)
		MT_ASSERT_EQ(l.payload.cbr.ratio, q->payload.cbr.ratio);
	return len;
}

MT_TEST(every_packet_taken_is_libipts)
{
	uint8_t buf[16];
	uint32_t s = 7, seen = 0, taken = 0;

	for (unsigned int b0 = 0; b0 < 256; b0++) {
		for (unsigned int b1 = 0; b1 < 256; b1++) {
			for (int tail = 0; tail < 3; tail++) {
				buf[0] = (uint8_t)b0;
				buf[1] = (uint8_t)b1;
				/* Tails of zeros, of ones and random. */
				for (size_t i = 2; i < sizeof(buf); i++)
					buf[i] = tail == 0 ? 0 : tail == 1 ? 0xff : (uint8_t)rnd(&s);
				for (size_t n = 1; n <= sizeof(buf); n++) {
					struct pt_packet q;
					size_t len = check_at(buf, n, &q);

					if (len)
						seen |= 1u << q.type;
					taken += len != 0;
				}
			}
		}
	}
	/* Every type it reads was read (PSB: below), and most bytes. */
	MT_ASSERT_EQ(seen, 1u << ppt_pad | 1u << ppt_psbend | 1u << ppt_ovf | 1u << ppt_cbr |
			   1u << ppt_tnt_64 | 1u << ppt_tsc | 1u << ppt_mtc | 1u << ppt_mode |
			   1u << ppt_tnt_8 | 1u << ppt_tip | 1u << ppt_fup | 1u << ppt_tip_pge |
			   1u << ppt_tip_pgd | 1u << ppt_cyc);
	MT_ASSERT(taken > 256 * 256 * 3 * 16 / 2);
}

MT_TEST(psb_whole_or_left_to_libipt)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	struct pt_packet q;
	uint8_t buf[16];

	MT_ASSERT_EQ(check_at(psb, sizeof(psb), &q), 16);
	for (size_t n = 1; n < sizeof(psb); n++)
		MT_ASSERT_EQ(check_at(psb, n, &q), 0);
	for (size_t i = 2; i < sizeof(psb); i++) {
		memcpy(buf, psb, sizeof(buf));
		buf[i] ^= 0x10;
		MT_ASSERT_EQ(check_at(buf, sizeof(buf), &q), 0);
	}
	/* A long TNT without its stop bit is a bad packet. */
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x02;
	buf[1] = 0xa3;
	MT_ASSERT_EQ(check_at(buf, 8, &q), 0);
	buf[7] = 0x01;
	MT_ASSERT_EQ(check_at(buf, 8, &q), 8);
}

static struct pt_image *no_image(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	(void)ctx, (void)tsc, (void)ip, (void)bounds;
	return NULL;
}

static void ignore_block(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	(void)ctx, (void)tsc, (void)ip, (void)x, (void)ret;
}

static void ignore_transfer(void *ctx, enum mt_xfer x, uint64_t ret)
{
	(void)ctx, (void)x, (void)ret;
}

static void ignore_at(void *ctx, uint64_t tsc, uint64_t at)
{
	(void)ctx, (void)tsc, (void)at;
}

static void ignore_gap(void *ctx, uint64_t tsc, uint32_t reason)
{
	(void)ctx, (void)tsc, (void)reason;
}

/* PSBs the scan finds in the LEN bytes at P. */
static uint64_t psbs_found(const uint8_t *p, size_t len)
{
	const struct mt_blk_handler h = { .enable = no_image, .block = ignore_block,
					  .transfer = ignore_transfer, .disable = ignore_at,
					  .gap = ignore_gap };
	struct mt_blk_stats st;
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)p;
	cfg.end = (uint8_t *)p + len;
	mt_blk_decode(&cfg, NULL, NULL, &h, &st);
	return st.psbs;
}

/* PSBs libipt's packet decoder alone finds in the LEN bytes at P, read
 * as the scan reads them: from the first PSB, on at the next one after a
 * bad packet. */
static uint64_t psbs_libipt_finds(const uint8_t *p, size_t len)
{
	struct pt_packet_decoder *d = libipt_on(p, len);
	struct pt_packet pk;
	uint64_t n = 0;
	int st;

	for (st = pt_pkt_sync_forward(d); st >= 0; st = pt_pkt_sync_forward(d)) {
		while ((st = pt_pkt_next(d, &pk, sizeof(pk))) >= 0)
			n += pk.type == ppt_psb;
		if (st == -pte_eos)
			break;
	}
	pt_pkt_free_decoder(d);
	return n;
}

static void put_psb(uint8_t *p)
{
	for (int i = 0; i < 16; i += 2) {
		p[i] = 0x02;
		p[i + 1] = 0x82;
	}
}

/*
 * After a bad packet the scan looks for the next PSB where libipt alone
 * would (where libipt's decoder stands and where it last synced decide
 * where it looks): random bytes, mostly packets the scan reads itself,
 * with PSBs and bad opcodes among them, at every distance.
 */
MT_TEST(psbs_after_bad_packets_are_libipts)
{
	static const uint8_t common[] = { 0x00, 0x04, 0x06, 0x0d, 0x2d, 0x4d, 0x11, 0x31, 0x01,
					  0x1d, 0x59, 0x99, 0x19 };
	uint8_t buf[512];
	uint32_t s = 99;

	for (int round = 0; round < 4000; round++) {
		uint64_t want;

		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = rnd(&s) % 4 ? common[rnd(&s) % sizeof(common)] : (uint8_t)rnd(&s);
		put_psb(buf);
		for (int k = 0; k < 6; k++)
			put_psb(buf + 16 + rnd(&s) % (sizeof(buf) - 32));
		want = psbs_libipt_finds(buf, sizeof(buf));
		MT_ASSERT_EQ(psbs_found(buf, sizeof(buf)), want);
	}
}

/* A PSB right after a bad packet, and one begun inside the packet before
 * it (a TSC whose payload bytes are a PSB's first ones). */
MT_TEST(psbs_near_a_bad_packet_are_libipts)
{
	uint8_t buf[64];

	for (size_t gap = 0; gap < 8; gap++) {
		size_t n = 16;

		put_psb(buf);
		buf[n++] = 0x02;	/* PSBEND */
		buf[n++] = 0x23;
		buf[n++] = 0x59;	/* MTC, read by the scan itself */
		buf[n++] = 0x12;
		buf[n++] = 0x05;	/* no such opcode */
		for (size_t i = 0; i < gap; i++)
			buf[n++] = 0x00;
		put_psb(buf + n);
		n += 16;
		buf[n++] = 0x02;
		buf[n++] = 0x23;
		MT_ASSERT_EQ(psbs_found(buf, n), 2);
		MT_ASSERT_EQ(psbs_libipt_finds(buf, n), 2);
	}
	{
		size_t n = 16;

		put_psb(buf);
		buf[n++] = 0x02;
		buf[n++] = 0x23;
		buf[n++] = 0x19;
		for (int i = 0; i < 7; i++)
			buf[n++] = i % 2 ? 0x82 : 0x02;
		/* 0x82, a short TNT, then 02 82 x4: a PSB cut short by the
		 * PSBEND after it, a bad packet, where the hidden PSB ends. */
		buf[n++] = 0x82;
		for (int i = 0; i < 4; i++) {
			buf[n++] = 0x02;
			buf[n++] = 0x82;
		}
		buf[n++] = 0x02;
		buf[n++] = 0x23;
		MT_ASSERT_EQ(psbs_found(buf, n), psbs_libipt_finds(buf, n));
	}
}
