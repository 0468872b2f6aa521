/* SPDX-License-Identifier: MIT */
/* The library's one-line error convention, shared by files/ and its users. */
#ifndef MTRACE_FILES_ERRMSG_H
#define MTRACE_FILES_ERRMSG_H

#include <stddef.h>

/* Formats a one-line message into ERR (ERRLEN bytes); returns -E. */
int mt_errmsg(char *err, size_t errlen, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
