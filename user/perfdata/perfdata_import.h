/* SPDX-License-Identifier: MIT */
/*
 * A perf.data file recorded with `perf record -e intel_pt//` (per-CPU or
 * per-thread AUX buffers, full or --snapshot) as a snapshot bundle, so
 * that mtrace's decoder and Perfetto output work on perf's recordings
 * (docs/perf-interop.md): the PT bytes of every CPU (or thread), the
 * context switches, thread names, executable mappings with build-ids, the
 * TSC conversion, and copies of binaries found in perf's build-id cache or
 * a --symfs directory that the local file system lacks.
 */
#ifndef MTRACE_PERFDATA_IMPORT_H
#define MTRACE_PERFDATA_IMPORT_H

#include "bundle/bundle.h"
#include "perfdata/perfdata_reader.h"
#include "util/reporter.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why perf's build-id cache was not searched for a binary (or the kernel)
 * the recording gives no build-id: the cache names its copies by build-id. */
#define PERFDATA_NO_BUILD_ID \
	"no build-id was recorded for it, so perf's build-id cache could not be searched"

struct perfdata_import_opts {
	const char *symfs;              /* directory prefixed to map paths; may be NULL */
	const char *buildid_dir;        /* perf's build-id cache; NULL: $HOME/.debug */
	const char *kcore_dir;          /* kernel code (perf record --kcore); may be NULL */
	/* A warning for each binary that is neither here (in the recorded
	 * build) nor found to embed, for the first MT_REPORT_LIST of them,
	 * then one counting the rest; may be NULL. */
	const struct mt_reporter *rep;
};

struct perfdata_import_stats {
	size_t streams, pt_bytes, threads, maps, switches, embedded;
	size_t lost, truncated_aux, dropped_snapshots;
	size_t kernel_ranges;           /* kernel, module and BPF text copied in */
	uint64_t kernel_bytes;
	bool per_thread, snapshot;
	char warning[512];              /* the first problem worth telling; empty if none */
};

/* Whether the file at PATH starts with perf.data's magic. */
bool perfdata_is_perf_data(const char *path);

/*
 * Writes the bundle OUT (atomically) from the perf.data F, which messages
 * call NAME. Returns 0 or a negative errno with ERR set, naming the file
 * at fault: NAME for a problem of the perf.data, OUT for one of writing.
 */
int perfdata_import(struct perfdata_file *f, const char *name, const char *out,
		    const struct perfdata_import_opts *opts, struct perfdata_import_stats *st,
		    char *err, size_t errlen);

/*
 * Imports the perf.data at PATH (a file, or a perf.data directory with its
 * kcore_dir) into a temporary bundle and opens it (the
 * file is removed at once; the reader keeps it mapped). Messages name PATH.
 */
int perfdata_import_open(const char *path, const struct perfdata_import_opts *opts,
			 struct mt_bundle_reader **r, struct perfdata_import_stats *st, char *err,
			 size_t errlen);

#endif
