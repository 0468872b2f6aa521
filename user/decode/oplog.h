/* SPDX-License-Identifier: MIT */
/*
 * A CPU stream's decoded control flow as a byte log of variable-length ops.
 * A stream's log is held until the replay has passed it (a following
 * replay frees it behind itself, mt_oplog_release()), and reading it
 * back is most of the replay's time. An op takes about 3 bytes on typical
 * code instead of the 24 of struct mt_op: the time and the block address
 * are deltas from the previous op of the same segment, a return's target
 * is mostly not written (see struct mt_oplog_rets), and every number is a
 * varint.
 * A segment's first op is written in full, so replay can start at any
 * segment. The log grows by fixed-size chunks: no copy, no slack. A
 * reader may follow it while it grows: a chunk directory, once replaced by
 * a bigger one, stays valid until the log is freed, and the chunks behind
 * the reader can be freed as it goes (mt_oplog_release()).
 */
#ifndef MTRACE_DECODE_OPLOG_H
#define MTRACE_DECODE_OPLOG_H

#include "decode/callstack.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* One step of decoded control flow, as the call-stack rebuild takes it. */
enum mt_op_kind { MT_OP_BLOCK, MT_OP_XFER, MT_OP_DISABLE, MT_OP_GAP };

struct mt_op {
	uint64_t tsc;
	uint64_t a;	/* BLOCK: ip; XFER: return address; DISABLE: at; GAP: reason */
	uint32_t ret;	/* BLOCK: return address of a call ending it, minus ip (0: none) */
	uint8_t kind;	/* enum mt_op_kind */
	uint8_t x;	/* BLOCK: the transfer ending the block; XFER: a transfer
			 * with no block before it */
};

/* 256 KiB: a stream holds its window ahead of the replay plus up to a
 * chunk at either end, so 1 MiB chunks added up to 3 MiB a stream to the
 * peak, reached or not depending on how the streams and replay met. */
#define MT_OPLOG_CHUNK_SHIFT 18
#define MT_OPLOG_RETS 64	/* return addresses remembered (a power of 2) */

/*
 * The return addresses of the segment's latest calls, which writer and
 * reader keep alike: a block reached by a return usually starts at the
 * newest one, and then its address is not written.
 */
struct mt_oplog_rets {
	uint64_t addr[MT_OPLOG_RETS];	/* a ring: the oldest are dropped */
	unsigned int top, n;
	uint8_t x;		/* the transfer ending the previous op */
};

/* Positions are byte offsets: chunk index << MT_OPLOG_CHUNK_SHIFT | offset. */
struct mt_oplog {
	uint8_t **chunks;
	size_t nchunks, chunkcap;
	uint8_t ***retired;	/* directories replaced by bigger ones */
	size_t nretired, retired_cap;
	pthread_mutex_t *lock;	/* held to replace the directory; may be NULL */
	size_t freed;		/* chunks below this one are freed */
	size_t len;		/* position of the next op */
	uint64_t tsc, ip;	/* the previous op's, in the open segment */
	struct mt_oplog_rets rets;
	int oom;
};

/* Starts a segment at the log's end and returns its position. */
size_t mt_oplog_restart(struct mt_oplog *l);
/* Appends OP; -1 (and l->oom set) when out of memory. */
int mt_oplog_put(struct mt_oplog *l, const struct mt_op *op);
void mt_oplog_free(struct mt_oplog *l);
/* Frees the chunks wholly before POS (with the lock held, if any); bytes
 * must not be read there again. Returns the bytes freed. */
size_t mt_oplog_release(struct mt_oplog *l, size_t pos);

/* A read position, with the delta state of the segment being read. */
struct mt_oplog_cursor {
	size_t pos;
	uint64_t tsc, ip;
	struct mt_oplog_rets rets;
};

/* Header byte: kind, transfer, and which fields follow. */
#define MT_OPLOG_KIND 0x03u
#define MT_OPLOG_X_SHIFT 2
#define MT_OPLOG_X 0x1cu
#define MT_OPLOG_RET 0x20u	/* a return offset follows */
#define MT_OPLOG_TSC 0x40u	/* a time delta follows (else: unchanged) */
#define MT_OPLOG_AT_RET 0x80u	/* BLOCK: at the expected return address */
#define MT_OPLOG_NEXT 0xffu	/* not an op: the log goes on in the next chunk */

static inline void mt_oplog_rets_reset(struct mt_oplog_rets *r)
{
	r->top = r->n = 0;
	r->x = MT_XFER_NONE;
}

/* Before a BLOCK op: the address a return to it would reach (taken off
 * the ring), 0 when it was not reached by a return or none is known. */
static inline uint64_t mt_oplog_rets_expect(struct mt_oplog_rets *r)
{
	if ((r->x != MT_XFER_RET && r->x != MT_XFER_FAR_RET) || !r->n)
		return 0;
	r->n--;
	r->top = (r->top - 1) & (MT_OPLOG_RETS - 1);
	return r->addr[r->top];
}

/* After OP: the return address of the call that ends it, if any. */
static inline void mt_oplog_rets_note(struct mt_oplog_rets *r, const struct mt_op *op)
{
	uint64_t ret = op->kind == MT_OP_XFER ? op->a : op->ret ? op->a + op->ret : 0;

	r->x = op->kind == MT_OP_BLOCK || op->kind == MT_OP_XFER ? op->x : MT_XFER_NONE;
	if (!ret || (r->x != MT_XFER_CALL && r->x != MT_XFER_FAR_CALL))
		return;
	r->addr[r->top] = ret;
	r->top = (r->top + 1) & (MT_OPLOG_RETS - 1);
	if (r->n < MT_OPLOG_RETS)
		r->n++;
}

/* Positions the cursor at the start of the segment at POS. */
static inline void mt_oplog_seek(struct mt_oplog_cursor *c, size_t pos)
{
	c->pos = pos;
	c->tsc = c->ip = 0;
	mt_oplog_rets_reset(&c->rets);
}

/* Most numbers take one or two bytes: those without the loop. */
static inline uint64_t mt_oplog_varint(const uint8_t **b)
{
	const uint8_t *p = *b;
	uint64_t v = p[0];
	unsigned int shift = 14;
	uint8_t byte;

	if (!(v & 0x80)) {
		*b = p + 1;
		return v;
	}
	v = (v & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7;
	if (!(p[1] & 0x80)) {
		*b = p + 2;
		return v;
	}
	p += 2;
	do {
		byte = *p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	*b = p;
	return v;
}

static inline uint64_t mt_oplog_unzigzag(uint64_t v)
{
	return (v >> 1) ^ -(v & 1);
}

/* Reads the op at the cursor and moves past it. */
static inline void mt_oplog_get(const struct mt_oplog *l, struct mt_oplog_cursor *c,
				struct mt_op *op)
{
	const size_t mask = ((size_t)1 << MT_OPLOG_CHUNK_SHIFT) - 1;
	const uint8_t *chunk = l->chunks[c->pos >> MT_OPLOG_CHUNK_SHIFT];
	const uint8_t *b = chunk + (c->pos & mask);
	uint8_t h = *b++;

	if (h == MT_OPLOG_NEXT) {
		c->pos = (c->pos | mask) + 1;
		chunk = l->chunks[c->pos >> MT_OPLOG_CHUNK_SHIFT];
		b = chunk;
		h = *b++;
	}
	op->kind = h & MT_OPLOG_KIND;
	op->x = (h & MT_OPLOG_X) >> MT_OPLOG_X_SHIFT;
	if (h & MT_OPLOG_TSC)
		c->tsc += mt_oplog_unzigzag(mt_oplog_varint(&b));
	op->tsc = c->tsc;
	if (op->kind == MT_OP_BLOCK) {
		uint64_t expect = mt_oplog_rets_expect(&c->rets);

		c->ip = h & MT_OPLOG_AT_RET ? expect
					    : c->ip + mt_oplog_unzigzag(mt_oplog_varint(&b));
		op->a = c->ip;
	} else {
		op->a = mt_oplog_varint(&b);
	}
	op->ret = h & MT_OPLOG_RET ? (uint32_t)mt_oplog_varint(&b) : 0;
	mt_oplog_rets_note(&c->rets, op);
	c->pos = (c->pos & ~mask) + (size_t)(b - chunk);
}

#endif
