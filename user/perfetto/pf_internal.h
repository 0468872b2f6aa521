/* SPDX-License-Identifier: MIT */
/*
 * State shared by the writer core (pf_writer.c) and its two output formats
 * (pf_proto.c, pf_json.c). The core validates calls, keeps event order,
 * nesting depth, the depth cap and the snapshot edges; a format only
 * encodes what the core hands it, already in order.
 */
#ifndef MTRACE_PF_INTERNAL_H
#define MTRACE_PF_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "pf_funcs.h"
#include "pf_sink.h"
#include "pf_writer.h"

/*
 * The steps every BEGIN and END takes, flattened into their callers: as
 * calls, their register saves and reloads were a tenth of the instructions
 * of a decode's replay thread.
 */
#define PF_HOT static inline __attribute__((always_inline))

struct pf_process {
	int32_t pid;
	char *name;		/* cleaned UTF-8, never NULL */
	char **argv;		/* cleaned UTF-8 */
	int argc;
	uint64_t uuid;		/* its track */
};

/* How an END is written. */
struct pf_end_info {
	bool truncated;		/* ended by the snapshot end or a gap */
	uint64_t hidden;	/* > 0: ends the depth-cap marker hiding this many */
};

/* An event kept back until its stretch ends (pf_options.late_inferred). */
struct pf_held {
	uint64_t ts;
	int32_t func;		/* BEGIN, INSTANT */
	uint8_t type;		/* 1 begin, 2 end, 3 instant */
	struct pf_end_info end;
};

struct pf_thread {
	int32_t pid;
	int64_t tid;
	char *name;		/* cleaned UTF-8, never NULL */
	uint64_t uuid;		/* its track */
	uint32_t depth;		/* open frames, hidden ones included */
	uint32_t inferred;	/* of those, inferred ones (late_inferred only) */
	uint64_t hidden;	/* frames hidden under the open depth-cap marker */
	uint64_t last_ts;	/* of its last event (late_inferred: the order is per track) */
	bool seg_started;	/* a non-inferred event was seen in this segment */
	bool plain;		/* a track of its own (pf_writer_add_track()), no thread */
	/*
	 * late_inferred: the open stretch's first time, its inferred frames
	 * (innermost first) and its events at that time, written when it
	 * ends; late while they are (the format then writes to a sequence of
	 * their own).
	 */
	bool stretch_open, late;
	uint64_t stretch_ts;
	int32_t *late_frames;
	size_t nlate_frames, late_frames_cap;
	struct pf_held *held;
	size_t nheld, held_cap;
	void *fmt;		/* the format's per-thread state */
};

/* An output format. Every function returns 0 or a negative PF_E* code. */
struct pf_format_ops {
	int (*start)(struct pf_writer *w);
	int (*process)(struct pf_writer *w, const struct pf_process *p);
	int (*thread)(struct pf_writer *w, struct pf_thread *t);
	int (*begin)(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		     bool inferred);
	int (*end)(struct pf_writer *w, struct pf_thread *t, uint64_t ts,
		   const struct pf_end_info *e);
	/* @reason may be NULL. */
	int (*instant)(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		       const char *reason);
	/* Declares the trigger's track (when set) and writes the event (in order). */
	int (*trigger_track)(struct pf_writer *w);
	int (*trigger)(struct pf_writer *w);
	int (*finish)(struct pf_writer *w);
	void (*free)(struct pf_writer *w);
};

extern const struct pf_format_ops pf_proto_ops;
extern const struct pf_format_ops pf_json_ops;

struct pf_writer {
	struct pf_options opt;
	const struct pf_format_ops *ops;
	void *fmt;			/* the format's global state */
	struct pf_sink sink;
	char *path;
	struct pf_funcs funcs;
	struct pf_process *procs;
	size_t nprocs, procs_cap;
	struct pf_thread *threads;
	size_t nthreads, threads_cap;
	uint64_t next_uuid;
	unsigned int plain_tracks;	/* declared with pf_writer_add_track() */
	uint64_t last_ts;		/* of the last event handed to the format */

	struct pf_trigger trig;		/* strings are owned, cleaned copies */
	bool trig_set, trig_pending;
	uint64_t trig_uuid;		/* the "mtrace trigger" track */
	uint64_t trig_parent;		/* its process track, 0 if none */

	/* Names the writer itself uses, interned at open. */
	int32_t marker_func, gap_func, trigger_func;

	struct pf_stats stats;
	bool dead;			/* after an I/O or memory error */
	char err[256];
};

/* The process declared with @pid, NULL if none. */
const struct pf_process *pf_find_process(const struct pf_writer *w, int32_t pid);

#endif
