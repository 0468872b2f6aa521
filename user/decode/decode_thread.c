// SPDX-License-Identifier: MIT
/*
 * Per-thread timelines: each thread's segments from all CPUs in time
 * order, replayed through its own call-stack rebuild, all threads merged by
 * time into the sink.
 *
 * Each thread's rebuild yields its events a few at a time and the merge
 * passes them on in time order; no thread's events are ever held in full.
 * Inferred frames (callers revealed by returns past the oldest known
 * frame) belong before everything else of their stretch (the run of
 * events between gaps) but are only found later. A sink that places each
 * thread's events by time itself (late_inferred, decode.h) takes them as
 * they are found, and every thread is replayed once; for any other sink a
 * first replay of the thread finds them, and the second starts each
 * stretch with them. Both run through replay() and the same rebuild.
 */
#include "decode/decode_internal.h"
#include "decode/inlines.h"
#include "util/mt_array.h"

#include <stdlib.h>
#include <string.h>

/* An inferred BEGIN as the first replay keeps it (a stretch has at most
 * MT_CS_MAX_INFERRED): all those of a stretch have its first timestamp. */
struct inferred_frame {
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
	const struct mt_seg **segs;	/* in time order */
	size_t nsegs, segs_cap;
	/*
	 * Sinks that need events in time order get each stretch's inferred
	 * frames first, found by a first replay: the frames in arrival
	 * order (innermost first) and where each stretch's start.
	 */
	struct inferred_frame *inferred;
	size_t ninferred, inferred_cap;
	struct stretch *stretches;
	size_t nstretches, stretches_cap;
	/* The replay: its position, and events made but not yet merged. */
	struct mt_cs cs;
	size_t seg;
	struct mt_oplog_cursor cursor;
	const struct mt_oplog *log;	/* segs[seg]'s, and where its ops end */
	size_t seg_end;
	uint64_t last_tsc;
	int done;
	struct mt_ev *queue;
	size_t queue_head, queue_len, queue_cap;
	/* Where the merge has got to in this thread: an inferred frame that
	 * arrives late (late_inferred sinks) takes its place there. */
	uint64_t merged_tsc;
	/*
	 * Time-ordered sinks: the stretch being replayed and its inferred
	 * frames not yet merged, inferred[due_first, due_first + ndue) taken
	 * from the end, due when the queue's head reaches due_at (they are
	 * not copied into the queue).
	 */
	size_t stretch;
	int stretch_started;
	size_t due_first, ndue, due_at;
	struct mt_ev due_ev;	/* the next of them, made whole */
	struct mt_inl *inl;	/* the last replay's inline frames */
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

static int is_inferred(const struct mt_ev *ev)
{
	return ev->kind == MT_EV_BEGIN && (ev->flags & MT_EV_INFERRED);
}

static void new_stretch(struct timeline *t)
{
	if (MT_ARRAY_RESERVE(t->stretches, t->stretches_cap, t->nstretches, 1)) {
		t->oom = 1;
		return;
	}
	t->stretches[t->nstretches++] = (struct stretch){ t->ninferred, 0 };
}

/* First replay: keeps the inferred frames of each stretch (it receives
 * only those and the gaps). */
static void collect_inferred(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;

	if (is_inferred(ev)) {
		if (MT_ARRAY_RESERVE(t->inferred, t->inferred_cap, t->ninferred, 1)) {
			t->oom = 1;
			return;
		}
		t->stretches[t->nstretches - 1].ts = ev->ts;
		t->inferred[t->ninferred++] = (struct inferred_frame){ ev->addr, ev->arg, ev->flags };
	} else if (ev->kind == MT_EV_GAP) {
		new_stretch(t);
	}
}

static void enqueue(struct timeline *t, const struct mt_ev *ev)
{
	if (t->queue_head == t->queue_len)
		t->queue_head = t->queue_len = t->due_at = 0;
	if (MT_ARRAY_RESERVE(t->queue, t->queue_cap, t->queue_len, 1)) {
		t->oom = 1;
		return;
	}
	t->queue[t->queue_len++] = *ev;
}

/* Time-ordered sinks: queues events, each stretch opening with its
 * inferred frames, outermost first (those the first replay found, in
 * reverse); the rebuild's own inferred frames are dropped. */
static void queue_in_order(void *ctx, const struct mt_ev *ev)
{
	struct timeline *t = ((struct replay *)ctx)->tl;

	if (!t->stretch_started && t->stretch < t->nstretches) {
		const struct stretch *s = &t->stretches[t->stretch];
		size_t end = t->stretch + 1 < t->nstretches ? s[1].first : t->ninferred;

		t->due_first = s->first;
		t->due_ev = (struct mt_ev){ .ts = s->ts, .kind = MT_EV_BEGIN };
		t->ndue = end - t->due_first;
		t->due_at = t->queue_len;
		t->stretch_started = 1;
	}
	if (is_inferred(ev))
		return;
	enqueue(t, ev);
	if (ev->kind == MT_EV_GAP) {
		t->stretch++;
		t->stretch_started = 0;
	}
}

/* late_inferred sinks: every event in the order the rebuild makes it. */
static void queue_as_found(void *ctx, const struct mt_ev *ev)
{
	enqueue(((struct replay *)ctx)->tl, ev);
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

/* The inline frames follow the code seen, the calls made included (the
 * address before the return address is the call's). */
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
	t->seg_end = s->end;
	mt_oplog_seek(&t->cursor, s->begin);
}

/*
 * Replays the thread's ops (and, after the last, ends its frames) until
 * an event is queued, inferred frames are due or memory ran out. Every
 * replay runs through here; the first of two queues nothing and runs to
 * the end. One call for many ops: the loop is the replay's hottest.
 */
static void replay(struct mt_decode *d, struct timeline *t)
{
	struct mt_op op;

	while (t->queue_head == t->queue_len && !t->ndue && !t->oom) {
		if (t->cursor.pos == t->seg_end) {
			if (t->done)
				return;
			if (t->segs[t->seg]->last_tsc > t->last_tsc)
				t->last_tsc = t->segs[t->seg]->last_tsc;
			if (++t->seg < t->nsegs) {
				enter_seg(d, t);
			} else {
				mt_cs_finish(&t->cs, t->last_tsc);
				t->done = 1;
			}
			continue;
		}
		mt_oplog_get(t->log, &t->cursor, &op);
		apply(t, &op);
		if (op.tsc > t->last_tsc)
			t->last_tsc = op.tsc;
	}
}

/* The events of a replay that feeds the merge pass the inline frames on
 * their way to the queue. */
static void inline_event(void *ctx, const struct mt_ev *ev)
{
	struct replay *r = ctx;

	mt_inl_event(&r->inl, &r->tl->cs, ev);
}

/* Starts a replay with EMIT receiving the events, or only the inferred
 * BEGINs and the gaps when INFERRED_ONLY (the first of two, which has no
 * inline frames: none is inferred). */
static void start_replay(struct mt_decode *d, struct timeline *t, struct replay *r,
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
	t->last_tsc = 0;
	t->done = 0;
	enter_seg(d, t);
}

/* The first of two replays, over the whole thread. */
static void find_inferred(struct mt_decode *d, struct timeline *t, struct replay *r)
{
	new_stretch(t);
	start_replay(d, t, r, collect_inferred, 1);
	replay(d, t);
	mt_cs_fini(&t->cs);
}

/* The thread's next event, or NULL when it has no more. */
static const struct mt_ev *peek(struct mt_decode *d, struct timeline *t)
{
	replay(d, t);
	if (t->ndue && t->queue_head == t->due_at) {
		const struct inferred_frame *f = &t->inferred[t->due_first + t->ndue - 1];

		t->due_ev.flags = f->flags;
		t->due_ev.arg = f->fn;
		t->due_ev.addr = f->addr;
		return &t->due_ev;
	}
	return t->queue_head < t->queue_len ? &t->queue[t->queue_head] : NULL;
}

/* Moves past the event peek() returned. */
static void consume(struct timeline *t)
{
	if (t->ndue && t->queue_head == t->due_at)
		t->ndue--;
	else
		t->queue_head++;
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

/* Successive events often share a timestamp: each is converted once. */
struct ns_cache {
	uint64_t tsc, ns;
	int valid;
};

static uint64_t to_ns(const struct mt_decode *d, struct ns_cache *c, uint64_t tsc)
{
	if (!c->valid || c->tsc != tsc) {
		c->ns = mt_clock_ns(&d->clock, tsc);
		c->tsc = tsc;
		c->valid = 1;
	}
	return c->ns;
}

/*
 * Merges the timelines by time into the sink (ties: timeline order). An
 * event's place is its time, or for an inferred frame that arrives late,
 * where its thread has got to.
 */
static int emit(struct mt_decode *d, struct timeline *tls, size_t n,
		const struct mt_decode_sink *sink)
{
	uint64_t trig_ns = d->have_trigger ? mt_clock_ns(&d->clock, d->trigger_at) : 0;
	int trig_pending = d->have_trigger && sink->trigger;
	struct ns_cache at_cache = { 0 }, ev_cache = { 0 };
	int rc;

	for (size_t i = 0; i < n; i++)
		if (sink->thread && (rc = sink->thread(sink->ctx, tls[i].task.pid, tls[i].task.tid)))
			return rc;
	for (;;) {
		struct timeline *best = NULL;
		const struct mt_ev *best_ev = NULL;
		uint64_t best_at = 0, at_ns = 0;

		/* Linear scan: traces have few threads, and it keeps the
		 * order of equal timestamps stable. */
		for (size_t i = 0; i < n; i++) {
			const struct mt_ev *ev = peek(d, &tls[i]);
			uint64_t at;

			if (tls[i].oom)
				return -1;
			if (!ev)
				continue;
			at = ev->ts > tls[i].merged_tsc ? ev->ts : tls[i].merged_tsc;
			if (!best || at < best_at) {
				best = &tls[i];
				best_ev = ev;
				best_at = at;
			}
		}
		if (best)
			at_ns = to_ns(d, &at_cache, best_at);
		/* After the events at its time, but before the frames the
		 * data's end closes there: they were open at the trigger. */
		if (trig_pending && (!best || at_ns > trig_ns ||
				     (at_ns == trig_ns && best_ev->kind == MT_EV_END &&
				      (best_ev->flags & MT_EV_TRUNCATED)))) {
			trig_pending = 0;
			if ((rc = sink->trigger(sink->ctx, trig_ns, &d->trigger)))
				return rc;
		}
		if (!best)
			return 0;
		rc = sink->event(sink->ctx, best->task.pid, best->task.tid,
				 best_ev->ts == best_at ? at_ns : to_ns(d, &ev_cache, best_ev->ts),
				 best_ev);
		if (rc)
			return rc;
		best->merged_tsc = best_at;
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
			rc = !t || MT_ARRAY_RESERVE(t->segs, t->segs_cap, t->nsegs, 1) ? -1 : 0;
			if (!rc)
				t->segs[t->nsegs++] = seg;
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
		qsort(tls[i].segs, tls[i].nsegs, sizeof(*tls[i].segs), cmp_seg);
		if (!sink->late_inferred)
			find_inferred(d, &tls[i], &rs[i]);
		start_replay(d, &tls[i], &rs[i], sink->late_inferred ? queue_as_found : queue_in_order,
			     0);
		rc = tls[i].oom ? -1 : 0;
	}
	d->stats.threads = n;
	if (!rc)
		rc = emit(d, tls, n, sink);
	for (size_t i = 0; i < n; i++) {
		if (rs && rs[i].tl) {	/* its replay was started */
			d->stats.backsteps += tls[i].cs.backsteps;
			mt_cs_fini(&tls[i].cs);
			mt_inl_fini(&rs[i].inl);
		}
		free(tls[i].segs);
		free(tls[i].inferred);
		free(tls[i].stretches);
		free(tls[i].queue);
	}
	free(rs);
	free(tls);
	return rc;
}
