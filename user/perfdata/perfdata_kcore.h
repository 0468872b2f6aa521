/* SPDX-License-Identifier: MIT */
/*
 * A bundle's kernel code as the kcore_dir of `perf record --kcore`: the
 * directory perf script reads kernel, module and BPF JIT code from when
 * the perf.data is a directory (DIR/data plus DIR/kcore_dir). It holds
 *   kcore     an ELF core file, one PT_LOAD (R+X) per ktext copy at its
 *             kernel address, as perf's own copy of /proc/kcore is;
 *   kallsyms  the bundle's kallsyms text (module and [bpf] symbols too);
 *   modules   the bundle's module table in /proc/modules form, which perf
 *             checks its module maps against.
 */
#ifndef MTRACE_PERFDATA_KCORE_H
#define MTRACE_PERFDATA_KCORE_H

#include "bundle/bundle.h"

#include <stddef.h>
#include <stdint.h>

#define PERFDATA_KCORE_DIR "kcore_dir"

struct perfdata_kcore_info {
	uint64_t core_addr, core_size;  /* the core kernel text ("kernel" copy) */
	const char *ref_sym;            /* "_text" or "_stext": perf's relocation reference */
	uint64_t ref_addr;
	size_t ranges, modules, bpf_ranges;
	uint64_t bytes;
};

/*
 * Writes DIR (created) from R's kernel text, kallsyms and modules. Returns
 * 1 when written, 0 when the bundle has no kernel text, or a negative errno
 * with ERR set.
 */
int perfdata_write_kcore_dir(struct mt_bundle_reader *r, const char *dir,
			     struct perfdata_kcore_info *ki, char *err, size_t errlen);

#endif
