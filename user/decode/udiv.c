// SPDX-License-Identifier: MIT
/* The magic numbers of division by an invariant divisor; see udiv.h. */
#include "decode/udiv.h"

void mt_udiv_init(struct mt_udiv *d, uint64_t den)
{
	unsigned int log2 = 63 - (unsigned int)__builtin_clzll(den);

	*d = (struct mt_udiv){ den, 0, 0 };
	if (den < 2)
		return;
	if (!(den & (den - 1))) {
		d->shift = log2 - 1;	/* magic 0: q = (n >> 1) >> (log2 - 1) */
	} else {
		unsigned __int128 pow = (unsigned __int128)1 << (64 + log2);
		uint64_t m = (uint64_t)(pow / den), rem = (uint64_t)(pow % den), twice = rem + rem;

		m += m;
		if (twice >= den || twice < rem)
			m++;
		d->magic = m + 1;
		d->shift = log2;
	}
}
