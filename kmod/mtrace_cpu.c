// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-local PT sequences (mtrace_ptseq.c) applied to this CPU's ring and
 * state. Each runs on the CPU it programs with interrupts off (IPI,
 * sched_switch probe, hotplug callback), so the steps on one CPU never
 * interleave. While one runs, pc->in_seq makes a freeze from a probe or
 * tracepoint inside it (kprobe, or msr:write_msr before 6.10 lets BPF
 * reach the kfunc there) wait for irq_work, as from NMI context. None of
 * these functions can be kprobed.
 */
#include <linux/kprobes.h>
#include <asm/barrier.h>
#include <asm/msr.h>

#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"

DEFINE_PER_CPU(struct mtrace_pcpu, mtrace_pcpu);

static struct mtrace_ptseq_prog seq_prog(void)
{
	return (struct mtrace_ptseq_prog){
		.ctl = mtrace_sess.prog.ctl, .addr = mtrace_sess.prog.addr,
	};
}

static struct mtrace_ptseq_ring seq_ring(const struct mtrace_pcpu *pc)
{
	return (struct mtrace_ptseq_ring){
		.table_phys = pc->ring->table_phys,
		.nr_tables = mtrace_sess.plan.nr_tables,
	};
}

static void seq_enter(struct mtrace_pcpu *pc)
{
	WRITE_ONCE(pc->in_seq, true);
	barrier();
}

static void seq_exit(struct mtrace_pcpu *pc)
{
	barrier();
	WRITE_ONCE(pc->in_seq, false);
}

void mtrace_cpu_resume_task(struct mtrace_pcpu *pc, bool on)
{
	struct mtrace_ptseq_prog p = seq_prog();
	struct mtrace_ptseq_ring r;

	if (!pc->seq.armed || pc->seq.trace_on == on)
		return;
	r = seq_ring(pc);
	seq_enter(pc);
	mtrace_ptseq_resume(&pc->seq, &p, &r, on);
	seq_exit(pc);
}

NOKPROBE_SYMBOL(mtrace_cpu_resume_task);

/*
 * Programs this CPU for a new arm: 0, -EBUSY (another agent has TraceEn
 * set), -EOPNOTSUPP (in VMX operation, where this CPU cannot trace),
 * -EAGAIN (suspend or reboot under way) or -EIO (an MSR faulted).
 */
int mtrace_cpu_arm_local(void)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	struct mtrace_ptseq_prog p = seq_prog();
	struct mtrace_ptseq_ring r = seq_ring(pc);
	int err;

	pc->flags = MTRACE_CPU_RING;
	if (READ_ONCE(mtrace_sess.power_block))
		return -EAGAIN;
	if (mtrace_hw_vmx_blocks_pt())
		return -EOPNOTSUPP;
	seq_enter(pc);
	err = mtrace_ptseq_arm(&pc->seq, &p, &r);
	seq_exit(pc);
	pc->flags |= pc->seq.flags;
	if (err)
		return err;
	/* A target thread running right now would wait for its next switch. */
	if (mtrace_is_traced(current))
		mtrace_cpu_resume_task(pc, true);
	return 0;
}

NOKPROBE_SYMBOL(mtrace_cpu_arm_local);

/*
 * Stops PT on this CPU, records where the trace ends and gives the
 * registers back. Idempotent: the freeze IPI, a disarm, hotplug, the power
 * and panic notifiers may all get here.
 */
void mtrace_cpu_stop_local(void)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	struct mtrace_ptseq_prog p = seq_prog();
	struct mtrace_ptseq_stop out;
	struct mtrace_ptseq_ring r;
	int table;

	if (!pc->seq.armed)
		return;
	r = seq_ring(pc);
	seq_enter(pc);
	mtrace_ptseq_stop(&pc->seq, &p, &r, &out);
	seq_exit(pc);
	/*
	 * Clearing TraceEn wrote the CPU's buffered packets, but a fence makes
	 * them globally visible before the offsets below (pt_config_stop()).
	 */
	wmb();
	pc->stop_tsc = rdtsc_ordered();
	pc->flags |= pc->seq.flags;
	pc->status = out.status;
	pc->mask_ptrs = out.mask;
	table = out.ours ? mtrace_ptseq_table(&r, out.base) : -1;
	pc->output_table = table < 0 ? MTRACE_TABLE_FOREIGN : table;
	if (pc->status & MTRACE_RTIT_STATUS_ERROR)
		pc->flags |= MTRACE_CPU_ERROR;
	if (!out.ours ||
	    mtrace_topa_write_offset(&mtrace_sess.plan, pc->ring->table_phys,
				     out.base, out.mask, &pc->write_offset)) {
		pc->flags |= MTRACE_CPU_CLOBBERED;
		pc->write_offset = 0;
	}
	/* These fields before the stop becomes visible. */
	smp_wmb();
}

NOKPROBE_SYMBOL(mtrace_cpu_stop_local);

/* Before the ring is freed: see mtrace_ptseq_release(). */
void mtrace_cpu_release_local(void)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	struct mtrace_ptseq_ring r;

	if (!pc->ring)
		return;
	r = seq_ring(pc);
	seq_enter(pc);
	mtrace_ptseq_release(&pc->seq, &r);
	seq_exit(pc);
}

NOKPROBE_SYMBOL(mtrace_cpu_release_local);
