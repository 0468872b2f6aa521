/* SPDX-License-Identifier: MIT */
/*
 * One CPU's PT stream through libipt's block decoder, reported as the
 * control flow the call-stack rebuild consumes: blocks, the transfer that
 * ended each block, trace on/off, and gaps where data was lost or could
 * not be decoded (with resync at the next PSB). Timestamps are TSC values:
 * libipt's, or with CYC packets exact ones from the cycles (cyctime.h).
 */
#ifndef MTRACE_DECODE_BLKDEC_H
#define MTRACE_DECODE_BLKDEC_H

#include "decode/callstack.h"

#include <intel-pt.h>
#include <stdbool.h>

/* Why data is missing; GAP events carry these. */
enum mt_gap_reason {
	MT_GAP_DECODE = 1,	/* trace and code disagree, or bad packets */
	MT_GAP_NOMAP = 2,	/* code with no image (JIT, unknown mapping) */
	MT_GAP_OVERFLOW = 3,	/* the CPU dropped packets (OVF) */
};

const char *mt_gap_reason_name(uint32_t reason);

/* An enable's exact bounds from TSC packets (blkdec.c): no later time is
 * before floor, the enable is before ceil, and the stretch it starts ends
 * before end (0 / UINT64_MAX: none). */
struct mt_tsc_bounds {
	uint64_t floor, ceil, end;
};

/* A block's transfer is still to come (block()). */
#define MT_BLK_NO_XFER (-1)

struct mt_blk_handler {
	/* Trace (re)starts at IP: the thread may have changed. Returns the
	 * image to decode with from here (NULL: keep the current one). */
	struct pt_image *(*enable)(void *ctx, uint64_t tsc, uint64_t ip,
				   const struct mt_tsc_bounds *bounds);
	/* A block from IP, and the transfer X that ended it (RET_ADDR as
	 * for transfer()), or MT_BLK_NO_XFER: one call, as nearly every
	 * block has one. */
	void (*block)(void *ctx, uint64_t tsc, uint64_t ip, int x, uint64_t ret_addr);
	void (*transfer)(void *ctx, enum mt_xfer x, uint64_t ret_addr);
	/* Trace stops; AT is the next instruction (0 if unknown). */
	void (*disable)(void *ctx, uint64_t tsc, uint64_t at);
	void (*gap)(void *ctx, uint64_t tsc, uint32_t reason);
	/* Decoding has got to stream offset OFF: called every
	 * MT_BLK_PROGRESS_BYTES of the stream or so (NULL: not wanted). */
	void (*progress)(void *ctx, uint64_t off);
	void *ctx;
	/* Set: the control flow goes to this pipe (blkpipe.h) as it is
	 * decoded, its times spread on the pipe's other side; only enable
	 * and progress are called here. */
	struct mt_blk_pipe *pipe;
};

#define MT_BLK_PROGRESS_BYTES ((uint64_t)64 << 10)

struct mt_blk_stats {
	uint64_t blocks, insns;
	uint64_t errors;	/* decode errors (each followed by a resync) */
	uint64_t overflows;
	uint64_t windows;	/* windows of the stream decoded */
	uint64_t psbs;		/* PSBs in the stream */
	/* Most bytes the scan's PSB offsets, TSC marks and window ends took
	 * at once (blkdec.c, forget_behind()): bounded by the window, not the
	 * stream. */
	uint64_t scan_held;
	uint64_t first_tsc, last_tsc;
	uint64_t offset;	/* how far into the stream decoding got */
	/* Offset and libipt error of the first decode error, for messages. */
	uint64_t first_error_offset;
	int first_error;
};

struct mt_pt_source;

/*
 * Decodes SRC's stream (CFG selects errata and timing; its buffer is not
 * used) against IMAGE, whose sections come from ISCACHE (used to read
 * instructions that libipt leaves unclassified). SCAN reads the same
 * stream, a little ahead of the decoding, for its PSBs, TSC packets and
 * window ends (SRC itself for a buffer; a second reader for a bundle's
 * stream), and before that from its start until its first CYC packet,
 * unless CYC_OFF says the stream holds none (RTIT_CTL.CYCEn clear: a
 * stream without CYC would be read whole once more to find out).
 * SRC holds one window of the stream in memory: WINDOW bytes or more, up
 * to a PSB where libipt can start (a stream without PSBs is one window);
 * SCAN a piece of at most 64 KiB. The result does not depend on WINDOW.
 * Never fails on bad trace data: that becomes gaps. Returns 0, or a
 * negative libipt error when no decoder could be created or a source could
 * not be read.
 */
int mt_blk_decode_stream(const struct pt_config *cfg, const struct mt_pt_source *src,
			 const struct mt_pt_source *scan, bool cyc_off, uint64_t window,
			 struct pt_image *image, struct pt_image_section_cache *iscache,
			 const struct mt_blk_handler *h, struct mt_blk_stats *stats);

/* The same for CFG's buffer, in one window. */
int mt_blk_decode(const struct pt_config *cfg, struct pt_image *image,
		  struct pt_image_section_cache *iscache, const struct mt_blk_handler *h,
		  struct mt_blk_stats *stats);

#endif
