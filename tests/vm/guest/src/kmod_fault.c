// SPDX-License-Identifier: MIT
/*
 * Allocation failure while setting up a trace. The guest kernel has no
 * CONFIG_FAULT_INJECTION, so the module's own fail_alloc=N parameter
 * (simulated backend only) fails the N-th allocation of a SET_CONFIG. For
 * N = 1, 2, ... until the configuration succeeds, every allocation site
 * fails once: the call must return -ENOMEM and leave the session IDLE (no
 * arm, no ring to map). Repeated PASSES times, MemFree must not drop (the
 * ring is sized so that leaking even one site's memory per failure shows),
 * and afterwards a full arm, inject, freeze and mmap read-back must work.
 *   kmod_fault PASSES
 */
#include <sched.h>
#include <sys/mman.h>

#include "kmod_guest.h"

#define PARAM "/sys/module/mtrace/parameters/fail_alloc"
#define RING (1 << 20)
#define REGION (64 << 10)	/* order 4: freed pages go back to the buddy lists */
#define SB (1 << 16)		/* 2.5 MiB of sideband per CPU */
#define LEAK_LIMIT_KB (8 << 10)

static void set_fail(unsigned int nth)
{
	FILE *f = fopen(PARAM, "w");

	if (!f || fprintf(f, "%u\n", nth) < 0 || fclose(f)) {
		printf("FAIL kmod-fault-param: cannot write %s: %s\n", PARAM, strerror(errno));
		exit(1);
	}
}

static long mem_free_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* After a failed SET_CONFIG: nothing to arm, read or map. */
static const char *idle_violation(int fd)
{
	struct mtrace_cpu_info ci;
	void *p;

	if (kg_status(fd).state != MTRACE_STATE_IDLE)
		return "state is not IDLE";
	if (kg_ioctl(fd, MTRACE_IOC_ARM, NULL) != -EBADFD)
		return "ARM did not fail with EBADFD";
	if (kg_cpu(fd, 0, &ci) != -EBADFD)
		return "GET_CPU did not fail with EBADFD";
	p = mmap(NULL, RING, PROT_READ, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		munmap(p, RING);
		return "the ring could be mapped";
	}
	return NULL;
}

/* One sweep over every allocation site; returns how many there were, or -1. */
static int sweep(int fd, int pass)
{
	struct mtrace_config c = kg_config(getpid(), RING, REGION);
	unsigned int nth;

	c.sb_records = SB;
	for (nth = 1; nth < 100000; nth++) {
		const char *why;
		long r;

		set_fail(nth);
		r = kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c);
		if (r == 0)
			return (int)nth - 1;
		if (r != -ENOMEM) {
			printf("FAIL kmod-fault-enomem: pass %d, allocation %u: SET_CONFIG returned %ld\n",
			       pass, nth, r);
			return -1;
		}
		why = idle_violation(fd);
		if (why) {
			printf("FAIL kmod-fault-idle: pass %d, allocation %u: %s\n", pass, nth, why);
			return -1;
		}
	}
	printf("FAIL kmod-fault-enomem: SET_CONFIG never succeeded\n");
	return -1;
}

/* The session works after all that: inject on CPU 0, freeze, read back. */
static int works(int fd)
{
	static unsigned char want[8192];
	struct mtrace_config c = kg_config(0, RING, REGION);
	struct mtrace_cpu_info ci;
	const unsigned char *ring;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	kg_pattern(want, sizeof(want), 61);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) || kg_ioctl(fd, MTRACE_IOC_ARM, NULL) ||
	    kg_inject(fd, 0, want, sizeof(want)) != sizeof(want) ||
	    kg_freeze(fd, MTRACE_PATH_MANUAL, 1) || kg_cpu(fd, 0, &ci) ||
	    ci.write_offset != sizeof(want))
		return 0;
	ring = mmap(NULL, RING, PROT_READ, MAP_SHARED, fd, (off_t)ci.mmap_offset);
	if (ring == MAP_FAILED)
		return 0;
	if (memcmp(ring, want, sizeof(want))) {
		munmap((void *)ring, RING);
		return 0;
	}
	return !munmap((void *)ring, RING);
}

int main(int argc, char **argv)
{
	struct mtrace_config warm = kg_config(getpid(), RING, REGION);
	int passes = argc > 1 ? atoi(argv[1]) : 3, sites = -1, fd = kg_open(), p;
	long before, after;

	/* Warm-up: the sched_switch probe registration allocates once, for good. */
	warm.sb_records = SB;
	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &warm);
	set_fail(1);
	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &warm);	/* frees the rings, fails */
	before = mem_free_kb();
	for (p = 1; p <= passes; p++) {
		int n = sweep(fd, p);

		if (sites >= 0 && n >= 0 && n != sites) {
			printf("FAIL kmod-fault-sites: pass %d had %d allocations, pass 1 had %d\n", p, n,
			       sites);
			n = -1;
		}
		if (n < 0) {
			set_fail(0);	/* the tests that follow need a working module */
			return 1;
		}
		sites = n;
	}
	/* Same state as the baseline: no rings. */
	set_fail(1);
	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &warm);
	after = mem_free_kb();
	printf("fail_alloc: %d allocation sites per SET_CONFIG on %ld CPUs, %d passes; MemFree %ld kB -> %ld kB\n",
	       sites, sysconf(_SC_NPROCESSORS_ONLN), passes, before, after);
	/* Each CPU: ring, 4 arrays, one allocation per region and table, sideband. */
	kg_check("kmod-fault-every-site", sites >= sysconf(_SC_NPROCESSORS_ONLN) * (6 + RING / REGION),
		 "only %d allocation sites", sites);
	printf("PASS kmod-fault-enomem\n");
	kg_check("kmod-fault-no-leak", before > 0 && after > 0 && before - after < LEAK_LIMIT_KB,
		 "MemFree dropped by %ld kB", before - after);
	set_fail(0);
	kg_check("kmod-fault-works-after", works(fd), "arm/inject/freeze/read-back failed: %s",
		 strerror(errno));
	close(fd);
	return kg_failures != 0;
}
