// SPDX-License-Identifier: MIT
/* The byte log of decoded control flow; see oplog.h. */
#include "decode/oplog.h"

#include "util/mt_array.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << MT_OPLOG_CHUNK_SHIFT)
/* Header, two 64-bit varints and a 32-bit one. */
#define MAX_OP_BYTES (1 + 10 + 10 + 5)

size_t mt_oplog_restart(struct mt_oplog *l)
{
	l->tsc = l->ip = 0;
	mt_oplog_rets_reset(&l->rets);
	return l->len;
}

static uint8_t *put_varint(uint8_t *b, uint64_t v)
{
	while (v >= 0x80) {
		*b++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*b++ = (uint8_t)v;
	return b;
}

static uint64_t zigzag(uint64_t delta)
{
	return delta << 1 ^ -(delta >> 63);
}

/* A bigger chunk directory; the old one stays valid for readers that
 * still hold it (they get the new one with the next segments). */
static int grow_directory(struct mt_oplog *l)
{
	size_t cap = l->chunkcap ? l->chunkcap * 2 : 16;
	uint8_t **v = malloc(cap * sizeof(*v));

	if (!v || MT_ARRAY_RESERVE(l->retired, l->retired_cap, l->nretired, 1)) {
		free(v);
		return -1;
	}
	if (l->lock)
		pthread_mutex_lock(l->lock);
	if (l->nchunks)
		memcpy(v, l->chunks, l->nchunks * sizeof(*v));
	if (l->chunks)
		l->retired[l->nretired++] = l->chunks;
	l->chunks = v;
	l->chunkcap = cap;
	if (l->lock)
		pthread_mutex_unlock(l->lock);
	return 0;
}

size_t mt_oplog_release(struct mt_oplog *l, size_t pos)
{
	size_t upto = pos >> MT_OPLOG_CHUNK_SHIFT, n = 0;

	/* POS is in a chunk the writer has reached: no read of nchunks. */
	for (; l->freed < upto; l->freed++, n += CHUNK) {
		free(l->chunks[l->freed]);
		l->chunks[l->freed] = NULL;
	}
	return n;
}

/* Room for one more op: a new chunk when the current one is too full (its
 * rest is skipped by a MT_OPLOG_NEXT byte). */
static int reserve(struct mt_oplog *l)
{
	size_t chunk = l->len >> MT_OPLOG_CHUNK_SHIFT, off = l->len & (CHUNK - 1);
	uint8_t *c;

	if (chunk < l->nchunks && CHUNK - off >= MAX_OP_BYTES)
		return 0;
	if (l->nchunks == l->chunkcap && grow_directory(l))
		return -1;
	c = malloc(CHUNK);
	if (!c)
		return -1;
	if (chunk < l->nchunks)
		l->chunks[chunk][off] = MT_OPLOG_NEXT;
	l->chunks[l->nchunks] = c;
	l->len = l->nchunks++ << MT_OPLOG_CHUNK_SHIFT;
	return 0;
}

int mt_oplog_put(struct mt_oplog *l, const struct mt_op *op)
{
	uint64_t expect = op->kind == MT_OP_BLOCK ? mt_oplog_rets_expect(&l->rets) : 0;
	uint8_t *b, *h;

	if (reserve(l)) {
		l->oom = 1;
		return -1;
	}
	h = b = l->chunks[l->len >> MT_OPLOG_CHUNK_SHIFT] + (l->len & (CHUNK - 1));
	*b++ = (uint8_t)(op->kind | op->x << MT_OPLOG_X_SHIFT | (op->ret ? MT_OPLOG_RET : 0) |
			 (op->tsc != l->tsc ? MT_OPLOG_TSC : 0) |
			 (expect && expect == op->a ? MT_OPLOG_AT_RET : 0));
	if (*h & MT_OPLOG_TSC)
		b = put_varint(b, zigzag(op->tsc - l->tsc));
	l->tsc = op->tsc;
	if (op->kind == MT_OP_BLOCK) {
		if (!(*h & MT_OPLOG_AT_RET))
			b = put_varint(b, zigzag(op->a - l->ip));
		l->ip = op->a;
	} else {
		b = put_varint(b, op->a);
	}
	if (op->ret)
		b = put_varint(b, op->ret);
	mt_oplog_rets_note(&l->rets, op);
	l->len += (size_t)(b - h);
	return 0;
}

void mt_oplog_free(struct mt_oplog *l)
{
	for (size_t i = l->freed; i < l->nchunks; i++)
		free(l->chunks[i]);
	free(l->chunks);
	for (size_t i = 0; i < l->nretired; i++)
		free(l->retired[i]);
	free(l->retired);
	*l = (struct mt_oplog){ 0 };
}
