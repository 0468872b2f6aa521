/* SPDX-License-Identifier: MIT */
/*
 * Everything `record` can check before it opens the device or starts the
 * target, so that a typo never costs the event: each trigger resolved
 * (file, symbol, offset; kprobes: the kernel's support and the function),
 * the command found, the process alive, the outputs distinct from every
 * input, their directory writable with room for the worst-case bundle.
 * The same facts are the plan `--dry-run` prints.
 */
#ifndef MTRACE_CAPTURE_PREFLIGHT_H
#define MTRACE_CAPTURE_PREFLIGHT_H

#include "capture/capture.h"
#include "trigger/trigger.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct mt_preflight_probe {
	uint64_t link_addr, file_offset;	/* uprobe kinds */
};

struct mt_preflight {
	char command[PATH_MAX];			/* where -- CMD runs from */
	struct mt_preflight_probe probes[MT_TRIG_MAX_SPECS];
	uint64_t worst_case;			/* bytes one snapshot may need */
	uint64_t free_bytes;			/* in the output's directory */
	bool room_known;			/* free_bytes was read (not a device or pipe) */
	unsigned int cpus;
	char note[PATH_MAX + 128];		/* not room for every snapshot: a warning */
};

/* Where the kernel's kprobe support and symbols are looked up (tests use others). */
struct mt_preflight_env {
	const char *kprobe_pmu;		/* default /sys/bus/event_source/devices/kprobe */
	const char *kallsyms;		/* default /proc/kallsyms */
};

/*
 * 0, or -errno with a one-line message. *usage is set when the command
 * line contradicts itself (an output that is one of its inputs: exit 2),
 * clear when something named does not exist or does not fit (a trigger's
 * file or symbol, the command, the process, room for the bundle: exit 1,
 * as when the device reports a problem).
 */
int mt_capture_preflight(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
			 size_t n, const struct mt_preflight_env *env, struct mt_preflight *out,
			 int *usage, char *err, size_t errlen);

/* What would be traced and where each probe lands (--dry-run): INFO lines to REP. */
void mt_capture_print_plan(const struct mt_capture_opts *o, const struct mt_trigger_spec *specs,
			   size_t n, const struct mt_preflight *p, const struct mt_reporter *rep);

#endif
