/* SPDX-License-Identifier: MIT */
/*
 * Collection: turns one frozen snapshot of the module into a bundle file
 * (CPU identity, PT configuration, per-CPU rings oldest first, trigger
 * record, sideband, maps with build-ids, threads, clock anchors, the
 * mapped executables with --embed, kernel code and symbols with --kernel).
 */
#ifndef MTRACE_CAPTURE_COLLECT_H
#define MTRACE_CAPTURE_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bundle/bundle.h"
#include "capture/capture.h"

struct mt_thread_list;
#include "capture/capture_dev.h"
#include "trigger/trigger.h"

/* A TSC value and the clocks read around it in user space. */
int mt_capture_clock_anchor(struct mt_bundle_clock_entry *a);

struct mt_collect_in {
	struct mt_dev *dev;
	const struct mt_capture_opts *opts;
	pid_t pid;                      /* target; 0 system-wide */
	int maps_readable;              /* the target's /proc entry still describes it */
	const struct mt_trigger_spec *specs; /* the --trigger specs; the cookie indexes them */
	size_t nspecs;
	/*
	 * The module records the caller of the freeze ioctl; user-space paths
	 * know better: the trigger record (fallback) or the exiting thread.
	 */
	const struct mt_trig_event *event; /* fallback: the BPF trigger record */
	pid_t exit_tid;                 /* exit: the thread that ended the process */
	const struct mt_thread_list *seen; /* the target's threads seen while armed */
	struct mt_bundle_clock_entry arm_anchor; /* user-space anchor taken at arm */
	const struct mt_reporter *rep;  /* told of a wait for a FIFO's reader */
};

/* What was written, for the summary line. */
struct mt_collect_out {
	uint32_t path;                  /* MTRACE_PATH_* */
	uint32_t cpus;                  /* CPUs with a ring */
	uint64_t pt_bytes;
	uint64_t switches, sb_lost;
	size_t maps, threads, files;
	int64_t skid_ns_max;            /* largest stop TSC - trigger TSC over CPUs, in ns */
	int64_t skid_ns_trigger_cpu;    /* the same on the triggering CPU; -1 if it had no ring */
	int clobbered;
	uint64_t ktext_bytes;           /* --kernel: kernel code copied from /proc/kcore */
	char warning[MT_CAPTURE_ERRLEN]; /* something the bundle lacks, or "" */
	char kept[4096 + 8];            /* the older bundle of that name, now PATH.old; or "" */
};

int mt_capture_collect(const struct mt_collect_in *in, const char *path,
		       struct mt_collect_out *out, char *err, size_t errlen);

/* The bundle's trigger record for the module's status after a freeze (no I/O). */
void mt_collect_trigger(const struct mt_collect_in *in, const struct mtrace_status *st,
			const struct mt_collect_out *out, struct mt_bundle_trigger *trig);

#endif
