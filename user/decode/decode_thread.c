// SPDX-License-Identifier: MIT
/*
 * Per-thread timelines: each thread's segments from all CPUs in time
 * order, replayed through its own call-stack rebuild, all threads merged by
 * time into the sink.
 *
 * The rebuild runs twice per thread. The first pass keeps only the frames
 * it infers (callers revealed by returns past the oldest known frame),
 * which must be written before everything else of their stretch (the run
 * of events between gaps) although they are only found later. The second
 * pass streams: each thread yields its events a few at a time, starting
 * each stretch with its inferred frames, and the merge passes them on in
 * time order. No thread's events are ever held in full.
 */
#include "decode/decode_internal.h"
#include "decode/inlines.h"

#include <stdlib.h>
#include <string.h>

/* An inferred BEGIN as pass 1 keeps it (a stretch can have very many):
 * all those of a stretch have its first timestamp (callstack.h). */
struct inferred {
	uint64_t addr;
	uint32_t fn;
	uint8_t flags;
} __attribute__((packed));

/* A stretch: where its inferred frames start in the list, and their time. */
struct stretch {
	size_t first;
	uint64_t ts;
};

struct timeline {
	struct mt_task task;
	const struct mt_seg **segs;
	size_t nsegs, segcap;
	/* Pass 1: inferred BEGINs in arrival order (innermost first), and
	 * the stretches. */
	struct inferred *pre;
	size_t npre, precap;
	struct stretch *str;
	size_t nstr, strcap;
	/* Pass 2: replay position, and events produced but not yet merged. */
	struct mt_cs cs;
	size_t seg;
	struct mt_oplog_cursor op;
	const struct mt_oplog *log;	/* segs[seg]'s, and where its ops end */
	size_t end;
	uint64_t last;
	int done;
	size_t cur_str;
	int str_open;		/* the stretch's inferred frames are due (inf below) */
	struct mt_ev *q;
	size_t qhead, qlen, qcap;
	/* The open stretch's inferred frames not yet merged: pre[inf, inf +
	 * ninf), taken from the end, due when the queue's head reaches inf_at
	 * (they are not copied: a stretch can have very many). */
	size_t inf, ninf, inf_at;
	struct mt_ev inf_ev;	/* the next of them, made whole */
	struct mt_inl *inl;	/* pass 2: inline frames */
	int oom;
};

struct replay {
	struct mt_decode *d;
	struct timeline *tl;
	const struct mt_proc *proc;
	struct mt_funcs_cache cache;
	struct mt_inl inl;
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
	p = realloc(*v, (*cap ? *cap * 2 : 64) * size);
	if (!p)
		return -1;
	*v = p;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

static int is_inferred(const struct mt_ev *ev)
{
	return ev->kind == MT_EV_BEGIN && (ev->flags & MT_EV_INFERRED);
}

static void new_stretch(struct timeline *t)
{
	if (grow((void **)&t->str, &t->strcap, t->nstr, sizeof(*t->str))) {
		t->oom = 1;
		return;
	}
	t->str[t->nstr++] = (struct stretch){ t->npre, 0 };
}

/* Pass 1: keeps the inferred frames of each stretch (it receives only
 * those and the gaps). */
static void collect_inferred(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;

	if (is_inferred(ev)) {
		if (grow((void **)&t->pre, &t->precap, t->npre, sizeof(*t->pre))) {
			t->oom = 1;
			return;
		}
		t->str[t->nstr - 1].ts = ev->ts;
		t->pre[t->npre++] = (struct inferred){ ev->addr, ev->arg, ev->flags };
	} else if (ev->kind == MT_EV_GAP) {
		new_stretch(t);
	}
}

static void enqueue(struct timeline *t, const struct mt_ev *ev)
{
	if (t->qhead == t->qlen)
		t->qhead = t->qlen = t->inf_at = 0;
	if (grow((void **)&t->q, &t->qcap, t->qlen, sizeof(*t->q))) {
		t->oom = 1;
		return;
	}
	t->q[t->qlen++] = *ev;
}

/* Pass 2: queues events, each stretch opening with its inferred frames,
 * outermost first (the same frames pass 1 saw, in reverse). */
static void queue_event(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;

	if (!t->str_open && t->cur_str < t->nstr) {
		size_t end = t->cur_str + 1 < t->nstr ? t->str[t->cur_str + 1].first : t->npre;

		t->inf = t->str[t->cur_str].first;
		t->inf_ev = (struct mt_ev){ .ts = t->str[t->cur_str].ts, .kind = MT_EV_BEGIN };
		t->ninf = end - t->inf;
		t->inf_at = t->qlen;
		t->str_open = 1;
	}
	if (is_inferred(ev))
		return;
	enqueue(t, ev);
	if (ev->kind == MT_EV_GAP) {
		t->cur_str++;
		t->str_open = 0;
	}
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

/* Pass 2: the inline frames follow the code seen, the calls made included
 * (the address before the return address is the call's). */
static void inline_at(struct timeline *t, uint64_t ip, unsigned int x, uint64_t ret)
{
	if (!t->inl)
		return;
	if (ip)
		mt_inl_at(t->inl, &t->cs, t->cs.last_ts, ip);
	if (x == MT_XFER_CALL && ret)
		mt_inl_at(t->inl, &t->cs, t->cs.last_ts, ret - 1);
}

static void apply(struct timeline *t, const struct mt_op *op)
{
	struct mt_cs *cs = &t->cs;
	uint64_t ret;

	switch (op->kind) {
	case MT_OP_BLOCK:
		ret = op->ret ? op->a + op->ret : 0;
		mt_cs_block(cs, op->tsc, op->a);
		inline_at(t, op->a, op->x, ret);
		mt_cs_transfer(cs, (enum mt_xfer)op->x, ret);
		break;
	case MT_OP_XFER:
		inline_at(t, 0, op->x, op->a);
		mt_cs_transfer(cs, (enum mt_xfer)op->x, op->a);
		break;
	case MT_OP_DISABLE:
		mt_cs_disable(cs, op->tsc, MT_OFF_OTHER, op->a);
		break;
	case MT_OP_GAP:
		mt_cs_gap(cs, op->tsc, (uint32_t)op->a);
		break;
	}
}

/* Positions the replay at the start of segs[seg]. */
static void enter_seg(struct mt_decode *d, struct timeline *t)
{
	const struct mt_seg *s = t->segs[t->seg];

	t->log = &d->cpus[s->cpu].ops;
	t->end = s->end;
	mt_oplog_seek(&t->op, s->begin);
}

/*
 * Replays the thread's ops (and, after the last, ends its frames) until
 * an event is queued, inferred frames are due or memory ran out. Both
 * passes replay through here; pass 1 queues nothing and runs to the end.
 * One call for many ops: the loop is the replay's hottest.
 */
static void replay(struct mt_decode *d, struct timeline *t)
{
	struct mt_op op;

	while (t->qhead == t->qlen && !t->ninf && !t->oom) {
		if (t->op.pos == t->end) {
			if (t->done)
				return;
			if (t->segs[t->seg]->last_tsc > t->last)
				t->last = t->segs[t->seg]->last_tsc;
			if (++t->seg < t->nsegs) {
				enter_seg(d, t);
			} else {
				mt_cs_finish(&t->cs, t->last);
				t->done = 1;
			}
			continue;
		}
		mt_oplog_get(t->log, &t->op, &op);
		apply(t, &op);
		if (op.tsc > t->last)
			t->last = op.tsc;
	}
}

/* Pass 2's events pass the inline frames on their way to the queue. */
static void inline_event(void *ctx, const struct mt_ev *ev)
{
	struct replay *r = ctx;

	mt_inl_event(&r->inl, &r->tl->cs, ev);
}

/* Starts a replay pass with EMIT receiving the events, or only the
 * inferred BEGINs and the gaps when INFERRED_ONLY (pass 1, which has no
 * inline frames: none is inferred). */
static void start_pass(struct mt_decode *d, struct timeline *t, struct replay *r,
		       void (*emit)(void *ctx, const struct mt_ev *ev), int inferred_only)
{
	const struct mt_cs_ops ops = { resolve, inferred_only ? emit : inline_event, r };

	mt_cs_init(&t->cs, &ops);
	t->cs.inferred_only = inferred_only;
	t->inl = NULL;
	if (!inferred_only) {
		mt_inl_init(&r->inl, &d->funcs, r->proc, emit, r);
		t->inl = &r->inl;
	}
	t->seg = 0;
	t->last = 0;
	t->done = 0;
	enter_seg(d, t);
}

/* Pass 1 over the whole thread. */
static void find_inferred(struct mt_decode *d, struct timeline *t, struct replay *r)
{
	qsort(t->segs, t->nsegs, sizeof(*t->segs), cmp_seg);
	new_stretch(t);
	start_pass(d, t, r, collect_inferred, 1);
	replay(d, t);
	mt_cs_fini(&t->cs);
}

/* The thread's next event in pass 2, or NULL when it has no more. */
static const struct mt_ev *peek(struct mt_decode *d, struct timeline *t)
{
	replay(d, t);
	if (t->ninf && t->qhead == t->inf_at) {
		const struct inferred *f = &t->pre[t->inf + t->ninf - 1];

		t->inf_ev.flags = f->flags;
		t->inf_ev.arg = f->fn;
		t->inf_ev.addr = f->addr;
		return &t->inf_ev;
	}
	return t->qhead < t->qlen ? &t->q[t->qhead] : NULL;
}

/* Moves past the event peek() returned. */
static void consume(struct timeline *t)
{
	if (t->ninf && t->qhead == t->inf_at)
		t->ninf--;
	else
		t->qhead++;
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
	uint64_t trig_ns = d->have_trigger ? mt_clock_ns(&d->clock, d->trigger_at) : 0;
	int trig_pending = d->have_trigger && sink->trigger;
	/* Successive events often share a timestamp: convert each once. */
	uint64_t ns = 0, ns_tsc = 0;
	int have_ns = 0;
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
			const struct mt_ev *ev = peek(d, &tls[i]);

			if (tls[i].oom)
				return -1;
			if (ev && (!best || ev->ts < best_ev->ts)) {
				best = &tls[i];
				best_ev = ev;
			}
		}
		if (best && (!have_ns || best_ev->ts != ns_tsc)) {
			ns = mt_clock_ns(&d->clock, best_ev->ts);
			ns_tsc = best_ev->ts;
			have_ns = 1;
		}
		/* After the events at its time, but before the frames the
		 * data's end closes there: they were open at the trigger. */
		if (trig_pending && (!best || ns > trig_ns ||
				     (ns == trig_ns && best_ev->kind == MT_EV_END &&
				      (best_ev->flags & MT_EV_TRUNCATED)))) {
			trig_pending = 0;
			if ((rc = sink->trigger(sink->ctx, trig_ns, &d->trigger)))
				return rc;
		}
		if (!best)
			return 0;
		rc = sink->event(sink->ctx, best->task.pid, best->task.tid, ns, best_ev);
		if (rc)
			return rc;
		consume(best);
		d->stats.events++;
	}
}

int mt_decode_threads(struct mt_decode *d, const struct mt_decode_sink *sink)
{
	struct timeline *tls = NULL;
	struct replay *rs = NULL;
	size_t n = 0;
	int rc = 0;

	for (size_t c = 0; c < d->ncpus && !rc; c++) {
		for (size_t s = 0; s < d->cpus[c].nsegs && !rc; s++) {
			const struct mt_seg *seg = &d->cpus[c].segs[s];
			struct timeline *t;

			if (seg->begin == seg->end ||
			    !mt_decode_selected(d->opts.tids, d->opts.ntids, seg->task.tid))
				continue;
			t = find_tl(&tls, &n, seg->task);
			rc = !t || add_seg(t, seg) ? -1 : 0;
		}
	}
	/* One replay context per thread, made once the timelines stay put. */
	rs = calloc(n ? n : 1, sizeof(*rs));
	if (!rs)
		rc = -1;
	for (size_t i = 0; i < n && !rc; i++) {
		rs[i].d = d;
		rs[i].tl = &tls[i];
		rs[i].proc = mt_decode_proc(d, tls[i].task.pid);
		find_inferred(d, &tls[i], &rs[i]);
		start_pass(d, &tls[i], &rs[i], queue_event, 0);
		rc = tls[i].oom ? -1 : 0;
	}
	d->stats.threads = n;
	if (!rc)
		rc = emit(d, tls, n, sink);
	for (size_t i = 0; i < n; i++) {
		if (rs && rs[i].tl) {	/* its second pass was started */
			d->stats.backsteps += tls[i].cs.backsteps;
			mt_cs_fini(&tls[i].cs);
			mt_inl_fini(&rs[i].inl);
		}
		free(tls[i].segs);
		free(tls[i].pre);
		free(tls[i].str);
		free(tls[i].q);
	}
	free(rs);
	free(tls);
	return rc;
}
