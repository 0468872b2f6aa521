// SPDX-License-Identifier: MIT
/* Inline frames from DWARF along a thread's replay; see inlines.h. */
#include "decode/inlines.h"

#include <stdlib.h>
#include <string.h>

void mt_inl_init(struct mt_inl *in, struct mt_funcs *fs, const struct mt_proc *proc,
		 void (*emit)(void *ctx, const struct mt_ev *ev), void *ctx)
{
	memset(in, 0, sizeof(*in));
	in->fs = fs;
	in->proc = proc;
	in->emit = emit;
	in->ctx = ctx;
}

void mt_inl_fini(struct mt_inl *in)
{
	free(in->open);
	in->open = NULL;
	in->nopen = in->cap = 0;
}

static void end_above(struct mt_inl *in, size_t depth, uint64_t ts, unsigned int flags)
{
	while (in->nopen && in->open[in->nopen - 1].depth > depth) {
		struct mt_ev ev = { .ts = ts, .kind = MT_EV_END, .flags = (uint8_t)flags,
				    .arg = in->open[--in->nopen].id };

		in->emit(in->ctx, &ev);
	}
}

void mt_inl_event(struct mt_inl *in, const struct mt_cs *cs, const struct mt_ev *ev)
{
	/* The call stack pops before it emits: its depth is the one left. */
	if (ev->kind == MT_EV_END)
		end_above(in, cs->depth, ev->ts, MT_EV_INLINE | (ev->flags & MT_EV_TRUNCATED));
	in->emit(in->ctx, ev);
}

/* IP's chain, outermost first, through the cache. */
static const uint32_t *chain(struct mt_inl *in, uint64_t ip, size_t *n)
{
	size_t slot = (ip ^ ip >> 10) % MT_INL_CACHE;

	if (!in->cache[slot].valid || in->cache[slot].ip != ip) {
		in->cache[slot].ip = ip;
		in->cache[slot].n = (uint8_t)mt_funcs_inlines(in->fs, in->proc, ip, in->cache[slot].id,
							      MT_FUNCS_MAX_INLINE);
		in->cache[slot].valid = 1;
	}
	*n = in->cache[slot].n;
	return in->cache[slot].id;
}

static void begin(struct mt_inl *in, uint64_t ts, uint32_t id, uint32_t depth, uint64_t ip)
{
	struct mt_ev ev = { .ts = ts, .kind = MT_EV_BEGIN, .flags = MT_EV_INLINE, .arg = id,
			    .addr = ip };

	if (in->nopen == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 16;
		void *v = realloc(in->open, cap * sizeof(*in->open));

		if (!v)
			return;	/* left out; the nesting stays valid */
		in->open = v;
		in->cap = cap;
	}
	in->open[in->nopen].id = id;
	in->open[in->nopen].depth = depth;
	in->nopen++;
	in->emit(in->ctx, &ev);
}

void mt_inl_at(struct mt_inl *in, const struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	const struct mt_cs_frame *top;
	const uint32_t *ids;
	size_t n, base, keep = 0;

	if (!cs->depth || cs->off || cs->hidden)
		return;
	top = &cs->stack[cs->depth - 1];
	if (ip < top->fn.start || ip >= top->fn.end || top->fn.id < MT_FN_FIRST_USER)
		return;
	ids = chain(in, ip, &n);
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
