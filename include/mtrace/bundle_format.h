/* SPDX-License-Identifier: MIT */
/*
 * mtrace snapshot bundle: the on-disk layout (docs/bundle-format.md is the
 * prose specification; this header is its normative struct form).
 *
 * A bundle is a file header followed by sections and closed by an END
 * section. Every integer is little-endian; every struct here has explicit
 * padding and a fixed size (checked below), so it can be read with memcpy on
 * x86-64, the only architecture with Intel PT.
 *
 *   file header (struct mt_bundle_file_header, header_size bytes)
 *   section 0:  section header | descriptor | payload
 *   section 1:  ...
 *   END section (no payload): the number of sections before it
 *
 * Section = struct mt_bundle_shdr (shdr_size bytes), then a type-specific
 * descriptor (desc_size bytes, never compressed, covered by hdr_crc), then
 * the payload (stored_size bytes, optionally zstd-compressed, covered by
 * payload_crc). Descriptors start with their own fixed size so that later
 * versions can append fields: readers take the fields they know and ignore
 * the rest. Bytes after a descriptor's fixed part are its "tail" (used for
 * one string, e.g. the path of an embedded file).
 *
 * Table sections (context switches, maps, threads, clock anchors, modules)
 * have a descriptor starting with struct mt_bundle_table_desc; their payload
 * is `count` entries of `entry_size` bytes followed by a string pool.
 * Strings are struct mt_bundle_str references into that pool; every pool
 * item is followed by a NUL byte, so a reader can hand out C strings
 * without copying.
 *
 * Compatibility: a reader rejects a bundle whose major version is newer than
 * its own, accepts any minor version, and skips section types it does not
 * know. Writers only append fields and section types within a major version.
 */
#ifndef MTRACE_BUNDLE_FORMAT_H
#define MTRACE_BUNDLE_FORMAT_H

#include <stdint.h>

#define MT_BUNDLE_MAGIC "\x89MTRACE\n" /* 8 bytes; the high byte catches 7-bit transfers */
#define MT_BUNDLE_MAGIC_LEN 8
#define MT_BUNDLE_VERSION_MAJOR 1
#define MT_BUNDLE_VERSION_MINOR 0
#define MT_BUNDLE_SHDR_MAGIC 0x4853544dU /* "MTSH" at the start of every section */

/* Section types. Numbers are never reused. */
enum mt_bundle_section_type {
	MT_BUNDLE_SEC_CPU = 1,          /* desc: mt_bundle_cpu_desc, no payload */
	MT_BUNDLE_SEC_PT_CONFIG = 2,    /* desc: mt_bundle_pt_config_desc, no payload */
	MT_BUNDLE_SEC_PT_DATA = 3,      /* desc: mt_bundle_pt_desc; payload: PT bytes oldest first */
	MT_BUNDLE_SEC_TRIGGER = 4,      /* desc: mt_bundle_trigger_desc + tail: trigger spec text */
	MT_BUNDLE_SEC_SWITCHES = 5,     /* table of mt_bundle_switch_entry */
	MT_BUNDLE_SEC_MAPS = 6,         /* table of mt_bundle_map_entry */
	MT_BUNDLE_SEC_THREADS = 7,      /* table of mt_bundle_thread_entry */
	MT_BUNDLE_SEC_CLOCK = 8,        /* desc: mt_bundle_clock_desc; table of mt_bundle_clock_entry */
	MT_BUNDLE_SEC_FILE = 9,         /* desc: mt_bundle_file_desc + tail: path; payload: file bytes */
	MT_BUNDLE_SEC_KTEXT = 10,       /* desc: mt_bundle_ktext_desc + tail: name; payload: code bytes */
	MT_BUNDLE_SEC_KALLSYMS = 11,    /* desc: mt_bundle_blob_desc; payload: /proc/kallsyms text */
	MT_BUNDLE_SEC_MODULES = 12,     /* table of mt_bundle_module_entry */
	MT_BUNDLE_SEC_NR,               /* one past the last numbered type; never written */
	MT_BUNDLE_SEC_END = 0xffff,     /* desc: mt_bundle_end_desc, no payload; always last */
};

enum mt_bundle_compression {
	MT_BUNDLE_COMP_NONE = 0,
	MT_BUNDLE_COMP_ZSTD = 1,        /* one zstd frame holding raw_size bytes */
};

/* zstd frames use a window of at most 2^23 bytes, bounding a reader's memory. */
#define MT_BUNDLE_ZSTD_WINDOW_LOG_MAX 23

struct mt_bundle_file_header {
	char magic[MT_BUNDLE_MAGIC_LEN];
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t header_size;           /* bytes up to the first section (>= sizeof this) */
	uint64_t flags;                 /* none defined; written 0, ignored by readers */
	uint64_t created_realtime_ns;   /* CLOCK_REALTIME when the writer started */
	uint32_t reserved;              /* 0 */
	uint32_t header_crc;            /* crc32 of header_size bytes with this field 0 */
};

struct mt_bundle_shdr {
	uint32_t magic;                 /* MT_BUNDLE_SHDR_MAGIC */
	uint32_t type;                  /* enum mt_bundle_section_type */
	uint32_t shdr_size;             /* bytes of this header (>= sizeof this) */
	uint32_t desc_size;             /* bytes of descriptor after the header */
	uint16_t compression;           /* enum mt_bundle_compression */
	uint16_t flags;                 /* none defined; written 0, ignored by readers */
	uint32_t payload_crc;           /* crc32 of the stored_size stored payload bytes */
	uint64_t stored_size;           /* payload bytes in the file */
	uint64_t raw_size;              /* payload bytes after decompression */
	uint32_t hdr_crc;               /* crc32 of header (this field 0) and descriptor */
	uint32_t reserved;              /* 0 */
};

/* A string or byte string in a table's pool: pool offset and length. */
struct mt_bundle_str {
	uint32_t off;
	uint32_t len;                   /* excluding the NUL that follows text strings */
};

struct mt_bundle_table_desc {
	uint32_t size;                  /* bytes of the descriptor's fixed part */
	uint32_t entry_size;            /* bytes per entry (>= the v1 entry size) */
	uint64_t count;                 /* entries; the string pool follows them */
};

/* Sections whose descriptor has no fields of its own (KALLSYMS). */
struct mt_bundle_blob_desc {
	uint32_t size;
	uint32_t reserved;
};

/* ---- CPU identity and PT capabilities (one per bundle) ---- */
enum mt_bundle_cpu_vendor {
	MT_BUNDLE_VENDOR_UNKNOWN = 0,
	MT_BUNDLE_VENDOR_INTEL = 1,
};

struct mt_bundle_cpuid {
	uint32_t eax, ebx, ecx, edx;
};

struct mt_bundle_cpu_desc {
	uint32_t size;
	uint32_t vendor;                /* enum mt_bundle_cpu_vendor */
	uint16_t family;                /* display family (base + extended) */
	uint8_t model;                  /* display model (extended model << 4 | model) */
	uint8_t stepping;
	uint32_t nr_cpus;               /* possible CPUs on the recording machine */
	struct mt_bundle_cpuid cpuid_14_0;  /* CPUID.(EAX=14h,ECX=0) */
	struct mt_bundle_cpuid cpuid_14_1;  /* CPUID.(EAX=14h,ECX=1) */
	struct mt_bundle_cpuid cpuid_15;    /* EAX denominator, EBX numerator, ECX crystal Hz */
	uint32_t max_nonturbo_ratio;    /* MSR_PLATFORM_INFO[15:8]; libipt nom_freq */
	uint32_t reserved;
	uint64_t nominal_freq_hz;       /* nominal core frequency; 0 if unknown */
	char vendor_id[16];             /* CPUID.0 vendor string, NUL-padded */
};

/* ---- PT configuration (one per bundle) ---- */
/* IA32_RTIT_CTL fields the decoder needs (Intel SDM vol. 3C, IA32_RTIT_CTL). */
#define MT_RTIT_CTL_TRACEEN (1ULL << 0)
#define MT_RTIT_CTL_CYCEN (1ULL << 1)
#define MT_RTIT_CTL_OS (1ULL << 2)
#define MT_RTIT_CTL_USER (1ULL << 3)
#define MT_RTIT_CTL_CR3FILTER (1ULL << 7)
#define MT_RTIT_CTL_TOPA (1ULL << 8)
#define MT_RTIT_CTL_MTCEN (1ULL << 9)
#define MT_RTIT_CTL_TSCEN (1ULL << 10)
#define MT_RTIT_CTL_DISRETC (1ULL << 11)
#define MT_RTIT_CTL_PTWEN (1ULL << 12)
#define MT_RTIT_CTL_BRANCHEN (1ULL << 13)
#define MT_RTIT_CTL_EVENTEN (1ULL << 31)
#define MT_RTIT_CTL_DISTNT (1ULL << 55)
#define MT_RTIT_CTL_MTC_FREQ(ctl) ((uint32_t)(((ctl) >> 14) & 0xf))
#define MT_RTIT_CTL_CYC_THRESH(ctl) ((uint32_t)(((ctl) >> 19) & 0xf))
#define MT_RTIT_CTL_PSB_FREQ(ctl) ((uint32_t)(((ctl) >> 24) & 0xf))
#define MT_RTIT_CTL_ADDR_CFG(ctl, n) ((uint32_t)(((ctl) >> (32 + 4 * (n))) & 0xf))

#define MT_BUNDLE_MAX_ADDR_RANGES 4

struct mt_bundle_addr_range {
	uint64_t a;                     /* IA32_RTIT_ADDRn_A */
	uint64_t b;                     /* IA32_RTIT_ADDRn_B */
};

/* Capture mode flags (mt_bundle_pt_config_desc.flags). */
#define MT_BUNDLE_CFG_SYSTEM_WIDE (1U << 0)  /* all tasks, not only the target */
#define MT_BUNDLE_CFG_SIMULATED (1U << 1)    /* module's simulated backend */
#define MT_BUNDLE_CFG_GENERATED (1U << 2)    /* written by the PT generator */

struct mt_bundle_pt_config_desc {
	uint32_t size;
	uint32_t flags;                 /* MT_BUNDLE_CFG_* */
	uint64_t rtit_ctl;              /* as programmed, TraceEn set; MT_RTIT_CTL_* */
	uint64_t cr3_match;             /* IA32_RTIT_CR3_MATCH when CR3Filter is set */
	struct mt_bundle_addr_range addr[MT_BUNDLE_MAX_ADDR_RANGES]; /* ADDRn_CFG in rtit_ctl */
	uint64_t ring_size;             /* bytes of each per-CPU ring */
	uint32_t target_pid;            /* 0 in system-wide mode */
	uint32_t reserved;
};

/* ---- per-CPU PT data (one per traced CPU) ---- */
#define MT_BUNDLE_PT_WRAPPED (1U << 0)   /* the ring wrapped: oldest bytes were lost */
#define MT_BUNDLE_PT_CLOBBERED (1U << 1) /* PT registers no longer held our values */
#define MT_BUNDLE_PT_PARTIAL (1U << 2)   /* tracing was off for part of the window */
/* The CPU came online while armed and had no ring: no PT bytes, and threads
 * that ran there are missing from stop_tsc (the TSC it came online) on. */
#define MT_BUNDLE_PT_NO_RING (1U << 3)

struct mt_bundle_pt_desc {
	uint32_t size;
	uint32_t cpu;
	uint32_t flags;                 /* MT_BUNDLE_PT_* */
	uint32_t reserved;
	uint64_t stop_tsc;              /* TSC when this CPU stopped tracing */
	uint64_t rtit_status;           /* IA32_RTIT_STATUS at freeze */
	uint64_t write_offset;          /* ring write offset at freeze */
};

/* ---- trigger record (at most one per bundle) ---- */
enum mt_bundle_trigger_reason {
	MT_BUNDLE_REASON_UPROBE = 1,
	MT_BUNDLE_REASON_URETPROBE = 2,
	MT_BUNDLE_REASON_KPROBE = 3,
	MT_BUNDLE_REASON_SLOW_CALL = 4, /* an entry/return pair exceeded its threshold */
	MT_BUNDLE_REASON_USER = 5,      /* Ctrl-C or an explicit request */
	MT_BUNDLE_REASON_TARGET_EXIT = 6,
	MT_BUNDLE_REASON_GENERATOR = 7, /* the PT generator's trigger symbol */
	MT_BUNDLE_REASON_NR,            /* one past the last reason; never written */
};

/* The module's freeze path, stored as it reports it: the numbers of MTRACE_PATH_*. */
enum mt_bundle_freeze_path {
	MT_BUNDLE_FREEZE_KFUNC = 1,     /* BPF program called the module's kfunc */
	MT_BUNDLE_FREEZE_FALLBACK = 2,  /* BPF notified user space, which froze via ioctl */
	MT_BUNDLE_FREEZE_MANUAL = 3,    /* user request through the ioctl */
	MT_BUNDLE_FREEZE_EXIT = 4,      /* the target exited */
	MT_BUNDLE_FREEZE_POWER = 5,     /* suspend or reboot stopped the trace */
	MT_BUNDLE_FREEZE_NR,            /* one past the last path; never written */
};

struct mt_bundle_trigger_desc {
	uint32_t size;
	uint32_t reason;                /* enum mt_bundle_trigger_reason */
	uint32_t freeze_path;           /* enum mt_bundle_freeze_path */
	uint32_t cpu;
	uint32_t pid;
	uint32_t tid;
	uint64_t tsc;                   /* TSC of the trigger event */
	uint64_t ip;                    /* instruction pointer of the trigger */
	uint64_t freeze_tsc;            /* TSC when the trigger CPU stopped tracing */
	uint64_t skid_ns;               /* measured trigger-to-freeze delay */
	/* tail: the trigger specification as given, UTF-8, no NUL */
};

/* ---- context-switch sideband ---- */
struct mt_bundle_switch_entry {
	uint64_t tsc;
	uint32_t cpu;
	uint32_t prev_pid;              /* task switched out */
	uint32_t prev_tid;
	uint32_t next_pid;              /* task switched in */
	uint32_t next_tid;
	uint32_t flags;                 /* MT_BUNDLE_SWITCH_* */
};

#define MT_BUNDLE_SWITCH_PREEMPTED (1U << 0) /* prev was still runnable */

/* ---- process memory maps over time ---- */
#define MT_BUNDLE_PROT_READ (1U << 0)
#define MT_BUNDLE_PROT_WRITE (1U << 1)
#define MT_BUNDLE_PROT_EXEC (1U << 2)

enum mt_bundle_map_event {
	MT_BUNDLE_MAP_PRESENT = 0,      /* mapping seen in a /proc/PID/maps walk at tsc */
	MT_BUNDLE_MAP_MMAP = 1,         /* mapping created at tsc */
	MT_BUNDLE_MAP_MUNMAP = 2,       /* range unmapped at tsc */
};

struct mt_bundle_map_entry {
	uint64_t tsc;
	uint64_t start;
	uint64_t end;                   /* exclusive */
	uint64_t file_offset;
	uint32_t pid;
	uint32_t prot;                  /* MT_BUNDLE_PROT_* */
	uint32_t event;                 /* enum mt_bundle_map_event */
	uint32_t reserved;
	struct mt_bundle_str path;      /* text; "[vdso]" etc. for special maps, empty if anonymous */
	struct mt_bundle_str build_id;  /* bytes; empty if unknown */
};

/* ---- process and thread names ---- */
struct mt_bundle_thread_entry {
	uint64_t tsc;                   /* when the name was read */
	uint32_t pid;
	uint32_t tid;
	struct mt_bundle_str comm;      /* text */
	struct mt_bundle_str cmdline;   /* bytes: arguments separated by NUL; empty for threads */
};

/* ---- TSC <-> clock anchors ---- */
struct mt_bundle_clock_desc {
	struct mt_bundle_table_desc table;
	uint64_t tsc_hz;                /* TSC frequency; 0 if unknown */
	/* perf-style conversion ns = time_zero + (tsc * time_mult) >> time_shift; 0 if absent */
	uint64_t time_zero;
	uint32_t time_mult;
	uint32_t time_shift;
};

struct mt_bundle_clock_entry {
	uint64_t tsc;
	uint64_t monotonic_ns;          /* CLOCK_MONOTONIC */
	uint64_t realtime_ns;           /* CLOCK_REALTIME */
	uint64_t boottime_ns;           /* CLOCK_BOOTTIME */
};

/* ---- embedded copies of mapped files ---- */
struct mt_bundle_file_desc {
	uint32_t size;
	uint32_t build_id_len;          /* bytes used in build_id */
	uint8_t build_id[64];
	uint64_t mtime_ns;              /* of the original file; 0 if unknown */
	/* tail: the file's path, no NUL */
};

/* ---- kernel text, kallsyms, modules ---- */
struct mt_bundle_ktext_desc {
	uint32_t size;
	uint32_t reserved;
	uint64_t addr;                  /* kernel virtual address of the first byte */
	/* tail: a name for the range ("kernel", a module name, "[bpf]"), no NUL */
};

struct mt_bundle_module_entry {
	uint64_t start;                 /* text range, exclusive end */
	uint64_t end;
	struct mt_bundle_str name;      /* text */
};

struct mt_bundle_end_desc {
	uint32_t size;
	uint32_t reserved;
	uint64_t section_count;         /* sections before END */
};

/*
 * Version 1.0's sizes: the least a reader accepts. Appending a field grows a
 * struct (and its layout check below) but never these; a reader zero-fills
 * the fields a shorter, older descriptor or entry lacks, and takes only the
 * fields it knows from a longer, newer one.
 */
#define MT_BUNDLE_V1_TABLE_DESC 16
#define MT_BUNDLE_V1_BLOB_DESC 8
#define MT_BUNDLE_V1_CPU_DESC 96
#define MT_BUNDLE_V1_PT_CONFIG_DESC 104
#define MT_BUNDLE_V1_PT_DESC 40
#define MT_BUNDLE_V1_TRIGGER_DESC 56
#define MT_BUNDLE_V1_SWITCH_ENTRY 32
#define MT_BUNDLE_V1_MAP_ENTRY 64
#define MT_BUNDLE_V1_THREAD_ENTRY 32
#define MT_BUNDLE_V1_CLOCK_DESC 40
#define MT_BUNDLE_V1_CLOCK_ENTRY 32
#define MT_BUNDLE_V1_FILE_DESC 80
#define MT_BUNDLE_V1_KTEXT_DESC 16
#define MT_BUNDLE_V1_MODULE_ENTRY 24
#define MT_BUNDLE_V1_END_DESC 16

/* Layout checks: these sizes are part of the format. */
_Static_assert(sizeof(struct mt_bundle_file_header) == 40, "file header layout");
_Static_assert(sizeof(struct mt_bundle_shdr) == 48, "section header layout");
_Static_assert(sizeof(struct mt_bundle_table_desc) == 16, "table desc layout");
_Static_assert(sizeof(struct mt_bundle_cpu_desc) == 96, "cpu desc layout");
_Static_assert(sizeof(struct mt_bundle_pt_config_desc) == 104, "pt config layout");
_Static_assert(sizeof(struct mt_bundle_pt_desc) == 40, "pt desc layout");
_Static_assert(sizeof(struct mt_bundle_trigger_desc) == 56, "trigger desc layout");
_Static_assert(sizeof(struct mt_bundle_switch_entry) == 32, "switch entry layout");
_Static_assert(sizeof(struct mt_bundle_map_entry) == 64, "map entry layout");
_Static_assert(sizeof(struct mt_bundle_thread_entry) == 32, "thread entry layout");
_Static_assert(sizeof(struct mt_bundle_clock_desc) == 40, "clock desc layout");
_Static_assert(sizeof(struct mt_bundle_clock_entry) == 32, "clock entry layout");
_Static_assert(sizeof(struct mt_bundle_file_desc) == 80, "file desc layout");
_Static_assert(sizeof(struct mt_bundle_ktext_desc) == 16, "ktext desc layout");
_Static_assert(sizeof(struct mt_bundle_module_entry) == 24, "module entry layout");
_Static_assert(sizeof(struct mt_bundle_end_desc) == 16, "end desc layout");

#endif
