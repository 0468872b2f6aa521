// SPDX-License-Identifier: MIT
/* The report for a terminal: fits its width (80 columns by default),
 * colour only when asked (a TTY); see report.h. */
#include "report/report.h"
#include "util/text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct out {
	FILE *f;
	const struct mt_report_style *s;
	int name_w;		/* width of function-name columns */
};

static const char *on(const struct out *o, const char *code)
{
	return o->s->color ? code : "";
}

static const char *off(const struct out *o)
{
	return o->s->color ? "\033[0m" : "";
}

/* Bytes of the longest start of @s within @max bytes that cuts no UTF-8
 * sequence (@s is valid UTF-8: mt_visible()'s). */
static int cut_at(const char *s, int max)
{
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static void heading(const struct out *o, const char *text)
{
	fprintf(o->f, "\n%s", on(o, "\033[1m"));
	mt_fputs_visible(text, o->f);
	fprintf(o->f, "%s\n", off(o));
}

/*
 * A line of prose (paths, thread names and trigger specs of any length in
 * it) indented by INDENT and wrapped at spaces to the width, its later
 * lines two columns further in; in COLOR (NULL: none). A word longer than
 * a line is cut into lines of their own.
 */
static __attribute__((format(printf, 4, 5))) void say(const struct out *o, int indent,
						      const char *color, const char *fmt, ...)
{
	char buf[1024], vis[4 * sizeof(buf)];
	const char *p = vis;
	int room = (int)o->s->width - indent, first = 1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mt_visible(vis, sizeof(vis), buf, sizeof(buf));
	fputs(color ? on(o, color) : "", o->f);
	while (*p) {
		int n = (int)strlen(p), cut = n;

		if (n > room) {
			for (cut = room; cut > 0 && p[cut] != ' '; cut--)
				;
			if (!cut)
				cut = cut_at(p, room);
		}
		fprintf(o->f, "%s%*s%.*s", first ? "" : "\n", first ? indent : indent + 2, "", cut,
			p);
		p += cut;
		while (*p == ' ')
			p++;
		if (first) {
			first = 0;
			room -= 2;
		}
	}
	fprintf(o->f, "%s\n", color ? off(o) : "");
}

/* NAME cut to W columns (with "~" where it was cut), padded to W unless
 * it ends the line. A function without a symbol, "binary+0xADDR", keeps
 * its address: the binary's name is what its neighbours share. */
static void put_name_pad(const struct out *o, const char *raw, int w, int pad)
{
	char name[1024];
	const char *addr;
	int n, t;

	mt_visible(name, sizeof(name), raw, sizeof(name));
	addr = strstr(name, "+0x");
	n = (int)strlen(name);
	t = addr ? (int)strlen(addr) : 0;
	if (n <= w)
		fprintf(o->f, "%-*s", pad ? w : 0, name);
	else if (addr && t + 2 <= w)
		fprintf(o->f, "%.*s~%s", cut_at(name, w - 1 - t), name, addr);
	else
		fprintf(o->f, "%.*s~", cut_at(name, w - 1), name);
}

static void put_name(const struct out *o, const char *name, int w)
{
	put_name_pad(o, name, w, 1);
}

/* One frame of a stack, indented by its depth, ending the line. */
static void put_frame(const struct out *o, const char *name, size_t depth)
{
	int indent = (int)(depth < 20 ? 2 * depth : 40);

	fprintf(o->f, "    %*s", indent, "");
	put_name_pad(o, name, (int)o->s->width - 5 - indent, 0);
	fputc('\n', o->f);
}

static const char *thread_name(const struct mt_report *rep, uint32_t tid)
{
	for (size_t i = 0; i < rep->nthreads; i++)
		if (rep->threads[i].tid == tid && rep->threads[i].name[0])
			return rep->threads[i].name;
	return "?";
}

static const char *fn_name(const struct mt_report *rep, size_t fn)
{
	return fn == SIZE_MAX ? "[untraced]" : rep->fns[fn].name;
}

static void trigger(const struct out *o, const struct mt_report *rep)
{
	char t[32];
	bool after;

	if (!rep->have_trigger) {
		fprintf(o->f, "\nNo trigger in this snapshot.\n");
		return;
	}
	/* The trigger may come after the last event (the thread was idle or
	 * untraced when it fired): said so, not as "0ns before". */
	after = rep->trigger_ns > rep->last;
	mt_fmt_ns(t, sizeof(t), after ? rep->trigger_ns - rep->last : rep->last - rep->trigger_ns);
	fputc('\n', o->f);
	say(o, 0, "\033[1;33m", "Trigger %s", rep->trigger_what);
	say(o, 2, NULL, "on %s (tid %u) at %" PRIu64 " ns, %s %s", thread_name(rep, rep->trigger_tid),
	    rep->trigger_tid, rep->trigger_ns, t,
	    after ? "after the last event" : "before the data ends");
	if (rep->trigger_latency >= 0) {
		mt_fmt_ns(t, sizeof(t), (uint64_t)rep->trigger_latency);
		say(o, 2, NULL, "%s had been running for %s", rep->trigger_symbol, t);
	}
	if (!rep->trigger_depth) {
		say(o, 2, NULL, "Call stack at the trigger: none, no call of the thread was open");
		return;
	}
	fprintf(o->f, "  Call stack at the trigger:\n");
	for (size_t i = 0; i < rep->trigger_depth; i++)
		put_frame(o, fn_name(rep, rep->trigger_stack[i]), i);
}

static int by_key(const void *a, const void *b, void *key)
{
	const uint64_t *k = key;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	/* descending, ties by index: the output does not depend on qsort */
	return k[x] != k[y] ? (k[x] < k[y] ? 1 : -1) : (x > y) - (x < y);
}

/* The indexes of KEY's N entries above 0, by KEY descending, into IDX. */
static size_t order(const uint64_t *key, size_t n, size_t *idx)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (key[i])
			idx[k++] = i;
	qsort_r(idx, k, sizeof(*idx), by_key, (void *)key);
	return k;
}

static void slowest(const struct out *o, const struct mt_report *rep, size_t *idx)
{
	uint64_t *key = calloc(rep->nfns ? rep->nfns : 1, sizeof(*key));
	char c[5][16];
	size_t k;

	if (!key)
		return;
	for (size_t i = 0; i < rep->nfns; i++)
		key[i] = rep->fns[i].ndurs ? rep->fns[i].max + 1 : 0;
	k = order(key, rep->nfns, idx);
	heading(o, "Slowest calls, per function");
	fprintf(o->f, "  %-*s %7s %9s %9s %9s %9s\n", o->name_w, "function", "calls", "total", "p50",
		"p99", "max");
	for (size_t i = 0; i < k && i < o->s->top; i++) {
		const struct mt_rep_fn *f = &rep->fns[idx[i]];

		mt_fmt_ns(c[0], sizeof(c[0]), mt_report_total(f));
		mt_fmt_ns(c[1], sizeof(c[1]), mt_report_pct(f, 50));
		mt_fmt_ns(c[2], sizeof(c[2]), mt_report_pct(f, 99));
		mt_fmt_ns(c[3], sizeof(c[3]), f->max);
		fputs("  ", o->f);
		put_name(o, f->name, o->name_w);
		fprintf(o->f, " %7zu %9s %9s %9s %9s\n", f->ndurs, c[0], c[1], c[2], c[3]);
	}
	if (k) {
		const struct mt_rep_fn *f = &rep->fns[idx[0]];

		mt_fmt_ns(c[4], sizeof(c[4]), f->max);
		say(o, 2, NULL, "The slowest, %s (%s, %s):", f->name, c[4],
		    thread_name(rep, f->max_tid));
		for (size_t i = 0; i < f->max_depth; i++)
			put_frame(o, fn_name(rep, f->max_stack[i]), i);
	} else {
		fprintf(o->f, "  (no call with both ends in the data)\n");
	}
	free(key);
}

/*
 * The top functions by self and by inclusive time. Self time is on the
 * CPU, a share of RUN (the threads' running time); inclusive time is wall
 * time, a call's syscalls and descheduled stretches with it, so its share
 * is of WALL (the threads' time from first to last event), which it cannot
 * exceed.
 */
static void where(const struct out *o, const struct mt_report *rep, const char *title,
		  const uint64_t *self, const uint64_t *incl, size_t n, uint64_t run,
		  uint64_t wall, size_t *idx, size_t *idx2, unsigned int top)
{
	size_t a = order(self, n, idx), b = order(incl, n, idx2);
	int w = ((int)o->s->width - 4 - 2 * 17) / 2;
	char t[16];

	heading(o, title);
	fprintf(o->f, "  %-*s %9s %6s  %-*s %9s %6s\n", w, w >= 12 ? "by self time" : "self", "",
		"% run", w, w >= 16 ? "inclusive (wall)" : "inclusive", "", "% wall");
	for (size_t i = 0; i < top && (i < a || i < b); i++) {
		fputs("  ", o->f);
		if (i < a) {
			mt_fmt_ns(t, sizeof(t), self[idx[i]]);
			put_name(o, rep->fns[idx[i]].name, w);
			fprintf(o->f, " %9s %5.1f%%", t, run ? 100.0 * (double)self[idx[i]] / (double)run : 0);
		} else {
			fprintf(o->f, "%*s", w + 17, "");
		}
		if (i < b) {
			mt_fmt_ns(t, sizeof(t), incl[idx2[i]]);
			fputs("  ", o->f);
			put_name(o, rep->fns[idx2[i]].name, w);
			fprintf(o->f, " %9s %5.1f%%", t,
				wall ? 100.0 * (double)incl[idx2[i]] / (double)wall : 0);
		}
		fputc('\n', o->f);
	}
}

/* PART of WHOLE as " 12.3%", "<0.1%" for a sliver, in 9 columns. */
static const char *share(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	double p = whole ? 100.0 * (double)part / (double)whole : 0;

	if (part && p < 0.05)
		snprintf(buf, len, "%9s", "<0.1%");
	else
		snprintf(buf, len, "%8.1f%%", p);
	return buf;
}

static uint64_t running(const struct mt_rep_thread *t)
{
	uint64_t span = t->last - t->first, off = t->syscall + t->untraced + t->desched;

	return span > off ? span - off : 0;
}

static void threads(const struct out *o, const struct mt_report *rep)
{
	uint64_t win = rep->last - rep->first;
	int w = (int)o->s->width - 2 - 5 * 10;
	char name[64], p[5][16];

	heading(o, "Threads: shares of the window");
	fprintf(o->f, "  %-*s %9s %9s %9s %9s %9s\n", w, "thread", "running", "syscall", "desched",
		"untraced", "no data");
	for (size_t i = 0; i < rep->nthreads; i++) {
		const struct mt_rep_thread *t = &rep->threads[i];
		uint64_t span = t->last - t->first;

		snprintf(name, sizeof(name), "%s (%u)", t->name[0] ? t->name : "?", t->tid);
		fputs("  ", o->f);
		put_name(o, name, w);
		fprintf(o->f, " %s %s %s %s %s\n", share(p[0], 16, running(t), win),
			share(p[1], 16, t->syscall, win), share(p[2], 16, t->desched, win),
			share(p[3], 16, t->untraced, win), share(p[4], 16, win - span, win));
	}
}

static void health(const struct out *o, const struct mt_report *rep)
{
	const struct mt_decode_stats *s = &rep->stats;
	uint64_t lost = 0;
	int bad = s->errors || s->overflows || rep->ngaps || s->missing_maps || s->backsteps;
	char t[16];

	for (size_t i = 0; i < rep->ngaps; i++)
		lost += rep->gaps[i].lost;
	mt_fmt_ns(t, sizeof(t), lost);
	heading(o, "Decode health");
	say(o, 2, bad ? "\033[31m" : "\033[32m",
	    "%zu gap%s (%s lost), %" PRIu64 " decode error%s, %" PRIu64 " overflow%s,",
	    rep->ngaps, mt_plural(rep->ngaps, "", "s"), t, s->errors, mt_plural(s->errors, "", "s"),
	    s->overflows, mt_plural(s->overflows, "", "s"));
	say(o, 2, bad ? "\033[31m" : "\033[32m",
	    "%" PRIu64 " mapping%s without code, %" PRIu64 " gap%s for missing code, %" PRIu64
	    " clamped time step%s", s->missing_maps, mt_plural(s->missing_maps, "", "s"),
	    rep->nomap_gaps, mt_plural(rep->nomap_gaps, "", "s"), s->backsteps,
	    mt_plural(s->backsteps, "", "s"));
	for (size_t i = 0; i < rep->ngaps && i < o->s->top; i++) {
		mt_fmt_ns(t, sizeof(t), rep->gaps[i].lost);
		say(o, 2, NULL, "at %" PRIu64 " ns on %s (%u): %s, %s lost", rep->gaps[i].ns,
		    thread_name(rep, rep->gaps[i].tid), rep->gaps[i].tid, rep->gaps[i].reason, t);
	}
}

static void one(const struct out *o, const struct mt_report *rep)
{
	size_t n = rep->nfns ? rep->nfns : 1;
	size_t *idx = calloc(n, sizeof(*idx)), *idx2 = calloc(n, sizeof(*idx2));
	uint64_t *self = calloc(n, sizeof(*self)), *incl = calloc(n, sizeof(*incl)), run = 0,
		 wall = 0;
	char w[16], name[96];

	if (!idx || !idx2 || !self || !incl)
		goto out;
	mt_fmt_ns(w, sizeof(w), rep->last - rep->first);
	say(o, 0, "\033[1m", "%s: a window of %s, %zu thread%s, %zu function%s",
	    rep->label ? rep->label : "snapshot", w, rep->nthreads,
	    mt_plural(rep->nthreads, "", "s"), rep->nfns, mt_plural(rep->nfns, "", "s"));
	trigger(o, rep);
	slowest(o, rep, idx);
	for (size_t i = 0; i < rep->nfns; i++) {
		self[i] = rep->fns[i].self;
		incl[i] = rep->fns[i].incl;
	}
	for (size_t i = 0; i < rep->nthreads; i++) {
		run += running(&rep->threads[i]);
		wall += rep->threads[i].last - rep->threads[i].first;
	}
	where(o, rep, "Where the time went, all threads", self, incl, rep->nfns, run, wall, idx,
	      idx2, o->s->top);
	for (size_t i = 0; i < rep->nthreads; i++) {
		const struct mt_rep_thread *t = &rep->threads[i];

		snprintf(name, sizeof(name), "Thread %s (%u)", t->name[0] ? t->name : "?", t->tid);
		where(o, rep, name, t->self, t->incl, t->nfn, running(t), t->last - t->first, idx,
		      idx2, 3);
	}
	threads(o, rep);
	health(o, rep);
out:
	free(idx);
	free(idx2);
	free(self);
	free(incl);
}

static void compare(const struct out *o, struct mt_report *const *reps, size_t n)
{
	struct mt_rep_compare c;
	char a[16], b[16], d[16];

	if (mt_report_compare(reps, n, &c)) {
		heading(o, "Across snapshots");
		say(o, 2, NULL, "fewer than two snapshots triggered in %s with a latency to compare",
		    reps[0]->trigger_symbol[0] ? reps[0]->trigger_symbol : "the same function");
		return;
	}
	mt_fmt_ns(a, sizeof(a), c.min);
	mt_fmt_ns(b, sizeof(b), c.p50);
	mt_fmt_ns(d, sizeof(d), c.max);
	heading(o, "Across snapshots");
	say(o, 2, NULL, "%s at the trigger, over %zu snapshots: min %s, median %s, max %s",
	    c.symbol, c.n, a, b, d);
	say(o, 2, NULL, "The slowest, %s, against the median, spent more in:",
	    reps[c.slowest]->label ? reps[c.slowest]->label : "?");
	for (size_t i = 0; i < c.ngrew; i++) {
		mt_fmt_ns(a, sizeof(a), (uint64_t)c.grew[i].delta);
		fputs("    ", o->f);
		put_name(o, reps[c.slowest]->fns[c.grew[i].fn].name, o->name_w);
		fprintf(o->f, " +%s\n", a);
	}
	if (!c.ngrew)
		fprintf(o->f, "    nothing: no function's inclusive time grew\n");
}

void mt_report_text(FILE *out, struct mt_report *const *reps, size_t n,
		    const struct mt_report_style *style)
{
	struct mt_report_style s = *style;
	struct out o = { out, &s, 0 };

	if (s.width < 60)
		s.width = 60;
	if (!s.top)
		s.top = 8;
	o.name_w = (int)s.width - 2 - 8 - 4 * 10;
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\n', out);
		one(&o, reps[i]);
	}
	if (n > 1)
		compare(&o, reps, n);
}
