// SPDX-License-Identifier: MIT
/*
 * Layout of every structure and ioctl number of include/uapi/linux/mtrace.h
 * as one ABI sees it. Compiled to assembly only (-m64, -m32, -mx32; no
 * libraries of those ABIs needed), each value lands in an .ascii line that
 * tests/unit/rules.mk turns into a header for test_uapi_layout.c.
 */
#include <stddef.h>

#include "uapi/linux/mtrace.h"

#define EMIT(fmt, ...) __asm__ volatile(".ascii \"\\n" fmt "\\n\"" :: __VA_ARGS__)
#define M(s, m) EMIT("MT_MEMBER(" #s ", " #m ", %c0, %c1)", \
		     "i"((int)offsetof(struct s, m)), "i"((int)sizeof(((struct s *)0)->m)))
#define S(s) EMIT("MT_STRUCT(" #s ", %c0)", "i"((int)sizeof(struct s)))
/* In two halves: x32 refuses an "i" operand with bit 31 set. */
#define IOC(n) EMIT("MT_IOC(" #n ", %c0 * 0x10000UL + %c1)", \
		    "i"((int)((n) >> 16)), "i"((int)((n) & 0xffff)))

void layout(void);

void layout(void)
{
	S(mtrace_version);
	M(mtrace_version, abi_version); M(mtrace_version, reserved);
	M(mtrace_version, module_version);
	S(mtrace_caps);
	M(mtrace_caps, flags); M(mtrace_caps, nr_cpu_ids); M(mtrace_caps, cpuid_1_eax);
	M(mtrace_caps, cpuid_14_0); M(mtrace_caps, cpuid_14_1); M(mtrace_caps, cpuid_15);
	M(mtrace_caps, max_nonturbo_ratio); M(mtrace_caps, tsc_khz);
	M(mtrace_caps, reserved0); M(mtrace_caps, reserved1);
	M(mtrace_caps, max_single_region); M(mtrace_caps, reserved);
	S(mtrace_addr_filter);
	M(mtrace_addr_filter, start); M(mtrace_addr_filter, end);
	M(mtrace_addr_filter, action); M(mtrace_addr_filter, reserved);
	S(mtrace_config);
	M(mtrace_config, flags); M(mtrace_config, pid); M(mtrace_config, ring_size);
	M(mtrace_config, region_size); M(mtrace_config, sb_records);
	M(mtrace_config, mtc_freq); M(mtrace_config, cyc_thresh);
	M(mtrace_config, psb_freq); M(mtrace_config, nr_filters);
	M(mtrace_config, filters); M(mtrace_config, reserved);
	S(mtrace_freeze);
	M(mtrace_freeze, path); M(mtrace_freeze, reserved); M(mtrace_freeze, cookie);
	S(mtrace_trigger);
	M(mtrace_trigger, tsc); M(mtrace_trigger, ip); M(mtrace_trigger, cookie);
	M(mtrace_trigger, cpu); M(mtrace_trigger, pid); M(mtrace_trigger, tid);
	M(mtrace_trigger, path);
	S(mtrace_status);
	M(mtrace_status, state); M(mtrace_status, flags); M(mtrace_status, nr_cpus);
	M(mtrace_status, snapshots); M(mtrace_status, ring_size);
	M(mtrace_status, rtit_ctl); M(mtrace_status, arm_tsc); M(mtrace_status, arm_ns);
	M(mtrace_status, freeze_tsc); M(mtrace_status, freeze_ns);
	M(mtrace_status, trigger); M(mtrace_status, reserved);
	S(mtrace_cpu_info);
	M(mtrace_cpu_info, cpu); M(mtrace_cpu_info, flags);
	M(mtrace_cpu_info, mmap_offset); M(mtrace_cpu_info, ring_size);
	M(mtrace_cpu_info, write_offset); M(mtrace_cpu_info, stop_tsc);
	M(mtrace_cpu_info, rtit_status); M(mtrace_cpu_info, output_table);
	M(mtrace_cpu_info, output_mask_ptrs); M(mtrace_cpu_info, sb_written);
	M(mtrace_cpu_info, online_tsc); M(mtrace_cpu_info, reserved);
	S(mtrace_sb_record);
	M(mtrace_sb_record, tsc); M(mtrace_sb_record, cpu); M(mtrace_sb_record, flags);
	M(mtrace_sb_record, prev_pid); M(mtrace_sb_record, prev_tid);
	M(mtrace_sb_record, next_pid); M(mtrace_sb_record, next_tid);
	S(mtrace_sb_read);
	M(mtrace_sb_read, cpu); M(mtrace_sb_read, count); M(mtrace_sb_read, records_ptr);
	M(mtrace_sb_read, start_seq); M(mtrace_sb_read, first_seq);
	M(mtrace_sb_read, reserved);
	S(mtrace_sim_inject);
	M(mtrace_sim_inject, cpu); M(mtrace_sim_inject, reserved);
	M(mtrace_sim_inject, data_ptr); M(mtrace_sim_inject, len);
	S(mtrace_sim_msr);
	M(mtrace_sim_msr, cpu); M(mtrace_sim_msr, msr); M(mtrace_sim_msr, value);
	IOC(MTRACE_IOC_GET_VERSION); IOC(MTRACE_IOC_GET_CAPS);
	IOC(MTRACE_IOC_SET_CONFIG); IOC(MTRACE_IOC_ARM); IOC(MTRACE_IOC_DISARM);
	IOC(MTRACE_IOC_FREEZE); IOC(MTRACE_IOC_GET_STATUS); IOC(MTRACE_IOC_GET_CPU);
	IOC(MTRACE_IOC_READ_SIDEBAND); IOC(MTRACE_IOC_SIM_INJECT);
	IOC(MTRACE_IOC_SIM_SET_MSR); IOC(MTRACE_IOC_SIM_GET_MSR);
}
