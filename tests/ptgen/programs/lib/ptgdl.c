// SPDX-License-Identifier: MIT
/* The library the dlopen program loads after main starts. */
static int twice(int x)
{
	return 2 * x;
}

int ptgdl_work(int x)
{
	int acc = 0;

	for (int i = 0; i < 4; i++)
		acc += twice(x + i);
	return acc;
}
