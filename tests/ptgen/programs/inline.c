// SPDX-License-Identifier: MIT
/* Inlining (built with -O2): scale() is inlined into work() and calls the
 * out-of-line leaf() twice, so the trace enters and leaves inlined code;
 * mix() is inlined into churn() and calls nothing, so only the blocks
 * inside it (its loop) show it; twice() is inlined into edge() after a
 * loop of edge's own, whose last block runs on into twice's call. */
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

static inline __attribute__((always_inline)) int mix(int x)
{
	for (int i = 0; i < (x & 3) + 2; i++)
		x = x * 5 + (x >> 3);
	return x;
}

__attribute__((noipa)) int churn(int x)
{
	int r = leaf(x);

	if (r & 1)	/* churn's own code at leaf's return address */
		r = -r;
	r = leaf(mix(r));
	__asm__ volatile("" : "+r"(r));	/* no tail call */
	return r;
}

static inline __attribute__((always_inline)) int twice(int x)
{
	return leaf(x) * 2;
}

__attribute__((noipa)) int edge(int x)
{
	int r = x;

	for (int i = 0; i < (x & 3) + 2; i++)
		r += r >> 1;
	r = r * 7 + x;	/* edge's own code, then twice's call, in one block */
	return twice(r) + 1;
}

int main(int argc, char **argv)
{
	int acc = 0;

	(void)argv;
	for (int i = 0; i < 50; i++)
		acc += work(i + argc) + churn(i) + edge(i);
	return acc == 0;
}
