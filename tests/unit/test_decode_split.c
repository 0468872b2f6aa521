// SPDX-License-Identifier: MIT
/*
 * One stream split into pieces decoded ahead by other threads
 * (decode/blksplit.h) gives its handler exactly the calls one decoder
 * over the whole stream gives, in the same order: on a generated walk, on
 * the same walk damaged just before piece boundaries (decode errors run
 * across them, so pieces are decoded again), and with every piece a
 * different size; and all of it again with CYC packets, whose times hang
 * on the cycles' chain from before each piece. Through the whole decoder,
 * a walk on one CPU gives the same steps at the same times split or not.
 */
#include "test_decode_steps.h"

#include "decode/blksplit.h"
#include "decode/ptsource.h"

#include <stdio.h>

/* One handler call, as recorded. */
struct call {
	char kind;
	uint64_t v[4];
};

struct calls {
	struct call *v;
	size_t n, cap;
	struct pt_image *image;	/* what every enable answers */
};

static void rec(struct calls *c, char kind, uint64_t a, uint64_t b, uint64_t x, uint64_t y)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		MT_ASSERT(c->v);
	}
	c->v[c->n++] = (struct call){ kind, { a, b, x, y } };
}

static struct pt_image *h_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *bounds)
{
	struct calls *c = ctx;

	rec(c, 'e', tsc, ip, bounds->floor, bounds->ceil ^ bounds->end);
	return c->image;
}

static void h_block(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	rec(ctx, 'b', tsc, ip, (uint64_t)x, ret);
}

static void h_transfer(void *ctx, enum mt_xfer x, uint64_t ret)
{
	rec(ctx, 'x', (uint64_t)x, ret, 0, 0);
}

static void h_disable(void *ctx, uint64_t tsc, uint64_t at)
{
	rec(ctx, 'd', tsc, at, 0, 0);
}

static void h_gap(void *ctx, uint64_t tsc, uint32_t reason)
{
	rec(ctx, 'g', tsc, reason, 0, 0);
}

/* The generated walk: its raw PT, and its binary's code in an image. */
struct walk {
	uint8_t *pt;
	size_t len;
	struct pt_image_section_cache *isc;
	struct pt_image *image;
	struct pt_config cfg;
	bool cyc;	/* with CYC packets, decoded with their exact times */
};

/* The walk, with CYC packets when CYC (and the generator's nominal ratio,
 * its CBR, so that they take the exact-time path). */
static void walk_make(struct walk *w, bool cyc)
{
	char ptgen[1200], progs[1200], prog[1300], line[1500];
	const char *raw = fx_path(cyc ? "split-cyc.pt" : "split.pt");
	FILE *f;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	snprintf(prog, sizeof(prog), "%s/indirect-nopie", progs);
	fx_sh("'%s' --raw '%s' --walk '%s' --insns 600000 --seed 11 --psb-freq 0%s >/dev/null",
	      ptgen, raw, prog, cyc ? " --cyc" : "");
	f = fopen(raw, "rb");
	MT_ASSERT(f);
	MT_ASSERT_EQ(fseek(f, 0, SEEK_END), 0);
	w->len = (size_t)ftell(f);
	rewind(f);
	w->pt = malloc(w->len);
	MT_ASSERT(w->pt && fread(w->pt, 1, w->len, f) == w->len);
	fclose(f);
	/* The executable's code where it is loaded (ET_EXEC: no bias). */
	w->isc = pt_iscache_alloc(NULL);
	w->image = pt_image_alloc(NULL);
	snprintf(line, sizeof(line), "readelf -lW '%s' | awk '$1 == \"LOAD\" && ($7 ~ /E/ || $8 ~ /E/) "
		 "{ print $2, $3, $5 }'", prog);
	f = popen(line, "r");
	MT_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, vaddr, size;
		int isid;

		MT_ASSERT_EQ(sscanf(line, "%llx %llx %llx", &off, &vaddr, &size), 3);
		isid = pt_iscache_add_file(w->isc, prog, off, size, vaddr);
		MT_ASSERT(isid > 0 && pt_image_add_cached(w->image, w->isc, isid, NULL) == 0);
	}
	pclose(f);
	pt_config_init(&w->cfg);
	w->cfg.flags.variant.block.end_on_call = 1;
	w->cfg.flags.variant.block.end_on_jump = 1;
	w->cfg.nom_freq = cyc ? 20 : 0;
	w->cyc = cyc;
}

static void walk_free(struct walk *w)
{
	pt_image_free(w->image);
	pt_iscache_free(w->isc);
	free(w->pt);
}

static struct mt_blk_handler handler(struct calls *c)
{
	return (struct mt_blk_handler){ .enable = h_enable, .block = h_block,
					.transfer = h_transfer, .disable = h_disable,
					.gap = h_gap, .ctx = c };
}

/* The stream decoded by one decoder. */
static void decode_whole(struct walk *w, struct calls *c, struct mt_blk_stats *st)
{
	struct mt_pt_buffer buf;
	struct mt_blk_handler h = handler(c);

	c->image = w->image;
	mt_pt_buffer_init(&buf, w->pt, w->len);
	MT_ASSERT_EQ(mt_blk_decode_stream(&w->cfg, &buf.src, &buf.src, !w->cyc, 1, NULL, w->isc,
					  &h, st), 0);
}

/* The stream in pieces of PIECE bytes, with HELPERS threads ahead. */
static void decode_split(struct walk *w, struct calls *c, struct mt_blk_stats *st,
			 struct mt_blk_split_stats *ss, uint64_t piece, unsigned int helpers)
{
	struct mt_blk_handler h = handler(c);
	struct pt_config cfg = w->cfg;

	c->image = w->image;
	cfg.begin = w->pt;
	cfg.end = w->pt + w->len;
	MT_ASSERT_EQ(mt_blk_decode_split_buffer(&cfg, !w->cyc, piece, helpers, w->image, w->isc, &h,
						st, ss), 0);
}

/* X and Y made the same calls, and counted the same. */
static void same_calls(const struct calls *x, const struct mt_blk_stats *sx,
		       const struct calls *y, const struct mt_blk_stats *sy)
{
	size_t i = 0;

	while (i < x->n && i < y->n && x->v[i].kind == y->v[i].kind &&
	       !memcmp(x->v[i].v, y->v[i].v, sizeof(x->v[i].v)))
		i++;
	MT_ASSERT_MSG(i == x->n && i == y->n,
		      "call %zu of %zu and %zu differs: %c %" PRIx64 " %" PRIx64 " against %c %"
		      PRIx64 " %" PRIx64, i, x->n, y->n, i < x->n ? x->v[i].kind : '-',
		      i < x->n ? x->v[i].v[0] : 0, i < x->n ? x->v[i].v[1] : 0,
		      i < y->n ? y->v[i].kind : '-', i < y->n ? y->v[i].v[0] : 0,
		      i < y->n ? y->v[i].v[1] : 0);
	MT_ASSERT_EQ(sx->blocks, sy->blocks);
	MT_ASSERT_EQ(sx->insns, sy->insns);
	MT_ASSERT_EQ(sx->errors, sy->errors);
	MT_ASSERT_EQ(sx->overflows, sy->overflows);
	MT_ASSERT_EQ(sx->psbs, sy->psbs);
	MT_ASSERT_EQ(sx->first_tsc, sy->first_tsc);
	MT_ASSERT_EQ(sx->last_tsc, sy->last_tsc);
	MT_ASSERT_EQ(sx->first_error, sy->first_error);
	MT_ASSERT_EQ(sx->first_error_offset, sy->first_error_offset);
}

static void pieces_decode_as_one(bool cyc)
{
	struct walk w;
	struct calls whole = { 0 };
	struct mt_blk_stats sw, sp;
	static const uint64_t pieces[] = { 1024, 5000, 64 << 10 };

	walk_make(&w, cyc);
	decode_whole(&w, &whole, &sw);
	printf("# %zu calls, %" PRIu64 " blocks, %" PRIu64 " errors, %" PRIu64 " PSBs\n", whole.n, sw.blocks, sw.errors, sw.psbs);
	MT_ASSERT(whole.n > 100000);
	MT_ASSERT(sw.psbs > 50);
	for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
		for (unsigned int helpers = 1; helpers <= 3; helpers += 2) {
			struct calls split = { 0 };
			struct mt_blk_split_stats ss;

			decode_split(&w, &split, &sp, &ss, pieces[k], helpers);
			printf("# %zu bytes in pieces of %" PRIu64 ", %u helpers: %" PRIu64
			       " ahead, %" PRIu64 " decoded again\n", w.len, pieces[k], helpers,
			       ss.ahead, ss.redone);
			same_calls(&whole, &sw, &split, &sp);
			MT_ASSERT(ss.ahead >= (w.len / pieces[k] < sw.psbs ? w.len / pieces[k]
									       : sw.psbs) / 2);
			MT_ASSERT_EQ(ss.redone, 0);
			free(split.v);
		}
	}
	free(whole.v);
	walk_free(&w);
}

MT_TEST(pieces_decode_as_one)
{
	pieces_decode_as_one(false);
}

/*
 * With CYC packets a piece's times hang on the chain of cycles from before
 * it (decode/cyctime.h): each piece decoded ahead starts with the chain
 * read from the stream before it, and the calls, exact times included, are
 * still one decoder's. The times are the cycles' (they differ from
 * libipt's estimates), so the chain is what is tested.
 */
MT_TEST(cyc_pieces_decode_as_one)
{
	struct walk w;
	struct calls exact = { 0 }, estimated = { 0 };
	struct mt_blk_stats se, sl;
	size_t i = 0;

	walk_make(&w, true);
	decode_whole(&w, &exact, &se);
	w.cyc = false;
	decode_whole(&w, &estimated, &sl);
	while (i < exact.n && i < estimated.n &&
	       !memcmp(exact.v[i].v, estimated.v[i].v, sizeof(exact.v[i].v)))
		i++;
	MT_ASSERT_MSG(i < exact.n, "the cycles gave libipt's times");
	free(exact.v);
	free(estimated.v);
	walk_free(&w);
	pieces_decode_as_one(true);
}

/* Random bytes just before every third PSB: libipt errors there and
 * resyncs at a later PSB, so the piece after it did not start where the
 * decoding stopped, and is decoded again; everything still matches what
 * one decoder makes with the same window ends (no helper). On a damaged
 * stream, where windows end can change what is decoded (docs/decoder.md). */
/*
 * RTIT_CTL.CYCEn set but no CYC packet in the stream: pieces decoded ahead
 * assume CYC packets (they cannot look for the first from the start), the
 * decoding before them has none, so none follows and each is decoded
 * again; the calls are still one decoder's.
 */
MT_TEST(cyc_enabled_without_cyc_packets_decodes_as_one)
{
	struct walk w;
	struct calls whole = { 0 }, split = { 0 };
	struct mt_blk_stats sw, sp;
	struct mt_blk_split_stats ss;

	walk_make(&w, false);
	w.cfg.nom_freq = 20;
	w.cyc = true;
	decode_whole(&w, &whole, &sw);
	decode_split(&w, &split, &sp, &ss, 5000, 2);
	printf("# %" PRIu64 " pieces ahead, %" PRIu64 " decoded again\n", ss.ahead, ss.redone);
	same_calls(&whole, &sw, &split, &sp);
	MT_ASSERT_EQ(ss.ahead, 0);
	MT_ASSERT(ss.redone > 10);
	free(whole.v);
	free(split.v);
	walk_free(&w);
}

static void damage_across_piece_ends(bool cyc)
{
	struct walk w;
	struct calls whole = { 0 }, split = { 0 };
	struct mt_blk_stats sw, sp;
	struct mt_blk_split_stats s0, ss;
	unsigned int seed = 7;
	size_t damaged = 0, psbs = 0;

	walk_make(&w, cyc);
	for (size_t i = 64; i + 16 <= w.len; i++) {
		if (w.pt[i] != 0x02 || w.pt[i + 1] != 0x82 || memcmp(w.pt + i, w.pt + i + 2, 14))
			continue;
		if (psbs++ % 3 == 1) {
			for (size_t k = i - 48; k < i; k++)
				w.pt[k] = (uint8_t)rand_r(&seed);
			damaged++;
		}
		i += 15;
	}
	MT_ASSERT(damaged > 20);
	decode_split(&w, &whole, &sw, &s0, 1024, 0);
	MT_ASSERT_EQ(s0.ahead, 0);
	decode_split(&w, &split, &sp, &ss, 1024, 2);
	printf("# %zu PSBs damaged: %" PRIu64 " errors; %" PRIu64 " pieces ahead, %" PRIu64
	       " decoded again\n", damaged, sw.errors, ss.ahead, ss.redone);
	MT_ASSERT(sw.errors > 0);
	same_calls(&whole, &sw, &split, &sp);
	MT_ASSERT(ss.ahead > 0);
	MT_ASSERT(ss.redone > 0);
	free(whole.v);
	free(split.v);
	walk_free(&w);
}

MT_TEST(damage_across_piece_ends_decodes_as_one)
{
	damage_across_piece_ends(false);
}

/* The same with CYC packets: a damaged piece end also breaks the chain of
 * cycles there (the decoding before stops reading at the bad packet). */
MT_TEST(cyc_damage_across_piece_ends_decodes_as_one)
{
	damage_across_piece_ends(true);
}

/* Through the whole decoder: a walk on one CPU, split (two jobs, a piece
 * every 8 KiB) and not (one job), gives the same steps at the same times. */
MT_TEST(one_busy_cpu_split_through_the_decoder)
{
	char ptgen[1200], progs[1200];
	const char *b = fx_path("split1.mtrace");
	const struct mt_decode_opts one = { .jobs = 1 }, two = { .jobs = 2, .pt_piece = 8 << 10 };
	struct steps x = { 0 };
	struct mt_decode_stats s1, s2;

	fx_ptgen_paths(ptgen, progs, sizeof(progs));
	fx_sh("'%s' -o '%s' --walk '%s/indirect-nopie' --insns 2000000 --seed 13 >/dev/null",
	      ptgen, b, progs);
	s1 = steps_decode_with(b, &x, &one, NULL);
	s2 = steps_decode_same(b, &x, &two, "split");
	printf("# %" PRIu64 " bytes of PT: %" PRIu64 " pieces ahead, %" PRIu64
	       " decoded again\n", s2.pt_bytes, s2.pieces_ahead, s2.pieces_redone);
	MT_ASSERT(x.n > 10000);
	MT_ASSERT_EQ(s1.split_streams, 0);
	MT_ASSERT_EQ(s2.split_streams, 1);
	MT_ASSERT(s2.pieces_ahead >= s2.pt_bytes / (16 << 10));
	MT_ASSERT_EQ(s2.pieces_redone, 0);
	MT_ASSERT_EQ(s1.blocks, s2.blocks);
	MT_ASSERT_EQ(s1.clamped, s2.clamped);
	free(x.v);
}
