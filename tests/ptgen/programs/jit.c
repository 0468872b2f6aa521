// SPDX-License-Identifier: MIT
/* JIT-style code: machine code copied into an anonymous mapping, made
 * executable with mprotect, called from a loop, and unmapped. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* lea eax, [rdi + rdi*2]; ret: returns 3 * x. */
static const unsigned char triple[] = { 0x8d, 0x04, 0x7f, 0xc3 };

static int run(int (*fn)(int), int x)
{
	return fn(x) + fn(x + 1);
}

int main(int argc, char **argv)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t len = sizeof(triple) + (size_t)(argc > 1 ? atoi(argv[1]) : 0);
	long r = 0;

	if (p == MAP_FAILED)
		return 2;
	/* A length the compiler does not know: a real memcpy call. */
	memcpy(p, triple, len);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 3;
	for (int i = 0; i < 40; i++)
		r += run((int (*)(int))p, i);
	munmap(p, 4096);
	return r == 3 * 40 * 40 ? 0 : 1;
}
