// SPDX-License-Identifier: MIT
/*
 * The decode's progress (decode/progress.h): the sums told only grow, none
 * passes the total, and the last is the total. Workers that add and tell
 * at once are what made a sum go back: one read its sum, another added
 * and told a larger one, and the first then told its own.
 */
#include "../lib/mt_test.h"

#include "decode/progress.h"

#include <pthread.h>

/* What the callback saw; it runs with the progress's lock held, one
 * worker at a time. */
struct told {
	uint64_t calls, last, total;
	int backwards, beyond;
};

static void tell(void *ctx, uint64_t done, uint64_t total)
{
	struct told *t = ctx;

	t->backwards |= done < t->last;
	t->beyond |= done > total;
	t->calls++;
	t->last = done;
	t->total = total;
}

#define ADDS 200000

static void *adder(void *arg)
{
	for (int i = 0; i < ADDS; i++)
		mt_progress_add(arg, 1);
	return NULL;
}

MT_TEST(one_worker_tells_each_sum)
{
	struct told t = { 0 };
	struct mt_progress p;

	mt_progress_init(&p, 100, tell, &t);
	mt_progress_add(&p, 10);
	MT_ASSERT_EQ(t.last, 10);
	mt_progress_add(&p, 0);		/* nothing new: not told again */
	mt_progress_add(&p, 5);
	MT_ASSERT_EQ(t.calls, 2);
	MT_ASSERT_EQ(t.last, 15);
	mt_progress_end(&p);
	MT_ASSERT_EQ(t.calls, 3);
	MT_ASSERT_EQ(t.last, 100);
	MT_ASSERT_EQ(t.total, 100);
	mt_progress_fini(&p);
}

/* Two workers adding at once, a byte at a time: many tellings race. */
MT_TEST(sums_told_by_racing_workers_never_go_back)
{
	struct told t = { 0 };
	struct mt_progress p;
	pthread_t th[2];

	mt_progress_init(&p, 2 * ADDS, tell, &t);
	for (int i = 0; i < 2; i++)
		MT_ASSERT_EQ(pthread_create(&th[i], NULL, adder, &p), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	MT_ASSERT(t.calls > 0);
	MT_ASSERT_MSG(!t.backwards, "a sum told was smaller than one told before");
	MT_ASSERT(!t.beyond);
	mt_progress_end(&p);
	MT_ASSERT(!t.backwards);
	MT_ASSERT_EQ(t.last, 2 * ADDS);
	mt_progress_fini(&p);
}
