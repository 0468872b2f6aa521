// SPDX-License-Identifier: MIT
/* Spreading the time between timing packets over the code; see interp.h. */
#include "decode/interp.h"

#include "decode/blkpipe.h"
#include "decode/oplog.h"
#include "decode/udiv.h"
#include "util/mt_array.h"

#include <stdlib.h>

void mt_interp_init(struct mt_interp *q, const struct mt_blk_handler *h)
{
	*q = (struct mt_interp){ .h = h, .fwd = h->pipe };
}

void mt_interp_fini(struct mt_interp *q)
{
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}

static void hand_on(const struct mt_interp *q, const struct mt_interp_item *it, uint64_t t)
{
	const struct mt_blk_handler *h = q->h;

	switch (it->kind) {
	case MT_OP_BLOCK:
		h->block(h->ctx, t, it->a, it->has_x ? it->x : MT_BLK_NO_XFER, it->ret);
		break;
	case MT_OP_XFER:
		h->transfer(h->ctx, (enum mt_xfer)it->x, it->a);
		break;
	case MT_OP_DISABLE:
		h->disable(h->ctx, t, it->a);
		break;
	case MT_OP_GAP:
		h->gap(h->ctx, t, (uint32_t)it->a);
		break;
	}
}

/* Hands on the queue spread over [FROM, TO] (nothing spread when TO <= FROM).
 * The time of an item is FROM + SPAN * DONE / INSNS: with a multiply by
 * the divisor's inverse (udiv.h) when the product cannot overflow (nearly
 * always; a hardware division per block took tens of cycles), in 128
 * bits otherwise, the same quotient either way. */
static void spread(struct mt_interp *q, uint64_t from, uint64_t to)
{
	uint64_t span = to > from && !q->offs && q->insns ? to - from : 0, done = 0;
	int narrow = span && span <= UINT64_MAX / q->insns;
	struct mt_udiv per_insn;

	if (narrow)
		mt_udiv_init(&per_insn, q->insns);
	q->open_block = 0;
	for (size_t i = 0; i < q->n; i++) {
		const struct mt_interp_item *it = &q->v[i];
		uint64_t t = it->tsc;

		if (narrow)
			t = from + mt_udiv(&per_insn, span * done);
		else if (span)
			t = from + (uint64_t)(((unsigned __int128)span * done) / q->insns);
		hand_on(q, it, t);
		done += it->insns;
	}
	q->n = 0;
	q->insns = 0;
	q->offs = 0;
}

void mt_interp_flush(struct mt_interp *q, uint64_t end)
{
	if (q->fwd) {
		mt_blk_pipe_flush(q->fwd, end);
		return;
	}
	spread(q, q->base, end);
	if (end > q->base)
		q->base = end;
}

/*
 * Queues an item of KIND at time TSC; the queue moves on first when TSC is
 * a new time. The fields are stored straight into the queue: a copy of an
 * item just built on the stack stalled on store forwarding (the copy's
 * wide loads cannot take the narrower stores just made). Inline: it runs
 * for every block.
 */
static inline __attribute__((always_inline)) void put(struct mt_interp *q, uint64_t tsc,
						      uint8_t kind, uint64_t a,
						      uint64_t insns, uint8_t x)
{
	if (tsc > q->base || !q->n)
		mt_interp_flush(q, tsc);
	q->open_block = 0;
	if (MT_ARRAY_RESERVE(q->v, q->cap, q->n, 1)) {
		const struct mt_interp_item one = { .a = a, .insns = insns, .tsc = tsc, .kind = kind,
						    .x = x };

		/* Unspread but never lost: everything goes out now. */
		spread(q, q->base, q->base);
		hand_on(q, &one, tsc);
		return;
	}
	mt_interp_fill(q, &q->v[q->n++], tsc, kind, a, insns, x);
}

/* The transfer X goes into the open block's item, or into one of its
 * own. Inline: it ends nearly every block. */
static inline __attribute__((always_inline)) void queue_transfer(struct mt_interp *q,
								 enum mt_xfer x, uint64_t ret_addr)
{
	if (q->open_block) {
		mt_interp_close_block(q, x, ret_addr);
		return;
	}
	put(q, q->base, MT_OP_XFER, ret_addr, 0, (uint8_t)x);
}

void mt_interp_block(struct mt_interp *q, uint64_t tsc, uint64_t ip, uint64_t insns)
{
	if (q->fwd)
		mt_blk_pipe_block(q->fwd, tsc, ip, insns);
	else
		put(q, tsc, MT_OP_BLOCK, ip, insns, 0);
}

void mt_interp_block_ending_slow(struct mt_interp *q, uint64_t tsc, uint64_t ip,
				 uint64_t insns, enum mt_xfer x, uint64_t ret_addr)
{
	if (q->fwd) {
		mt_blk_pipe_block_ending(q->fwd, tsc, ip, insns, x, ret_addr);
		return;
	}
	put(q, tsc, MT_OP_BLOCK, ip, insns, 0);
	queue_transfer(q, x, ret_addr);
}

void mt_interp_transfer(struct mt_interp *q, enum mt_xfer x, uint64_t ret_addr)
{
	if (q->fwd)
		mt_blk_pipe_transfer(q->fwd, x, ret_addr);
	else
		queue_transfer(q, x, ret_addr);
}

void mt_interp_disable(struct mt_interp *q, uint64_t tsc, uint64_t at)
{
	if (q->fwd)
		mt_blk_pipe_disable(q->fwd, tsc, at);
	else
		put(q, tsc, MT_OP_DISABLE, at, 0, 0);
}

void mt_interp_gap(struct mt_interp *q, uint64_t tsc, uint32_t reason)
{
	if (q->fwd)
		mt_blk_pipe_gap(q->fwd, tsc, reason);
	else
		put(q, tsc, MT_OP_GAP, reason, 0, 0);
}
