/* SPDX-License-Identifier: MIT */
/* Decoded timelines into a Perfetto trace through the writer in perfetto/. */
#ifndef MTRACE_DECODE_PFOUT_H
#define MTRACE_DECODE_PFOUT_H

#include "decode/decode.h"
#include "perfetto/pf_writer.h"

struct mt_pfout {
	struct mt_decode *d;
	struct mt_bundle_reader *r;
	struct pf_writer *w;
	int32_t *frames;	/* pf id per function id, -1 until interned */
	size_t nframes;
	struct {
		uint32_t pid, tid;
		int handle;
	} *threads;
	size_t nthreads;
	size_t last_thread;	/* index of the last event's thread */
	uint32_t *pids;		/* processes declared */
	size_t npids;
	uint64_t last_ns;
	uint64_t trigger_ns;	/* the time it recorded; 0 without a trigger */
	char err[256];
};

/* A sink writing to W (already open); declares the bundle's trigger. */
int mt_pfout_init(struct mt_pfout *o, struct mt_decode *d, struct mt_bundle_reader *r,
		  struct pf_writer *w, struct mt_decode_sink *sink);
void mt_pfout_fini(struct mt_pfout *o);
/* Where frames still open end: the freeze, i.e. the trigger when it comes
 * after the last decoded event (the trace before it is a lower bound, and
 * the triggering thread was still inside its frames), else that event. */
uint64_t mt_pfout_end_ns(const struct mt_pfout *o);

#endif
