/* SPDX-License-Identifier: MIT */
/* The byte stream capture_inject writes and capture_check expects. */
#ifndef CAPTURE_STREAM_H
#define CAPTURE_STREAM_H

#include <stdint.h>

static inline unsigned char capture_stream_byte(unsigned long seed, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed * 0xbf58476d1ce4e5b9ULL;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	return (unsigned char)(x >> 29);
}

#endif
