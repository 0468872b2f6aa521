/* SPDX-License-Identifier: MIT */
/* Decoded timelines into a Perfetto trace through the writer in perfetto/. */
#ifndef MTRACE_OUT_PERFETTO_PFOUT_H
#define MTRACE_OUT_PERFETTO_PFOUT_H

#include "decode/decode.h"
#include "perfetto/pf_writer.h"
#include "util/mt_index_map.h"

struct mt_pfout {
	struct mt_decode *d;
	struct mt_bundle_reader *r;
	struct pf_writer *w;
	int32_t *frames;	/* pf id per function id, -1 until interned */
	size_t nframes;		/* all of the capacity, filled with -1 */
	int *threads;		/* writer handles, in the order declared */
	size_t nthreads, threads_cap;
	struct mt_index_map thread_ids;	/* (pid, tid) -> index in threads */
	/* The thread of the last event and its handle (-1: none yet):
	 * events mostly come in runs of one thread. */
	uint64_t last_task;
	int last_handle;
	uint32_t *pids;		/* processes declared */
	size_t npids, pids_cap;
	uint64_t last_ns;
	uint64_t trigger_ns;	/* the time it recorded; 0 without a trigger */
	/* Per CPU stream, a "CPU N trace" track with one slice over the
	 * window its trace covers (mt_decode_cpu_window()), written as the
	 * events pass its edges, or at the finish when the writer orders
	 * per track (pf_options.late_inferred: the streams are decoded as
	 * the events come). */
	struct mt_pfout_window {
		uint64_t first, last;
		int track;
		int state;	/* 0: not begun, 1: open, 2: ended */
	} *windows;
	size_t nwindows, windows_cap;
	int windows_loaded;
	int late;		/* the writer takes inferred frames late */
	int32_t window_frame;
	char err[256];
};

/* A sink writing to W (already open); declares the bundle's trigger.
 * Every function here and every sink callback returns 0 or a negative
 * errno value: its own (-ENOMEM, -EINVAL) with the message in o->err, or
 * the writer's, o->err then empty and the message pf_writer_error()'s. */
int mt_pfout_init(struct mt_pfout *o, struct mt_decode *d, struct mt_bundle_reader *r,
		  struct pf_writer *w, struct mt_decode_sink *sink);
/* Writes what is left after the run (the ends of the CPU windows, none
 * later than END_NS unless events were); call before pf_writer_close().
 * Returns 0 or a negative errno, said as above. */
int mt_pfout_finish(struct mt_pfout *o, uint64_t end_ns);
void mt_pfout_fini(struct mt_pfout *o);
/* Where frames still open end: the freeze, i.e. the trigger when it comes
 * after the last decoded event (the trace before it is a lower bound, and
 * the triggering thread was still inside its frames), else that event. */
uint64_t mt_pfout_end_ns(const struct mt_pfout *o);

#endif
