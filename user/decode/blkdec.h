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
#include "decode/cyctime.h"

#include <intel-pt.h>
#include <stdatomic.h>
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
	/* Looked at as often: once set, decoding ends there (the consumer
	 * failed, say a full disk, and nothing more is wanted). May be NULL. */
	const atomic_int *stop;
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
	 * at once (blkscan.h, mt_blkscan_forget()): bounded by the window, not the
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

/*
 * A stream decoded in pieces, each piece on any thread (blksplit.h). With
 * pieces of PIECE bytes, windows also end at the first PSB+ holding a
 * MODE.Exec at or after every multiple of PIECE (window ends never change
 * what is decoded), and piece i runs from the first such PSB at or after
 * i * PIECE to the first at or after (i + 1) * PIECE: both found by the
 * packets alone, so the decoder of one piece and that of the next agree.
 *
 * A piece is decoded ahead by a decoder that starts at it without the
 * decoding before it. libipt's state at a PSB is all in its PSB+, and a
 * window end already flushes the held block; what the decoding before
 * leaves is whether it stopped at that PSB+ (no error ran across it),
 * whether tracing was on there (assumed as the PSB+ says), the time it
 * had reached (times only grow), whether it had an image (assumed), and
 * the TSC marks before the piece (an enable's bounds may need the one
 * before; counting marks up to a time needs their values to grow, which
 * a damaged stream's may not; and after a bad packet where the scan reads
 * the packets that follow depends on where its reads fell). The decoder
 * ahead notes what its result depended on:
 * mt_blkdec_follows() says whether the decoding before agrees, and then
 * the piece's output is the one a single decoder would have made.
 */
struct mt_blkdec;
struct mt_interp;

/* A decoder of a stream of SIZE bytes (see mt_blk_decode_stream() for
 * CFG, WINDOW, ISCACHE), with pieces of PIECE bytes (0: none), counting
 * into STATS (NULL: its own, mt_blkdec_take_stats()). */
struct mt_blkdec *mt_blkdec_new(const struct pt_config *cfg, uint64_t size, uint64_t window,
				uint64_t piece, struct pt_image_section_cache *iscache,
				struct mt_blk_stats *stats);
/* Where it reads (SRC, SCAN), the image to decode with (NULL: keep the
 * current one), and where the control flow goes: into H through Q (NULL:
 * a queue of its own into H). Again to go on elsewhere. */
void mt_blkdec_bind(struct mt_blkdec *b, const struct mt_pt_source *src,
		    const struct mt_pt_source *scan, struct pt_image *image,
		    const struct mt_blk_handler *h, struct mt_interp *q);
/* Starts at piece INDEX: 0, the stream's start, or any other ahead (CYC_OFF
 * as for mt_blk_decode_stream()). Negative libipt error when the scan
 * failed. */
int mt_blkdec_start(struct mt_blkdec *b, uint64_t index, bool cyc_off);
/* A piece started ahead of a stream with CYC packets: their chain where it
 * starts (mt_blkdec_position()), read from the stream before it
 * (cyctime.h). Without it the piece does not follow. */
void mt_blkdec_resume_cyc(struct mt_blkdec *b, const struct mt_cyc_chain *c);
/* Decodes on to the end of piece INDEX (the whole stream without
 * pieces). 0 or a negative libipt error. */
int mt_blkdec_decode_piece(struct mt_blkdec *b, uint64_t index);
/* The image it decodes with now. */
struct pt_image *mt_blkdec_image(const struct mt_blkdec *b);
/* Whether the stream's end was reached; where the next piece starts
 * (UINT64_MAX when none does). */
bool mt_blkdec_ended(const struct mt_blkdec *b);
uint64_t mt_blkdec_position(const struct mt_blkdec *b);
/* Whether AHEAD, started ahead and decoded, made what BEFORE (everything
 * before AHEAD's piece, decoded) would have made going on. */
bool mt_blkdec_follows(const struct mt_blkdec *before, const struct mt_blkdec *ahead);
/* AHEAD follows BEFORE: takes over its state, to go on from there. */
void mt_blkdec_adopt(struct mt_blkdec *ahead, const struct mt_blkdec *before);
/* Adds what it counted since the last call to TO (the PSBs of the pieces
 * it decoded; last_tsc: its time). */
void mt_blkdec_take_stats(struct mt_blkdec *b, struct mt_blk_stats *to);
void mt_blkdec_free(struct mt_blkdec *b);

/* The same for CFG's buffer, in one window. */
int mt_blk_decode(const struct pt_config *cfg, struct pt_image *image,
		  struct pt_image_section_cache *iscache, const struct mt_blk_handler *h,
		  struct mt_blk_stats *stats);

#endif
