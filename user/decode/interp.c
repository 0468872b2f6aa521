// SPDX-License-Identifier: MIT
/* Spreading the time between timing packets over the code; see interp.h. */
#include "decode/interp.h"

#include "decode/oplog.h"
#include "util/mt_array.h"

#include <stdlib.h>

void mt_interp_init(struct mt_interp *q, const struct mt_blk_handler *h)
{
	*q = (struct mt_interp){ .h = h };
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
		h->block(h->ctx, t, it->a);
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

/* Hands on the queue spread over [FROM, TO] (nothing spread when TO <= FROM). */
static void spread(struct mt_interp *q, uint64_t from, uint64_t to)
{
	uint64_t span = to > from && !q->offs && q->insns ? to - from : 0, done = 0;

	for (size_t i = 0; i < q->n; i++) {
		const struct mt_interp_item *it = &q->v[i];

		hand_on(q, it,
			span ? from + (uint64_t)(((unsigned __int128)span * done) / q->insns) : it->tsc);
		done += it->insns;
	}
	q->n = 0;
	q->insns = 0;
	q->offs = 0;
}

void mt_interp_flush(struct mt_interp *q, uint64_t end)
{
	spread(q, q->base, end);
	if (end > q->base)
		q->base = end;
}

/* Queues IT at time TSC; the queue moves on first when TSC is a new time. */
static void put(struct mt_interp *q, uint64_t tsc, const struct mt_interp_item *it)
{
	if (tsc > q->base || !q->n)
		mt_interp_flush(q, tsc);
	if (MT_ARRAY_RESERVE(q->v, q->cap, q->n, 1)) {
		/* Unspread but never lost: everything goes out now. */
		spread(q, q->base, q->base);
		hand_on(q, it, it->tsc);
		return;
	}
	q->v[q->n++] = *it;
	q->insns += it->insns;
	if (it->kind == MT_OP_DISABLE || it->kind == MT_OP_GAP)
		q->offs++;
}

void mt_interp_block(struct mt_interp *q, uint64_t tsc, uint64_t ip, uint64_t insns)
{
	put(q, tsc, &(struct mt_interp_item){ ip, insns, tsc, MT_OP_BLOCK, 0 });
}

void mt_interp_transfer(struct mt_interp *q, enum mt_xfer x, uint64_t ret_addr)
{
	put(q, q->base, &(struct mt_interp_item){ ret_addr, 0, q->base, MT_OP_XFER, (uint8_t)x });
}

void mt_interp_disable(struct mt_interp *q, uint64_t tsc, uint64_t at)
{
	put(q, tsc, &(struct mt_interp_item){ at, 0, tsc, MT_OP_DISABLE, 0 });
}

void mt_interp_gap(struct mt_interp *q, uint64_t tsc, uint32_t reason)
{
	put(q, tsc, &(struct mt_interp_item){ reason, 0, tsc, MT_OP_GAP, 0 });
}
