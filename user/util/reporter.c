// SPDX-License-Identifier: MIT
/* Messages through a caller's reporter (reporter.h). */
#include "util/reporter.h"

#include <stdarg.h>
#include <stdio.h>

void mt_report(const struct mt_reporter *r, enum mt_severity sev, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	if (!r || !r->report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->report(r->ctx, sev, msg);
}
