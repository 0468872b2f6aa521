// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hardware line: CPUID detection and PT MSR access. With the simulated
 * backend the MSRs live in per-CPU memory and the capabilities are those
 * of a fixed Intel CPU; everything above these functions is shared.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "mtrace_compat.h"
#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"

/*
 * The simulated CPU: a Kaby Lake R (CPUID 0x806ea) as captured with
 * `cpuid -1 --raw` on an i5-8350U (LKML, 2022-08-23, "WARNING: CPU: 1 PID:
 * 83 at arch/x86/kernel/cpu/sgx/main.c:446"). sim=2 clears multi-entry
 * ToPA (ECX[1]) to exercise the single-region layout.
 */
static const struct mtrace_cpuid sim_cpuid = {
	.max_leaf = 0x16,
	.vendor = { 0x756e6547, 0x49656e69, 0x6c65746e },
	.leaf1_eax = 0x000806ea,
	.leaf7_ebx = 0x029c67af,
	.c14_0 = { 0x00000001, 0x0000000f, 0x00000007, 0 },
	.c14_1 = { 0x02490002, 0x003f3fff, 0, 0 },
	.c15 = { 0x00000002, 0x0000009e, 0 },
};

#define SIM_NONTURBO_RATIO	17	/* 1.7 GHz base clock */

static void read_cpuid_local(void *info)
{
	struct mtrace_cpuid *id = info;
	u32 unused;

	cpuid(0, &id->max_leaf, &id->vendor[0], &id->vendor[2], &id->vendor[1]);
	cpuid(1, &id->leaf1_eax, &unused, &unused, &unused);
	if (id->max_leaf >= 7)
		cpuid_count(7, 0, &unused, &id->leaf7_ebx, &unused, &unused);
	if (id->max_leaf >= 0x14) {
		cpuid_count(0x14, 0, &id->c14_0[0], &id->c14_0[1],
			    &id->c14_0[2], &id->c14_0[3]);
		cpuid_count(0x14, 1, &id->c14_1[0], &id->c14_1[1],
			    &id->c14_1[2], &id->c14_1[3]);
	}
	if (id->max_leaf >= 0x15)
		cpuid(0x15, &id->c15[0], &id->c15[1], &id->c15[2], &unused);
}

/* Capabilities common to every online CPU. */
static int detect_real(void)
{
	struct mtrace_cpuid *id;
	struct mtrace_pt_caps caps;
	const char *why = NULL;
	bool first = true;
	u32 lo, hi;
	int cpu, err = 0;

	id = kzalloc(sizeof(*id), GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		memset(id, 0, sizeof(*id));
		err = smp_call_function_single(cpu, read_cpuid_local, id, 1);
		if (!err)
			err = mtrace_caps_from_cpuid(id, &caps, &why);
		if (!err && first)
			mtrace_caps = caps;
		else if (!err)
			err = mtrace_caps_intersect(&mtrace_caps, &caps, &why);
		if (err)
			break;
		first = false;
	}
	cpus_read_unlock();
	kfree(id);
	if (err) {
		pr_err("Intel PT not usable: %s (load with sim=1 for the simulated backend)\n",
		       why ? why : "CPUID read failed");
		return -ENODEV;
	}
	/* Only read now that CPUID says this is an Intel CPU with PT. */
	if (!rdmsr_safe(MTRACE_MSR_PLATFORM_INFO, &lo, &hi))
		mtrace_nonturbo_ratio = (lo >> 8) & 0xff;
	return 0;
}

int mtrace_hw_detect(void)
{
	struct mtrace_cpuid id = sim_cpuid;
	const char *why;

	if (!mtrace_sim)
		return detect_real();
	if (mtrace_sim == 2)
		id.c14_0[2] &= ~MT_PT_CAP_TOPA_MULTI;
	mtrace_nonturbo_ratio = SIM_NONTURBO_RATIO;
	return mtrace_caps_from_cpuid(&id, &mtrace_caps, &why);
}

u64 mtrace_max_single_region(void)
{
	return PAGE_SIZE << MTRACE_MAX_ORDER;
}

static u64 *sim_reg(struct mtrace_sim_regs *r, u32 msr)
{
	switch (msr) {
	case MTRACE_MSR_RTIT_CTL:
		return &r->ctl;
	case MTRACE_MSR_RTIT_STATUS:
		return &r->status;
	case MTRACE_MSR_RTIT_OUTPUT_BASE:
		return &r->output_base;
	case MTRACE_MSR_RTIT_OUTPUT_MASK:
		return &r->mask_ptrs;
	default:
		return NULL;	/* address ranges: accepted, not emulated */
	}
}

/* Reads a PT MSR of this CPU; a faulting read counts as 0. */
u64 mtrace_rdmsr(u32 msr)
{
	u32 lo, hi;
	u64 *reg;

	if (mtrace_sim) {
		reg = sim_reg(&this_cpu_ptr(&mtrace_pcpu)->sim, msr);
		return reg ? *reg : 0;
	}
	if (rdmsr_safe(msr, &lo, &hi))
		return 0;
	return (u64)hi << 32 | lo;
}

int mtrace_wrmsr(u32 msr, u64 val)
{
	u64 *reg;

	if (mtrace_sim) {
		reg = sim_reg(&this_cpu_ptr(&mtrace_pcpu)->sim, msr);
		if (reg)
			*reg = val;
		return 0;
	}
	return wrmsr_safe(msr, (u32)val, (u32)(val >> 32));
}
