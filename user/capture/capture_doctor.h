/* SPDX-License-Identifier: MIT */
/*
 * `mtrace-user doctor`: every prerequisite of a capture, each checked on
 * this machine and reported with what to do when it is missing.
 */
#ifndef MTRACE_CAPTURE_DOCTOR_H
#define MTRACE_CAPTURE_DOCTOR_H

#include <stddef.h>

enum mt_check_status {
	MT_CHECK_OK,
	MT_CHECK_INFO,                  /* a fact worth knowing, never a problem */
	MT_CHECK_WARN,                  /* an optional feature (e.g. --kernel) will not work */
	MT_CHECK_FAIL,                  /* a capture cannot work */
};

struct mt_check {
	const char *name;
	enum mt_check_status status;
	char detail[320];
	char fix[320];                  /* empty when nothing is to be done */
};

typedef void (*mt_check_report)(const struct mt_check *c, void *ctx);

/* Runs every check; returns the number of MT_CHECK_FAIL results. */
int mt_doctor_run(mt_check_report report, void *ctx);
/*
 * The same with the kernel's files (/proc, /sys) looked up under FS_ROOT,
 * for tests on a faked machine; the CPU, the device and this process's
 * capabilities are still the real ones.
 */
int mt_doctor_run_at(const char *fs_root, mt_check_report report, void *ctx);

/* Pure parts, exposed for tests. */
/* The freeze path a kernel version allows: "kfunc (kprobe hook)", ... */
const char *mt_doctor_freeze_path(int major, int minor);
/*
 * The verdict on this CPU's PT from its CPUID facts: MT_CHECK_OK with the
 * model, or MT_CHECK_FAIL with the reason and what would work instead.
 */
enum mt_check_status mt_doctor_cpu_verdict(const char *vendor_id, const char *model_name,
					   int has_pt, int hypervisor, char *detail, size_t len);

#endif
