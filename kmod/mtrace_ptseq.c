// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-local PT sequences. Register rules from Intel SDM Vol. 3C,
 * "Enabling and Configuration MSRs": every RTIT MSR but CTL may only be
 * written with TraceEn clear, and clearing TraceEn flushes buffered
 * packets to memory.
 *
 * Another owner's values (perf's intel_pt caches OUTPUT_BASE/MASK and the
 * address ranges per CPU and rewrites them only when its cache differs,
 * pt_config_buffer() and pt_config_filters(); KVM's pt_save_msr() and
 * pt_load_msr() do the same round trip) must survive a session: an arm
 * saves every RTIT MSR it will write and a stop writes them back, so that
 * no register is left naming a ring that is about to be freed.
 */
#ifdef __KERNEL__
#include <linux/kprobes.h>
#endif

#include "mtrace_ptseq.h"
#include "mtrace_pt_defs.h"
#include "mtrace_topa.h"
#include <uapi/linux/mtrace.h>

#define NR_ADDR_MSRS	8

int mtrace_ptseq_table(const struct mtrace_ptseq_ring *ring, u64 base)
{
	u32 t;

	for (t = 0; t < ring->nr_tables; t++)
		if (ring->table_phys[t] == base)
			return t;
	return -1;
}

static u64 expected_ctl(const struct mtrace_ptseq *s,
			const struct mtrace_ptseq_prog *p)
{
	return p->ctl | (s->trace_on ? MTRACE_RTIT_CTL_TRACEEN : 0);
}

/* The address-range MSRs the configuration uses (both ends of a range). */
static u32 addr_used(const struct mtrace_ptseq_prog *p)
{
	u32 i, used = 0;

	for (i = 0; i < NR_ADDR_MSRS; i++)
		if (p->ctl >> MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(i / 2) &
		    MTRACE_RTIT_CTL_FIELD_MASK)
			used |= BIT(i);
	return used;
}

/* Writes the saved values back, CTL (TraceEn clear) last. */
static int restore(struct mtrace_ptseq *s)
{
	const struct mtrace_ptseq_saved *sv = &s->saved;
	int err, base_err;
	u32 i;

	/* FilterEn, ContextEn, TriggerEn are read-only: write back the rest. */
	err = mtrace_msr_write(MTRACE_MSR_RTIT_STATUS,
			       sv->status & MTRACE_RTIT_STATUS_WRITABLE);
	base_err = mtrace_msr_write(MTRACE_MSR_RTIT_OUTPUT_BASE, sv->base);
	if (!base_err)
		s->holds_ring = false;
	err |= base_err;
	err |= mtrace_msr_write(MTRACE_MSR_RTIT_OUTPUT_MASK, sv->mask);
	for (i = 0; i < NR_ADDR_MSRS; i++)
		if (sv->addr_used & BIT(i))
			err |= mtrace_msr_write(MTRACE_MSR_RTIT_ADDR0_A + i,
						sv->addr[i]);
	err |= mtrace_msr_write(MTRACE_MSR_RTIT_CTL, sv->ctl);
	return err ? -EIO : 0;
}

static int save(struct mtrace_ptseq_saved *sv, const struct mtrace_ptseq_prog *p)
{
	int err;
	u32 i;

	err = mtrace_msr_read(MTRACE_MSR_RTIT_STATUS, &sv->status);
	err |= mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_BASE, &sv->base);
	err |= mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_MASK, &sv->mask);
	sv->addr_used = addr_used(p);
	for (i = 0; i < NR_ADDR_MSRS; i++)
		if (sv->addr_used & BIT(i))
			err |= mtrace_msr_read(MTRACE_MSR_RTIT_ADDR0_A + i,
					       &sv->addr[i]);
	return err ? -EIO : 0;
}

/*
 * Saves, then programs this CPU for a new arm with TraceEn clear.
 * -EBUSY, touching nothing, when TraceEn is already set (another agent
 * traces here); -EIO when a register faulted (everything written is
 * put back).
 */
int mtrace_ptseq_arm(struct mtrace_ptseq *s, const struct mtrace_ptseq_prog *p,
		     const struct mtrace_ptseq_ring *ring)
{
	struct mtrace_ptseq_saved *sv = &s->saved;
	int err;
	u32 i;

	s->armed = false;
	s->trace_on = false;
	s->flags = 0;
	if (mtrace_msr_read(MTRACE_MSR_RTIT_CTL, &sv->ctl))
		return -EIO;
	if (sv->ctl & MTRACE_RTIT_CTL_TRACEEN)
		return -EBUSY;
	if (save(sv, p))
		return -EIO;
	err = mtrace_msr_write(MTRACE_MSR_RTIT_CTL, p->ctl);
	if (!err) {
		s->holds_ring = true;
		err = mtrace_msr_write(MTRACE_MSR_RTIT_OUTPUT_BASE,
				       ring->table_phys[0]);
	}
	err |= mtrace_msr_write(MTRACE_MSR_RTIT_OUTPUT_MASK,
				mtrace_topa_mask_ptrs(0, 0));
	/* PacketByteCnt = 0 makes the first enable emit a full PSB+. */
	err |= mtrace_msr_write(MTRACE_MSR_RTIT_STATUS, 0);
	for (i = 0; i < NR_ADDR_MSRS; i++)
		if (sv->addr_used & BIT(i))
			err |= mtrace_msr_write(MTRACE_MSR_RTIT_ADDR0_A + i,
						p->addr[i]);
	if (err) {
		s->flags |= MTRACE_CPU_ERROR;
		restore(s);
		return -EIO;
	}
	s->armed = true;
	return 0;
}

/*
 * Sets TraceEn (on) or clears it (off) for the task switching in. A CPU
 * whose CTL or OUTPUT_BASE no longer holds our value belongs to someone
 * else now (perf): leave it alone and report the snapshot as clobbered.
 * A write that faults (VMXON took PT away) leaves the CPU off for good.
 */
void mtrace_ptseq_resume(struct mtrace_ptseq *s,
			 const struct mtrace_ptseq_prog *p,
			 const struct mtrace_ptseq_ring *ring, bool on)
{
	u64 ctl, base;

	if (!s->armed || s->trace_on == on ||
	    s->flags & (MTRACE_CPU_CLOBBERED | MTRACE_CPU_ERROR))
		return;
	if (mtrace_msr_read(MTRACE_MSR_RTIT_CTL, &ctl) ||
	    mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_BASE, &base) ||
	    ctl != expected_ctl(s, p) || mtrace_ptseq_table(ring, base) < 0) {
		s->flags |= MTRACE_CPU_CLOBBERED;
		return;
	}
	if (mtrace_msr_write(MTRACE_MSR_RTIT_CTL,
			     p->ctl | (on ? MTRACE_RTIT_CTL_TRACEEN : 0))) {
		s->flags |= MTRACE_CPU_ERROR;
		return;
	}
	s->trace_on = on;
}

/*
 * Stops PT on this CPU, reads where the trace ends and restores the saved
 * registers. Whenever OUTPUT_BASE still names our ring, TraceEn is cleared
 * whatever CTL says (a probe that ran between another sequence's RDMSR and
 * WRMSR may have left an unexpected value): PT must not write into a ring
 * that is about to be freed. Registers that name someone else's output are
 * left alone.
 */
void mtrace_ptseq_stop(struct mtrace_ptseq *s, const struct mtrace_ptseq_prog *p,
		       const struct mtrace_ptseq_ring *ring,
		       struct mtrace_ptseq_stop *out)
{
	u64 ctl = 0;
	bool ctl_ok;

	memset(out, 0, sizeof(*out));
	if (!s->armed)
		return;
	ctl_ok = !mtrace_msr_read(MTRACE_MSR_RTIT_CTL, &ctl);
	out->ours = !mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_BASE, &out->base) &&
		    mtrace_ptseq_table(ring, out->base) >= 0;
	if (!ctl_ok || ctl != expected_ctl(s, p) || !out->ours)
		s->flags |= MTRACE_CPU_CLOBBERED;
	if (out->ours && (!ctl_ok || ctl & MTRACE_RTIT_CTL_TRACEEN) &&
	    mtrace_msr_write(MTRACE_MSR_RTIT_CTL, ctl & ~MTRACE_RTIT_CTL_TRACEEN) &&
	    mtrace_msr_write(MTRACE_MSR_RTIT_CTL, p->ctl))
		s->flags |= MTRACE_CPU_ERROR;
	s->trace_on = false;
	if (mtrace_msr_read(MTRACE_MSR_RTIT_STATUS, &out->status) ||
	    mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_MASK, &out->mask))
		s->flags |= MTRACE_CPU_ERROR;
	if (out->ours && restore(s))
		s->flags |= MTRACE_CPU_ERROR;
	else if (!out->ours)
		s->holds_ring = false;
	s->armed = false;
}

/*
 * Before the ring is freed: does OUTPUT_BASE still name it? If so (a
 * restore failed), try once more to stop PT and point it back at the
 * saved value. True means the ring must be leaked rather than freed.
 */
bool mtrace_ptseq_release(struct mtrace_ptseq *s,
			  const struct mtrace_ptseq_ring *ring)
{
	u64 base, ctl;

	if (mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_BASE, &base))
		return s->holds_ring;
	if (mtrace_ptseq_table(ring, base) < 0) {
		s->holds_ring = false;
		return false;
	}
	if (!mtrace_msr_read(MTRACE_MSR_RTIT_CTL, &ctl) &&
	    ctl & MTRACE_RTIT_CTL_TRACEEN)
		mtrace_msr_write(MTRACE_MSR_RTIT_CTL, ctl & ~MTRACE_RTIT_CTL_TRACEEN);
	mtrace_msr_write(MTRACE_MSR_RTIT_OUTPUT_BASE, s->saved.base);
	s->holds_ring = mtrace_msr_read(MTRACE_MSR_RTIT_OUTPUT_BASE, &base) ||
			mtrace_ptseq_table(ring, base) >= 0;
	return s->holds_ring;
}

#ifdef __KERNEL__
/*
 * A probe inside a sequence could fire a trigger between its RDMSR and
 * WRMSR; these run only with interrupts off on their own CPU.
 */
NOKPROBE_SYMBOL(mtrace_ptseq_table);
NOKPROBE_SYMBOL(mtrace_ptseq_arm);
NOKPROBE_SYMBOL(mtrace_ptseq_resume);
NOKPROBE_SYMBOL(mtrace_ptseq_stop);
NOKPROBE_SYMBOL(mtrace_ptseq_release);
#endif
