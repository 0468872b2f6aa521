// SPDX-License-Identifier: MIT
/* Thread on a CPU at a TSC; see sideband.h. */
#include "decode/sideband.h"

#include "util/errmsg.h"
#include "util/mt_array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Entries read from the bundle at a time. */
#define SB_STEP 4096
/* Records a view keeps before the last one a query reached: queries go
 * back a little (a segment's end is asked after the next one's start). */
#define VIEW_KEEP 1024
/* Records mt_sideband_traced_task() looks through on each side. */
#define SB_NEAR 64

/* ---- building ---- */

/* Notes thread T when it is the target's (or any, system-wide); 0 or -ENOMEM. */
static int note_thread(struct mt_sideband *sb, struct mt_task t)
{
	int added;
	uint32_t *slot;

	if (sb->fallback.pid && t.pid != sb->fallback.pid)
		return 0;
	slot = mt_index_map_slot(&sb->tid_ids, t.tid, &sb->tids, &sb->ntids, &sb->tids_cap,
				 sizeof(*slot), &added);
	if (!slot)
		return -ENOMEM;
	*slot = t.tid;
	return 0;
}

void mt_sideband_init(struct mt_sideband *sb, struct mt_task fallback)
{
	*sb = (struct mt_sideband){ .fallback = fallback };
}

/* CPU's records, added if new; NULL when out of memory. */
static struct mt_sb_cpu *cpu_of(struct mt_sideband *sb, uint32_t cpu)
{
	int added;
	struct mt_sb_cpu *c = mt_index_map_slot(&sb->cpu_ids, cpu, &sb->cpus, &sb->ncpus,
						&sb->cpus_cap, sizeof(*c), &added);

	if (c && added)
		c->cpu = cpu;
	return c;
}

/* Counts N records per CPU, and keeps them when HOLD. */
static int take(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n,
		bool hold)
{
	struct mt_sb_cpu *c = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct mt_bundle_switch_entry *e = &sw[i];

		if ((!c || c->cpu != e->cpu) && !(c = cpu_of(sb, e->cpu)))
			return -ENOMEM;
		if (note_thread(sb, (struct mt_task){ e->prev_pid, e->prev_tid }) ||
		    note_thread(sb, (struct mt_task){ e->next_pid, e->next_tid }))
			return -ENOMEM;
		if (!c->n || e->tsc < c->first_tsc) {
			c->first_tsc = e->tsc;
			c->first_prev = (struct mt_task){ e->prev_pid, e->prev_tid };
		}
		c->unsorted |= c->n && e->tsc < c->last_tsc;
		c->last_tsc = e->tsc;
		if (hold) {
			if (MT_ARRAY_RESERVE(c->all, c->all_cap, c->n, 1))
				return -ENOMEM;
			c->all[c->n] = (struct mt_sb_rec){ e->tsc, { e->next_pid, e->next_tid } };
		}
		c->n++;
	}
	return 0;
}

int mt_sideband_add(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n)
{
	return take(sb, sw, n, true);
}

/* Records in time order; equal ones in the order they came. */
static int cmp_rec(const void *a, const void *b)
{
	const struct mt_sb_rec *x = *(const struct mt_sb_rec *const *)a;
	const struct mt_sb_rec *y = *(const struct mt_sb_rec *const *)b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* A stable sort of C's records (qsort is not stable: it sorts pointers,
 * which break ties by place). */
static int sort_cpu(struct mt_sb_cpu *c)
{
	struct mt_sb_rec **order = malloc(c->n * sizeof(*order));
	struct mt_sb_rec *sorted = malloc(c->n * sizeof(*sorted));

	if (!order || !sorted) {
		free(order);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		order[i] = &c->all[i];
	qsort(order, c->n, sizeof(*order), cmp_rec);
	for (size_t i = 0; i < c->n; i++)
		sorted[i] = *order[i];
	free(order);
	free(c->all);
	c->all = sorted;
	c->all_cap = c->n;
	return 0;
}

int mt_sideband_finish(struct mt_sideband *sb)
{
	for (size_t i = 0; i < sb->ncpus; i++)
		if (sb->cpus[i].unsorted && sort_cpu(&sb->cpus[i]))
			return -ENOMEM;
	return 0;
}

/* Reads the whole table once into SB, holding the records when HOLD. */
static int read_table(struct mt_sideband *sb, struct mt_bundle_reader *r, bool hold,
		      char *err, size_t errlen)
{
	struct mt_bundle_switch_entry *step = malloc(SB_STEP * sizeof(*step));
	struct mt_bundle_switch_stream *ss = NULL;
	ssize_t got = 0;
	int rc = step ? mt_bundle_switch_stream_open(r, &ss) : -ENOMEM;

	while (!rc && (got = mt_bundle_switch_stream_read(ss, step, SB_STEP)) > 0)
		rc = take(sb, step, (size_t)got, hold);
	if (!rc && got < 0)
		rc = mt_errmsg(err, errlen, (int)-got, "context switches: %s",
			       mt_bundle_switch_stream_errmsg(ss));
	else if (rc == -ENOMEM)
		rc = mt_errmsg(err, errlen, ENOMEM, "out of memory for %zu context switches",
			       mt_bundle_switch_count(r));
	mt_bundle_switch_stream_close(ss);
	free(step);
	return rc;
}

/* Forgets the records (the threads stay). */
static void drop_records(struct mt_sideband *sb)
{
	for (size_t i = 0; i < sb->ncpus; i++)
		free(sb->cpus[i].all);
	free(sb->cpus);
	mt_index_map_free(&sb->cpu_ids);
	sb->cpus = NULL;
	sb->ncpus = sb->cpus_cap = 0;
}

int mt_sideband_open(struct mt_sideband *sb, struct mt_bundle_reader *r,
		     struct mt_task fallback, char *err, size_t errlen)
{
	bool sorted = true;
	int rc;

	mt_sideband_init(sb, fallback);
	if ((rc = read_table(sb, r, false, err, errlen)))
		return rc;
	if (note_thread(sb, fallback))
		return mt_errmsg(err, errlen, ENOMEM, "out of memory for %zu context switches",
				 mt_bundle_switch_count(r));
	for (size_t i = 0; i < sb->ncpus; i++)
		sorted &= !sb->cpus[i].unsorted;
	if (sorted) {
		sb->from = r;
		return 0;
	}
	/* Read again, held this time (the threads are known already). */
	drop_records(sb);
	if ((rc = read_table(sb, r, true, err, errlen)))
		return rc;
	if (mt_sideband_finish(sb))
		return mt_errmsg(err, errlen, ENOMEM, "out of memory sorting %zu context switches",
				 mt_bundle_switch_count(r));
	return 0;
}

void mt_sideband_fini(struct mt_sideband *sb)
{
	drop_records(sb);
	free(sb->tids);
	mt_index_map_free(&sb->tid_ids);
	mt_sideband_init(sb, sb->fallback);
}

/* ---- views ---- */

void mt_sb_view_open(struct mt_sb_view *v, const struct mt_sideband *sb, uint32_t cpu)
{
	int64_t i = mt_index_map_get(&sb->cpu_ids, cpu);

	*v = (struct mt_sb_view){ .sb = sb, .c = i >= 0 ? &sb->cpus[i] : NULL };
	if (v->c && !sb->from) {
		v->recs = v->c->all;	/* held: all of them, nothing to read */
		v->n = v->c->n;
	}
}

static void reader_close(struct mt_sb_reader *rd)
{
	mt_bundle_switch_stream_close(rd->ss);
	free(rd->step);
	*rd = (struct mt_sb_reader){ 0 };
}

void mt_sb_view_close(struct mt_sb_view *v)
{
	reader_close(&v->rd);
	reader_close(&v->off_rd);
	if (v->sb && v->sb->from)
		free(v->recs);
	*v = (struct mt_sb_view){ 0 };
}

static bool view_at_end(const struct mt_sb_view *v)
{
	return !v->c || v->err || v->base + v->n >= v->c->n;
}

/* The next entry of the view's CPU from the bundle through RD, or NULL
 * (v->err set on an error). */
static const struct mt_bundle_switch_entry *reader_next(struct mt_sb_view *v,
							 struct mt_sb_reader *rd)
{
	ssize_t got;

	for (;;) {
		while (rd->pos < rd->got)
			if (rd->step[rd->pos++].cpu == v->c->cpu)
				return &rd->step[rd->pos - 1];
		if (!rd->step && !(rd->step = malloc(SB_STEP * sizeof(*rd->step)))) {
			v->err = -ENOMEM;
			return NULL;
		}
		if (!rd->ss && (v->err = mt_bundle_switch_stream_open(v->sb->from, &rd->ss)))
			return NULL;
		got = mt_bundle_switch_stream_read(rd->ss, rd->step, SB_STEP);
		if (got <= 0) {
			/* Fewer than counted at open: the file changed. */
			v->err = got < 0 ? (int)got : -EIO;
			return NULL;
		}
		rd->pos = 0;
		rd->got = (size_t)got;
	}
}

/* Reads the view's next record, first dropping those before record KEEP;
 * false at the end. */
static bool view_read_on(struct mt_sb_view *v, uint64_t keep)
{
	const struct mt_bundle_switch_entry *e;

	if (view_at_end(v))
		return false;
	if (keep > v->base + v->n)
		keep = v->base + v->n;
	/* Dropped in bulk, so each record moves O(1) times. */
	if (keep > v->base && keep - v->base >= v->n / 2) {
		v->n -= (size_t)(keep - v->base);
		memmove(v->recs, v->recs + (keep - v->base), v->n * sizeof(*v->recs));
		v->base = keep;
	}
	if (MT_ARRAY_RESERVE(v->recs, v->cap, v->n, 1)) {
		v->err = -ENOMEM;
		return false;
	}
	if (!(e = reader_next(v, &v->rd)))
		return false;
	v->recs[v->n++] = (struct mt_sb_rec){ e->tsc, { e->next_pid, e->next_tid } };
	return true;
}

/* Starts the CPU's records over from the bundle. */
static void view_rewind(struct mt_sb_view *v)
{
	mt_bundle_switch_stream_close(v->rd.ss);
	v->rd.ss = NULL;
	v->rd.pos = v->rd.got = 0;
	v->base = 0;
	v->n = 0;
	v->rewinds++;
}

/* Record K of the CPU, in time order; NULL past the last. */
static const struct mt_sb_rec *view_rec(struct mt_sb_view *v, uint64_t k)
{
	if (k < v->base)
		view_rewind(v);
	while (k >= v->base + v->n)
		if (!view_read_on(v, k > VIEW_KEEP ? k - VIEW_KEEP : 0))
			return NULL;
	return &v->recs[k - v->base];
}

/* The index of the CPU's first record later than TSC; the one before it,
 * if any, is in the window. */
static uint64_t view_after(struct mt_sb_view *v, uint64_t tsc)
{
	size_t lo = 0, hi;

	if (v->base && (!v->n || v->recs[0].tsc > tsc))
		view_rewind(v);
	while ((!v->n || v->recs[v->n - 1].tsc <= tsc) &&
	       view_read_on(v, v->base + v->n > VIEW_KEEP ? v->base + v->n - VIEW_KEEP : 0))
		;
	hi = v->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->recs[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return v->base + lo;
}

/* ---- queries ---- */

/* The task running before record K (view_after()'s answer) of V's CPU. */
static struct mt_task task_before(const struct mt_sb_view *v, uint64_t k)
{
	return k ? v->recs[k - 1 - v->base].next : v->c->first_prev;
}

struct mt_task mt_sideband_task(struct mt_sb_view *v, uint64_t tsc)
{
	return v->c ? task_before(v, view_after(v, tsc)) : v->sb->fallback;
}

/* Whether the target traces TASK (one process traced, and TASK its
 * thread): a switch to any other task clears TraceEn. */
static bool traced(const struct mt_sb_view *v, struct mt_task task)
{
	return task.pid == v->sb->fallback.pid && task.tid;
}

struct mt_task mt_sideband_traced_task(struct mt_sb_view *v, uint64_t tsc)
{
	uint64_t k, near = UINT64_MAX;
	const struct mt_sb_rec *r;
	struct mt_task best;

	if (!v->c)
		return v->sb->fallback;
	k = view_after(v, tsc);
	best = task_before(v, k);
	if (!v->sb->fallback.pid || traced(v, best))
		return best;
	/* Back: a thread of the target that ran until record j + 1. */
	for (uint64_t j = k > 1 ? k - 1 : 0; j-- > v->base && k - j <= SB_NEAR;) {
		if (traced(v, v->recs[j - v->base].next)) {
			near = tsc - v->recs[j + 1 - v->base].tsc;
			best = v->recs[j - v->base].next;
			break;
		}
	}
	/* On: one switched in after TSC, if nearer. */
	for (uint64_t j = k; j - k < SB_NEAR && (r = view_rec(v, j)); j++) {
		if (traced(v, r->next)) {
			if (r->tsc - tsc < near)
				best = r->next;
			break;
		}
	}
	return best;
}

int mt_sideband_no_switch(struct mt_sb_view *v, uint64_t from, uint64_t to)
{
	const struct mt_sb_rec *r;

	if (!v->c)
		return 1;
	r = view_rec(v, view_after(v, from));
	return !r || r->tsc > to;
}

/* Record I of the CPU through the trace-off reader, which gives them in
 * order (held ones are at hand); false past the last. */
static bool off_rec(struct mt_sb_view *v, uint64_t i, struct mt_sb_rec *r)
{
	const struct mt_bundle_switch_entry *e;

	if (i >= v->c->n)
		return false;
	if (!v->sb->from) {
		*r = v->c->all[i];
		return true;
	}
	if (!(e = reader_next(v, &v->off_rd)))
		return false;
	*r = (struct mt_sb_rec){ e->tsc, { e->next_pid, e->next_tid } };
	return true;
}

/*
 * The answer is often far ahead: a process's threads switch among
 * themselves for as long as it runs. Searched for with the view, it moved
 * the view there, and the next query (a little later than this one) read
 * the CPU's records over from the start: a decode quadratic in the
 * records. The trace-off reader finds it instead, once for every query
 * up to it.
 */
uint64_t mt_sideband_trace_off(struct mt_sb_view *v, uint64_t tsc)
{
	const struct mt_sb_rec *r;
	struct mt_sb_rec rec;
	uint64_t k, i;

	if (!v->sb->fallback.pid || !v->c)
		return UINT64_MAX;
	k = view_after(v, tsc);
	if (v->off_known && k < v->off_lo) {
		/* A little back: the view holds the records in between. */
		for (i = k; i < v->off_lo; i++) {
			if (!(r = view_rec(v, i)))
				return UINT64_MAX;
			if (!traced(v, r->next))
				return r->tsc;
		}
		v->off_lo = k;
		return v->off_tsc;
	}
	if (v->off_known && k <= v->off_k)
		return v->off_tsc;
	i = v->off_known ? v->off_k + 1 : 0;
	v->off_known = true;
	v->off_lo = k;
	v->off_k = v->c->n;
	v->off_tsc = UINT64_MAX;
	for (; off_rec(v, i, &rec); i++) {
		if (i >= k && !traced(v, rec.next)) {
			v->off_k = i;
			v->off_tsc = rec.tsc;
			break;
		}
	}
	return v->off_tsc;
}
