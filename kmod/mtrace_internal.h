/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * State shared by the module's files. There is one session at a time (one
 * owner of /dev/mtrace), so the session and the per-CPU state are static:
 * the freeze path (kfunc, IPIs) never dereferences memory that a close()
 * could free.
 */
#ifndef MTRACE_INTERNAL_H
#define MTRACE_INTERNAL_H

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/smp.h>
#include <linux/wait.h>

#include "mtrace_caps.h"
#include "mtrace_topa.h"

/* One CPU's PT output ring: equal regions linked by ToPA tables. */
struct mtrace_ring {
	struct page **regions;
	u64 *region_phys;
	u64 **tables;
	u64 *table_phys;
};

/* One CPU's context-switch sideband ring. */
struct mtrace_sb {
	u64 head;			/* records written since arm */
	u32 mask;			/* capacity - 1 */
	struct mtrace_sb_record recs[];
};

/*
 * Per-CPU state. ring and sb change only while no CPU is armed (session
 * lock held). Everything else is written only on its own CPU with
 * interrupts off (arm, freeze and stop IPIs, the sched_switch probe, the
 * hotplug callback), and read by the owner once the session is FROZEN or
 * READY.
 */
struct mtrace_pcpu {
	struct mtrace_ring *ring;
	struct mtrace_sb *sb;
	bool armed;			/* traced in this arm, not yet stopped */
	bool trace_on;			/* TraceEn set by us right now */
	u32 flags;			/* MTRACE_CPU_* of the last stop */
	u64 stop_tsc;
	u64 status;
	u64 output_base;
	u64 mask_ptrs;
	u64 write_offset;
	struct mtrace_sim_regs sim;	/* emulated MSRs (simulated backend) */
	call_single_data_t csd;		/* freeze IPI */
};

DECLARE_PER_CPU(struct mtrace_pcpu, mtrace_pcpu);

struct mtrace_session {
	struct mutex lock;		/* serialises ioctl/mmap/release */
	unsigned long busy;		/* bit 0: device has an owner */
	atomic_t state;			/* MTRACE_STATE_* */
	atomic_t pending;		/* CPUs yet to stop in this freeze */
	atomic_t mmaps;			/* live mappings of the rings */
	bool per_task;
	bool tp_registered;
	struct pid *target;		/* its thread group's pid, referenced */
	struct mtrace_pt_program prog;
	struct mtrace_topa_plan plan;
	u32 sb_records;
	u32 allocs;			/* allocations in this SET_CONFIG */
	cpumask_var_t cpus;		/* CPUs with a ring */
	struct mtrace_trigger trigger;
	u64 arm_tsc, arm_ns, freeze_tsc, freeze_ns;
	u32 snapshots;
	wait_queue_head_t wq;		/* woken when a freeze completes */
	struct irq_work wake_work;
	struct irq_work ipi_work;	/* sends freeze IPIs for NMI triggers */
};

extern struct mtrace_session mtrace_sess;
extern struct mtrace_pt_caps mtrace_caps;
extern u32 mtrace_nonturbo_ratio;
extern int mtrace_sim;			/* 0: hardware, 1/2: simulated */
extern unsigned int mtrace_fail_alloc;	/* fail_alloc parameter */
extern bool mtrace_kfunc_ok;

/*
 * A thread of the traced process (always true system-wide). Compared by
 * struct pid, not by number: once the target is gone its number may go
 * to another user's process, which a re-arm must not trace. Safe in
 * sched_switch and with interrupts off: ->signal lives as long as the task.
 */
static inline bool mtrace_is_target(struct task_struct *t)
{
	return !mtrace_sess.per_task || task_tgid(t) == mtrace_sess.target;
}

/* mtrace_hw.c: the hardware line. */
int mtrace_hw_detect(void);
u64 mtrace_rdmsr(u32 msr);
int mtrace_wrmsr(u32 msr, u64 val);
u64 mtrace_max_single_region(void);

/* mtrace_ring.c */
bool mtrace_alloc_should_fail(void);
struct mtrace_ring *mtrace_ring_alloc(const struct mtrace_topa_plan *p,
				      int node);
void mtrace_ring_free(struct mtrace_ring *ring, const struct mtrace_topa_plan *p);
void mtrace_ring_clear(struct mtrace_ring *ring, const struct mtrace_topa_plan *p);
bool mtrace_ring_wrapped(struct mtrace_ring *ring,
			 const struct mtrace_topa_plan *p, u64 write_offset);
long mtrace_ring_sim_write(struct mtrace_ring *ring,
			   const struct mtrace_topa_plan *p,
			   struct mtrace_sim_regs *regs, const u8 *data, u64 len);
int mtrace_ring_mmap(struct vm_area_struct *vma);
struct mtrace_sb *mtrace_sb_alloc(u32 records, int node);
void mtrace_sb_free(struct mtrace_sb *sb);

/* mtrace_cpu.c: CPU-local sequences, run with interrupts off. */
bool mtrace_cpu_arm_local(void);
void mtrace_cpu_stop_local(void);
void mtrace_cpu_resume_task(struct mtrace_pcpu *pc, bool on);

/* mtrace_sched.c */
int mtrace_sched_register(void);
void mtrace_sched_unregister(void);

/* mtrace_freeze.c */
int mtrace_freeze_now(u32 path, u64 cookie);
int mtrace_arm(void);
void mtrace_disarm(void);
int mtrace_freeze_init(void);
void mtrace_freeze_exit(void);

/* mtrace_kfunc.c */
int mtrace_kfunc_register(void);

/* mtrace_dev.c */
int mtrace_dev_init(void);
void mtrace_dev_exit(void);

#endif /* MTRACE_INTERNAL_H */
