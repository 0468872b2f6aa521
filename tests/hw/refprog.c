// SPDX-License-Identifier: MIT
/*
 * The reference program of the hardware validation (docs/hardware-
 * validation.md): a deterministic call tree, the same on every run, that
 * calls trigger_point() once, at request N (argv[1], default 20000), and
 * then serves 1000 more requests and exits. mtrace and perf record it on
 * the same machine; their call sequences must agree.
 */
#include <stdio.h>
#include <stdlib.h>

#define API __attribute__((used, noinline))

static volatile unsigned sink;

API unsigned leaf_hash(unsigned x, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		x = x * 33 + i;
	return x;
}

API unsigned parse(unsigned req)
{
	return req % 3 ? leaf_hash(req, 4) : req;
}

API unsigned lookup(unsigned key)
{
	if (key % 5 == 0)
		return leaf_hash(key, 2) ^ leaf_hash(key, 3);
	return key;
}

API unsigned render(unsigned v)
{
	return leaf_hash(v, v % 7);
}

API void trigger_point(unsigned req)
{
	sink = req;
}

API unsigned handle(unsigned req, unsigned trigger_at)
{
	unsigned v = lookup(parse(req));

	if (req == trigger_at)
		trigger_point(req);
	return render(v);
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 20000;

	for (unsigned req = 0; req <= n + 1000; req++)
		sink = handle(req, n);
	printf("refprog: %u requests, trigger at %u\n", n + 1001, n);
	return 0;
}
