// SPDX-License-Identifier: MIT
/* One CPU stream decoded on two threads; see blkpipe.h. */
#include "decode/blkpipe.h"

#include "decode/interp.h"
#include "util/mt_array.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* Calls go over in chunks, a lock and a wake-up per chunk: with 1,024
 * items (a futex call per 20 KB of PT) two stages were slower than one
 * on a 16 MiB walk, with two chunks in flight 7 to 14 % slower than with
 * four (docs/benchmarks.md). */
#define CHUNK_ITEMS 16384
#define CHUNKS 4

enum item_kind {
	IT_BLOCK,	 /* v0 tsc, v1 ip, v2 insns */
	IT_BLOCK_ENDING, /* v0 tsc, v1 ip, v2 return address, w insns, x */
	IT_XFER,	 /* v2 return address, x */
	IT_DISABLE,	 /* v0 tsc, v1 at */
	IT_GAP,		 /* v0 tsc, v1 reason */
	IT_FLUSH,	 /* v0 end */
	IT_ENABLE,	 /* v0 tsc, v1 ip, x: the decoding waits for the
			  * answer; the next item holds the bounds */
	IT_BOUNDS,	 /* v0 floor, v1 ceil, v2 end */
	IT_PROGRESS,	 /* v1 offset */
};

struct item {
	uint64_t v[3];
	uint32_t w;
	uint8_t kind, x;
};

struct chunk {
	struct item it[CHUNK_ITEMS];
	size_t n;
} __attribute__((aligned(64)));

struct mt_blk_pipe {
	struct mt_blk_handler front;
	const struct mt_blk_handler *target;
	unsigned int images;
	pthread_mutex_t lock;
	pthread_cond_t ready;	/* a chunk was posted, or the pipe closed */
	pthread_cond_t room;	/* a chunk was emptied, or an enable answered */
	/* Under lock: chunks [head, tail) are posted, the second thread's;
	 * the first fills chunk tail (modulo CHUNKS) while tail - head <
	 * CHUNKS. */
	size_t head, tail;
	bool closed;
	uint64_t answered;	/* enables answered */
	struct pt_image *answer;
	/* The first thread's own, on a cache line of their own. */
	struct chunk *cur __attribute__((aligned(64)));
	uint64_t asked;		/* enables waiting for their answer */
	bool have_image;	/* an answer gave an image */
	/* A pipe: a ring of CHUNKS. A spool: every chunk filled, in order. */
	struct chunk **chunks;
	size_t nchunks, chunks_cap;
	bool spool;
	bool oom;		/* a spool lost calls: out of memory */
	struct mt_blk_chunks *pool;	/* a spool's chunks come from there */
};

/* Chunks emptied, for spools to fill again: a fresh chunk is page faults
 * for its whole size (a spool fills some 5 MB a piece). */
struct mt_blk_chunks {
	pthread_mutex_t lock;
	struct chunk **free;
	size_t n, cap;
};

/* A chunk from POOL's (NULL: none), or a new one. */
static struct chunk *new_chunk(struct mt_blk_chunks *pool)
{
	struct chunk *c = NULL;

	if (pool) {
		pthread_mutex_lock(&pool->lock);
		if (pool->n)
			c = pool->free[--pool->n];
		pthread_mutex_unlock(&pool->lock);
	}
	if (!c)
		c = aligned_alloc(64, sizeof(*c));
	if (c)
		c->n = 0;
	return c;
}

struct mt_blk_chunks *mt_blk_chunks_new(void)
{
	struct mt_blk_chunks *pool = calloc(1, sizeof(*pool));

	if (pool)
		pthread_mutex_init(&pool->lock, NULL);
	return pool;
}

void mt_blk_chunks_free(struct mt_blk_chunks *pool)
{
	if (!pool)
		return;
	while (pool->n)
		free(pool->free[--pool->n]);
	free(pool->free);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
}

/* Gives chunk C back to POOL (frees it when POOL is NULL or full). */
static void drop_chunk(struct mt_blk_chunks *pool, struct chunk *c)
{
	if (pool) {
		pthread_mutex_lock(&pool->lock);
		if (!MT_ARRAY_RESERVE(pool->free, pool->cap, pool->n, 1)) {
			pool->free[pool->n++] = c;
			c = NULL;
		}
		pthread_mutex_unlock(&pool->lock);
	}
	free(c);
}

/* A spool keeps the chunk and starts another (the same again when out of
 * memory: the spool is then of no use, mt_blk_spool_deliver()). */
static void spool_more(struct mt_blk_pipe *p)
{
	struct chunk *c = NULL;

	if (!MT_ARRAY_RESERVE(p->chunks, p->chunks_cap, p->nchunks, 1))
		c = new_chunk(p->pool);
	if (!c) {
		p->oom = true;
		p->cur->n = 0;
		return;
	}
	p->chunks[p->nchunks++] = c;
	p->cur = c;
}

/* Hands the chunk being filled to the second thread; waits for room for
 * the next one. */
static void post(struct mt_blk_pipe *p)
{
	if (p->spool) {
		spool_more(p);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->tail++;
	pthread_cond_signal(&p->ready);
	while (p->tail - p->head == CHUNKS)
		pthread_cond_wait(&p->room, &p->lock);
	pthread_mutex_unlock(&p->lock);
	p->cur = p->chunks[p->tail % CHUNKS];
	p->cur->n = 0;
}

static void put(struct mt_blk_pipe *p, uint8_t kind, uint64_t v0, uint64_t v1, uint64_t v2,
		uint32_t w, uint8_t x)
{
	struct item *it;

	if (p->cur->n == CHUNK_ITEMS)
		post(p);
	it = &p->cur->it[p->cur->n++];
	/* The lines ahead were last the other thread's: ask for them early. */
	__builtin_prefetch(it + 16, 1);
	it->v[0] = v0;
	it->v[1] = v1;
	it->v[2] = v2;
	it->w = w;
	it->kind = kind;
	it->x = x;
}

void mt_blk_pipe_block(struct mt_blk_pipe *p, uint64_t tsc, uint64_t ip, uint64_t insns)
{
	put(p, IT_BLOCK, tsc, ip, insns, 0, 0);
}

/* mt_interp_block_ending() is mt_interp_block() and mt_interp_transfer():
 * a block too long for the item goes as the two. */
void mt_blk_pipe_block_ending(struct mt_blk_pipe *p, uint64_t tsc, uint64_t ip, uint64_t insns,
			      enum mt_xfer x, uint64_t ret_addr)
{
	if (insns > UINT32_MAX) {
		mt_blk_pipe_block(p, tsc, ip, insns);
		mt_blk_pipe_transfer(p, x, ret_addr);
		return;
	}
	put(p, IT_BLOCK_ENDING, tsc, ip, ret_addr, (uint32_t)insns, (uint8_t)x);
}

void mt_blk_pipe_transfer(struct mt_blk_pipe *p, enum mt_xfer x, uint64_t ret_addr)
{
	put(p, IT_XFER, 0, 0, ret_addr, 0, (uint8_t)x);
}

void mt_blk_pipe_disable(struct mt_blk_pipe *p, uint64_t tsc, uint64_t at)
{
	put(p, IT_DISABLE, tsc, at, 0, 0, 0);
}

void mt_blk_pipe_gap(struct mt_blk_pipe *p, uint64_t tsc, uint32_t reason)
{
	put(p, IT_GAP, tsc, reason, 0, 0, 0);
}

void mt_blk_pipe_flush(struct mt_blk_pipe *p, uint64_t end)
{
	put(p, IT_FLUSH, end, 0, 0, 0, 0);
}

static struct pt_image *f_enable(void *ctx, uint64_t tsc, uint64_t ip,
				 const struct mt_tsc_bounds *b)
{
	struct mt_blk_pipe *p = ctx;
	bool ask = !p->spool && (p->images > 1 || (p->images && !p->have_image));
	struct pt_image *img;

	/* The enable and its bounds go in one chunk. */
	if (p->cur->n > CHUNK_ITEMS - 2)
		post(p);
	put(p, IT_ENABLE, tsc, ip, 0, 0, ask);
	put(p, IT_BOUNDS, b->floor, b->ceil, b->end, 0, 0);
	if (!ask)
		return NULL;
	p->asked++;
	post(p);
	pthread_mutex_lock(&p->lock);
	while (p->answered != p->asked)
		pthread_cond_wait(&p->room, &p->lock);
	img = p->answer;
	pthread_mutex_unlock(&p->lock);
	p->have_image |= img != NULL;
	return img;
}

static void f_progress(void *ctx, uint64_t off)
{
	put(ctx, IT_PROGRESS, 0, off, 0, 0, 0);
}

/* A pipe with its first chunk; CHUNKS more for a ring. */
static struct mt_blk_pipe *pipe_new(const struct mt_blk_handler *target, unsigned int images,
				    bool spool, struct mt_blk_chunks *pool)
{
	struct mt_blk_pipe *p = aligned_alloc(64, sizeof(*p));
	size_t n = spool ? 1 : CHUNKS;

	if (!p)
		return NULL;
	p->spool = spool;
	p->pool = pool;
	p->oom = false;
	p->chunks = calloc(n, sizeof(*p->chunks));
	p->chunks_cap = p->chunks ? n : 0;
	for (p->nchunks = 0; p->nchunks < p->chunks_cap; p->nchunks++)
		if (!(p->chunks[p->nchunks] = new_chunk(pool)))
			break;
	if (p->nchunks < n) {
		while (p->nchunks)
			drop_chunk(pool, p->chunks[--p->nchunks]);
		free(p->chunks);
		free(p);
		return NULL;
	}
	p->front = (struct mt_blk_handler){ .enable = f_enable,
					    .progress = target->progress ? f_progress : NULL,
					    .stop = target->stop,
					    .ctx = p,
					    .pipe = p };
	p->target = target;
	p->images = images;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->room, NULL);
	p->head = p->tail = 0;
	p->closed = false;
	p->answered = p->asked = 0;
	p->answer = NULL;
	p->have_image = false;
	p->cur = p->chunks[0];
	return p;
}

struct mt_blk_pipe *mt_blk_pipe_new(const struct mt_blk_handler *target, unsigned int images)
{
	return pipe_new(target, images, false, NULL);
}

struct mt_blk_pipe *mt_blk_spool_new(const struct mt_blk_handler *target,
				     struct mt_blk_chunks *pool)
{
	return pipe_new(target, 0, true, pool);
}

void mt_blk_pipe_free(struct mt_blk_pipe *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nchunks; i++)
		drop_chunk(p->pool, p->chunks[i]);
	free(p->chunks);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->room);
	free(p);
}

const struct mt_blk_handler *mt_blk_pipe_front(struct mt_blk_pipe *p)
{
	return &p->front;
}

void mt_blk_pipe_close(struct mt_blk_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->cur->n)
		p->tail++;
	p->closed = true;
	pthread_cond_signal(&p->ready);
	pthread_mutex_unlock(&p->lock);
}

/* Hands the decoding the answer to an enable it waits for. */
static void answer(struct mt_blk_pipe *p, struct pt_image *img)
{
	pthread_mutex_lock(&p->lock);
	p->answer = img;
	p->answered++;
	pthread_cond_signal(&p->room);
	pthread_mutex_unlock(&p->lock);
}

/* Makes chunk C's calls on Q, and the enables and progress on the target. */
static void deliver(struct mt_blk_pipe *p, struct mt_interp *q, const struct chunk *c)
{
	const struct mt_blk_handler *h = p->target;

	for (size_t i = 0; i < c->n; i++) {
		const struct item *it = &c->it[i];

		switch (it->kind) {
		case IT_BLOCK:
			mt_interp_block(q, it->v[0], it->v[1], it->v[2]);
			break;
		case IT_BLOCK_ENDING:
			mt_interp_block_ending(q, it->v[0], it->v[1], it->w, (enum mt_xfer)it->x,
					       it->v[2]);
			break;
		case IT_XFER:
			mt_interp_transfer(q, (enum mt_xfer)it->x, it->v[2]);
			break;
		case IT_DISABLE:
			mt_interp_disable(q, it->v[0], it->v[1]);
			break;
		case IT_GAP:
			mt_interp_gap(q, it->v[0], (uint32_t)it->v[1]);
			break;
		case IT_FLUSH:
			mt_interp_flush(q, it->v[0]);
			break;
		case IT_ENABLE: {
			/* Its bounds are the next item (f_enable()). */
			const struct item *b = &it[1];
			const struct mt_tsc_bounds bounds = { b->v[0], b->v[1], b->v[2] };
			struct pt_image *img = h->enable(h->ctx, it->v[0], it->v[1], &bounds);

			i++;
			if (it->x)
				answer(p, img);
			else if (img)
				p->answer = img;
			break;
		}
		case IT_PROGRESS:
			h->progress(h->ctx, it->v[1]);
			break;
		default:
			break;
		}
	}
}

void mt_blk_pipe_run(struct mt_blk_pipe *p)
{
	struct mt_interp q;

	mt_interp_init(&q, p->target);
	for (;;) {
		const struct chunk *c;

		pthread_mutex_lock(&p->lock);
		while (p->head == p->tail && !p->closed)
			pthread_cond_wait(&p->ready, &p->lock);
		if (p->head == p->tail) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		c = p->chunks[p->head % CHUNKS];
		pthread_mutex_unlock(&p->lock);
		deliver(p, &q, c);
		pthread_mutex_lock(&p->lock);
		p->head++;
		pthread_cond_signal(&p->room);
		pthread_mutex_unlock(&p->lock);
	}
	mt_interp_fini(&q);
}

bool mt_blk_spool_deliver(struct mt_blk_pipe *p, struct mt_interp *q, struct pt_image **image)
{
	if (p->oom)
		return false;
	p->answer = *image;
	for (size_t i = 0; i < p->nchunks; i++)
		deliver(p, q, p->chunks[i]);
	*image = p->answer;
	return true;
}
