// SPDX-License-Identifier: MIT
/*
 * Owns /dev/mtrace with tracing armed and the rings mapped, reports
 * "ready" on stdout and waits to be killed: the owner-death test.
 */
#include <sys/mman.h>

#include "kmod_guest.h"

int main(void)
{
	struct mtrace_config c = kg_config(getpid(), 1 << 20, 4096);
	int fd = kg_open();

	if (kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) ||
	    kg_ioctl(fd, MTRACE_IOC_ARM, NULL) ||
	    mmap(NULL, 2 << 20, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
		printf("FAIL kmod-hold: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
