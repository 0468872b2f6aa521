/* SPDX-License-Identifier: MIT */
/*
 * The core kernel text a --kernel bundle copied, as a vmlinux-like ELF file
 * for `perf script --vmlinux`: one executable .text section (and PT_LOAD)
 * at the text's kernel address, and the bundle's kallsyms code symbols of
 * the core kernel as its symbol table. perf reads kernel instructions from
 * it by section offset, the way it reads a real vmlinux.
 */
#ifndef MTRACE_PERFDATA_VMLINUX_H
#define MTRACE_PERFDATA_VMLINUX_H

#include "bundle/bundle.h"

#include <stddef.h>
#include <stdint.h>

/* The name of the file under the symfs directory (perf joins it to --symfs). */
#define PERFDATA_VMLINUX_NAME "mtrace-vmlinux"

struct perfdata_kernel_text {
	uint64_t addr, size;    /* the core kernel text range written */
	size_t nsyms;
};

/*
 * Writes PATH from R's kernel text named "kernel" and its kallsyms. Returns
 * 1 when written, 0 when the bundle has no core kernel text, or a negative
 * errno with ERR set.
 */
int perfdata_write_vmlinux(struct mt_bundle_reader *r, const char *path,
			   struct perfdata_kernel_text *kt, char *err, size_t errlen);

#endif
