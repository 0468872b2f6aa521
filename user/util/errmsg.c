// SPDX-License-Identifier: MIT
/* One-line messages and errnos (errmsg.h). */
#include "util/errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <zlib.h>

int mt_errmsg(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	/* A failure must never read as success, whatever errno said. */
	return e > 0 ? -e : -EIO;
}

int mt_zlib_errno(int zerr)
{
	if (zerr == Z_ERRNO)
		return errno ? errno : EIO;
	return zerr == Z_MEM_ERROR ? ENOMEM : EIO;
}

void mt_verrmsg_in(char *err, size_t errlen, const char *name, const char *fmt, va_list ap)
{
	int n;

	if (!err || !errlen)
		return;
	n = name ? snprintf(err, errlen, "%.*s: ", (int)(errlen / 2), name) : 0;
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}

int mt_errmsg_in(char *err, size_t errlen, int e, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mt_verrmsg_in(err, errlen, name, fmt, ap);
	va_end(ap);
	return e > 0 ? -e : -EIO;
}
