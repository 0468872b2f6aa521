// SPDX-License-Identifier: MIT
/*
 * Per-thread timelines: each thread's segments from all CPUs in time
 * order, replayed through its own call-stack rebuild into an event list;
 * then all threads' lists merged by time into the sink.
 */
#include "decode/decode_internal.h"

#include <stdlib.h>
#include <string.h>

/* A stretch of a thread's events between gaps, and its inferred frames. */
struct stretch {
	size_t ev_begin;	/* first event in timeline.ev */
	size_t pre_begin;	/* first inferred BEGIN in timeline.pre */
};

struct timeline {
	struct mt_task task;
	const struct mt_seg **segs;
	size_t nsegs, segcap;
	struct mt_ev *ev;
	size_t nev, evcap;
	/* Inferred BEGINs, in arrival order (innermost first) per stretch:
	 * kept apart so that placing them first costs no copying. */
	struct mt_ev *pre;
	size_t npre, precap;
	struct stretch *str;
	size_t nstr, strcap;
	/* emission cursor */
	size_t cur_str, pre_left, pos;
	int oom;
};

struct replay {
	struct mt_decode *d;
	struct timeline *tl;
	const struct mt_proc *proc;
	struct mt_funcs_cache cache;
};

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	struct replay *r = ctx;

	mt_funcs_resolve_cached(&r->d->funcs, &r->cache, r->proc, ip, fn);
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, (*cap ? *cap * 2 : 1024) * size);
	if (!p)
		return -1;
	*v = p;
	*cap = *cap ? *cap * 2 : 1024;
	return 0;
}

static void new_stretch(struct timeline *t)
{
	if (grow((void **)&t->str, &t->strcap, t->nstr, sizeof(*t->str))) {
		t->oom = 1;
		return;
	}
	t->str[t->nstr++] = (struct stretch){ t->nev, t->npre };
}

/* Appends EV to the timeline; inferred BEGINs go to the stretch's list of
 * frames to place, outermost first, before its other events. */
static void collect(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;

	if (ev->kind == MT_EV_BEGIN && (ev->flags & MT_EV_INFERRED)) {
		if (grow((void **)&t->pre, &t->precap, t->npre, sizeof(*t->pre))) {
			t->oom = 1;
			return;
		}
		t->pre[t->npre++] = *ev;
		return;
	}
	if (grow((void **)&t->ev, &t->evcap, t->nev, sizeof(*t->ev))) {
		t->oom = 1;
		return;
	}
	t->ev[t->nev++] = *ev;
	if (ev->kind == MT_EV_GAP)
		new_stretch(t);
}

static size_t pre_count(const struct timeline *t, size_t k)
{
	return (k + 1 < t->nstr ? t->str[k + 1].pre_begin : t->npre) - t->str[k].pre_begin;
}

/* The timeline's next event to emit, or NULL. */
static const struct mt_ev *peek(struct timeline *t)
{
	for (;;) {
		const struct stretch *k = &t->str[t->cur_str];
		size_t end = t->cur_str + 1 < t->nstr ? t->str[t->cur_str + 1].ev_begin : t->nev;

		if (t->pre_left)
			return &t->pre[k->pre_begin + t->pre_left - 1];
		if (t->pos < end)
			return &t->ev[t->pos];
		if (t->cur_str + 1 >= t->nstr)
			return NULL;
		t->pre_left = pre_count(t, ++t->cur_str);
	}
}

static void advance(struct timeline *t)
{
	if (t->pre_left)
		t->pre_left--;
	else
		t->pos++;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct mt_seg *x = *(const struct mt_seg *const *)a;
	const struct mt_seg *y = *(const struct mt_seg *const *)b;

	if (x->first_tsc != y->first_tsc)
		return x->first_tsc < y->first_tsc ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void replay(struct mt_decode *d, struct timeline *t)
{
	struct replay *r = calloc(1, sizeof(*r));
	struct mt_cs_ops ops = { resolve, collect, r };
	uint64_t last = 0;
	struct mt_cs cs;

	if (!r) {
		t->oom = 1;
		return;
	}
	r->d = d;
	r->tl = t;
	r->proc = mt_decode_proc(d, t->task.pid);
	qsort(t->segs, t->nsegs, sizeof(*t->segs), cmp_seg);
	new_stretch(t);
	mt_cs_init(&cs, &ops);
	for (size_t i = 0; i < t->nsegs; i++) {
		const struct mt_seg *s = t->segs[i];
		const struct mt_op *cpu_ops = d->cpus[s->cpu].ops;

		for (size_t k = s->begin; k < s->end; k++) {
			const struct mt_op *op = &cpu_ops[k];

			switch (op->kind) {
			case MT_OP_BLOCK:
				mt_cs_block(&cs, op->tsc, op->a);
				mt_cs_transfer(&cs, (enum mt_xfer)op->x, op->ret);
				break;
			case MT_OP_XFER:
				mt_cs_transfer(&cs, (enum mt_xfer)op->x, op->ret);
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
		if (s->last_tsc > last)
			last = s->last_tsc;
	}
	mt_cs_finish(&cs, last);
	d->stats.backsteps += cs.backsteps;
	mt_cs_fini(&cs);
	free(r);
	t->pre_left = t->nstr ? pre_count(t, 0) : 0;
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
		const struct mt_ev *best_ev = NULL;

		/* Linear scan: traces have few threads, and it keeps the
		 * order of equal timestamps stable. */
		for (size_t i = 0; i < n; i++) {
			const struct mt_ev *ev = tls[i].nstr ? peek(&tls[i]) : NULL;

			if (ev && (!best || ev->ts < best_ev->ts)) {
				best = &tls[i];
				best_ev = ev;
			}
		}
		if (trig_pending && (!best || mt_clock_ns(&d->clock, best_ev->ts) > trig_ns)) {
			trig_pending = 0;
			if ((rc = sink->trigger(sink->ctx, trig_ns, &d->trigger)))
				return rc;
		}
		if (!best)
			return 0;
		rc = sink->event(sink->ctx, best->task.pid, best->task.tid,
				 mt_clock_ns(&d->clock, best_ev->ts), best_ev);
		if (rc)
			return rc;
		advance(best);
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
		free(tls[i].pre);
		free(tls[i].str);
	}
	free(tls);
	return rc;
}
