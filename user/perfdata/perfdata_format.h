/* SPDX-License-Identifier: MIT */
/*
 * The perf.data layout mtrace reads and writes (tools/perf/Documentation/
 * perf.data-file-format.txt; the record bodies of the kernel's
 * include/uapi/linux/perf_event.h and of perf's own user records). Only
 * what Intel PT recordings use is here. Little-endian, 8-byte aligned.
 *
 *   file header | attr ids | attrs | data (records) | feature table | features
 *
 * Every sideband record written or read here carries the sample_id trailer
 * of PERFDATA_SAMPLE_TYPE (sample_id_all): {pid, tid} time {cpu, res} id.
 */
#ifndef MTRACE_PERFDATA_FORMAT_H
#define MTRACE_PERFDATA_FORMAT_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PERFDATA_MAGIC "PERFILE2"

/*
 * perf_event_attr as perf 6.1 expects it: PERF_ATTR_SIZE_VER7. perf 6.1
 * rejects files whose attrs are larger than its own struct (136 bytes from
 * newer headers: "incompatible file format"), so the size is fixed here.
 */
#define PERFDATA_ATTR_SIZE PERF_ATTR_SIZE_VER7
_Static_assert(sizeof(struct perf_event_attr) >= PERFDATA_ATTR_SIZE, "perf_event_attr too old");

struct perfdata_section {
	uint64_t offset;
	uint64_t size;
};

struct perfdata_file_header {
	char magic[8];
	uint64_t size;                  /* sizeof this */
	uint64_t attr_size;             /* bytes per attrs entry: attr + ids section */
	struct perfdata_section attrs;
	struct perfdata_section data;
	struct perfdata_section event_types; /* unused since perf 2.6.x; 0 */
	uint64_t features[4];           /* bit N: feature section N present */
};
_Static_assert(sizeof(struct perfdata_file_header) == 104, "perf file header");

/* Feature bits (tools/perf/util/header.h). */
enum {
	PERFDATA_FEAT_BUILD_ID = 2,
	PERFDATA_FEAT_ARCH = 6,
	PERFDATA_FEAT_NRCPUS = 7,
	PERFDATA_FEAT_CPUID = 9,
	PERFDATA_FEAT_EVENT_DESC = 12,
	PERFDATA_FEAT_AUXTRACE = 18,
	PERFDATA_FEAT_DIR_FORMAT = 24,  /* perf record --threads: data.N files too */
};

/* Strings in feature sections: u32 length (padded to this), then bytes. */
#define PERFDATA_NAME_ALIGN 64

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
enum {
	PERFDATA_REC_USER_TYPE_START = 64, /* kernel records are below */
	PERFDATA_REC_HEADER_BUILD_ID = 67,
	PERFDATA_REC_FINISHED_ROUND = 68,
	PERFDATA_REC_ID_INDEX = 69,
	PERFDATA_REC_AUXTRACE_INFO = 70,
	PERFDATA_REC_AUXTRACE = 71,
	PERFDATA_REC_AUXTRACE_ERROR = 72,
	PERFDATA_REC_THREAD_MAP = 73,
	PERFDATA_REC_CPU_MAP = 74,
	PERFDATA_REC_EVENT_UPDATE = 78,
	PERFDATA_REC_TIME_CONV = 79,
	PERFDATA_REC_HEADER_FEATURE = 80,
	PERFDATA_REC_COMPRESSED = 81,
	PERFDATA_REC_FINISHED_INIT = 82,
};

/* What every attr written here samples, and so what every trailer holds. */
#define PERFDATA_SAMPLE_TYPE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_IDENTIFIER)

struct perfdata_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

/* PERF_RECORD_AUXTRACE_INFO, Intel PT: auxtrace type and priv[] slots
 * (tools/perf/util/intel-pt.h). */
#define PERFDATA_AUXTRACE_INTEL_PT 1
enum {
	PERFDATA_PT_PMU_TYPE,
	PERFDATA_PT_TIME_SHIFT,
	PERFDATA_PT_TIME_MULT,
	PERFDATA_PT_TIME_ZERO,
	PERFDATA_PT_CAP_USER_TIME_ZERO,
	PERFDATA_PT_TSC_BIT,
	PERFDATA_PT_NORETCOMP_BIT,
	PERFDATA_PT_HAVE_SCHED_SWITCH,
	PERFDATA_PT_SNAPSHOT_MODE,
	PERFDATA_PT_PER_CPU_MMAPS,
	PERFDATA_PT_MTC_BIT,
	PERFDATA_PT_MTC_FREQ_BITS,
	PERFDATA_PT_TSC_CTC_N,
	PERFDATA_PT_TSC_CTC_D,
	PERFDATA_PT_CYC_BIT,
	PERFDATA_PT_MAX_NONTURBO_RATIO,
	PERFDATA_PT_FILTER_STR_LEN,
	PERFDATA_PT_PRIV_MAX,
};
/* perf reads these first ones unconditionally. */
#define PERFDATA_PT_PRIV_MIN (PERFDATA_PT_PER_CPU_MMAPS + 1)

/* have_sched_switch: 3 = context_switch records on a CPU-wide attr. */
#define PERFDATA_PT_SWITCH_CPU_WIDE 3

/*
 * The intel_pt PMU's config bits (the kernel's arch/x86/events/intel/pt.c
 * format attributes) sit where RTIT_CTL has the same fields: pt, cyc,
 * pwr_evt, fup_on_ptw, mtc to branch, mtc_period, cyc_thresh, psb_period,
 * event and notnt.
 */
#define PERFDATA_PT_CONFIG_MASK \
	((1ULL << 0) | (1ULL << 1) | (1ULL << 4) | (1ULL << 5) | (0x1fULL << 9) | \
	 (0xfULL << 14) | (0xfULL << 19) | (0xfULL << 24) | (1ULL << 31) | (1ULL << 55))

struct perfdata_auxtrace_info {
	struct perf_event_header header;
	uint32_t type;
	uint32_t reserved;
	/* uint64_t priv[] */
};

struct perfdata_auxtrace {
	struct perf_event_header header; /* size excludes the payload */
	uint64_t size;                  /* payload bytes that follow */
	uint64_t offset;                /* position in the AUX area */
	uint64_t reference;             /* non-zero: perf uses the TSC */
	uint32_t idx;                   /* mmap index */
	uint32_t tid;                   /* per-thread buffers; -1 per CPU */
	uint32_t cpu;
	uint32_t reserved;
};
_Static_assert(sizeof(struct perfdata_auxtrace) == 48, "auxtrace record");

struct perfdata_time_conv {
	struct perf_event_header header;
	uint64_t time_shift;
	uint64_t time_mult;
	uint64_t time_zero;
	uint64_t time_cycles;
	uint64_t time_mask;
	uint8_t cap_user_time_zero;
	uint8_t cap_user_time_short;
	uint8_t reserved[6];
};

/* Build-id feature entries; pid -1 is the host (any other is a guest). */
struct perfdata_build_id {
	struct perf_event_header header; /* misc: cpumode | PERF_RECORD_MISC_BUILD_ID_SIZE */
	int32_t pid;
	uint8_t data[20];
	uint8_t size;
	uint8_t reserved1;
	uint16_t reserved2;
	/* char filename[], NUL-padded to a multiple of PERFDATA_NAME_ALIGN */
};
_Static_assert(sizeof(struct perfdata_build_id) == 36, "build-id record");

#define PERFDATA_BUILD_ID_MAX 20
/* Build-id entry misc bit: the size byte is valid (perf's header.c). */
#define PERFDATA_MISC_BUILD_ID_SIZE (1U << 15)

/* PERF_RECORD_MMAP2 body before the file name (the build-id form). */
struct perfdata_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[PERFDATA_BUILD_ID_MAX];
		};
	};
	uint32_t prot, flags;
	/* char filename[], NUL-padded to 8, then the sample_id trailer */
};
_Static_assert(sizeof(struct perfdata_mmap2) == 72, "mmap2 record");

#endif
