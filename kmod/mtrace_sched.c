// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sched_switch hook: turns PT on while a thread of the target runs and
 * writes the per-CPU context-switch sideband; the sched_process_exec hook
 * ends a target's trace when it execs a program its tracer may not see.
 * The tracepoint symbols are not exported to modules, so they are found by
 * name among the kernel's tracepoints and the probes attached with
 * tracepoint_probe_register().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/msr.h>

#include "mtrace_internal.h"

static struct tracepoint *sched_switch_tp, *sched_exec_tp;

static void find_tracepoints(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		sched_switch_tp = tp;
	else if (!strcmp(tp->name, "sched_process_exec"))
		sched_exec_tp = tp;
}

static void write_sideband(struct mtrace_sb *sb, u32 flags,
			   const struct task_struct *prev,
			   const struct task_struct *next, bool pt, bool nt)
{
	struct mtrace_sb_record *r = &sb->recs[sb->head & sb->mask];

	r->tsc = rdtsc();
	r->cpu = smp_processor_id();
	r->flags = (pt ? MTRACE_SB_PREV_TARGET : 0) |
		   (nt ? MTRACE_SB_NEXT_TARGET : 0) | flags;
	r->prev_pid = prev->tgid;
	r->prev_tid = prev->pid;
	r->next_pid = next->tgid;
	r->next_tid = next->pid;
	sb->head++;
}

/* Runs in __schedule() with the runqueue locked and interrupts off. */
static void mtrace_sched_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	bool pt, nt;

	if (!pc->seq.armed)
		return;
	/*
	 * Trace is on only while a target runs, so PREV is one even when it
	 * no longer says so: a target reaped before its last switch (parent
	 * ignoring SIGCHLD) has had its thread group pid detached.
	 */
	pt = pc->seq.trace_on || mtrace_is_traced(prev);
	nt = mtrace_is_traced(next);
	if (!pt && !nt)
		return;
	write_sideband(pc->sb, preempt ? MTRACE_SB_PREEMPT : 0, prev, next, pt,
		       nt);
	if (mtrace_sess.per_task)
		mtrace_cpu_resume_task(pc, nt);
}

NOKPROBE_SYMBOL(mtrace_sched_switch);

/*
 * Runs in exec_binprm() of the task itself once the new program is loaded
 * and its dumpability decided, before it returns to user mode: a target
 * that became non-dumpable (set-user-ID exec) stops being traced here, and
 * the sideband says so.
 */
static void mtrace_sched_exec(void *data, struct task_struct *p,
			      pid_t old_pid, struct linux_binprm *bprm)
{
	struct mtrace_pcpu *pc;
	unsigned long flags;

	local_irq_save(flags);
	pc = this_cpu_ptr(&mtrace_pcpu);
	if (pc->seq.armed && mtrace_sess.per_task && mtrace_is_target(p) &&
	    !mtrace_is_traced(p)) {
		write_sideband(pc->sb, MTRACE_SB_SECURE_EXEC, p, p,
			       pc->seq.trace_on, false);
		mtrace_cpu_resume_task(pc, false);
		atomic_or(MTRACE_STATUS_SECURE_EXEC, &mtrace_sess.status_bits);
	}
	local_irq_restore(flags);
}

int mtrace_sched_register(void)
{
	int err;

	if (!sched_switch_tp || !sched_exec_tp)
		for_each_kernel_tracepoint(find_tracepoints, NULL);
	if (!sched_switch_tp || !sched_exec_tp) {
		pr_err("sched_switch or sched_process_exec tracepoint not found\n");
		return -ENOENT;
	}
	err = tracepoint_probe_register(sched_exec_tp, mtrace_sched_exec, NULL);
	if (err)
		return err;
	err = tracepoint_probe_register(sched_switch_tp, mtrace_sched_switch,
					NULL);
	if (err) {
		tracepoint_probe_unregister(sched_exec_tp, mtrace_sched_exec, NULL);
		tracepoint_synchronize_unregister();
	}
	return err;
}

/* After this returns no CPU runs the probes any more. */
void mtrace_sched_unregister(void)
{
	tracepoint_probe_unregister(sched_switch_tp, mtrace_sched_switch, NULL);
	tracepoint_probe_unregister(sched_exec_tp, mtrace_sched_exec, NULL);
	tracepoint_synchronize_unregister();
}
