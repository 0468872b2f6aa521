/* SPDX-License-Identifier: MIT */
/*
 * Plain-text dump of decoded timelines (`mtrace-user decode --format=text`),
 * one line per event, in time order:
 *
 *   NS TID B NAME [inferred] [async] [tail]     a frame begins
 *   NS TID E NAME [truncated]                   a frame ends
 *   NS TID GAP REASON                           data lost here
 *   NS trigger TID IP FUNCTION                  the snapshot's trigger
 *
 * NS is nanoseconds (CLOCK_BOOTTIME), TID the thread. Tests compare it.
 */
#ifndef MTRACE_OUT_TEXT_TEXTOUT_H
#define MTRACE_OUT_TEXT_TEXTOUT_H

#include "decode/decode.h"

#include <stdio.h>

struct mt_textout {
	struct mt_decode *d;
	FILE *out;
};

/* A sink writing to T->out; T must outlive the run. */
struct mt_decode_sink mt_textout_sink(struct mt_textout *t);

#endif
