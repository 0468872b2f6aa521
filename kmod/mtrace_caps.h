/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PT capability detection from CPUID values and the translation of a user
 * configuration into MTRACE_RTIT_CTL/ADDRn values, validated against those
 * capabilities. Pure logic: no hardware access, also built in user space.
 */
#ifndef MTRACE_CAPS_H
#define MTRACE_CAPS_H

#include "mtrace_types.h"
#include <uapi/linux/mtrace.h>

/* CPUID values as read on one CPU. */
struct mtrace_cpuid {
	u32 max_leaf;		/* leaf 0 EAX */
	u32 vendor[3];		/* leaf 0 EBX EDX ECX */
	u32 leaf1_eax;
	u32 leaf7_ebx;		/* leaf 7.0 EBX */
	u32 c14_0[4];
	u32 c14_1[4];
	u32 c15[3];
};

struct mtrace_pt_caps {
	u32 leaf1_eax;
	u32 c14_0[4];
	u32 c14_1[4];
	u32 c15[3];
	bool multi_topa;
	bool branch_always_on;	/* erratum BDM106 */
	/*
	 * Linear-address width for the canonical checks of the address
	 * ranges: 48, or 57 with 5-level paging. Not in leaf 0x14, so the
	 * caller sets it (the kernel: boot_cpu_data.x86_virt_bits, as perf's
	 * pt_event_addr_filters_sync() does); 48 by default.
	 */
	u8 va_bits;
};

/* MTRACE_RTIT_CTL (TraceEn clear) and the address-range MSRs for a configuration. */
struct mtrace_pt_program {
	u64 ctl;
	u64 addr[2 * MTRACE_MAX_ADDR_FILTERS];
	u64 region_size;
};

/* The CPU of the simulated backend. */
extern const struct mtrace_cpuid mtrace_sim_cpuid;

/* Bits [63:bits-1] all equal; bits is 48, or 57 with 5-level paging. */
static inline bool mtrace_canonical(u64 addr, u8 bits)
{
	u64 top = addr >> (bits - 1);

	return top == 0 || top == (~0ULL >> (bits - 1));
}

int mtrace_caps_from_cpuid(const struct mtrace_cpuid *id,
			   struct mtrace_pt_caps *caps, const char **why);
int mtrace_caps_intersect(struct mtrace_pt_caps *acc,
			  const struct mtrace_pt_caps *other, const char **why);
int mtrace_config_encode(const struct mtrace_config *cfg,
			 const struct mtrace_pt_caps *caps,
			 u64 max_single_region, struct mtrace_pt_program *out);

#endif /* MTRACE_CAPS_H */
