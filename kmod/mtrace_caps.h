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
};

/* MTRACE_RTIT_CTL (TraceEn clear) and the address-range MSRs for a configuration. */
struct mtrace_pt_program {
	u64 ctl;
	u64 addr[2 * MTRACE_MAX_ADDR_FILTERS];
	u64 region_size;
};

int mtrace_caps_from_cpuid(const struct mtrace_cpuid *id,
			   struct mtrace_pt_caps *caps, const char **why);
int mtrace_caps_intersect(struct mtrace_pt_caps *acc,
			  const struct mtrace_pt_caps *other, const char **why);
int mtrace_config_encode(const struct mtrace_config *cfg,
			 const struct mtrace_pt_caps *caps,
			 u64 max_single_region, struct mtrace_pt_program *out);

#endif /* MTRACE_CAPS_H */
