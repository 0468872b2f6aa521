// SPDX-License-Identifier: MIT
/*
 * Per-thread timelines: each thread's segments from all CPUs in time
 * order, replayed through its own call-stack rebuild into an event list;
 * then all threads' lists merged by time into the sink.
 */
#include "decode/decode_internal.h"

#include <stdlib.h>
#include <string.h>

struct timeline {
	struct mt_task task;
	const struct mt_seg **segs;
	size_t nsegs, segcap;
	struct mt_ev *ev;
	size_t nev, evcap;
	size_t seg_first;	/* where the call-stack segment's events start */
	size_t pos;		/* emission cursor */
	int oom;
};

struct replay {
	struct mt_decode *d;
	struct timeline *tl;
	const struct mt_proc *proc;
};

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	struct replay *r = ctx;

	mt_funcs_resolve(&r->d->funcs, r->proc, ip, fn);
}

/* Appends EV; inferred BEGINs go to the front of the current segment so
 * that outer frames come first (see mt_cs_ops.emit). */
static void collect(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;
	size_t at = t->nev;

	if (t->nev == t->evcap) {
		size_t cap = t->evcap ? t->evcap * 2 : 1024;
		struct mt_ev *v = realloc(t->ev, cap * sizeof(*v));

		if (!v) {
			t->oom = 1;
			return;
		}
		t->ev = v;
		t->evcap = cap;
	}
	if (ev->kind == MT_EV_BEGIN && (ev->flags & MT_EV_INFERRED)) {
		at = t->seg_first;
		memmove(&t->ev[at + 1], &t->ev[at], (t->nev - at) * sizeof(*t->ev));
	}
	t->ev[at] = *ev;
	t->nev++;
	if (ev->kind == MT_EV_GAP)
		t->seg_first = t->nev;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct mt_seg *x = *(const struct mt_seg *const *)a;
	const struct mt_seg *y = *(const struct mt_seg *const *)b;

	if (x->first_tsc != y->first_tsc)
		return x->first_tsc < y->first_tsc ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static void replay(struct mt_decode *d, struct timeline *t)
{
	struct replay r = { d, t, mt_decode_proc(d, t->task.pid) };
	const struct mt_cs_ops ops = { resolve, collect, &r };
	uint64_t last = 0;
	struct mt_cs cs;

	qsort(t->segs, t->nsegs, sizeof(*t->segs), cmp_seg);
	mt_cs_init(&cs, &ops);
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct mt_seg *s = t->segs[i];
		const struct mt_op *ops_ = d->cpus[s->cpu].ops;

		for (size_t k = s->begin; k < s->end; k++) {
			const struct mt_op *op = &ops_[k];

			switch (op->kind) {
			case MT_OP_BLOCK:
				mt_cs_block(&cs, op->tsc, op->a);
				break;
			case MT_OP_XFER:
				mt_cs_transfer(&cs, (enum mt_xfer)op->x, op->a);
				break;
			case MT_OP_DISABLE:
				mt_cs_disable(&cs, op->tsc, MT_OFF_OTHER, op->a);
				break;
			case MT_OP_GAP:
				mt_cs_gap(&cs, op->tsc, (uint32_t)op->a);
				break;
			}
			last = op->tsc;
		}
	}
	mt_cs_finish(&cs, last);
	d->stats.backsteps += cs.backsteps;
	mt_cs_fini(&cs);
}

static struct timeline *find_tl(struct timeline **tls, size_t *n, struct mt_task task)
{
	struct timeline *v;

	for (size_t i = 0; i < *n; i++)
		if ((*tls)[i].task.tid == task.tid && (*tls)[i].task.pid == task.pid)
			return &(*tls)[i];
	v = realloc(*tls, (*n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	*tls = v;
	memset(&v[*n], 0, sizeof(*v));
	v[*n].task = task;
	return &v[(*n)++];
}

static int add_seg(struct timeline *t, const struct mt_seg *s)
{
	if (t->nsegs == t->segcap) {
		size_t cap = t->segcap ? t->segcap * 2 : 16;
		const struct mt_seg **v = realloc(t->segs, cap * sizeof(*v));

		if (!v)
			return -1;
		t->segs = v;
		t->segcap = cap;
	}
	t->segs[t->nsegs++] = s;
	return 0;
}

/* Merges the timelines by time into the sink (ties: timeline order). */
static int emit(struct mt_decode *d, struct timeline *tls, size_t n,
		const struct mt_decode_sink *sink)
{
	uint64_t trig_ns = d->have_trigger ? mt_clock_ns(&d->clock, d->trigger.d.tsc) : 0;
	int trig_pending = d->have_trigger && sink->trigger;
	int rc;

	for (size_t i = 0; i < n; i++)
		if (sink->thread && (rc = sink->thread(sink->ctx, tls[i].task.pid, tls[i].task.tid)))
			return rc;
	for (;;) {
		struct timeline *best = NULL;
		uint64_t best_tsc = 0;

		/* Linear scan: traces have few threads, and it keeps the
		 * order of equal timestamps stable. */
		for (size_t i = 0; i < n; i++) {
			struct timeline *t = &tls[i];

			if (t->pos < t->nev && (!best || t->ev[t->pos].ts < best_tsc)) {
				best = t;
				best_tsc = t->ev[t->pos].ts;
			}
		}
		if (trig_pending && (!best || mt_clock_ns(&d->clock, best_tsc) > trig_ns)) {
			trig_pending = 0;
			if ((rc = sink->trigger(sink->ctx, trig_ns, &d->trigger)))
				return rc;
		}
		if (!best)
			return 0;
		rc = sink->event(sink->ctx, best->task.pid, best->task.tid,
				 mt_clock_ns(&d->clock, best_tsc), &best->ev[best->pos]);
		if (rc)
			return rc;
		best->pos++;
		d->stats.events++;
	}
}

int mt_decode_threads(struct mt_decode *d, const struct mt_decode_sink *sink)
{
	struct timeline *tls = NULL;
	size_t n = 0;
	int rc = 0;

	for (size_t c = 0; c < d->ncpus && !rc; c++) {
		for (size_t s = 0; s < d->cpus[c].nsegs && !rc; s++) {
			const struct mt_seg *seg = &d->cpus[c].segs[s];
			struct timeline *t;

			if (seg->begin == seg->end)
				continue;
			t = find_tl(&tls, &n, seg->task);
			rc = !t || add_seg(t, seg) ? -1 : 0;
		}
	}
	for (size_t i = 0; i < n && !rc; i++) {
		replay(d, &tls[i]);
		rc = tls[i].oom ? -1 : 0;
	}
	d->stats.threads = n;
	if (!rc)
		rc = emit(d, tls, n, sink);
	for (size_t i = 0; i < n; i++) {
		free(tls[i].segs);
		free(tls[i].ev);
	}
	free(tls);
	return rc;
}
