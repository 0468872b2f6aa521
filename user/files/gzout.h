/* SPDX-License-Identifier: MIT */
/*
 * Outputs written through stdio (text dumps, SVG) that are gzip-compressed
 * when their name asks for it (mt_gz_named()), as the Perfetto writer's
 * are, and that count what they were given.
 */
#ifndef MTRACE_FILES_GZOUT_H
#define MTRACE_FILES_GZOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/reporter.h"

/* PATH opened for writing, through zlib (gzip, the fast level the trace
 * writer uses too) when GZIP. *WRITTEN counts the bytes written through
 * the stream (before compression: the "wrote" line's second size) and
 * must outlive it. A FIFO's wait for its reader is told to REP (may be
 * NULL; util/regfile.h). fclose() flushes and says whether every write
 * and the close went well. NULL with errno set. */
FILE *mt_fopen_write(const char *path, bool gzip, uint64_t *written,
		     const struct mt_reporter *rep);

#endif
