// SPDX-License-Identifier: GPL-2.0-only
/*
 * mtrace: per-CPU Intel PT rings frozen on a trigger, exposed through
 * /dev/mtrace. See docs/kernel-module.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "mtrace_internal.h"

struct mtrace_session mtrace_sess = {
	.lock = __MUTEX_INITIALIZER(mtrace_sess.lock),
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(mtrace_sess.wq),
	.state = ATOMIC_INIT(MTRACE_STATE_IDLE),
};

struct mtrace_pt_caps mtrace_caps;
u32 mtrace_nonturbo_ratio;
bool mtrace_kfunc_ok;

int mtrace_sim;
module_param_named(sim, mtrace_sim, int, 0444);
MODULE_PARM_DESC(sim, "simulated PT backend: 0 off (default), 1 multi-entry ToPA, 2 single-entry ToPA");

int mtrace_sim_vmx;
module_param_named(sim_vmx, mtrace_sim_vmx, int, 0444);
MODULE_PARM_DESC(sim_vmx, "simulated backend: 0 no VMX (default), 1 every CPU post-VMXON without IA32_VMX_MISC[14], 2 post-VMXON with it");

unsigned int mtrace_ring_limit_kb;
module_param_named(ring_limit_kb, mtrace_ring_limit_kb, uint, 0644);
MODULE_PARM_DESC(ring_limit_kb, "ring memory of a session over all CPUs, KiB (0: half of RAM, the default); CAP_IPC_LOCK lifts it");

/*
 * Fault injection for the tests: the kernels they run on are built without
 * CONFIG_FAULT_INJECTION, so failslab cannot reach the ring allocations.
 * Honoured only by the simulated backend (see mtrace_alloc_should_fail()).
 */
unsigned int mtrace_fail_alloc;
module_param_named(fail_alloc, mtrace_fail_alloc, uint, 0644);
MODULE_PARM_DESC(fail_alloc, "testing, simulated backend only: make the N-th allocation of each SET_CONFIG fail (0 off, default)");

static int __init mtrace_init(void)
{
	int err;

	if (mtrace_sim < 0 || mtrace_sim > 2) {
		pr_err("sim=%d: must be 0, 1 or 2\n", mtrace_sim);
		return -EINVAL;
	}
	if (mtrace_sim_vmx < 0 || mtrace_sim_vmx > 2 || (mtrace_sim_vmx && !mtrace_sim)) {
		pr_err("sim_vmx=%d: must be 0, 1 or 2, and needs sim\n", mtrace_sim_vmx);
		return -EINVAL;
	}
	err = mtrace_hw_detect();
	if (err)
		return err;
	if (mtrace_sim)
		mtrace_sim_init_regs();
	if (!zalloc_cpumask_var(&mtrace_sess.cpus, GFP_KERNEL))
		return -ENOMEM;
	err = mtrace_freeze_init();
	if (err)
		goto err_freeze;
	err = mtrace_kfunc_register();
	if (err)
		pr_warn("mtrace_freeze kfunc not registered (%d): BPF triggers use the ioctl\n",
			err);
	err = mtrace_dev_init();
	if (err)
		goto err_dev;
	pr_info("version %s, ABI %d, %s backend\n", MTRACE_VERSION,
		MTRACE_ABI_VERSION, mtrace_sim ? "simulated" : "Intel PT");
	return 0;
err_dev:
	mtrace_freeze_exit();
err_freeze:
	free_cpumask_var(mtrace_sess.cpus);
	return err;
}

/* The device holds a module reference while open, so no session is left. */
static void __exit mtrace_exit(void)
{
	mtrace_dev_exit();
	mtrace_freeze_exit();
	free_cpumask_var(mtrace_sess.cpus);
}

module_init(mtrace_init);
module_exit(mtrace_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Intel PT per-CPU rings with trigger freeze for mtrace");
MODULE_VERSION(MTRACE_VERSION);
MODULE_INFO(mtrace_abi, __stringify(MTRACE_ABI_VERSION));
