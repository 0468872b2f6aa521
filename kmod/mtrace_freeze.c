// SPDX-License-Identifier: GPL-2.0-only
/*
 * Arm, freeze and disarm across CPUs.
 *
 * The session state moves ARMED -> FREEZING exactly once per arm, by
 * cmpxchg: the first trigger wins. The winner stops PT on its own CPU
 * before anything else, then stops the others with asynchronous IPIs (safe
 * with interrupts off, so from probe and BPF context). The CPU that stops
 * last moves the state to FROZEN and wakes poll() through irq_work, since
 * a trigger may fire where waking a task is not allowed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/panic_notifier.h>
#include <linux/ptrace.h>
#include <linux/reboot.h>
#include <linux/sched/task_stack.h>
#include <linux/suspend.h>
#include <linux/timekeeping.h>
#include <asm/msr.h>

#include "mtrace_internal.h"

static int cpuhp_state;

static void freeze_done(void)
{
	if (!atomic_dec_and_test(&mtrace_sess.pending))
		return;
	mtrace_sess.freeze_tsc = rdtsc_ordered();
	mtrace_sess.freeze_ns = ktime_get_mono_fast_ns();
	mtrace_sess.snapshots++;
	atomic_set_release(&mtrace_sess.state, MTRACE_STATE_FROZEN);
	irq_work_queue(&mtrace_sess.wake_work);
}

static void freeze_ipi(void *info)
{
	mtrace_cpu_stop_local();
	freeze_done();
}

/* Interrupts are off: the sender's own CPU is already stopped. */
static void send_freeze_ipis(void)
{
	int cpu, self = smp_processor_id();

	for_each_cpu(cpu, mtrace_sess.cpus) {
		if (cpu == self)
			continue;
		atomic_inc(&mtrace_sess.pending);
		/* An offline CPU was stopped by its hotplug callback. */
		if (smp_call_function_single_async(cpu,
						   &per_cpu(mtrace_pcpu, cpu).csd))
			atomic_dec(&mtrace_sess.pending);
	}
	freeze_done();
}

/* The rest of a freeze triggered in NMI context: this CPU, then the others. */
static void ipi_work_fn(struct irq_work *work)
{
	mtrace_cpu_stop_local();
	send_freeze_ipis();
}

static void wake_work_fn(struct irq_work *work)
{
	wake_up_all(&mtrace_sess.wq);
}

static u64 user_ip(void)
{
	if (!current->mm || current->flags & PF_KTHREAD)
		return 0;
	return instruction_pointer(task_pt_regs(current));
}

/*
 * Callable from any context. From NMI context, or from a probe that fired
 * inside this CPU's own PT sequence (kprobe, the msr:write_msr tracepoint),
 * the stop itself waits for irq_work, which runs as soon as interrupts are
 * on again: stopping in the middle of a sequence would race with its
 * RDMSR/WRMSR pair, and IPIs cannot be sent from NMI context.
 */
int mtrace_freeze_now(u32 path, u64 cookie)
{
	struct mtrace_trigger *t = &mtrace_sess.trigger;
	unsigned long flags;
	bool defer;
	u64 tsc;
	int old;

	local_irq_save(flags);
	tsc = rdtsc_ordered();
	old = atomic_cmpxchg(&mtrace_sess.state, MTRACE_STATE_ARMED,
			     MTRACE_STATE_FREEZING);
	if (old != MTRACE_STATE_ARMED) {
		local_irq_restore(flags);
		return old == MTRACE_STATE_FREEZING ||
		       old == MTRACE_STATE_FROZEN ? -EALREADY : -ENODATA;
	}
	defer = in_nmi() || this_cpu_read(mtrace_pcpu.in_seq);
	if (!defer)
		mtrace_cpu_stop_local();	/* the trace ends here */
	t->tsc = tsc;
	t->ip = user_ip();
	t->cookie = cookie;
	t->cpu = smp_processor_id();
	t->pid = current->tgid;
	t->tid = current->pid;
	t->path = path;
	atomic_set(&mtrace_sess.pending, 1);
	if (defer)
		irq_work_queue(&mtrace_sess.ipi_work);
	else
		send_freeze_ipis();
	local_irq_restore(flags);
	return 0;
}

/* The first CPU's error is the arm's. */
static void arm_ipi(void *info)
{
	atomic_t *error = info;
	int err = mtrace_cpu_arm_local();

	if (err)
		atomic_cmpxchg(error, 0, err);
}

static void stop_ipi(void *info)
{
	mtrace_cpu_stop_local();
}

/* Stops every armed CPU and waits until none runs PT for us. */
static void stop_all(void)
{
	cpus_read_lock();
	on_each_cpu_mask(mtrace_sess.cpus, stop_ipi, NULL, 1);
	cpus_read_unlock();
}

/*
 * Session lock held, state READY. The state becomes ARMED only once every
 * CPU is programmed, so no trigger can race with a CPU still arming.
 */
int mtrace_arm(void)
{
	atomic_t error = ATOMIC_INIT(0);
	int cpu, err;

	for_each_possible_cpu(cpu) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);

		if (!cpumask_test_cpu(cpu, mtrace_sess.cpus)) {
			pc->flags = 0;
			pc->online_tsc = 0;
		}
	}
	for_each_cpu(cpu, mtrace_sess.cpus) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);

		mtrace_ring_clear(pc->ring, &mtrace_sess.plan);
		/* Stays so for a CPU that is offline now and never arms. */
		pc->flags = MTRACE_CPU_RING | MTRACE_CPU_OFFLINED;
		pc->write_offset = 0;
		pc->stop_tsc = 0;
		pc->status = 0;
		pc->output_table = 0;
		pc->mask_ptrs = 0;
		pc->sb->head = 0;
	}
	memset(&mtrace_sess.trigger, 0, sizeof(mtrace_sess.trigger));
	atomic_set(&mtrace_sess.status_bits, 0);
	mtrace_sess.freeze_tsc = 0;
	mtrace_sess.freeze_ns = 0;
	cpus_read_lock();
	mtrace_sess.arm_tsc = rdtsc_ordered();
	mtrace_sess.arm_ns = ktime_get_mono_fast_ns();
	on_each_cpu_mask(mtrace_sess.cpus, arm_ipi, &error, 1);
	err = atomic_read(&error);
	if (err)
		on_each_cpu_mask(mtrace_sess.cpus, stop_ipi, NULL, 1);
	else
		atomic_set_release(&mtrace_sess.state, MTRACE_STATE_ARMED);
	cpus_read_unlock();
	if (err == -EOPNOTSUPP)
		pr_warn_ratelimited("cannot arm: a CPU is in VMX operation (KVM: kvm_intel enables VMX when it loads, 6.12+, or when a VM runs) and this CPU cannot trace there (IA32_VMX_MISC[14]=0); unload kvm_intel or load it with enable_virt_at_load=0\n");
	else if (err == -EIO)
		pr_warn_ratelimited("cannot arm: a PT register write faulted; registers restored\n");
	return err;
}

/*
 * Session lock held. Leaves the state READY with every CPU stopped.
 * killable: a fatal signal may end the wait for a freeze in progress
 * (-EINTR, state unchanged); release must not be interrupted.
 */
int mtrace_disarm(bool killable)
{
	for (;;) {
		int st = atomic_read(&mtrace_sess.state);

		if (st == MTRACE_STATE_FREEZING) {
			if (!killable)
				wait_event(mtrace_sess.wq, atomic_read(&mtrace_sess.state) !=
					   MTRACE_STATE_FREEZING);
			else if (wait_event_killable(mtrace_sess.wq,
						     atomic_read(&mtrace_sess.state) !=
						     MTRACE_STATE_FREEZING))
				return -EINTR;
			continue;
		}
		if (st != MTRACE_STATE_ARMED && st != MTRACE_STATE_FROZEN)
			return 0;
		if (atomic_cmpxchg(&mtrace_sess.state, st, MTRACE_STATE_READY) == st)
			break;
	}
	stop_all();
	return 0;
}

/*
 * On a CPU coming up while armed: it has no ring, so threads that run there
 * are missing from the snapshot; say which CPU and since when.
 */
static int cpu_came_online(unsigned int cpu)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	int st = atomic_read(&mtrace_sess.state);

	if ((st == MTRACE_STATE_ARMED || st == MTRACE_STATE_FREEZING) &&
	    !cpumask_test_cpu(cpu, mtrace_sess.cpus)) {
		WRITE_ONCE(pc->online_tsc, rdtsc());
		WRITE_ONCE(pc->flags, MTRACE_CPU_ADDED);
		atomic_or(MTRACE_STATUS_CPU_ADDED, &mtrace_sess.status_bits);
	}
	return 0;
}

/* On the CPU going down: PT must be off, registers given back, before it leaves. */
static int cpu_offline(unsigned int cpu)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	unsigned long flags;

	local_irq_save(flags);
	if (pc->seq.armed) {
		mtrace_cpu_stop_local();
		pc->flags |= MTRACE_CPU_OFFLINED;
	}
	local_irq_restore(flags);
	return 0;
}

static void power_stop_ipi(void *unused)
{
	mtrace_cpu_stop_local();
}

/*
 * Suspend and reboot: keep the snapshot, and be sure PT is off. Without
 * the session lock, which an ioctl may hold while it waits: power_block
 * keeps an arm in progress from programming CPUs after this, and every
 * online CPU is stopped (stopping one that is not armed does nothing).
 */
static void power_stop(void)
{
	WRITE_ONCE(mtrace_sess.power_block, true);
	/* Seen by every arm IPI sent after this (pairs with the IPI's own ordering). */
	smp_mb();
	mtrace_freeze_now(MTRACE_PATH_POWER, 0);
	cpus_read_lock();
	on_each_cpu(power_stop_ipi, NULL, 1);
	cpus_read_unlock();
}

static int pm_event(struct notifier_block *nb, unsigned long event, void *unused)
{
	if (event == PM_SUSPEND_PREPARE || event == PM_HIBERNATION_PREPARE)
		power_stop();
	else if (event == PM_POST_SUSPEND || event == PM_POST_HIBERNATION)
		WRITE_ONCE(mtrace_sess.power_block, false);
	return NOTIFY_DONE;
}

/*
 * Panic (and crash kexec when crash_kexec_post_notifiers is set): the other
 * CPUs are halted by now, so only this one can still be stopped. perf has
 * cpu_emergency_stop_pt() in the crash path itself; a module cannot hook
 * there.
 */
static int panic_event(struct notifier_block *nb, unsigned long event,
		       void *unused)
{
	unsigned long flags;

	local_irq_save(flags);
	mtrace_cpu_stop_local();
	local_irq_restore(flags);
	return NOTIFY_DONE;
}

static int reboot_event(struct notifier_block *nb, unsigned long event,
			void *unused)
{
	power_stop();
	return NOTIFY_DONE;
}

static struct notifier_block pm_nb = { .notifier_call = pm_event };
static struct notifier_block reboot_nb = { .notifier_call = reboot_event };
static struct notifier_block panic_nb = { .notifier_call = panic_event };

int mtrace_freeze_init(void)
{
	int cpu, err;

	for_each_possible_cpu(cpu)
		INIT_CSD(&per_cpu(mtrace_pcpu, cpu).csd, freeze_ipi, NULL);
	init_irq_work(&mtrace_sess.wake_work, wake_work_fn);
	/* Sends IPIs: must run in hard interrupt context on PREEMPT_RT too. */
	mtrace_sess.ipi_work = IRQ_WORK_INIT_HARD(ipi_work_fn);
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "mtrace:online",
					cpu_came_online, cpu_offline);
	if (err < 0)
		return err;
	cpuhp_state = err;
	err = register_pm_notifier(&pm_nb);
	if (err)
		goto err_pm;
	err = register_reboot_notifier(&reboot_nb);
	if (err)
		goto err_reboot;
	atomic_notifier_chain_register(&panic_notifier_list, &panic_nb);
	return 0;
err_reboot:
	unregister_pm_notifier(&pm_nb);
err_pm:
	cpuhp_remove_state_nocalls(cpuhp_state);
	return err;
}

void mtrace_freeze_exit(void)
{
	atomic_notifier_chain_unregister(&panic_notifier_list, &panic_nb);
	unregister_reboot_notifier(&reboot_nb);
	unregister_pm_notifier(&pm_nb);
	cpuhp_remove_state_nocalls(cpuhp_state);
	irq_work_sync(&mtrace_sess.ipi_work);
	irq_work_sync(&mtrace_sess.wake_work);
}
