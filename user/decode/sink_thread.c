// SPDX-License-Identifier: MIT
/*
 * The sink's calls on a thread of their own (sink_thread.h). The merge
 * hands them over in blocks, so that the two threads meet once per block
 * rather than once per event.
 */
#include "decode/sink_thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define BLOCK 512	/* calls handed over at once */
#define BLOCKS 8	/* blocks the two threads share */

enum call_kind { CALL_THREAD, CALL_EVENT, CALL_TRIGGER };

struct call {
	uint8_t kind;		/* enum call_kind */
	uint32_t pid, tid;
	uint64_t ns;
	union {
		struct mt_ev ev;
		const struct mt_bundle_trigger *trig;
	} u;
};

struct block {
	size_t n;
	struct call v[BLOCK];
};

/*
 * The full blocks are blocks[head .. head + nfull) (mod BLOCKS), the
 * first being the sink's while it takes it; the merge fills the one after
 * them, blocks[fill]. Both counts change with the lock held.
 */
struct mt_sink_thread {
	struct mt_decode_sink inner;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t ready, room;
	struct block blocks[BLOCKS];
	size_t head, nfull, fill;
	int closing;
	int rc;		/* the sink's first failure */
};

static int call_inner(const struct mt_decode_sink *s, const struct call *c)
{
	switch (c->kind) {
	case CALL_THREAD:
		return s->thread(s->ctx, c->pid, c->tid);
	case CALL_EVENT:
		return s->event(s->ctx, c->pid, c->tid, c->ns, &c->u.ev);
	default:
		return s->trigger(s->ctx, c->ns, c->u.trig);
	}
}

static void *run(void *arg)
{
	struct mt_sink_thread *st = arg;
	int rc = 0;

	pthread_mutex_lock(&st->lock);
	for (;;) {
		struct block *b;

		while (!st->nfull && !st->closing)
			pthread_cond_wait(&st->ready, &st->lock);
		if (!st->nfull)
			break;
		b = &st->blocks[st->head];
		pthread_mutex_unlock(&st->lock);
		/* After a failure the blocks are only emptied. */
		for (size_t i = 0; i < b->n && !rc; i++)
			rc = call_inner(&st->inner, &b->v[i]);
		pthread_mutex_lock(&st->lock);
		b->n = 0;
		st->head = (st->head + 1) % BLOCKS;
		st->nfull--;
		if (rc && !st->rc)
			st->rc = rc;
		pthread_cond_signal(&st->room);
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* The merge's block is full: hands it over and waits for a free one.
 * Returns the sink's failure, if it has failed. */
static int hand_over(struct mt_sink_thread *st)
{
	int rc;

	pthread_mutex_lock(&st->lock);
	st->nfull++;
	pthread_cond_signal(&st->ready);
	while (st->nfull == BLOCKS)
		pthread_cond_wait(&st->room, &st->lock);
	st->fill = (st->head + st->nfull) % BLOCKS;
	rc = st->rc;
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* Room for the next call in the merge's block. */
static struct call *next_call(struct mt_sink_thread *st)
{
	struct block *b = &st->blocks[st->fill];

	return &b->v[b->n++];
}

static int done_call(struct mt_sink_thread *st)
{
	return st->blocks[st->fill].n == BLOCK ? hand_over(st) : 0;
}

static int on_thread(void *ctx, uint32_t pid, uint32_t tid)
{
	struct mt_sink_thread *st = ctx;
	struct call *c = next_call(st);

	c->kind = CALL_THREAD;
	c->pid = pid;
	c->tid = tid;
	return done_call(st);
}

static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_sink_thread *st = ctx;
	struct call *c = next_call(st);

	c->kind = CALL_EVENT;
	c->pid = pid;
	c->tid = tid;
	c->ns = ns;
	c->u.ev = *ev;
	return done_call(st);
}

static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t)
{
	struct mt_sink_thread *st = ctx;
	struct call *c = next_call(st);

	c->kind = CALL_TRIGGER;
	c->ns = ns;
	c->u.trig = t;
	return done_call(st);
}

int mt_sink_thread_start(struct mt_sink_thread **stp, const struct mt_decode_sink *inner,
			 struct mt_decode_sink *outer)
{
	struct mt_sink_thread *st = calloc(1, sizeof(*st));
	int rc;

	if (!st)
		return -ENOMEM;
	st->inner = *inner;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->ready, NULL);
	pthread_cond_init(&st->room, NULL);
	rc = pthread_create(&st->thread, NULL, run, st);
	if (rc) {
		pthread_cond_destroy(&st->room);
		pthread_cond_destroy(&st->ready);
		pthread_mutex_destroy(&st->lock);
		free(st);
		return -rc;
	}
	*outer = (struct mt_decode_sink){ inner->thread ? on_thread : NULL, on_event,
					  inner->trigger ? on_trigger : NULL, st,
					  inner->late_inferred };
	*stp = st;
	return 0;
}

int mt_sink_thread_stop(struct mt_sink_thread *st)
{
	int rc;

	pthread_mutex_lock(&st->lock);
	if (st->blocks[st->fill].n)
		st->nfull++;
	st->closing = 1;
	pthread_cond_signal(&st->ready);
	pthread_mutex_unlock(&st->lock);
	pthread_join(st->thread, NULL);
	rc = st->rc;
	pthread_cond_destroy(&st->room);
	pthread_cond_destroy(&st->ready);
	pthread_mutex_destroy(&st->lock);
	free(st);
	return rc;
}
