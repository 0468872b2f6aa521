// SPDX-License-Identifier: MIT
/*
 * ioctl_hammer SEED SECONDS: hammers /dev/mtrace (simulated backend) with
 * random and boundary arguments from several processes and threads at once:
 * every ioctl, open/close, mmap/munmap with random offsets and protections,
 * poll, bad user pointers, and children killed in the middle of all of it.
 * Then it checks the module still works: a full configure, arm, inject,
 * freeze, read-back cycle must give back the injected bytes. Prints
 * "PASS hammer-..." / "FAIL hammer-..." lines; the seed reproduces a run.
 */
#include "uapi/linux/mtrace.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROCS 3
#define THREADS 3

/* Operations done by every process and thread, in memory shared across fork. */
static uint64_t *ops_done;

static const unsigned long cmds[] = {
	MTRACE_IOC_GET_VERSION, MTRACE_IOC_GET_CAPS, MTRACE_IOC_SET_CONFIG, MTRACE_IOC_ARM,
	MTRACE_IOC_DISARM, MTRACE_IOC_FREEZE, MTRACE_IOC_GET_STATUS, MTRACE_IOC_GET_CPU,
	MTRACE_IOC_READ_SIDEBAND, MTRACE_IOC_SIM_INJECT, MTRACE_IOC_SIM_SET_MSR,
	_IO(MTRACE_IOC_MAGIC, 0x3f), _IOW(MTRACE_IOC_MAGIC, 0x02, uint32_t), 0x5401,
};

static const uint64_t boundary[] = {
	0, 1, 2, 3, 4095, 4096, 4097, 8192, 65536, (1 << 20) + 1, MTRACE_RING_MIN - 1,
	MTRACE_RING_MAX, MTRACE_RING_MAX + 1, MTRACE_RING_MAX * 2, MTRACE_SIM_INJECT_MAX,
	MTRACE_SIM_INJECT_MAX + 1, INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX,
	0xffff888000000000ULL, 0xffffffff81000000ULL, 16, 1 << 20,
};

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: reproducible from the seed, per thread. */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t pick(uint64_t *s)
{
	switch (rnd(s) % 4) {
	case 0:
		return boundary[rnd(s) % (sizeof(boundary) / sizeof(boundary[0]))];
	case 1:
		return rnd(s) % 8;
	case 2:
		return (uint64_t)1 << (rnd(s) % 30);
	default:
		return rnd(s);
	}
}

/* Fills an argument block: mostly zero (so structures pass the reserved checks), some fields random. */
static void fill_arg(uint64_t *s, uint64_t *arg, size_t words, void *valid_buf)
{
	memset(arg, 0, words * 8);
	for (size_t i = 0, n = rnd(s) % 6; i < n; i++)
		arg[rnd(s) % words] = pick(s);
	if (rnd(s) % 3 == 0)
		arg[rnd(s) % words] = (uint64_t)(uintptr_t)valid_buf;
	if (rnd(s) % 4 == 0)
		((uint32_t *)arg)[0] = (uint32_t)(rnd(s) % 4);	/* small cpu / flags */
}

static void one_op(uint64_t *s, int *fd, void *scratch)
{
	uint64_t arg[32];
	void *p;

	switch (rnd(s) % 10) {
	case 0:
		if (*fd >= 0)
			close(*fd);
		*fd = open("/dev/mtrace", rnd(s) % 2 ? O_RDWR : O_RDONLY);
		break;
	case 1:
		p = mmap(NULL, 4096 << (rnd(s) % 6), rnd(s) % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
			 rnd(s) % 2 ? MAP_SHARED : MAP_PRIVATE, *fd, (off_t)((rnd(s) % 64) * 4096));
		if (p != MAP_FAILED) {
			volatile const uint8_t *b = p;

			(void)b[0];
			munmap(p, 4096);
		}
		break;
	case 2: {
		struct pollfd pfd = { .fd = *fd, .events = POLLIN };

		poll(&pfd, 1, 0);
		break;
	}
	default: {
		unsigned long cmd = cmds[rnd(s) % (sizeof(cmds) / sizeof(cmds[0]))];
		int bad_ptr = rnd(s) % 8 == 0;

		fill_arg(s, arg, 32, scratch);
		ioctl(*fd, cmd, bad_ptr ? (void *)(uintptr_t)pick(s) : (void *)arg);
		break;
	}
	}
}

struct worker {
	uint64_t seed;
	time_t until;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	uint64_t s = w->seed | 1;
	static __thread uint8_t scratch[1 << 16];
	int fd = -1;

	while (time(NULL) < w->until) {
		one_op(&s, &fd, scratch);
		__atomic_fetch_add(ops_done, 1, __ATOMIC_RELAXED);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* One process: several threads, some of which share the same descriptor races. */
static void process_main(uint64_t seed, time_t until)
{
	pthread_t th[THREADS];
	struct worker w[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ seed * 31 + (uint64_t)i, until };
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
}

/* A child killed at a random moment: the module must clean up after it. */
static void killed_child(uint64_t *s)
{
	pid_t pid = fork();

	if (pid == 0) {
		process_main(rnd(s), time(NULL) + 5);
		_exit(0);
	}
	usleep((useconds_t)(rnd(s) % 300000));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int fail(const char *what)
{
	printf("FAIL hammer-module-works-after: %s: %s\n", what, strerror(errno));
	return 1;
}

/* The module must still do a whole snapshot correctly. */
static int check_module_works(void)
{
	struct mtrace_config cfg = { .flags = MTRACE_CFG_USER | MTRACE_CFG_SYSTEM_WIDE,
				     .ring_size = 8192, .sb_records = 64 };
	struct mtrace_freeze fr = { .path = MTRACE_PATH_MANUAL };
	struct mtrace_cpu_info ci = { .cpu = 0 };
	uint8_t data[3000];
	struct mtrace_sim_inject inj = { .cpu = 0, .data_ptr = (uintptr_t)data, .len = sizeof(data) };
	const uint8_t *ring;
	int fd = open("/dev/mtrace", O_RDWR);

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 7);
	if (fd < 0)
		return fail("open");
	if (ioctl(fd, MTRACE_IOC_SET_CONFIG, &cfg))
		return fail("SET_CONFIG");
	if (ioctl(fd, MTRACE_IOC_ARM))
		return fail("ARM");
	/* SIM_INJECT returns how many bytes the emulated CPU wrote. */
	if (ioctl(fd, MTRACE_IOC_SIM_INJECT, &inj) != (int)sizeof(data))
		return fail("SIM_INJECT");
	if (ioctl(fd, MTRACE_IOC_FREEZE, &fr))
		return fail("FREEZE");
	if (ioctl(fd, MTRACE_IOC_GET_CPU, &ci))
		return fail("GET_CPU");
	ring = mmap(NULL, ci.ring_size, PROT_READ, MAP_SHARED, fd, (off_t)ci.mmap_offset);
	if (ring == MAP_FAILED)
		return fail("mmap");
	if (ci.write_offset != sizeof(data) || (ci.flags & MTRACE_CPU_WRAPPED) ||
	    memcmp(ring, data, sizeof(data))) {
		printf("FAIL hammer-module-works-after: ring holds other bytes (write offset %llu)\n",
		       (unsigned long long)ci.write_offset);
		return 1;
	}
	munmap((void *)ring, ci.ring_size);
	close(fd);
	printf("PASS hammer-module-works-after\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed, s;
	int secs, kids = 0;
	time_t until;
	pid_t pids[PROCS];

	if (argc != 3) {
		fprintf(stderr, "usage: ioctl_hammer SEED SECONDS\n");
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	secs = atoi(argv[2]);
	s = seed | 1;
	ops_done = mmap(NULL, sizeof(*ops_done), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (ops_done == MAP_FAILED) {
		perror("ioctl_hammer: mmap");
		return 1;
	}
	until = time(NULL) + secs;
	printf("hammer: seed %llu, %d s, %d processes x %d threads\n", (unsigned long long)seed,
	       secs, PROCS, THREADS);
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			process_main(seed + (uint64_t)i + 1, until);
			_exit(0);
		}
	}
	while (time(NULL) < until) {
		killed_child(&s);
		kids++;
	}
	for (int i = 0; i < PROCS; i++) {
		int st;

		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("FAIL hammer-processes: worker %d ended with status 0x%x\n", i, st);
			return 1;
		}
	}
	printf("PASS hammer-processes: %llu operations, %d children killed mid-way\n",
	       (unsigned long long)*ops_done, kids);
	return check_module_works();
}
