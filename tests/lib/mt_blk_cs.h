/* SPDX-License-Identifier: MIT */
/*
 * The block decoder's events fed straight into a call stack, for the tests
 * and fuzz targets that check the two together (the decoder proper logs
 * them per CPU first and replays them per thread).
 */
#ifndef MT_BLK_CS_H
#define MT_BLK_CS_H

#include "decode/blkdec.h"
#include "decode/callstack.h"

static inline void mt_blk_cs_transfer(void *cs, enum mt_xfer x, uint64_t ret)
{
	mt_cs_transfer(cs, x, ret);
}

static inline void mt_blk_cs_block(void *cs, uint64_t tsc, uint64_t ip, int x, uint64_t ret)
{
	mt_cs_block(cs, tsc, ip);
	if (x != MT_BLK_NO_XFER)
		mt_cs_transfer(cs, (enum mt_xfer)x, ret);
}

static inline void mt_blk_cs_disable(void *cs, uint64_t tsc, uint64_t at)
{
	mt_cs_disable(cs, tsc, MT_OFF_OTHER, at);
}

static inline void mt_blk_cs_gap(void *cs, uint64_t tsc, uint32_t reason)
{
	mt_cs_gap(cs, tsc, reason);
}

/* A handler feeding @cs; @enable sees trace (re)starts, with @cs as context. */
static inline struct mt_blk_handler
mt_blk_cs_handler(struct mt_cs *cs,
		  struct pt_image *(*enable)(void *, uint64_t, uint64_t, const struct mt_tsc_bounds *))
{
	return (struct mt_blk_handler){ .enable = enable, .block = mt_blk_cs_block,
					.transfer = mt_blk_cs_transfer, .disable = mt_blk_cs_disable,
					.gap = mt_blk_cs_gap, .ctx = cs };
}

#endif
