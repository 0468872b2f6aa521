// SPDX-License-Identifier: GPL-2.0-only
/*
 * mtrace triggers: decide in the probe whether this hit is the one the user
 * asked for, and if so freeze the trace as close to it as possible.
 *
 * Every --trigger is attached with its index as the BPF attach cookie; the
 * index selects its filters in the read-only `filters` table that the loader
 * fills before load. Programs:
 *   trig_uprobe      uprobe:   entry of a user function or address
 *   trig_kprobe      kprobe:   entry of a kernel function
 *   trig_uretprobe   uretprobe: return of a user function
 *   trig_slow_entry  slow:     entry, pushes (stack pointer, time) per thread
 *   trig_slow_return slow:     return, pops and compares the duration
 *   freeze_kfunc     tail-called by the winner when the module's kfunc is
 *                    available; loaded only then (its __weak kfunc would
 *                    not resolve otherwise)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trigger.h"

#define SIGSTOP_NR 19

char LICENSE[] SEC("license") = "GPL";

/* Knobs set by the loader between open and load. */
const volatile struct mt_trig_filter filters[MT_TRIG_MAX_SPECS] = {};
const volatile __u32 targ_tgid = 0;		/* 0 = any process */
const volatile __u32 freeze_mode = MT_TRIG_FREEZE_NOTIFY;

/* State user space reads (and resets to re-arm) through the skeleton. */
__u32 fired = 0;				/* first trigger wins: 0 -> 1 once */
__u64 hits[MT_TRIG_MAX_SPECS] = {};		/* matching hits per trigger */
struct mt_trig_event winner = {};		/* the record, written by the winner only */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} freeze_prog SEC(".maps");

/*
 * Calls of a slow: function in progress on one thread, outermost first.
 * Frames are identified by the stack pointer at entry, so a return pairs
 * with its own entry under recursion, and frames skipped by longjmp or an
 * exception (their returns never fire) are dropped when a shallower frame
 * returns or a new call reuses their stack. Calls nested deeper than
 * MT_TRIG_SLOW_DEPTH are not timed; their outer calls still are.
 */
struct slow_frames {
	__u32 depth;
	__u32 pad;
	__u64 sp[MT_TRIG_SLOW_DEPTH];
	__u64 start_ns[MT_TRIG_SLOW_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_TRIG_SLOW_THREADS);
	__type(key, __u64);			/* trigger index << 32 | tid */
	__type(value, struct slow_frames);
} slow_calls SEC(".maps");

extern int mtrace_freeze(__u64 cookie) __ksym __weak;

/*
 * The registers an if= condition may compare, loaded once at fixed context
 * offsets: indexing the context itself would make the compiler derive
 * pointers into it, which the verifier refuses.
 */
struct operands {
	__u64 v[MT_TRIG_OPND_RET + 1];
};

static __always_inline void load_operands(struct pt_regs *ctx, struct operands *o)
{
	o->v[0] = PT_REGS_PARM1(ctx);
	o->v[1] = PT_REGS_PARM2(ctx);
	o->v[2] = PT_REGS_PARM3(ctx);
	o->v[3] = PT_REGS_PARM4(ctx);
	o->v[4] = PT_REGS_PARM5(ctx);
	o->v[5] = ctx->r9;		/* libbpf 1.1 has no PT_REGS_PARM6 */
	o->v[MT_TRIG_OPND_RET] = PT_REGS_RC(ctx);
}

static __always_inline bool cond_holds(const struct operands *o,
				       const volatile struct mt_trig_cond *c)
{
	__u8 which = c->operand;
	__u64 x = o->v[which <= MT_TRIG_OPND_RET ? which : MT_TRIG_OPND_RET], v = c->value;
	__u32 shift = 64 - c->bits;

	/* Only the low `bits` of a register are the argument's value. */
	if (shift > 0 && shift < 64) {
		x <<= shift;
		x = c->is_signed ? (__u64)((__s64)x >> shift) : x >> shift;
	}
	switch (c->op) {
	case MT_TRIG_OP_EQ: return x == v;
	case MT_TRIG_OP_NE: return x != v;
	case MT_TRIG_OP_LT: return c->is_signed ? (__s64)x < (__s64)v : x < v;
	case MT_TRIG_OP_LE: return c->is_signed ? (__s64)x <= (__s64)v : x <= v;
	case MT_TRIG_OP_GT: return c->is_signed ? (__s64)x > (__s64)v : x > v;
	case MT_TRIG_OP_GE: return c->is_signed ? (__s64)x >= (__s64)v : x >= v;
	}
	return false;
}

/* The trigger's index from the attach cookie, or -1 outside the table. */
static __always_inline int spec_index(struct pt_regs *ctx)
{
	__u64 idx = bpf_get_attach_cookie(ctx);

	return idx < MT_TRIG_MAX_SPECS ? (int)idx : -1;
}

/* Process, thread and the trigger's own filters (not the hit count). */
static __always_inline bool filters_pass(const struct operands *o, int idx, __u64 pid_tgid)
{
	const volatile struct mt_trig_filter *f = &filters[idx];
	__u32 tid = (__u32)pid_tgid;

	if (targ_tgid && (pid_tgid >> 32) != targ_tgid)
		return false;
	if (f->tid && f->tid != tid)
		return false;
	for (int i = 0; i < MT_TRIG_MAX_CONDS; i++) {
		if (i >= f->nr_conds)
			break;
		if (!cond_holds(o, &f->conds[i]))
			return false;
	}
	return true;
}

static __always_inline void notify(struct mt_trig_event *e)
{
	bpf_ringbuf_output(&events, e, sizeof(*e), BPF_RB_FORCE_WAKEUP);
}

/*
 * Counts a matching hit; on the requested one, wins the race between
 * triggers (at most once per arming) and freezes.
 */
static __always_inline int count_and_fire(struct pt_regs *ctx, int idx, __u64 pid_tgid,
					  __u64 ip, __u64 value)
{
	struct mt_trig_event *e = &winner;
	__u64 n = __sync_fetch_and_add(&hits[idx], 1) + 1;

	if (n != filters[idx].hit)
		return 0;
	if (__sync_val_compare_and_swap(&fired, 0, 1) != 0)
		return 0;

	e->time_ns = bpf_ktime_get_ns();
	e->ip = ip;
	e->value = value;
	e->hit = n;
	e->cpu = bpf_get_smp_processor_id();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->spec = idx;
	e->reason = filters[idx].kind;
	e->freeze_err = 0;

	if (freeze_mode == MT_TRIG_FREEZE_KFUNC)
		bpf_tail_call(ctx, &freeze_prog, 0);	/* returns only if not loaded */
	if (freeze_mode == MT_TRIG_FREEZE_SIGSTOP) {
		e->freeze = MT_TRIG_FREEZE_SIGSTOP;
		e->freeze_err = bpf_send_signal_thread(SIGSTOP_NR);
	} else {
		e->freeze = MT_TRIG_FREEZE_NOTIFY;
	}
	notify(e);
	return 0;
}

static __always_inline int on_entry(struct pt_regs *ctx, __u64 ip)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	int idx = spec_index(ctx);
	struct operands o;

	load_operands(ctx, &o);
	if (fired || idx < 0 || !filters_pass(&o, idx, pid_tgid))
		return 0;
	return count_and_fire(ctx, idx, pid_tgid, ip, o.v[0]);
}

SEC("uprobe")
int trig_uprobe(struct pt_regs *ctx)
{
	return on_entry(ctx, PT_REGS_IP(ctx));
}

SEC("kprobe")
int trig_kprobe(struct pt_regs *ctx)
{
	return on_entry(ctx, bpf_get_func_ip(ctx));
}

SEC("uretprobe")
int trig_uretprobe(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), ip = PT_REGS_IP(ctx);
	int idx = spec_index(ctx);
	struct operands o;

	load_operands(ctx, &o);
	if (fired || idx < 0 || !filters_pass(&o, idx, pid_tgid))
		return 0;
	return count_and_fire(ctx, idx, pid_tgid, ip, o.v[MT_TRIG_OPND_RET]);
}

SEC("uprobe")
int trig_slow_entry(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 sp = PT_REGS_SP(ctx), key;
	struct slow_frames *st, empty = {};
	int idx = spec_index(ctx);
	struct operands o;
	__u32 d;

	/* Only calls whose arguments pass the filters are timed. */
	load_operands(ctx, &o);
	if (fired || idx < 0 || !filters_pass(&o, idx, pid_tgid))
		return 0;
	key = (__u64)idx << 32 | (__u32)pid_tgid;
	st = bpf_map_lookup_elem(&slow_calls, &key);
	if (!st) {
		bpf_map_update_elem(&slow_calls, &key, &empty, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&slow_calls, &key);
		if (!st)
			return 0;
	}
	/* Frames at or above this stack pointer have been left without a return. */
	for (int i = 0; i < MT_TRIG_SLOW_DEPTH; i++) {
		d = st->depth;
		if (d == 0 || d > MT_TRIG_SLOW_DEPTH || st->sp[(d - 1) & (MT_TRIG_SLOW_DEPTH - 1)] > sp)
			break;
		st->depth = d - 1;
	}
	d = st->depth;
	if (d < MT_TRIG_SLOW_DEPTH) {
		st->sp[d] = sp;
		st->start_ns[d] = bpf_ktime_get_ns();
		st->depth = d + 1;
	}
	return 0;
}

SEC("uretprobe")
int trig_slow_return(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	/* `ret` popped the return address: the entry's sp was 8 bytes lower. */
	__u64 sp = PT_REGS_SP(ctx) - 8, key, start;
	int idx = spec_index(ctx);
	struct slow_frames *st;
	__u32 d;

	if (idx < 0)
		return 0;
	key = (__u64)idx << 32 | (__u32)pid_tgid;
	st = bpf_map_lookup_elem(&slow_calls, &key);
	if (!st)
		return 0;
	/* Drop deeper frames whose returns were skipped (longjmp, unwinding). */
	for (int i = 0; i < MT_TRIG_SLOW_DEPTH; i++) {
		d = st->depth;
		if (d == 0 || d > MT_TRIG_SLOW_DEPTH || st->sp[(d - 1) & (MT_TRIG_SLOW_DEPTH - 1)] >= sp)
			break;
		st->depth = d - 1;
	}
	d = st->depth;
	if (d == 0 || d > MT_TRIG_SLOW_DEPTH || st->sp[(d - 1) & (MT_TRIG_SLOW_DEPTH - 1)] != sp)
		return 0;	/* a call nested too deep to be timed */
	start = st->start_ns[(d - 1) & (MT_TRIG_SLOW_DEPTH - 1)];
	st->depth = d - 1;
	if (fired || now - start <= filters[idx].min_ns)
		return 0;
	return count_and_fire(ctx, idx, pid_tgid, PT_REGS_IP(ctx), now - start);
}

SEC("kprobe")
int freeze_kfunc(struct pt_regs *ctx)
{
	struct mt_trig_event *e = &winner;

	e->freeze = MT_TRIG_FREEZE_KFUNC;
	e->freeze_err = mtrace_freeze(e->spec);
	notify(e);
	return 0;
}
