// SPDX-License-Identifier: MIT
/* Recursion: a call tree, and a call chain deeper than the 64-entry RET
 * compression stack. */
static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int depth(int n)
{
	return n ? depth(n - 1) + 1 : 0;
}

int main(void)
{
	return fib(10) + depth(100) == 155 ? 0 : 1;
}
