// SPDX-License-Identifier: MIT
/* One CPU stream decoded by several threads at once; see blksplit.h. */
#include "decode/blksplit.h"

#include "decode/blkpipe.h"
#include "decode/cyctime.h"
#include "decode/interp.h"
#include "decode/ptsource.h"
#include "util/cputime.h"

#include <pthread.h>
#include <stdlib.h>

/* A piece decoded ahead. */
struct piece {
	uint64_t index;
	struct mt_blkdec *b;
	struct mt_blk_pipe *spool;
	int rc;
	bool done;
};

/*
 * With CYC packets, the chain of cycles where each piece starts, which a
 * piece decoded ahead cannot know (cyctime.h): read from the stream's
 * start with a reading of its own, piece by piece in order (a packet
 * decoder only, a small part of a block decoder's work).
 */
struct chain_reading {
	pthread_mutex_t lock;
	pthread_cond_t turn;
	uint64_t next;		/* the piece whose turn it is */
	struct mt_blk_reading r;
	bool opened;
	struct mt_cyctime *t;	/* NULL: no chain to give */
	struct pt_config cfg;
	uint64_t pos;		/* read up to here */
};

struct split {
	const struct mt_blk_split *s;
	const struct mt_blk_handler *h;
	uint64_t size, npieces;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a piece done, room ahead, or stop */
	/* Under lock. Helpers decode pieces up to delivered + helpers, so a
	 * ring of helpers + 2 holds every piece in flight. */
	uint64_t next;		/* the next piece to decode ahead */
	uint64_t delivered;	/* the pieces before it are done with */
	unsigned int running;	/* helpers that have not left */
	bool stop;
	struct piece *ring;
	size_t nring;
	struct mt_blk_chunks *pool;	/* the spools' chunks */
	uint64_t helper_cpu_ns;
	struct chain_reading chain;
};

struct helper {
	struct split *sp;
	struct mt_blk_reading reading;
	struct pt_image *image;
	pthread_t thread;
	bool opened, started;
};

static struct piece *slot(struct split *sp, uint64_t i)
{
	return &sp->ring[i % sp->nring];
}

static void piece_free(struct piece *pc)
{
	mt_blkdec_free(pc->b);
	mt_blk_pipe_free(pc->spool);
	pc->b = NULL;
	pc->spool = NULL;
}

/* The chain at offset OFF into *C, read on from the last piece's; false
 * when there is none to give. */
static bool chain_read_to(struct chain_reading *ch, uint64_t off, struct mt_cyc_chain *c)
{
	if (!ch->t || off == UINT64_MAX || off < ch->pos)
		return false;
	mt_cyctime_mark(ch->t, off);
	if (off > ch->pos) {
		size_t got;
		const uint8_t *p = ch->r.src->window(ch->r.src->ctx, ch->pos, off, &got);

		if (!p || got < off - ch->pos)
			return false;
		ch->cfg.begin = (uint8_t *)p;
		ch->cfg.end = (uint8_t *)p + got;
		mt_cyctime_window(ch->t, &ch->cfg, ch->pos);
		mt_cyctime_read_to(ch->t, off);
		ch->pos = off;
	}
	return mt_cyctime_marked(ch->t, off, c);
}

/* Piece PC, started ahead (or not), gets the chain where it starts: the
 * pieces take their turns in order, each once. */
static void chain_turn(struct split *sp, struct piece *pc)
{
	struct chain_reading *ch = &sp->chain;
	struct mt_cyc_chain c;

	pthread_mutex_lock(&ch->lock);
	while (ch->next != pc->index)
		pthread_cond_wait(&ch->turn, &ch->lock);
	if (!pc->rc && chain_read_to(ch, mt_blkdec_position(pc->b), &c))
		mt_blkdec_resume_cyc(pc->b, &c);
	ch->next++;
	pthread_cond_broadcast(&ch->turn);
	pthread_mutex_unlock(&ch->lock);
}

/* Decodes piece PC->index ahead into a spool of its own. */
static void decode_ahead(struct helper *hp, struct piece *pc)
{
	struct split *sp = hp->sp;
	const struct mt_blk_split *s = sp->s;

	pc->spool = mt_blk_spool_new(sp->h, sp->pool);
	pc->b = mt_blkdec_new(s->cfg, sp->size, s->window, s->piece, s->iscache, NULL);
	pc->rc = -pte_nomem;
	if (pc->spool && pc->b) {
		mt_blkdec_bind(pc->b, hp->reading.src, hp->reading.scan, hp->image,
			       mt_blk_pipe_front(pc->spool), NULL);
		pc->rc = mt_blkdec_start(pc->b, pc->index, s->cyc_off);
	}
	if (!s->cyc_off)
		chain_turn(sp, pc);
	if (!pc->rc)
		pc->rc = mt_blkdec_decode_piece(pc->b, pc->index);
}

static void *helper_main(void *arg)
{
	struct helper *hp = arg;
	struct split *sp = hp->sp;
	uint64_t ns;

	pthread_mutex_lock(&sp->lock);
	for (;;) {
		struct piece *pc;

		while (!sp->stop && sp->next < sp->npieces &&
		       sp->next > sp->delivered + sp->s->helpers)
			pthread_cond_wait(&sp->cond, &sp->lock);
		if (sp->stop || sp->next >= sp->npieces)
			break;
		pc = slot(sp, sp->next);
		*pc = (struct piece){ .index = sp->next++ };
		pthread_mutex_unlock(&sp->lock);
		decode_ahead(hp, pc);
		pthread_mutex_lock(&sp->lock);
		pc->done = true;
		pthread_cond_broadcast(&sp->cond);
	}
	ns = mt_thread_cpu_ns();
	if (ns > sp->helper_cpu_ns)
		sp->helper_cpu_ns = ns;
	sp->running--;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	return NULL;
}

/* Piece I decoded ahead, once done; NULL when no helper decodes it. */
static struct piece *wait_piece(struct split *sp, uint64_t i)
{
	struct piece *pc = slot(sp, i);

	pthread_mutex_lock(&sp->lock);
	while (sp->running && sp->next <= i)
		pthread_cond_wait(&sp->cond, &sp->lock);
	if (sp->next <= i)
		pc = NULL;
	while (pc && !pc->done)
		pthread_cond_wait(&sp->cond, &sp->lock);
	pthread_mutex_unlock(&sp->lock);
	return pc;
}

/* Piece I is done with: helpers may go on past it. */
static void delivered(struct split *sp, uint64_t i)
{
	pthread_mutex_lock(&sp->lock);
	sp->delivered = i + 1;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

static void chain_open(struct split *sp)
{
	struct chain_reading *ch = &sp->chain;
	const struct mt_blk_split *s = sp->s;

	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->turn, NULL);
	ch->next = 1;
	if (s->cyc_off)
		return;
	ch->cfg = *s->cfg;
	ch->opened = s->open(s->ctx, &ch->r) == 0;
	if (ch->opened)
		ch->t = mt_cyctime_new(&ch->cfg);
}

static void chain_close(struct split *sp)
{
	struct chain_reading *ch = &sp->chain;

	mt_cyctime_free(ch->t);
	if (ch->opened)
		sp->s->close(sp->s->ctx, &ch->r);
	pthread_mutex_destroy(&ch->lock);
	pthread_cond_destroy(&ch->turn);
}

static void helpers_start(struct split *sp, struct helper *hv)
{
	const struct mt_blk_split *s = sp->s;

	for (unsigned int k = 0; k < s->helpers; k++) {
		struct helper *hp = &hv[k];

		hp->sp = sp;
		hp->image = pt_image_alloc(NULL);
		if (!hp->image || pt_image_copy(hp->image, s->image) < 0)
			continue;
		hp->opened = s->open(s->ctx, &hp->reading) == 0;
		if (!hp->opened)
			continue;
		pthread_mutex_lock(&sp->lock);
		hp->started = !pthread_create(&hp->thread, NULL, helper_main, hp);
		sp->running += hp->started;
		pthread_mutex_unlock(&sp->lock);
	}
}

static void helpers_stop(struct split *sp, struct helper *hv)
{
	pthread_mutex_lock(&sp->lock);
	sp->stop = true;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	for (unsigned int k = 0; k < sp->s->helpers; k++) {
		struct helper *hp = &hv[k];

		if (hp->started)
			pthread_join(hp->thread, NULL);
		if (hp->opened)
			sp->s->close(sp->s->ctx, &hp->reading);
		pt_image_free(hp->image);
	}
	for (size_t i = 0; i < sp->nring; i++)
		piece_free(&sp->ring[i]);
}

/*
 * Piece I after CUR, the decoding of everything before it: from its spool
 * when it follows CUR, which it then takes over (*CUR), else decoded
 * here, going on from CUR. *IMG: the image the decoding has.
 */
static int next_piece(struct split *sp, struct mt_blkdec **cur, struct piece *pc, uint64_t i,
		      struct mt_interp *q, struct pt_image **img, struct mt_blk_stats *stats,
		      struct mt_blk_split_stats *ss)
{
	const struct mt_blk_split *s = sp->s;
	int rc;

	if (pc && !pc->rc && mt_blkdec_follows(*cur, pc->b) &&
	    mt_blk_spool_deliver(pc->spool, q, img)) {
		mt_blkdec_take_stats(*cur, stats);
		mt_blkdec_adopt(pc->b, *cur);
		mt_blkdec_free(*cur);
		*cur = pc->b;
		pc->b = NULL;
		ss->ahead++;
		return 0;
	}
	mt_blkdec_bind(*cur, s->own.src, s->own.scan, *img, sp->h, q);
	rc = mt_blkdec_decode_piece(*cur, i);
	*img = mt_blkdec_image(*cur);
	ss->redone++;
	return rc;
}

/* The pieces in order on the calling thread, the first decoded here. */
static int run(struct split *sp, struct mt_interp *q, struct mt_blk_stats *stats,
	       struct mt_blk_split_stats *ss)
{
	const struct mt_blk_split *s = sp->s;
	struct mt_blkdec *cur = mt_blkdec_new(s->cfg, sp->size, s->window, s->piece, s->iscache,
					      NULL);
	struct pt_image *img;
	int rc;

	if (!cur)
		return -pte_nomem;
	mt_blkdec_bind(cur, s->own.src, s->own.scan, NULL, sp->h, q);
	rc = mt_blkdec_start(cur, 0, s->cyc_off);
	if (!rc)
		rc = mt_blkdec_decode_piece(cur, 0);
	img = mt_blkdec_image(cur);
	for (uint64_t i = 1; !rc && i < sp->npieces && !mt_blkdec_ended(cur); i++) {
		struct piece *pc = wait_piece(sp, i);

		/* Past the piece's end already, the decoding has nothing of it. */
		if (mt_blkdec_position(cur) < (i + 1) * s->piece)
			rc = next_piece(sp, &cur, pc, i, q, &img, stats, ss);
		if (pc)
			piece_free(pc);
		delivered(sp, i);
	}
	/* Nothing bounds the last interval: its code keeps the last time. */
	mt_interp_flush(q, 0);
	mt_blkdec_take_stats(cur, stats);
	mt_blkdec_free(cur);
	return rc;
}

int mt_blk_decode_split(const struct mt_blk_split *s, const struct mt_blk_handler *h,
			struct mt_blk_stats *stats, struct mt_blk_split_stats *ss)
{
	struct split sp = { .s = s, .h = h, .size = s->own.src->size, .next = 1,
			    .nring = (size_t)s->helpers + 2 };
	struct helper *hv = calloc(s->helpers ? s->helpers : 1, sizeof(*hv));
	struct mt_interp q;
	int rc;

	*stats = (struct mt_blk_stats){ 0 };
	*ss = (struct mt_blk_split_stats){ 0 };
	sp.ring = calloc(sp.nring, sizeof(*sp.ring));
	sp.pool = mt_blk_chunks_new();
	if (!hv || !sp.ring || !sp.pool || !s->piece) {
		free(hv);
		free(sp.ring);
		mt_blk_chunks_free(sp.pool);
		return -pte_nomem;
	}
	sp.npieces = (sp.size + s->piece - 1) / s->piece;
	pthread_mutex_init(&sp.lock, NULL);
	pthread_cond_init(&sp.cond, NULL);
	mt_interp_init(&q, h);
	chain_open(&sp);
	helpers_start(&sp, hv);
	rc = run(&sp, &q, stats, ss);
	helpers_stop(&sp, hv);
	chain_close(&sp);
	mt_interp_fini(&q);
	ss->helper_cpu_ns = sp.helper_cpu_ns;
	pthread_mutex_destroy(&sp.lock);
	pthread_cond_destroy(&sp.cond);
	free(sp.ring);
	mt_blk_chunks_free(sp.pool);
	free(hv);
	return rc;
}

/* A buffer is read in place by any number of threads at once. */
static int same_buffer(void *ctx, struct mt_blk_reading *r)
{
	const struct mt_pt_buffer *buf = ctx;

	*r = (struct mt_blk_reading){ &buf->src, &buf->src, NULL };
	return 0;
}

static void nothing_to_close(void *ctx, struct mt_blk_reading *r)
{
	(void)ctx, (void)r;
}

int mt_blk_decode_split_buffer(const struct pt_config *cfg, bool cyc_off, uint64_t piece,
			       unsigned int helpers, const struct pt_image *image,
			       struct pt_image_section_cache *iscache,
			       const struct mt_blk_handler *h, struct mt_blk_stats *stats,
			       struct mt_blk_split_stats *ss)
{
	struct mt_pt_buffer buf;
	struct mt_blk_split s = { .cfg = cfg, .cyc_off = cyc_off, .window = 1, .piece = piece,
				  .helpers = helpers, .iscache = iscache, .image = image,
				  .open = same_buffer, .close = nothing_to_close, .ctx = &buf };

	mt_pt_buffer_init(&buf, cfg->begin, (size_t)(cfg->end - cfg->begin));
	s.own = (struct mt_blk_reading){ &buf.src, &buf.src, NULL };
	return mt_blk_decode_split(&s, h, stats, ss);
}
