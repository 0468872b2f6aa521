/* SPDX-License-Identifier: MIT */
/*
 * One CPU stream decoded in two stages on two threads, so that one busy
 * stream keeps two cores busy: libipt's block decoding (blkdec.c) on one,
 * and on the other the time-spreading queue (interp.h) and the handler it
 * feeds (the CPU's log, decode_cpu.c). The pipe carries the queue's calls
 * from the first thread to a queue of its own on the second, in order and
 * with the same arguments, so the handler sees what it sees when the
 * stream is decoded on one thread. Only an enable's answer, the image to
 * decode with, steers the decoding: the first thread waits for it
 * whenever it may be one the decoding does not have.
 */
#ifndef MTRACE_DECODE_BLKPIPE_H
#define MTRACE_DECODE_BLKPIPE_H

#include "decode/blkdec.h"

struct mt_blk_pipe;

/*
 * A pipe into TARGET, whose enable returns NULL or one of IMAGES
 * different images: with at most one, the decoding waits only until it
 * has it. NULL when out of memory.
 */
struct mt_blk_pipe *mt_blk_pipe_new(const struct mt_blk_handler *target, unsigned int images);
void mt_blk_pipe_free(struct mt_blk_pipe *p);

/*
 * A spool: a pipe that keeps every call until they are all made at once,
 * for a piece of a stream decoded ahead (blksplit.h). It never waits: an
 * enable gets no answer (the decoding keeps the image it has).
 */
struct mt_blk_chunks;
struct mt_blk_pipe *mt_blk_spool_new(const struct mt_blk_handler *target,
				     struct mt_blk_chunks *pool);
/* Chunks spools give back when freed and take again (thread-safe): what
 * spools hold at once, not fresh memory for every spool. */
struct mt_blk_chunks *mt_blk_chunks_new(void);
void mt_blk_chunks_free(struct mt_blk_chunks *pool);
/* Makes the spool's calls on Q into its target, in order; *IMAGE gets the
 * last image an enable answered (unchanged when none did). false, and no
 * call made, when the spool lost calls (out of memory). */
struct mt_interp;
bool mt_blk_spool_deliver(struct mt_blk_pipe *p, struct mt_interp *q, struct pt_image **image);

/* The handler to decode into, on the first thread. */
const struct mt_blk_handler *mt_blk_pipe_front(struct mt_blk_pipe *p);
/* The first thread: no more calls. */
void mt_blk_pipe_close(struct mt_blk_pipe *p);
/* The second thread: makes the calls on a queue into TARGET, in order,
 * until the pipe is closed and empty. */
void mt_blk_pipe_run(struct mt_blk_pipe *p);

/* The queue's calls (interp.h), for a queue into the front. */
void mt_blk_pipe_block(struct mt_blk_pipe *p, uint64_t tsc, uint64_t ip, uint64_t insns);
void mt_blk_pipe_block_ending(struct mt_blk_pipe *p, uint64_t tsc, uint64_t ip, uint64_t insns,
			      enum mt_xfer x, uint64_t ret_addr);
void mt_blk_pipe_transfer(struct mt_blk_pipe *p, enum mt_xfer x, uint64_t ret_addr);
void mt_blk_pipe_disable(struct mt_blk_pipe *p, uint64_t tsc, uint64_t at);
void mt_blk_pipe_gap(struct mt_blk_pipe *p, uint64_t tsc, uint32_t reason);
void mt_blk_pipe_flush(struct mt_blk_pipe *p, uint64_t end);

#endif
