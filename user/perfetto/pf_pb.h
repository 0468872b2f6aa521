/* SPDX-License-Identifier: MIT */
/*
 * Append-only protobuf encoder for the Perfetto writer.
 *
 * Hand-written rather than protobuf-c or nanopb: every message the writer
 * emits is a handful of fields of known shape, mostly under 128 bytes, and a
 * descriptor-driven library sizes and packs each of tens of millions of
 * events in two passes. Here each field is appended once; a nested message
 * reserves one length byte and is shifted only in the rare case it grows
 * past 127 bytes.
 */
#ifndef MTRACE_PF_PB_H
#define MTRACE_PF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2 };

struct pb_buf {
	uint8_t *data;
	size_t len, cap;
	bool oom;	/* an allocation failed: the content is incomplete */
};

/* Makes room for @n more bytes; false (and oom set) when out of memory. */
bool pb_grow(struct pb_buf *b, size_t n);
/* Starts a nested message (or bytes) @field; returns the mark for pb_close. */
size_t pb_open(struct pb_buf *b, unsigned int field);
/* Ends the nested message opened at @mark, writing its length. */
void pb_close(struct pb_buf *b, size_t mark);
void pb_free(struct pb_buf *b);

static inline unsigned int pb_varint_len(uint64_t v)
{
	unsigned int n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline bool pb_need(struct pb_buf *b, size_t n)
{
	return b->cap - b->len >= n || pb_grow(b, n);
}

static inline void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (pb_need(b, 10))
		b->len = (size_t)(pb_put_varint(b->data + b->len, v) - b->data);
}

static inline void pb_tag(struct pb_buf *b, unsigned int field, enum pb_wire wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* Every integer type (uint, int32/int64 two's complement, bool, enum). */
static inline void pb_uint(struct pb_buf *b, unsigned int field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_bytes(struct pb_buf *b, unsigned int field, const void *s, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	if (pb_need(b, n)) {
		memcpy(b->data + b->len, s, n);
		b->len += n;
	}
}

static inline void pb_str(struct pb_buf *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

#endif
