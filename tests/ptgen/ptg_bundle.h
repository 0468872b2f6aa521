/* SPDX-License-Identifier: MIT */
/*
 * Writes a generated trace as a snapshot bundle (libmtrace's bundle
 * writer): CPU identity and PT configuration matching the generator's
 * settings, each virtual CPU's ring, the trigger, the context-switch
 * sideband, the process maps with build-ids, thread names and clock
 * anchors. The vDSO is always embedded (no file holds it); other mapped
 * files on request.
 */
#ifndef PTG_BUNDLE_H
#define PTG_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "mtrace/bundle_format.h"
#include "ptg_gen.h"
#include "ptg_trace.h"

struct ptg_bundle_opts {
	const char *trigger_spec;	/* text for the trigger record, or NULL */
	uint32_t reason;		/* enum mt_bundle_trigger_reason without a trigger hit */
	uint32_t freeze_path;		/* enum mt_bundle_freeze_path without a trigger hit */
	bool embed_files;		/* embed every mapped file */
	/* Kernel walk: the bundle whose kernel text and kallsyms were walked.
	 * They are copied and CPL 0 is traced; the image's user-space
	 * segments, if any, are the process maps, and CPL 3 is traced too. */
	const char *kernel_from;
};

int ptg_bundle_write(const char *path, const struct ptg_run *run, const struct ptg_gen *g,
		     const struct ptg_bundle_opts *o);

#endif
