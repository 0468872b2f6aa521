/* SPDX-License-Identifier: MIT */
/*
 * A sink's calls on a thread of their own, beside the merge that makes
 * them. The merge's thread replays every thread's call stacks and merges
 * their events; where there are more cores than streams to decode, that
 * one thread bounds the whole decode, and writing the output (for
 * Perfetto a third of its instructions) then goes on beside it. The
 * calls reach the sink in the same order, on one thread; a sink's
 * failure reaches the merge a block of calls later, and the sink gets no
 * call after it.
 */
#ifndef MTRACE_DECODE_SINK_THREAD_H
#define MTRACE_DECODE_SINK_THREAD_H

#include "decode/decode.h"

struct mt_sink_thread;

/* Starts the thread for INNER and fills OUTER, the sink to give the merge
 * instead. -errno when the thread cannot start (INNER is then for the
 * merge to call itself). */
int mt_sink_thread_start(struct mt_sink_thread **st, const struct mt_decode_sink *inner,
			 struct mt_decode_sink *outer);
/* Hands on the calls still held, waits for the sink to take them all and
 * ends the thread; returns the sink's first failure, or 0. */
int mt_sink_thread_stop(struct mt_sink_thread *st);

#endif
