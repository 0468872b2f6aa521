/* SPDX-License-Identifier: MIT */
/*
 * The decoded call and return steps of every thread, as the ground-truth
 * and perf-comparison tests compare them, and where the PT generator and
 * its test programs are.
 *
 * Calls are BEGIN events that are no tail call, inferred, asynchronous or
 * inline frame, with the call's target; returns are END events flagged MT_EV_RET,
 * with the address returned to.
 */
#ifndef TEST_DECODE_STEPS_H
#define TEST_DECODE_STEPS_H

#include "test_decode_fixture.h"

#include "decode/decode.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct step {
	uint32_t tid;
	char kind;		/* 'c' call, 'r' return */
	uint64_t to;
	uint64_t index;		/* truth: the thread's instruction index */
	/* Truth: TSC after it (ns * 2 once steps_decode() has put it on the
	 * bundle's clock); decoded: ns * 2 (2 GHz clock). */
	uint64_t tsc;
};

struct steps {
	struct step *v;
	size_t n, cap;
};

static inline void add_step(struct steps *s, uint32_t tid, char kind, uint64_t to, uint64_t index,
			    uint64_t tsc)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		MT_ASSERT(s->v);
	}
	s->v[s->n++] = (struct step){ tid, kind, to, index, tsc };
}

static inline int collect(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	(void)pid;
	if (ev->kind == MT_EV_BEGIN && ev->arg >= MT_FN_FIRST_USER &&
	    !(ev->flags & (MT_EV_TAIL | MT_EV_INFERRED | MT_EV_ASYNC | MT_EV_INLINE)))
		add_step(ctx, tid, 'c', ev->addr, 0, ns * 2);
	else if (ev->kind == MT_EV_END && (ev->flags & MT_EV_RET))
		add_step(ctx, tid, 'r', ev->addr, 0, ns * 2);
	return 0;
}

/*
 * The generator's calls and returns in the ground-truth file PATH. With
 * WRAPPED (a single CPU whose ring kept only the newest data) the truth's
 * "visible CPU TID INDEX" line says from which instruction on the trace
 * can be decoded; earlier steps are dropped.
 */
static inline void steps_read_truth(const char *path, struct steps *truth, int wrapped)
{
	char line[256];
	FILE *f = fopen(path, "r");

	MT_ASSERT_MSG(f, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long idx, tsc, from, to;
		char kind[16];
		unsigned tid, cpu;

		if (sscanf(line, "%15s %u %llu %llu %llx %llx", kind, &tid, &idx, &tsc, &from, &to) ==
			    6 &&
		    (!strcmp(kind, "call") || !strcmp(kind, "ret")))
			add_step(truth, tid, kind[0], to, idx, tsc);
		if (wrapped && sscanf(line, "visible %u %u %llu", &cpu, &tid, &idx) == 3) {
			size_t out = 0;

			for (size_t i = 0; i < truth->n; i++)
				if (truth->v[i].tid != tid || truth->v[i].index >= idx)
					truth->v[out++] = truth->v[i];
			truth->n = out;
		}
	}
	fclose(f);
}

/* Prints the steps of TID around a mismatch (at A in X, B in Y). */
static inline void steps_show_context(const char *xname, const struct steps *x, size_t a,
			       const char *yname, const struct steps *y, size_t b, uint32_t tid)
{
	const struct steps *s[2] = { x, y };
	const char *name[2] = { xname, yname };
	size_t at[2] = { a, b };

	for (int k = 0; k < 2; k++) {
		size_t i = at[k], back = 0;

		while (i > 0 && back < 6)
			back += s[k]->v[--i].tid == tid;
		printf("# %s:", name[k]);
		for (int shown = 0; i < s[k]->n && shown < 12; i++) {
			if (s[k]->v[i].tid != tid)
				continue;
			printf(" %s%c%" PRIx64, i == at[k] ? ">" : "", s[k]->v[i].kind, s[k]->v[i].to);
			shown++;
		}
		printf("\n");
	}
}

/* How far Y's times are from X's (the truth's), in TSC ticks. */
struct time_err {
	uint64_t max, sum, n;
	uint64_t same;		/* steps at the same time as the thread's previous one */
};

static inline void note_time(struct time_err *te, const struct step *truth, const struct step *got,
			     const struct step *prev_got)
{
	/* The truth's TSC is after the instruction: the callee's or the
	 * return target's first block starts then. */
	uint64_t e = truth->tsc > got->tsc ? truth->tsc - got->tsc : got->tsc - truth->tsc;

	if (!te)
		return;
	te->max = e > te->max ? e : te->max;
	te->sum += e;
	te->n++;
	te->same += prev_got && prev_got->tsc == got->tsc;
}

static inline int steps_equal(const struct step *p, const struct step *q)
{
	return p->kind == q->kind && p->to == q->to;
}

/*
 * Per thread, in order, X and Y must hold the same steps, and Y no thread
 * that X lacks. WHAT names the case. With TE, also how far Y's times are
 * from X's. 0 if so, else -1 with the first difference in MSG (and its
 * context printed).
 */
static inline int steps_diff(const char *what, const char *xname, const struct steps *x,
			     const char *yname, const struct steps *y, struct time_err *te,
			     char *msg, size_t len)
{
	for (size_t i = 0; i < x->n; i++) {
		uint32_t tid = x->v[i].tid;
		size_t a = 0, b = 0, na = 0, nb = 0;
		const struct step *prev = NULL;
		int seen = 0;

		for (size_t k = 0; k < i && !seen; k++)
			seen = x->v[k].tid == tid;
		if (seen)
			continue;
		for (;;) {
			while (a < x->n && x->v[a].tid != tid)
				a++;
			while (b < y->n && y->v[b].tid != tid)
				b++;
			if (a == x->n || b == y->n)
				break;
			if (!steps_equal(&x->v[a], &y->v[b])) {
				steps_show_context(xname, x, a, yname, y, b, tid);
				return snprintf(msg, len,
						"%s thread %u step %zu: %s %c 0x%" PRIx64
						", %s %c 0x%" PRIx64,
						what, tid, na, xname, x->v[a].kind, x->v[a].to, yname,
						y->v[b].kind, y->v[b].to), -1;
			}
			note_time(te, &x->v[a], &y->v[b], prev);
			prev = &y->v[b];
			a++, b++, na++, nb++;
		}
		while (a < x->n)
			na += x->v[a++].tid == tid;
		while (b < y->n)
			nb += y->v[b++].tid == tid;
		if (na != nb)
			return snprintf(msg, len, "%s thread %u: %zu steps in %s, %zu in %s", what,
					tid, na, xname, nb, yname), -1;
	}
	/* No thread of Y may be missing from X (e.g. a thread that did not run). */
	for (size_t i = 0; i < y->n; i++) {
		size_t k = 0;

		while (k < x->n && x->v[k].tid != y->v[i].tid)
			k++;
		if (k == x->n)
			return snprintf(msg, len, "%s: thread %u is in %s only", what, y->v[i].tid,
					yname), -1;
	}
	return 0;
}

/* steps_diff() as a test assertion. */
static inline void steps_compare(const char *what, const char *xname, const struct steps *x,
				 const char *yname, const struct steps *y, struct time_err *te)
{
	char msg[512];

	MT_ASSERT_MSG(steps_diff(what, xname, x, yname, y, te, msg, sizeof(msg)) == 0, "%s", msg);
}

/* Whether the next 8 steps of Y from B (or all that are left) follow X from A. */
static inline int steps_same_run(const struct steps *x, size_t a, const struct steps *y, size_t b)
{
	for (size_t k = 0; k < 8 && b + k < y->n; k++)
		if (a + k >= x->n || !steps_equal(&x->v[a + k], &y->v[b + k]))
			return 0;
	return 1;
}

/*
 * With overflows the packets of some instructions are lost; Y must be X
 * with (at most) one contiguous run removed per overflow: everything
 * before it and everything after it the same. Single-threaded runs only.
 */
static inline void steps_compare_around_gaps(const char *xname, const struct steps *x,
				      const char *yname, const struct steps *y,
				      uint64_t overflows)
{
	size_t a = 0, b = 0, runs = 0;

	while (b < y->n) {
		MT_ASSERT_MSG(a < x->n, "%s step %zu has no counterpart in %s", yname, b, xname);
		if (steps_equal(&x->v[a], &y->v[b])) {
			a++, b++;
			continue;
		}
		/* Skip the lost run: resume where the rest matches exactly. */
		runs++;
		MT_ASSERT_MSG(runs <= overflows, "more lost runs than overflows at %s step %zu",
			      yname, b);
		size_t from = a;

		while (a < x->n && !steps_same_run(x, a, y, b))
			a++;
		printf("# %s lost %s steps %zu-%zu (%zu)\n", yname, xname, from, a - 1, a - from);
	}
	MT_ASSERT_MSG(y->n > x->n / 2, "only %zu of %zu steps in %s", y->n, x->n, yname);
}

/* The decode of the bundle at PATH into SINK, with OPTS; returns its
 * stats. TRUTH (if given) is put on the bundle's clock. */
static inline struct mt_decode_stats steps_decode_into(const char *path,
						       const struct mt_decode_opts *opts,
						       struct mt_decode_sink *sink,
						       struct steps *truth)
{
	struct mt_decode_stats st;
	struct mt_bundle_reader *r;
	struct mt_decode *d;
	char err[512];

	MT_ASSERT_MSG(mt_bundle_open(&r, path, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_MSG(mt_decode_open(&d, r, opts, err, sizeof(err)) == 0, "%s", err);
	MT_ASSERT_EQ(mt_decode_run(d, sink), 0);
	st = *mt_decode_get_stats(d);
	for (size_t i = 0; truth && i < truth->n; i++)
		truth->v[i].tsc = mt_decode_ns(d, truth->v[i].tsc) * 2;
	mt_decode_free(d);
	mt_bundle_close(r);
	return st;
}

/* The decode of the bundle at PATH into GOT, with OPTS; returns its stats. */
static inline struct mt_decode_stats steps_decode_with(const char *path, struct steps *got,
						       const struct mt_decode_opts *opts,
						       struct steps *truth)
{
	/* collect() skips inferred frames: it can take them late, and the
	 * decoder then replays each thread once (decode.h). */
	struct mt_decode_sink sink = { NULL, collect, NULL, got, 1 };

	return steps_decode_into(path, opts, &sink, truth);
}

/* The bundle at PATH decoded with OPTS: the steps of WHOLE at the same
 * times (WHAT names the way); returns the stats. */
static inline struct mt_decode_stats steps_decode_same(const char *path, const struct steps *whole,
						       const struct mt_decode_opts *opts,
						       const char *what)
{
	struct steps got = { 0 };
	struct time_err te = { 0 };
	struct mt_decode_stats st = steps_decode_with(path, &got, opts, NULL);
	char msg[512];

	MT_ASSERT_MSG(steps_diff(what, "as usual", whole, what, &got, &te, msg, sizeof(msg)) == 0,
		      "%s", msg);
	MT_ASSERT_EQ(te.max, 0);
	free(got.v);
	return st;
}

/*
 * The bundle at PATH decoded again with every stream that can be split
 * into pieces of the shortest size, decoded ahead by other threads
 * (decode/blksplit.h): the steps of GOT, their times and the counts of ST
 * must not change, and no piece is decoded again (its start as assumed).
 */
static inline void steps_decode_split(const char *path, const struct steps *got,
				      const struct mt_decode_stats *st)
{
	const struct mt_decode_opts opts = { .jobs = 64, .pt_piece = 1 };
	struct mt_decode_stats sp = steps_decode_same(path, got, &opts, "pieces ahead");

	MT_ASSERT_EQ(sp.errors, st->errors);
	MT_ASSERT_EQ(sp.overflows, st->overflows);
	MT_ASSERT_EQ(sp.clamped, st->clamped);
	MT_ASSERT_EQ(sp.blocks, st->blocks);
	MT_ASSERT_EQ(sp.insns, st->insns);
	if (sp.split_streams)
		printf("# %" PRIu64 " streams split: %" PRIu64 " pieces ahead, %" PRIu64
		       " decoded again\n", sp.split_streams, sp.pieces_ahead, sp.pieces_redone);
	MT_ASSERT_EQ(sp.pieces_redone, 0);
}

/*
 * mtrace's decode of the bundle at PATH into GOT; returns its overflow
 * count, and *CLAMPED (if given) the times it clamped to their bounds.
 * TRUTH (if given) is put on the bundle's clock, as the decode's times
 * are: both in ns * 2, so that equal times compare equal. The bundle is
 * decoded a second time with the shortest PT windows, a window boundary
 * at every PSB that can take one (streams shorter than a PSB period have
 * none), on one thread per stream instead of two (decode_cpu.c), and with
 * every block logged (as while another thread reads the code's DWARF):
 * the steps, their times and the counts must not change.
 */
static inline uint64_t steps_decode(const char *path, struct steps *got, uint64_t *clamped,
				    struct steps *truth)
{
	/* ALL: one window a stream, none split into pieces (that is
	 * steps_decode_split()'s). */
	const struct mt_decode_opts all = { .jobs = 64, .pt_piece = (size_t)1 << 30 },
				    small = { .pt_window = 1, .jobs = 1, .defer_inline_ranges = 1 };
	struct mt_decode_stats st = steps_decode_with(path, got, &all, truth);
	struct steps cut = { 0 };
	struct time_err te = { 0 };
	struct mt_decode_stats sc = steps_decode_with(path, &cut, &small, NULL);
	char msg[512];

	MT_ASSERT_EQ(st.errors, 0);
	MT_ASSERT_MSG(steps_diff("windows", "one window", got, "windows at PSBs, every block logged",
				 &cut, &te, msg, sizeof(msg)) == 0, "%s", msg);
	MT_ASSERT_EQ(te.max, 0);
	MT_ASSERT_EQ(sc.errors, 0);
	MT_ASSERT_EQ(sc.overflows, st.overflows);
	MT_ASSERT_EQ(sc.clamped, st.clamped);
	MT_ASSERT_EQ(st.pt_windows, st.cpus);
	MT_ASSERT(sc.pt_windows >= st.pt_windows);
	/* Every stream in two stages, then none: the same steps again. */
	MT_ASSERT_EQ(st.two_stage_streams, st.cpus_decoded);
	MT_ASSERT_EQ(sc.two_stage_streams, 0);
	if (sc.pt_windows > st.pt_windows)
		printf("# %" PRIu64 " windows at PSBs\n", sc.pt_windows);
	free(cut.v);
	steps_decode_split(path, got, &st);
	if (clamped)
		*clamped = st.clamped;
	return st.overflows;
}

#endif
