// SPDX-License-Identifier: MIT
/*
 * Chrome JSON trace format, for small traces and debugging. Events are
 * written strictly in call order ("B"/"E" pairs, "i" instants, "M" names),
 * because Perfetto's JSON importer re-sorts ties END-first and would break
 * zero-length calls if it had to sort. Timestamps are microseconds with
 * three decimals relative to the first event, so nanoseconds survive the
 * importer's double arithmetic; the absolute base is in otherData.
 */
#include "pf_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

struct json {
	bool any;		/* an event was written: the next needs a comma */
	bool have_base;
	uint64_t base;		/* ns of the first timed event */
};

static struct json *state(struct pf_writer *w)
{
	return w->fmt;
}

static void put(struct pf_writer *w, const char *s)
{
	pf_sink_write(&w->sink, s, strlen(s));
}

__attribute__((format(printf, 2, 3)))
static void putf(struct pf_writer *w, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Only numbers go through here; they always fit. */
	if (n > 0 && (size_t)n < sizeof(buf))
		pf_sink_write(&w->sink, buf, (size_t)n);
}

/* The inside of a JSON string; @s is valid UTF-8 already (the core cleans
 * every text). */
static void put_escaped(struct pf_writer *w, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		pf_sink_write(&w->sink, run, (size_t)(s - run));
		if (c == '"')
			put(w, "\\\"");
		else if (c == '\\')
			put(w, "\\\\");
		else if (c == '\n')
			put(w, "\\n");
		else if (c == '\t')
			put(w, "\\t");
		else
			putf(w, "\\u%04x", c);
		run = s + 1;
	}
	pf_sink_write(&w->sink, run, (size_t)(s - run));
}

static void put_str(struct pf_writer *w, const char *s)
{
	put(w, "\"");
	put_escaped(w, s);
	put(w, "\"");
}

static int done(struct pf_writer *w)
{
	return w->sink.failed ? -PF_EIO : 0;
}

/* Opens an event object: {"ph":"X","pid":P,"tid":T */
static void event_open(struct pf_writer *w, const char *ph, int32_t pid, int64_t tid)
{
	struct json *st = state(w);

	put(w, st->any ? ",\n{\"ph\":\"" : "{\"ph\":\"");
	st->any = true;
	put(w, ph);
	putf(w, "\",\"pid\":%" PRId32 ",\"tid\":%" PRId64, pid, tid);
}

static void put_ts(struct pf_writer *w, uint64_t ts)
{
	struct json *st = state(w);
	uint64_t rel;

	if (!st->have_base) {
		st->have_base = true;
		st->base = ts;
	}
	rel = ts - st->base;
	putf(w, ",\"ts\":%" PRIu64 ".%03u", rel / 1000, (unsigned int)(rel % 1000));
}

static int start(struct pf_writer *w)
{
	w->fmt = calloc(1, sizeof(struct json));
	if (!w->fmt)
		return -PF_ENOMEM;
	put(w, "{\"traceEvents\":[\n");
	return done(w);
}

static void metadata(struct pf_writer *w, int32_t pid, int64_t tid, const char *what,
		     const char *name)
{
	event_open(w, "M", pid, tid);
	put(w, ",\"name\":");
	put_str(w, what);
	put(w, ",\"args\":{\"name\":");
	put_str(w, name);
	put(w, "}}");
}

static int process(struct pf_writer *w, const struct pf_process *p)
{
	metadata(w, p->pid, p->pid, "process_name", p->name);
	if (p->argc) {
		event_open(w, "M", p->pid, p->pid);
		put(w, ",\"name\":\"process_labels\",\"args\":{\"labels\":\"");
		for (int i = 0; i < p->argc; i++) {
			if (i)
				put(w, " ");
			put_escaped(w, p->argv[i]);
		}
		put(w, "\"}}");
	}
	return done(w);
}

static int thread(struct pf_writer *w, struct pf_thread *t)
{
	/* The first track of its own names their pseudo-process. */
	if (t->plain && !w->plain_tracks++)
		metadata(w, t->pid, t->pid, "process_name", "mtrace");
	metadata(w, t->pid, t->tid, "thread_name", t->name);
	return done(w);
}

static int begin(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		 bool inferred)
{
	const struct pf_func *f = &w->funcs.v[func];

	event_open(w, "B", t->pid, t->tid);
	put_ts(w, ts);
	put(w, ",\"name\":");
	put_str(w, f->name);
	if (f->flags & PF_FRAME_KERNEL)
		put(w, ",\"cat\":\"kernel\"");
	else if (f->flags & PF_FRAME_UNTRACED)
		put(w, ",\"cat\":\"untraced\"");
	else if (f->flags & PF_FRAME_INLINE)
		put(w, ",\"cat\":\"inline\"");
	if (func == w->marker_func) {
		/* The depth-cap marker: its END carries the count. */
		put(w, "}");
		return done(w);
	}
	put(w, ",\"args\":{\"symbol\":");
	put_str(w, f->symbol);
	if (f->binary) {
		put(w, ",\"binary\":");
		put_str(w, f->binary);
	}
	putf(w, ",\"address\":\"0x%" PRIx64 "\"", f->addr);
	if (f->file) {
		put(w, ",\"file\":");
		put_str(w, f->file);
		if (f->line)
			putf(w, ",\"line\":%" PRIu32, f->line);
	}
	if (inferred)
		put(w, ",\"inferred_start\":true");
	put(w, "}}");
	return done(w);
}

static int end(struct pf_writer *w, struct pf_thread *t, uint64_t ts, const struct pf_end_info *e)
{
	event_open(w, "E", t->pid, t->tid);
	put_ts(w, ts);
	if (e->truncated || e->hidden) {
		put(w, ",\"args\":{");
		if (e->truncated)
			put(w, e->hidden ? "\"truncated\":true," : "\"truncated\":true");
		if (e->hidden)
			putf(w, "\"hidden_frames\":%" PRIu64, e->hidden);
		put(w, "}");
	}
	put(w, "}");
	return done(w);
}

static int instant(struct pf_writer *w, struct pf_thread *t, uint64_t ts, int32_t func,
		   const char *reason)
{
	event_open(w, "i", t->pid, t->tid);
	put_ts(w, ts);
	put(w, ",\"s\":\"t\",\"name\":");
	put_str(w, w->funcs.v[func].name);
	if (reason) {
		put(w, ",\"args\":{\"reason\":");
		put_str(w, reason);
		put(w, "}");
	}
	put(w, "}");
	return done(w);
}

static int trigger_track(struct pf_writer *w)
{
	(void)w;
	return 0;
}

static int trigger(struct pf_writer *w)
{
	const struct pf_trigger *t = &w->trig;

	event_open(w, "i", t->pid, t->tid);
	put_ts(w, t->ts_ns);
	/* Process scope puts it on the process's own row; "g" when undeclared. */
	put(w, w->trig_parent ? ",\"s\":\"p\"" : ",\"s\":\"g\"");
	put(w, ",\"name\":\"trigger\",\"args\":{\"reason\":");
	put_str(w, t->reason);
	putf(w, ",\"pid\":%" PRId32 ",\"tid\":%" PRId64 ",\"ip\":\"0x%" PRIx64 "\"",
	     t->pid, t->tid, t->ip);
	if (t->symbol) {
		put(w, ",\"symbol\":");
		put_str(w, t->symbol);
	}
	put(w, ",\"freeze_path\":");
	put_str(w, t->freeze_path);
	if (t->skid_ns >= 0)
		putf(w, ",\"skid_ns\":%" PRId64, t->skid_ns);
	put(w, "}}");
	return done(w);
}

static int finish(struct pf_writer *w)
{
	struct json *st = state(w);

	putf(w, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"mtrace_ts_base_ns\":\"%" PRIu64 "\"}}\n",
	     st->base);
	return done(w);
}

static void free_state(struct pf_writer *w)
{
	free(w->fmt);
	w->fmt = NULL;
}

const struct pf_format_ops pf_json_ops = {
	.start = start,
	.process = process,
	.thread = thread,
	.begin = begin,
	.end = end,
	.instant = instant,
	.trigger_track = trigger_track,
	.trigger = trigger,
	.finish = finish,
	.free = free_state,
};
