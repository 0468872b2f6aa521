// SPDX-License-Identifier: MIT
/* Messages through a caller's reporter (reporter.h). */
#include "util/reporter.h"

#include <stdarg.h>
#include <stdio.h>

void mt_vreport(const struct mt_reporter *r, enum mt_severity sev, const char *fmt, va_list ap)
{
	char msg[4096];

	if (!r || !r->report)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	r->report(r->ctx, sev, msg);
}

void mt_report(const struct mt_reporter *r, enum mt_severity sev, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mt_vreport(r, sev, fmt, ap);
	va_end(ap);
}
