// SPDX-License-Identifier: MIT
/* Calls into libc through the PLT, and libc calling back (qsort). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int v[16];
	char buf[64];

	for (int i = 0; i < 16; i++)
		v[i] = (i * 37) % 16;
	qsort(v, 16, sizeof(v[0]), cmp);
	snprintf(buf, sizeof(buf), "%d-%d", v[0], v[15]);
	return strlen(buf) == 4 && !memcmp(buf, "0-15", 4) ? 0 : 1;
}
