// SPDX-License-Identifier: MIT
/*
 * Cases for checking the runner itself (tests/host/runner.sh), not part of
 * the unit suite: one passes, one fails on purpose after leaking a block,
 * as a failed check does when it ends a case before its cleanup.
 */
#include "mt_test.h"

#include <errno.h>
#include <stdlib.h>

MT_TEST(passes)
{
	MT_ASSERT_EQ(2 + 2, 4);
}

/* Out of line, so that no pointer to the block is left in main's frame. */
static __attribute__((noinline)) void leak_a_block(void)
{
	char *volatile p = malloc(100);

	if (p)
		p[0] = 1;
}

MT_TEST(fails_after_leaking)
{
	leak_a_block();
	MT_ASSERT_EQ(-EINVAL, 0);
}
