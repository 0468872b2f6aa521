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

/* A stretch of one CPU's stream that one thread ran. */
struct mt_seg {
	struct mt_task task;
	uint64_t first_tsc;
	uint64_t last_tsc;	/* of its last block, kept or not */
	uint32_t cpu;		/* index of the CPU's log in mt_decode.cpus */
	size_t order;		/* index in that log: ties in time keep it */
	size_t begin, end;	/* its ops: [begin, end) of that log's bytes */
};

struct mt_cpu_log {
	uint32_t cpu;
	size_t len;		/* of its PT, which the reader holds */
	struct mt_oplog ops;
	struct mt_seg *segs;
	size_t nsegs, segcap;
	struct mt_blk_stats stats;
	/* The latest trace stop at the trigger's address before its time
	 * (the probe hit), in segment probe_seg; 0: none. */
	uint64_t probe_tsc;
	size_t probe_seg;
	uint64_t clamped;	/* times outside their stretch's bounds */
	int oom;
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
	int have_trigger;
	struct mt_bundle_trigger trigger;
	uint64_t trigger_at;	/* TSC the trigger is placed at (decode.c) */
	struct mt_decode_stats stats;
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
/* Decodes every CPU stream into its log, in JOBS worker threads. */
int mt_decode_cpus(struct mt_decode *d, unsigned int jobs);
/* Rebuilds every thread's call stack and feeds the sink in time order. */
int mt_decode_threads(struct mt_decode *d, const struct mt_decode_sink *sink);

#endif
