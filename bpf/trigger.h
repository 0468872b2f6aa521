/* SPDX-License-Identifier: MIT */
/*
 * Constants and records shared by the trigger BPF program (trigger.bpf.c)
 * and its user-space loader (user/trigger/). Types only, no code: the BPF
 * side sees __u32/__u64 through vmlinux.h, user space through linux/types.h.
 */
#ifndef MTRACE_BPF_TRIGGER_H
#define MTRACE_BPF_TRIGGER_H

/* Triggers per session (--trigger options); also the attach-cookie range. */
#define MT_TRIG_MAX_SPECS	8
/* if= conditions per trigger; all must hold. */
#define MT_TRIG_MAX_CONDS	4
/* Nested calls of one slow: function timed per thread (outermost first). */
#define MT_TRIG_SLOW_DEPTH	8
/* Threads with a slow: call in progress at once (LRU beyond that). */
#define MT_TRIG_SLOW_THREADS	16384

/*
 * Kinds of trigger; also the trigger record's reason and, with the same
 * numbers, the bundle's MT_BUNDLE_REASON_* (checked in user space).
 */
enum mt_trig_kind {
	MT_TRIG_UPROBE = 1,
	MT_TRIG_URETPROBE = 2,
	MT_TRIG_KPROBE = 3,
	MT_TRIG_SLOW = 4,
	MT_TRIG_KIND_NR,		/* one past the last kind; sizes tables */
};

/*
 * How the BPF program has the snapshot frozen once a trigger fires: the
 * method, not the module's freeze path (MTRACE_PATH_*) the bundle records;
 * mt_trigger_freeze_path() maps one onto the other.
 */
enum mt_trig_freeze {
	MT_TRIG_FREEZE_KFUNC = 1,	/* mtrace_freeze() inside the probe */
	MT_TRIG_FREEZE_NOTIFY = 2,	/* ring-buffer record, user space freezes */
	MT_TRIG_FREEZE_SIGSTOP = 3,	/* SIGSTOP to the thread, then as NOTIFY */
	MT_TRIG_FREEZE_NR,		/* one past the last method */
};

/* Operand of an if= condition: argument registers 0..5, or the return value. */
#define MT_TRIG_OPND_RET	6

enum mt_trig_op {
	MT_TRIG_OP_EQ = 1,
	MT_TRIG_OP_NE,
	MT_TRIG_OP_LT,
	MT_TRIG_OP_LE,
	MT_TRIG_OP_GT,
	MT_TRIG_OP_GE,
	MT_TRIG_OP_NR,			/* one past the last operator */
};

/*
 * One comparison. The operand is truncated to `bits` (8, 16, 32 or 64),
 * then sign-extended when `is_signed`; `value` is already in that form.
 */
struct mt_trig_cond {
	__u8 operand;		/* 0..5 = argN, MT_TRIG_OPND_RET */
	__u8 op;		/* enum mt_trig_op */
	__u8 bits;
	__u8 is_signed;
	__u32 pad;
	__u64 value;
};

/* Per-trigger filters, indexed by the attach cookie. */
struct mt_trig_filter {
	__u32 kind;		/* enum mt_trig_kind */
	__u32 tid;		/* 0 = any thread */
	__u64 hit;		/* fire at this matching hit (1 = first) */
	__u64 min_ns;		/* slow: the duration to exceed */
	__u32 nr_conds;
	__u32 pad;
	struct mt_trig_cond conds[MT_TRIG_MAX_CONDS];
};

/* The record sent through the ring buffer when a trigger fires. */
struct mt_trig_event {
	__u64 time_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) at the hit */
	__u64 ip;		/* probed address (entry) or return address */
	__u64 value;		/* arg0 (entry), return value, or slow: duration ns */
	__u64 hit;		/* how many matching hits this trigger saw */
	__u32 cpu;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 spec;		/* index of the --trigger that fired */
	__u32 reason;		/* enum mt_trig_kind */
	__u32 freeze;		/* enum mt_trig_freeze actually taken */
	__s32 freeze_err;	/* kfunc or bpf_send_signal_thread() result */
	__u32 pad;
};

#endif
