/* SPDX-License-Identifier: MIT */
/*
 * Output files written atomically: the bytes go to a temporary file in the
 * destination's directory, renamed over the destination only when complete,
 * so a reader never sees half a file and a failed run leaves the old one.
 */
#ifndef MTRACE_PERFDATA_ATOMIC_H
#define MTRACE_PERFDATA_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

struct pd_atomic {
	FILE *f;
	char *path;     /* destination */
	char *tmp;      /* the temporary file while open */
};

/* Opens a temporary file next to PATH for writing ("wb+"). */
int pd_atomic_open(struct pd_atomic *a, const char *path, char *err, size_t errlen);
/* Flushes, closes and renames the temporary file to the destination. */
int pd_atomic_commit(struct pd_atomic *a, char *err, size_t errlen);
/* Closes and removes the temporary file (no-op after commit). */
void pd_atomic_abort(struct pd_atomic *a);
/* Writes LEN bytes to PATH atomically. */
int pd_atomic_write_file(const char *path, const void *data, size_t len, char *err,
			 size_t errlen);

#endif
