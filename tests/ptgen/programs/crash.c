// SPDX-License-Identifier: MIT
/* Dies of SIGSEGV in user code after some work: the trace ends at the
 * faulting instruction, which never completes. */
static int *volatile target;

static int deref(int *p)
{
	return *p;
}

static int twice(int *p)
{
	return 2 * deref(p);
}

static int (*volatile pick[])(int *) = { deref, twice };

int main(void)
{
	int v = 1;

	for (int i = 0; i < 400; i++)
		v = (v + pick[i & 1](&v)) & 0xffff;
	return deref(target) + v;
}
