/* SPDX-License-Identifier: MIT */
/*
 * Input files that never hang: "-" is standard input, and a pipe, FIFO or
 * other stream is read to its end into an anonymous memory file, so that
 * readers that map their input (bundles) work on it. A FIFO is opened
 * without blocking; while it has no writer, NOTIFY is called once (after
 * MT_INFILE_NOTIFY_MS) so the user knows what is awaited.
 */
#ifndef MTRACE_INFILE_H
#define MTRACE_INFILE_H

#include <stddef.h>
#include <stdint.h>

#define MT_INFILE_NOTIFY_MS 1000

/*
 * A descriptor of a regular file (or memory file) holding NAME's bytes,
 * at most MAX_STREAM bytes when read from a stream (0: no limit).
 * -errno with a one-line message in ERR.
 */
int mt_infile_open(const char *name, uint64_t max_stream, void (*notify)(const char *name),
		   char *err, size_t errlen);

#endif
