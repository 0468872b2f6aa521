// SPDX-License-Identifier: MIT
/* Filling a report from the decoder's events; see report.h. */
#include "report/report.h"
#include "util/mt_array.h"

#include "decode/blkdec.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct mt_report *mt_report_new(void)
{
	struct mt_report *rep = calloc(1, sizeof(*rep));

	if (rep)
		rep->trigger_latency = -1;
	return rep;
}

void mt_report_free(struct mt_report *rep)
{
	if (!rep)
		return;
	for (size_t i = 0; i < rep->nfns; i++) {
		free(rep->fns[i].durs);
		free(rep->fns[i].max_stack);
	}
	for (size_t i = 0; i < rep->nthreads; i++) {
		free(rep->threads[i].self);
		free(rep->threads[i].incl);
		free(rep->threads[i].active);
		free(rep->threads[i].stack);
	}
	free(rep->fns);
	mt_names_free(&rep->names);
	free(rep->threads);
	mt_index_map_free(&rep->thread_ids);
	free(rep->gaps);
	free(rep->trigger_stack);
	free(rep->trigger_begin);
	free(rep);
}

/* The report's function for decoder id ID, by name (ids of one name
 * from several binaries are one function here). SIZE_MAX: no memory. */
static size_t fn_index(struct mt_report *rep, uint32_t id)
{
	uint32_t i = mt_names_of(&rep->names, id);

	if (i == UINT32_MAX || MT_ARRAY_GROW_TO(rep->fns, rep->capfns, (size_t)i + 1))
		return SIZE_MAX;
	for (; rep->nfns <= i; rep->nfns++)
		rep->fns[rep->nfns].name = rep->names.v[rep->nfns];
	return i;
}

static struct mt_rep_thread *thread_of(struct mt_report *rep, uint32_t pid, uint32_t tid)
{
	int added;
	struct mt_rep_thread *t = mt_index_map_slot(&rep->thread_ids, mt_index_map_task(pid, tid),
						    &rep->threads, &rep->nthreads,
						    &rep->capthreads, sizeof(*t), &added);

	if (t && added) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* The thread's per-function tables cover function FN. */
static int thread_fns(struct mt_rep_thread *t, size_t fn)
{
	size_t n = t->nfn, n2 = t->nfn, n3 = t->nfn;

	if (fn < t->nfn)
		return 0;
	if (MT_ARRAY_GROW_TO(t->self, n, fn + 1) ||
	    MT_ARRAY_GROW_TO(t->incl, n2, fn + 1) ||
	    MT_ARRAY_GROW_TO(t->active, n3, fn + 1))
		return -ENOMEM;
	t->nfn = n;	/* all three grew alike */
	return 0;
}

static int add_dur(struct mt_rep_fn *f, uint64_t d)
{
	if (MT_ARRAY_GROW_TO(f->durs, f->capdurs, f->ndurs + 1))
		return -ENOMEM;
	f->durs[f->ndurs++] = d;
	return 0;
}

/* The slowest call so far of its function: its stack is the thread's now. */
static int note_max(struct mt_report *rep, struct mt_rep_thread *t, size_t fn, uint64_t d)
{
	struct mt_rep_fn *f = &rep->fns[fn];
	if (f->ndurs > 1 && d <= f->max)
		return 0;
	if (MT_ARRAY_GROW_TO(f->max_stack, f->cap_max_stack, t->depth + 1))
		return -ENOMEM;
	for (size_t i = 0; i <= t->depth; i++)
		f->max_stack[i] = t->stack[i].fn;
	f->max_depth = t->depth + 1;
	f->max = d;
	f->max_tid = t->tid;
	return 0;
}

/* Ends the thread's innermost frame at NS; COMPLETE: its call had both ends. */
static int pop(struct mt_report *rep, struct mt_rep_thread *t, uint64_t ns, int complete)
{
	struct mt_rep_frame *f = &t->stack[--t->depth];
	uint64_t d = ns > f->begin ? ns - f->begin : 0;
	int rc = 0;

	if (t->depth)
		t->stack[t->depth - 1].child += d;
	if (f->untraced) {
		*(f->untraced == 1 ? &t->syscall : &t->untraced) += d;
		return 0;
	}
	if (f->fn == SIZE_MAX)
		return 0;
	rep->fns[f->fn].self += d - (f->child < d ? f->child : d);
	t->self[f->fn] += d - (f->child < d ? f->child : d);
	if (!--t->active[f->fn]) {
		rep->fns[f->fn].incl += d;
		t->incl[f->fn] += d;
	}
	if (complete && !f->inferred) {
		rc = add_dur(&rep->fns[f->fn], d);
		if (!rc)
			rc = note_max(rep, t, f->fn, d);
	} else {
		rep->fns[f->fn].partial++;
	}
	return rc;
}

static int push(struct mt_report *rep, struct mt_rep_thread *t, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_rep_frame f = { SIZE_MAX, 0, ns, 0, !!(ev->flags & MT_EV_INFERRED) };

	if (ev->arg == MT_FN_SYSCALL || ev->arg == MT_FN_UNTRACED) {
		f.untraced = ev->arg == MT_FN_SYSCALL ? 1 : 2;
	} else {
		f.fn = fn_index(rep, ev->arg);
		if (f.fn == SIZE_MAX || thread_fns(t, f.fn))
			return -ENOMEM;
		t->active[f.fn]++;
	}
	if (MT_ARRAY_GROW_TO(t->stack, t->cap, t->depth + 1))
		return -ENOMEM;
	t->stack[t->depth++] = f;
	return 0;
}

static int on_event(void *ctx, uint32_t pid, uint32_t tid, uint64_t ns, const struct mt_ev *ev)
{
	struct mt_report *rep = ctx;
	struct mt_rep_thread *t = thread_of(rep, pid, tid);
	int rc = 0;

	if (!t)
		return -ENOMEM;
	if (!rep->have_events)
		rep->first = ns;
	rep->have_events = 1;
	rep->last = ns;
	if (!t->seen)
		t->first = ns;
	t->seen = 1;
	t->last = ns;
	for (size_t i = rep->ngaps; i-- > 0;)
		if (rep->gaps[i].tid == tid && rep->gaps[i].open) {
			rep->gaps[i].lost = ns - rep->gaps[i].ns;
			rep->gaps[i].open = ev->kind == MT_EV_GAP && i == rep->ngaps - 1;
			break;
		}
	switch (ev->kind) {
	case MT_EV_BEGIN:
		rc = push(rep, t, ns, ev);
		break;
	case MT_EV_END:
		if (t->depth)
			rc = pop(rep, t, ns, !(ev->flags & MT_EV_TRUNCATED));
		break;
	case MT_EV_GAP:
		while (!rc && t->depth)
			rc = pop(rep, t, ns, 0);
		if (MT_ARRAY_RESERVE(rep->gaps, rep->capgaps, rep->ngaps, 1))
			return -ENOMEM;
		rep->gaps[rep->ngaps++] =
			(struct mt_rep_gap){ tid, ns, 0, mt_gap_reason_name(ev->arg), 1 };
		rep->nomap_gaps += ev->arg == MT_GAP_NOMAP;
		break;
	default:
		break;
	}
	if (rc)
		rep->oom = 1;
	return rc;
}

static int on_trigger(void *ctx, uint64_t ns, const struct mt_bundle_trigger *trig)
{
	struct mt_report *rep = ctx;
	struct mt_rep_thread *t = NULL;
	const char *reason;

	for (size_t i = 0; i < rep->nthreads; i++)
		if (rep->threads[i].tid == trig->d.tid)
			t = &rep->threads[i];
	rep->have_trigger = 1;
	rep->trigger_ns = ns;
	rep->trigger_tid = trig->d.tid;
	/* A snapshot without a trigger spec (Ctrl-C, the target's exit) is
	 * named by why it was taken. */
	reason = mt_bundle_reason_name(trig->d.reason);
	snprintf(rep->trigger_what, sizeof(rep->trigger_what), "%s",
		 trig->spec && trig->spec[0] ? trig->spec : reason ? reason : "trigger");
	if (!t || !t->depth)
		return 0;
	rep->trigger_stack = malloc(t->depth * sizeof(*rep->trigger_stack));
	rep->trigger_begin = malloc(t->depth * sizeof(*rep->trigger_begin));
	if (!rep->trigger_stack || !rep->trigger_begin)
		return -ENOMEM;
	rep->trigger_depth = t->depth;
	for (size_t i = 0; i < t->depth; i++) {
		rep->trigger_stack[i] = t->stack[i].fn;
		rep->trigger_begin[i] = t->stack[i].begin;
	}
	return 0;
}

struct mt_decode_sink mt_report_sink(struct mt_report *rep,
				     const char *(*name)(void *ctx, uint32_t id), void *ctx)
{
	rep->names.name = name;
	rep->names.ctx = ctx;
	return (struct mt_decode_sink){ NULL, on_event, on_trigger, rep, 0 };
}

uint64_t mt_report_pct(const struct mt_rep_fn *fn, unsigned int q)
{
	size_t k;

	if (!fn->ndurs)
		return 0;
	k = ((size_t)q * fn->ndurs + 99) / 100;
	return fn->durs[k ? k - 1 : 0];
}

uint64_t mt_report_total(const struct mt_rep_fn *fn)
{
	uint64_t s = 0;

	for (size_t i = 0; i < fn->ndurs; i++)
		s += fn->durs[i];
	return s;
}

/* A thread's last switch out, while it is out. */
struct out_since {
	uint64_t ns;
	bool out;
};

/* Thread T's switches among N records at SW, in file order. */
static void desched_step(struct mt_rep_thread *t, struct out_since *o, struct mt_decode *d,
			 const struct mt_bundle_switch_entry *sw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t ns = mt_decode_ns(d, sw[i].tsc);

		if (sw[i].prev_tid == t->tid && sw[i].prev_pid == t->pid && !o->out) {
			*o = (struct out_since){ ns, true };
		} else if (sw[i].next_tid == t->tid && sw[i].next_pid == t->pid && o->out) {
			uint64_t a = o->ns > t->first ? o->ns : t->first;
			uint64_t b = ns < t->last ? ns : t->last;

			t->desched += b > a ? b - a : 0;
			o->out = false;
		}
	}
}

/* Each thread's time switched out within its data, from the bundle's
 * context switches, read in steps (there may be millions). */
static int desched(struct mt_report *rep, struct mt_decode *d, struct mt_bundle_reader *r)
{
	struct mt_bundle_switch_entry step[256];
	struct mt_bundle_switch_stream *ss = NULL;
	struct out_since *o = calloc(rep->nthreads + 1, sizeof(*o));
	ssize_t got = 0;

	if (!o || mt_bundle_switch_stream_open(r, &ss)) {
		free(o);
		return -1;
	}
	while ((got = mt_bundle_switch_stream_read(ss, step, sizeof(step) / sizeof(*step))) > 0)
		for (size_t k = 0; k < rep->nthreads; k++)
			desched_step(&rep->threads[k], &o[k], d, step, (size_t)got);
	mt_bundle_switch_stream_close(ss);
	free(o);
	for (size_t k = 0; k < rep->nthreads; k++) {
		struct mt_rep_thread *t = &rep->threads[k];

		/* Only [untraced] time can be descheduled time. */
		if (t->desched > t->untraced)
			t->desched = t->untraced;
		t->untraced -= t->desched;
	}
	return got < 0 ? -1 : 0;
}

static void names(struct mt_report *rep, struct mt_bundle_reader *r)
{
	const struct mt_bundle_thread *th;
	size_t n = mt_bundle_threads(r, &th);

	for (size_t k = 0; k < rep->nthreads; k++)
		for (size_t i = 0; i < n; i++)
			if (th[i].tid == rep->threads[k].tid && th[i].pid == rep->threads[k].pid &&
			    th[i].comm && th[i].comm[0])
				snprintf(rep->threads[k].name, sizeof(rep->threads[k].name), "%s",
					 th[i].comm);
}

int mt_report_finish(struct mt_report *rep, struct mt_decode *d, struct mt_bundle_reader *r)
{
	struct mt_bundle_trigger t;
	uint64_t ns;

	for (size_t k = 0; k < rep->nthreads; k++)
		while (rep->threads[k].depth)
			if (pop(rep, &rep->threads[k], rep->last, 0))
				rep->oom = 1;
	for (size_t i = 0; i < rep->nfns; i++)
		if (rep->fns[i].ndurs)
			qsort(rep->fns[i].durs, rep->fns[i].ndurs, sizeof(uint64_t), mt_array_cmp_u64);
	if (d) {
		rep->stats = *mt_decode_get_stats(d);
		if (rep->have_trigger && !mt_decode_trigger(d, &ns, &t) && t.d.ip)
			snprintf(rep->trigger_symbol, sizeof(rep->trigger_symbol), "%s",
				 mt_decode_symbol_at(d, t.d.pid, t.d.ip));
	}
	/* How long the triggering function had run: its innermost frame. */
	for (size_t i = rep->trigger_depth; i-- > 0;) {
		size_t f = rep->trigger_stack[i];

		if (f != SIZE_MAX && !strcmp(rep->fns[f].name, rep->trigger_symbol)) {
			rep->trigger_latency = (int64_t)(rep->trigger_ns - rep->trigger_begin[i]);
			break;
		}
	}
	if (r && d) {
		names(rep, r);
		if (desched(rep, d, r))
			rep->oom = 1;
	}
	return rep->oom ? -1 : 0;
}
