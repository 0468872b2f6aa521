/* SPDX-License-Identifier: MIT */
/*
 * Buffered output file for the trace writer: plain or gzip (zlib). A full
 * buffer is written out by a thread of the sink's own while the next one
 * fills, so that the copy into the page cache, or gzip's compression,
 * does not hold up the thread encoding the trace (the decoder's replay).
 * A write error is reported by the next flush or by close.
 */
#ifndef MTRACE_PF_SINK_H
#define MTRACE_PF_SINK_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include "util/reporter.h"

struct pf_sink_out;

struct pf_sink {
	int fd;
	gzFile gz;		/* NULL: plain file */
	uint8_t *buf;		/* being filled */
	size_t len, cap;
	struct pf_sink_out *out;	/* the writing thread (NULL: none) */
	uint64_t total;		/* bytes accepted, before compression */
	int failed;		/* an I/O error happened; msg says which */
	char msg[160];
};

/* Creates @path; gzip at @gzip_level when it ends in ".gz"; a FIFO's wait
 * for its reader is told to @rep (may be NULL). -EIO (or -ENOMEM) with
 * msg set on failure (the sink then needs no close). */
int pf_sink_open(struct pf_sink *s, const char *path, int gzip_level,
		 const struct mt_reporter *rep);
/* Writes the buffer out; -EIO with msg set on failure. */
int pf_sink_flush(struct pf_sink *s);
/* Flushes, closes the file and frees the buffer; -EIO on any error. */
int pf_sink_close(struct pf_sink *s);
/* Slow path of pf_sink_write for blocks larger than the buffer. */
int pf_sink_write_direct(struct pf_sink *s, const void *p, size_t n);

/* Room for @n bytes at the end of the output, to fill and then pass to
 * pf_sink_commit; NULL on error. */
uint8_t *pf_sink_reserve_slow(struct pf_sink *s, size_t n);

static inline uint8_t *pf_sink_reserve(struct pf_sink *s, size_t n)
{
	if (s->cap - s->len < n)
		return pf_sink_reserve_slow(s, n);
	return s->buf + s->len;
}

static inline void pf_sink_commit(struct pf_sink *s, size_t n)
{
	s->len += n;
	s->total += n;
}

static inline int pf_sink_write(struct pf_sink *s, const void *p, size_t n)
{
	if (s->cap - s->len < n) {
		if (pf_sink_flush(s))
			return -EIO;
		if (n > s->cap)
			return pf_sink_write_direct(s, p, n);
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->total += n;
	return 0;
}

#endif
