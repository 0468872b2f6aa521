/* SPDX-License-Identifier: MIT */
/*
 * A snapshot bundle as a perf.data file that stock `perf script` and
 * `perf report` decode with perf's own Intel PT decoder (docs/perf-interop.md):
 * the PT bytes of every CPU, the context-switch sideband, thread names and
 * executable mappings with build-ids, and the code perf needs (embedded or
 * local binaries, the traced vDSO) written into a directory for --symfs.
 */
#ifndef MTRACE_PERFDATA_EXPORT_H
#define MTRACE_PERFDATA_EXPORT_H

#include "bundle/bundle.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The PMU type written for the PT event (any number; perf only matches it). */
#define PERFDATA_EXPORT_PT_TYPE 8

/* The file name a bundle's vDSO gets, under the symfs directory. */
#define PERFDATA_EXPORT_VDSO_DIR "/mtrace-vdso/"

struct perfdata_export_opts {
	const char *symfs;      /* directory for the binaries; NULL: OUT.symfs */
	bool kcore;             /* OUT is a directory as perf record --kcore writes */
	const char *bundle;     /* the bundle's file, never written over; may be NULL */
	const char *name;       /* what messages call the bundle; may be NULL */
};

struct perfdata_export_stats {
	size_t cpus, pt_bytes, threads, maps, switches, binaries;
	bool kernel;            /* kernel text written as a vmlinux: perf needs --vmlinux */
	bool kcore;             /* kernel text written to OUT/kcore_dir */
	size_t kernel_ranges, modules, bpf_ranges; /* with kcore: what kcore_dir holds */
	char symfs[4096];       /* the directory the binaries went to (absolute with kernel) */
	char vmlinux[4200];     /* with kernel: the file for perf's --vmlinux */
	char warning[512];      /* binaries perf will not find; empty if none */
};

/* Whether OUT can take the export (a directory with KCORE): 0, or -errno
 * and why in ERR. perfdata_export() checks it too; a caller checks first
 * to refuse before any work. */
int perfdata_export_check_out(const char *out, bool kcore, char *err, size_t errlen);

/*
 * Writes OUT from the bundle R: a perf.data file, or with opts->kcore a
 * perf.data directory (OUT/data, OUT/kcore_dir; perfdata_dir.h) whose
 * kcore_dir holds the bundle's kernel, module and BPF text. Returns 0 or a
 * negative errno with ERR set.
 */
int perfdata_export(struct mt_bundle_reader *r, const char *out,
		    const struct perfdata_export_opts *opts, struct perfdata_export_stats *st,
		    char *err, size_t errlen);

/*
 * TSC to perf time: ns = zero + (tsc >> shift) * mult + (((tsc & mask) * mult) >> shift),
 * mask = 2^shift - 1 (perf's tsc.c). From the bundle's clock section.
 */
struct perfdata_tsc_conv {
	uint32_t shift, mult;
	uint64_t zero;
};

void perfdata_tsc_conv_from_bundle(struct mt_bundle_reader *r, struct perfdata_tsc_conv *c);
uint64_t perfdata_tsc_to_ns(const struct perfdata_tsc_conv *c, uint64_t tsc);

#endif
