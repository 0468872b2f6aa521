/* SPDX-License-Identifier: MIT */
/*
 * One CPU stream decoded by several threads at once, so that one busy CPU
 * does not hold the decode to one core. Its pieces (blkdec.h) are decoded
 * ahead by helper threads, each into a spool (blkpipe.h), while the
 * calling thread decodes the first piece itself and then makes each
 * spool's calls, in order, on its time-spreading queue (interp.h) into
 * the handler: each once the decoding of everything before it agrees
 * with what the piece assumed at its start (mt_blkdec_follows()). A piece
 * that does not is decoded again on the calling thread, going on from
 * the decoding before it. So the handler gets exactly what one decoder
 * over the whole stream gives it, in the same order, on one thread.
 */
#ifndef MTRACE_DECODE_BLKSPLIT_H
#define MTRACE_DECODE_BLKSPLIT_H

#include "decode/blkdec.h"

/* One thread's reading of the stream: its decoding's and its scan's. */
struct mt_blk_reading {
	const struct mt_pt_source *src, *scan;
	void *handle;
};

struct mt_blk_split {
	const struct pt_config *cfg;
	bool cyc_off;		/* as for mt_blk_decode_stream() */
	uint64_t window;	/* as for mt_blk_decode_stream() */
	uint64_t piece;		/* the pieces' size in PT bytes */
	unsigned int helpers;	/* threads decoding ahead */
	struct pt_image_section_cache *iscache;
	/* The stream's one image (it needs no other): each helper decodes
	 * with a copy of it (libipt images are not thread-safe). */
	const struct pt_image *image;
	/* The calling thread's reading, and a new one for each helper and,
	 * with CYC, for the cycles' chain (0 or a negative errno); closed
	 * with close. */
	struct mt_blk_reading own;
	int (*open)(void *ctx, struct mt_blk_reading *r);
	void (*close)(void *ctx, struct mt_blk_reading *r);
	void *ctx;
};

struct mt_blk_split_stats {
	uint64_t ahead;		/* pieces decoded ahead and used */
	uint64_t redone;	/* pieces decoded again: their assumption failed */
	uint64_t helper_cpu_ns;	/* the busiest helper's CPU time */
};

/*
 * Decodes the stream S describes into H as mt_blk_decode_stream() does,
 * with the same result. With CYC packets a piece decoded ahead starts with
 * the chain of cycles where it starts, read from the stream before it by
 * one more reading, piece by piece in order; the piece follows when the
 * decoding before it had that chain there (mt_blkdec_follows()). Returns 0
 * or a negative libipt error.
 */
int mt_blk_decode_split(const struct mt_blk_split *s, const struct mt_blk_handler *h,
			struct mt_blk_stats *stats, struct mt_blk_split_stats *ss);

/* The same for CFG's buffer (every thread reads it in place), with the
 * shortest windows and IMAGE, for tests and fuzzing. */
int mt_blk_decode_split_buffer(const struct pt_config *cfg, bool cyc_off, uint64_t piece,
			       unsigned int helpers, const struct pt_image *image,
			       struct pt_image_section_cache *iscache,
			       const struct mt_blk_handler *h, struct mt_blk_stats *stats,
			       struct mt_blk_split_stats *ss);

#endif
