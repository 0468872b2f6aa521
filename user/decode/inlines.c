// SPDX-License-Identifier: MIT
/* Inline frames from DWARF along a thread's replay; see inlines.h. */
#include "decode/inlines.h"

#include "util/mt_array.h"

#include <errno.h>
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


/* Reads the inline ranges of FN (the function holding IP in P) into the
 * cache, relative to its start; returns their count (0 when out of memory),
 * or -EAGAIN (nothing kept) when RS defers while another thread holds the
 * DWARF. */
static __attribute__((noinline)) int read_ranges(struct mt_inl_ranges *rs, struct mt_funcs *fs,
						 const struct mt_proc *p, const struct mt_cs_fn *fn,
						 uint64_t ip)
{
	size_t cap = rs->nfuncs;
	struct mt_inl_range *r = NULL;
	int k;

	if (fn->id >= rs->nfuncs) {
		if (MT_ARRAY_GROW_TO(rs->funcs, cap, (size_t)fn->id + 1))
			return 0;
		for (size_t i = rs->nfuncs; i < cap; i++)
			rs->funcs[i].n = -1;
		rs->nfuncs = cap;
	}
	k = rs->defer == MT_INL_DEFER_ALWAYS
		    ? -EAGAIN
		    : mt_funcs_inline_ranges(fs, p, ip, rs->defer == MT_INL_WAIT, &r);
	for (int i = 0; i < k; i++) {
		r[i].lo -= fn->start;
		r[i].hi -= fn->start;
	}
	rs->funcs[fn->id].n = k;
	rs->funcs[fn->id].r = r;
	return k;
}

/* The inline ranges of FN (the function holding IP in P), relative to its
 * start, through the cache (inline: every logged block and replayed op
 * asks, and most functions have none). */
static inline const struct mt_inl_range *ranges(struct mt_inl_ranges *rs, struct mt_funcs *fs,
						const struct mt_proc *p,
						const struct mt_cs_fn *fn, uint64_t ip, int *n)
{
	if (fn->id < rs->nfuncs && rs->funcs[fn->id].n >= 0)
		*n = rs->funcs[fn->id].n;
	else
		*n = read_ranges(rs, fs, p, fn, ip);
	return *n > 0 ? rs->funcs[fn->id].r : NULL;
}

int mt_inl_span(struct mt_inl_ranges *rs, struct mt_funcs *fs, const struct mt_proc *p,
		const struct mt_cs_fn *fn, uint64_t ip, uint64_t *lo, uint64_t *hi)
{
	uint64_t at = ip - fn->start, a = *lo - fn->start, b = *hi - fn->start;
	const struct mt_inl_range *r;
	int n;

	if (fn->id < MT_FN_FIRST_USER || ip < fn->start || ip >= fn->end)
		return 0;
	r = ranges(rs, fs, p, fn, ip, &n);
	if (n <= 0)
		return n == -EAGAIN ? -EAGAIN : 0;
	for (int i = 0; i < n; i++) {
		if (r[i].lo <= at && r[i].lo > a)
			a = r[i].lo;
		if (r[i].hi <= at && r[i].hi > a)
			a = r[i].hi;
		if (r[i].lo > at && r[i].lo < b)
			b = r[i].lo;
		if (r[i].hi > at && r[i].hi < b)
			b = r[i].hi;
	}
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
	const struct mt_inl_range *r = ranges(&lk->ranges, in->fs, in->proc, fn, ip, &nr);
	struct mt_inl_chain *c;

	*n = 0;
	if (nr <= 0 || (!lk->cache && !(lk->cache = calloc(MT_INL_CACHE, sizeof(*lk->cache)))))
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
