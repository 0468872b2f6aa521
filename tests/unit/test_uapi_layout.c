// SPDX-License-Identifier: MIT
/*
 * The /dev/mtrace ABI is the same for 64-bit, i386 and x32 callers (the
 * module serves all three through compat_ptr_ioctl): every structure has
 * the same size and member offsets everywhere, and no padding the compiler
 * inserted (each member starts where the previous one ended, the last ends
 * at the structure's size), so the header's explicit-padding rule holds.
 * The ioctl numbers, which encode the sizes, agree too.
 */
#include <string.h>

#include "../lib/mt_test.h"

struct entry {
	const char *s, *m;		/* m NULL: the structure's size */
	unsigned long off, size;
};

#define MT_STRUCT(s, size) { #s, NULL, 0, size },
#define MT_MEMBER(s, m, off, size) { #s, #m, off, size },
#define MT_IOC(n, v) { "ioctl", #n, v, 0 },

static const struct entry abi64[] = {
#include "m64.h"
};
static const struct entry abi32[] = {
#include "m32.h"
};
static const struct entry abix32[] = {
#include "mx32.h"
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Members in declaration order, contiguous, filling the structure. */
static void check_dense(const struct entry *e, size_t n)
{
	unsigned long size = 0, end = 0;
	const char *s = NULL;
	size_t i;

	for (i = 0; i <= n; i++) {
		if (i == n || !e[i].m || !strcmp(e[i].s, "ioctl")) {
			if (s)
				MT_ASSERT_MSG(end == size, "struct %s: %lu bytes, members end at %lu",
					      s, size, end);
			s = NULL;
			if (i < n && !e[i].m) {
				s = e[i].s;
				size = e[i].size;
				end = 0;
			}
			continue;
		}
		MT_ASSERT_MSG(e[i].off == end, "struct %s: %s at %lu, previous member ends at %lu",
			      e[i].s, e[i].m, e[i].off, end);
		end = e[i].off + e[i].size;
	}
}

static void check_same(const struct entry *a, const struct entry *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		MT_ASSERT_MSG(a[i].off == b[i].off && a[i].size == b[i].size,
			      "%s %s: offset %lu size %lu on x86-64, offset %lu size %lu here",
			      a[i].s, a[i].m ? a[i].m : "(size)", a[i].off, a[i].size,
			      b[i].off, b[i].size);
}

MT_TEST(no_implicit_padding_x86_64)
{
	check_dense(abi64, N(abi64));
}

MT_TEST(no_implicit_padding_i386)
{
	check_dense(abi32, N(abi32));
}

MT_TEST(no_implicit_padding_x32)
{
	check_dense(abix32, N(abix32));
}

MT_TEST(i386_matches_x86_64)
{
	MT_ASSERT_EQ(N(abi32), N(abi64));
	check_same(abi64, abi32, N(abi64));
}

MT_TEST(x32_matches_x86_64)
{
	MT_ASSERT_EQ(N(abix32), N(abi64));
	check_same(abi64, abix32, N(abi64));
}
