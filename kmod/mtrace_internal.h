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
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/smp.h>
#include <linux/wait.h>

#include "mtrace_caps.h"
#include "mtrace_ptmodel.h"
#include "mtrace_ptseq.h"
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
 * hotplug callbacks), and read by the owner once the session is FROZEN or
 * READY.
 */
struct mtrace_pcpu {
	struct mtrace_ring *ring;
	struct mtrace_sb *sb;
	struct mtrace_ptseq seq;	/* armed, trace_on, saved registers */
	bool in_seq;			/* inside a PT sequence: defer freezes */
	u32 flags;			/* MTRACE_CPU_* of the last stop */
	u64 stop_tsc;
	u64 status;
	u64 output_table;		/* MTRACE_TABLE_FOREIGN or an index */
	u64 mask_ptrs;
	u64 write_offset;
	u64 online_tsc;			/* MTRACE_CPU_ADDED */
	struct mtrace_sim_regs sim;	/* emulated MSRs (simulated backend) */
	struct mtrace_sim_regs owner;	/* what another owner last put there */
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
	bool may_trace_setid;		/* configured with CAP_SYS_PTRACE */
	bool tp_registered;
	bool power_block;		/* suspend/reboot under way: no arm */
	atomic_t status_bits;		/* MTRACE_STATUS_* but CLOBBERED */
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
extern int mtrace_sim_vmx;		/* sim_vmx parameter */
extern unsigned int mtrace_fail_alloc;	/* fail_alloc parameter */
extern unsigned int mtrace_ring_limit_kb;	/* ring_limit_kb parameter */
extern bool mtrace_kfunc_ok;
extern bool mtrace_vmx_pt;		/* IA32_VMX_MISC[14] */
extern struct mtrace_pt_model mtrace_sim_model;

/* sim: a rule of the model was broken (#GP) or a session left a trace. */
void mtrace_sim_gp(u32 msr, u64 val, bool write, const char *why);
__printf(1, 2) void mtrace_sim_violation(const char *fmt, ...);

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

/*
 * A target whose trace the configuring caller may see: after exec of a
 * set-user-ID (or otherwise non-dumpable) program only with CAP_SYS_PTRACE,
 * as for ptrace; perf stops such events in begin_new_exec() likewise.
 * Called for the running task or one switching in, whose mm is stable.
 */
static inline bool mtrace_is_traced(struct task_struct *t)
{
	struct mm_struct *mm;

	if (!mtrace_is_target(t))
		return false;
	if (!mtrace_sess.per_task || mtrace_sess.may_trace_setid)
		return true;
	mm = READ_ONCE(t->mm);
	return !mm || get_dumpable(mm) == SUID_DUMP_USER;
}

/* mtrace_hw.c: the hardware line (and mtrace_msr_read/write, ptseq.h). */
int mtrace_hw_detect(void);
u64 mtrace_max_single_region(void);
bool mtrace_hw_vmx_blocks_pt(void);
void mtrace_sim_init_regs(void);
void mtrace_sim_check_restored(void);

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
int mtrace_ring_sim_wrmsr(struct mtrace_ring *ring,
			  const struct mtrace_topa_plan *p,
			  struct mtrace_sim_regs *regs, u32 msr, u64 val,
			  const char **why);
int mtrace_ring_mmap(struct vm_area_struct *vma);
struct mtrace_sb *mtrace_sb_alloc(u32 records, int node);
void mtrace_sb_free(struct mtrace_sb *sb);

/* mtrace_cpu.c: CPU-local sequences, run with interrupts off. */
int mtrace_cpu_arm_local(void);
void mtrace_cpu_stop_local(void);
void mtrace_cpu_resume_task(struct mtrace_pcpu *pc, bool on);
void mtrace_cpu_release_local(void);

/* mtrace_sched.c */
int mtrace_sched_register(void);
void mtrace_sched_unregister(void);

/* mtrace_freeze.c */
int mtrace_freeze_now(u32 path, u64 cookie);
int mtrace_arm(void);
int mtrace_disarm(bool killable);
int mtrace_freeze_init(void);
void mtrace_freeze_exit(void);

/* mtrace_kfunc.c */
int mtrace_kfunc_register(void);

/* mtrace_dev.c */
int mtrace_dev_init(void);
void mtrace_dev_exit(void);

#endif /* MTRACE_INTERNAL_H */
