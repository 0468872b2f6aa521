/* SPDX-License-Identifier: MIT */
/*
 * perf.data directories, as `perf record --kcore` writes them: DIR/data is
 * the perf.data file, DIR/kcore_dir the kernel code (perfdata_kcore.h).
 * perf script and perf report accept DIR wherever a perf.data file goes.
 *
 * Writing one is atomic like every output: the directory is built under a
 * temporary name beside DIR and put in place once complete; a perf.data
 * directory already there is exchanged with it (renameat2) and removed.
 */
#ifndef MTRACE_PERFDATA_DIR_H
#define MTRACE_PERFDATA_DIR_H

#include "perfdata/perfdata_reader.h"

#include <limits.h>
#include <stddef.h>

struct perfdata_dir {
	char path[PATH_MAX];    /* the destination */
	char tmp[PATH_MAX];     /* where it is built */
};

/*
 * Whether a perf.data directory can be put at PATH: -EEXIST when PATH
 * exists and is not one (only data and kcore_dir with kcore, kallsyms,
 * modules: nothing of the user's is ever removed), -EINVAL when it is the
 * working directory or holds it, or is named with a final /.
 */
int perfdata_dir_check(const char *path, char *err, size_t errlen);
/* perfdata_dir_check(), then creates the temporary directory. */
int perfdata_dir_begin(struct perfdata_dir *d, const char *path, char *err, size_t errlen);
int perfdata_dir_commit(struct perfdata_dir *d, char *err, size_t errlen);
void perfdata_dir_abort(struct perfdata_dir *d);

/*
 * Opens the perf.data at PATH: a file, or a directory's DIR/data; then
 * KCORE_DIR is DIR/kcore_dir when that exists, else empty.
 */
int perfdata_open_input(struct perfdata_file *f, const char *path, char *kcore_dir,
			size_t kcore_dir_len);

/* The perf.data file PATH names (itself, or DIR/data). */
void perfdata_data_path(const char *path, char *out, size_t len);

/* Files a perf.data directory holds: data and kcore_dir's three. */
#define PERFDATA_DIR_FILES 4

/*
 * The files PATH stands for: the perf.data directory's own files when PATH
 * is a directory (whether each exists or not), else PATH alone. Returns
 * how many were written to OUT. Outputs are checked against these: an
 * output must neither replace an input read from inside a directory nor,
 * when it is such a directory, replace what is read from it.
 */
size_t perfdata_dir_files(const char *path, char out[PERFDATA_DIR_FILES][PATH_MAX]);

#endif
