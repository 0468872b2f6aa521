/* SPDX-License-Identifier: MIT */
/*
 * Bytes on the heap now, for tests that bound what a structure holds.
 * ASan counts them; the unsanitized build (run under valgrind) counts
 * nothing (HEAP_COUNTED 0): the sizes go unchecked there, the answers are
 * checked all the same.
 */
#ifndef MT_HEAP_H
#define MT_HEAP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
size_t __sanitizer_get_current_allocated_bytes(void);
#define HEAP_COUNTED 1
static inline size_t heap_bytes(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
#define HEAP_COUNTED 0
static inline size_t heap_bytes(void)
{
	return 0;
}
#endif

#endif
