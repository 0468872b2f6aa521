/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CPU-local PT register sequences: arm (save, then program), TraceEn
 * on/off for the task switching in, stop (then restore), and the check
 * before a ring is freed. Pure logic on top of two MSR accessors, so the
 * unit tests run the same sequences against the strict model
 * (mtrace_ptmodel.h) that the simulated backend uses.
 */
#ifndef MTRACE_PTSEQ_H
#define MTRACE_PTSEQ_H

#include "mtrace_types.h"

/*
 * The hardware line: kmod/mtrace_hw.c in the module, the test's model in
 * user space. 0, or -EIO when the access faulted.
 */
int mtrace_msr_read(u32 msr, u64 *val);
int mtrace_msr_write(u32 msr, u64 val);

/* The ToPA tables of one CPU's ring, as OUTPUT_BASE may name them. */
struct mtrace_ptseq_ring {
	const u64 *table_phys;
	u32 nr_tables;
};

/* What an arm programs (the same on every CPU). */
struct mtrace_ptseq_prog {
	u64 ctl;			/* TraceEn clear */
	const u64 *addr;		/* ADDR0_A .. ADDR3_B */
};

/* Registers as another owner (perf, KVM) left them before the arm. */
struct mtrace_ptseq_saved {
	u64 ctl, status, base, mask;
	u64 addr[8];
	u32 addr_used;			/* bitmap: addr[i] saved and written */
};

/* One CPU's state; touched only on that CPU with interrupts off. */
struct mtrace_ptseq {
	struct mtrace_ptseq_saved saved;
	bool armed;			/* programmed by this arm, not yet stopped */
	bool trace_on;			/* TraceEn set by us right now */
	bool holds_ring;		/* OUTPUT_BASE may name our ring */
	u32 flags;			/* MTRACE_CPU_CLOBBERED, MTRACE_CPU_ERROR */
};

/* The registers read at stop, before they were restored. */
struct mtrace_ptseq_stop {
	u64 status, base, mask;
	bool ours;			/* base named one of the ring's tables */
};

int mtrace_ptseq_arm(struct mtrace_ptseq *s, const struct mtrace_ptseq_prog *p,
		     const struct mtrace_ptseq_ring *ring);
void mtrace_ptseq_resume(struct mtrace_ptseq *s,
			 const struct mtrace_ptseq_prog *p,
			 const struct mtrace_ptseq_ring *ring, bool on);
void mtrace_ptseq_stop(struct mtrace_ptseq *s, const struct mtrace_ptseq_prog *p,
		       const struct mtrace_ptseq_ring *ring,
		       struct mtrace_ptseq_stop *out);
bool mtrace_ptseq_release(struct mtrace_ptseq *s,
			  const struct mtrace_ptseq_ring *ring);
/* Index of the table base names, or -1. */
int mtrace_ptseq_table(const struct mtrace_ptseq_ring *ring, u64 base);

#endif /* MTRACE_PTSEQ_H */
