// SPDX-License-Identifier: MIT
/* The growable array (user/util/mt_array.h). */
#include "mt_test.h"

#include "util/mt_array.h"

#include <errno.h>
#include <stdlib.h>

struct item {
	uint64_t a;
	uint32_t b;
};

MT_TEST(append_one_at_a_time)
{
	struct item *v = NULL;
	size_t n = 0, cap = 0, grows = 0;

	for (uint32_t i = 0; i < 100000; i++) {
		size_t before = cap;

		MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, n, 1), 0);
		MT_ASSERT(cap > n);
		grows += cap != before;
		v[n++] = (struct item){ i * 3ull, i };
	}
	/* Geometric growth: 8, 16, ... 131072, not one reallocation per append. */
	MT_ASSERT_MSG(grows == 15, "%zu reallocations", grows);
	MT_ASSERT(cap < 2 * n);
	for (uint32_t i = 0; i < n; i++)
		MT_ASSERT(v[i].a == i * 3ull && v[i].b == i);
	free(v);
}

MT_TEST(reserve_many_and_none)
{
	int *v = NULL;
	size_t cap = 0;

	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 0, 0), 0);
	MT_ASSERT(v == NULL && cap == 0);
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 0, 3), 0);
	MT_ASSERT(v != NULL);
	MT_ASSERT_EQ(cap, 8);
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 3, 5), 0);
	MT_ASSERT_EQ(cap, 8);			/* fits: no reallocation */
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 8, 1000), 0);
	MT_ASSERT_EQ(cap, 1008);		/* more than double: exactly what is asked */
	v[1007] = 7;
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 1008, 1), 0);
	MT_ASSERT_EQ(cap, 2016);
	MT_ASSERT_EQ(v[1007], 7);
	free(v);
}

MT_TEST(overflow_and_bad_sizes_leave_the_array)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 0, 4), 0);
	v[0] = 42;
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 4, SIZE_MAX), -ENOMEM);
	MT_ASSERT_EQ(MT_ARRAY_RESERVE(v, cap, 4, SIZE_MAX / 8), -ENOMEM);
	MT_ASSERT_EQ(mt_array_reserve(&v, &cap, 4, 1, 0), -EINVAL);
	MT_ASSERT_EQ(cap, 8);
	MT_ASSERT_EQ(v[0], 42);
	free(v);
}

/* Against a linear count, with duplicate keys and keys outside the range. */
MT_TEST(upper_bound_finds_the_first_key_above)
{
	struct item v[9];
	const size_t n = sizeof(v) / sizeof(v[0]);

	for (size_t i = 0; i < n; i++)
		v[i] = (struct item){ 10 * (i / 2 + 1), (uint32_t)i };	/* 10 10 20 20 ... 50 */
	for (uint64_t key = 0; key < 70; key++) {
		size_t want = 0;

		while (want < n && v[want].a <= key)
			want++;
		MT_ASSERT_EQ(MT_ARRAY_UPPER_BOUND(v, n, a, key), want);
	}
	MT_ASSERT_EQ(MT_ARRAY_UPPER_BOUND(v, 0, a, 100), 0);
	MT_ASSERT_EQ(MT_ARRAY_UPPER_BOUND(v, n, a, UINT64_MAX), n);
	MT_ASSERT_EQ(MT_ARRAY_UPPER_BOUND(v, n, a, 10), 2);
}
