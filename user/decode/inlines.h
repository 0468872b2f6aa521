/* SPDX-License-Identifier: MIT */
/*
 * Inline frames: DWARF's inlined functions as frames nested in the
 * function they were inlined into, for one thread's replay.
 *
 * The replay sees a function's code only where the log keeps it: at the
 * blocks that enter it (a call, a return into it, a jump from another
 * function), at the blocks where the inline chain changes (the CPU log
 * keeps those, see mt_inl_span()) and at the calls it makes, whose return
 * addresses the log holds even when the block making them is not kept
 * (decode/oplog.h). At each such point the inline chain there (outermost
 * first) is compared with the inline frames open on the top frame: those
 * no longer in it end, the new ones begin. An inline frame thus spans from
 * the first to the last point seen inside it: from the first block that
 * starts in it to the next point outside it.
 *
 * Inline BEGIN and END events carry MT_EV_INLINE and the inlined
 * function's id (mt_func.inlined); the frame below them is the
 * out-of-line function. Every inline frame ends before its function does.
 */
#ifndef MTRACE_DECODE_INLINES_H
#define MTRACE_DECODE_INLINES_H

#include "decode/callstack.h"
#include "decode/funcs.h"

/* Chains looked up recently, by address. Deeper chains keep their outer
 * levels. */
#define MT_INL_CACHE 1024
#define MT_INL_MAX 8

/* Each function's inline ranges, indexed by function id, read once (a
 * cache that forgets would read a random walk's DWARF again and again: 4.7
 * times the decode's time on the benchmark). Stored relative to the
 * function's start, so that one read serves every process mapping it. */
struct mt_inl_ranges {
	struct mt_inl_fn {
		int n;		/* below 0: not read yet */
		int ncuts;
		struct mt_inl_range *r;
		/* The distinct ends (lo and hi) of the ranges, sorted, for
		 * mt_inl_span() to search: in R's allocation, after them. */
		const uint64_t *cuts;
	} *funcs;
	size_t nfuncs;
	/* Whether a function's ranges wait for its binary's DWARF while
	 * another thread holds it (the replay), or not (the CPU streams'
	 * decoding: it can go on without them), or are never had (tests:
	 * mt_decode_opts.defer_inline_ranges). */
	enum { MT_INL_WAIT, MT_INL_DEFER, MT_INL_DEFER_ALWAYS } defer;
};

void mt_inl_ranges_fini(struct mt_inl_ranges *rs);

/* Keeps the N ranges R (malloc'ed; taken over, freed on failure) as those
 * of function ID, whose code starts at START. Returns N, or -ENOMEM. */
int mt_inl_ranges_keep(struct mt_inl_ranges *rs, uint32_t id, uint64_t start,
		       struct mt_inl_range *r, int n);

/*
 * Narrows [*LO, *HI), the extent of FN (the function holding IP in process
 * P), to the part around IP that no inline range of FN begins or ends in:
 * IP's inline chain holds throughout. Leaves it alone when FN has none.
 * Returns 0, or -EAGAIN (the extent left alone) when RS defers and
 * another thread holds the DWARF of FN's ranges (and always with
 * MT_INL_DEFER_ALWAYS, for functions whose ranges were not read).
 */
int mt_inl_span(struct mt_inl_ranges *rs, struct mt_funcs *fs, const struct mt_proc *p,
		const struct mt_cs_fn *fn, uint64_t ip, uint64_t *lo, uint64_t *hi);

/* Whether function ID is known to have no inline ranges (mt_inl_span()
 * would leave the extent alone): inline, the decoder asks for every
 * logged block and most code has none. */
static inline int mt_inl_known_none(const struct mt_inl_ranges *rs, uint32_t id)
{
	return id < rs->nfuncs && rs->funcs[id].n == 0;
}

/*
 * What the replays of one process's threads look up alike, kept once for
 * them all (a process has hundreds of threads; kept per thread, the chains
 * alone were 48 KiB a thread): each function's inline ranges, and the
 * chains of recent addresses.
 */
struct mt_inl_lookups {
	struct mt_inl_ranges ranges;
	/* MT_INL_CACHE chains, allocated with the first function that has
	 * inline ranges (code without DWARF never needs them). */
	struct mt_inl_chain {
		uint64_t ip;
		uint8_t n, valid;
		uint32_t id[MT_INL_MAX];
	} *cache;
};

void mt_inl_lookups_fini(struct mt_inl_lookups *lk);

/* One thread's inline frames. */
struct mt_inl {
	struct mt_funcs *fs;
	const struct mt_proc *proc;
	struct mt_inl_lookups *lk;	/* its process's */
	void (*emit)(void *ctx, const struct mt_ev *ev);	/* the consumer */
	void *ctx;
	/* Open inline frames, oldest first, each with the depth of the call
	 * stack frame it belongs to. */
	struct {
		uint32_t id;
		uint32_t depth;
	} *open;
	size_t nopen, cap;
};

/* LK is shared by the threads of PROC, and outlives IN. */
void mt_inl_init(struct mt_inl *in, struct mt_funcs *fs, const struct mt_proc *proc,
		 struct mt_inl_lookups *lk, void (*emit)(void *ctx, const struct mt_ev *ev),
		 void *ctx);
void mt_inl_fini(struct mt_inl *in);
/* Ends the inline frames open on call-stack frames deeper than DEPTH. */
void mt_inl_end_above(struct mt_inl *in, size_t depth, uint64_t ts, unsigned int flags);

/* Every event of the call stack CS goes through here before the consumer
 * gets it (the caller passes it on): an END first ends the inline frames
 * of the frame it closes. Inline: it runs for every event. */
static inline void mt_inl_before(struct mt_inl *in, const struct mt_cs *cs, const struct mt_ev *ev)
{
	/* The call stack pops before it emits: its depth is the one left. */
	if (ev->kind == MT_EV_END && in->nopen && in->open[in->nopen - 1].depth > cs->depth)
		mt_inl_end_above(in, cs->depth, ev->ts, MT_EV_INLINE | (ev->flags & MT_EV_TRUNCATED));
}
/* mt_inl_at() past its checks. */
void mt_inl_follow(struct mt_inl *in, const struct mt_cs *cs, uint64_t ts, uint64_t ip);

/*
 * The top frame of CS ran IP at TS, and then CALL (the call ending the
 * block; 0: none, as IP): its inline frames follow their chains. Inline,
 * the cases where nothing can change (the replay asks at nearly every
 * op): no top frame holding the address, or a function known to have no
 * inline ranges and no inline frame open on the top frame (they nest by
 * depth, the deepest last). The checks hold for both addresses: following
 * the first leaves the call stack alone, and where it makes them fail
 * mt_inl_follow() finds nothing to change.
 */
static inline void mt_inl_at(struct mt_inl *in, const struct mt_cs *cs, uint64_t ts, uint64_t ip,
			     uint64_t call)
{
	const struct mt_cs_frame *top;

	if (!cs->depth || cs->off || cs->hidden)
		return;
	top = &cs->stack[cs->depth - 1];
	if (top->fn.id < MT_FN_FIRST_USER)
		return;
	if (mt_inl_known_none(&in->lk->ranges, top->fn.id) &&
	    (!in->nopen || in->open[in->nopen - 1].depth != cs->depth))
		return;
	if (ip && ip >= top->fn.start && ip < top->fn.end)
		mt_inl_follow(in, cs, ts, ip);
	if (call && call >= top->fn.start && call < top->fn.end)
		mt_inl_follow(in, cs, ts, call);
}

#endif
