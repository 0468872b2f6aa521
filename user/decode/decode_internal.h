/* SPDX-License-Identifier: MIT */
/* Internals shared by the decoder's source files. */
#ifndef MTRACE_DECODE_INTERNAL_H
#define MTRACE_DECODE_INTERNAL_H

#include "decode/binfile.h"
#include "decode/blkdec.h"
#include "decode/clock.h"
#include "decode/decode.h"
#include "decode/kernel_image.h"
#include "decode/oplog.h"
#include "decode/procmap.h"
#include "decode/sideband.h"

#include <intel-pt.h>
#include <pthread.h>
#include <stdatomic.h>

/* A stretch of one CPU's stream that one thread ran. */
struct mt_seg {
	struct mt_task task;
	/* Its place in its thread's time order: its start, but never before
	 * the previous segment's of its CPU (each CPU's are in order). */
	uint64_t first_tsc;
	uint64_t last_tsc;	/* of its last block, kept or not */
	uint64_t lo;		/* no op in it is earlier */
	uint32_t cpu;		/* index of the CPU's log in mt_decode.cpus */
	size_t order;		/* index in that log: ties in time keep it */
	size_t begin, end;	/* its ops: [begin, end) of that log's bytes */
};

/*
 * One CPU stream on its way from its decoding thread to the replay
 * (decode_thread.c). The decoding thread closes segments into segs and
 * hands them over (publishes them) in batches; the replay takes them
 * once every CPU has passed their time, and frees the log behind it.
 */
struct mt_cpu_log {
	uint32_t cpu;
	size_t len;		/* of its PT */
	struct mt_oplog ops;
	/* The decoding thread's: segments closed since the last hand-over,
	 * the open one last; how many there have been. */
	struct mt_seg *segs;
	size_t nsegs, segcap, nsegs_total;
	struct mt_blk_stats stats;
	uint64_t clamped;	/* times outside their stretch's bounds */
	int oom;
	int failed;		/* negative errno: the PT could not be read or decoded */
	char errmsg[256];	/* why, when it failed */
	size_t scan_held;	/* at most what its scan held: marks, offsets, PT */
	size_t pt_held;		/* most of its PT in memory at once */
	uint64_t sb_rewinds;	/* its switches read over (mt_sb_view) */
	uint64_t dwarf_deferred;	/* see mt_decode_stats */
	/* Its decoding thread's CPU time; decoded in two stages, the
	 * busier thread's. */
	uint64_t cpu_ns;
	int two_stages;		/* decoded on two threads (decode_cpu.c) */
	int split;		/* in pieces, on several (blksplit.h) */
	uint64_t pieces_ahead, pieces_redone;
	/* Shared, under mt_decode.lock: */
	struct mt_seg *ready;	/* handed over, not yet taken */
	size_t nready, ready_cap;
	/* No segment handed over later comes before it in time order (its
	 * first_tsc), nor has an op before op_floor. */
	uint64_t watermark, op_floor;
	int finished;		/* all handed over, stats final */
	/* The latest trace stop at the trigger's address before its time
	 * (the probe hit) in a closed segment, and that segment's thread. */
	uint64_t probe_tsc;
	uint32_t probe_tid;
	size_t released;	/* log bytes freed below this */
	size_t handed_len;	/* log length at the last hand-over */
	int waiting;		/* its thread waits for the replay to free log */
};

/* How the decoding threads and the replay share the work (decode_cpu.c). */
struct mt_pipe {
	pthread_mutex_t lock;
	pthread_cond_t progress;	/* a stream handed over or finished */
	pthread_cond_t room;		/* log freed, a job free, or stop */
	uint64_t handovers;		/* counts them, to wait without missing one */
	unsigned int free_jobs;		/* threads that may decode now */
	/* Streaming: a decoding thread waits while its log holds this much
	 * the replay has not freed, unless the replay cannot go on (stuck). */
	size_t log_limit;
	size_t log_peak;		/* most log held at once (hand-overs) */
	unsigned int blocked;		/* streams waiting for log to be freed */
	uint64_t stuck_runs;		/* times they were let run on (stuck) */
	unsigned int unfinished;	/* streams being decoded */
	int stuck;
	atomic_int stop;		/* the replay ended early: log nothing more */
	pthread_t *threads;
	size_t nthreads;
	struct workers *workers;	/* decode_cpu.c's */
	int initialized;		/* the lock and conditions are */
};

struct mt_decode {
	struct mt_bundle_reader *r;
	struct mt_decode_opts opts;
	struct pt_config cfg;		/* without begin/end */
	int cyc;			/* RTIT_CTL.CYCEn: times are estimates */
	struct mt_bincache bins;
	struct mt_funcs funcs;
	struct pt_image_section_cache *iscache;
	struct mt_kimage kernel;	/* the bundle's kernel code and symbols */
	struct pt_image *kernel_image;	/* the kernel alone: tasks without maps */
	struct mt_proc *procs;
	size_t nprocs;
	struct mt_sideband sb;
	struct mt_clock clock;
	struct mt_cpu_log *cpus;
	size_t ncpus;
	/* The replay follows the decoding (a late_inferred sink) or starts
	 * when every stream is decoded (the others need two replays). */
	int streaming;
	struct mt_pipe pipe;
	int have_trigger;
	struct mt_bundle_trigger trigger;
	uint64_t trigger_at;	/* TSC the trigger is placed at (decode.c) */
	struct mt_decode_stats stats;
	char errmsg[256];	/* why mt_decode_run() failed (mt_decode_error()) */
};

const struct mt_proc *mt_decode_proc(const struct mt_decode *d, uint32_t pid);
/* Whether V is in the list LIST of N (an empty list holds everything). */
static inline int mt_decode_selected(const uint32_t *list, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return !list || !n;
}
/* Reads every CPU stream through, on up to JOBS threads, for its errors
 * (the first stream's to fail is reported) and its length (ptcheck.c). */
int mt_decode_check_streams(struct mt_decode *d, unsigned int jobs, char *err, size_t errlen);
/* Starts a decoding thread per CPU stream, JOBS of them decoding at once
 * (some streams get a second thread: mt_decode_opts.jobs); -1 when none
 * could start. */
int mt_decode_cpus_start(struct mt_decode *d, unsigned int jobs);
/* Waits for them (after telling them to stop when STOP); 0, or the first
 * failed stream's negative errno (-ENOMEM when one ran out of memory) with
 * why in WHY. */
int mt_decode_cpus_join(struct mt_decode *d, int stop, char *why, size_t whylen);
/* Rebuilds every thread's call stack and feeds the sink in time order,
 * from the segments the decoding threads hand over; on a failure of its
 * own (not a sink's) says why in mt_decode.errmsg. */
int mt_decode_threads(struct mt_decode *d, const struct mt_decode_sink *sink);
/* Where the trigger goes among the events, from the probe hits found so
 * far; FINAL when no later one can be found (call with the lock held). */
uint64_t mt_decode_place_trigger(const struct mt_decode *d, int *final);

#endif
