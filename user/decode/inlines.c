// SPDX-License-Identifier: MIT
/* Inline frames from DWARF along a thread's replay; see inlines.h. */
#include "decode/inlines.h"

#include "util/mt_array.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void mt_inl_init(struct mt_inl *in, struct mt_funcs *fs, const struct mt_proc *proc,
		 struct mt_inl_lookups *lk, void (*emit)(void *ctx, const struct mt_ev *ev),
		 void *ctx)
{
	memset(in, 0, sizeof(*in));
	in->fs = fs;
	in->proc = proc;
	in->lk = lk;
	in->emit = emit;
	in->ctx = ctx;
}

void mt_inl_ranges_fini(struct mt_inl_ranges *rs)
{
	for (size_t i = 0; i < rs->nfuncs; i++)
		free(rs->funcs[i].r);
	free(rs->funcs);
	rs->funcs = NULL;
	rs->nfuncs = 0;
}

void mt_inl_lookups_fini(struct mt_inl_lookups *lk)
{
	mt_inl_ranges_fini(&lk->ranges);
	free(lk->cache);
	lk->cache = NULL;
}

void mt_inl_fini(struct mt_inl *in)
{
	free(in->open);
	in->open = NULL;
	in->nopen = in->cap = 0;
}

void mt_inl_end_above(struct mt_inl *in, size_t depth, uint64_t ts, unsigned int flags)
{
	while (in->nopen && in->open[in->nopen - 1].depth > depth) {
		struct mt_ev ev = { .ts = ts, .kind = MT_EV_END, .flags = (uint8_t)flags,
				    .arg = in->open[--in->nopen].id };

		in->emit(in->ctx, &ev);
	}
}


/* Function ID's slot in RS, every new one marked not read; -ENOMEM. */
static int grow(struct mt_inl_ranges *rs, uint32_t id)
{
	size_t cap = rs->nfuncs;

	if (id < rs->nfuncs)
		return 0;
	if (MT_ARRAY_GROW_TO(rs->funcs, cap, (size_t)id + 1))
		return -ENOMEM;
	for (size_t i = rs->nfuncs; i < cap; i++)
		rs->funcs[i] = (struct mt_inl_fn){ .n = -1 };
	rs->nfuncs = cap;
	return 0;
}

int mt_inl_ranges_keep(struct mt_inl_ranges *rs, uint32_t id, uint64_t start,
		       struct mt_inl_range *r, int n)
{
	size_t ncuts = 2 * (size_t)n, m = 0;
	struct mt_inl_range *v;
	uint64_t *cuts;

	/* Both ends of every range fit the int count of ends. */
	v = n > 0 && n <= INT_MAX / 2 && !grow(rs, id)
		    ? realloc(r, (size_t)n * sizeof(*r) + ncuts * sizeof(*cuts))
		    : NULL;
	if (!v) {
		free(r);
		return -ENOMEM;
	}
	_Static_assert(sizeof(*v) % _Alignof(uint64_t) == 0, "the ends follow the ranges aligned");
	cuts = (uint64_t *)(void *)(v + n);
	for (int i = 0; i < n; i++) {
		v[i].lo -= start;
		v[i].hi -= start;
		cuts[2 * i] = v[i].lo;
		cuts[2 * i + 1] = v[i].hi;
	}
	qsort(cuts, ncuts, sizeof(*cuts), mt_array_cmp_u64);
	for (size_t i = 0; i < ncuts; i++)
		if (!m || cuts[i] != cuts[m - 1])
			cuts[m++] = cuts[i];
	free(rs->funcs[id].r);
	rs->funcs[id] = (struct mt_inl_fn){ n, (int)m, v, cuts };
	return n;
}

/* Reads the inline ranges of FN (the function holding IP in P) into the
 * cache; returns their count, 0 or -ENOMEM when out of memory (the latter
 * to be read again), or -EAGAIN (nothing kept) when RS defers while
 * another thread holds the DWARF. */
static __attribute__((noinline)) int read_ranges(struct mt_inl_ranges *rs, struct mt_funcs *fs,
						 const struct mt_proc *p, const struct mt_cs_fn *fn,
						 uint64_t ip)
{
	struct mt_inl_range *r = NULL;
	int k;

	if (grow(rs, fn->id))
		return 0;
	k = rs->defer == MT_INL_DEFER_ALWAYS
		    ? -EAGAIN
		    : mt_funcs_inline_ranges(fs, p, fn->id, ip, rs->defer == MT_INL_WAIT, &r);
	if (k > 0)
		return mt_inl_ranges_keep(rs, fn->id, fn->start, r, k);
	rs->funcs[fn->id].n = k;
	return k;
}

/* The inline ranges of FN (the function holding IP in P), relative to its
 * start, through the cache (inline: every logged block and replayed op
 * asks, and most functions have none); NULL when it has none, or they are
 * not had (*N: their count, or the error). */
static inline const struct mt_inl_fn *ranges(struct mt_inl_ranges *rs, struct mt_funcs *fs,
					     const struct mt_proc *p,
					     const struct mt_cs_fn *fn, uint64_t ip, int *n)
{
	if (fn->id < rs->nfuncs && rs->funcs[fn->id].n >= 0)
		*n = rs->funcs[fn->id].n;
	else
		*n = read_ranges(rs, fs, p, fn, ip);
	return *n > 0 ? &rs->funcs[fn->id] : NULL;
}

int mt_inl_span(struct mt_inl_ranges *rs, struct mt_funcs *fs, const struct mt_proc *p,
		const struct mt_cs_fn *fn, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	uint64_t at = ip - fn->start, a = *lo - fn->start, b = *hi - fn->start;
	const struct mt_inl_fn *f;
	size_t i;
	int n;

	if (fn->id < MT_FN_FIRST_USER || ip < fn->start || ip >= fn->end)
		return 0;
	f = ranges(rs, fs, p, fn, ip, &n);
	if (!f)
		return n == -EAGAIN ? -EAGAIN : 0;
	/* The last end at or before AT and the first after it (a scan of
	 * every range took a thousand instructions a block in libc). */
	i = mt_array_upper_bound(f->cuts, (size_t)f->ncuts, sizeof(*f->cuts), 0, at);
	if (i > 0 && f->cuts[i - 1] > a)
		a = f->cuts[i - 1];
	if (i < (size_t)f->ncuts && f->cuts[i] < b)
		b = f->cuts[i];
	*lo = fn->start + a;
	*hi = fn->start + b;
	return 0;
}

/* IP's chain (in the function FN), outermost first, through the cache: the
 * ranges holding IP, one per depth. */
static const uint32_t *chain(struct mt_inl *in, const struct mt_cs_fn *fn, uint64_t ip,
			     size_t *n)
{
	size_t slot = (ip ^ ip >> 10) % MT_INL_CACHE;
	uint64_t at = ip - fn->start;
	int nr;
	struct mt_inl_lookups *lk = in->lk;
	const struct mt_inl_fn *f = ranges(&lk->ranges, in->fs, in->proc, fn, ip, &nr);
	const struct mt_inl_range *r = f ? f->r : NULL;
	struct mt_inl_chain *c;

	*n = 0;
	if (!f || (!lk->cache && !(lk->cache = calloc(MT_INL_CACHE, sizeof(*lk->cache)))))
		return NULL;
	c = &lk->cache[slot];
	if (!c->valid || c->ip != ip) {
		memset(c, 0, sizeof(*c));
		for (int i = 0; i < nr; i++)
			if (at >= r[i].lo && at < r[i].hi && r[i].depth <= MT_INL_MAX) {
				c->id[r[i].depth - 1] = r[i].id;
				if (r[i].depth > c->n)
					c->n = (uint8_t)r[i].depth;
			}
		c->ip = ip;
		c->valid = 1;
	}
	*n = c->n;
	return c->id;
}

static void begin(struct mt_inl *in, uint64_t ts, uint32_t id, uint32_t depth, uint64_t ip)
{
	struct mt_ev ev = { .ts = ts, .kind = MT_EV_BEGIN, .flags = MT_EV_INLINE, .arg = id,
			    .addr = ip };

	if (MT_ARRAY_RESERVE(in->open, in->cap, in->nopen, 1))
		return;	/* left out; the nesting stays valid */
	in->open[in->nopen].id = id;
	in->open[in->nopen].depth = depth;
	in->nopen++;
	in->emit(in->ctx, &ev);
}

/* The rest of mt_inl_at(), whose checks have passed. */
void mt_inl_follow(struct mt_inl *in, const struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	const struct mt_cs_frame *top = &cs->stack[cs->depth - 1];
	const uint32_t *ids;
	size_t n, base, keep = 0;

	ids = chain(in, &top->fn, ip, &n);
	if (!n && (!in->nopen || in->open[in->nopen - 1].depth != cs->depth))
		return;
	base = in->nopen;
	while (base && in->open[base - 1].depth == cs->depth)
		base--;
	while (keep < n && base + keep < in->nopen && in->open[base + keep].id == ids[keep])
		keep++;
	/* The top frame's inline frames past the common outer part end,
	 * innermost first, and IP's deeper ones begin. */
	while (in->nopen > base + keep) {
		struct mt_ev ev = { .ts = ts, .kind = MT_EV_END, .flags = MT_EV_INLINE,
				    .arg = in->open[--in->nopen].id };

		in->emit(in->ctx, &ev);
	}
	for (size_t i = keep; i < n; i++)
		begin(in, ts, ids[i], (uint32_t)cs->depth, ip);
}
