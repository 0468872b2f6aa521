// SPDX-License-Identifier: MIT
/* N threads (argv[1], default 2) making system calls through lazily bound
 * PLT entries (built with -z lazy: each first call runs the dynamic
 * linker's resolver) and vDSO calls, with cycle-accurate timing in mind: a
 * short run after each switch-in that ends at a syscall. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fd;

static long step(long x)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return x + (write(fd, "x", 1) == 1) + (ts.tv_nsec & 1);
}

static void *worker(void *arg)
{
	long acc = (long)arg;

	for (int i = 0; i < 6; i++)
		acc = step(acc) + (getppid() & 1);
	return (void *)acc;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[8];
	long acc = 0;

	if (n < 1 || n > 8)
		return 2;
	fd = open("/dev/null", O_WRONLY);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++) {
		void *r;

		pthread_join(t[i], &r);
		acc += (long)r;
	}
	close(fd);
	return acc > 0 ? 0 : 1;
}
