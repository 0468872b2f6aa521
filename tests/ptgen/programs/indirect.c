// SPDX-License-Identifier: MIT
/* Indirect calls through a function-pointer table and a dense switch that
 * compiles to a jump table. */
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

static int (*const ops[])(int, int) = { add, sub, mul };

static int classify(int v)
{
	switch (v) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 5;
	case 3: return 47;
	case 4: return 3;
	case 5: return 71;
	case 6: return 13;
	case 7: return 2;
	default: return -1;
	}
}

int main(int argc, char **argv)
{
	int acc = argc;

	(void)argv;
	for (int i = 0; i < 40; i++)
		acc = ops[i % 3](acc, classify((i * 7 + acc) & 7)) & 0xffff;
	return acc == -1;
}
