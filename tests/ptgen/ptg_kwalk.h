/* SPDX-License-Identifier: MIT */
/*
 * Kernel mode of the random walk: the image is a bundle's kernel text
 * copies (core kernel, modules, BPF JIT images, as mt_kcore_capture() took
 * them from /proc/kcore) and the indirect-branch targets are the kallsyms
 * code symbols inside them. The walk itself and the packet rules are the
 * user-mode ones (ptg_walk.c, ptg_gen.c): with tracing of CPL 0 only, the
 * kernel's entries and exits are the same TIP.PGE / TIP.PGD pairs that
 * user-only tracing produces around system calls, mirrored.
 */
#ifndef PTG_KWALK_H
#define PTG_KWALK_H

#include <stddef.h>
#include <stdint.h>

#include "bundle/bundle.h"
#include "ptg_image.h"

/*
 * Adds @bundle's kernel text to @img (empty, or user code only): one
 * executable segment per copy, named after it. The sorted, distinct entries
 * of the code symbols that lie in it go to @funcs. -errno with a message
 * on stderr; @img is then freed.
 */
int ptg_kwalk_load(const char *bundle, struct ptg_image *img, uint64_t **funcs, size_t *n);

/* The addresses of the @n kernel symbols @names in @bundle's kallsyms,
 * read and parsed once; -ENOENT (with a message) for one it lacks. */
int ptg_kwalk_symbols(const char *bundle, const char *const *names, uint64_t *addrs, size_t n);

/* Copies @bundle's kernel text, modules table and kallsyms into @w. */
int ptg_kwalk_copy_kernel(struct mt_bundle_writer *w, const char *bundle);

#endif
