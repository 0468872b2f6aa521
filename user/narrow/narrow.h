/* SPDX-License-Identifier: MIT */
/*
 * Narrowing a decode to what the user asked for: a time window (absolute
 * or around the trigger), some threads, the calls under one function, the
 * calls that last long enough, the frames down to a depth. It wraps any
 * decode sink (decode/decode.h) and hands it only the events that pass, in
 * the same time order:
 *
 *   struct mt_narrow n;
 *   mt_narrow_init(&n, d, &opts, &inner);   sink = mt_narrow_sink(&n);
 *   rc = mt_narrow_run(&n, &sink);           mt_decode_run() and the end
 *   mt_narrow_fini(&n);
 *
 * - window: events before it only build the call stacks; at its start the
 *   frames then open are begun again, marked inferred (like the snapshot's
 *   own start); at its end the run stops (the frames still open are left
 *   to the output, which ends them at mt_narrow_end_ns()).
 * - function: a call is kept when it is SYM or runs under SYM, or when SYM
 *   runs under it (its ancestors); the others go, with everything in them.
 * - min_duration: a shorter call goes with everything in it (its time
 *   stays in its parent's slice, as the parent's own time).
 * - max_depth: frames nested deeper go (the outermost is depth 1).
 *
 * A call's fate is known at its end, or as soon as it has lasted
 * min_duration; events wait in a queue until every event before them is
 * decided, so memory grows with the longest undecided stretch (about
 * min_duration, or one call outside SYM's subtrees), not with the trace.
 * Threads and CPUs are narrowed in the decoder itself
 * (mt_decode_opts.tids, .cpus), where it saves decoding.
 */
#ifndef MTRACE_NARROW_H
#define MTRACE_NARROW_H

#include "decode/decode.h"
#include "util/mt_index_map.h"

#include <stddef.h>
#include <stdint.h>

struct mt_narrow_opts {
	int window;		/* from/to apply */
	int around_trigger;	/* from/to are relative to the trigger's place */
	int64_t from, to;	/* ns; INT64_MIN / INT64_MAX: open-ended */
	const char *function;	/* demangled; without a C++ name's parameters
				 * it names every overload; NULL: every call */
	uint64_t min_duration;	/* ns; 0: every call */
	unsigned int max_depth;	/* 0: every depth */
};

/* Whether O narrows the events at all (else no wrapper is needed). */
int mt_narrow_active(const struct mt_narrow_opts *o);

struct mt_narrow_frame {
	uint64_t begin;		/* its BEGIN's time */
	uint64_t q;		/* its BEGIN's queue entry, by number (UINT64_MAX: none) */
	uint32_t fn;
	uint8_t under;		/* it is SYM or runs under SYM */
	uint8_t anc;		/* something kept runs under it */
	uint8_t state;		/* its BEGIN's fate, as in the queue */
};

struct mt_narrow_thread {
	uint32_t pid, tid;
	struct mt_narrow_frame *stack;
	size_t depth, cap;
};

struct mt_narrow_entry {
	struct mt_ev ev;
	uint64_t ns;
	uint32_t thread;	/* index in mt_narrow.threads */
	uint32_t depth;		/* BEGIN: its frame's index in the stack */
	uint8_t state;		/* 0 undecided, 1 kept, 2 dropped */
};

struct mt_narrow {
	struct mt_decode *d;
	struct mt_narrow_opts o;
	struct mt_decode_sink inner;
	int started;		/* the window and the trigger are resolved */
	int in_window;		/* the window's start has passed */
	int stopped;		/* the window's end has passed */
	uint64_t from, to;	/* resolved, ns */
	uint64_t now;		/* the latest event's time */
	struct mt_narrow_thread *threads;
	size_t nthreads, capthreads;
	struct mt_index_map thread_ids;	/* (pid, tid) -> index in threads */
	uint8_t *is_sym;	/* per function id: 0 unknown, 1 SYM, 2 not */
	size_t nsym;
	const struct mt_bundle_trigger *trigger;	/* queued, see on_trigger() */
	struct mt_narrow_entry *q;
	size_t qhead, qlen, qcap;
	uint64_t qbase;		/* number of the entry at q[0] */
	int rc;			/* the inner sink's or -ENOMEM */
	/* What the run met, for mt_narrow_left_nothing(): the first event's
	 * time (seen: there was one), the calls handed on, SYM met at all. */
	uint64_t first;
	int seen, sym_met;
	uint64_t kept;
};

void mt_narrow_init(struct mt_narrow *n, struct mt_decode *d, const struct mt_narrow_opts *o,
		    const struct mt_decode_sink *inner);
struct mt_decode_sink mt_narrow_sink(struct mt_narrow *n);
/* mt_decode_run() with SINK (from mt_narrow_sink()), then what is still
 * queued; returns 0, the inner sink's non-zero value, or -ENOMEM. */
int mt_narrow_run(struct mt_narrow *n, const struct mt_decode_sink *sink);
/* Where frames still open should end: the window's end when it has one
 * and DEFAULT_NS is later, else DEFAULT_NS. */
uint64_t mt_narrow_end_ns(const struct mt_narrow *n, uint64_t default_ns);
void mt_narrow_fini(struct mt_narrow *n);
/* After mt_narrow_run(): whether the narrowing left no call to hand on,
 * and then why, in one line in WHY (what the trace holds instead). */
int mt_narrow_left_nothing(const struct mt_narrow *n, char *why, size_t len);

/* Parses a duration: a number with ns, us, ms or s (no unit: ns) into
 * *NS; -EINVAL when it is not one, -ERANGE when 64 bits of ns cannot hold it. */
int mt_narrow_parse_duration(const char *s, uint64_t *ns);
/* Parses --time FROM,TO into O: each end absolute ns (with a unit
 * allowed), or T, T-DURATION, T+DURATION relative to the trigger (both
 * ends alike); an empty end is open. -EINVAL with a message in ERR. */
int mt_narrow_parse_time(const char *s, struct mt_narrow_opts *o, char *err, size_t errlen);

#endif
