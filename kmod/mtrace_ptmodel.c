// SPDX-License-Identifier: GPL-2.0-only
/*
 * The strict RTIT MSR model. The rules, from Intel SDM Vol. 3C, "Intel
 * Processor Trace" (IA32_RTIT_CTL, _STATUS, _OUTPUT_BASE, _ADDRn, _CR3_MATCH
 * and "Tracing post-VMXON"), are the ones KVM also enforces on its guests:
 * - every RTIT MSR but CTL is read-only while TraceEn=1;
 * - while TraceEn=1, a CTL write may change no bit but TraceEn;
 * - a CTL bit for a feature CPUID leaf 0x14 does not enumerate, an
 *   MTCFreq/CycThresh/PSBFreq encoding missing from its bitmap, and an
 *   ADDRn_CFG above 2 or beyond the number of ranges are reserved;
 * - TraceEn=1 needs an output scheme (ToPA, or single range/FabricEn when
 *   enumerated), BranchEn on Broadwell (erratum BDM106), and, in VMX
 *   operation, IA32_VMX_MISC[14];
 * - ADDRn exist only for enumerated ranges and take canonical addresses,
 *   CR3_MATCH only with CR3 filtering, STATUS only its writable fields,
 *   OUTPUT_BASE no bits below 7 or above MAXPHYADDR.
 */
#ifdef __KERNEL__
#include <linux/kprobes.h>
#endif

#include "mtrace_ptmodel.h"
#include "mtrace_pt_defs.h"

#define NR_ADDR_MSRS	8

u64 *mtrace_pt_model_reg(struct mtrace_sim_regs *r, u32 msr)
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
	case MTRACE_MSR_RTIT_CR3_MATCH:
		return &r->cr3_match;
	default:
		if (msr >= MTRACE_MSR_RTIT_ADDR0_A &&
		    msr < MTRACE_MSR_RTIT_ADDR0_A + NR_ADDR_MSRS)
			return &r->addr[msr - MTRACE_MSR_RTIT_ADDR0_A];
		return NULL;
	}
}

static u32 nr_ranges(const struct mtrace_pt_model *m)
{
	return m->caps->c14_1[0] & MT_PT_CAP_NR_RANGES_MASK;
}

/* Does this CPU have the MSR at all? (RDMSR/WRMSR of a missing one #GPs.) */
static bool msr_exists(const struct mtrace_pt_model *m, u32 msr)
{
	if (msr >= MTRACE_MSR_RTIT_ADDR0_A &&
	    msr < MTRACE_MSR_RTIT_ADDR0_A + NR_ADDR_MSRS)
		return msr - MTRACE_MSR_RTIT_ADDR0_A < 2 * nr_ranges(m);
	if (msr == MTRACE_MSR_RTIT_CR3_MATCH)
		return m->caps->c14_0[1] & MT_PT_CAP_CR3_FILTER;
	return true;
}

int mtrace_pt_model_rdmsr(const struct mtrace_pt_model *m,
			  const struct mtrace_sim_regs *r, u32 msr, u64 *val,
			  const char **why)
{
	u64 *reg = mtrace_pt_model_reg((struct mtrace_sim_regs *)r, msr);

	if (!reg || !msr_exists(m, msr)) {
		*why = "RDMSR of an RTIT MSR this CPU does not have";
		return -EIO;
	}
	*val = *reg;
	return 0;
}

static bool field_ok(u64 val, u32 shift, u32 bitmap)
{
	return bitmap & BIT((val >> shift) & MTRACE_RTIT_CTL_FIELD_MASK);
}

/* CTL bits this CPU implements. */
static u64 ctl_valid_bits(const struct mtrace_pt_model *m)
{
	const struct mtrace_pt_caps *c = m->caps;
	u32 ebx = c->c14_0[1], ecx = c->c14_0[2], n;
	u64 ok = MTRACE_RTIT_CTL_TRACEEN | MTRACE_RTIT_CTL_OS |
		 MTRACE_RTIT_CTL_USR | MTRACE_RTIT_CTL_TSC_EN |
		 MTRACE_RTIT_CTL_DISRETC | MTRACE_RTIT_CTL_BRANCH_EN;

	if (ebx & MT_PT_CAP_PSB_CYC)
		ok |= MTRACE_RTIT_CTL_CYCEN |
		      MTRACE_RTIT_CTL_FIELD_MASK << MTRACE_RTIT_CTL_CYC_THRESH_SHIFT |
		      MTRACE_RTIT_CTL_FIELD_MASK << MTRACE_RTIT_CTL_PSB_FREQ_SHIFT;
	if (ebx & MT_PT_CAP_MTC)
		ok |= MTRACE_RTIT_CTL_MTC_EN |
		      MTRACE_RTIT_CTL_FIELD_MASK << MTRACE_RTIT_CTL_MTC_FREQ_SHIFT;
	if (ebx & MT_PT_CAP_PTWRITE)
		ok |= MTRACE_RTIT_CTL_PTW_EN | MTRACE_RTIT_CTL_FUP_ON_PTW;
	if (ebx & MT_PT_CAP_PWR_EVT)
		ok |= MTRACE_RTIT_CTL_PWR_EVT_EN;
	if (ebx & MT_PT_CAP_CR3_FILTER)
		ok |= MTRACE_RTIT_CTL_CR3_FILTER;
	if (ecx & MT_PT_CAP_TOPA)
		ok |= MTRACE_RTIT_CTL_TOPA;
	if (ecx & MT_PT_CAP_OUTPUT_SUBSYS)
		ok |= MTRACE_RTIT_CTL_FABRIC_EN;
	for (n = 0; n < nr_ranges(m); n++)
		ok |= MTRACE_RTIT_CTL_FIELD_MASK << MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(n);
	return ok;
}

static const char *ctl_fields_bad(const struct mtrace_pt_model *m, u64 val)
{
	const struct mtrace_pt_caps *c = m->caps;
	u32 n;

	if (val & ~ctl_valid_bits(m))
		return "CTL sets a reserved bit or a feature CPUID does not enumerate";
	if (c->c14_0[1] & MT_PT_CAP_MTC &&
	    !field_ok(val, MTRACE_RTIT_CTL_MTC_FREQ_SHIFT, c->c14_1[0] >> 16))
		return "CTL.MTCFreq encoding not in CPUID.(14H,1):EAX[31:16]";
	if (c->c14_0[1] & MT_PT_CAP_PSB_CYC &&
	    !field_ok(val, MTRACE_RTIT_CTL_CYC_THRESH_SHIFT, c->c14_1[1] & 0xffff))
		return "CTL.CycThresh encoding not in CPUID.(14H,1):EBX[15:0]";
	if (c->c14_0[1] & MT_PT_CAP_PSB_CYC &&
	    !field_ok(val, MTRACE_RTIT_CTL_PSB_FREQ_SHIFT, c->c14_1[1] >> 16))
		return "CTL.PSBFreq encoding not in CPUID.(14H,1):EBX[31:16]";
	for (n = 0; n < MTRACE_MAX_ADDR_FILTERS; n++)
		if ((val >> MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(n) &
		     MTRACE_RTIT_CTL_FIELD_MASK) > 2)
			return "CTL.ADDRn_CFG encoding above 2";
	return NULL;
}

/* The output pointer must lead to a ToPA output region, as the CPU reads it. */
static const char *output_bad(const struct mtrace_pt_model *m,
			      const struct mtrace_sim_regs *r)
{
	const struct mtrace_topa_mem *mem = m->mem;
	u32 idx = (r->mask_ptrs & MTRACE_RTIT_MASK_IDX_MASK) >> MTRACE_RTIT_MASK_IDX_SHIFT;
	u64 off = r->mask_ptrs >> MTRACE_RTIT_MASK_OFF_SHIFT;
	u64 *table;
	u64 entry;

	if (!mem)
		return NULL;	/* another agent's memory: not modelled */
	table = mem->table(mem->ctx, r->output_base);
	if (!table)
		return "TraceEn=1 with OUTPUT_BASE naming no live ToPA table";
	if (idx >= MT_TOPA_TABLE_ENTRIES)
		return "TraceEn=1 with the ToPA index beyond the table";
	entry = table[idx];
	if (entry & MT_TOPA_END) {
		table = mem->table(mem->ctx, entry & MT_TOPA_BASE_MASK);
		if (!table || off || table[0] & MT_TOPA_END)
			return "TraceEn=1 with an END entry linking to no ToPA table";
		entry = table[0];
	}
	if (!mem->region(mem->ctx, entry & MT_TOPA_BASE_MASK,
			 1ULL << (12 + ((entry & MT_TOPA_SIZE_MASK) >> MT_TOPA_SIZE_SHIFT))))
		return "TraceEn=1 with a ToPA entry naming no live output region";
	if (off >= 1ULL << (12 + ((entry & MT_TOPA_SIZE_MASK) >> MT_TOPA_SIZE_SHIFT)))
		return "TraceEn=1 with the output offset beyond its region";
	return NULL;
}

static const char *ctl_bad(const struct mtrace_pt_model *m,
			   const struct mtrace_sim_regs *r, u64 val)
{
	const char *why;

	if (r->ctl & MTRACE_RTIT_CTL_TRACEEN &&
	    (r->ctl ^ val) & ~MTRACE_RTIT_CTL_TRACEEN)
		return "CTL changed while TraceEn=1 (only TraceEn may change)";
	why = ctl_fields_bad(m, val);
	if (why || !(val & MTRACE_RTIT_CTL_TRACEEN))
		return why;
	if (r->vmxon && !m->vmx_pt)
		return "TraceEn=1 in VMX operation without IA32_VMX_MISC[14]";
	if (m->caps->branch_always_on && !(val & MTRACE_RTIT_CTL_BRANCH_EN))
		return "TraceEn=1 with BranchEn=0 on Broadwell (BDM106)";
	if (val & MTRACE_RTIT_CTL_TOPA)
		return output_bad(m, r);
	if (!(val & MTRACE_RTIT_CTL_FABRIC_EN) &&
	    !(m->caps->c14_0[2] & MT_PT_CAP_SINGLE_RANGE))
		return "TraceEn=1 with no output scheme this CPU supports";
	return NULL;
}

static const char *other_bad(const struct mtrace_pt_model *m, u32 msr, u64 val)
{
	u64 above_pa = m->pa_bits < 64 ? ~0ULL << m->pa_bits : 0;

	switch (msr) {
	case MTRACE_MSR_RTIT_STATUS:
		return val & ~MTRACE_RTIT_STATUS_WRITABLE ?
		       "STATUS write to a read-only or reserved bit" : NULL;
	case MTRACE_MSR_RTIT_OUTPUT_BASE:
		return val & (above_pa | 0x7f) ?
		       "OUTPUT_BASE with bits 6:0 or above MAXPHYADDR set" : NULL;
	case MTRACE_MSR_RTIT_CR3_MATCH:
		return val & (above_pa | 0x1f) ?
		       "CR3_MATCH with bits 4:0 or above MAXPHYADDR set" : NULL;
	case MTRACE_MSR_RTIT_OUTPUT_MASK:
		return NULL;
	default:
		return mtrace_canonical(val, m->caps->va_bits) ? NULL :
		       "ADDRn with a non-canonical address";
	}
}

int mtrace_pt_model_wrmsr(const struct mtrace_pt_model *m,
			  struct mtrace_sim_regs *r, u32 msr, u64 val,
			  const char **why)
{
	u64 *reg = mtrace_pt_model_reg(r, msr);

	*why = NULL;
	if (!reg || !msr_exists(m, msr))
		*why = "WRMSR of an RTIT MSR this CPU does not have";
	else if (msr == MTRACE_MSR_RTIT_CTL)
		*why = ctl_bad(m, r, val);
	else if (r->ctl & MTRACE_RTIT_CTL_TRACEEN)
		*why = "WRMSR of an RTIT MSR other than CTL while TraceEn=1";
	else
		*why = other_bad(m, msr, val);
	if (*why)
		return -EIO;
	*reg = val;
	return 0;
}

void mtrace_pt_model_vmx(const struct mtrace_pt_model *m,
			 struct mtrace_sim_regs *r, bool on)
{
	r->vmxon = on;
	if (on && !m->vmx_pt)
		r->ctl &= ~MTRACE_RTIT_CTL_TRACEEN;
}

#ifdef __KERNEL__
/* Part of the PT sequences (sim backend): see mtrace_cpu.c. */
NOKPROBE_SYMBOL(mtrace_pt_model_reg);
NOKPROBE_SYMBOL(mtrace_pt_model_rdmsr);
NOKPROBE_SYMBOL(mtrace_pt_model_wrmsr);
#endif
