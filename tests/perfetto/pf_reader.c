// SPDX-License-Identifier: MIT
/* Perfetto protobuf reader and import-rule replay for tests (pf_reader.h). */
#include "pf_reader.h"

#include "pf_wire.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define MAX_DEPTH 512		/* trace_processor's SliceTracker::kMaxDepth */
#define MAX_IID 1000000		/* larger iids are treated as garbage */

struct strtab {
	char **v;		/* indexed by iid */
	size_t n;
};

struct srcloc {
	char *file, *function;
	uint32_t line;
	bool defined;
};

struct seqstate {
	uint32_t id;
	bool cleared;
	uint32_t def_clock;
	uint64_t def_track;
	bool have_clock;
	uint64_t clock_t0, clock_b0, clock_cur;	/* clock 64 anchor and value */
	bool any_ts;
	uint64_t last_ts;
	struct strtab names, annots;
	struct srcloc *locs;
	size_t nlocs;
};

struct priv {
	uint8_t *data;
	size_t size;
	char **strs;
	size_t nstrs, capstrs;
	struct seqstate *seqs;
	size_t nseqs;
	int *depth;		/* per track, parallel to t->tracks */
	size_t events_cap, tracks_cap;
};

__attribute__((format(printf, 2, 3)))
static void err(struct pfr_trace *t, const char *fmt, ...)
{
	char *s;
	va_list ap;
	char **v;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	v = realloc(t->errors, (t->nerrors + 1) * sizeof(*v));
	if (!s || !v) {
		free(s);
		if (v)
			t->errors = v;
		return;
	}
	t->errors = v;
	t->errors[t->nerrors++] = s;
}

static char *keep_str(struct pfr_trace *t, const struct pfw_field *f)
{
	struct priv *pv = t->priv;
	char *s = malloc(f->len + 1);

	if (!s)
		abort();
	memcpy(s, f->data, f->len);
	s[f->len] = 0;
	if (pv->nstrs == pv->capstrs) {
		pv->capstrs = pv->capstrs ? pv->capstrs * 2 : 256;
		pv->strs = realloc(pv->strs, pv->capstrs * sizeof(*pv->strs));
		if (!pv->strs)
			abort();
	}
	pv->strs[pv->nstrs++] = s;
	return s;
}

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 64;
	v = realloc(v, *cap * size);
	if (!v)
		abort();
	return v;
}

static struct seqstate *seq_get(struct pfr_trace *t, uint32_t id)
{
	struct priv *pv = t->priv;

	for (size_t i = 0; i < pv->nseqs; i++)
		if (pv->seqs[i].id == id)
			return &pv->seqs[i];
	pv->seqs = realloc(pv->seqs, (pv->nseqs + 1) * sizeof(*pv->seqs));
	if (!pv->seqs)
		abort();
	pv->seqs[pv->nseqs] = (struct seqstate){ .id = id };
	t->nseqs++;
	return &pv->seqs[pv->nseqs++];
}

static void seq_clear(struct seqstate *s)
{
	free(s->names.v);
	free(s->annots.v);
	free(s->locs);
	*s = (struct seqstate){ .id = s->id, .cleared = true, .any_ts = s->any_ts,
				.last_ts = s->last_ts };
}

static void strtab_set(struct pfr_trace *t, struct strtab *tab, uint64_t iid, char *s,
		       const char *what)
{
	if (!iid || iid > MAX_IID) {
		err(t, "%s: bad iid %" PRIu64, what, iid);
		return;
	}
	if (iid >= tab->n) {
		size_t n = (size_t)iid + 1;

		tab->v = realloc(tab->v, n * sizeof(*tab->v));
		if (!tab->v)
			abort();
		memset(tab->v + tab->n, 0, (n - tab->n) * sizeof(*tab->v));
		tab->n = n;
	}
	if (tab->v[iid] && strcmp(tab->v[iid], s))
		err(t, "%s: iid %" PRIu64 " redefined", what, iid);
	tab->v[iid] = s;
}

static const char *strtab_get(const struct strtab *tab, uint64_t iid)
{
	return iid < tab->n ? tab->v[iid] : NULL;
}

/* InternedData entry {iid = 1, name = 2}. */
static void parse_named_entry(struct pfr_trace *t, struct strtab *tab, const struct pfw_field *f,
			      const char *what)
{
	struct pfw_cursor c = pfw_sub(f);
	struct pfw_field g;
	uint64_t iid = 0;
	char *name = NULL;

	while (pfw_next(&c, &g)) {
		if (g.num == 1 && g.wt == 0)
			iid = g.v;
		else if (g.num == 2 && g.wt == 2)
			name = keep_str(t, &g);
		else
			err(t, "%s: unexpected field %u", what, g.num);
	}
	if (c.bad || !name)
		err(t, "%s: malformed entry", what);
	else
		strtab_set(t, tab, iid, name, what);
}

static void parse_srcloc(struct pfr_trace *t, struct seqstate *s, const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f);
	struct pfw_field g;
	struct srcloc loc = { .defined = true };
	uint64_t iid = 0;

	while (pfw_next(&c, &g)) {
		if (g.num == 1 && g.wt == 0)
			iid = g.v;
		else if (g.num == 2 && g.wt == 2)
			loc.file = keep_str(t, &g);
		else if (g.num == 3 && g.wt == 2)
			loc.function = keep_str(t, &g);
		else if (g.num == 4 && g.wt == 0)
			loc.line = (uint32_t)g.v;
		else
			err(t, "source location: unexpected field %u", g.num);
	}
	if (c.bad || !iid || iid > MAX_IID) {
		err(t, "source location: malformed entry");
		return;
	}
	if (iid >= s->nlocs) {
		size_t n = (size_t)iid + 1;

		s->locs = realloc(s->locs, n * sizeof(*s->locs));
		if (!s->locs)
			abort();
		memset(s->locs + s->nlocs, 0, (n - s->nlocs) * sizeof(*s->locs));
		s->nlocs = n;
	}
	s->locs[iid] = loc;
}

static void parse_interned(struct pfr_trace *t, struct seqstate *s, const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f);
	struct pfw_field g;

	while (pfw_next(&c, &g)) {
		if (g.wt != 2) {
			err(t, "interned data: field %u is not a message", g.num);
			continue;
		}
		if (g.num == 2) {
			parse_named_entry(t, &s->names, &g, "event name");
			t->interned_names++;
		} else if (g.num == 3) {
			parse_named_entry(t, &s->annots, &g, "annotation name");
		} else if (g.num == 4) {
			parse_srcloc(t, s, &g);
		} else {
			err(t, "interned data: unexpected field %u", g.num);
		}
	}
	if (c.bad)
		err(t, "interned data: malformed");
}

static void parse_defaults(struct pfr_trace *t, struct seqstate *s, const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f), c2;
	struct pfw_field g, h;

	while (pfw_next(&c, &g)) {
		if (g.num == 58 && g.wt == 0) {
			s->def_clock = (uint32_t)g.v;
		} else if (g.num == 11 && g.wt == 2) {
			c2 = pfw_sub(&g);
			while (pfw_next(&c2, &h))
				if (h.num == 11 && h.wt == 0)
					s->def_track = h.v;
				else
					err(t, "track event defaults: unexpected field %u", h.num);
		} else {
			err(t, "packet defaults: unexpected field %u", g.num);
		}
	}
}

static void parse_clock_snapshot(struct pfr_trace *t, struct seqstate *s, const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f), c2;
	struct pfw_field g, h;
	bool have_builtin = false, have_seq = false;
	uint64_t builtin = 0, seqv = 0;

	while (pfw_next(&c, &g)) {
		uint32_t id = 0;
		uint64_t ts = 0;
		bool incr = false;

		if (g.num == 2 && g.wt == 0)
			continue;	/* primary_trace_clock */
		if (g.num != 1 || g.wt != 2) {
			err(t, "clock snapshot: unexpected field %u", g.num);
			continue;
		}
		c2 = pfw_sub(&g);
		while (pfw_next(&c2, &h)) {
			if (h.num == 1)
				id = (uint32_t)h.v;
			else if (h.num == 2)
				ts = h.v;
			else if (h.num == 3)
				incr = h.v;
		}
		if (id >= 64 && id <= 127) {
			if (id != 64 || !incr)
				err(t, "clock snapshot: only incremental clock 64 is expected");
			have_seq = true;
			seqv = ts;
		} else {
			have_builtin = true;
			builtin = ts;
		}
	}
	if (!have_builtin || !have_seq) {
		err(t, "seq %" PRIu32 ": clock snapshot lacks a builtin or sequence clock", s->id);
		return;
	}
	s->have_clock = true;
	s->clock_t0 = s->clock_cur = seqv;
	s->clock_b0 = builtin;
}

static void parse_annotation(struct pfr_trace *t, struct seqstate *s, struct pfr_event *e,
			     const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f);
	struct pfw_field g;
	struct pfr_annot a = { 0 };
	bool have_value = false;

	while (pfw_next(&c, &g)) {
		if (g.num == 1 && g.wt == 0) {
			a.name = strtab_get(&s->annots, g.v);
			if (!a.name)
				err(t, "seq %" PRIu32 ": annotation name iid %" PRIu64 " not defined",
				    s->id, g.v);
			continue;
		}
		have_value = true;
		if (g.num == 2 && g.wt == 0)
			a.kind = PFR_BOOL;
		else if (g.num == 3 && g.wt == 0)
			a.kind = PFR_UINT;
		else if (g.num == 4 && g.wt == 0)
			a.kind = PFR_INT;
		else if (g.num == 7 && g.wt == 0)
			a.kind = PFR_POINTER;
		else if (g.num == 6 && g.wt == 2)
			a.kind = PFR_STRING, a.s = keep_str(t, &g);
		else
			err(t, "debug annotation: unexpected field %u", g.num);
		a.u = g.v;
	}
	if (!a.name || !have_value) {
		err(t, "debug annotation without name or value");
		return;
	}
	if (e->nannots == PFR_MAX_ANNOTS) {
		err(t, "too many annotations on one event");
		return;
	}
	e->annots[e->nannots++] = a;
}

static int track_index(struct pfr_trace *t, uint64_t uuid)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == uuid)
			return (int)i;
	return -1;
}

static int track_add(struct pfr_trace *t, uint64_t uuid)
{
	struct priv *pv = t->priv;
	size_t cap = pv->tracks_cap;

	t->tracks = grow(t->tracks, &pv->tracks_cap, t->ntracks, sizeof(*t->tracks));
	pv->depth = grow(pv->depth, &cap, t->ntracks, sizeof(*pv->depth));
	t->tracks[t->ntracks] = (struct pfr_track){ .uuid = uuid };
	pv->depth[t->ntracks] = 0;
	return (int)t->ntracks++;
}

static void parse_descriptor(struct pfr_trace *t, const struct pfw_field *f)
{
	struct pfw_cursor c = pfw_sub(f), c2;
	struct pfw_field g, h;
	struct pfr_track d = { 0 };
	int i;

	while (pfw_next(&c, &g)) {
		if (g.num == 1 && g.wt == 0) {
			d.uuid = g.v;
		} else if (g.num == 5 && g.wt == 0) {
			d.parent = g.v;
		} else if (g.num == 2 && g.wt == 2) {
			d.name = keep_str(t, &g);
		} else if ((g.num == 3 || g.num == 4) && g.wt == 2) {
			d.kind = g.num == 3 ? PFR_TRACK_PROCESS : PFR_TRACK_THREAD;
			c2 = pfw_sub(&g);
			while (pfw_next(&c2, &h)) {
				if (h.num == 1 && h.wt == 0)
					d.pid = (int32_t)h.v;
				else if (d.kind == PFR_TRACK_THREAD && h.num == 2 && h.wt == 0)
					d.tid = (int64_t)h.v;
				else if (d.kind == PFR_TRACK_THREAD && h.num == 5 && h.wt == 2)
					d.name = keep_str(t, &h);
				else if (d.kind == PFR_TRACK_PROCESS && h.num == 6 && h.wt == 2)
					d.name = keep_str(t, &h);
				else if (d.kind == PFR_TRACK_PROCESS && h.num == 2 && h.wt == 2 &&
					 d.ncmdline < 8)
					d.cmdline[d.ncmdline++] = keep_str(t, &h);
				else
					err(t, "descriptor: unexpected field %u", h.num);
			}
		} else {
			err(t, "track descriptor: unexpected field %u", g.num);
		}
	}
	if (!d.uuid) {
		err(t, "track descriptor without uuid");
		return;
	}
	i = track_index(t, d.uuid);
	if (i >= 0 && t->tracks[i].described)
		err(t, "track %" PRIu64 " described twice", d.uuid);
	if (i < 0)
		i = track_add(t, d.uuid);
	d.described = true;
	d.open = t->tracks[i].open;
	d.max_depth = t->tracks[i].max_depth;
	t->tracks[i] = d;
}

static void parse_event(struct pfr_trace *t, struct seqstate *s, const struct pfw_field *f,
			struct pfr_event *e)
{
	struct pfw_cursor c = pfw_sub(f);
	struct pfw_field g;
	bool named = false;

	e->track = s->def_track;
	while (pfw_next(&c, &g)) {
		if (g.num == 9 && g.wt == 0) {
			e->type = (int)g.v;
		} else if (g.num == 11 && g.wt == 0) {
			e->track = g.v;
		} else if (g.num == 10 && g.wt == 0) {
			named = true;
			e->name = strtab_get(&s->names, g.v);
			if (!e->name)
				err(t, "seq %" PRIu32 ": event name iid %" PRIu64 " not defined",
				    s->id, g.v);
		} else if (g.num == 34 && g.wt == 0) {
			if (g.v >= s->nlocs || !s->locs[g.v].defined) {
				err(t, "seq %" PRIu32 ": source location iid %" PRIu64 " not defined",
				    s->id, g.v);
				continue;
			}
			e->src_file = s->locs[g.v].file;
			e->src_function = s->locs[g.v].function;
			e->src_line = s->locs[g.v].line;
		} else if (g.num == 4 && g.wt == 2) {
			parse_annotation(t, s, e, &g);
		} else if (g.num == 22 && g.wt == 2) {
			if (!e->category)
				e->category = keep_str(t, &g);
		} else {
			err(t, "track event: unexpected field %u", g.num);
		}
	}
	if (c.bad)
		err(t, "track event: malformed");
	if (!e->track) {
		err(t, "event on no track");
		return;
	}
	if (track_index(t, e->track) < 0)
		track_add(t, e->track);
	e->named = named;
}

/* An event in the importer's order: nesting replayed on its track. */
static void nest(struct pfr_trace *t, struct pfr_event *e)
{
	struct priv *pv = t->priv;
	int i = track_index(t, e->track);

	e->depth = pv->depth[i];
	switch (e->type) {
	case 1:
		if (!e->named)
			err(t, "BEGIN without a name at %" PRIu64, e->ts);
		if (pv->depth[i] >= MAX_DEPTH)
			err(t, "track %" PRIu64 ": nesting deeper than %d", e->track, MAX_DEPTH);
		pv->depth[i]++;
		if (pv->depth[i] > t->tracks[i].max_depth)
			t->tracks[i].max_depth = pv->depth[i];
		break;
	case 2:
		if (e->named)
			err(t, "END with a name at %" PRIu64, e->ts);
		if (!pv->depth[i])
			err(t, "track %" PRIu64 ": END at %" PRIu64 " without an open BEGIN",
			    e->track, e->ts);
		else
			pv->depth[i]--;
		break;
	case 3:
		if (!e->named)
			err(t, "INSTANT without a name at %" PRIu64, e->ts);
		if (pv->depth[i] >= MAX_DEPTH)
			err(t, "track %" PRIu64 ": instant deeper than %d", e->track, MAX_DEPTH);
		break;
	default:
		err(t, "unexpected event type %d", e->type);
	}
}

static void parse_packet(struct pfr_trace *t, const struct pfw_field *pf)
{
	struct priv *pv = t->priv;
	struct pfw_cursor c = pfw_sub(pf);
	struct pfw_field g, te = { 0 }, td = { 0 }, cs = { 0 }, in = { 0 }, def = { 0 };
	bool has_ts = false, has_seq = false;
	uint64_t ts = 0, flags = 0;
	uint32_t seq_id = 0, clock = 0;
	struct seqstate *s = NULL;
	struct pfr_event e = { 0 };

	while (pfw_next(&c, &g)) {
		switch (g.num) {
		case 8: has_ts = true, ts = g.v; break;
		case 58: clock = (uint32_t)g.v; break;
		case 10: has_seq = true, seq_id = (uint32_t)g.v; break;
		case 13: flags = g.v; break;
		case 87: break;
		case 11: te = g; break;
		case 60: td = g; break;
		case 6: cs = g; break;
		case 12: in = g; break;
		case 59: def = g; break;
		default: err(t, "packet: unexpected field %u", g.num);
		}
	}
	if (c.bad) {
		err(t, "packet %zu: malformed", t->packets);
		return;
	}
	if (has_seq) {
		s = seq_get(t, seq_id);
		if (flags & 1) {
			t->cleared++;
			seq_clear(s);
		} else if (!s->cleared && (in.data || def.data || (flags & 2) || te.data)) {
			err(t, "seq %" PRIu32 ": packet before SEQ_INCREMENTAL_STATE_CLEARED", seq_id);
		}
	} else if (in.data || def.data || cs.data || flags) {
		err(t, "packet %zu: sequence state without a sequence id", t->packets);
	}
	if (def.data)
		parse_defaults(t, s, &def);
	if (in.data)
		parse_interned(t, s, &in);
	if (cs.data) {
		parse_clock_snapshot(t, s, &cs);
		if (te.data)
			err(t, "event in a clock snapshot packet is ignored by trace_processor");
		return;
	}
	if (td.data)
		parse_descriptor(t, &td);
	if (!te.data)
		return;
	if (!s) {
		err(t, "event without a sequence");
		return;
	}
	if (!has_ts) {
		err(t, "seq %" PRIu32 ": event without timestamp", seq_id);
		return;
	}
	if (!clock)
		clock = s->def_clock;
	if (clock == 64) {
		if (!s->have_clock) {
			err(t, "seq %" PRIu32 ": clock 64 used without a clock snapshot", seq_id);
			return;
		}
		s->clock_cur += ts;
		ts = s->clock_b0 + (s->clock_cur - s->clock_t0);
	}
	if (s->any_ts && ts < s->last_ts)
		err(t, "seq %" PRIu32 ": timestamp %" PRIu64 " goes back from %" PRIu64, seq_id, ts,
		    s->last_ts);
	s->any_ts = true;
	s->last_ts = ts;
	e.seq = seq_id;
	e.ts = ts;
	parse_event(t, s, &te, &e);
	t->events = grow(t->events, &pv->events_cap, t->nevents, sizeof(*t->events));
	t->events[t->nevents++] = e;
}

static int load(const char *path, struct priv *pv)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 16;
	int n;

	if (!gz)
		return -1;
	pv->data = malloc(cap);
	while (pv->data) {
		if (pv->size == cap) {
			cap *= 2;
			pv->data = realloc(pv->data, cap);
			if (!pv->data)
				break;
		}
		n = gzread(gz, pv->data + pv->size, (unsigned int)(cap - pv->size));
		if (n <= 0) {
			gzclose(gz);
			return n < 0 ? -1 : 0;
		}
		pv->size += (size_t)n;
	}
	gzclose(gz);
	return -1;
}

static int cmp_time_then_file(const void *a, const void *b)
{
	const struct pfr_event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->file_index < y->file_index ? -1 : x->file_index > y->file_index;
}

int pfr_read(const char *path, struct pfr_trace *t)
{
	struct priv *pv = calloc(1, sizeof(*pv));
	struct pfw_cursor c;
	struct pfw_field f;

	*t = (struct pfr_trace){ .priv = pv };
	if (!pv || load(path, pv))
		return -1;
	t->bytes = pv->size;
	if (!pv->size || pv->data[0] != 0x0a)
		err(t, "first byte is not 0x0A: not a Perfetto protobuf trace");
	c = (struct pfw_cursor){ pv->data, pv->data + pv->size, false };
	for (;;) {
		const uint8_t *at = c.p;

		if (!pfw_next(&c, &f))
			break;
		if (f.num != 1 || f.wt != 2) {
			err(t, "top level: unexpected field %u", f.num);
			continue;
		}
		parse_packet(t, &f);
		if (t->nevents && !t->events[t->nevents - 1].packet_bytes)
			t->events[t->nevents - 1].packet_bytes = (size_t)(c.p - at);
		t->packets++;
	}
	if (c.bad)
		err(t, "truncated or malformed at byte %zu", (size_t)(c.p - pv->data));
	/* The importer sorts by time, equal times in file order (a stable
	 * sort of the events as read), and nests in that order. */
	for (size_t i = 0; i < t->nevents; i++)
		t->events[i].file_index = i;
	qsort(t->events, t->nevents, sizeof(*t->events), cmp_time_then_file);
	for (size_t i = 0; i < t->nevents; i++)
		nest(t, &t->events[i]);
	for (size_t i = 0; i < t->ntracks; i++) {
		t->tracks[i].open = pv->depth[i];
		if (!t->tracks[i].described)
			err(t, "events on track %" PRIu64 " without a descriptor", t->tracks[i].uuid);
	}
	return 0;
}

void pfr_free(struct pfr_trace *t)
{
	struct priv *pv = t->priv;

	if (pv) {
		for (size_t i = 0; i < pv->nstrs; i++)
			free(pv->strs[i]);
		for (size_t i = 0; i < pv->nseqs; i++) {
			free(pv->seqs[i].names.v);
			free(pv->seqs[i].annots.v);
			free(pv->seqs[i].locs);
		}
		free(pv->strs);
		free(pv->seqs);
		free(pv->depth);
		free(pv->data);
		free(pv);
	}
	for (size_t i = 0; i < t->nerrors; i++)
		free(t->errors[i]);
	free(t->errors);
	free(t->events);
	free(t->tracks);
	*t = (struct pfr_trace){ 0 };
}

const struct pfr_track *pfr_track(const struct pfr_trace *t, uint64_t uuid)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].uuid == uuid)
			return &t->tracks[i];
	return NULL;
}

const struct pfr_track *pfr_thread_track(const struct pfr_trace *t, int64_t tid)
{
	for (size_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].kind == PFR_TRACK_THREAD && t->tracks[i].tid == tid)
			return &t->tracks[i];
	return NULL;
}

const struct pfr_annot *pfr_annot(const struct pfr_event *e, const char *name)
{
	for (int i = 0; i < e->nannots; i++)
		if (!strcmp(e->annots[i].name, name))
			return &e->annots[i];
	return NULL;
}
