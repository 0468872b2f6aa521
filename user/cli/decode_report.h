/* SPDX-License-Identifier: MIT */
/*
 * What a decode could not show, told once at its end: the mappings that
 * had no usable code, the threads and time ranges that cost (gaps of
 * unmapped code, threads of the bundle without one decoded event), and
 * why a decode produced no instructions at all.
 */
#ifndef MTRACE_CLI_DECODE_REPORT_H
#define MTRACE_CLI_DECODE_REPORT_H

#include "bundle/bundle.h"
#include "decode_bundle.h"
#include "util/mt_index_map.h"
#include "decode/decode.h"

#include <stddef.h>
#include <stdint.h>

struct report_thread {
	uint32_t pid, tid;
	uint64_t nomap_gaps, first_ns, last_ns;	/* gaps of code without a binary */
};

struct decode_report {
	struct mt_decode_sink inner;	/* the output's own sink */
	struct report_thread *threads;	/* every thread the decoder gave events */
	size_t nthreads, cap;
	struct mt_index_map thread_ids;	/* (pid, tid) -> index in threads */
	uint64_t first_ns;		/* of the first event: times are told from it */
	int have_first, oom;
	char **missing;			/* distinct messages about mappings */
	size_t nmissing, missing_cap;
};

/* A sink that counts what passes and hands everything on to INNER. */
struct mt_decode_sink decode_report_sink(struct decode_report *rep,
					 const struct mt_decode_sink *inner);

/* For mt_decode_opts.missing (ctx: the report). */
void decode_report_missing(void *ctx, enum mt_severity sev, const char *msg);

/*
 * Prints the summary lines and returns CLI_EXIT_MISSING when traced code
 * could not be decoded (the trace entered a mapping without code: a gap of
 * unmapped code) unless Q allows missing code, else 0, with what to do
 * about it for Q's input, called NAME. CPUs that came online while armed
 * (no ring, MT_BUNDLE_PT_NO_RING) are named with the time from which
 * their code is missing; D converts that time.
 */
int decode_report_print(const struct decode_report *rep, struct mt_bundle_reader *r,
			const struct mt_decode *d, const struct mt_decode_stats *s,
			const struct decode_request *q, const char *name);

void decode_report_free(struct decode_report *rep);

#endif
