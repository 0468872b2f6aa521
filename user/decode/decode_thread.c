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
 *
 * The segments come from the decoding threads (decode_cpu.c) as they are
 * handed over. For a late_inferred sink the replay follows the decoding:
 * a segment goes to its thread once no segment still to come can precede
 * it in time order, events go to the sink up to the time no stream can
 * still go below, and the log behind the replay is freed. For the others
 * the replay starts once every stream is decoded.
 */
#include "decode/decode_internal.h"
#include "decode/inlines.h"
#include "util/mt_array.h"
#include "util/mt_index_map.h"

#include <errno.h>
#include <stdio.h>
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

struct timeline;

/* What the replays of one process's threads look up alike, kept once for
 * them all: a process has hundreds of threads, and per thread these were
 * 80 KiB each. */
struct proc_lookups {
	struct mt_funcs_cache funcs;
	struct mt_inl_lookups inl;
};

struct replay {
	struct mt_decode *d;
	struct timeline *tl;
	const struct mt_proc *proc;
	struct proc_lookups *lk;	/* its process's */
	struct mt_inl inl;
};

/* The replay's side of a CPU stream: what it has taken of it. */
struct cpu_view {
	struct mt_oplog log;		/* its chunk directory as last taken */
	struct mt_seg *pending;		/* taken, for no thread yet, in order */
	size_t pending_head, npending, pending_cap;
	uint64_t watermark, op_floor;	/* as last handed over */
	int finished;
	/* Segments taken and not yet replayed, live[live_head] being the one
	 * numbered live_base in its stream (done: replayed or skipped), and
	 * where each begins: the log before the first can go. */
	struct live_seg {
		size_t begin;
		int done;
	} *live;
	size_t live_head, nlive, live_cap, live_base;
	size_t taken_end;		/* log end of the last segment taken */
};

struct timeline {
	struct mt_task task;
	struct replay rep;
	struct mt_seg *segs;		/* given to it, in time order */
	size_t nsegs, segs_cap;
	int in_seg;			/* segs[seg] is being replayed */
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

static void resolve(void *ctx, uint64_t ip, struct mt_cs_fn *fn)
{
	struct replay *r = ctx;

	mt_funcs_resolve_cached(&r->d->funcs, &r->lk->funcs, r->proc, ip, fn);
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

/* The inline frames follow the code seen, the calls made included (the
 * address before the return address is the call's). In the replay's
 * loop: it runs for every op. */
static inline __attribute__((always_inline)) void inline_at(struct timeline *t, uint64_t ip,
							     unsigned int x, uint64_t ret)
{
	if (t->inl)
		mt_inl_at(t->inl, &t->cs, t->cs.last_ts, ip,
			  x == MT_XFER_CALL && ret ? ret - 1 : 0);
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

/* Everything the merge works with. */
struct merge {
	struct mt_decode *d;
	const struct mt_decode_sink *sink;
	struct cpu_view *cpus;
	struct timeline **tls;
	size_t ntls, tls_cap;
	struct mt_index_map tl_ids;	/* (pid, tid) -> index in tls */
	struct proc_lookups **procs;	/* in the order their first thread came */
	size_t nprocs, procs_cap;
	struct mt_index_map proc_ids;	/* pid -> index in procs */
	int final;		/* every segment taken and given to its thread */
	int sink_rc;		/* what a sink's call that failed returned */
	int trig_pending;
	uint64_t trig_ns;
	struct ns_cache {
		uint64_t tsc, ns;
		struct mt_clock_piece piece;	/* the line of the last few */
		int valid;
	} at_cache, ev_cache;
	/* The most bytes of segments each kind of queue held at once (its
	 * capacity aside): per stream waiting, per stream not yet replayed,
	 * per thread. */
	size_t peak_pending, peak_live, peak_segs;
	/* merge_upto()'s threads with an event, by its place (heap_before()),
	 * and the event (valid until its thread's replay goes on). */
	struct heap_ent {
		uint64_t at;
		size_t tl;	/* index into tls */
		const struct mt_ev *ev;
	} *heap;
	size_t nheap, heap_cap;
};

static void note_peak(size_t *peak, size_t queued, size_t elem)
{
	if (queued * elem > *peak)
		*peak = queued * elem;
}

/* Segment S is replayed (or skipped): when the replay follows the
 * decoding, the log behind it may go (free_replayed()). */
static void seg_done(struct merge *m, const struct mt_seg *s)
{
	struct cpu_view *v = &m->cpus[s->cpu];

	if (m->d->streaming)
		v->live[v->live_head + (s->order - v->live_base)].done = 1;
}

/* Positions the replay at the start of segs[seg]. */
static void enter_seg(struct merge *m, struct timeline *t)
{
	const struct mt_seg *s = &t->segs[t->seg];

	t->log = &m->cpus[s->cpu].log;
	t->seg_end = s->end;
	t->in_seg = 1;
	mt_oplog_seek(&t->cursor, s->begin);
}

/* Events a replay queues ahead of the merge: peek() then finds the next
 * one queued instead of resuming the replay for every event. */
#define REPLAY_AHEAD 64

/*
 * Replays the thread's ops (and, after the last, ends its frames) until
 * REPLAY_AHEAD events are queued, inferred frames are due, memory ran out
 * or it has no segment yet to go on with. Every replay runs through here;
 * the first of two queues nothing and runs to the end. One call for many
 * ops: the loop is the replay's hottest.
 */
static void replay(struct merge *m, struct timeline *t)
{
	struct mt_op op;

	while (t->queue_len - t->queue_head < REPLAY_AHEAD && !t->ndue && !t->oom && !t->done) {
		if (!t->in_seg) {
			if (t->seg < t->nsegs) {
				enter_seg(m, t);
			} else if (m->final) {
				mt_cs_finish(&t->cs, t->last_tsc);
				t->done = 1;
			} else {
				return;
			}
			continue;
		}
		if (t->cursor.pos == t->seg_end) {
			if (t->segs[t->seg].last_tsc > t->last_tsc)
				t->last_tsc = t->segs[t->seg].last_tsc;
			seg_done(m, &t->segs[t->seg]);
			t->seg++;
			t->in_seg = 0;
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

	mt_inl_before(&r->inl, &r->tl->cs, ev);
	/* The late sinks' queue called directly: every event comes here. */
	if (r->inl.emit == queue_as_found)
		enqueue(r->tl, ev);
	else
		r->inl.emit(r->inl.ctx, ev);
}

/* Starts a replay with EMIT receiving the events, or only the inferred
 * BEGINs and the gaps when INFERRED_ONLY (the first of two, which has no
 * inline frames: none is inferred). */
static void start_replay(struct timeline *t, void (*emit)(void *ctx, const struct mt_ev *ev),
			 int inferred_only)
{
	struct replay *r = &t->rep;
	const struct mt_cs_ops ops = { resolve, inferred_only ? emit : inline_event, r };

	mt_cs_init(&t->cs, &ops);
	t->cs.inferred_only = inferred_only;
	t->inl = NULL;
	if (!inferred_only) {
		mt_inl_init(&r->inl, &r->d->funcs, r->proc, &r->lk->inl, emit, r);
		t->inl = &r->inl;
	}
	t->seg = 0;
	t->in_seg = 0;
	t->last_tsc = 0;
	t->done = 0;
}

/* The first of two replays, over the whole thread. */
static void find_inferred(struct merge *m, struct timeline *t)
{
	new_stretch(t);
	start_replay(t, collect_inferred, 1);
	replay(m, t);
	mt_cs_fini(&t->cs);
}

/* The thread's next event, or NULL when it has none yet (or no more). */
static const struct mt_ev *peek(struct merge *m, struct timeline *t)
{
	if (t->queue_head == t->queue_len)
		replay(m, t);
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

static inline __attribute__((always_inline)) uint64_t to_ns(const struct mt_decode *d,
							  struct ns_cache *c, uint64_t tsc)
{
	if (c->valid && c->tsc == tsc)
		return c->ns;
	if (!c->valid || tsc < c->piece.lo || tsc >= c->piece.hi)
		mt_clock_find(&d->clock, tsc, &c->piece);
	c->valid = 1;
	c->tsc = tsc;
	c->ns = mt_clock_piece_ns(&c->piece, tsc);
	return c->ns;
}

/* Compares segments in time order (ties: CPU, then the CPU's order). */
static int seg_before(const struct mt_seg *x, const struct mt_seg *y)
{
	if (x->first_tsc != y->first_tsc)
		return x->first_tsc < y->first_tsc;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu;
	return x->order < y->order;
}

/* Process PID's lookups, made with its first thread; NULL when out of
 * memory. */
static struct proc_lookups *lookups_of(struct merge *m, uint32_t pid)
{
	int added;
	struct proc_lookups **lk = mt_index_map_slot(&m->proc_ids, pid, &m->procs, &m->nprocs,
						     &m->procs_cap, sizeof(*lk), &added);

	if (lk && added)
		*lk = calloc(1, sizeof(**lk));
	return lk ? *lk : NULL;
}

/* The thread's timeline, made on its first segment (in time order, so
 * threads are numbered alike however the streams were decoded). */
static struct timeline *timeline_of(struct merge *m, struct mt_task task)
{
	struct timeline **slot, *t;
	struct proc_lookups *lk;
	int added, rc;

	slot = mt_index_map_slot(&m->tl_ids, mt_index_map_task(task.pid, task.tid), &m->tls,
				 &m->ntls, &m->tls_cap, sizeof(*slot), &added);
	if (!slot || !added)
		return slot ? *slot : NULL;
	lk = lookups_of(m, task.pid);
	t = *slot = lk ? calloc(1, sizeof(*t)) : NULL;
	if (!t)
		return NULL;
	t->task = task;
	t->rep = (struct replay){ .d = m->d, .tl = t, .proc = mt_decode_proc(m->d, task.pid),
				  .lk = lk };
	if (m->d->streaming) {
		start_replay(t, queue_as_found, 0);
		rc = m->sink->thread ? m->sink->thread(m->sink->ctx, task.pid, task.tid) : 0;
		if (rc) {
			m->sink_rc = rc;
			return NULL;
		}
	}
	return t;
}

/* Gives a taken segment to its thread (or skips it). */
static int give(struct merge *m, const struct mt_seg *s)
{
	struct timeline *t;

	if (s->begin == s->end || !mt_decode_selected(m->d->opts.tids, m->d->opts.ntids, s->task.tid)) {
		seg_done(m, s);
		return 0;
	}
	t = timeline_of(m, s->task);
	if (!t)
		return m->sink_rc ? m->sink_rc : -ENOMEM;
	if (MT_ARRAY_RESERVE(t->segs, t->segs_cap, t->nsegs, 1))
		return -ENOMEM;
	/* Replayed segments go, when the replay follows the decoding. */
	if (m->d->streaming)
		MT_ARRAY_DROP_HEAD(t->segs, t->seg, t->nsegs, 64);
	t->segs[t->nsegs++] = *s;
	note_peak(&m->peak_segs, t->nsegs - t->seg, sizeof(*t->segs));
	return 0;
}

/* Frees the log of stream C before its first segment not yet replayed
 * (lock held), and wakes a stream waiting for room. */
static void free_replayed(struct merge *m, size_t c)
{
	struct mt_cpu_log *log = &m->d->cpus[c];
	struct cpu_view *v = &m->cpus[c];
	size_t released;

	while (v->live_head < v->nlive && v->live[v->live_head].done) {
		v->live_head++;
		v->live_base++;
	}
	MT_ARRAY_DROP_HEAD(v->live, v->live_head, v->nlive, 1024);
	released = v->live_head < v->nlive ? v->live[v->live_head].begin : v->taken_end;
	if (released == log->released)
		return;
	log->released = released;
	mt_oplog_release(&log->ops, released);
	pthread_cond_broadcast(&m->d->pipe.room);
}

/*
 * Takes what the decoding threads handed over (lock held): their
 * segments, how far each stream has got and its chunk directory; frees
 * the log the replay is done with. Returns whether anything new came.
 */
static int take(struct merge *m, uint64_t *seen)
{
	struct mt_decode *d = m->d;
	int news = *seen != d->pipe.handovers;
	size_t held = 0;

	*seen = d->pipe.handovers;
	for (size_t c = 0; c < d->ncpus; c++)
		held += d->cpus[c].handed_len - d->cpus[c].released;
	if (held > d->pipe.log_peak)
		d->pipe.log_peak = held;
	for (size_t c = 0; c < d->ncpus; c++) {
		struct mt_cpu_log *log = &d->cpus[c];
		struct cpu_view *v = &m->cpus[c];

		/* Another stream's watermark can keep this queue from ever
		 * emptying: what was given goes all the same. */
		MT_ARRAY_DROP_HEAD(v->pending, v->pending_head, v->npending, 0);
		if (MT_ARRAY_RESERVE(v->pending, v->pending_cap, v->npending, log->nready) ||
		    (d->streaming && MT_ARRAY_RESERVE(v->live, v->live_cap, v->nlive, log->nready)))
			return -ENOMEM;
		for (size_t i = 0; i < log->nready; i++) {
			v->pending[v->npending++] = log->ready[i];
			if (d->streaming)
				v->live[v->nlive++] = (struct live_seg){ log->ready[i].begin, 0 };
			v->taken_end = log->ready[i].end;
		}
		note_peak(&m->peak_pending, v->npending - v->pending_head, sizeof(*v->pending));
		note_peak(&m->peak_live, v->nlive - v->live_head, sizeof(*v->live));
		log->nready = 0;
		v->log.chunks = log->ops.chunks;
		v->watermark = log->watermark;
		v->op_floor = log->op_floor;
		v->finished = log->finished;
		if (d->streaming)
			free_replayed(m, c);
	}
	return news;
}

/* Gives every taken segment that nothing still to come can precede to
 * its thread, in time order; sets final when all are given. Returns 0 or
 * the error of give(). */
static int give_ready(struct merge *m)
{
	struct mt_decode *d = m->d;
	int rc;

	for (;;) {
		struct cpu_view *best = NULL;
		int all_done = 1;

		for (size_t c = 0; c < d->ncpus; c++) {
			struct cpu_view *v = &m->cpus[c];

			all_done &= v->finished && v->pending_head == v->npending;
			if (v->pending_head < v->npending &&
			    (!best || seg_before(&v->pending[v->pending_head],
						 &best->pending[best->pending_head])))
				best = v;
		}
		m->final = all_done;
		if (!best)
			return 0;
		for (size_t c = 0; c < d->ncpus; c++) {
			const struct cpu_view *v = &m->cpus[c];
			const struct mt_seg *s = &best->pending[best->pending_head];

			/* A segment still to come from stream c is later in
			 * time order than (watermark, c). */
			if (v != best && !v->finished &&
			    !(s->first_tsc < v->watermark || (s->first_tsc == v->watermark && s->cpu < c)))
				return 0;
		}
		if ((rc = give(m, &best->pending[best->pending_head++])))
			return rc;
	}
}

/* No event still to come is earlier than this (inferred frames that come
 * late aside: they take their thread's place). */
static uint64_t event_bound(const struct merge *m)
{
	uint64_t bound = UINT64_MAX;

	for (size_t c = 0; c < m->d->ncpus; c++) {
		const struct cpu_view *v = &m->cpus[c];

		if (!v->finished && v->op_floor < bound)
			bound = v->op_floor;
		for (size_t i = v->pending_head; i < v->npending; i++)
			if (v->pending[i].lo < bound)
				bound = v->pending[i].lo;
	}
	return bound;
}

/*
 * The merge's order of threads: by the place of their next event (its
 * time, or for an inferred frame that arrives late, where its thread has
 * got to), ties in thread order. A heap, not a scan of every thread for
 * every event: a process has hundreds of threads.
 */
static int heap_before(const struct heap_ent *x, const struct heap_ent *y)
{
	return x->at != y->at ? x->at < y->at : x->tl < y->tl;
}

static void heap_down(struct merge *m, size_t i)
{
	struct heap_ent *h = m->heap, e = h[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= m->nheap)
			break;
		if (c + 1 < m->nheap && heap_before(&h[c + 1], &h[c]))
			c++;
		if (!heap_before(&h[c], &e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

/* Where the merge puts EV of T: its time, or for an inferred frame that
 * arrives late, where T has got to. */
static inline uint64_t place_of(const struct timeline *t, const struct mt_ev *ev)
{
	return ev->ts > t->merged_tsc ? ev->ts : t->merged_tsc;
}

/* Thread I's next event and its place in E: 1, or 0 when it has none
 * (yet), or -ENOMEM. */
static inline __attribute__((always_inline)) int place(struct merge *m, size_t i,
						      struct heap_ent *e)
{
	struct timeline *t = m->tls[i];
	const struct mt_ev *ev = peek(m, t);

	m->d->stats.merge_looks++;
	if (t->oom)
		return -ENOMEM;
	if (!ev)
		return 0;
	*e = (struct heap_ent){ place_of(t, ev), i, ev };
	return 1;
}

/* Every thread with an event, in order. A thread without one gets none
 * before the next hand-over: its segments come with it. */
static int heap_fill(struct merge *m)
{
	if (MT_ARRAY_RESERVE(m->heap, m->heap_cap, 0, m->ntls))
		return -ENOMEM;
	m->nheap = 0;
	for (size_t i = 0; i < m->ntls; i++) {
		int rc = place(m, i, &m->heap[m->nheap]);

		if (rc < 0)
			return rc;
		m->nheap += (size_t)rc;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		heap_down(m, i);
	return 0;
}

/* The first thread's event is passed on: its next one takes its place. */
static int heap_next(struct merge *m)
{
	int rc = place(m, m->heap[0].tl, &m->heap[0]);

	if (rc < 0)
		return rc;
	if (!rc)
		m->heap[0] = m->heap[--m->nheap];
	if (m->nheap > 1)
		heap_down(m, 0);
	return 0;
}

/* Passes on BEST's event EV, placed at AT (AT_NS), and moves past it. */
static inline __attribute__((always_inline)) int emit(struct merge *m, struct timeline *best,
						     const struct mt_ev *ev, uint64_t at,
						     uint64_t at_ns)
{
	const struct mt_decode_sink *sink = m->sink;
	int rc = sink->event(sink->ctx, best->task.pid, best->task.tid,
			     ev->ts == at ? at_ns : to_ns(m->d, &m->ev_cache, ev->ts), ev);

	if (rc)
		return m->sink_rc = rc;
	best->merged_tsc = at;
	consume(best);
	m->d->stats.events++;
	return 0;
}

/*
 * The first thread's events that still come before every other thread's
 * next one and up to BOUND (once final, any), straight from its queue:
 * one thread runs for thousands of events before another's turn, and the
 * heap's steps for each cost a fifth of the merge. Stops where the
 * general step has more to weigh: the trigger's time reached, or the
 * thread without an event until the next hand-over.
 */
static int emit_run(struct merge *m, uint64_t bound, int trig_final)
{
	size_t i = m->heap[0].tl;
	struct timeline *t = m->tls[i];
	uint64_t lim = m->final ? UINT64_MAX : bound;
	int tie = 1;	/* whether an event placed at LIM still goes first */
	int rc;

	if (m->nheap > 1) {
		const struct heap_ent *r = &m->heap[1];

		if (m->nheap > 2 && heap_before(&m->heap[2], r))
			r = &m->heap[2];
		if (r->at <= lim) {
			lim = r->at;
			tie = i < r->tl;
		}
	}
	for (;;) {
		const struct mt_ev *ev;
		uint64_t at, at_ns;

		ev = peek(m, t);
		if (!ev || t->oom)
			return 0;	/* heap_next() tells what it is */
		at = place_of(t, ev);
		if (at > lim || (at == lim && !tie))
			return 0;
		at_ns = to_ns(m->d, &m->at_cache, at);
		if (m->trig_pending && trig_final && at_ns >= m->trig_ns)
			return 0;
		if ((rc = emit(m, t, ev, at, at_ns)))
			return rc;
	}
}

/*
 * Passes events on to the sink in time order (ties: thread order), those
 * up to BOUND or, once final, all. Another thread's event still to come
 * may have BOUND's time: ties between threads then depend on when each
 * was decoded, which only a time-ordered sink sees (it orders each
 * thread's events; the batch merges once everything is there). An event's place is its time, or for
 * an inferred frame that arrives late, where its thread has got to. The
 * trigger goes after the events at its time, but before the frames the
 * data's end closes there (they were open at the trigger), once its place
 * is final (TRIG_FINAL).
 */
static int merge_upto(struct merge *m, uint64_t bound, int trig_final)
{
	struct mt_decode *d = m->d;
	const struct mt_decode_sink *sink = m->sink;
	int rc;

	if ((rc = heap_fill(m)))
		return rc;
	for (;;) {
		struct timeline *best = m->nheap ? m->tls[m->heap[0].tl] : NULL;
		const struct mt_ev *best_ev = best ? m->heap[0].ev : NULL;
		uint64_t best_at = best ? m->heap[0].at : 0, at_ns = 0;

		if (best && !m->final && best_at > bound)
			return 0;
		if (best)
			at_ns = to_ns(d, &m->at_cache, best_at);
		else if (!m->final)
			return 0;
		if (m->trig_pending && trig_final &&
		    (!best || at_ns > m->trig_ns ||
		     (at_ns == m->trig_ns && best_ev->kind == MT_EV_END &&
		      (best_ev->flags & MT_EV_TRUNCATED)))) {
			m->trig_pending = 0;
			if ((rc = sink->trigger(sink->ctx, m->trig_ns, &d->trigger)))
				return m->sink_rc = rc;
		}
		if (!best)
			return 0;
		if ((rc = emit(m, best, best_ev, best_at, at_ns)) ||
		    (rc = emit_run(m, bound, trig_final)) || (rc = heap_next(m)))
			return rc;
	}
}

/* Batch: every segment is given; the inferred frames first, then the
 * threads declared, then the events. */
static int start_batch(struct merge *m)
{
	int rc;

	for (size_t i = 0; i < m->ntls; i++) {
		struct timeline *t = m->tls[i];

		find_inferred(m, t);
		start_replay(t, queue_in_order, 0);
		if (t->oom)
			return -ENOMEM;
		if (m->sink->thread && (rc = m->sink->thread(m->sink->ctx, t->task.pid, t->task.tid)))
			return m->sink_rc = rc;
	}
	return 0;
}

/* Frees the merge; notes the most its segment queues held (their
 * capacities, which never shrink). */
static void free_merge(struct merge *m)
{
	uint64_t held = 0;

	for (size_t i = 0; i < m->ntls; i++) {
		struct timeline *t = m->tls[i];

		if (!t)
			continue;	/* out of memory making it: the run failed */
		held += t->segs_cap * sizeof(*t->segs);
		m->d->stats.backsteps += t->cs.backsteps;
		mt_cs_fini(&t->cs);
		mt_inl_fini(&t->rep.inl);
		free(t->segs);
		free(t->inferred);
		free(t->stretches);
		free(t->queue);
		free(t);
	}
	for (size_t c = 0; m->cpus && c < m->d->ncpus; c++) {
		held += m->cpus[c].pending_cap * sizeof(*m->cpus[c].pending) +
			m->cpus[c].live_cap * sizeof(*m->cpus[c].live);
		free(m->cpus[c].pending);
		free(m->cpus[c].live);
	}
	m->d->stats.seg_queues_held = held;
	m->d->stats.seg_queues_peak = m->peak_pending + m->peak_live + m->peak_segs;
	for (size_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i])
			mt_inl_lookups_fini(&m->procs[i]->inl);
		free(m->procs[i]);
	}
	free(m->procs);
	mt_index_map_free(&m->proc_ids);
	free(m->cpus);
	free(m->tls);
	mt_index_map_free(&m->tl_ids);
	free(m->heap);
}

/*
 * Whether every stream still decoding waits for the replay to free log
 * and none has room yet (lock held). A stream the replay has just freed
 * log for still counts as blocked until it runs: that one is about to go
 * on, and is not stuck.
 */
static int all_stuck(const struct mt_decode *d)
{
	const struct mt_pipe *p = &d->pipe;

	if (!p->blocked || p->blocked != p->unfinished)
		return 0;
	for (size_t c = 0; c < d->ncpus; c++)
		if (d->cpus[c].waiting && d->cpus[c].handed_len - d->cpus[c].released <= p->log_limit)
			return 0;
	return 1;
}

/*
 * Waits for the next hand-over (lock held). When every stream still
 * decoding waits for the replay to free log, and the replay waits for
 * them, nothing can go on: they are let run on past their limit.
 */
static void wait_handover(struct mt_decode *d, uint64_t seen)
{
	struct mt_pipe *p = &d->pipe;

	if (all_stuck(d)) {
		p->stuck = 1;
		p->stuck_runs++;
		pthread_cond_broadcast(&p->room);
	}
	while (seen == p->handovers)
		pthread_cond_wait(&p->progress, &p->lock);
	p->stuck = 0;
}

static int out_of_memory(struct mt_decode *d)
{
	snprintf(d->errmsg, sizeof(d->errmsg), "out of memory replaying the threads");
	return -ENOMEM;
}

int mt_decode_threads(struct mt_decode *d, const struct mt_decode_sink *sink)
{
	struct merge m = { .d = d, .sink = sink };
	struct mt_pipe *p = &d->pipe;
	uint64_t seen = 0, trig_at, bound;
	int rc = 0, news, trig_final = 0, started = 0;

	m.cpus = calloc(d->ncpus ? d->ncpus : 1, sizeof(*m.cpus));
	if (!m.cpus)
		return out_of_memory(d);
	m.trig_pending = d->have_trigger && sink->trigger;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		news = take(&m, &seen);
		rc = news < 0 ? -ENOMEM : give_ready(&m);
		if (rc)
			break;
		if (!d->streaming && !m.final) {
			wait_handover(d, seen);
			continue;
		}
		trig_at = mt_decode_place_trigger(d, &trig_final);
		bound = event_bound(&m);
		pthread_mutex_unlock(&p->lock);
		d->trigger_at = trig_at;
		m.trig_ns = mt_clock_ns(&d->clock, trig_at);
		if (!started++ && !d->streaming)
			rc = start_batch(&m);
		if (!rc)
			rc = merge_upto(&m, bound, trig_final);
		pthread_mutex_lock(&p->lock);
		if (rc || m.final)
			break;
		/* What the merge replayed can go; then wait for more. */
		if (!take(&m, &seen) && seen == p->handovers)
			wait_handover(d, seen);
	}
	pthread_mutex_unlock(&p->lock);
	d->stats.threads = m.ntls;
	free_merge(&m);
	/* Every failure of the merge's own is an allocation's. */
	return rc && !m.sink_rc ? out_of_memory(d) : rc;
}
