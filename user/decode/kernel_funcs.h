/* SPDX-License-Identifier: MIT */
/*
 * Kernel function identities for the call-stack rebuild: what a kernel
 * address resolves to, named from the bundle's kallsyms and marked as
 * kernel code by its "binary", which is "[kernel]" for the core kernel and
 * "[MODULE]" for module and BPF code (kallsyms' own notation: "[mtrace]",
 * "[bpf]").
 */
#ifndef MTRACE_DECODE_KERNEL_FUNCS_H
#define MTRACE_DECODE_KERNEL_FUNCS_H

#include "decode/funcs.h"
#include "decode/kernel_image.h"

/*
 * Fills F (name, binary, addresses; bin NULL) and FN's range for a kernel
 * IP: the function from its kallsyms symbol to the next code symbol, or the
 * unnamed rest of a copy before its first symbol. Returns false when IP is
 * not kernel code the bundle copied.
 */
bool mt_kfunc_resolve(const struct mt_kimage *ki, uint64_t ip, struct mt_func *f,
		      struct mt_cs_fn *fn);

#endif
