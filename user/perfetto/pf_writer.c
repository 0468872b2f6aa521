// SPDX-License-Identifier: MIT
/*
 * Writer core (pf_writer.h): argument checks, global event order, nesting
 * depth with the depth cap, snapshot edges, trigger placement and the size
 * warning. The encoding is left to the format (pf_proto.c, pf_json.c).
 */
#include "pf_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/errmsg.h"
#include "util/text.h"
#include "util/mt_array.h"

const char *pf_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "success";
	case PF_EINVAL: return "invalid argument";
	case PF_EORDER: return "event out of time order";
	case PF_ENOFRAME: return "end without an open frame";
	case PF_EINFERRED: return "inferred frame after the segment's first event";
	case PF_EEXIST: return "already declared";
	case PF_ENOPROC: return "process not declared";
	case PF_ENOMEM: return "out of memory";
	case PF_EIO: return "output error";
	}
	return "unknown error";
}

const char *pf_writer_error(const struct pf_writer *w)
{
	return w ? w->err : "no writer";
}

int pf_writer_late_inferred(const struct pf_writer *w)
{
	return w && w->opt.late_inferred;
}

__attribute__((format(printf, 3, 4)))
static int fail(struct pf_writer *w, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	if (code == PF_EIO || code == PF_ENOMEM)
		w->dead = true;
	return -code;
}

/* A format call failed: keep its reason. */
static int format_failed(struct pf_writer *w, int rc)
{
	if (rc == -PF_EIO)
		return fail(w, PF_EIO, "%s: %s", w->path, w->sink.msg);
	return fail(w, -rc, "%s", pf_strerror(rc));
}

void pf_options_init(struct pf_options *o)
{
	*o = (struct pf_options){
		.format = PF_FORMAT_PROTO,
		.max_depth = PF_MAX_DEPTH,
		.clock_id = 6,
		.warn_events = 5000000,
		.gzip_level = 1,
	};
}

static const char *check_options(const struct pf_options *o)
{
	if (o->format != PF_FORMAT_PROTO && o->format != PF_FORMAT_JSON)
		return "unknown output format";
	if (o->max_depth < 1 || o->max_depth > PF_MAX_DEPTH)
		return "max_depth must be 1..512 (Perfetto keeps no deeper slices)";
	/* 64..127 are sequence-scoped clocks; the writer uses 64 itself. */
	if (o->clock_id < 1 || o->clock_id > 63)
		return "clock_id must be a builtin Perfetto clock (1..63)";
	if (o->gzip_level < 1 || o->gzip_level > 9)
		return "gzip_level must be 1..9";
	if (o->late_inferred && o->format != PF_FORMAT_PROTO)
		return "late inferred frames need the protobuf format";
	if (o->late_inferred && o->max_depth <= PF_MAX_INFERRED)
		return "late inferred frames need max_depth above 64";
	return NULL;
}

static int32_t intern_name(struct pf_writer *w, const char *name)
{
	struct pf_frame f = { .symbol = name };

	return pf_funcs_intern(&w->funcs, &f);
}

int pf_writer_open(struct pf_writer **wp, const char *path, const struct pf_options *o,
		   char *err, size_t errlen)
{
	struct pf_writer *w;
	const char *bad;
	int rc;

	if (!wp || !path)
		return mt_errmsg(err, errlen, PF_EINVAL, "no output path");
	*wp = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return mt_errmsg(err, errlen, PF_ENOMEM, "out of memory");
	if (o)
		w->opt = *o;
	else
		pf_options_init(&w->opt);
	bad = check_options(&w->opt);
	if (bad) {
		free(w);
		return mt_errmsg(err, errlen, PF_EINVAL, "%s", bad);
	}
	w->ops = w->opt.format == PF_FORMAT_JSON ? &pf_json_ops : &pf_proto_ops;
	w->next_uuid = 1;
	/* Messages name the output as the user knows it (not a temporary file). */
	w->path = strdup(w->opt.name ? w->opt.name : path);
	w->opt.name = NULL;
	w->marker_func = intern_name(w, "[deeper frames hidden]");
	w->gap_func = intern_name(w, "trace gap");
	w->trigger_func = intern_name(w, "trigger");
	if (!w->path || w->marker_func < 0 || w->gap_func < 0 || w->trigger_func < 0) {
		rc = mt_errmsg(err, errlen, PF_ENOMEM, "out of memory");
		goto fail;
	}
	rc = pf_sink_open(&w->sink, path, w->opt.gzip_level, w->opt.rep);
	if (rc) {
		mt_errmsg(err, errlen, -rc, "%s", w->sink.msg);
		goto fail;
	}
	rc = w->ops->start(w);
	if (rc) {
		mt_errmsg(err, errlen, -rc, "%s: %s", path,
			  rc == -PF_EIO ? w->sink.msg : pf_strerror(rc));
		pf_sink_close(&w->sink);
		w->ops->free(w);
		goto fail;
	}
	*wp = w;
	return 0;
fail:
	pf_funcs_free(&w->funcs);
	free(w->path);
	free(w);
	return rc;
}

const struct pf_process *pf_find_process(const struct pf_writer *w, int32_t pid)
{
	for (size_t i = 0; i < w->nprocs; i++)
		if (w->procs[i].pid == pid)
			return &w->procs[i];
	return NULL;
}

static void free_argv(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

int pf_writer_add_process(struct pf_writer *w, int32_t pid, const char *name,
			  const char *const *argv, int argc)
{
	struct pf_process p = { .pid = pid };
	int rc;

	if (!w || argc < 0 || (argc && !argv))
		return w ? fail(w, PF_EINVAL, "add_process: bad argument list") : -PF_EINVAL;
	if (w->dead)
		return -PF_EIO;
	if (pf_find_process(w, pid))
		return fail(w, PF_EEXIST, "process %" PRId32 " declared twice", pid);
	p.name = mt_utf8_dup(name ? name : "");
	p.argv = calloc((size_t)argc + 1, sizeof(*p.argv));
	if (!p.name || !p.argv)
		goto oom;
	for (; p.argc < argc; p.argc++) {
		p.argv[p.argc] = mt_utf8_dup(argv[p.argc] ? argv[p.argc] : "");
		if (!p.argv[p.argc])
			goto oom;
	}
	if (MT_ARRAY_RESERVE(w->procs, w->procs_cap, w->nprocs, 1))
		goto oom;
	p.uuid = w->next_uuid++;
	w->procs[w->nprocs++] = p;
	rc = w->ops->process(w, &w->procs[w->nprocs - 1]);
	return rc ? format_failed(w, rc) : 0;
oom:
	free(p.name);
	free_argv(p.argv, p.argc);
	return fail(w, PF_ENOMEM, "out of memory declaring process %" PRId32, pid);
}

/* Adds T (a thread or a track of its own) named NAME; returns its handle. */
static int add_track(struct pf_writer *w, struct pf_thread *t, const char *name)
{
	int rc;

	if (w->nthreads >= INT32_MAX)
		return fail(w, PF_EINVAL, "too many threads");
	t->name = mt_utf8_dup(name ? name : "");
	if (!t->name || MT_ARRAY_RESERVE(w->threads, w->threads_cap, w->nthreads, 1)) {
		free(t->name);
		return fail(w, PF_ENOMEM, "out of memory declaring thread %" PRId64, t->tid);
	}
	t->uuid = w->next_uuid++;
	w->threads[w->nthreads++] = *t;
	rc = w->ops->thread(w, &w->threads[w->nthreads - 1]);
	return rc ? format_failed(w, rc) : (int)(w->nthreads - 1);
}

int pf_writer_add_thread(struct pf_writer *w, int32_t pid, int64_t tid, const char *name)
{
	struct pf_thread t = { .pid = pid, .tid = tid };

	if (!w)
		return -PF_EINVAL;
	if (w->dead)
		return -PF_EIO;
	if (!pf_find_process(w, pid))
		return fail(w, PF_ENOPROC, "thread %" PRId64 ": process %" PRId32 " not declared",
			    tid, pid);
	for (size_t i = 0; i < w->nthreads; i++)
		if (w->threads[i].tid == tid && w->threads[i].pid == pid)
			return fail(w, PF_EEXIST, "thread %" PRId64 " declared twice", tid);
	return add_track(w, &t, name);
}

int pf_writer_add_track(struct pf_writer *w, const char *name)
{
	struct pf_thread t = { .pid = PF_JSON_TRACK_PID, .plain = true };

	if (!w)
		return -PF_EINVAL;
	if (w->dead)
		return -PF_EIO;
	t.tid = (int64_t)w->nthreads + 1;	/* its JSON row */
	return add_track(w, &t, name);
}

int32_t pf_writer_intern(struct pf_writer *w, const struct pf_frame *f)
{
	int32_t id;

	if (!w || !f)
		return w ? fail(w, PF_EINVAL, "intern: no frame") : -PF_EINVAL;
	id = pf_funcs_intern(&w->funcs, f);
	return id < 0 ? fail(w, PF_ENOMEM, "out of memory interning a function") : id;
}

static int write_trigger(struct pf_writer *w)
{
	int rc = w->ops->trigger(w);

	if (rc)
		return format_failed(w, rc);
	w->trig_pending = false;
	w->stats.events++;
	return 0;
}

int pf_writer_set_trigger(struct pf_writer *w, const struct pf_trigger *t)
{
	const struct pf_process *p;
	int rc;

	if (!w || !t)
		return w ? fail(w, PF_EINVAL, "set_trigger: no trigger") : -PF_EINVAL;
	if (w->dead)
		return -PF_EIO;
	if (w->trig_set)
		return fail(w, PF_EEXIST, "trigger set twice");
	if (t->ts_ns < w->last_ts && !w->opt.late_inferred)
		return fail(w, PF_EORDER, "trigger at %" PRIu64 " is before the last event (%" PRIu64 ")",
			    t->ts_ns, w->last_ts);
	w->trig = *t;
	w->trig.reason = mt_utf8_dup(t->reason ? t->reason : "unknown");
	w->trig.freeze_path = mt_utf8_dup(t->freeze_path ? t->freeze_path : "unknown");
	w->trig.symbol = t->symbol ? mt_utf8_dup(t->symbol) : NULL;
	if (!w->trig.reason || !w->trig.freeze_path || (t->symbol && !w->trig.symbol))
		return fail(w, PF_ENOMEM, "out of memory setting the trigger");
	w->trig_set = w->trig_pending = true;
	p = pf_find_process(w, t->pid);
	w->trig_parent = p ? p->uuid : 0;
	w->trig_uuid = w->next_uuid++;
	rc = w->ops->trigger_track(w);
	return rc ? format_failed(w, rc) : 0;
}

/* No event of @t may come before this time. With late inferred frames
 * every track has a sequence of its own for what comes in order: the
 * order is per track. */
PF_HOT uint64_t order_floor(const struct pf_writer *w, const struct pf_thread *t)
{
	return w->opt.late_inferred ? t->last_ts : w->last_ts;
}

/* An event of @t at @ts is taken: the order goes on from it. */
PF_HOT void take_order(struct pf_writer *w, struct pf_thread *t, uint64_t ts)
{
	t->last_ts = ts;
	if (ts > w->last_ts)
		w->last_ts = ts;
}

/* Checks @thread and @ts for an event; on success the event may be written
 * and the pending trigger has been written if the event is past it. A
 * LATE event (an inferred frame, late_inferred) goes back in time. */
PF_HOT int event_start(struct pf_writer *w, int thread, uint64_t ts, struct pf_thread **tp,
		       bool late)
{
	uint64_t last;

	if (!w)
		return -PF_EINVAL;
	if (w->dead)
		return -PF_EIO;
	if (thread < 0 || (size_t)thread >= w->nthreads)
		return fail(w, PF_EINVAL, "unknown thread handle %d", thread);
	*tp = &w->threads[thread];
	if (late)
		return 0;
	last = order_floor(w, *tp);
	if (ts < last)
		return fail(w, PF_EORDER,
			    "thread %" PRId64 ": event at %" PRIu64 " is before the last event (%" PRIu64 ")",
			    (*tp)->tid, ts, last);
	if (w->trig_pending && w->trig.ts_ns < ts) {
		int rc = write_trigger(w);

		if (rc)
			return rc;
	}
	take_order(w, *tp, ts);
	return 0;
}

/*
 * late_inferred: whether an event of T at TS waits for the end of its
 * stretch (release()), which opens at the thread's first event after the
 * start or a gap. The stretch's inferred frames come as the decoder finds
 * them, after other events, but the importer must see them before
 * everything else at the stretch's first time: events at that time wait,
 * and all are written when the stretch ends, on a sequence of the
 * thread's own, after what was written at that time before. Later events
 * sort after them by time. Waiting are the few events at one timestamp.
 */
PF_HOT bool held_back(struct pf_writer *w, struct pf_thread *t, uint64_t ts)
{
	if (!w->opt.late_inferred || t->late || t->plain)
		return false;
	if (!t->stretch_open) {
		t->stretch_open = true;
		t->stretch_ts = ts;
	}
	return ts == t->stretch_ts;
}

static int hold(struct pf_writer *w, struct pf_thread *t, const struct pf_held *h)
{
	if (MT_ARRAY_RESERVE(t->held, t->held_cap, t->nheld, 1))
		return fail(w, PF_ENOMEM, "out of memory");
	t->held[t->nheld++] = *h;
	return 0;
}

PF_HOT int emit_begin(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		      bool inferred)
{
	int rc;

	if (!inferred && held_back(w, t, ts))
		return hold(w, t, &(struct pf_held){ .ts = ts, .func = func, .type = 1 });
	rc = w->ops->begin(w, t, ts, func, inferred);

	if (rc)
		return format_failed(w, rc);
	w->stats.events++;
	return 0;
}

PF_HOT int emit_end(struct pf_writer *w, struct pf_thread *t, uint64_t ts,
		    const struct pf_end_info *e)
{
	int rc;

	/* A truncated end closes its stretch: the stretch is released. */
	if (!e->truncated && held_back(w, t, ts))
		return hold(w, t, &(struct pf_held){ .ts = ts, .type = 2, .end = *e });
	rc = w->ops->end(w, t, ts, e);

	if (rc)
		return format_failed(w, rc);
	w->stats.events++;
	return 0;
}

/* late_inferred: the depth cap counts the frames above the inferred ones,
 * which have PF_MAX_INFERRED levels of their own below them. */
static uint32_t capped_depth(const struct pf_writer *w, const struct pf_thread *t)
{
	return w->opt.late_inferred ? t->depth - t->inferred : t->depth;
}

static uint32_t depth_cap(const struct pf_writer *w)
{
	return w->opt.late_inferred ? w->opt.max_depth - PF_MAX_INFERRED : w->opt.max_depth;
}

/* late_inferred: an inferred frame, kept for the end of its stretch in
 * innermost-first order: those that come before the stretch's first
 * other event come outermost first, later ones (each revealed by a return
 * past the oldest frame) are outer than all before. */
static int begin_inferred_late(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func)
{
	if (!t->stretch_open) {
		t->stretch_open = true;
		t->stretch_ts = ts;
	} else if (ts != t->stretch_ts) {
		return fail(w, PF_EINFERRED,
			    "thread %" PRId64 ": inferred frame at %" PRIu64
			    " but its stretch starts at %" PRIu64, t->tid, ts, t->stretch_ts);
	}
	/* All of a segment's nest at its first time, ended or not. */
	if (t->nlate_frames == PF_MAX_INFERRED)
		return fail(w, PF_EINVAL, "thread %" PRId64 ": more than %d inferred frames in a segment",
			    t->tid, PF_MAX_INFERRED);
	if (MT_ARRAY_RESERVE(t->late_frames, t->late_frames_cap, t->nlate_frames, 1))
		return fail(w, PF_ENOMEM, "out of memory");
	if (!t->seg_started) {
		memmove(t->late_frames + 1, t->late_frames, t->nlate_frames * sizeof(*t->late_frames));
		t->late_frames[0] = func;
	} else {
		t->late_frames[t->nlate_frames] = func;
	}
	t->nlate_frames++;
	t->depth++;
	t->inferred++;
	return 0;
}

static int emit_instant(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
			const char *reason);

/* Writes the stretch's inferred frames, outermost first, then the events
 * held at its first time (see held_back()). */
static int release(struct pf_writer *w, struct pf_thread *t)
{
	int rc = 0;

	if (!t->stretch_open)
		return 0;
	t->late = true;
	for (size_t i = t->nlate_frames; i-- > 0 && !rc;)
		rc = emit_begin(w, t, t->stretch_ts, t->late_frames[i], true);
	for (size_t i = 0; i < t->nheld && !rc; i++) {
		const struct pf_held *h = &t->held[i];

		if (h->type == 1)
			rc = emit_begin(w, t, h->ts, h->func, false);
		else if (h->type == 2)
			rc = emit_end(w, t, h->ts, &h->end);
		else
			rc = emit_instant(w, t, h->ts, h->func, NULL);
	}
	t->late = false;
	t->stretch_open = false;
	t->nlate_frames = t->nheld = 0;
	return rc;
}

/* Marks the segment started. Stored only when it changes: a byte store on
 * every event stalled the next event's wider load of the flags beside it
 * (the compiler tests two of them at once; the load cannot be forwarded
 * from the narrower store). */
static void start_segment(struct pf_thread *t)
{
	if (!t->seg_started)
		t->seg_started = true;
}

/*
 * The thread of an event in the steady state, where nearly every BEGIN
 * and END of a trace is, or NULL: the writer alive, the event in order on
 * a segment already started, no trigger due before it and, with
 * late_inferred, not held back for its stretch (held_back() false with
 * nothing to change). Such an event only moves the order (take_order())
 * and the depth, and goes to the format: what the general path does with
 * it, without its every branch.
 */
PF_HOT struct pf_thread *steady(struct pf_writer *w, int thread, uint64_t ts)
{
	struct pf_thread *t;

	if (!w || w->dead || thread < 0 || (size_t)thread >= w->nthreads)
		return NULL;
	t = &w->threads[thread];
	if (!t->seg_started || ts < order_floor(w, t) ||
	    (w->trig_pending && w->trig.ts_ns < ts))
		return NULL;
	if (w->opt.late_inferred && !t->late && !t->plain && (!t->stretch_open || ts == t->stretch_ts))
		return NULL;
	return t;
}

/* The general paths out of line: the steady ones then save few registers. */
static __attribute__((noinline)) int begin_general(struct pf_writer *w, int thread, uint64_t ts,
						   int32_t func, unsigned int flags);
static __attribute__((noinline)) int end_general(struct pf_writer *w, int thread, uint64_t ts);

int pf_begin(struct pf_writer *w, int thread, uint64_t ts, int32_t func, unsigned int flags)
{
	struct pf_thread *t = flags ? NULL : steady(w, thread, ts);
	int rc;

	/* A function of the writer's, below the cap: written at once. */
	if (!t || func < 0 || (size_t)func >= w->funcs.n ||
	    capped_depth(w, t) + 1 >= depth_cap(w))
		return begin_general(w, thread, ts, func, flags);
	take_order(w, t, ts);
	t->depth++;
	rc = w->ops->begin(w, t, ts, func, false);
	if (rc)
		return format_failed(w, rc);
	w->stats.events++;
	return 0;
}

static int begin_general(struct pf_writer *w, int thread, uint64_t ts, int32_t func,
			 unsigned int flags)
{
	bool inferred = flags & PF_BEGIN_INFERRED;
	bool late = inferred && w && w->opt.late_inferred;
	struct pf_thread *t = NULL;
	uint32_t depth;
	int rc;

	if (w && (func < 0 || (size_t)func >= w->funcs.n || (flags & ~PF_BEGIN_INFERRED)))
		return fail(w, PF_EINVAL, "begin: unknown function id %" PRId32 " or flags 0x%x",
			    func, flags);
	rc = event_start(w, thread, ts, &t, late);
	if (rc)
		return rc;
	if (late)
		return begin_inferred_late(w, t, ts, func);
	if (inferred && t->seg_started)
		return fail(w, PF_EINFERRED,
			    "thread %" PRId64 ": inferred frame at %" PRIu64 " after the segment's first event",
			    t->tid, ts);
	if (!inferred)
		start_segment(t);
	if (t->depth == UINT32_MAX)
		return fail(w, PF_EINVAL, "thread %" PRId64 ": nesting overflow", t->tid);
	t->depth++;
	depth = capped_depth(w, t);
	if (depth < depth_cap(w))
		return emit_begin(w, t, ts, func, inferred);
	/* The deepest written level becomes one marker for everything below. */
	t->hidden++;
	w->stats.hidden++;
	if (depth == depth_cap(w))
		return emit_begin(w, t, ts, w->marker_func, false);
	return 0;
}

/* Ends the innermost frame of @t. */
PF_HOT int pop_frame(struct pf_writer *w, struct pf_thread *t, uint64_t ts, bool truncated)
{
	struct pf_end_info e = { .truncated = truncated };
	uint32_t depth;

	if (w->opt.late_inferred && t->depth == t->inferred) {
		/* An inferred frame: below the cap, always written. */
		t->depth--;
		t->inferred--;
		return emit_end(w, t, ts, &e);
	}
	t->depth--;
	depth = capped_depth(w, t);
	if (depth >= depth_cap(w))
		return 0;
	if (depth + 1 == depth_cap(w)) {
		e.hidden = t->hidden;
		t->hidden = 0;
	}
	return emit_end(w, t, ts, &e);
}

int pf_end(struct pf_writer *w, int thread, uint64_t ts)
{
	struct pf_thread *t = steady(w, thread, ts);
	int rc;

	/* Neither an inferred frame's end nor the cap's marker's or one
	 * under it: written at once. */
	if (t && t->depth > (w->opt.late_inferred ? t->inferred : 0) &&
	    capped_depth(w, t) < depth_cap(w)) {
		take_order(w, t, ts);
		t->depth--;
		rc = w->ops->end(w, t, ts, &(struct pf_end_info){ 0 });
		if (rc)
			return format_failed(w, rc);
		w->stats.events++;
		return 0;
	}
	return end_general(w, thread, ts);
}

static int end_general(struct pf_writer *w, int thread, uint64_t ts)
{
	struct pf_thread *t = NULL;
	int rc;

	if (w && thread >= 0 && (size_t)thread < w->nthreads && !w->threads[thread].depth)
		return fail(w, PF_ENOFRAME, "thread %" PRId64 ": end at %" PRIu64 " with no open frame",
			    w->threads[thread].tid, ts);
	rc = event_start(w, thread, ts, &t, false);
	if (rc)
		return rc;
	start_segment(t);
	return pop_frame(w, t, ts, false);
}

static int close_frames(struct pf_writer *w, struct pf_thread *t, uint64_t ts)
{
	while (t->depth) {
		int rc = pop_frame(w, t, ts, true);

		if (rc)
			return rc;
		w->stats.truncated++;
	}
	return 0;
}

/* REASON: the gap marker's, which a stretch never holds (it ends there). */
static int emit_instant(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
			const char *reason)
{
	char *clean = NULL;
	int rc;

	if (!reason && held_back(w, t, ts))
		return hold(w, t, &(struct pf_held){ .ts = ts, .func = func, .type = 3 });
	if (reason && !(clean = mt_utf8_dup(reason)))
		return fail(w, PF_ENOMEM, "out of memory");
	rc = w->ops->instant(w, t, ts, func, clean);
	free(clean);
	if (rc)
		return format_failed(w, rc);
	w->stats.events++;
	return 0;
}

int pf_instant(struct pf_writer *w, int thread, uint64_t ts, const char *name)
{
	struct pf_thread *t = NULL;
	int32_t func;
	int rc;

	if (w && !name)
		return fail(w, PF_EINVAL, "instant: no name");
	rc = event_start(w, thread, ts, &t, false);
	if (rc)
		return rc;
	start_segment(t);
	/* Under the depth-cap marker an instant would be past Perfetto's
	 * limit too: it goes with the hidden frames. */
	if (capped_depth(w, t) >= depth_cap(w))
		return 0;
	func = intern_name(w, name);
	if (func < 0)
		return fail(w, PF_ENOMEM, "out of memory");
	return emit_instant(w, t, ts, func, NULL);
}

int pf_gap(struct pf_writer *w, int thread, uint64_t ts, const char *reason)
{
	struct pf_thread *t = NULL;
	int rc;

	rc = event_start(w, thread, ts, &t, false);
	if (!rc)
		rc = release(w, t);
	if (!rc)
		rc = close_frames(w, t, ts);
	if (rc)
		return rc;
	t->seg_started = false;
	return emit_instant(w, t, ts, w->gap_func, reason ? reason : "unknown");
}

static void size_warning(struct pf_writer *w)
{
	if (!w->opt.warn_events || w->stats.events <= w->opt.warn_events)
		return;
	/* Advice rather than a problem with the trace: no "warning: " prefix. */
	mt_report(w->opt.rep, MT_SEV_INFO,
		  "%s has %" PRIu64 " events; the Perfetto UI gets slow above a few million:"
		  " record a smaller snapshot (--buffer-size) or open it through a native back end:"
		  " trace_processor --httpd %s",
		  w->path, w->stats.events, w->path);
}

static void free_writer(struct pf_writer *w)
{
	for (size_t i = 0; i < w->nprocs; i++) {
		free(w->procs[i].name);
		free_argv(w->procs[i].argv, w->procs[i].argc);
	}
	for (size_t i = 0; i < w->nthreads; i++) {
		free(w->threads[i].name);
		free(w->threads[i].late_frames);
		free(w->threads[i].held);
	}
	free(w->procs);
	free(w->threads);
	free((char *)w->trig.reason);
	free((char *)w->trig.freeze_path);
	free((char *)w->trig.symbol);
	pf_funcs_free(&w->funcs);
	free(w->path);
	free(w);
}

static int finish(struct pf_writer *w, uint64_t end_ts)
{
	int rc;

	if (w->dead)
		return -PF_EIO;
	if (end_ts < w->last_ts)
		end_ts = w->last_ts;
	if (w->trig_pending && w->trig.ts_ns <= end_ts && (rc = write_trigger(w)))
		return rc;
	for (size_t i = 0; i < w->nthreads; i++) {
		rc = release(w, &w->threads[i]);
		if (!rc && !w->opt.keep_open_frames)
			rc = close_frames(w, &w->threads[i], end_ts);
		if (rc)
			return rc;
	}
	if (w->trig_pending && (rc = write_trigger(w)))
		return rc;
	rc = w->ops->finish(w);
	return rc ? format_failed(w, rc) : 0;
}

int pf_writer_close(struct pf_writer *w, uint64_t end_ts, struct pf_stats *stats, char *err,
		    size_t errlen)
{
	int rc;

	if (!w)
		return mt_errmsg(err, errlen, PF_EINVAL, "no writer");
	rc = finish(w, end_ts);
	if (pf_sink_close(&w->sink) && !rc)
		rc = fail(w, PF_EIO, "%s: %s", w->path, w->sink.msg);
	if (rc)
		mt_errmsg(err, errlen, -rc, "%s", w->err);
	else
		size_warning(w);
	w->stats.bytes = w->sink.total;
	if (stats)
		*stats = w->stats;
	w->ops->free(w);
	free_writer(w);
	return rc;
}
