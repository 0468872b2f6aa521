/* SPDX-License-Identifier: MIT */
/*
 * Small helpers: durations for people, the word a count takes (for
 * messages anywhere), and names of decoder function ids interned once
 * (for the event consumers: narrow/, report/, svg/).
 */
#ifndef MTRACE_UTIL_H
#define MTRACE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* "12.3us": NS with three significant digits and a unit (ns below 1 us). */
void mt_fmt_ns(char *buf, size_t len, uint64_t ns);

/* ONE when N is 1, else MANY: the ending (or word) a count of N takes, so
 * that no message says "1 threads" ("%zu thread%s", n, mt_plural(n, "", "s")). */
static inline const char *mt_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

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
