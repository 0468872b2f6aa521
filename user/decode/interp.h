/* SPDX-License-Identifier: MIT */
/*
 * Times between timing packets. libipt gives every block the time of the
 * latest timing packet it has read, so all the blocks up to the next one
 * share a timestamp and the calls among them look zero-length. This queue
 * holds the control flow reported with one time value and, when the next
 * value arrives, hands it on with times spread over the interval in
 * proportion to the instructions executed before each item. Every time
 * stays within [value, next value], the bounds the packets prove: a value
 * is read just before the branch packets that follow it, so the blocks
 * reported with it ran from it to the next one.
 *
 * An interval that holds trace-off time (a disable or a gap) is not
 * spread: how much of it the code ran is unknown, and the context-switch
 * attribution of a stretch relies on its end (the disable) being a lower
 * bound. Nor is the last one, which no later value bounds, or one cut by
 * an enable before the next timing packet. Unspread items keep the time
 * they were reported with.
 *
 * With CYC packets the values are exact and change at the blocks right
 * after a packet (blkdec.c), and the spread is over the blocks between.
 */
#ifndef MTRACE_DECODE_INTERP_H
#define MTRACE_DECODE_INTERP_H

#include "decode/blkdec.h"
#include "decode/oplog.h"

#include <stddef.h>
#include <stdint.h>

struct mt_interp_item {
	uint64_t a;		/* BLOCK: ip; XFER: return address; DISABLE: at; GAP: reason */
	uint64_t insns;		/* BLOCK: its instructions */
	uint64_t tsc;		/* as reported (an event's own time may be earlier) */
	uint64_t ret;		/* BLOCK with a transfer: its return address */
	uint8_t kind;		/* enum mt_op_kind */
	uint8_t x;		/* XFER, BLOCK with a transfer: the transfer */
	uint8_t has_x;		/* BLOCK: the transfer that ended it came too */
};

struct mt_interp {
	const struct mt_blk_handler *h;	/* where the items go, enable excepted */
	struct mt_blk_pipe *fwd;	/* h's pipe: every call goes there instead */
	struct mt_interp_item *v;
	size_t n, cap;
	uint64_t base;		/* the queued items' time */
	uint64_t insns;		/* instructions queued */
	size_t offs;		/* disables and gaps queued */
	/* The last item queued is a block still open to the transfer that
	 * ends it: the transfer goes into the block's item (half the items
	 * to queue and spread; handed on in the same order). */
	int open_block;
};

/* A queue into H, or into H's pipe when it has one: the queue on the
 * pipe's other side then does the spreading. */
void mt_interp_init(struct mt_interp *q, const struct mt_blk_handler *h);
void mt_interp_fini(struct mt_interp *q);

/* Control flow at time TSC (the decoder's current time). When TSC differs
 * from the queued items' time, they are handed on first, spread up to TSC. */
void mt_interp_block(struct mt_interp *q, uint64_t tsc, uint64_t ip, uint64_t insns);

/* Stores an item of KIND at time TSC into IT, the queue's next. */
static inline void mt_interp_fill(struct mt_interp *q, struct mt_interp_item *it, uint64_t tsc,
				  uint8_t kind, uint64_t a, uint64_t insns, uint8_t x)
{
	it->a = a;
	it->insns = insns;
	it->tsc = tsc;
	it->kind = kind;
	it->x = x;
	it->has_x = 0;
	q->insns += insns;
	if (kind == MT_OP_DISABLE || kind == MT_OP_GAP)
		q->offs++;
	q->open_block = kind == MT_OP_BLOCK;
}

/* The transfer X (RET_ADDR as for it) goes into the open block's item. */
static inline void mt_interp_close_block(struct mt_interp *q, enum mt_xfer x, uint64_t ret_addr)
{
	struct mt_interp_item *last = &q->v[q->n - 1];

	last->x = (uint8_t)x;
	last->ret = ret_addr;
	last->has_x = 1;
	q->open_block = 0;
}

/* mt_interp_block_ending() for the cases it leaves: a pipe, a new time,
 * an empty or full queue. */
void mt_interp_block_ending_slow(struct mt_interp *q, uint64_t tsc, uint64_t ip, uint64_t insns,
				 enum mt_xfer x, uint64_t ret_addr);

/* A block and the transfer X that ended it (RET_ADDR as for the transfer):
 * mt_interp_block() and mt_interp_transfer() in one call. Inline, for
 * nearly every block: one with the queued items' time is queued here. */
static inline void mt_interp_block_ending(struct mt_interp *q, uint64_t tsc, uint64_t ip,
					  uint64_t insns, enum mt_xfer x, uint64_t ret_addr)
{
	if (q->fwd || tsc > q->base || !q->n || q->n == q->cap) {
		mt_interp_block_ending_slow(q, tsc, ip, insns, x, ret_addr);
		return;
	}
	mt_interp_fill(q, &q->v[q->n++], tsc, MT_OP_BLOCK, ip, insns, 0);
	mt_interp_close_block(q, x, ret_addr);
}

void mt_interp_transfer(struct mt_interp *q, enum mt_xfer x, uint64_t ret_addr);
void mt_interp_disable(struct mt_interp *q, uint64_t tsc, uint64_t at);
void mt_interp_gap(struct mt_interp *q, uint64_t tsc, uint32_t reason);
/* Hands on everything queued; END is the next time value (an enable's),
 * or 0 at the end of the stream. */
void mt_interp_flush(struct mt_interp *q, uint64_t end);

#endif
