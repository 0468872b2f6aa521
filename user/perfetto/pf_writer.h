/* SPDX-License-Identifier: MIT */
/*
 * Perfetto trace writer: turns decoded per-thread call/return timelines into
 * a Perfetto protobuf trace (TrackEvent) or, for small traces and debugging,
 * Chrome JSON. See docs/perfetto-output.md for the file layout.
 *
 * Usage, in this order:
 *
 *   struct pf_writer *w;
 *   struct pf_options o;
 *   pf_options_init(&o);
 *   pf_writer_open(&w, "trace.pftrace", &o);          ".gz" suffix: gzip
 *   pf_writer_add_process(w, pid, "app", argv, argc);  each process once
 *   int t = pf_writer_add_thread(w, pid, tid, "main"); each thread once
 *   int32_t f = pf_writer_intern(w, &frame);           once per function
 *   pf_writer_set_trigger(w, &trigger);                optional
 *   pf_begin(w, t, ts, f, 0); pf_end(w, t, ts); ...    events
 *   pf_writer_close(w, end_ts, &stats);
 *
 * Processes, threads, functions and the trigger may also be declared
 * between events: a thread before its first event, the trigger before any
 * event later than it.
 *
 * EVENT ORDER. The caller (the decoder) merges the threads: every event call
 * (pf_begin, pf_end, pf_instant, pf_gap) must have a timestamp >= the
 * previous event call's, over all threads. Events with equal timestamps keep
 * call order, which is how zero-length calls are written. An event that
 * would go back in time is rejected with -PF_EORDER and nothing is written.
 * The writer therefore streams: it keeps no events, only per-thread depth
 * counters and the interning tables, so memory is bounded by the number of
 * threads and distinct functions, not by the number of events.
 *
 * NESTING. pf_end closes the innermost open frame of its thread. An end with
 * no open frame is rejected with -PF_ENOFRAME. Frames deeper than
 * pf_options.max_depth (Perfetto drops slices nested deeper than 512) are not
 * written one by one: the deepest visible level becomes one
 * "[deeper frames hidden]" slice whose hidden_frames argument counts them
 * (instants at those depths are dropped with them).
 *
 * SNAPSHOT EDGES. Frames already running when a thread's data starts (at the
 * snapshot start or after a gap) are passed as pf_begin with
 * PF_BEGIN_INFERRED, outermost first, at the segment's first timestamp and
 * before any other event of that thread; they get inferred_start=true.
 * An inferred begin after another event of the segment is rejected with
 * -PF_EINFERRED, unless pf_options.late_inferred is set: then they may
 * come as they are found (see there). Frames still open at pf_writer_close are ended at the
 * trace's end timestamp with truncated=true, unless
 * pf_options.keep_open_frames is set (Perfetto then shows them as
 * "[Incomplete]").
 *
 * ERRORS. As everywhere in libmtrace (docs/development.md): functions
 * return 0 (or a handle >= 0) on success and a negative errno value on
 * failure, one of the PF_E* names below; the writer keeps the message of its
 * last failure, read with pf_writer_error(). pf_writer_open() and
 * pf_writer_close(), which leave no writer behind on failure, write their
 * message into the caller's buffer (err, errlen; may be NULL/0). After an
 * I/O or memory error every later call fails with -PF_EIO; a rejected event
 * leaves the writer usable. The writer is not thread-safe.
 */
#ifndef MTRACE_PF_WRITER_H
#define MTRACE_PF_WRITER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/reporter.h"

/* The errno values the writer returns (negated), named for what they mean here. */
enum pf_error {
	PF_EINVAL = EINVAL,	/* bad argument: NULL, unknown handle, bad option */
	PF_EORDER = ERANGE,	/* timestamp earlier than an event already written */
	PF_ENOFRAME = ENOENT,	/* pf_end on a thread with no open frame */
	PF_EINFERRED = EALREADY, /* inferred begin after the segment's first event */
	PF_EEXIST = EEXIST,	/* process or thread declared twice, trigger set twice */
	PF_ENOPROC = ESRCH,	/* thread of an undeclared process */
	PF_ENOMEM = ENOMEM,
	PF_EIO = EIO,		/* cannot create or write the output file */
};

enum pf_format {
	PF_FORMAT_PROTO,	/* Perfetto protobuf (TrackEvent) */
	PF_FORMAT_JSON,		/* Chrome JSON trace event format */
};

/* Perfetto's nesting limit per track (trace_processor drops deeper slices). */
#define PF_MAX_DEPTH 512
/* Inferred frames per segment with late_inferred (the decoder's
 * MT_CS_MAX_INFERRED per stretch). */
#define PF_MAX_INFERRED 64

struct pf_options {
	enum pf_format format;
	/* Deepest nesting written per thread, marker level included
	 * (1..PF_MAX_DEPTH). */
	unsigned int max_depth;
	/* Leave frames open at close instead of ending them as truncated. */
	int keep_open_frames;
	/* Builtin Perfetto clock the timestamps are in (6 = BOOTTIME, 3 = MONOTONIC). */
	unsigned int clock_id;
	/* Above this many events pf_writer_close gives @rep a size warning
	 * with advice (0: never). */
	uint64_t warn_events;
	/* Where the size warning and the wait for a FIFO's reader are told
	 * (util/reporter.h); NULL: nowhere. */
	const struct mt_reporter *rep;
	/* zlib level (1..9) for ".gz" output. */
	int gzip_level;
	/* The output's name in messages when the path opened is a temporary
	 * file (files/outfile.h); NULL: the path. Copied at open. */
	const char *name;
	/*
	 * Protobuf only: a segment's inferred begins may come after its other
	 * events, at the segment's first timestamp, innermost first (as the
	 * decoder finds them, decode.h's late_inferred), at most
	 * PF_MAX_INFERRED in a segment. The writer keeps them, and the
	 * thread's events at that first timestamp, until the segment ends
	 * (a gap or the close), then writes them on a second sequence of the
	 * thread: the importer sorts by time, equal times in file order, so
	 * the frames nest as if they had come first. The depth cap then
	 * counts the frames above the inferred ones, at most max_depth - 64
	 * levels of them (max_depth must be above 64). Events need then be
	 * in time order per thread or track only, and the trigger may come
	 * at any point.
	 */
	int late_inferred;
};

/* Frame flags, fixed per function (part of the interned identity). */
#define PF_FRAME_KERNEL		(1u << 0)	/* kernel code: name gets " [kernel]" */
/* Not code: time the trace does not cover (in a syscall, descheduled,
 * trace off). Its slices get the category "untraced", so that idle time
 * is not read as a slow call. */
#define PF_FRAME_UNTRACED	(1u << 1)
/* Code inlined into the function of the slice below (DWARF inline frame):
 * category "inline", and no address of its own. */
#define PF_FRAME_INLINE		(1u << 2)

/*
 * What is known about one function. Everything is copied by
 * pf_writer_intern; NULL/0 means unknown. Strings need not be valid UTF-8:
 * invalid bytes are replaced by U+FFFD in the output.
 */
struct pf_frame {
	const char *symbol;	/* demangled name; NULL: "0x<addr>" is used */
	const char *binary;	/* path of the ELF file (or "[vdso]", "[kernel]") */
	uint64_t addr;		/* the function's start address at run time */
	const char *file;	/* source file of the definition */
	uint32_t line;		/* its line (0: unknown) */
	uint32_t flags;		/* PF_FRAME_* */
};

/* pf_begin flags, per event. */
#define PF_BEGIN_INFERRED	(1u << 0)	/* frame was open before the data starts */

/* The trigger that froze the snapshot, shown on its own "mtrace trigger" track. */
struct pf_trigger {
	uint64_t ts_ns;
	int32_t pid;		/* the process whose track group shows it
				 * (undeclared: a top-level track) */
	int64_t tid;
	uint64_t ip;
	const char *reason;	/* e.g. "uprobe:/bin/app:fn" */
	const char *symbol;	/* symbol at ip, NULL if unknown */
	const char *freeze_path; /* "kfunc", "fallback", "manual", "exit", "power" */
	int64_t skid_ns;	/* trigger to freeze; < 0: unknown */
};

struct pf_stats {
	uint64_t events;	/* begin + end + instant + gap + trigger events written */
	uint64_t bytes;		/* bytes produced before compression */
	uint64_t truncated;	/* frames ended by a gap or the snapshot end */
	uint64_t hidden;	/* frames hidden by the depth cap */
};

struct pf_writer;

/* Defaults: protobuf, max_depth 512, clock 6, gzip level 1, warn above
 * 5,000,000 events. */
void pf_options_init(struct pf_options *o);

/* Creates @path (truncating it). Gzip when @path ends in ".gz". @o may be
 * NULL for defaults. On failure *@w is NULL and @err says why. */
int pf_writer_open(struct pf_writer **w, const char *path, const struct pf_options *o,
		   char *err, size_t errlen);

/* Declares a process: a track group named "@name @pid" holding its threads.
 * @argv may be NULL. */
int pf_writer_add_process(struct pf_writer *w, int32_t pid, const char *name,
			  const char *const *argv, int argc);

/* Declares a thread of a declared process; returns its handle (>= 0). */
int pf_writer_add_thread(struct pf_writer *w, int32_t pid, int64_t tid, const char *name);

/* Declares a track of its own, outside every process (e.g. the time a
 * CPU's trace covers); returns a handle for the event calls like a
 * thread's. In JSON its events go to the pseudo-process PF_JSON_TRACK_PID,
 * named "mtrace", one row per track. */
int pf_writer_add_track(struct pf_writer *w, const char *name);
#define PF_JSON_TRACK_PID (-1)

/* Interns a function; returns its id (>= 0). Interning the same content
 * again returns the same id. Cheap ids are the point: call this once per
 * function and keep the id, the event calls never touch strings. */
int32_t pf_writer_intern(struct pf_writer *w, const struct pf_frame *f);

/* Sets the trigger; it is written when the event stream passes its time. */
int pf_writer_set_trigger(struct pf_writer *w, const struct pf_trigger *t);

int pf_begin(struct pf_writer *w, int thread, uint64_t ts_ns, int32_t func, unsigned int flags);
int pf_end(struct pf_writer *w, int thread, uint64_t ts_ns);
/* A marker on the thread (e.g. "syscall"), at its current nesting depth. */
int pf_instant(struct pf_writer *w, int thread, uint64_t ts_ns, const char *name);
/* Decode lost data here: open frames end (truncated=true), a "trace gap"
 * marker with @reason follows, and inferred begins are accepted again. */
int pf_gap(struct pf_writer *w, int thread, uint64_t ts_ns, const char *reason);

/* Ends open frames at @end_ts (or the last event's time if that is later),
 * writes a pending trigger, flushes and frees @w, even on error (then @err
 * says why). @stats may be NULL. Reports the size warning. */
int pf_writer_close(struct pf_writer *w, uint64_t end_ts, struct pf_stats *stats, char *err,
		    size_t errlen);

/* Whether @w was opened with late_inferred. */
int pf_writer_late_inferred(const struct pf_writer *w);

/* Details of the last failure on @w. */
const char *pf_writer_error(const struct pf_writer *w);
/* What a PF_E* code means here (positive or negative). */
const char *pf_strerror(int err);

#endif
