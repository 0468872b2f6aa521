/* SPDX-License-Identifier: MIT */
/*
 * Division of 64-bit numbers by an invariant divisor as a multiply and
 * shifts, exact for every dividend (Granlund and Montgomery, in
 * libdivide's branch-free form): the decoder divides millions of numbers
 * by one divisor at a time (a clock line's, a time interval's), and a
 * hardware division takes tens of cycles.
 */
#ifndef MTRACE_DECODE_UDIV_H
#define MTRACE_DECODE_UDIV_H

#include <stdint.h>

struct mt_udiv {
	uint64_t den;		/* the divisor, >= 1 */
	uint64_t magic;		/* 0 for a power of two */
	unsigned int shift;
};

void mt_udiv_init(struct mt_udiv *d, uint64_t den);

/* N / d->den: q = (((n - hi) >> 1) + hi) >> shift, hi = (n * magic) >> 64. */
static inline uint64_t mt_udiv(const struct mt_udiv *d, uint64_t n)
{
	uint64_t hi;

	if (d->den == 1)
		return n;
	hi = (uint64_t)(((unsigned __int128)n * d->magic) >> 64);
	return (((n - hi) >> 1) + hi) >> d->shift;
}

#endif
