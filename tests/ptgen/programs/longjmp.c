// SPDX-License-Identifier: MIT
/* setjmp/longjmp out of a nested call chain: returns that never happen. */
#include <setjmp.h>

static jmp_buf env;
static volatile int jump = 1;

static void inner(int n)
{
	if (n == 0) {
		if (jump)
			longjmp(env, 7);
		return;
	}
	inner(n - 1);
}

static int outer(int n)
{
	int r = setjmp(env);

	if (r)
		return r;
	inner(n);
	return 0;
}

int main(void)
{
	int acc = 0;

	for (int i = 0; i < 20; i++)
		acc += outer(i % 5 + 2);
	return acc == 140 ? 0 : 1;
}
