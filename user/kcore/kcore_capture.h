/* SPDX-License-Identifier: MIT */
/*
 * Copying the kernel's code into a bundle at freeze time, for decoding
 * kernel-mode PT: the core text [_stext, _etext), the text of modules and of
 * BPF JIT images (grouped from their kallsyms symbols, with a page of slack
 * past the last symbol, since kallsyms gives no sizes), the module ranges,
 * and the kallsyms text itself for naming kernel frames. It must run at
 * freeze time: the kernel patches its own code (static keys, ftrace,
 * alternatives) and frees BPF images.
 */
#ifndef MTRACE_KCORE_CAPTURE_H
#define MTRACE_KCORE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "bundle/bundle.h"

struct mt_kcore_capture_opts {
	const char *kcore_path;		/* NULL: /proc/kcore */
	const char *kallsyms_path;	/* NULL: /proc/kallsyms */
};

struct mt_kcore_capture_stats {
	size_t ranges;			/* ranges written */
	size_t skipped;			/* ranges kcore could not serve (message in err) */
	uint64_t bytes;			/* code bytes written */
};

/*
 * Writes ktext sections, a modules section and the kallsyms section. Missing
 * privileges fail with the capability to grant named in err.
 */
int mt_kcore_capture(struct mt_bundle_writer *w, const struct mt_kcore_capture_opts *opts,
		     struct mt_kcore_capture_stats *stats, char *err, size_t errlen);

#endif
