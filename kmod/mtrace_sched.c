// SPDX-License-Identifier: GPL-2.0-only
/*
 * The sched_switch hook: turns PT on while a thread of the target runs and
 * writes the per-CPU context-switch sideband. The tracepoint symbol is not
 * exported to modules, so it is found by name among the kernel's
 * tracepoints and the probe attached with tracepoint_probe_register().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/msr.h>

#include "mtrace_internal.h"

static struct tracepoint *sched_switch_tp;

static void find_sched_switch(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		sched_switch_tp = tp;
}

static void write_sideband(struct mtrace_sb *sb, bool preempt,
			   const struct task_struct *prev,
			   const struct task_struct *next, bool pt, bool nt)
{
	struct mtrace_sb_record *r = &sb->recs[sb->head & sb->mask];

	r->tsc = rdtsc();
	r->cpu = smp_processor_id();
	r->flags = (pt ? MTRACE_SB_PREV_TARGET : 0) |
		   (nt ? MTRACE_SB_NEXT_TARGET : 0) |
		   (preempt ? MTRACE_SB_PREEMPT : 0);
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

	if (!pc->armed)
		return;
	/*
	 * Trace is on only while a target runs, so PREV is one even when it
	 * no longer says so: a target reaped before its last switch (parent
	 * ignoring SIGCHLD) has had its thread group pid detached.
	 */
	pt = pc->trace_on || mtrace_is_target(prev);
	nt = mtrace_is_target(next);
	if (!pt && !nt)
		return;
	write_sideband(pc->sb, preempt, prev, next, pt, nt);
	if (mtrace_sess.per_task)
		mtrace_cpu_resume_task(pc, nt);
}

int mtrace_sched_register(void)
{
	if (!sched_switch_tp)
		for_each_kernel_tracepoint(find_sched_switch, NULL);
	if (!sched_switch_tp) {
		pr_err("sched_switch tracepoint not found\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(sched_switch_tp, mtrace_sched_switch,
					 NULL);
}

/* After this returns no CPU runs the probe any more. */
void mtrace_sched_unregister(void)
{
	tracepoint_probe_unregister(sched_switch_tp, mtrace_sched_switch, NULL);
	tracepoint_synchronize_unregister();
}
