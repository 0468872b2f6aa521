// SPDX-License-Identifier: GPL-2.0-only
/*
 * /dev/mtrace: open/release, the ioctls of include/uapi/linux/mtrace.h,
 * mmap of the rings and poll for a completed freeze.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"
#include "mtrace_target.h"

static int state(void)
{
	return atomic_read_acquire(&mtrace_sess.state);
}

static void release_ipi(void *unused)
{
	mtrace_cpu_release_local();
}

/*
 * Frees the rings; every CPU is stopped (state READY or IDLE). A ring that
 * some CPU's OUTPUT_BASE may still name (a restore failed, or the CPU went
 * offline before its registers could be given back) is leaked instead:
 * PT, or perf scheduling its event back in with a stale cache, would
 * write through it.
 */
static void free_rings(void)
{
	int cpu;

	cpus_read_lock();
	on_each_cpu_mask(mtrace_sess.cpus, release_ipi, NULL, 1);
	cpus_read_unlock();
	for_each_cpu(cpu, mtrace_sess.cpus) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);

		if (pc->ring && pc->seq.holds_ring) {
			pr_warn("CPU %d: IA32_RTIT_OUTPUT_BASE still names its ring: leaking %llu bytes rather than freeing memory PT could write\n",
				cpu, mtrace_sess.plan.ring_size);
			if (mtrace_sim)
				mtrace_sim_violation("CPU %d ring leaked: registers not restored",
						     cpu);
		} else {
			mtrace_ring_free(pc->ring, &mtrace_sess.plan);
		}
		mtrace_sb_free(pc->sb);
		pc->ring = NULL;
		pc->sb = NULL;
	}
	cpumask_clear(mtrace_sess.cpus);
	atomic_set(&mtrace_sess.state, MTRACE_STATE_IDLE);
}

static int alloc_rings(u32 sb_records)
{
	int cpu;

	cpus_read_lock();
	cpumask_copy(mtrace_sess.cpus, cpu_online_mask);
	cpus_read_unlock();
	for_each_cpu(cpu, mtrace_sess.cpus) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);
		int node = cpu_to_node(cpu);

		pc->ring = mtrace_ring_alloc(&mtrace_sess.plan, node);
		pc->sb = mtrace_sb_alloc(sb_records, node);
		if (!pc->ring || !pc->sb) {
			free_rings();
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Ring memory of one session over all CPUs, bounded like perf's
 * perf_event_mlock_kb (one session exists at a time, so this is also the
 * bound per user). CAP_IPC_LOCK lifts it, as it does for perf.
 */
static int check_ring_limit(const struct mtrace_config *cfg)
{
	u64 limit = (u64)READ_ONCE(mtrace_ring_limit_kb) << 10;
	u64 per_cpu = cfg->ring_size +
		      (u64)cfg->sb_records * sizeof(struct mtrace_sb_record);

	if (!limit)
		limit = (u64)totalram_pages() << PAGE_SHIFT >> 1;
	if (per_cpu * num_online_cpus() <= limit || capable(CAP_IPC_LOCK))
		return 0;
	pr_info_ratelimited("%llu KiB of rings over %u CPUs exceed ring_limit_kb=%llu (CAP_IPC_LOCK lifts the limit)\n",
			    per_cpu * num_online_cpus() >> 10, num_online_cpus(),
			    limit >> 10);
	return -EDQUOT;
}

static int ioc_set_config(void __user *arg)
{
	struct mtrace_config cfg;
	struct mtrace_pt_program prog;
	struct mtrace_topa_plan plan;
	struct pid *target = NULL;
	int err;

	if (copy_from_user(&cfg, arg, sizeof(cfg)))
		return -EFAULT;
	err = mtrace_config_encode(&cfg, &mtrace_caps,
				   mtrace_max_single_region(), &prog);
	if (!err)
		err = mtrace_topa_plan(&plan, cfg.ring_size, prog.region_size,
				       mtrace_caps.multi_topa);
	if (err)
		return err;
	/*
	 * Checked against the caller, not the opener: a privileged helper may
	 * pass the open device to an unprivileged process, which must not
	 * gain more than tracing what it could ptrace anyway. Every process
	 * of every user runs through a system-wide trace, so that needs
	 * CAP_PERFMON here as well as at open.
	 */
	if (cfg.flags & MTRACE_CFG_KERNEL && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (cfg.flags & MTRACE_CFG_SYSTEM_WIDE && !perfmon_capable())
		return -EPERM;
	err = check_ring_limit(&cfg);
	if (err)
		return err;
	if (!(cfg.flags & MTRACE_CFG_SYSTEM_WIDE)) {
		err = mtrace_target_lookup(cfg.pid, &target);
		if (err)
			return err;
	}
	err = -EBADFD;
	if (state() == MTRACE_STATE_ARMED || state() == MTRACE_STATE_FREEZING)
		goto err_target;
	/* User mappings of the old rings must go before the rings do. */
	err = -EBUSY;
	if (atomic_read(&mtrace_sess.mmaps))
		goto err_target;
	if (!mtrace_sess.tp_registered) {
		err = mtrace_sched_register();
		if (err)
			goto err_target;
		mtrace_sess.tp_registered = true;
	}
	free_rings();
	mtrace_sess.prog = prog;
	mtrace_sess.plan = plan;
	mtrace_sess.sb_records = cfg.sb_records;
	mtrace_sess.per_task = !(cfg.flags & MTRACE_CFG_SYSTEM_WIDE);
	/* May the trace follow a target into a set-user-ID program? */
	mtrace_sess.may_trace_setid = capable(CAP_SYS_PTRACE);
	/* Every CPU is stopped: no probe looks at the old target any more. */
	put_pid(mtrace_sess.target);
	mtrace_sess.target = target;
	mtrace_sess.snapshots = 0;
	mtrace_sess.allocs = 0;
	err = alloc_rings(cfg.sb_records);
	if (err)
		return err;
	atomic_set(&mtrace_sess.state, MTRACE_STATE_READY);
	return 0;
err_target:
	put_pid(target);
	return err;
}

static int ioc_arm(void)
{
	int st = state();

	if (st != MTRACE_STATE_READY && st != MTRACE_STATE_FROZEN)
		return -EBADFD;
	atomic_set(&mtrace_sess.state, MTRACE_STATE_READY);
	return mtrace_arm();
}

static int ioc_freeze(void __user *arg)
{
	struct mtrace_freeze req;
	int err;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || (req.path != MTRACE_PATH_FALLBACK &&
			     req.path != MTRACE_PATH_MANUAL &&
			     req.path != MTRACE_PATH_EXIT))
		return -EINVAL;
	err = mtrace_freeze_now(req.path, req.cookie);
	if (err == -ENODATA)
		return -EBADFD;
	/* Whoever won, the snapshot is complete when this returns. */
	if (wait_event_killable(mtrace_sess.wq, state() != MTRACE_STATE_FREEZING))
		return -EINTR;
	return err;
}

static int ioc_status(void __user *arg)
{
	struct mtrace_status st = {
		.state = state(),
		.nr_cpus = cpumask_weight(mtrace_sess.cpus),
		.snapshots = mtrace_sess.snapshots,
		.ring_size = mtrace_sess.plan.ring_size,
		.rtit_ctl = mtrace_sess.prog.ctl,
		.arm_tsc = mtrace_sess.arm_tsc,
		.arm_ns = mtrace_sess.arm_ns,
		.flags = atomic_read(&mtrace_sess.status_bits),
	};
	int cpu;

	if (st.state == MTRACE_STATE_FROZEN) {
		st.freeze_tsc = mtrace_sess.freeze_tsc;
		st.freeze_ns = mtrace_sess.freeze_ns;
		st.trigger = mtrace_sess.trigger;
		for_each_cpu(cpu, mtrace_sess.cpus)
			if (per_cpu(mtrace_pcpu, cpu).flags & MTRACE_CPU_CLOBBERED)
				st.flags |= MTRACE_STATUS_CLOBBERED;
	}
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static int ioc_get_cpu(void __user *arg)
{
	struct mtrace_cpu_info info;
	struct mtrace_pcpu *pc;

	if (copy_from_user(&info, arg, sizeof(info)))
		return -EFAULT;
	if (info.cpu >= nr_cpu_ids ||
	    !mtrace_zeroed(&info.flags, sizeof(info) - sizeof(info.cpu)))
		return -EINVAL;
	if (state() == MTRACE_STATE_IDLE)
		return -EBADFD;
	pc = per_cpu_ptr(&mtrace_pcpu, info.cpu);
	if (!cpumask_test_cpu(info.cpu, mtrace_sess.cpus)) {
		/* Threads that ran there since online_tsc are missing. */
		info.flags = READ_ONCE(pc->flags) & MTRACE_CPU_ADDED;
		if (info.flags)
			info.online_tsc = READ_ONCE(pc->online_tsc);
		return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
	}
	info.flags = MTRACE_CPU_RING;
	info.ring_size = mtrace_sess.plan.ring_size;
	info.mmap_offset = (u64)info.cpu * info.ring_size;
	if (state() == MTRACE_STATE_FROZEN) {
		info.flags = pc->flags;
		info.write_offset = pc->write_offset;
		info.stop_tsc = pc->stop_tsc;
		info.rtit_status = pc->status;
		info.output_table = pc->output_table;
		info.output_mask_ptrs = pc->mask_ptrs;
		info.sb_written = pc->sb->head;
		if (!(pc->flags & MTRACE_CPU_CLOBBERED) &&
		    mtrace_ring_wrapped(pc->ring, &mtrace_sess.plan,
					pc->write_offset))
			info.flags |= MTRACE_CPU_WRAPPED;
	}
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static int ioc_read_sideband(void __user *arg)
{
	struct mtrace_sb_read req;
	struct mtrace_sb_record __user *out;
	struct mtrace_sb *sb;
	u64 first, seq, n;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.cpu >= nr_cpu_ids || req.first_seq ||
	    !mtrace_zeroed(req.reserved, sizeof(req.reserved)))
		return -EINVAL;
	if (state() != MTRACE_STATE_FROZEN)
		return -EBADFD;
	if (!cpumask_test_cpu(req.cpu, mtrace_sess.cpus))
		return -ENODEV;
	sb = per_cpu(mtrace_pcpu, req.cpu).sb;
	first = max(mtrace_sb_first_seq(sb->head, (u64)sb->mask + 1),
		    req.start_seq);
	n = first < sb->head ? min_t(u64, req.count, sb->head - first) : 0;
	out = u64_to_user_ptr(req.records_ptr);
	for (seq = first; seq < first + n; seq++)
		if (copy_to_user(out++, &sb->recs[seq & sb->mask],
				 sizeof(*out)))
			return -EFAULT;
	req.first_seq = first;
	req.count = n;
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

struct sim_call {
	struct mtrace_pcpu *pc;
	const u8 *data;
	u64 len;
	long ret;
	struct mtrace_sim_msr msr;
};

/* On the CPU whose "hardware" writes: serialised with its PT sequences. */
static void sim_inject_local(void *info)
{
	struct sim_call *c = info;

	c->ret = mtrace_ring_sim_write(c->pc->ring, &mtrace_sess.plan,
				       &c->pc->sim, c->data, c->len);
}

static long ioc_sim_inject(void __user *arg)
{
	struct mtrace_sim_inject req;
	struct sim_call c = { 0 };
	void *buf;
	int err;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.reserved || req.cpu >= nr_cpu_ids || !req.len ||
	    req.len > MTRACE_SIM_INJECT_MAX)
		return -EINVAL;
	if (state() == MTRACE_STATE_IDLE)
		return -EBADFD;
	if (!cpumask_test_cpu(req.cpu, mtrace_sess.cpus))
		return -ENODEV;
	buf = kvmalloc(req.len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(req.data_ptr), req.len)) {
		kvfree(buf);
		return -EFAULT;
	}
	c.pc = per_cpu_ptr(&mtrace_pcpu, req.cpu);
	c.data = buf;
	c.len = req.len;
	err = smp_call_function_single(req.cpu, sim_inject_local, &c, 1);
	kvfree(buf);
	return err ? err : c.ret;
}

/*
 * Another agent's write, under the model's rules but for its output (the
 * model cannot see that agent's memory); the value is now its owner's.
 */
static void sim_set_msr_local(void *info)
{
	struct sim_call *c = info;
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	const char *why;

	c->ret = mtrace_pt_model_wrmsr(&mtrace_sim_model, &pc->sim, c->msr.msr,
				       c->msr.value, &why) ? -EINVAL : 0;
	if (!c->ret)
		*mtrace_pt_model_reg(&pc->owner, c->msr.msr) = c->msr.value;
}

static void sim_get_msr_local(void *info)
{
	struct sim_call *c = info;

	c->msr.value = *mtrace_pt_model_reg(&this_cpu_ptr(&mtrace_pcpu)->sim,
					    c->msr.msr);
}

static int ioc_sim_msr(unsigned int cmd, void __user *arg)
{
	bool set = cmd == MTRACE_IOC_SIM_SET_MSR;
	struct mtrace_sim_regs probe;
	struct sim_call c = { 0 };
	int err;

	if (copy_from_user(&c.msr, arg, sizeof(c.msr)))
		return -EFAULT;
	if (c.msr.cpu >= nr_cpu_ids || !cpu_possible(c.msr.cpu) ||
	    !mtrace_pt_model_reg(&probe, c.msr.msr) || (!set && c.msr.value))
		return -EINVAL;
	err = smp_call_function_single(c.msr.cpu,
				       set ? sim_set_msr_local : sim_get_msr_local,
				       &c, 1);
	if (err || set)
		return err ? err : c.ret;
	return copy_to_user(arg, &c.msr, sizeof(c.msr)) ? -EFAULT : 0;
}

static int ioc_version(void __user *arg)
{
	struct mtrace_version v = { .abi_version = MTRACE_ABI_VERSION };

	strscpy(v.module_version, MTRACE_VERSION, sizeof(v.module_version));
	return copy_to_user(arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static int ioc_caps(void __user *arg)
{
	struct mtrace_caps c = {
		.nr_cpu_ids = nr_cpu_ids,
		.cpuid_1_eax = mtrace_caps.leaf1_eax,
		.max_nonturbo_ratio = mtrace_nonturbo_ratio,
		.tsc_khz = tsc_khz,
		.max_single_region = mtrace_max_single_region(),
	};

	memcpy(c.cpuid_14_0, mtrace_caps.c14_0, sizeof(c.cpuid_14_0));
	memcpy(c.cpuid_14_1, mtrace_caps.c14_1, sizeof(c.cpuid_14_1));
	memcpy(c.cpuid_15, mtrace_caps.c15, sizeof(c.cpuid_15));
	c.flags = (mtrace_sim ? MTRACE_CAPS_SIMULATED : 0) |
		  (mtrace_caps.multi_topa ? MTRACE_CAPS_MULTI_TOPA : 0) |
		  (mtrace_kfunc_ok ? MTRACE_CAPS_KFUNC : 0) |
		  (mtrace_caps.branch_always_on ? MTRACE_CAPS_BRANCH_ON : 0);
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

static long dispatch(unsigned int cmd, void __user *arg)
{
	switch (cmd) {
	case MTRACE_IOC_GET_VERSION:
		return ioc_version(arg);
	case MTRACE_IOC_GET_CAPS:
		return ioc_caps(arg);
	case MTRACE_IOC_SET_CONFIG:
		return ioc_set_config(arg);
	case MTRACE_IOC_ARM:
		return ioc_arm();
	case MTRACE_IOC_DISARM:
		if (state() == MTRACE_STATE_IDLE)
			return -EBADFD;
		return mtrace_disarm(true);
	case MTRACE_IOC_FREEZE:
		return ioc_freeze(arg);
	case MTRACE_IOC_GET_STATUS:
		return ioc_status(arg);
	case MTRACE_IOC_GET_CPU:
		return ioc_get_cpu(arg);
	case MTRACE_IOC_READ_SIDEBAND:
		return ioc_read_sideband(arg);
	case MTRACE_IOC_SIM_INJECT:
		return mtrace_sim ? ioc_sim_inject(arg) : -ENOTTY;
	case MTRACE_IOC_SIM_SET_MSR:
	case MTRACE_IOC_SIM_GET_MSR:
		return mtrace_sim ? ioc_sim_msr(cmd, arg) : -ENOTTY;
	default:
		return -ENOTTY;
	}
}

static long mtrace_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	long ret;

	mutex_lock(&mtrace_sess.lock);
	ret = dispatch(cmd, (void __user *)arg);
	mutex_unlock(&mtrace_sess.lock);
	return ret;
}

static __poll_t mtrace_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &mtrace_sess.wq, wait);
	return state() == MTRACE_STATE_FROZEN ? EPOLLIN | EPOLLRDNORM : 0;
}

static int mtrace_mmap(struct file *file, struct vm_area_struct *vma)
{
	int err = -EBADFD;

	mutex_lock(&mtrace_sess.lock);
	if (state() != MTRACE_STATE_IDLE)
		err = mtrace_ring_mmap(vma);
	mutex_unlock(&mtrace_sess.lock);
	return err;
}

static int mtrace_open(struct inode *inode, struct file *file)
{
	if (!perfmon_capable())
		return -EPERM;
	if (test_and_set_bit(0, &mtrace_sess.busy))
		return -EBUSY;
	return stream_open(inode, file);
}

/* Last reference gone (close, owner death, last munmap): stop and free. */
static int mtrace_release(struct inode *inode, struct file *file)
{
	mutex_lock(&mtrace_sess.lock);
	mtrace_disarm(false);
	if (mtrace_sess.tp_registered) {
		mtrace_sched_unregister();
		mtrace_sess.tp_registered = false;
	}
	free_rings();
	put_pid(mtrace_sess.target);
	mtrace_sess.target = NULL;
	if (mtrace_sim)
		mtrace_sim_check_restored();
	mutex_unlock(&mtrace_sess.lock);
	clear_bit(0, &mtrace_sess.busy);
	return 0;
}

static const struct file_operations mtrace_fops = {
	.owner = THIS_MODULE,
	.open = mtrace_open,
	.release = mtrace_release,
	.unlocked_ioctl = mtrace_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = mtrace_poll,
	.mmap = mtrace_mmap,
};

/* World-openable node: open() itself demands CAP_PERFMON/CAP_SYS_ADMIN. */
static struct miscdevice mtrace_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mtrace",
	.fops = &mtrace_fops,
	.mode = 0666,
};

int mtrace_dev_init(void)
{
	return misc_register(&mtrace_misc);
}

void mtrace_dev_exit(void)
{
	misc_deregister(&mtrace_misc);
}
