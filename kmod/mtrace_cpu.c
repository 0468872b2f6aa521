// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-local PT sequences. Each runs on the CPU it programs with interrupts
 * off (IPI, sched_switch probe, hotplug callback), so the steps on one CPU
 * never interleave. Register rules from Intel SDM Vol. 3C, "Enabling and
 * Configuration MSRs": the output MSRs may only be written with TraceEn
 * clear, and clearing TraceEn flushes buffered packets to memory.
 */
#include <asm/msr.h>

#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"

DEFINE_PER_CPU(struct mtrace_pcpu, mtrace_pcpu);

static u64 expected_ctl(const struct mtrace_pcpu *pc)
{
	return mtrace_sess.prog.ctl | (pc->trace_on ? MTRACE_RTIT_CTL_TRACEEN : 0);
}

/*
 * Sets TraceEn (on) or clears it (off) for the task switching in. A CPU
 * whose MTRACE_RTIT_CTL no longer holds our value belongs to someone else now
 * (perf): leave it alone and report the snapshot as clobbered.
 */
void mtrace_cpu_resume_task(struct mtrace_pcpu *pc, bool on)
{
	if (pc->trace_on == on || pc->flags & MTRACE_CPU_CLOBBERED)
		return;
	if (mtrace_rdmsr(MTRACE_MSR_RTIT_CTL) != expected_ctl(pc)) {
		pc->flags |= MTRACE_CPU_CLOBBERED;
		return;
	}
	mtrace_wrmsr(MTRACE_MSR_RTIT_CTL,
		     mtrace_sess.prog.ctl | (on ? MTRACE_RTIT_CTL_TRACEEN : 0));
	pc->trace_on = on;
}

/*
 * Programs this CPU's output for a new arm. Returns false, touching
 * nothing, when TraceEn is already set: another agent is tracing here.
 */
bool mtrace_cpu_arm_local(void)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	const struct mtrace_pt_program *prog = &mtrace_sess.prog;
	unsigned int i;
	int err;

	pc->flags = MTRACE_CPU_RING;
	if (mtrace_rdmsr(MTRACE_MSR_RTIT_CTL) & MTRACE_RTIT_CTL_TRACEEN)
		return false;
	err = mtrace_wrmsr(MTRACE_MSR_RTIT_CTL, prog->ctl);
	err |= mtrace_wrmsr(MTRACE_MSR_RTIT_OUTPUT_BASE, pc->ring->table_phys[0]);
	err |= mtrace_wrmsr(MTRACE_MSR_RTIT_OUTPUT_MASK, mtrace_topa_mask_ptrs(0, 0));
	/* PacketByteCnt = 0 makes the first enable emit a full PSB+. */
	err |= mtrace_wrmsr(MTRACE_MSR_RTIT_STATUS, 0);
	for (i = 0; i < ARRAY_SIZE(prog->addr); i++)
		if (prog->ctl >> MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(i / 2) & 0xf)
			err |= mtrace_wrmsr(MTRACE_MSR_RTIT_ADDR0_A + i, prog->addr[i]);
	if (err) {
		pc->flags |= MTRACE_CPU_ERROR;
		return false;
	}
	pc->trace_on = false;
	pc->armed = true;
	/* A target thread running right now would wait for its next switch. */
	if (mtrace_is_target(current))
		mtrace_cpu_resume_task(pc, true);
	return true;
}

/*
 * Stops PT on this CPU and records where the trace ends. Idempotent: the
 * freeze IPI, a disarm, hotplug and the power notifiers may all get here.
 */
void mtrace_cpu_stop_local(void)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);

	if (!pc->armed)
		return;
	if (!(pc->flags & MTRACE_CPU_CLOBBERED)) {
		if (mtrace_rdmsr(MTRACE_MSR_RTIT_CTL) != expected_ctl(pc))
			pc->flags |= MTRACE_CPU_CLOBBERED;
		else if (pc->trace_on)
			mtrace_wrmsr(MTRACE_MSR_RTIT_CTL, mtrace_sess.prog.ctl);
	}
	pc->trace_on = false;
	pc->stop_tsc = rdtsc_ordered();
	pc->status = mtrace_rdmsr(MTRACE_MSR_RTIT_STATUS);
	pc->output_base = mtrace_rdmsr(MTRACE_MSR_RTIT_OUTPUT_BASE);
	pc->mask_ptrs = mtrace_rdmsr(MTRACE_MSR_RTIT_OUTPUT_MASK);
	if (pc->status & MTRACE_RTIT_STATUS_ERROR)
		pc->flags |= MTRACE_CPU_ERROR;
	if (mtrace_topa_write_offset(&mtrace_sess.plan, pc->ring->table_phys,
				     pc->output_base, pc->mask_ptrs,
				     &pc->write_offset)) {
		pc->flags |= MTRACE_CPU_CLOBBERED;
		pc->write_offset = 0;
	}
	pc->armed = false;
	/* Trace bytes and these fields before the stop becomes visible. */
	smp_wmb();
}
