/* SPDX-License-Identifier: MIT */
/*
 * Input files that never hang: "-" is standard input, and a pipe or FIFO
 * (standard input may be any stream) is read to its end into an anonymous
 * memory file, so that readers that map their input (bundles) work on it.
 * A FIFO is opened without blocking; while it has no writer, NOTIFY is
 * called once (after MT_INFILE_NOTIFY_MS) so the user knows what is
 * awaited. A named device or socket is refused without being opened
 * (util/regfile.h).
 */
#ifndef MTRACE_INFILE_H
#define MTRACE_INFILE_H

#include <stddef.h>
#include <stdint.h>

#define MT_INFILE_NOTIFY_MS 1000

/* The bytes a stream must begin with: checked as soon as they have
 * arrived, so that a stream of something else (/dev/zero piped in, a log
 * piped by mistake) is refused at once instead of being held to its end. */
struct mt_infile_magic {
	const void *bytes;
	size_t len;		/* at most MT_INFILE_MAGIC_MAX */
	const char *what;	/* named in the error: "an mtrace bundle" */
	/* What a stream with other first bytes (LEN of them at HEAD) is, and
	 * what to do with it, when it can tell; NULL: it cannot (or no
	 * function). Added to the error. */
	const char *(*instead)(const uint8_t *head, size_t len);
};

#define MT_INFILE_MAGIC_MAX 16

/*
 * A descriptor of a regular file (or memory file) holding NAME's bytes,
 * at most MAX_STREAM bytes when read from a stream (0: no limit), which
 * must begin with MAGIC (NULL: anything). A regular file is left to its
 * reader, which reads its header anyway, unless MAGIC's instead() names
 * what it is. -errno with a one-line message
 * in ERR.
 */
int mt_infile_open(const char *name, uint64_t max_stream, const struct mt_infile_magic *magic,
		   void (*notify)(const char *name), char *err, size_t errlen);

#endif
