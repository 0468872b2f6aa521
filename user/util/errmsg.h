/* SPDX-License-Identifier: MIT */
/* The caller-buffer half of the error convention (docs/development.md, Errors). */
#ifndef MTRACE_UTIL_ERRMSG_H
#define MTRACE_UTIL_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Formats a one-line message into ERR (ERRLEN bytes; may be NULL/0) and
 * returns -E, or -EIO when E is not positive (say, an errno left at 0). */
int mt_errmsg(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The same about the file NAME (may be NULL): "NAME: " first, taking at
 * most half of ERRLEN so that the message fits too. */
int mt_errmsg_in(char *err, size_t errlen, int e, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void mt_verrmsg_in(char *err, size_t errlen, const char *name, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* The errno a failed zlib gz* call stands for, from its code ZERR
 * (gzerror()'s or gzclose()'s): Z_ERRNO is a failed system call's, still
 * in errno; Z_MEM_ERROR is ENOMEM; anything else EIO. The message of the
 * Z_ERRNO case from gzerror() names zlib's "<fd:N>", not the file. */
int mt_zlib_errno(int zerr);

#endif
