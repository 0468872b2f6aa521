/* SPDX-License-Identifier: MIT */
/*
 * A CPU's PT stream as the block decoder reads it: front to back, one
 * window of it in memory at a time, so that decoding a stream takes memory
 * for a window, not for the stream. Two kinds: a buffer already in memory
 * (tests, fuzzing) and a bundle's stream, decompressed as it is read.
 */
#ifndef MTRACE_DECODE_PTSOURCE_H
#define MTRACE_DECODE_PTSOURCE_H

#include "bundle/bundle.h"

#include <stddef.h>
#include <stdint.h>

struct mt_pt_source {
	/*
	 * Bytes [BEGIN, END) of the stream, contiguous: fewer at its end
	 * (*GOT says how many). The window replaces the previous one; a BEGIN
	 * before the previous window's reads the stream from the start again.
	 * NULL when the stream cannot be read.
	 */
	const uint8_t *(*window)(void *ctx, uint64_t begin, uint64_t end, size_t *got);
	uint64_t size;
	void *ctx;
};

struct mt_pt_buffer {
	struct mt_pt_source src;
	const uint8_t *p;
};

void mt_pt_buffer_init(struct mt_pt_buffer *b, const uint8_t *p, size_t len);

struct mt_pt_reader {
	struct mt_pt_source src;
	struct mt_bundle_reader *r;
	size_t index;
	struct mt_bundle_stream *st;
	uint8_t *buf;		/* stream bytes [base, base + len) */
	size_t cap, len;
	uint64_t base;
	int err;		/* negative errno of the first read error */
	char errmsg[256];
};

/* Stream I of R, SIZE bytes (its descriptor's); nothing is read yet. */
void mt_pt_reader_init(struct mt_pt_reader *pr, struct mt_bundle_reader *r, size_t i,
		       uint64_t size);
void mt_pt_reader_fini(struct mt_pt_reader *pr);

#endif
