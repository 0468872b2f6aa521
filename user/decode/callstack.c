// SPDX-License-Identifier: MIT
/* Call-stack rebuild for one thread; the rules are in callstack.h. */
#include "decode/callstack.h"
#include "decode/kernel_image.h"
#include "util/mt_array.h"

#include <stdlib.h>
#include <string.h>

void mt_cs_init(struct mt_cs *cs, const struct mt_cs_ops *ops)
{
	memset(cs, 0, sizeof(*cs));
	cs->ops = *ops;
}

void mt_cs_fini(struct mt_cs *cs)
{
	free(cs->stack);
	cs->stack = NULL;
	cs->depth = cs->cap = 0;
}

static uint64_t clamp(struct mt_cs *cs, uint64_t ts)
{
	if (ts < cs->last_ts) {
		cs->backsteps++;
		return cs->last_ts;
	}
	cs->last_ts = ts;
	return ts;
}

static void emit(struct mt_cs *cs, uint64_t ts, enum mt_ev_kind kind, unsigned int flags,
		 uint32_t arg, uint64_t addr)
{
	if (cs->inferred_only && kind != MT_EV_GAP &&
	    !(kind == MT_EV_BEGIN && (flags & MT_EV_INFERRED)))
		return;
	cs->ev = (struct mt_ev){ ts, (uint8_t)kind, (uint8_t)flags, 0, arg, addr };
	cs->ops.emit(cs->ops.ctx, &cs->ev);
}

static int contains(const struct mt_cs_frame *f, uint64_t ip)
{
	return ip >= f->fn.start && ip < f->fn.end;
}

static struct mt_cs_frame *top(struct mt_cs *cs)
{
	return &cs->stack[cs->depth - 1];
}

static void push(struct mt_cs *cs, uint64_t ts, const struct mt_cs_fn *fn, uint64_t ret,
		 unsigned int flags, uint64_t addr)
{
	if (cs->depth == MT_CS_MAX_DEPTH) {
		cs->hidden++;
		return;
	}
	if (MT_ARRAY_RESERVE(cs->stack, cs->cap, cs->depth, 1)) {
		/* Keeping the events nested matters more than depth. */
		cs->hidden++;
		return;
	}
	cs->stack[cs->depth++] = (struct mt_cs_frame){
		*fn, ret, (uint8_t)(flags & (MT_EV_ASYNC | MT_CS_FAR | MT_EV_EXCESS)) };
	emit(cs, ts, MT_EV_BEGIN, flags & ~MT_CS_FAR, fn->id, addr);
}

/* Returns the closed frame, in place (not copied: the replay pops about
 * once per op) and valid until the next push. */
static const struct mt_cs_frame *pop_at(struct mt_cs *cs, uint64_t ts, unsigned int flags,
					uint64_t to)
{
	const struct mt_cs_frame *f = &cs->stack[--cs->depth];

	emit(cs, ts, MT_EV_END, flags | (f->flags & MT_EV_EXCESS), f->fn.id, to);
	return f;
}

static const struct mt_cs_frame *pop(struct mt_cs *cs, uint64_t ts, unsigned int flags)
{
	return pop_at(cs, ts, flags, 0);
}

/* Closes frames until DEPTH remain. */
static void unwind_to(struct mt_cs *cs, uint64_t ts, size_t depth)
{
	while (cs->depth > depth)
		pop(cs, ts, 0);
}

/* The innermost frame below the top whose function holds IP, or -1. */
static long frame_below_holding(struct mt_cs *cs, uint64_t ip)
{
	for (size_t i = cs->depth - 1; i-- > 0;)
		if (contains(&cs->stack[i], ip))
			return (long)i;
	return -1;
}

/* A frame open since the stretch's start (its first block's function, or
 * a caller revealed by a return past the oldest frame). */
static void push_inferred(struct mt_cs *cs, const struct mt_cs_fn *fn, uint64_t ip)
{
	unsigned int excess = cs->inferred++ < MT_CS_MAX_INFERRED ? 0 : MT_EV_EXCESS;

	push(cs, cs->seg_start, fn, 0, MT_EV_INFERRED | excess, ip);
}

static void replace_top(struct mt_cs *cs, uint64_t ts, const struct mt_cs_fn *fn, uint64_t ip)
{
	const struct mt_cs_frame *old = pop(cs, ts, MT_EV_TAIL);

	push(cs, ts, fn, old->ret, MT_EV_TAIL | (old->flags & ~MT_EV_EXCESS), ip);
}

/* do_return() when the frame below the top does not hold IP. */
static __attribute__((noinline)) void return_elsewhere(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	const struct mt_cs_frame *f = pop_at(cs, ts, MT_EV_RET, ip);
	struct mt_cs_fn fn;

	if (cs->depth && f->ret != ip && !contains(top(cs), ip)) {
		/* Not back in the caller: the return skipped frames
		 * (exception unwinding, longjmp-like code) to the one that
		 * expects IP, or else the one holding it. */
		size_t k = cs->depth;

		while (k-- > 0 && cs->stack[k].ret != ip)
			;
		if (k != (size_t)-1) {
			unwind_to(cs, ts, k);
		} else {
			for (k = cs->depth; k-- > 0 && !contains(&cs->stack[k], ip);)
				;
			if (k != (size_t)-1) {
				unwind_to(cs, ts, k + 1);
				return;
			}
			if (f->flags & MT_EV_ASYNC) {
				/* A signal handler returns into the sigreturn
				 * trampoline, entered as asynchronously as the
				 * handler was. */
				cs->ops.resolve(cs->ops.ctx, ip, &fn);
				push(cs, ts, &fn, 0, MT_EV_ASYNC, ip);
				return;
			}
		}
	}
	/* In the frame that expected IP and holds it: nothing to look up. */
	if (cs->depth && contains(top(cs), ip))
		return;
	cs->ops.resolve(cs->ops.ctx, ip, &fn);
	if (!cs->depth)
		push_inferred(cs, &fn, ip);	/* returned past the oldest frame */
	else
		replace_top(cs, ts, &fn, ip);	/* the caller was tail-replaced */
}

/* A return to IP. Back in the caller, as nearly every return is, it only
 * closes the top frame: nothing to look up, and the END is handed on in a
 * tail call. */
static void do_return(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	if (cs->depth > 1 && contains(&cs->stack[cs->depth - 2], ip))
		pop_at(cs, ts, MT_EV_RET, ip);
	else
		return_elsewhere(cs, ts, ip);
}

/* A jump to IP, out of the top frame's function. Out of line, as
 * far_return(): mt_cs_block() then saves no registers for them. */
static __attribute__((noinline)) void do_jump(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	struct mt_cs_fn fn;
	long i;

	cs->ops.resolve(cs->ops.ctx, ip, &fn);
	if (ip != fn.start) {
		i = frame_below_holding(cs, ip);
		if (i >= 0) {
			unwind_to(cs, ts, (size_t)i + 1);
			return;
		}
	}
	replace_top(cs, ts, &fn, ip);
}

/* Trace resumed at IP after being off. */
static void resume(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	struct mt_cs_fn fn;
	long i;

	if (contains(top(cs), ip))
		return;
	i = frame_below_holding(cs, ip);
	if (i >= 0) {
		unwind_to(cs, ts, (size_t)i + 1);
		return;
	}
	cs->ops.resolve(cs->ops.ctx, ip, &fn);
	push(cs, ts, &fn, 0, MT_EV_ASYNC, ip);
}

/*
 * A far return leaves the kernel code entered since the latest far call
 * (returning to user space, all the kernel frames): they close, the top
 * one as the return, and control lands at IP as when trace resumes (a
 * signal handler, say, opens asynchronously). Without such frames (the
 * snapshot began in the kernel), it is an ordinary return.
 */
static __attribute__((noinline)) void far_return(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	size_t k = cs->depth;
	struct mt_cs_fn fn;

	if (mt_kimage_is_kernel_ip(ip)) {
		while (k && !(cs->stack[k - 1].flags & MT_CS_FAR))
			k--;
	} else {
		while (k && mt_kimage_is_kernel_ip(cs->stack[k - 1].fn.start))
			k--;
	}
	if (mt_kimage_is_kernel_ip(ip) ? !k : k == cs->depth) {
		do_return(cs, ts, ip);
		return;
	}
	pop_at(cs, ts, MT_EV_RET, ip);
	unwind_to(cs, ts, mt_kimage_is_kernel_ip(ip) ? k - 1 : k);
	if (cs->depth) {
		resume(cs, ts, ip);
		return;
	}
	cs->ops.resolve(cs->ops.ctx, ip, &fn);
	push_inferred(cs, &fn, ip);
}

/* A call's target IP opens a frame (a kernel entry's when FAR). */
static __attribute__((noinline)) void do_call(struct mt_cs *cs, uint64_t ts, uint64_t ip, int far)
{
	struct mt_cs_fn fn;

	cs->ops.resolve(cs->ops.ctx, ip, &fn);
	push(cs, ts, &fn, cs->pending_ret, far ? MT_CS_FAR : 0, ip);
}

/* A block at IP reached by transfer X, with trace on, a top frame and no
 * calls beyond the depth limit: every case a tail call or none (a block
 * within the top frame, the commonest, costs a few tests). */
static inline void transfer(struct mt_cs *cs, uint64_t ts, uint64_t ip, enum mt_xfer x)
{
	switch (x) {
	case MT_XFER_CALL:
	case MT_XFER_FAR_CALL:
		do_call(cs, ts, ip, x == MT_XFER_FAR_CALL);
		break;
	case MT_XFER_RET:
		do_return(cs, ts, ip);
		break;
	case MT_XFER_FAR_RET:
		far_return(cs, ts, ip);
		break;
	case MT_XFER_NONE:
	case MT_XFER_JUMP:
		if (!contains(top(cs), ip))
			do_jump(cs, ts, ip);
		break;
	}
}

/* A block that starts a stretch, or comes with trace off, calls beyond
 * the depth limit or no frame. Out of line: a block nearly never needs
 * it, and mt_cs_block() then saves no registers. */
static __attribute__((noinline)) void block_special(struct mt_cs *cs, uint64_t ts, uint64_t ip,
						    enum mt_xfer x)
{
	struct mt_cs_fn fn;

	if (!cs->in_segment) {
		cs->in_segment = 1;
		cs->seg_start = ts;
		cs->inferred = 0;
		cs->ops.resolve(cs->ops.ctx, ip, &fn);
		push_inferred(cs, &fn, ip);
		return;
	}
	if (cs->hidden) {
		if (x == MT_XFER_CALL || x == MT_XFER_FAR_CALL)
			cs->hidden++;
		else if (x == MT_XFER_RET || x == MT_XFER_FAR_RET)
			cs->hidden--;
		return;
	}
	if (cs->off) {
		pop(cs, ts, 0);
		cs->off = 0;
		if (x == MT_XFER_NONE) {
			resume(cs, ts, ip);
			return;
		}
	}
	if (!cs->depth) {
		/* Only reachable after the stack could not grow. */
		cs->ops.resolve(cs->ops.ctx, ip, &fn);
		push(cs, ts, &fn, 0, MT_EV_ASYNC, ip);
		return;
	}
	transfer(cs, ts, ip, x);
}

void mt_cs_block(struct mt_cs *cs, uint64_t ts, uint64_t ip)
{
	enum mt_xfer x = cs->pending;

	ts = clamp(cs, ts);
	cs->blocks++;
	cs->pending = MT_XFER_NONE;
	/* A far transfer to the next instruction nests nothing: an IRET
	 * there (the kernel's sync_core()) only serialises, a VMCALL comes
	 * straight back (its VM exit and entry are out of sight). */
	if ((x == MT_XFER_FAR_RET || x == MT_XFER_FAR_CALL) && ip == cs->pending_ret)
		x = MT_XFER_NONE;
	if (!cs->in_segment || cs->hidden || cs->off || !cs->depth)
		block_special(cs, ts, ip, x);
	else
		transfer(cs, ts, ip, x);
}

void mt_cs_disable(struct mt_cs *cs, uint64_t ts, enum mt_cs_off why, uint64_t at)
{
	struct mt_cs_fn fn = { 0, 0, MT_FN_UNTRACED };
	size_t depth;

	/* Control reached AT before the stop: settle the pending transfer
	 * (say, the return that led there, or with kernel tracing the
	 * interrupt whose handler was about to run). Without AT, a pending
	 * far call is the syscall that stops the trace, settled below. */
	if (at && !cs->off)
		mt_cs_block(cs, ts, at);
	depth = cs->depth;
	ts = clamp(cs, ts);
	if (!cs->in_segment || cs->off || cs->hidden)
		return;
	if (cs->pending == MT_XFER_FAR_CALL) {
		why = MT_OFF_SYSCALL;
		cs->pending = MT_XFER_NONE;
	}
	if (why == MT_OFF_SYSCALL)
		fn.id = MT_FN_SYSCALL;
	push(cs, ts, &fn, 0, 0, 0);
	cs->off = cs->depth > depth;
}

static void close_all(struct mt_cs *cs, uint64_t ts)
{
	while (cs->depth)
		pop(cs, ts, MT_EV_TRUNCATED);
	cs->hidden = 0;
	cs->off = 0;
	cs->pending = MT_XFER_NONE;
}

void mt_cs_gap(struct mt_cs *cs, uint64_t ts, uint32_t reason)
{
	ts = clamp(cs, ts);
	close_all(cs, ts);
	cs->in_segment = 0;
	emit(cs, ts, MT_EV_GAP, 0, reason, 0);
}

void mt_cs_instant(struct mt_cs *cs, uint64_t ts, uint32_t reason)
{
	emit(cs, clamp(cs, ts), MT_EV_INSTANT, 0, reason, 0);
}

void mt_cs_finish(struct mt_cs *cs, uint64_t ts)
{
	close_all(cs, clamp(cs, ts));
}
