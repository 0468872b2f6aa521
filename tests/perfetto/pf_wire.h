/* SPDX-License-Identifier: MIT */
/*
 * Protobuf wire-format decoding for the tests: walks the fields of one
 * message. Written apart from the writer's encoder so that the tests check
 * the bytes, not the encoder against itself.
 */
#ifndef MTRACE_PF_WIRE_H
#define MTRACE_PF_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pfw_field {
	uint32_t num;
	int wt;
	uint64_t v;		/* varint or fixed64 value */
	const uint8_t *data;	/* length-delimited payload */
	size_t len;
};

struct pfw_cursor {
	const uint8_t *p, *end;
	bool bad;
};

/* The next field of the message under @c; false at its end or on garbage
 * (then c->bad is set). */
bool pfw_next(struct pfw_cursor *c, struct pfw_field *f);

/* A cursor over the payload of length-delimited field @f. */
static inline struct pfw_cursor pfw_sub(const struct pfw_field *f)
{
	return (struct pfw_cursor){ f->data, f->data + f->len, false };
}

#endif
