// SPDX-License-Identifier: MIT
/* Narrowing the decoded events; see narrow.h. */
#include "narrow/narrow.h"

#include "util/mt_array.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the sink returns to end the run early (past the window's end). */
#define STOP 0x6e61

enum { UNDECIDED, KEPT, DROPPED };

/* A queue entry's event kind for the trigger (after every mt_ev_kind). */
#define EV_TRIGGER 0xff

int mt_narrow_active(const struct mt_narrow_opts *o)
{
	return o->window || o->function || o->min_duration || o->max_depth;
}

void mt_narrow_init(struct mt_narrow *n, struct mt_decode *d, const struct mt_narrow_opts *o,
		    const struct mt_decode_sink *inner)
{
	memset(n, 0, sizeof(*n));
	n->d = d;
	n->o = *o;
	n->inner = *inner;
	n->to = UINT64_MAX;
}

static uint64_t clamp_add(uint64_t base, int64_t off)
{
	if (off == INT64_MIN)
		return 0;
	if (off == INT64_MAX)
		return UINT64_MAX;
	if (off < 0)
		return (uint64_t)-off > base ? 0 : base - (uint64_t)-off;
	return UINT64_MAX - base < (uint64_t)off ? UINT64_MAX : base + (uint64_t)off;
}

/* The window in absolute ns, once the trigger's place is known. */
static void start(struct mt_narrow *n)
{
	uint64_t base = 0;

	if (n->started)
		return;
	n->started = 1;
	if (!n->o.window) {
		n->in_window = 1;
		return;
	}
	if (n->o.around_trigger && mt_decode_trigger_at(n->d, &base))
		base = 0;	/* no trigger (the CLI refuses that): from the clock's zero */
	n->from = clamp_add(base, n->o.from);
	n->to = clamp_add(base, n->o.to);
}

static struct mt_narrow_thread *thread_of(struct mt_narrow *n, uint32_t pid, uint32_t tid)
{
	int added;
	struct mt_narrow_thread *t = mt_index_map_slot(&n->thread_ids, mt_index_map_task(pid, tid),
						       &n->threads, &n->nthreads, &n->capthreads,
						       sizeof(*t), &added);

	if (t && added) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* Whether a function's NAME is the one asked for: the same, or without
 * the parameters C++ names carry ("inner" names every "inner(...)"). */
static bool names_fn(const char *name, const char *want)
{
	size_t len = strlen(want);

	return name && !strncmp(name, want, len) && (!name[len] || name[len] == '(');
}

static int sym(struct mt_narrow *n, uint32_t fn)
{
	struct mt_func f;

	if (!n->o.function)
		return 0;
	if (MT_ARRAY_GROW_TO(n->is_sym, n->nsym, (size_t)fn + 1))
		return 0;
	if (!n->is_sym[fn]) {
		f = mt_decode_func(n->d, fn);
		n->is_sym[fn] = names_fn(f.name, n->o.function) ? 1 : 2;
		n->sym_met |= n->is_sym[fn] == 1;
	}
	return n->is_sym[fn] == 1;
}

/* Hands on the decided events at the queue's head. */
static int release(struct mt_narrow *n)
{
	while (n->qhead < n->qlen && n->q[n->qhead].state != UNDECIDED) {
		const struct mt_narrow_entry *e = &n->q[n->qhead++];
		int rc = 0;

		if (e->state == KEPT && e->ev.kind == EV_TRIGGER)
			rc = n->inner.trigger(n->inner.ctx, e->ns, n->trigger);
		else if (e->state == KEPT)
			rc = n->inner.event(n->inner.ctx, n->threads[e->thread].pid,
					    n->threads[e->thread].tid, e->ns, &e->ev);
		n->kept += e->state == KEPT && e->ev.kind == MT_EV_BEGIN;
		if (rc)
			return rc;
	}
	if (n->qhead == n->qlen) {
		n->qbase += n->qlen;
		n->qhead = n->qlen = 0;
	}
	return 0;
}

static struct mt_narrow_entry *push(struct mt_narrow *n, size_t thread, uint64_t ns,
				    const struct mt_ev *ev, uint32_t depth, int state)
{
	if (n->qlen == n->qcap) {
		size_t live = n->qlen - n->qhead;

		if (n->qhead > live) {
			memmove(n->q, n->q + n->qhead, live * sizeof(*n->q));
			n->qbase += n->qhead;
			n->qhead = 0;
			n->qlen = live;
		} else if (MT_ARRAY_GROW_TO(n->q, n->qcap, n->qlen + 1)) {
			return NULL;
		}
	}
	n->q[n->qlen] = (struct mt_narrow_entry){ *ev, ns, (uint32_t)thread, depth, (uint8_t)state };
	return &n->q[n->qlen++];
}

/* A frame's fate when nothing more can change it (it ended at END, or the
 * data did): kept when wanted by the function filter and long enough. */
static int fate(const struct mt_narrow *n, const struct mt_narrow_frame *f, uint64_t end)
{
	if (n->o.function && !f->under && !f->anc)
		return DROPPED;
	return end - f->begin >= n->o.min_duration ? KEPT : DROPPED;
}

/* Whether an open frame is kept whatever follows: under SYM (or no
 * function filter) and already long enough. */
static int kept_early(const struct mt_narrow *n, const struct mt_narrow_frame *f)
{
	return (!n->o.function || f->under) && n->now - f->begin >= n->o.min_duration;
}

/* Settles a frame's fate, in its queue entry too while that is queued
 * (an entry only leaves the queue decided). */
static void decide(struct mt_narrow *n, struct mt_narrow_frame *f, int state)
{
	if (f->state != UNDECIDED)
		return;
	f->state = (uint8_t)state;
	if (f->q != UINT64_MAX && f->q >= n->qbase + n->qhead)
		n->q[f->q - n->qbase].state = (uint8_t)state;
}

/* Keeps the frame at DEPTH of T and so everything it runs under (they
 * last longer, and are SYM's callers or under SYM themselves). */
static void keep(struct mt_narrow *n, struct mt_narrow_thread *t, size_t depth)
{
	for (size_t i = 0; i <= depth; i++) {
		t->stack[i].anc = 1;
		decide(n, &t->stack[i], KEPT);
	}
}

/* Decides the frame at DEPTH of T, which ends at END (a frame left out
 * for its depth keeps nothing above it). */
static void settle(struct mt_narrow *n, struct mt_narrow_thread *t, size_t depth, uint64_t end)
{
	struct mt_narrow_frame *f = &t->stack[depth];

	if (fate(n, f, end) == KEPT && f->state != DROPPED)
		keep(n, t, depth);
	else
		decide(n, f, DROPPED);
}

/* Opens a frame; its BEGIN is queued (undecided) when in the window. */
static int open_frame(struct mt_narrow *n, size_t ti, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_narrow_thread *t = &n->threads[ti];
	struct mt_narrow_frame *f;
	struct mt_narrow_entry *e;
	int is = sym(n, ev->arg);

	if (MT_ARRAY_GROW_TO(t->stack, t->cap, t->depth + 1))
		return -ENOMEM;
	f = &t->stack[t->depth];
	*f = (struct mt_narrow_frame){ ns, UINT64_MAX, ev->arg,
				       (uint8_t)(is || (t->depth && t->stack[t->depth - 1].under)), 0,
				       UNDECIDED };
	t->depth++;
	if (!n->in_window)
		return 0;
	e = push(n, ti, ns, ev, (uint32_t)(t->depth - 1), UNDECIDED);
	if (!e)
		return -ENOMEM;
	f->q = n->qbase + (uint64_t)(e - n->q);
	if (n->o.max_depth && t->depth > n->o.max_depth)
		decide(n, f, DROPPED);
	else if (!n->o.min_duration && (!n->o.function || f->under))
		keep(n, t, t->depth - 1);
	return 0;
}

/* Closes the thread's innermost frame at NS; EV (or NULL) is its END. */
static int close_frame(struct mt_narrow *n, size_t ti, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_narrow_thread *t = &n->threads[ti];
	struct mt_narrow_frame *f;
	int state;

	if (!t->depth)
		return 0;
	f = &t->stack[--t->depth];
	if (!n->in_window)	/* before the window: nothing to decide */
		return 0;
	settle(n, t, t->depth, ns);
	state = f->state;
	if (ev && !push(n, ti, ns, ev, (uint32_t)t->depth, state))
		return -ENOMEM;
	return 0;
}

/* The window starts: the frames open now begin again, marked inferred. */
static int enter_window(struct mt_narrow *n)
{
	n->in_window = 1;
	for (size_t ti = 0; ti < n->nthreads; ti++) {
		struct mt_narrow_thread *t = &n->threads[ti];
		size_t depth = t->depth;

		t->depth = 0;
		for (size_t i = 0; i < depth; i++) {
			struct mt_ev ev = { .ts = 0, .kind = MT_EV_BEGIN, .flags = MT_EV_INFERRED,
					    .arg = t->stack[i].fn };

			if (open_frame(n, ti, n->from, &ev))
				return -ENOMEM;
		}
	}
	return 0;
}

/* Decides the undecided frames that have lasted long enough by now. */
static void decide_by_time(struct mt_narrow *n)
{
	while (n->qhead < n->qlen && n->q[n->qhead].state == UNDECIDED) {
		const struct mt_narrow_entry *e = &n->q[n->qhead];
		struct mt_narrow_thread *t = &n->threads[e->thread];
		struct mt_narrow_frame *f = &t->stack[e->depth];

		if (!kept_early(n, f))
			return;
		keep(n, t, e->depth);
		if (release(n))
			return;
	}
}

static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_narrow *n = ctx;
	struct mt_narrow_thread *t;
	size_t ti;
	int rc = 0;

	start(n);
	if (!n->seen) {
		n->seen = 1;
		n->first = ns;
	}
	if (ns > n->to) {
		/* A window no event fell in: the frames open across it (a long
		 * leaf, a thread blocked) still ran there, and begin at its
		 * start as they would at any window's. */
		if (!n->in_window && enter_window(n))
			return -ENOMEM;
		n->stopped = 1;
		return STOP;
	}
	n->now = ns;
	if (!n->in_window && ns >= n->from && enter_window(n))
		return -ENOMEM;
	t = thread_of(n, pid, tid);
	if (!t)
		return -ENOMEM;
	ti = (size_t)(t - n->threads);
	switch (ev->kind) {
	case MT_EV_BEGIN:
		rc = open_frame(n, ti, ns, ev);
		break;
	case MT_EV_END:
		rc = close_frame(n, ti, ns, ev);
		break;
	case MT_EV_GAP:
		/* Every frame ends at a gap (the output ends them too). */
		while (!rc && t->depth)
			rc = close_frame(n, ti, ns, NULL);
		/* fall through */
	default:
		if (!rc && n->in_window)
			rc = push(n, ti, ns, ev, (uint32_t)t->depth,
				  n->o.max_depth && t->depth > n->o.max_depth ? DROPPED : KEPT)
				     ? 0
				     : -ENOMEM;
		break;
	}
	if (rc)
		return rc;
	decide_by_time(n);
	return release(n);
}

static int on_thread(void *ctx, uint32_t pid, uint32_t tid)
{
	struct mt_narrow *n = ctx;

	if (!thread_of(n, pid, tid))
		return -ENOMEM;
	return n->inner.thread ? n->inner.thread(n->inner.ctx, pid, tid) : 0;
}

static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *t)
{
	struct mt_narrow *n = ctx;
	const struct mt_ev ev = { .kind = EV_TRIGGER };

	start(n);
	if (!n->inner.trigger || ns < n->from || ns > n->to)
		return 0;
	/* Queued: it goes after every event before it, once they are decided. */
	n->trigger = t;
	if (!push(n, 0, ns, &ev, 0, KEPT))
		return -ENOMEM;
	return release(n);
}

struct mt_decode_sink mt_narrow_sink(struct mt_narrow *n)
{
	return (struct mt_decode_sink){ on_thread, on_event, on_trigger, n, 0 };
}

int mt_narrow_run(struct mt_narrow *n, const struct mt_decode_sink *sink)
{
	int rc = mt_decode_run(n->d, sink);

	if (rc == STOP || !rc) {
		/* What is still open ends with the data (or the window). */
		uint64_t end = n->stopped ? n->to : n->now;

		for (size_t ti = 0; ti < n->nthreads; ti++) {
			struct mt_narrow_thread *t = &n->threads[ti];

			for (size_t i = t->depth; i-- > 0;)
				settle(n, t, i, end);
		}
		rc = release(n);
	}
	return rc;
}

uint64_t mt_narrow_end_ns(const struct mt_narrow *n, uint64_t default_ns)
{
	return n->o.window && n->to < default_ns ? n->to : default_ns;
}

/* NS as mt_narrow_parse_duration() reads it, in the largest whole unit. */
static const char *shown_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t scale;
		const char *unit;
	} units[] = { { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" }, { 1, "ns" } };
	size_t i = 0;

	while (ns % units[i].scale)
		i++;
	snprintf(buf, len, "%" PRIu64 "%s", ns / units[i].scale, units[i].unit);
	return buf;
}

int mt_narrow_left_nothing(const struct mt_narrow *n, char *why, size_t len)
{
	char d[32];

	if (n->kept)
		return 0;
	if (!n->seen)
		snprintf(why, len, "the trace holds no call");
	else if (n->o.function && !n->sym_met)
		snprintf(why, len, "the trace holds no call of %s", n->o.function);
	else if (n->o.window && n->first > n->to)
		snprintf(why, len, "the window ends at %" PRIu64 " ns, before the trace's first event at %" PRIu64 " ns",
			 n->to, n->first);
	else if (n->o.window && !n->in_window)
		snprintf(why, len, "the window starts at %" PRIu64 " ns, after the trace's last event at %" PRIu64 " ns",
			 n->from, n->now);
	else if (n->o.min_duration)
		snprintf(why, len, "no call%s%s%s lasts %s or longer", n->o.function ? " of " : "",
			 n->o.function ? n->o.function : "", n->o.function ? " or under it" : "",
			 shown_duration(n->o.min_duration, d, sizeof(d)));
	else if (n->o.window)
		snprintf(why, len, "no call runs in the window %" PRIu64 "..%" PRIu64 " ns", n->from, n->to);
	else if (n->o.function && n->o.max_depth)
		snprintf(why, len, "every call of %s nests deeper than --max-depth %u", n->o.function,
			 n->o.max_depth);
	else
		snprintf(why, len, "the trace holds no call");
	return 1;
}

void mt_narrow_fini(struct mt_narrow *n)
{
	for (size_t i = 0; i < n->nthreads; i++)
		free(n->threads[i].stack);
	free(n->threads);
	mt_index_map_free(&n->thread_ids);
	free(n->is_sym);
	free(n->q);
}

int mt_narrow_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 } };
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		/* Beyond what 64 bits of ns hold (some 584 years). */
		if (!(v * units[i].scale < 1.8e19))
			return -ERANGE;
		*ns = (uint64_t)(v * units[i].scale + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* One end of --time: "" (open: DFLT), NS, or T[+-]DURATION (REL set). */
static int parse_end(const char *s, int64_t dflt, int64_t *out, int *rel)
{
	uint64_t v;

	*rel = 0;
	if (!*s) {
		*out = dflt;
		return 0;
	}
	if (*s == 'T' || *s == 't') {
		*rel = 1;
		if (!s[1]) {
			*out = 0;
			return 0;
		}
		if ((s[1] != '-' && s[1] != '+') || mt_narrow_parse_duration(s + 2, &v) ||
		    v > INT64_MAX)
			return -EINVAL;
		*out = s[1] == '-' ? -(int64_t)v : (int64_t)v;
		return 0;
	}
	if (mt_narrow_parse_duration(s, &v) || v > INT64_MAX)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

int mt_narrow_parse_time(const char *s, struct mt_narrow_opts *o, char *err, size_t errlen)
{
	const char *comma = strchr(s, ',');
	char from[64];
	int rel_from, rel_to;
	size_t len = comma ? (size_t)(comma - s) : 0;

	if (!comma || len >= sizeof(from)) {
		snprintf(err, errlen, "--time wants FROM,TO, not '%s'", s);
		return -EINVAL;
	}
	memcpy(from, s, len);
	from[len] = 0;
	if (parse_end(from, INT64_MIN, &o->from, &rel_from) ||
	    parse_end(comma + 1, INT64_MAX, &o->to, &rel_to)) {
		snprintf(err, errlen,
			 "--time '%s': each end is nanoseconds (units ns, us, ms, s allowed), T, "
			 "T-DURATION or T+DURATION (relative to the trigger), or empty",
			 s);
		return -EINVAL;
	}
	if ((*from && *(comma + 1) && rel_from != rel_to)) {
		snprintf(err, errlen, "--time '%s': both ends relative to the trigger (T...), or neither",
			 s);
		return -EINVAL;
	}
	if (o->from != INT64_MIN && o->to != INT64_MAX && o->from > o->to) {
		snprintf(err, errlen, "--time '%s': FROM is after TO", s);
		return -EINVAL;
	}
	o->window = 1;
	o->around_trigger = rel_from || rel_to;
	return 0;
}
