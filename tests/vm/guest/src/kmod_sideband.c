// SPDX-License-Identifier: MIT
/*
 * Per-task tracing and the context-switch sideband, with the real
 * scheduler: this process targets itself, two threads ping-pong through
 * pipes, and the frozen sideband must show those switches with this
 * process's ids and sane TSCs. PT must be enabled exactly while a target
 * thread runs on a CPU, which the simulated writer reveals: it only
 * accepts bytes while TraceEn is set.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>

#include "kmod_guest.h"

#define ROUNDS	200

static int ping[2], pong[2];
static pid_t tids[2];

static void *player(void *arg)
{
	int me = (int)(long)arg, i;
	char b = 0;

	tids[me] = syscall(SYS_gettid);
	for (i = 0; i < ROUNDS; i++) {
		if (me == 0) {
			if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1)
				break;
		} else {
			if (read(ping[0], &b, 1) != 1 || write(pong[1], &b, 1) != 1)
				break;
		}
	}
	return NULL;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		kg_check("kmod-sb-pin", 0, "%s", strerror(errno));
}

/* Checks every record of one CPU; counts switches to each player. */
static void check_cpu(int fd, unsigned int cpu, const struct mtrace_status *st,
		      unsigned int seen[2], unsigned int *bad)
{
	static struct mtrace_sb_record r[4096];
	struct mtrace_sb_read rd = { .cpu = cpu, .count = 4096,
		.records_ptr = (__u64)(unsigned long)r };
	struct mtrace_cpu_info ci;
	__u64 prev_tsc = st->arm_tsc;
	unsigned int i;
	int k;

	kg_cpu(fd, cpu, &ci);
	if (kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &rd)) {
		(*bad)++;
		return;
	}
	for (i = 0; i < rd.count; i++) {
		int next_t = r[i].next_pid == (__u32)getpid();
		int prev_t = r[i].prev_pid == (__u32)getpid();

		if (r[i].cpu != cpu || r[i].tsc < prev_tsc ||
		    r[i].tsc > ci.stop_tsc || (!next_t && !prev_t) ||
		    !!(r[i].flags & MTRACE_SB_NEXT_TARGET) != next_t ||
		    !!(r[i].flags & MTRACE_SB_PREV_TARGET) != prev_t)
			(*bad)++;
		prev_tsc = r[i].tsc;
		for (k = 0; k < 2; k++)
			if (next_t && r[i].next_tid == (__u32)tids[k])
				seen[k]++;
	}
	if (ci.sb_written != rd.first_seq + rd.count)
		(*bad)++;
}

int main(void)
{
	struct mtrace_config c = kg_config(getpid(), 64 << 10, 4096);
	unsigned char bytes[100];
	unsigned int seen[2] = { 0, 0 }, bad = 0;
	struct mtrace_cpu_info ci;
	struct mtrace_status st;
	pthread_t t[2];
	long r0, r1;
	int fd = kg_open(), k;

	c.sb_records = 4096;
	kg_pattern(bytes, sizeof(bytes), 5);
	if (pipe(ping) || pipe(pong) ||
	    !kg_check("kmod-sb-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		      !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno)))
		return 1;
	for (k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, player, (void *)(long)k);
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);

	/* Running on CPU 0: its trace is on; CPU 1 runs no target thread once
	 * the players have left it (a joined thread may still be finishing
	 * its exit there: allow it a second). */
	pin(0);
	r0 = kg_inject(fd, 0, bytes, sizeof(bytes));
	for (k = 0; k < 100 && (r1 = kg_inject(fd, 1, bytes, sizeof(bytes))) > 0; k++)
		usleep(10000);
	kg_check("kmod-pertask-trace-follows-thread",
		 r0 == sizeof(bytes) && r1 == -EAGAIN, "cpu0 %ld cpu1 %ld", r0, r1);
	kg_check("kmod-sb-freeze", !kg_freeze(fd, MTRACE_PATH_EXIT, 0), "%s",
		 strerror(errno));
	st = kg_status(fd);
	kg_cpu(fd, 0, &ci);
	kg_check("kmod-pertask-ring", ci.write_offset == sizeof(bytes) &&
		 !(ci.flags & (MTRACE_CPU_WRAPPED | MTRACE_CPU_CLOBBERED)),
		 "offset %llu flags %#x", (unsigned long long)ci.write_offset,
		 ci.flags);
	check_cpu(fd, 0, &st, seen, &bad);
	check_cpu(fd, 1, &st, seen, &bad);
	printf("# sideband: switches to player 0: %u, player 1: %u\n",
	       seen[0], seen[1]);
	kg_check("kmod-sb-records-sane", bad == 0, "%u bad records", bad);
	/* Each round blocks each player once in read(). */
	kg_check("kmod-sb-both-threads", seen[0] >= ROUNDS / 2 &&
		 seen[1] >= ROUNDS / 2, "player switches %u and %u", seen[0],
		 seen[1]);
	close(fd);
	return kg_failures != 0;
}
