/* SPDX-License-Identifier: MIT */
/*
 * Capture: run or attach to a target, arm the mtrace module, wait for the
 * snapshot (trigger, Ctrl-C, target exit) and write it as a bundle.
 *
 * Errors are one-line messages written into a caller buffer of
 * MT_CAPTURE_ERRLEN bytes, with a negative errno as the return value.
 * Progress, notes and warnings go to the caller's reporter
 * (util/reporter.h); nothing here prints.
 */
#ifndef MTRACE_CAPTURE_H
#define MTRACE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uapi/linux/mtrace.h"
#include "util/reporter.h"

#define MT_CAPTURE_ERRLEN 4096
#define MT_CAPTURE_DEFAULT_OUTPUT "trace.mtrace"
#define MT_CAPTURE_DEFAULT_BUFFER (4ULL << 20)
#define MT_CAPTURE_DEFAULT_SB_RECORDS 8192U
#define MT_CAPTURE_MAX_SNAPSHOTS 10000U

/* Timing presets, from least to most timing packets. */
enum mt_timing {
	MT_TIMING_LOW,     /* TSC + MTC: about 1 us resolution, longest lookback */
	MT_TIMING_NORMAL,  /* + CYC packets: cycle-accurate between branches */
	MT_TIMING_HIGH,    /* + no RET compression: every return timed */
};

/* What the user asked for; -1 in the *_freq/thresh fields means "unset". */
struct mt_capture_opts {
	const char *output;             /* bundle path (suffixed -N with several snapshots) */
	uint64_t buffer_size;           /* PT bytes per CPU */
	int kernel;                     /* trace CPL 0 as well */
	int system_wide;
	pid_t pid;                      /* -p; 0 when launching or system-wide */
	char **argv;                    /* -- CMD ARGS; NULL otherwise */
	unsigned int snapshots;         /* freezes to take before stopping */
	enum mt_timing timing;
	int mtc_freq;                   /* RTIT_CTL.MTCFreq encoding */
	int cyc_thresh;                 /* RTIT_CTL.CycThresh encoding (--cyc[=N]) */
	int psb_freq;                   /* RTIT_CTL.PSBFreq encoding */
	int no_retcomp;
	int embed;                      /* copy mapped executables into the bundle */
	const char **triggers;          /* --trigger specs */
	size_t nr_triggers;
	int freeze;                     /* enum mt_trigger_freeze_pref (--freeze) */
	int quiet;
	int temporary_bundles;          /* removed after decoding: summaries do not name them */
	const char *trace_output;       /* the top-level form's traces, never an input either */
	int dry_run;                    /* check and print the plan; touch nothing */
};

void mt_capture_opts_init(struct mt_capture_opts *o);

/*
 * "4096", "64K", "4M", "1G" (binary units, optional trailing "iB"/"B") to
 * bytes. -EINVAL with a message on anything else or on overflow.
 */
int mt_capture_parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen);
/* A decimal integer in [min, max]; `what` names the option in the message. */
int mt_capture_parse_uint(const char *s, const char *what, long min, long max, long *out,
			  char *err, size_t errlen);
/* "low", "normal", "high". */
int mt_capture_parse_timing(const char *s, enum mt_timing *t, char *err, size_t errlen);

/*
 * Checks what can be checked without the module: target choice, buffer
 * size bounds and power of two, snapshot count, option conflicts.
 */
int mt_capture_opts_check(const struct mt_capture_opts *o, char *err, size_t errlen);

/*
 * Builds the module configuration for the options and this machine's PT
 * capabilities. An explicitly requested timing feature the CPU lacks is an
 * error naming the option and the supported values; a preset quietly drops
 * what the CPU lacks and says so in `note` (empty when nothing was dropped).
 * cfg->pid is left 0 (the target is known only later).
 */
int mt_capture_build_config(const struct mt_capture_opts *o, const struct mtrace_caps *caps,
			    struct mtrace_config *cfg, char *note, size_t notelen,
			    char *err, size_t errlen);

/* Output path of snapshot `index` (1-based) out of `total`: "a.mtrace" -> "a-2.mtrace". */
int mt_capture_output_path(const char *base, unsigned int index, unsigned int total,
			   char *out, size_t outlen);

/*
 * The whole `record` workflow. *taken is the number of bundles written (1
 * to o->snapshots, also after an error; 0 after a dry run). Every trigger,
 * the target and the output are checked (capture_preflight.h) before the
 * device is opened or the target started. Messages go to REP (the dry
 * run's plan too, as INFO lines even with o->quiet).
 *
 * While it runs, SIGINT, SIGTERM, SIGHUP, SIGCHLD and SIGUSR1 are blocked
 * and read from a signalfd; on return the caller's signal mask is back and
 * those that arrived meanwhile are consumed (they were meant for the capture).
 *
 * Returns 0, or with the message in ERR:
 *   -EINVAL   the options, a trigger or the target are wrong: nothing was done
 *   -ENODATA  the capture ran but took no snapshot
 *   -EIO      the capture failed (*taken bundles were written before)
 */
int mt_capture_record(const struct mt_capture_opts *o, const struct mt_reporter *rep,
		      unsigned int *taken, char *err, size_t errlen);

#endif
