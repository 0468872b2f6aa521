/* SPDX-License-Identifier: MIT */
/*
 * Which thread ran on a CPU at a given TSC, from the bundle's
 * context-switch records.
 *
 * Snapshots of busy machines hold millions of switches, one per few
 * hundred bytes of PT. When each CPU's records are in time order in the
 * file (capture and the perf.data import write them so), none are held:
 * each decoding stream reads its CPU's records from the bundle as its
 * trace goes on, keeping a window around where it asks (struct
 * mt_sb_view). Tables out of order are sorted into memory instead.
 */
#ifndef MTRACE_DECODE_SIDEBAND_H
#define MTRACE_DECODE_SIDEBAND_H

#include "bundle/bundle.h"
#include "util/mt_index_map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_task {
	uint32_t pid, tid;
};

/* A record as queries see it: its time and the task it switched in. */
struct mt_sb_rec {
	uint64_t tsc;
	struct mt_task next;
};

/* One CPU's records. */
struct mt_sb_cpu {
	uint32_t cpu;
	size_t n;
	uint64_t first_tsc;		/* the earliest record's time */
	struct mt_task first_prev;	/* and the task it switched out */
	uint64_t last_tsc;		/* the last one's, in file order */
	bool unsorted;			/* not in time order in the file */
	struct mt_sb_rec *all;		/* all of them, in time order, when held */
	size_t all_cap;
};

struct mt_sideband {
	struct mt_sb_cpu *cpus;
	size_t ncpus, cpus_cap;
	struct mt_index_map cpu_ids;	/* CPU number -> index into cpus */
	/* The bundle each view reads its records from; NULL: they are held. */
	struct mt_bundle_reader *from;
	struct mt_task fallback;	/* when a CPU has no record at all */
	/* The threads of the target (of any process when system-wide) that
	 * the records switch in or out, and the fallback's: in the order
	 * first named, the only threads a decode can show. */
	uint32_t *tids;
	size_t ntids, tids_cap;
	struct mt_index_map tid_ids;
};

/* An empty sideband holding its records; FALLBACK is the task assumed on
 * CPUs without records, and its pid the target process (0: system-wide). */
void mt_sideband_init(struct mt_sideband *sb, struct mt_task fallback);
/* Takes in N records, in file order, in as many calls as it takes; then
 * mt_sideband_finish() puts each CPU's in time order (records of equal CPU
 * and time keep their file order: the later one wins). 0 or -ENOMEM. */
int mt_sideband_add(struct mt_sideband *sb, const struct mt_bundle_switch_entry *sw, size_t n);
int mt_sideband_finish(struct mt_sideband *sb);
/*
 * The bundle's records: read through once for each CPU's count and order;
 * held (as above) only when some CPU's are out of time order, else read
 * again by each view. R must outlive the sideband. 0 or a negative errno
 * with the message in ERR.
 */
int mt_sideband_open(struct mt_sideband *sb, struct mt_bundle_reader *r,
		     struct mt_task fallback, char *err, size_t errlen);
void mt_sideband_fini(struct mt_sideband *sb);

/* A CPU's records read from the bundle in order, when not held. */
struct mt_sb_reader {
	struct mt_bundle_switch_stream *ss;
	struct mt_bundle_switch_entry *step;	/* entries read, [pos, got) unused */
	size_t pos, got;
};

/*
 * One CPU's records for one user (a decoding stream), queried at times
 * that mostly grow: a query before its window starts the CPU's records
 * over (counted in rewinds). When reading the bundle fails, a view acts as
 * if the records ended there and keeps the error in err.
 */
struct mt_sb_view {
	const struct mt_sideband *sb;
	const struct mt_sb_cpu *c;	/* NULL: the CPU has no records */
	struct mt_sb_rec *recs;		/* records [base, base + n) */
	size_t n, cap;
	uint64_t base;
	struct mt_sb_reader rd;
	/*
	 * mt_sideband_trace_off()'s last answer, found by a reader of its
	 * own that only goes forward: records [off_lo, off_k) switch to the
	 * target process, record off_k (at off_tsc) does not (off_k is the
	 * CPU's count and off_tsc UINT64_MAX when none does). The next
	 * record the reader gives is off_k + 1.
	 */
	struct mt_sb_reader off_rd;
	uint64_t off_lo, off_k, off_tsc;
	bool off_known;
	uint64_t rewinds;
	int err;
};

void mt_sb_view_open(struct mt_sb_view *v, const struct mt_sideband *sb, uint32_t cpu);
void mt_sb_view_close(struct mt_sb_view *v);

/*
 * The task on the CPU at TSC: the one switched in by the last record at or
 * before TSC, or, before the CPU's first record, the one that record
 * switched out.
 */
struct mt_task mt_sideband_task(struct mt_sb_view *v, uint64_t tsc);
/*
 * The thread the trace at TSC belongs to. When one process is traced, the
 * trace runs only while one of its threads does: a time the table gives
 * to another process or the idle task (the table's times and the trace's
 * a little apart, or the simulated backend's bytes written while another
 * task ran) belongs to the nearest of the target's threads on the CPU,
 * within 64 records: the one switched out last before TSC or the one
 * switched in next after it. Otherwise, and in system-wide mode, the
 * task at TSC.
 */
struct mt_task mt_sideband_traced_task(struct mt_sb_view *v, uint64_t tsc);
/*
 * When tracing one process, the module clears TraceEn when a switch brings
 * in a task of another process (or the idle task) and sets it again, with
 * a TSC packet, when one of the target's threads comes back. So the trace
 * after a TSC packet at TSC ends before the time this returns: that of
 * the CPU's first record later than TSC switching to another process.
 * UINT64_MAX if there is none, or in system-wide mode (PT stays on).
 */
uint64_t mt_sideband_trace_off(struct mt_sb_view *v, uint64_t tsc);
/* Whether the CPU has no switch record in (FROM, TO]: its task is the same
 * all along. */
int mt_sideband_no_switch(struct mt_sb_view *v, uint64_t from, uint64_t to);

#endif
