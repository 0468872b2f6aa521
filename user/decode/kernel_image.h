/* SPDX-License-Identifier: MIT */
/*
 * The kernel as the decoder sees it, from a bundle's kernel text copies and
 * kallsyms: libipt sections for the core kernel, module and BPF JIT code,
 * and the names of kernel functions ("[mtrace]" and "[bpf]" ones included).
 *
 * The copies become image sections through the decoder's section cache, not
 * through an image read callback: the block decoder reads the last
 * instruction of each block by section id (pt_iscache_read), which a
 * callback cannot serve, and libipt 2.0.5 only adds sections from files. So
 * all copies are written back to back into one memfd, opened by libipt as
 * /proc/self/fd/N; each copy is one section at its kernel address.
 */
#ifndef MTRACE_DECODE_KERNEL_IMAGE_H
#define MTRACE_DECODE_KERNEL_IMAGE_H

#include "bundle/bundle.h"
#include "kcore/kallsyms.h"

#include <intel-pt.h>
#include <stdbool.h>

struct mt_krange {
	uint64_t start, end;	/* kernel addresses, end exclusive */
	const char *name;	/* "kernel", a module name or "bpf" (reader-owned) */
	char *label;		/* "[kernel]", "[MODULE]", "[bpf]": the frames' binary */
	uint64_t offset;	/* of its copy in the memfd */
};

struct mt_kimage {
	struct mt_krange *ranges;	/* sorted by start */
	size_t nranges;
	struct mt_ksyms syms;		/* empty without a kallsyms section */
	int memfd;			/* every copy, back to back (with ranges) */
	char path[32];			/* the memfd's, for libipt */
};

/*
 * Loads the bundle's kernel text into ISCACHE and parses its kallsyms. A
 * bundle without kernel text gives an empty image (0). Errors: a negative
 * errno with a message (-EBADMSG: corrupt kallsyms, overlapping copies;
 * -ENOMEM; the reader's errors). A zeroed
 * struct is an empty image too: mt_kimage_fini() accepts it.
 */
int mt_kimage_load(struct mt_kimage *ki, struct mt_bundle_reader *r,
		   struct pt_image_section_cache *iscache, char *err, size_t errlen);
void mt_kimage_fini(struct mt_kimage *ki);

/* Adds every kernel section to IMG through ISCACHE (each process's image, or a
 * decoding thread's copy of it). 0, or -ENOMEM. */
int mt_kimage_add_to(const struct mt_kimage *ki, struct pt_image_section_cache *iscache,
		     struct pt_image *img);

/* Whether IP is a kernel address (the upper canonical half on x86-64). */
bool mt_kimage_is_kernel_ip(uint64_t ip);

/* The copied range holding IP, or NULL. */
const struct mt_krange *mt_kimage_range(const struct mt_kimage *ki, uint64_t ip);

/*
 * The kernel function holding IP: the last code symbol at or below it, if
 * IP was copied and the symbol lies in the same copy (kallsyms has no
 * sizes; this keeps a hole after a module's last function unnamed). NULL
 * otherwise.
 */
const struct mt_ksym *mt_kimage_symbol(const struct mt_kimage *ki, uint64_t ip);

#endif
