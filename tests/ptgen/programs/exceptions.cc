// SPDX-License-Identifier: MIT
/* C++ exceptions thrown from a nested call chain and caught further up:
 * the frames in between never return; one more is rethrown. */
#include <stdexcept>

static volatile int fail = 1;

[[gnu::noinline]] static int inner(int n)
{
	if (n == 0) {
		if (fail)
			throw std::runtime_error("inner");
		return 0;
	}
	return inner(n - 1) + 1;
}

[[gnu::noinline]] static int middle(int n)
{
	try {
		return inner(n) * 2;
	} catch (const std::logic_error &) {
		return -2;	/* not this type: the search passes this frame */
	}
}

[[gnu::noinline]] static int outer(int n)
{
	try {
		return middle(n);
	} catch (const std::exception &) {
		return -1;
	}
}

int main()
{
	int acc = 0;

	for (int i = 0; i < 2; i++)
		acc += outer(3);
	return acc == -2 ? 0 : 1;
}
