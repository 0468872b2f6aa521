// SPDX-License-Identifier: MIT
/*
 * The module against the strict PT model of the simulated backend:
 *   regs     a session leaves every RTIT MSR as another owner left it, and
 *            GET_CPU reports a table index, not a physical address
 *   vmx-refused / vmx-ok   arm in VMX operation without / with VMX_MISC[14]
 *   mmap     MAP_PRIVATE refused, MAP_SHARED across regions works
 *   limit    ring memory above ring_limit_kb refused without CAP_IPC_LOCK
 *   setuid HELPER | plain HELPER   a traced target execs HELPER
 *   spin FD  (the helper) tell FD it runs, then spin a while
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "kmod_guest.h"

#define RING	(64 << 10)
#define NCPU	2

static const unsigned int msrs[] = {
	0x570, 0x571, 0x560, 0x561, 0x572, 0x580, 0x581, 0x582, 0x583,
};
#define NMSR	(sizeof(msrs) / sizeof(msrs[0]))

static void read_regs(int fd, __u64 v[NCPU][NMSR])
{
	unsigned int c, i;

	for (c = 0; c < NCPU; c++)
		for (i = 0; i < NMSR; i++) {
			struct mtrace_sim_msr m = { .cpu = c, .msr = msrs[i] };

			if (kg_ioctl(fd, MTRACE_IOC_SIM_GET_MSR, &m))
				kg_check("kmod-strict-get-msr", 0, "%#x: %s", msrs[i],
					 strerror(errno));
			v[c][i] = m.value;
		}
}

static int regs(void)
{
	struct mtrace_config c = kg_config(0, RING, 0);	/* both ToPA layouts */
	__u64 before[NCPU][NMSR], after[NCPU][NMSR];
	struct mtrace_cpu_info ci;
	unsigned char b[5000];
	unsigned int cpu, i, bad = 0;
	int fd = kg_open();

	read_regs(fd, before);
	kg_check("kmod-strict-preloaded", before[0][2] && before[0][0],
		 "OUTPUT_BASE %#llx CTL %#llx: no other owner's values",
		 (unsigned long long)before[0][2], (unsigned long long)before[0][0]);
	c.nr_filters = 1;
	c.filters[0].start = 0x400000;
	c.filters[0].end = 0x40ffff;
	c.filters[0].action = MTRACE_FILTER_TRACE;
	kg_pattern(b, sizeof(b), 3);
	kg_check("kmod-strict-session", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 kg_inject(fd, 0, b, sizeof(b)) == sizeof(b) &&
		 !kg_freeze(fd, MTRACE_PATH_MANUAL, 0), "%s", strerror(errno));
	kg_cpu(fd, 0, &ci);
	kg_check("kmod-strict-no-phys-address", ci.output_table == 0 &&
		 ci.write_offset == sizeof(b), "output_table %#llx offset %llu",
		 (unsigned long long)ci.output_table,
		 (unsigned long long)ci.write_offset);
	/* Frozen: the registers are already given back. */
	read_regs(fd, after);
	for (cpu = 0; cpu < NCPU; cpu++)
		for (i = 0; i < NMSR; i++)
			bad += before[cpu][i] != after[cpu][i];
	kg_check("kmod-strict-restored-at-stop", !bad, "%u registers differ", bad);
	close(fd);
	fd = kg_open();
	read_regs(fd, after);
	for (bad = 0, cpu = 0; cpu < NCPU; cpu++)
		for (i = 0; i < NMSR; i++)
			bad += before[cpu][i] != after[cpu][i];
	kg_check("kmod-strict-restored-after-close", !bad, "%u registers differ", bad);
	close(fd);
	return kg_failures != 0;
}

static int vmx(int allowed)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	unsigned char b[100];
	int fd = kg_open();
	long r;

	kg_pattern(b, sizeof(b), 5);
	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c);
	r = kg_ioctl(fd, MTRACE_IOC_ARM, NULL);
	if (allowed)
		kg_check("kmod-vmx-misc14-arms", !r && kg_inject(fd, 0, b, 100) == 100 &&
			 !kg_freeze(fd, MTRACE_PATH_MANUAL, 0), "%s", strerror(-r));
	else
		kg_check("kmod-vmx-refused", r == -EOPNOTSUPP &&
			 kg_status(fd).state == MTRACE_STATE_READY, "arm: %s",
			 strerror(-r));
	close(fd);
	return kg_failures != 0;
}

static int mapping(void)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	int fd = kg_open();
	void *p;

	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c);
	p = mmap(NULL, RING, PROT_READ, MAP_PRIVATE, fd, 0);
	kg_check("kmod-mmap-private-refused", p == MAP_FAILED && errno == EINVAL,
		 "MAP_PRIVATE: %s", p == MAP_FAILED ? strerror(errno) : "mapped");
	if (p != MAP_FAILED)
		munmap(p, RING);
	p = mmap(NULL, 2 * RING, PROT_READ, MAP_SHARED, fd, 0);
	kg_check("kmod-mmap-shared-regions", p != MAP_FAILED, "%s", strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, 2 * RING);
	close(fd);
	/* What mtrace-user does: MAP_SHARED of a descriptor opened read-only. */
	fd = open(MTRACE_DEVICE, O_RDONLY | O_CLOEXEC);
	kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c);
	p = mmap(NULL, 2 * RING, PROT_READ, MAP_SHARED, fd, 0);
	kg_check("kmod-mmap-shared-readonly-fd", p != MAP_FAILED, "%s", strerror(errno));
	if (p != MAP_FAILED)
		munmap(p, 2 * RING);
	close(fd);
	return kg_failures != 0;
}

static int limit(void)
{
	struct mtrace_config big = kg_config(0, 1 << 20, 4096);
	struct mtrace_config small = kg_config(0, 4096, 4096);
	int fd = kg_open();

	small.sb_records = 16;
	kg_become(0, 1);	/* CAP_PERFMON only: no CAP_IPC_LOCK */
	kg_check("kmod-ring-limit", kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &big) == -EDQUOT,
		 "%s", strerror(errno));
	kg_check("kmod-ring-limit-below", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &small),
		 "%s", strerror(errno));
	close(fd);
	return kg_failures != 0;
}

static void spin(int fd)
{
	struct timespec t0, t;

	(void)!write(fd, "x", 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
	exit(0);
}

/* The tracer: uid 1000 with CAP_PERFMON, no CAP_SYS_PTRACE. */
static int tracer(int fd, pid_t target, int ready, int go, int running, int done,
		  int setuid)
{
	struct mtrace_config c = kg_config(target, RING, 4096);
	struct mtrace_sb_record r[1024];
	unsigned char b[16], x;
	__u64 exec_tsc = 0;
	int accepted = 0, after = 0, cpu, n, i;
	struct mtrace_status st;

	kg_become(1000, 1);
	(void)!read(ready, &x, 1);		/* the target dropped to uid 1000 */
	c.sb_records = 1024;
	kg_pattern(b, sizeof(b), 1);
	if (!kg_check(setuid ? "kmod-setuid-arm" : "kmod-exec-arm",
		      !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		      !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno)))
		return 1;
	(void)!write(go, "g", 1);
	(void)!read(running, &x, 1);		/* the helper runs */
	/*
	 * While it spins (300 ms), is PT on for it anywhere? Retried, as it
	 * may be preempted by this very process on its CPU.
	 */
	for (i = 0; i < 40 && !accepted; i++) {
		for (cpu = 0; cpu < NCPU; cpu++)
			accepted += kg_inject(fd, cpu, b, sizeof(b)) == sizeof(b);
		usleep(5000);
	}
	(void)!read(done, &x, 1);		/* the target exited */
	kg_freeze(fd, MTRACE_PATH_MANUAL, 0);
	st = kg_status(fd);
	for (cpu = 0; cpu < NCPU; cpu++) {
		struct mtrace_sb_read rd = { .cpu = cpu, .count = 1024,
			.records_ptr = (__u64)(unsigned long)r };

		n = kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &rd) ? 0 : (int)rd.count;
		for (i = 0; i < n; i++)
			if (r[i].flags & MTRACE_SB_SECURE_EXEC && r[i].prev_tid == (__u32)target)
				exec_tsc = r[i].tsc;
	}
	for (cpu = 0; exec_tsc && cpu < NCPU; cpu++) {
		struct mtrace_sb_read rd = { .cpu = cpu, .count = 1024,
			.records_ptr = (__u64)(unsigned long)r };

		n = kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &rd) ? 0 : (int)rd.count;
		for (i = 0; i < n; i++)
			after += r[i].tsc > exec_tsc && r[i].flags & MTRACE_SB_NEXT_TARGET;
	}
	if (setuid) {
		kg_check("kmod-setuid-sideband-says-why", exec_tsc &&
			 st.flags & MTRACE_STATUS_SECURE_EXEC, "no SECURE_EXEC record (status %#x)",
			 st.flags);
		kg_check("kmod-setuid-nothing-after", !accepted && !after,
			 "%d CPUs still tracing, %d switch-ins recorded after the exec",
			 accepted, after);
	} else {
		kg_check("kmod-exec-plain-still-traced", !exec_tsc && accepted &&
			 !(st.flags & MTRACE_STATUS_SECURE_EXEC),
			 "exec record %llu, %d CPUs tracing, status %#x",
			 (unsigned long long)exec_tsc, accepted, st.flags);
	}
	return kg_failures != 0;
}

static int exec_test(const char *helper, int setuid)
{
	int ready[2], go[2], running[2], done[2], fd, status;
	pid_t target, tr;
	char arg[16];

	if (pipe(ready) || pipe(go) || pipe(running) || pipe(done))
		return 1;
	target = fork();
	if (!target) {
		char x;

		close(go[1]);
		close(running[0]);
		close(done[0]);
		close(done[1]);
		kg_become(1000, 0);
		/* Changing ids made it non-dumpable; a login shell's child is not. */
		prctl(PR_SET_DUMPABLE, 1);
		(void)!write(ready[1], "r", 1);
		(void)!read(go[0], &x, 1);
		snprintf(arg, sizeof(arg), "%d", running[1]);
		execl(helper, helper, "spin", arg, (char *)NULL);
		_exit(127);
	}
	fd = kg_open();
	tr = fork();
	if (!tr) {
		/* Only the helper holds the write end: EOF if it never runs. */
		close(running[1]);
		close(done[1]);
		_exit(tracer(fd, target, ready[0], go[1], running[0], done[0], setuid));
	}
	close(fd);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	close(running[0]);
	close(running[1]);
	close(done[0]);
	waitpid(target, &status, 0);
	kg_check(setuid ? "kmod-setuid-helper-ran" : "kmod-exec-helper-ran",
		 WIFEXITED(status) && !WEXITSTATUS(status), "status %#x", status);
	(void)!write(done[1], "d", 1);
	waitpid(tr, &status, 0);
	return kg_failures || !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "spin") && argc > 2)
		spin(atoi(argv[2]));
	if (!strcmp(m, "regs"))
		return regs();
	if (!strcmp(m, "vmx-refused") || !strcmp(m, "vmx-ok"))
		return vmx(!strcmp(m, "vmx-ok"));
	if (!strcmp(m, "mmap"))
		return mapping();
	if (!strcmp(m, "limit"))
		return limit();
	if ((!strcmp(m, "setuid") || !strcmp(m, "plain")) && argc > 2)
		return exec_test(argv[2], !strcmp(m, "setuid"));
	fprintf(stderr, "usage: kmod_strict regs|vmx-refused|vmx-ok|mmap|limit|setuid HELPER|plain HELPER\n");
	return 2;
}
