// SPDX-License-Identifier: MIT
/*
 * The index map behind the sideband's CPUs and every sink's threads
 * (util/mt_index_map.h): each key keeps the index it was given through
 * any growth, absent keys are absent, and a slot is found or appended
 * zeroed. The sinks once scanned their threads for every event.
 */
#include "../lib/mt_test.h"

#include "util/mt_index_map.h"

#include <errno.h>
#include <stdlib.h>

/* Keys that collide in the low bits, a zero key and the largest. */
static uint64_t key(uint32_t i)
{
	if (i == 0)
		return 0;
	if (i == 1)
		return UINT64_MAX;
	return mt_index_map_task(i % 7, i << 8);
}

MT_TEST(keys_keep_their_index_through_growth)
{
	enum { N = 100000 };
	struct mt_index_map m = { 0 };

	MT_ASSERT_EQ(mt_index_map_get(&m, 5), -1);
	for (uint32_t i = 0; i < N; i++) {
		MT_ASSERT_EQ(mt_index_map_get(&m, key(i)), -1);
		MT_ASSERT_EQ(mt_index_map_put(&m, key(i), i), 0);
	}
	MT_ASSERT_EQ(m.n, N);
	MT_ASSERT(m.cap >= 2 * N);
	for (uint32_t i = 0; i < N; i++)
		MT_ASSERT_EQ(mt_index_map_get(&m, key(i)), i);
	MT_ASSERT_EQ(mt_index_map_get(&m, mt_index_map_task(7, 1)), -1);
	MT_ASSERT_EQ(mt_index_map_put(&m, 42, UINT32_MAX), -ENOMEM);
	mt_index_map_free(&m);
	MT_ASSERT_EQ(mt_index_map_get(&m, key(3)), -1);
}

struct thread_state {
	uint32_t tid;
	uint64_t seen;
};

MT_TEST(slot_found_or_appended_zeroed)
{
	struct mt_index_map m = { 0 };
	struct thread_state *v = NULL, *t;
	size_t n = 0, cap = 0;
	int added;

	/* Interleaved as events of threads on several CPUs come. */
	for (uint32_t round = 0; round < 50; round++) {
		for (uint32_t tid = 1; tid <= 300; tid++) {
			t = mt_index_map_slot(&m, mt_index_map_task(9, tid), &v, &n, &cap,
					      sizeof(*v), &added);
			MT_ASSERT(t);
			MT_ASSERT_EQ(added, round == 0);
			if (added) {
				MT_ASSERT_EQ(t->tid, 0);
				MT_ASSERT_EQ(t->seen, 0);
				t->tid = tid;
			}
			MT_ASSERT_EQ(t->tid, tid);
			MT_ASSERT_EQ(t - v, tid - 1);
			t->seen++;
		}
	}
	MT_ASSERT_EQ(n, 300);
	for (size_t i = 0; i < n; i++)
		MT_ASSERT_EQ(v[i].seen, 50);
	free(v);
	mt_index_map_free(&m);
}
