// SPDX-License-Identifier: MIT
/* System calls (user-only tracing sees each as a disable/enable pair) and
 * vDSO calls, which run in user space without a syscall. */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec ts, nap = { 0, 1000 };
	int fd = open("/dev/null", O_WRONLY);
	int acc = 0;

	for (int i = 0; i < 4; i++) {
		acc += (int)getpid() & 1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += (int)(write(fd, "x", 1) == 1);
	}
	nanosleep(&nap, NULL);
	close(fd);
	return acc >= 4 ? 0 : 1;
}
