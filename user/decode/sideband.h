/* SPDX-License-Identifier: MIT */
/*
 * Which thread ran on a CPU at a given TSC, from the bundle's
 * context-switch records.
 */
#ifndef MTRACE_DECODE_SIDEBAND_H
#define MTRACE_DECODE_SIDEBAND_H

#include "mtrace/bundle_format.h"

#include <stddef.h>
#include <stdint.h>

struct mt_task {
	uint32_t pid, tid;
};

struct mt_sideband {
	const struct mt_bundle_switch_entry *sw;	/* the records, as given */
	uint32_t *order;	/* their indexes in (cpu, tsc) order */
	size_t n;
	struct mt_task fallback;	/* when a CPU has no record at all */
};

/* Orders the N records at SW, which must outlive the sideband (records of
 * equal CPU and time keep their order: the later one wins); FALLBACK is
 * the task assumed on CPUs without records, and its pid the target
 * process (0: system-wide). Returns 0 or -ENOMEM. */
int mt_sideband_init(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n,
		     struct mt_task fallback);
void mt_sideband_fini(struct mt_sideband *sb);

/*
 * The task on CPU at TSC: the one switched in by the last record at or
 * before TSC, or, before the CPU's first record, the one that record
 * switched out.
 */
struct mt_task mt_sideband_task(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc);
/*
 * When tracing one process, the module clears TraceEn when a switch brings
 * in a task of another process (or the idle task) and sets it again, with
 * a TSC packet, when one of the target's threads comes back. So the trace
 * after a TSC packet at TSC ends before the time this returns: that of
 * CPU's first record later than TSC switching to another process.
 * UINT64_MAX if there is none, or in system-wide mode (PT stays on).
 */
uint64_t mt_sideband_trace_off(const struct mt_sideband *sb, uint32_t cpu, uint64_t tsc);
/* Whether CPU has no switch record in (FROM, TO]: its task is the same
 * all along. */
int mt_sideband_no_switch(const struct mt_sideband *sb, uint32_t cpu, uint64_t from, uint64_t to);

#endif
