// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hardware line: CPUID detection and PT MSR access. With the simulated
 * backend the MSRs live in per-CPU memory and the capabilities are those
 * of a fixed Intel CPU; everything above these functions is shared.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/processor.h>
#include <asm/special_insns.h>

#include "mtrace_compat.h"
#include "mtrace_internal.h"
#include "mtrace_pt_defs.h"

#define SIM_NONTURBO_RATIO	17	/* 1.7 GHz base clock */
#define SIM_PA_BITS		39	/* CPUID 0x80000008 of the i5-8350U */

bool mtrace_vmx_pt;
struct mtrace_pt_model mtrace_sim_model = {
	.caps = &mtrace_caps,
	.pa_bits = SIM_PA_BITS,
};

static unsigned int sim_gp_count, sim_violation_count;

module_param_named(sim_gp, sim_gp_count, uint, 0444);
MODULE_PARM_DESC(sim_gp, "simulated backend: PT MSR accesses the model faulted (#GP)");
module_param_named(sim_violations, sim_violation_count, uint, 0444);
MODULE_PARM_DESC(sim_violations, "simulated backend: registers not restored, or freed rings still referenced");

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

	/* The kernel's view first, so that clearcpuid=intel_pt is obeyed. */
	if (!boot_cpu_has(X86_FEATURE_INTEL_PT)) {
		pr_err("Intel PT not usable: the kernel reports no intel_pt feature (absent, or clearcpuid=intel_pt) (load with sim=1 for the simulated backend)\n");
		return -ENODEV;
	}
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
	mtrace_caps.va_bits = boot_cpu_data.x86_virt_bits;
	/* Only read now that CPUID says this is an Intel CPU with PT. */
	if (!rdmsr_safe(MTRACE_MSR_PLATFORM_INFO, &lo, &hi))
		mtrace_nonturbo_ratio = (lo >> 8) & 0xff;
	/* As pt_pmu_hw_init(): may PT run in VMX operation (KVM)? */
	if (boot_cpu_has(X86_FEATURE_VMX) &&
	    !rdmsr_safe(MTRACE_MSR_VMX_MISC, &lo, &hi))
		mtrace_vmx_pt = lo & MTRACE_VMX_MISC_PT;
	return 0;
}

int mtrace_hw_detect(void)
{
	struct mtrace_cpuid id = mtrace_sim_cpuid;
	const char *why;

	if (!mtrace_sim)
		return detect_real();
	/* sim=2 clears multi-entry ToPA to exercise the single-region layout. */
	if (mtrace_sim == 2)
		id.c14_0[2] &= ~MT_PT_CAP_TOPA_MULTI;
	mtrace_nonturbo_ratio = SIM_NONTURBO_RATIO;
	mtrace_sim_model.vmx_pt = mtrace_sim_vmx == 2;
	mtrace_vmx_pt = mtrace_sim_model.vmx_pt;
	return mtrace_caps_from_cpuid(&id, &mtrace_caps, &why);
}

u64 mtrace_max_single_region(void)
{
	return PAGE_SIZE << MTRACE_MAX_ORDER;
}

/*
 * True when this CPU is in VMX operation (KVM has run VMXON: CR4.VMXE is
 * set) and cannot trace there: without IA32_VMX_MISC[14], VMXON clears
 * TraceEn and setting it again faults (SDM "Tracing post-VMXON", perf's
 * intel_pt_handle_vmx()). KVM enables VMX when kvm_intel loads (6.12+,
 * enable_virt_at_load) or when a VM starts.
 */
bool mtrace_hw_vmx_blocks_pt(void)
{
	if (mtrace_vmx_pt)
		return false;
	if (mtrace_sim)
		return this_cpu_ptr(&mtrace_pcpu)->sim.vmxon;
	return __read_cr4() & X86_CR4_VMXE;
}

void mtrace_sim_gp(u32 msr, u64 val, bool write, const char *why)
{
	WRITE_ONCE(sim_gp_count, sim_gp_count + 1);
	pr_warn("sim #GP on CPU %d: %s %#x (%#llx): %s\n", smp_processor_id(),
		write ? "WRMSR" : "RDMSR", msr, val, why);
}

NOKPROBE_SYMBOL(mtrace_sim_gp);

void mtrace_sim_violation(const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	WRITE_ONCE(sim_violation_count, sim_violation_count + 1);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("sim model violation: %pV\n", &vaf);
	va_end(args);
}

/*
 * "perf was here": before any session the emulated registers hold another
 * owner's idle configuration (TraceEn clear), which every session must
 * leave as it found it.
 */
void mtrace_sim_init_regs(void)
{
	static const u64 addr[] = {
		0x400000, 0x4fffff, 0x7f0000000000ULL, 0x7f00000fffffULL,
	};
	int cpu;

	for_each_possible_cpu(cpu) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);
		struct mtrace_sim_regs *r = &pc->sim;

		memset(r, 0, sizeof(*r));
		r->ctl = MTRACE_RTIT_CTL_TOPA | MTRACE_RTIT_CTL_TSC_EN |
			 MTRACE_RTIT_CTL_BRANCH_EN | MTRACE_RTIT_CTL_OS |
			 MTRACE_RTIT_CTL_USR;
		r->status = 0x123ULL << 32;		/* PacketByteCnt */
		r->output_base = 0x7654000ULL + ((u64)cpu << 12);
		r->mask_ptrs = mtrace_topa_mask_ptrs(3, 0x800);
		r->cr3_match = 0x1234000;
		memcpy(r->addr, addr, sizeof(addr));
		r->vmxon = mtrace_sim_vmx != 0;
		pc->owner = *r;
	}
}

/* After close: each CPU's registers are what their owner left there. */
void mtrace_sim_check_restored(void)
{
	static const u32 msrs[] = {
		MTRACE_MSR_RTIT_CTL, MTRACE_MSR_RTIT_STATUS,
		MTRACE_MSR_RTIT_OUTPUT_BASE, MTRACE_MSR_RTIT_OUTPUT_MASK,
		MTRACE_MSR_RTIT_CR3_MATCH, 0x580, 0x581, 0x582, 0x583,
		0x584, 0x585, 0x586, 0x587,
	};
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct mtrace_pcpu *pc = per_cpu_ptr(&mtrace_pcpu, cpu);

		for (i = 0; i < ARRAY_SIZE(msrs); i++) {
			u64 now = *mtrace_pt_model_reg(&pc->sim, msrs[i]);
			u64 was = *mtrace_pt_model_reg(&pc->owner, msrs[i]);

			if (now != was)
				mtrace_sim_violation("CPU %d MSR %#x: %#llx, owner left %#llx",
						     cpu, msrs[i], now, was);
		}
	}
}

static int sim_msr_read(u32 msr, u64 *val)
{
	const char *why;
	int err = mtrace_pt_model_rdmsr(&mtrace_sim_model,
					&this_cpu_ptr(&mtrace_pcpu)->sim, msr,
					val, &why);

	if (err) {
		*val = 0;
		mtrace_sim_gp(msr, 0, false, why);
	}
	return err;
}

static int sim_msr_write(u32 msr, u64 val)
{
	struct mtrace_pcpu *pc = this_cpu_ptr(&mtrace_pcpu);
	const char *why;
	int err = mtrace_ring_sim_wrmsr(pc->ring, &mtrace_sess.plan, &pc->sim,
					msr, val, &why);

	if (err)
		mtrace_sim_gp(msr, val, true, why);
	return err;
}

/* Reads a PT MSR of this CPU: 0, or -EIO when it faulted (*val = 0). */
int mtrace_msr_read(u32 msr, u64 *val)
{
	u32 lo, hi;

	if (mtrace_sim)
		return sim_msr_read(msr, val);
	if (rdmsr_safe(msr, &lo, &hi)) {
		*val = 0;
		return -EIO;
	}
	*val = (u64)hi << 32 | lo;
	return 0;
}

NOKPROBE_SYMBOL(mtrace_msr_read);

int mtrace_msr_write(u32 msr, u64 val)
{
	if (mtrace_sim)
		return sim_msr_write(msr, val);
	return wrmsr_safe(msr, (u32)val, (u32)(val >> 32)) ? -EIO : 0;
}

NOKPROBE_SYMBOL(mtrace_msr_write);
