// SPDX-License-Identifier: MIT
/* Tail calls (built with -foptimize-sibling-calls): the callee returns
 * straight to its caller's caller. */
__attribute__((noinline)) static int leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int middle(int x)
{
	if (x & 1)
		return leaf(x + 1);
	return leaf(x - 1);
}

__attribute__((noinline)) static int top(int x)
{
	return middle(x ^ 5);
}

int main(int argc, char **argv)
{
	int acc = 0;

	(void)argv;
	for (int i = 0; i < 400; i++)
		acc += top(i + argc);
	return acc == 0;
}
