// SPDX-License-Identifier: MIT
/* N worker threads (argv[1], default 2, at most 64) doing ROUNDS (argv[2],
 * default 3) rounds of calls and a syscall, joined by main. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static int work_step(int x)
{
	return (x * 13 + 7) % 101;
}

static int rounds = 3;

static void *worker(void *arg)
{
	long acc = (long)arg;

	for (int round = 0; round < rounds; round++) {
		for (int i = 0; i < 40; i++)
			acc += work_step((int)acc + i);
		acc += getpid() & 1;
	}
	return (void *)acc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[64];
	long acc = 0;

	if (argc > 2)
		rounds = atoi(argv[2]);
	if (n < 1 || n > 64 || rounds < 1)
		return 2;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++) {
		void *r;

		pthread_join(t[i], &r);
		acc += (long)r;
	}
	return acc > 0 ? 0 : 1;
}
