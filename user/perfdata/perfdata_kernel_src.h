/* SPDX-License-Identifier: MIT */
/*
 * Where the kernel code of a perf.data recording comes from when it is
 * imported: the kcore_dir of a `perf record --kcore` directory, else the
 * copy `perf buildid-cache --kcore` keeps under the kernel's build-id
 * (BUILDID_DIR/[kernel.kcore]/BUILDID/TIMESTAMP/), checked against the
 * recording's relocation reference as perf does. Anything else (the
 * recording machine's /proc/kcore, a vmlinux, kallsyms alone) holds no
 * copy of the code as it ran, and the message says which it was.
 */
#ifndef MTRACE_PERFDATA_KERNEL_SRC_H
#define MTRACE_PERFDATA_KERNEL_SRC_H

#include "bundle/bundle.h"
#include "perfdata/perfdata_format.h"

#include <stddef.h>
#include <stdint.h>

/* What the recording says about its kernel. */
struct perfdata_kernel_map {
	char name[256];         /* the kernel map record's name: "[kernel.kallsyms]_text", ... */
	uint64_t ref_addr;      /* its pgoff: the reference symbol's address */
	char bid_name[256];     /* the BUILD_ID feature's kernel entry: "[kernel.kallsyms]", a path */
	uint8_t bid[PERFDATA_BUILD_ID_MAX];
	size_t bid_len;
};

/*
 * The kcore_dir to import into OUT: KCORE_DIR when given (may be NULL or
 * empty), else a build-id cache copy under BUILDID_DIR. Returns 1 when
 * found, 0 with WHY saying why kernel code is unavailable.
 */
int perfdata_kernel_source(const struct perfdata_kernel_map *km, const char *kcore_dir,
			   const char *buildid_dir, char *out, size_t outlen, char *why,
			   size_t whylen);

/*
 * Copies the kernel, module and BPF text of the kcore_dir DIR into the
 * bundle W (as a capture does: user/kcore/kcore_capture.h). Returns the
 * number of ranges written (WHY set when some kallsyms ranges were not in
 * kcore), 0 with WHY when DIR is unusable (no code was written), or a
 * negative errno with ERR set when the bundle cannot be written.
 */
int perfdata_import_kcore(struct mt_bundle_writer *w, const char *dir, uint64_t *bytes,
			  char *why, size_t whylen, char *err, size_t errlen);

#endif
