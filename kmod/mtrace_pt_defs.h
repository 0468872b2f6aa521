/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Intel PT architectural definitions (Intel SDM Vol. 3C, "Intel Processor
 * Trace": CPUID leaf 0x14, the IA32_RTIT_* MSRs and the ToPA entry format).
 */
#ifndef MTRACE_PT_DEFS_H
#define MTRACE_PT_DEFS_H

#include "mtrace_types.h"

#define MTRACE_MSR_PLATFORM_INFO	0x000000ce
#define MTRACE_MSR_RTIT_OUTPUT_BASE	0x00000560
#define MTRACE_MSR_RTIT_OUTPUT_MASK	0x00000561
#define MTRACE_MSR_RTIT_CTL		0x00000570
#define MTRACE_MSR_RTIT_STATUS		0x00000571
#define MTRACE_MSR_RTIT_CR3_MATCH	0x00000572
#define MTRACE_MSR_RTIT_ADDR0_A		0x00000580
#define MTRACE_MSR_VMX_MISC		0x00000485
/* IA32_VMX_MISC[14]: PT may be used in VMX operation (SDM "Tracing post-VMXON") */
#define MTRACE_VMX_MISC_PT		BIT_ULL(14)

/* IA32_RTIT_CTL */
#define MTRACE_RTIT_CTL_TRACEEN		BIT_ULL(0)
#define MTRACE_RTIT_CTL_CYCEN			BIT_ULL(1)
#define MTRACE_RTIT_CTL_OS			BIT_ULL(2)
#define MTRACE_RTIT_CTL_USR			BIT_ULL(3)
#define MTRACE_RTIT_CTL_PWR_EVT_EN		BIT_ULL(4)
#define MTRACE_RTIT_CTL_FUP_ON_PTW		BIT_ULL(5)
#define MTRACE_RTIT_CTL_FABRIC_EN		BIT_ULL(6)
#define MTRACE_RTIT_CTL_CR3_FILTER		BIT_ULL(7)
#define MTRACE_RTIT_CTL_TOPA			BIT_ULL(8)
#define MTRACE_RTIT_CTL_MTC_EN			BIT_ULL(9)
#define MTRACE_RTIT_CTL_TSC_EN			BIT_ULL(10)
#define MTRACE_RTIT_CTL_DISRETC		BIT_ULL(11)
#define MTRACE_RTIT_CTL_PTW_EN			BIT_ULL(12)
#define MTRACE_RTIT_CTL_BRANCH_EN		BIT_ULL(13)
#define MTRACE_RTIT_CTL_MTC_FREQ_SHIFT		14
#define MTRACE_RTIT_CTL_CYC_THRESH_SHIFT	19
#define MTRACE_RTIT_CTL_PSB_FREQ_SHIFT		24
#define MTRACE_RTIT_CTL_ADDR_CFG_SHIFT(n)	(32 + 4 * (n))
#define MTRACE_RTIT_CTL_FIELD_MASK		0xfULL	/* MTCFreq, CycThresh, PSBFreq, ADDRn_CFG */

/* IA32_RTIT_STATUS */
#define MTRACE_RTIT_STATUS_ERROR		BIT_ULL(4)
#define MTRACE_RTIT_STATUS_STOPPED		BIT_ULL(5)
/* Software may write only Error, Stopped and PacketByteCnt[48:32]. */
#define MTRACE_RTIT_STATUS_WRITABLE		(MTRACE_RTIT_STATUS_ERROR | \
						 MTRACE_RTIT_STATUS_STOPPED | \
						 (0x1ffffULL << 32))

/* IA32_RTIT_OUTPUT_MASK_PTRS in ToPA mode */
#define MTRACE_RTIT_MASK_LOWER			0x7fULL
#define MTRACE_RTIT_MASK_IDX_SHIFT		7
#define MTRACE_RTIT_MASK_IDX_MASK		0xffffff80ULL
#define MTRACE_RTIT_MASK_OFF_SHIFT		32

/* CPUID leaf 0x14 sub-leaf 0 */
#define MT_PT_CAP_CR3_FILTER		BIT(0)	/* EBX */
#define MT_PT_CAP_PSB_CYC			BIT(1)	/* EBX */
#define MT_PT_CAP_IP_FILTER		BIT(2)	/* EBX */
#define MT_PT_CAP_MTC			BIT(3)	/* EBX */
#define MT_PT_CAP_PTWRITE			BIT(4)	/* EBX */
#define MT_PT_CAP_PWR_EVT			BIT(5)	/* EBX */
#define MT_PT_CAP_TOPA			BIT(0)	/* ECX */
#define MT_PT_CAP_TOPA_MULTI		BIT(1)	/* ECX */
#define MT_PT_CAP_SINGLE_RANGE		BIT(2)	/* ECX */
#define MT_PT_CAP_OUTPUT_SUBSYS		BIT(3)	/* ECX */
#define MT_PT_CAP_LIP			BIT(31)	/* ECX */
/* CPUID leaf 0x14 sub-leaf 1 */
#define MT_PT_CAP_NR_RANGES_MASK		0x7U	/* EAX[2:0] */

/* ToPA table entry */
#define MT_TOPA_END			BIT_ULL(0)
#define MT_TOPA_INT			BIT_ULL(2)
#define MT_TOPA_STOP			BIT_ULL(4)
#define MT_TOPA_SIZE_SHIFT			6
#define MT_TOPA_SIZE_MASK			(0xfULL << MT_TOPA_SIZE_SHIFT)
#define MT_TOPA_BASE_MASK			(~0xfffULL)
#define MT_TOPA_PAGE_SIZE			4096ULL
/* One table fills one 4 KiB page: 511 output entries and the END link. */
#define MT_TOPA_TABLE_ENTRIES		512U
#define MT_TOPA_REGION_MIN			(4ULL << 10)
#define MT_TOPA_REGION_MAX			(128ULL << 20)

#endif /* MTRACE_PT_DEFS_H */
