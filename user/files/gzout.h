/* SPDX-License-Identifier: MIT */
/*
 * Outputs written through stdio (text dumps, SVG) that are gzip-compressed
 * when their name asks for it (mt_gz_named()), as the Perfetto writer's are.
 */
#ifndef MTRACE_FILES_GZOUT_H
#define MTRACE_FILES_GZOUT_H

#include <stdbool.h>
#include <stdio.h>

/* PATH opened for writing, through zlib (gzip, the fast level the trace
 * writer uses too) when GZIP. fclose() flushes and says whether every
 * write and the close went well. NULL with errno set. */
FILE *mt_fopen_write(const char *path, bool gzip);

#endif
