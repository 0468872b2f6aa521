/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * /dev/mtrace: the ioctl and mmap ABI of the mtrace kernel module.
 *
 * Rules that hold for every ioctl below:
 * - every structure has a fixed size and layout (fixed-width types, explicit
 *   padding); the size is part of the ioctl number, so a changed structure
 *   is a new ioctl;
 * - reserved fields and padding must be zero on input (else -EINVAL) and are
 *   zero on output;
 * - unknown flag bits are rejected with -EINVAL;
 * - a call in the wrong state (see docs/kernel-module.md) fails with -EBADFD.
 *
 * MTRACE_ABI_VERSION changes whenever anything in this file changes
 * meaning; MTRACE_IOC_GET_VERSION reports the module's value.
 */
#ifndef _UAPI_LINUX_MTRACE_H
#define _UAPI_LINUX_MTRACE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MTRACE_ABI_VERSION	2
#define MTRACE_DEVICE		"/dev/mtrace"
#define MTRACE_IOC_MAGIC	0xE7

/* Ring sizes are powers of two in [MTRACE_RING_MIN, MTRACE_RING_MAX] bytes. */
#define MTRACE_RING_MIN		(4ULL << 10)
#define MTRACE_RING_MAX		(256ULL << 20)
/* Sideband rings hold a power of two of records in this range. */
#define MTRACE_SB_MIN		16U
#define MTRACE_SB_MAX		(1U << 20)
#define MTRACE_MAX_ADDR_FILTERS	4

/* ---- MTRACE_IOC_GET_VERSION ------------------------------------------- */
struct mtrace_version {
	__u32 abi_version;		/* MTRACE_ABI_VERSION of the module */
	__u32 reserved;
	char module_version[32];	/* NUL-terminated, e.g. "0.1.0" */
};

/* ---- MTRACE_IOC_GET_CAPS ---------------------------------------------- */
#define MTRACE_CAPS_SIMULATED	(1U << 0)  /* simulated backend, no real PT */
#define MTRACE_CAPS_MULTI_TOPA	(1U << 1)  /* multi-entry ToPA tables */
#define MTRACE_CAPS_KFUNC	(1U << 2)  /* mtrace_freeze kfunc registered */
#define MTRACE_CAPS_BRANCH_ON	(1U << 3)  /* BranchEn forced on (BDM106) */

/*
 * PT capabilities: raw CPUID values, intersected over all online CPUs
 * (bitmaps ANDed, counts minimised), as the decoder needs them.
 */
struct mtrace_caps {
	__u32 flags;			/* MTRACE_CAPS_* */
	__u32 nr_cpu_ids;		/* CPU numbers are below this */
	__u32 cpuid_1_eax;		/* family/model/stepping (boot CPU) */
	__u32 cpuid_14_0[4];		/* EAX EBX ECX EDX of leaf 0x14.0 */
	__u32 cpuid_14_1[4];		/* EAX EBX ECX EDX of leaf 0x14.1 */
	__u32 cpuid_15[3];		/* EAX EBX ECX of leaf 0x15 (0 if absent) */
	__u32 max_nonturbo_ratio;	/* MSR_PLATFORM_INFO[15:8] */
	__u32 tsc_khz;
	__u32 reserved0;
	__u32 reserved1;		/* explicit: no hole before the __u64 */
	__u64 max_single_region;	/* largest ring without multi-entry ToPA */
	__u64 reserved[4];
};

/* ---- MTRACE_IOC_SET_CONFIG -------------------------------------------- */
#define MTRACE_CFG_USER		(1U << 0)  /* trace CPL > 0 */
#define MTRACE_CFG_KERNEL	(1U << 1)  /* trace CPL 0; needs CAP_SYS_ADMIN */
#define MTRACE_CFG_SYSTEM_WIDE	(1U << 2)  /* every task; pid must be 0 */
#define MTRACE_CFG_TSC		(1U << 3)  /* TSC packets */
#define MTRACE_CFG_MTC		(1U << 4)  /* MTC packets every 2^mtc_freq ART ticks */
#define MTRACE_CFG_CYC		(1U << 5)  /* cycle-accurate mode, cyc_thresh */
#define MTRACE_CFG_PSB_FREQ	(1U << 6)  /* use psb_freq (else the CPU default) */
#define MTRACE_CFG_NO_RETCOMP	(1U << 7)  /* DisRETC: no RET compression */
#define MTRACE_CFG_NO_BRANCH	(1U << 8)  /* BranchEn=0 (ignored on Broadwell) */
#define MTRACE_CFG_PTWRITE	(1U << 9)  /* PTWRITE packets (+FUPonPTW) */
#define MTRACE_CFG_FLAGS_ALL	0x3ffU

#define MTRACE_FILTER_OFF	0	/* range unused */
#define MTRACE_FILTER_TRACE	1	/* trace only inside the range */
#define MTRACE_FILTER_STOP	2	/* stop tracing when entering it */

struct mtrace_addr_filter {
	__u64 start;			/* inclusive, canonical */
	__u64 end;			/* inclusive, canonical, >= start */
	__u32 action;			/* MTRACE_FILTER_* */
	__u32 reserved;
};

struct mtrace_config {
	__u32 flags;			/* MTRACE_CFG_* */
	__s32 pid;			/* target process (all its threads) */
	__u64 ring_size;		/* PT bytes per CPU, power of two */
	__u64 region_size;		/* ToPA region size; 0 = module's choice */
	__u32 sb_records;		/* sideband records per CPU, power of two */
	__u8 mtc_freq;			/* RTIT_CTL.MTCFreq encoding */
	__u8 cyc_thresh;		/* RTIT_CTL.CycThresh encoding */
	__u8 psb_freq;			/* RTIT_CTL.PSBFreq encoding */
	__u8 nr_filters;		/* used entries of filters[] */
	struct mtrace_addr_filter filters[MTRACE_MAX_ADDR_FILTERS];
	__u64 reserved[4];
};

/* ---- MTRACE_IOC_FREEZE and the trigger record ------------------------- */
#define MTRACE_PATH_KFUNC	1	/* BPF program through mtrace_freeze() */
#define MTRACE_PATH_FALLBACK	2	/* trigger seen in user space, then ioctl */
#define MTRACE_PATH_MANUAL	3	/* user request (Ctrl-C) */
#define MTRACE_PATH_EXIT	4	/* target exited */
#define MTRACE_PATH_POWER	5	/* suspend or reboot stopped the trace */

struct mtrace_freeze {
	__u32 path;			/* FALLBACK, MANUAL or EXIT */
	__u32 reserved;
	__u64 cookie;			/* stored in the trigger record */
};

struct mtrace_trigger {
	__u64 tsc;			/* TSC when the trigger won */
	__u64 ip;			/* user IP of the triggering task, or 0 */
	__u64 cookie;			/* from the kfunc or ioctl caller */
	__u32 cpu;
	__u32 pid;			/* tgid, in the initial pid namespace */
	__u32 tid;
	__u32 path;			/* MTRACE_PATH_* */
};

/* ---- MTRACE_IOC_GET_STATUS -------------------------------------------- */
#define MTRACE_STATE_IDLE	0	/* open, no configuration */
#define MTRACE_STATE_READY	1	/* configured, rings allocated */
#define MTRACE_STATE_ARMED	2	/* tracing */
#define MTRACE_STATE_FREEZING	3	/* trigger won, CPUs stopping */
#define MTRACE_STATE_FROZEN	4	/* snapshot complete, readable */

#define MTRACE_STATUS_CLOBBERED	(1U << 0)  /* some CPU's PT registers changed */
#define MTRACE_STATUS_CPU_ADDED	(1U << 1)  /* a CPU came online armed, no ring */
#define MTRACE_STATUS_SECURE_EXEC (1U << 2) /* a target exec'd a set-ID program */

struct mtrace_status {
	__u32 state;			/* MTRACE_STATE_* */
	__u32 flags;			/* MTRACE_STATUS_* (CLOBBERED: when FROZEN) */
	__u32 nr_cpus;			/* CPUs with a ring in this session */
	__u32 snapshots;		/* completed freezes since SET_CONFIG */
	__u64 ring_size;		/* per CPU, also the mmap stride */
	__u64 rtit_ctl;			/* value programmed, TraceEn clear */
	__u64 arm_tsc;			/* TSC and CLOCK_MONOTONIC ns read together */
	__u64 arm_ns;			/*   at arm time ... */
	__u64 freeze_tsc;		/*   and when the snapshot completed */
	__u64 freeze_ns;
	struct mtrace_trigger trigger;	/* valid when FROZEN */
	__u64 reserved[4];
};

/* ---- MTRACE_IOC_GET_CPU ----------------------------------------------- */
#define MTRACE_CPU_RING		(1U << 0)  /* CPU has a ring in this session */
#define MTRACE_CPU_WRAPPED	(1U << 1)  /* ring wrapped: oldest byte at offset */
#define MTRACE_CPU_CLOBBERED	(1U << 2)  /* registers not as programmed */
#define MTRACE_CPU_OFFLINED	(1U << 3)  /* CPU went offline while armed */
#define MTRACE_CPU_ERROR	(1U << 4)  /* RTIT_STATUS.Error, or a PT MSR faulted */
#define MTRACE_CPU_ADDED	(1U << 5)  /* came online while armed: no ring */
/* output_table when OUTPUT_BASE named none of the CPU's ToPA tables */
#define MTRACE_TABLE_FOREIGN	(~0ULL)

/*
 * Per-CPU snapshot. The CPU's ring is mapped at mmap_offset (cpu *
 * ring_size) of /dev/mtrace, read-only. Oldest-first data is
 * [write_offset, ring_size) followed by [0, write_offset) when WRAPPED,
 * else [0, write_offset). Every field but cpu must be zero on input.
 * A CPU that came online while armed has no ring: flags is ADDED and
 * online_tsc says from when its threads are missing.
 */
struct mtrace_cpu_info {
	__u32 cpu;			/* in */
	__u32 flags;			/* out: MTRACE_CPU_* */
	__u64 mmap_offset;
	__u64 ring_size;
	__u64 write_offset;		/* next byte the CPU would have written */
	__u64 stop_tsc;			/* TSC right after TraceEn was cleared */
	__u64 rtit_status;		/* IA32_RTIT_STATUS at freeze */
	__u64 output_table;		/* ToPA table OUTPUT_BASE named at freeze */
	__u64 output_mask_ptrs;		/* IA32_RTIT_OUTPUT_MASK_PTRS at freeze */
	__u64 sb_written;		/* sideband records written since arm */
	__u64 online_tsc;		/* ADDED: TSC when the CPU came online */
	__u64 reserved[3];
};

/* ---- MTRACE_IOC_READ_SIDEBAND ----------------------------------------- */
#define MTRACE_SB_PREV_TARGET	(1U << 0)  /* prev is a thread of the target */
#define MTRACE_SB_NEXT_TARGET	(1U << 1)  /* next is a thread of the target */
#define MTRACE_SB_PREEMPT	(1U << 2)  /* prev was preempted */
/*
 * prev (== next) exec'd a set-user-ID or otherwise non-dumpable program
 * and the configuring caller may not trace that: its trace ends here.
 */
#define MTRACE_SB_SECURE_EXEC	(1U << 3)

/* One context switch on one CPU; ids are in the initial pid namespace. */
struct mtrace_sb_record {
	__u64 tsc;
	__u32 cpu;
	__u32 flags;			/* MTRACE_SB_* */
	__u32 prev_pid, prev_tid;
	__u32 next_pid, next_tid;
};

/*
 * Copies one CPU's records oldest-first. Records are numbered from 0 at
 * arm; the ring keeps the newest sb_records of them. count: in, capacity
 * of records_ptr; out, records copied. start_seq: in, first record wanted.
 * first_seq: out, number of the first record copied (larger than
 * start_seq when older ones were overwritten; must be zero on input).
 * Read on by passing first_seq + count as the next start_seq.
 */
struct mtrace_sb_read {
	__u32 cpu;
	__u32 count;
	__u64 records_ptr;		/* struct mtrace_sb_record[count] */
	__u64 start_seq;
	__u64 first_seq;
	__u64 reserved[2];
};

/* ---- simulated backend only (-ENOTTY otherwise) ------------------------ */
/* Appends bytes to a CPU's ring as that CPU's PT hardware would. */
struct mtrace_sim_inject {
	__u32 cpu;
	__u32 reserved;
	__u64 data_ptr;
	__u64 len;			/* at most MTRACE_SIM_INJECT_MAX */
};

#define MTRACE_SIM_INJECT_MAX	(4ULL << 20)

/*
 * SET_MSR writes an emulated PT MSR as another agent (e.g. perf) would,
 * past the model's rules; GET_MSR reads one (any state, also after the
 * session). msr: 0x560, 0x561, 0x570, 0x571, 0x572 or 0x580-0x587.
 */
struct mtrace_sim_msr {
	__u32 cpu;
	__u32 msr;
	__u64 value;
};

#define MTRACE_IOC_GET_VERSION	_IOR(MTRACE_IOC_MAGIC, 0x00, struct mtrace_version)
#define MTRACE_IOC_GET_CAPS	_IOR(MTRACE_IOC_MAGIC, 0x01, struct mtrace_caps)
#define MTRACE_IOC_SET_CONFIG	_IOW(MTRACE_IOC_MAGIC, 0x02, struct mtrace_config)
#define MTRACE_IOC_ARM		_IO(MTRACE_IOC_MAGIC, 0x03)
#define MTRACE_IOC_DISARM	_IO(MTRACE_IOC_MAGIC, 0x04)
#define MTRACE_IOC_FREEZE	_IOW(MTRACE_IOC_MAGIC, 0x05, struct mtrace_freeze)
#define MTRACE_IOC_GET_STATUS	_IOR(MTRACE_IOC_MAGIC, 0x06, struct mtrace_status)
#define MTRACE_IOC_GET_CPU	_IOWR(MTRACE_IOC_MAGIC, 0x07, struct mtrace_cpu_info)
#define MTRACE_IOC_READ_SIDEBAND _IOWR(MTRACE_IOC_MAGIC, 0x08, struct mtrace_sb_read)
#define MTRACE_IOC_SIM_INJECT	_IOW(MTRACE_IOC_MAGIC, 0x40, struct mtrace_sim_inject)
#define MTRACE_IOC_SIM_SET_MSR	_IOW(MTRACE_IOC_MAGIC, 0x41, struct mtrace_sim_msr)
#define MTRACE_IOC_SIM_GET_MSR	_IOWR(MTRACE_IOC_MAGIC, 0x42, struct mtrace_sim_msr)

/*
 * BPF programs (uprobe/kprobe, kernel >= 6.2) freeze through the kfunc
 *	extern int mtrace_freeze(__u64 cookie) __ksym;
 * It returns 0 when this call froze the snapshot, -EALREADY when a freeze
 * already happened or is under way, -ENODATA when nothing is armed.
 */

#endif /* _UAPI_LINUX_MTRACE_H */
