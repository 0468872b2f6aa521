/* SPDX-License-Identifier: MIT */
/*
 * How a library function speaks without printing: progress, notes and
 * warnings go to a reporter the caller passes in; errors are returned.
 * Messages are one line, with no program name and no newline; the caller
 * (user/cli/) decides where and how they appear.
 */
#ifndef MTRACE_UTIL_REPORTER_H
#define MTRACE_UTIL_REPORTER_H

#include <stdarg.h>

enum mt_severity {
	MT_SEV_INFO,		/* progress */
	MT_SEV_NOTE,		/* something the user may want to know */
	MT_SEV_WARNING,		/* the work goes on, with less than asked for */
	MT_SEV_NR,
};

/* At most this many of a list of like messages (mappings without code,
 * binaries not embedded, ...) are told one by one; "... and N more" counts
 * the rest, which would bury everything else on a terminal. */
#define MT_REPORT_LIST 8

struct mt_reporter {
	void (*report)(void *ctx, enum mt_severity sev, const char *msg);
	void *ctx;
};

/* Formats one message and hands it to R; a NULL R (or R->report) drops it. */
void mt_report(const struct mt_reporter *r, enum mt_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mt_vreport(const struct mt_reporter *r, enum mt_severity sev, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
