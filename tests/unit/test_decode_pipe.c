// SPDX-License-Identifier: MIT
/*
 * A CPU stream decoded in two stages (decode/blkpipe.h): the handler
 * behind the pipe sees exactly the calls it sees behind a time-spreading
 * queue of its own, whatever falls on a chunk's edge, and the decoding
 * gets every enable's answer it waits for.
 */
#include "mt_test.h"

#include "decode/blkpipe.h"
#include "decode/interp.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every call a handler gets, as text. */
struct record {
	char *text;
	size_t len;
	FILE *f;
	unsigned int enables;
	unsigned int images;	/* enable returns one of this many images */
};

/* Stand-ins for images: only their addresses are compared. */
static struct pt_image *image_at(unsigned int i)
{
	static char images[4];

	return (struct pt_image *)&images[i % 4];
}

static struct pt_image *r_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *b)
{
	struct record *r = ctx;

	fprintf(r->f, "enable %llu %llx %llu %llu %llu\n", (unsigned long long)tsc,
		(unsigned long long)ip, (unsigned long long)b->floor, (unsigned long long)b->ceil,
		(unsigned long long)b->end);
	/* NULL at times, as for a task without code. */
	if (!r->images || ++r->enables % 5 == 0)
		return NULL;
	return image_at(r->images == 1 ? 0 : r->enables % r->images);
}

static void r_transfer(void *ctx, enum mt_xfer x, uint64_t ret)
{
	fprintf(((struct record *)ctx)->f, "xfer %d %llx\n", (int)x, (unsigned long long)ret);
}

static void r_block(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	fprintf(((struct record *)ctx)->f, "block %llu %llx\n", (unsigned long long)tsc,
		(unsigned long long)ip);
	if (x != MT_BLK_NO_XFER)
		r_transfer(ctx, (enum mt_xfer)x, ret);
}

static void r_disable(void *ctx, uint64_t tsc, uint64_t at)
{
	fprintf(((struct record *)ctx)->f, "disable %llu %llx\n", (unsigned long long)tsc,
		(unsigned long long)at);
}

static void r_gap(void *ctx, uint64_t tsc, uint32_t reason)
{
	fprintf(((struct record *)ctx)->f, "gap %llu %u\n", (unsigned long long)tsc, reason);
}

static void r_progress(void *ctx, uint64_t off)
{
	fprintf(((struct record *)ctx)->f, "progress %llu\n", (unsigned long long)off);
}

static struct mt_blk_handler recorder(struct record *r, unsigned int images)
{
	memset(r, 0, sizeof(*r));
	r->images = images;
	r->f = open_memstream(&r->text, &r->len);
	MT_ASSERT(r->f != NULL);
	return (struct mt_blk_handler){ .enable = r_enable, .block = r_block,
					.transfer = r_transfer, .disable = r_disable,
					.gap = r_gap, .progress = r_progress, .ctx = r };
}

/* What the decoding side does: its calls, and the answers it got (the
 * images it decodes with), as text. */
struct script {
	uint64_t seed;
	size_t n;		/* calls */
	unsigned int enable_every;	/* 1: enables only (after LEAD blocks) */
	size_t lead;
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Plays SC into queue Q over handler H (blkdec.c's calls: an enable
 * flushes the queue first); the answers go to ANSWERS. */
static void play(const struct script *sc, struct mt_interp *q, const struct mt_blk_handler *h,
		 FILE *answers)
{
	uint64_t s = sc->seed, tsc = 1000, ip = 0x400000;

	for (size_t i = 0; i < sc->n; i++) {
		uint64_t r = next(&s);
		unsigned int kind = i < sc->lead ? 0 : sc->enable_every == 1 ? 9 : (unsigned int)(r % 10);

		/* Runs of equal times, which the queue spreads. */
		if (r % 7 == 0)
			tsc += r >> 60;
		ip += (r >> 8) % 64;
		switch (kind) {
		case 0:
		case 1:
		case 2:
			mt_interp_block(q, tsc, ip, 1 + (r >> 20) % 30);
			break;
		case 3:
		case 4:
			/* Now and then a block too long for a pipe item. */
			mt_interp_block_ending(q, tsc, ip,
					       r % 97 ? 1 + (r >> 20) % 30 : (uint64_t)1 << 33,
					       (enum mt_xfer)(1 + (r >> 40) % 3), ip + 5);
			break;
		case 5:
			mt_interp_transfer(q, MT_XFER_RET, 0);
			break;
		case 6:
			mt_interp_disable(q, tsc, ip);
			break;
		case 7:
			mt_interp_gap(q, tsc, 1 + (uint32_t)(r >> 50) % 3);
			break;
		case 8:
			if (h->progress)
				h->progress(h->ctx, i);
			break;
		default: {
			const struct mt_tsc_bounds b = { tsc - 1, tsc + 10, r % 3 ? UINT64_MAX : tsc + 99 };

			if (sc->enable_every > 1 && i % sc->enable_every)
				break;
			mt_interp_flush(q, tsc);
			fprintf(answers, "%p\n", (void *)h->enable(h->ctx, tsc, ip, &b));
			break;
		}
		}
	}
	mt_interp_flush(q, 0);
}

struct consumer {
	struct mt_blk_pipe *pipe;
};

static void *consume(void *arg)
{
	mt_blk_pipe_run(((struct consumer *)arg)->pipe);
	return NULL;
}

/*
 * The answers the decoding got through the pipe (PIPED) against those of
 * direct calls (DIRECT), a line each: with several images, the same;
 * otherwise the same up to the first image, then none (it keeps it).
 */
static void answers_agree(char *direct, char *piped, unsigned int images)
{
	char *sd = NULL, *sp = NULL, *d = strtok_r(direct, "\n", &sd), *p;
	int kept = 0;

	for (p = strtok_r(piped, "\n", &sp); d && p;
	     d = strtok_r(NULL, "\n", &sd), p = strtok_r(NULL, "\n", &sp)) {
		if (images > 1 || !kept)
			MT_ASSERT_STREQ(p, d);
		else
			MT_ASSERT_STREQ(p, "(nil)");
		kept |= strcmp(d, "(nil)") != 0;
	}
	MT_ASSERT(!d && !p);
	MT_ASSERT_EQ(kept, images > 0);
}

/*
 * SC played straight into a queue over a recorder, and through a pipe
 * into one; the calls each recorder got must be the same. With IMAGES,
 * the decoding must get the answers a direct call gives, or keep the
 * image it has (NULL) when it may not differ.
 */
static void same_through_pipe(const struct script *sc, unsigned int images)
{
	struct record direct, piped;
	struct mt_blk_handler hd = recorder(&direct, images), hp = recorder(&piped, images);
	char *ans_d, *ans_p;
	size_t len_d, len_p;
	FILE *fd = open_memstream(&ans_d, &len_d), *fp = open_memstream(&ans_p, &len_p);
	struct mt_interp q;
	struct consumer c;
	pthread_t t;

	mt_interp_init(&q, &hd);
	play(sc, &q, &hd, fd);
	mt_interp_fini(&q);
	fclose(direct.f);
	fclose(fd);

	c.pipe = mt_blk_pipe_new(&hp, images);
	MT_ASSERT(c.pipe != NULL);
	MT_ASSERT_EQ(pthread_create(&t, NULL, consume, &c), 0);
	mt_interp_init(&q, mt_blk_pipe_front(c.pipe));
	play(sc, &q, mt_blk_pipe_front(c.pipe), fp);
	mt_interp_fini(&q);
	mt_blk_pipe_close(c.pipe);
	MT_ASSERT_EQ(pthread_join(t, NULL), 0);
	mt_blk_pipe_free(c.pipe);
	fclose(piped.f);
	fclose(fp);

	MT_ASSERT(direct.len > 0);
	MT_ASSERT_EQ(direct.len, piped.len);
	MT_ASSERT_MSG(!memcmp(direct.text, piped.text, direct.len), "the calls differ");
	answers_agree(ans_d, ans_p, images);
	free(direct.text);
	free(piped.text);
	free(ans_d);
	free(ans_p);
}

/* A mix of every call, the ring wrapped many times. */
MT_TEST(mixed_calls_arrive_as_made)
{
	const struct script sc = { .seed = 7, .n = 300000, .enable_every = 0 };

	same_through_pipe(&sc, 1);
}

/* Enables only, after none and after one block: an enable and its bounds
 * fall on every place of a chunk, its last included. */
MT_TEST(enables_on_every_edge_of_a_chunk)
{
	for (size_t lead = 0; lead < 2; lead++) {
		const struct script sc = { .seed = 11, .n = 70000, .enable_every = 1,
					   .lead = lead };

		same_through_pipe(&sc, 1);
	}
}

/* With several images every enable waits for its answer, and gets it. */
MT_TEST(enable_answers_reach_the_decoding)
{
	const struct script sc = { .seed = 3, .n = 100000, .enable_every = 0 };

	same_through_pipe(&sc, 3);
}

/* Without images the decoding never waits, and gets nothing. */
MT_TEST(no_images_no_waiting)
{
	const struct script sc = { .seed = 5, .n = 50000, .enable_every = 0 };

	same_through_pipe(&sc, 0);
}
