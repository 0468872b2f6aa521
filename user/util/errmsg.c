// SPDX-License-Identifier: MIT
/* mt_errmsg(), mt_zlib_errno() (errmsg.h). */
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
