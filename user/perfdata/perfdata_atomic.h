/* SPDX-License-Identifier: MIT */
/*
 * perf.data and symfs outputs as stdio streams over files/outfile.h: the
 * bytes go to its temporary beside the destination, which replaces the
 * destination only when complete; a failed run leaves the old file.
 */
#ifndef MTRACE_PERFDATA_ATOMIC_H
#define MTRACE_PERFDATA_ATOMIC_H

#include "files/outfile.h"

#include <stddef.h>
#include <stdio.h>

struct pd_atomic {
	FILE *f;
	struct mt_outfile of;
};

/* Opens the temporary for PATH for writing ("wb+"). */
int pd_atomic_open(struct pd_atomic *a, const char *path, char *err, size_t errlen);
/* Flushes, closes and renames the temporary file to the destination. */
int pd_atomic_commit(struct pd_atomic *a, char *err, size_t errlen);
/* Closes and removes the temporary file (no-op after commit). */
void pd_atomic_abort(struct pd_atomic *a);
/* Writes LEN bytes to PATH atomically. */
int pd_atomic_write_file(const char *path, const void *data, size_t len, char *err,
			 size_t errlen);

#endif
