/* SPDX-License-Identifier: MIT */
/*
 * Small helpers the event consumers share (narrow/, report/, svg/):
 * durations for people and names of decoder function ids
 * interned once.
 */
#ifndef MTRACE_UTIL_H
#define MTRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "12.3us": NS with three significant digits and a unit (ns below 1 us). */
void mt_fmt_ns(char *buf, size_t len, uint64_t ns);

/* Distinct names, each once, and which one each function id has. */
struct mt_names {
	char **v;
	size_t n, cap;
	uint32_t *byid;		/* function id -> index + 1 */
	size_t nbyid;
	const char *(*name)(void *ctx, uint32_t id);	/* e.g. mt_decode_label() */
	void *ctx;
};

/* The index of S, added when new; UINT32_MAX when out of memory. */
uint32_t mt_names_add(struct mt_names *t, const char *s);
/* The index of function ID's name (asked of t->name once per id). */
uint32_t mt_names_of(struct mt_names *t, uint32_t id);
void mt_names_free(struct mt_names *t);

#endif
