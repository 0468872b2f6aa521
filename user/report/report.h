/* SPDX-License-Identifier: MIT */
/*
 * What a snapshot says, for a terminal or a script: the trigger and the
 * call stack at it, the slowest calls per function, where the time went
 * (self and inclusive, per thread and overall), each thread's running,
 * in-syscall, descheduled and untraced shares, and the decode's health.
 * Built from the decoder's events through its sink (decode/decode.h), so
 * any narrowing (narrow/narrow.h) applies to it too.
 *
 *   struct mt_report *rep = mt_report_new();
 *   struct mt_decode_sink s = mt_report_sink(rep, mt_decode_label, d);
 *   mt_decode_run(d, &s);  mt_report_finish(rep, d, r);
 *   mt_report_text(stdout, &rep, 1, &style);  or mt_report_json(...)
 *
 * Several reports (one per snapshot) print together: per triggering
 * function the latency across snapshots, and what the slowest one did
 * differently from the median (report_compare.c).
 *
 * Rules: calls with both ends in the data have durations; those cut by
 * the snapshot's edges or a gap count as partial, with no duration.
 * Untraced time ([syscall], [untraced]) is no call: it counts in the
 * thread shares only. Inclusive time counts a recursive function once
 * (its outermost activation).
 */
#ifndef MTRACE_REPORT_H
#define MTRACE_REPORT_H

#include "bundle/bundle.h"
#include "decode/decode.h"
#include "util/mt_index_map.h"
#include "util/util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mt_rep_fn {
	const char *name;	/* in mt_report.names */
	uint64_t *durs;		/* complete calls' durations, ns (sorted at finish) */
	size_t ndurs, capdurs;
	uint64_t partial;	/* calls cut by an edge or a gap */
	uint64_t self, incl;	/* ns */
	uint64_t max;		/* the slowest complete call, ns ... */
	size_t *max_stack;	/* ... and its stack, outermost first (fn indexes) */
	size_t max_depth, cap_max_stack;
	uint32_t max_tid;
};

struct mt_rep_frame {
	size_t fn;		/* index in mt_report.fns; SIZE_MAX: untraced */
	int untraced;		/* 1 [syscall], 2 [untraced] */
	uint64_t begin, child;	/* child: time in its callees */
	int inferred;
};

struct mt_rep_thread {
	uint32_t pid, tid;
	char name[32];
	uint64_t first, last;	/* its data */
	uint64_t syscall, untraced, desched;	/* ns */
	uint64_t *self, *incl;	/* per function */
	uint32_t *active;	/* open activations per function */
	size_t nfn;
	struct mt_rep_frame *stack;
	size_t depth, cap;
	int seen;
};

struct mt_rep_gap {
	uint32_t tid;
	uint64_t ns, lost;	/* lost: to the thread's next event */
	const char *reason;
	int open;		/* lost still growing */
};

struct mt_report {
	struct mt_rep_fn *fns;	/* by index in names */
	size_t nfns, capfns;
	struct mt_names names;
	struct mt_rep_thread *threads;
	size_t nthreads, capthreads;
	struct mt_index_map thread_ids;	/* (pid, tid) -> index in threads */
	struct mt_rep_gap *gaps;
	size_t ngaps, capgaps;
	uint64_t first, last;	/* the window: first and last event */
	int have_events;
	/* the trigger */
	int have_trigger;
	uint64_t trigger_ns;
	uint32_t trigger_tid;
	char trigger_what[160];
	char trigger_symbol[96];
	size_t *trigger_stack;	/* fn indexes, outermost first; SIZE_MAX: untraced */
	uint64_t *trigger_begin;	/* when each of those frames began */
	size_t trigger_depth;
	/* how long the trigger's function (its symbol) had been running at
	 * the trigger: its innermost frame on the thread's stack; -1: none */
	int64_t trigger_latency;
	/* decode health */
	struct mt_decode_stats stats;
	uint64_t nomap_gaps;
	const char *label;	/* the bundle's name */
	int oom;
};

struct mt_report *mt_report_new(void);
void mt_report_free(struct mt_report *rep);
/* A sink filling REP; NAME gives a function id's name ([syscall] and
 * [untraced] for MT_FN_SYSCALL and MT_FN_UNTRACED): mt_decode_label()
 * with the decoder. */
struct mt_decode_sink mt_report_sink(struct mt_report *rep,
				     const char *(*name)(void *ctx, uint32_t id), void *ctx);
/* Ends the run: open frames end at the last event, durations are sorted,
 * and with D and R (may be NULL) the decode's statistics, thread names
 * and descheduled times (the bundle's context switches) are added.
 * Returns 0, or -ENOMEM. */
int mt_report_finish(struct mt_report *rep, struct mt_decode *d, struct mt_bundle_reader *r);

/* Nearest-rank percentile Q (0..100) of FN's durations; 0 without any. */
uint64_t mt_report_pct(const struct mt_rep_fn *fn, unsigned int q);
uint64_t mt_report_total(const struct mt_rep_fn *fn);

struct mt_report_style {
	int color;		/* ANSI colours */
	unsigned int width;	/* columns, 80 by default */
	unsigned int top;	/* rows per table */
};

/* Several snapshots compared (report_compare.c). */
struct mt_rep_compare {
	char symbol[96];	/* the triggering function */
	size_t n;		/* snapshots with a latency for it */
	uint64_t min, p50, max;
	size_t slowest;		/* index in the reports */
	struct {
		size_t fn;	/* in the slowest report */
		int64_t delta;	/* its inclusive time minus the median's, ns */
	} grew[8];
	size_t ngrew;
};

/* Fills C for the reports that share the first one's trigger symbol;
 * -1 when fewer than two have a latency for it. */
int mt_report_compare(struct mt_report *const *reps, size_t n, struct mt_rep_compare *c);

void mt_report_text(FILE *out, struct mt_report *const *reps, size_t n,
		    const struct mt_report_style *style);
void mt_report_json(FILE *out, struct mt_report *const *reps, size_t n);

#endif
