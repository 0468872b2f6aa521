// SPDX-License-Identifier: MIT
/* Inlining (built with -O2): scale() is inlined into work() and calls the
 * out-of-line leaf() twice, so the trace enters and leaves inlined code. */
__attribute__((noipa)) int leaf(int x)
{
	return x * 3 + 1;
}

static inline __attribute__((always_inline)) int scale(int x)
{
	return leaf(x) + leaf(x + 7);
}

__attribute__((noipa)) int work(int x)
{
	int r = scale(x);

	__asm__ volatile("" : "+r"(r));	/* keeps the result after the calls */
	return r ^ x;
}

int main(int argc, char **argv)
{
	int acc = 0;

	(void)argv;
	for (int i = 0; i < 50; i++)
		acc += work(i + argc);
	return acc == 0;
}
