/* SPDX-License-Identifier: MIT */
/*
 * The decoder: from a snapshot bundle to per-thread call/return timelines.
 *
 *   struct mt_decode *d;
 *   mt_decode_open(&d, reader, &opts, err, sizeof(err));
 *   mt_decode_run(d, &sink);     events of all threads, in timestamp order
 *   mt_decode_free(d);
 *
 * Every CPU's PT stream is decoded (in parallel worker threads) with
 * libipt's block decoder against images built from the bundle's maps; the
 * context-switch sideband attributes each stretch of a stream to a thread;
 * each thread's stretches are put in time order, across CPUs, and its call
 * stack rebuilt (decode/callstack.h). Times are nanoseconds on the
 * bundle's CLOCK_BOOTTIME anchors. Bad trace data becomes GAP events,
 * never a failure.
 *
 * Memory: each CPU's decoded control flow is logged (a few bytes per block
 * that can change a call stack, decode/oplog.h). For a sink that takes
 * inferred frames late, the replay follows the decoding and frees the log
 * behind it, and each stream's decoding waits when it runs too far ahead
 * (opts.stream_window), so the log held is bounded by that window, not by
 * the snapshot; for the others the log is held until every thread has
 * been rebuilt. The events themselves always stream to the sink. Each
 * CPU's PT is read in windows (opts.pt_window), decompressed as it is
 * read: the PT held is a window per stream being decoded, not the stream.
 */
#ifndef MTRACE_DECODE_H
#define MTRACE_DECODE_H

#include "bundle/bundle.h"
#include "decode/callstack.h"
#include "decode/funcs.h"
#include "util/reporter.h"

#include <stdint.h>

struct mt_decode_opts {
	/* Separate debug files search path (sym.h); NULL for the default. */
	const char *debug_path;
	/* Threads decoding CPU streams at once; 0: one per online CPU. A
	 * stream may take two (decode_cpu.c, choose_stages()): the largest
	 * while there are more jobs than streams, and one holding well over
	 * its share of the PT, which is split into pieces (pt_piece) that up
	 * to four more decode ahead where it can be. */
	unsigned int jobs;
	/* Use only the binaries embedded in the bundle, never local files. */
	int embedded_only;
	/* Where copies of binaries missing here were looked for, as messages
	 * about code without a binary name it; NULL: "the bundle" (a bundle
	 * imported from a perf.data got its copies elsewhere). */
	const char *copies;
	/* Said instead of "no copy in COPIES" of a binary recorded without a
	 * build-id when COPIES are found by build-id alone (so none was looked
	 * for); NULL: the same words as with one. */
	const char *copies_without_id;
	/* Where recorded paths are looked for locally (binfile.h); may be NULL. */
	const struct mt_path_map *path_maps;
	size_t npath_maps;
	const char *symfs;
	/* Non-fatal problems (an unknown CPU model, ...), as warnings; may
	 * be NULL. */
	const struct mt_reporter *rep;
	/* A mapping without usable code, once per mapping, as a warning;
	 * NULL: such messages go to rep. */
	const struct mt_reporter *missing;
	/* Progress of the CPU streams, the long part of a decode: DONE of
	 * TOTAL bytes of PT, at least every 4096 blocks, never two calls at
	 * once, DONE never smaller than the call before's, last with DONE ==
	 * TOTAL; may be NULL. */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* Narrowing that saves work: only these CPUs' streams are decoded,
	 * only these threads' timelines rebuilt (NULL: all). The other
	 * narrowings apply to the events (narrow/narrow.h). */
	const uint32_t *cpus;
	size_t ncpus;
	const uint32_t *tids;
	size_t ntids;
	/* When the replay follows the decoding (a late_inferred sink): the
	 * control-flow log a stream may hold ahead of it; 0: 4 MiB. */
	size_t stream_window;
	/* PT bytes of a stream read and decoded at a time (to the next PSB
	 * at or after them); 0: 1 MiB. The output does not depend on it. */
	size_t pt_window;
	/* A busy stream (one taking two threads) is split into pieces of
	 * this many PT bytes (to the next PSB at or after them), decoded by
	 * several threads at once (decode/blksplit.h); 0: 128 KiB. The output
	 * does not depend on it. */
	size_t pt_piece;
	/* The sink's calls on a thread of their own (sink_thread.h): 1, or
	 * -1 never; 0: with 8 or more online CPUs, where the merge's thread
	 * rather than the streams bounds the decode (on fewer the extra
	 * thread takes its time from the others). */
	int sink_thread;
	/* Decode the CPU streams as while other threads hold the DWARF of
	 * all the code: with inline ranges unknown, a stream logs every
	 * block in functions that may have some (decode_cpu.c, log_block()).
	 * For tests: the output does not depend on it. */
	int defer_inline_ranges;
};

struct mt_decode_stats {
	uint64_t pt_bytes;	/* PT data decoded */
	uint64_t cpus, threads;
	uint64_t blocks, insns;
	uint64_t events;	/* events given to the sink */
	uint64_t errors;	/* decode errors, each a gap */
	uint64_t overflows;
	uint64_t backsteps;	/* timestamps clamped to keep threads monotonic */
	uint64_t clamped;	/* timestamps outside their stretch's bounds, clamped */
	uint64_t missing_maps;	/* executable mappings without a usable file */
	uint64_t log_bytes;	/* control-flow log written, all streams */
	uint64_t log_peak;	/* most of it held at once */
	uint64_t pt_windows;	/* windows the PT was decoded in (pt_window) */
	/* At most what one stream's scan (ahead of its decoding) held: its
	 * TSC marks, PSB offsets and window ends, and its piece of PT. */
	uint64_t scan_held;
	uint64_t pt_held;	/* most PT one stream held in memory at once */
	uint64_t sb_rewinds;	/* a stream's switches read again from the start */
	/* Blocks after which a stream logged the next block whatever it
	 * was, rather than wait while another thread held the DWARF of its
	 * code (or with defer_inline_ranges). */
	uint64_t dwarf_deferred;
	/* Most bytes the replay's queues of segments (per stream, per
	 * thread) held: with a following replay, what is queued, not every
	 * segment of the snapshot. */
	uint64_t seg_queues_held;
	/* The most one queue of each kind held queued, summed over the
	 * three kinds: on a bundle of few streams and threads, held stays
	 * within a few times this (growth by doubling, a queue's front
	 * dropped once it is most of it); a queue that kept what it had
	 * passed on grows past it. */
	uint64_t seg_queues_peak;
	/* Times every stream waited for the replay to free log while the
	 * replay waited for them, and all were let run past their window. */
	uint64_t stuck_runs;
	uint64_t cpus_decoded;	/* streams decoded (the rest narrowed away) */
	uint64_t cpus_with_psb;	/* of those, the ones holding a PSB, where decoding can start */
	/* CPU time of the busiest stream's decoding thread, in ns (of its
	 * busiest one when it had several): unless the stream is split into
	 * pieces, no -j makes the decode shorter than this. */
	uint64_t stream_cpu_ns;
	/* Streams decoded on two threads: libipt's side and the log's
	 * (see jobs in mt_decode_opts). */
	uint64_t two_stage_streams;
	/* Of those, the ones split into pieces decoded by several threads
	 * (pt_piece); the pieces decoded ahead and used, and those decoded
	 * again because what came before did not end as they assumed. */
	uint64_t split_streams;
	uint64_t pieces_ahead, pieces_redone;
	/* Threads whose next event the merge looked up: once per event,
	 * and each thread once whenever the merge takes up new segments;
	 * never every thread for every event. */
	uint64_t merge_looks;
};

struct mt_decode_sink {
	/* Each thread once, before its first event. */
	int (*thread)(void *ctx, uint32_t pid, uint32_t tid);
	/* Events in global timestamp order (ties: thread order; see
	 * late_inferred for the exception). A non-zero return stops the run
	 * and is returned by mt_decode_run(). */
	int (*event)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev);
	/* The trigger, at its place in the event order: where the trace shows
	 * the probe hit when it does (the triggering thread's trace stop at
	 * the trigger's address), else at its own time; may be NULL. */
	int (*trigger)(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t);
	void *ctx;
	/*
	 * Set by a sink that puts each thread's events in time order itself,
	 * equal times in arrival order, as Perfetto's importer does. Inferred
	 * BEGINs (MT_EV_INFERRED) then come as the rebuild finds them: after
	 * other events of their stretch, with its first timestamp, innermost
	 * first, each where its thread's events have got to in the merge.
	 * The decoder then replays every thread once instead of twice.
	 * Otherwise a stretch's inferred BEGINs come first, outermost first.
	 */
	int late_inferred;
};

struct mt_decode;

/* Checks the bundle (CPU, PT configuration) and builds the images.
 * Returns 0 or a negative errno with a message in ERR (-ENOENT: no cpu or
 * pt-config section; -ENOTSUP: not Intel PT; -EBADMSG: bad kernel text;
 * -ENOMEM; the reader's errors). The reader must outlive the decoder. */
int mt_decode_open(struct mt_decode **out, struct mt_bundle_reader *r,
		   const struct mt_decode_opts *opts, char *err, size_t errlen);
/* Decodes everything and feeds SINK, once per decoder. Returns 0, a sink's
 * non-zero value, -ENOMEM, or the negative errno of a PT stream that could
 * not be read again (mt_decode_open() read each one through). */
int mt_decode_run(struct mt_decode *d, const struct mt_decode_sink *sink);
/* Why mt_decode_run() failed, when it did of itself (a stream it could
 * not read again, no memory): one line; "" when it did not (a sink's
 * value is the sink's to explain). */
const char *mt_decode_error(const struct mt_decode *d);
void mt_decode_free(struct mt_decode *d);

const struct mt_decode_stats *mt_decode_get_stats(const struct mt_decode *d);
/* The bundle's trigger and the time it recorded (the freeze follows it);
 * -1 when the bundle has none. */
int mt_decode_trigger(const struct mt_decode *d, uint64_t *ns, struct mt_bundle_trigger *t);
/* The threads a decode of the bundle can show: those of the traced
 * process (of any, system-wide) that its context switches name, and the
 * one assumed on CPUs without any; in the order first named. */
size_t mt_decode_bundle_threads(const struct mt_decode *d, const uint32_t **tids);
/* A TSC value of the bundle (e.g. a context switch's) in the events' ns. */
uint64_t mt_decode_ns(const struct mt_decode *d, uint64_t tsc);
/* Where the trigger is placed among the events (see the sink's trigger),
 * from the sink's first call on; -1 without a trigger. */
int mt_decode_trigger_at(const struct mt_decode *d, uint64_t *ns);
/* What CPU stream I (0 .. cpus - 1) covers: its CPU and the times of its
 * first and last timing packets, the window the snapshot really holds for
 * that CPU. -1 when I is out of range or the stream has no time. Valid
 * once mt_decode_run() has returned, and from the sink's first call on
 * for a sink without late_inferred (the streams are decoded by then). */
int mt_decode_cpu_window(const struct mt_decode *d, size_t i, uint32_t *cpu, uint64_t *first_ns,
			 uint64_t *last_ns);
/* A function id's name for people, "[syscall]", "[untraced]" and
 * "[unknown]" included; D is the decoder (a callback's context). */
const char *mt_decode_label(void *d, uint32_t id);
/* What the sink needs to name function ids of BEGIN events. */
struct mt_func mt_decode_func(struct mt_decode *d, uint32_t id);
/* The name of the function holding IP in process PID (e.g. the
 * trigger's), "[unknown]" when there is none. */
const char *mt_decode_symbol_at(struct mt_decode *d, uint32_t pid, uint64_t ip);
/* Source position of a function's first instruction; -1 if unknown. */
int mt_decode_func_source(struct mt_decode *d, uint32_t id, struct mt_src_loc *loc);

#endif
