// SPDX-License-Identifier: MIT
/*
 * The block-decoder loop over PT streams written with libipt's encoder for
 * a small hand-assembled program, checked as the call-stack events it
 * produces: direct and indirect calls, compressed returns, an indirect
 * tail jump, a syscall with user-only tracing, an interrupt with kernel
 * tracing, an unmapped target (gap and resync at the next PSB), code
 * running on into the next function with a cold and a warm block cache,
 * and garbage or truncated input (no crash).
 */
#include "test_decode_evfmt.h"
#include "test_decode_fixture.h"
#include "test_decode_ptenc.h"

#include "mt_blk_cs.h"

#define BASE 0x400000ull
/* Functions A..G start every 0x20 bytes from BASE. */
#define AT(c, off) (BASE + 0x20u * (uint64_t)((c) - 'A') + (off))

static const uint8_t code[0xe0] = {
	/* A */
	[0x00] = 0xe8, 0x1b, 0x00, 0x00, 0x00,	/* call B */
	[0x05] = 0xe8, 0x36, 0x00, 0x00, 0x00,	/* call C */
	[0x0a] = 0x0f, 0x05,			/* syscall */
	[0x0c] = 0xff, 0xd3,			/* call *%rbx (D) */
	[0x0e] = 0x90, 0xeb, 0xfd,		/* nop; jmp 0x0e */
	[0x20] = 0xc3,				/* B: ret */
	[0x40] = 0xff, 0xe0,			/* C: jmp *%rax (E) */
	[0x60] = 0xc3,				/* D: ret */
	[0x80] = 0xc3,				/* E: ret */
	[0xa0 ... 0xbf] = 0x90,			/* F: nops running on into G */
	[0xc0] = 0xc3,				/* G: ret */
};

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	(void)ctx;
	if (ip >= BASE && ip < BASE + sizeof(code)) {
		fn->start = BASE + ((ip - BASE) & ~0x1full);
		fn->end = fn->start + 0x20;
		fn->id = MT_FN_FIRST_USER + (uint32_t)((ip - BASE) >> 5);
	} else {
		fn->start = ip;
		fn->end = ip + 1;
		fn->id = MT_FN_UNKNOWN;
	}
}

static struct mt_cs cs;
static int enables;

static struct pt_image *h_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	(void)ctx, (void)tsc, (void)ip, (void)bounds;
	enables++;
	return NULL;
}

/* Decodes BUF[0..LEN) against the program, its section in ISC (with the
 * block cache of what ISC's section decoded before); returns the event
 * text. */
static const char *decode_in(struct pt_image_section_cache *isc, const uint8_t *buf, size_t len,
			     struct mt_blk_stats *st)
{
	struct mt_blk_handler handler;
	static const struct mt_cs_ops ops = { resolve, evfmt_emit, NULL };
	struct pt_image *img = pt_image_alloc(NULL);
	struct pt_config cfg;
	FILE *f;
	int isid;

	f = fopen(fx_path("code.bin"), "wb");
	MT_ASSERT(f && fwrite(code, 1, sizeof(code), f) == sizeof(code));
	fclose(f);
	isid = pt_iscache_add_file(isc, fx_path("code.bin"), 0, sizeof(code), BASE);
	MT_ASSERT(isid > 0 && pt_image_add_cached(img, isc, isid, NULL) == 0);
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf;
	cfg.end = (uint8_t *)buf + len;
	cfg.flags.variant.block.end_on_call = 1;
	cfg.flags.variant.block.end_on_jump = 1;
	cfg.nom_freq = 20;	/* TSC at 2 GHz: CYC times need it */
	evfmt_reset();
	enables = 0;
	mt_cs_init(&cs, &ops);
	handler = mt_blk_cs_handler(&cs, h_enable);
	MT_ASSERT_EQ(mt_blk_decode(&cfg, img, isc, &handler, st), 0);
	mt_cs_finish(&cs, st->last_tsc);
	mt_cs_fini(&cs);
	pt_image_free(img);
	return evfmt_text();
}

/* Decodes BUF[0..LEN) with a section cache of its own. */
static const char *decode(const uint8_t *buf, size_t len, struct mt_blk_stats *st)
{
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	const char *got = decode_in(isc, buf, len, st);

	pt_iscache_free(isc);
	return got;
}

/* The whole program: A calls B, C (which tail-jumps to E), makes a
 * syscall, calls D indirectly, and is stopped asynchronously. */
static void encode_program(struct ptenc *e)
{
	ptenc_begin(e, 1000, AT('A', 0));
	ptenc_tnt(e, "1");				/* B returns (compressed) */
	ptenc_ip(e, ppt_tip, AT('E', 0), pt_ipc_sext_48);	/* C: jmp *%rax */
	ptenc_tnt(e, "1");				/* E returns into A */
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);	/* syscall leaves user mode */
	ptenc_tsc(e, 2000);
	ptenc_ip(e, ppt_tip_pge, AT('A', 0x0c), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip, AT('D', 0), pt_ipc_sext_48);	/* call *%rbx */
	ptenc_tnt(e, "1");				/* D returns */
	ptenc_tsc(e, 3000);
	ptenc_ip(e, ppt_fup, AT('A', 0x0e), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
}

MT_TEST(calls_returns_tail_jump_and_syscall)
{
	struct mt_blk_stats st;
	struct ptenc e;
	const char *got;

	encode_program(&e);
	ptenc_end(&e);
	got = decode(e.buf, e.len, &st);
	MT_ASSERT_EQ(st.errors, 0);
	MT_ASSERT_EQ(st.first_tsc, 1000);
	MT_ASSERT_EQ(st.last_tsc, 3000);
	MT_ASSERT_EQ(enables, 2);	/* at the first sync and after the syscall */
	/* Trace on/off carry their event's time; block times are libipt's,
	 * which may already include the next timing packet (3000:+D). */
	MT_ASSERT_STREQ(got, "1000:+A* 1000:+B 1000:-B 1000:+C 1000:-C 1000:+E^ 1000:-E "
			     "1000:+[sys] 2000:-[sys] 3000:+D 3000:-D 3000:+[off] 3000:-[off]! "
			     "3000:-A!");
}

/* With kernel tracing, an interrupt right after B returns, before A ran
 * another instruction: the return still closes B, and the handler nests
 * in A (B's frame used to stay open under the handler; found by the user
 * and kernel walk in the VM). */
MT_TEST(interrupt_right_after_a_return_settles_it)
{
	struct mt_blk_stats st;
	struct ptenc e;
	const char *got;

	ptenc_begin(&e, 1000, AT('A', 0));
	ptenc_tnt(&e, "1");				/* B returns */
	ptenc_ip(&e, ppt_fup, AT('A', 5), pt_ipc_sext_48);	/* interrupted there */
	ptenc_ip(&e, ppt_tip, AT('D', 0), pt_ipc_sext_48);	/* the handler */
	ptenc_tsc(&e, 2000);
	ptenc_ip(&e, ppt_fup, AT('D', 0), pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(&e);
	got = decode(e.buf, e.len, &st);
	MT_ASSERT_EQ(st.errors, 0);
	/* The interrupt's time is the next TSC: A and B are spread up to it. */
	MT_ASSERT_STREQ(got, "1000:+A* 1500:+B 2000:-B 2000:+D 2000:+[off] 2000:-[off]! "
			     "2000:-D! 2000:-A!");
}

MT_TEST(unmapped_target_gives_a_gap_and_resync)
{
	struct mt_blk_stats st;
	struct ptenc e;
	const char *got;

	ptenc_begin(&e, 1000, AT('A', 0));
	ptenc_tnt(&e, "1");
	ptenc_ip(&e, ppt_tip, 0x900000, pt_ipc_sext_48);	/* C jumps nowhere */
	ptenc_psb(&e, 5000, AT('D', 0));	/* the next PSB+ resumes inside D */
	ptenc_ip(&e, ppt_tip, AT('A', 0x0e), pt_ipc_sext_48);	/* D returns */
	ptenc_ip(&e, ppt_fup, AT('A', 0x0e), pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(&e);
	got = decode(e.buf, e.len, &st);
	MT_ASSERT_EQ(st.errors, 1);
	MT_ASSERT_EQ(st.first_error, -pte_nomap);
	/* The gap closes A and C; after the resync D is inferred, then its
	 * caller A when D returns. C is reported with the PSB's time, read
	 * ahead: the blocks before it are spread up to there. */
	MT_ASSERT_STREQ(got, "1000:+A* 2333:+B 3666:-B 5000:+C 5000:-C! 5000:-A! 5000:GAP2 "
			     "5000:+D* 5000:-D 5000:+A* 5000:+[off] 5000:-[off]! 5000:-A!");
}

static void cyc(struct ptenc *e, uint64_t cycles)
{
	struct pt_packet p = { .type = ppt_cyc };

	p.payload.cyc.value = cycles;
	ptenc_packet(e, &p);
}

static void cbr(struct ptenc *e, uint8_t ratio)
{
	struct pt_packet p = { .type = ppt_cbr };

	p.payload.cbr.ratio = ratio;
	ptenc_packet(e, &p);
}

/* The program in cycle-accurate mode with the core at 4 GHz (CBR 40) and
 * the TSC at 2 GHz (nominal ratio 20): a cycle is half a tick. */
static void encode_program_cyc(struct ptenc *e)
{
	ptenc_init(e);
	ptenc_simple(e, ppt_psb);
	ptenc_tsc(e, 1000);
	cbr(e, 40);
	ptenc_ip(e, ppt_fup, AT('A', 0), pt_ipc_sext_48);
	ptenc_mode64(e);
	ptenc_simple(e, ppt_psbend);
	cyc(e, 10);					/* 1005 */
	ptenc_tnt(e, "1");				/* B returns */
	cyc(e, 7);					/* 1008.5 */
	ptenc_ip(e, ppt_tip, AT('E', 0), pt_ipc_sext_48);	/* C: jmp *%rax */
	cyc(e, 3);					/* 1010 */
	ptenc_tnt(e, "1");				/* E returns */
	cyc(e, 4);					/* 1012 */
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);	/* syscall */
	ptenc_tsc(e, 2000);				/* the chain restarts */
	cbr(e, 40);
	ptenc_ip(e, ppt_tip_pge, AT('A', 0x0c), pt_ipc_sext_48);
	cyc(e, 8);					/* 2004 */
	ptenc_ip(e, ppt_tip, AT('D', 0), pt_ipc_sext_48);	/* call *%rbx */
	cyc(e, 3);					/* 2005.5 */
	ptenc_tnt(e, "1");				/* D returns */
	cyc(e, 5);					/* 2008 */
	ptenc_ip(e, ppt_fup, AT('A', 0x0e), pt_ipc_sext_48);
	ptenc_ip(e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(e);
}

/*
 * Cycle-accurate times are the packets' own, from the cycles and the CBR,
 * the half ticks carried: E's return at 1010 (1008.5 + 1.5; libipt's
 * estimate drops the half at each packet: 1009), the syscall at 1012
 * (1011), the interrupt at 2008 (2007). Blocks between two packets share
 * their interval by instruction count: B starts at 1000 + 5 / 2, C at
 * 1005 + 3 / 2. (D's return lands where the interrupt comes before any
 * instruction: it ends D at the interrupt's time, as without CYC.)
 */
MT_TEST(cycle_accurate_times_from_the_cycles_and_cbr)
{
	struct mt_blk_stats st;
	struct ptenc e;
	const char *got;

	encode_program_cyc(&e);
	got = decode(e.buf, e.len, &st);
	MT_ASSERT_EQ(st.errors, 0);
	MT_ASSERT_EQ(st.last_tsc, 2008);
	MT_ASSERT_STREQ(got, "1000:+A* 1002:+B 1005:-B 1006:+C 1008:-C 1008:+E^ 1010:-E "
			     "1012:+[sys] 2000:-[sys] 2004:+D 2008:-D 2008:+[off] 2008:-[off]! "
			     "2008:-A!");
}

/*
 * G runs first, returns to F, whose code runs on into G. The first time
 * through F libipt's block cache is filled, and libipt 2.0.5 ends the
 * block before G (G's entry is already there); the next time the cache
 * has one entry for F up to G's return. The events must not depend on
 * which: the section cache, and with it the block cache, is shared by
 * every CPU stream, so they would depend on what other streams decoded
 * before, in parallel workers on their timing. The block is F's, as
 * libipt makes it without a cache.
 */
MT_TEST(blocks_do_not_depend_on_the_block_cache)
{
	/* Frames inferred at a return to an empty stack start with the
	 * segment; the blocks before the TSC packet are spread up to it. */
	static const char *want = "1000:+G* 2000:-G 1000:+F* 2000:-F 1000:+A* 2000:+[off] "
				  "2000:-[off]! 2000:-A!";
	struct pt_image_section_cache *isc = pt_iscache_alloc(NULL);
	struct mt_blk_stats st;
	char first[512];
	struct ptenc e;

	ptenc_begin(&e, 1000, AT('G', 0));
	ptenc_ip(&e, ppt_tip, AT('F', 0), pt_ipc_sext_48);	/* G returns to F */
	ptenc_ip(&e, ppt_tip, AT('A', 0x0e), pt_ipc_sext_48);	/* G returns to A */
	ptenc_tsc(&e, 2000);
	ptenc_ip(&e, ppt_fup, AT('A', 0x0e), pt_ipc_sext_48);
	ptenc_ip(&e, ppt_tip_pgd, 0, pt_ipc_suppressed);
	ptenc_end(&e);
	snprintf(first, sizeof(first), "%s", decode_in(isc, e.buf, e.len, &st));
	MT_ASSERT_EQ(st.errors, 0);
	MT_ASSERT_STREQ(first, want);
	MT_ASSERT_STREQ(decode_in(isc, e.buf, e.len, &st), want);
	MT_ASSERT_EQ(st.errors, 0);
	pt_iscache_free(isc);
}

MT_TEST(garbage_and_truncated_streams_do_not_crash)
{
	struct mt_blk_stats st;
	uint8_t junk[4096];
	struct ptenc e;
	uint32_t x = 12345;

	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (uint8_t)(x >> 16);
	}
	decode(junk, sizeof(junk), &st);
	/* Every prefix of a valid stream decodes without crashing and never
	 * reports more than the full stream does. */
	encode_program(&e);
	ptenc_end(&e);
	for (size_t n = 0; n <= e.len; n++) {
		decode(e.buf, n, &st);
		MT_ASSERT(evfmt_begins == evfmt_ends);
	}
	encode_program_cyc(&e);
	for (size_t n = 0; n <= e.len; n++) {
		decode(e.buf, n, &st);
		MT_ASSERT(evfmt_begins == evfmt_ends);
	}
}
