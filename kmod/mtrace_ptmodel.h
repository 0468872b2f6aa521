/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A strict model of the RTIT MSRs for the simulated backend and the unit
 * tests: every write the SDM says faults (Vol. 3C, "Intel Processor
 * Trace": IA32_RTIT_* descriptions and "Tracing post-VMXON") fails here
 * with -EIO, the equivalent of #GP, and a reason. Pure logic, also built
 * in user space.
 */
#ifndef MTRACE_PTMODEL_H
#define MTRACE_PTMODEL_H

#include "mtrace_caps.h"
#include "mtrace_topa.h"

/* The CPU being modelled. */
struct mtrace_pt_model {
	const struct mtrace_pt_caps *caps;
	bool vmx_pt;		/* IA32_VMX_MISC[14]: PT usable post-VMXON */
	u8 pa_bits;		/* MAXPHYADDR */
	/*
	 * Memory as the CPU sees it, for the TraceEn=1 check: OUTPUT_BASE
	 * must name a ToPA table and the entry at the output pointer an
	 * output region. (Hardware reports a bad table as an operational
	 * error once tracing; the model faults at once, so that a pointer
	 * to freed memory can never go unnoticed.) NULL: memory of another
	 * agent, whose output is not checked.
	 */
	const struct mtrace_topa_mem *mem;
};

int mtrace_pt_model_rdmsr(const struct mtrace_pt_model *m,
			  const struct mtrace_sim_regs *r, u32 msr, u64 *val,
			  const char **why);
int mtrace_pt_model_wrmsr(const struct mtrace_pt_model *m,
			  struct mtrace_sim_regs *r, u32 msr, u64 val,
			  const char **why);
/* VMXON/VMXOFF: without VMX_MISC[14], VMXON clears TraceEn. */
void mtrace_pt_model_vmx(const struct mtrace_pt_model *m,
			 struct mtrace_sim_regs *r, bool on);
/* The register behind an RTIT MSR number, or NULL; no rules applied. */
u64 *mtrace_pt_model_reg(struct mtrace_sim_regs *r, u32 msr);

#endif /* MTRACE_PTMODEL_H */
