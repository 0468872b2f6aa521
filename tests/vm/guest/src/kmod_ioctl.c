// SPDX-License-Identifier: MIT
/*
 * /dev/mtrace ABI in the simulated backend: every ioctl with valid and
 * invalid arguments and in the wrong order, a second owner, the ring
 * contents after injecting more than it holds (read back through mmap),
 * re-arm, and coexistence with another PT user.
 *   kmod_ioctl abi       (module loaded with sim=1, multi-entry ToPA)
 *   kmod_ioctl single    (module loaded with sim=2, single-entry ToPA)
 *   kmod_ioctl hotplug   (sim=1; takes CPU 1 offline and back)
 *   kmod_ioctl power     (sim=1; runs a suspend up to the task freezer)
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kmod_guest.h"

#define RING	(64 << 10)

/* "name-suffix", for checks that run once per ring layout. */
static const char *sub(const char *name, const char *suffix)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s-%s", name, suffix);
	return buf;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void version_and_caps(int fd)
{
	struct mtrace_version v = { 0 };
	struct mtrace_caps c = { 0 };

	kg_check("kmod-version", !kg_ioctl(fd, MTRACE_IOC_GET_VERSION, &v) &&
		 v.abi_version == MTRACE_ABI_VERSION &&
		 !strcmp(v.module_version, MTRACE_VERSION),
		 "abi %u version '%s'", v.abi_version, v.module_version);
	kg_check("kmod-caps", !kg_ioctl(fd, MTRACE_IOC_GET_CAPS, &c) &&
		 (c.flags & MTRACE_CAPS_SIMULATED) &&
		 (c.flags & MTRACE_CAPS_MULTI_TOPA) && c.nr_cpu_ids >= 2 &&
		 c.cpuid_14_0[2] == 7 && c.cpuid_14_1[0] == 0x02490002 &&
		 c.max_nonturbo_ratio == 17 && c.tsc_khz > 0,
		 "flags %#x cpus %u ecx %#x", c.flags, c.nr_cpu_ids,
		 c.cpuid_14_0[2]);
	kg_check("kmod-caps-kfunc", c.flags & MTRACE_CAPS_KFUNC,
		 "kfunc not registered (flags %#x)", c.flags);
}

static void wrong_order(int fd)
{
	struct mtrace_cpu_info ci;
	struct mtrace_sb_read sr = { 0 };
	void *p;

	kg_check("kmod-order-arm-unconfigured",
		 kg_ioctl(fd, MTRACE_IOC_ARM, NULL) == -EBADFD, "not EBADFD");
	kg_check("kmod-order-freeze-unconfigured",
		 kg_freeze(fd, MTRACE_PATH_MANUAL, 0) == -EBADFD, "not EBADFD");
	kg_check("kmod-order-cpu-unconfigured", kg_cpu(fd, 0, &ci) == -EBADFD,
		 "not EBADFD");
	kg_check("kmod-order-sideband-unconfigured",
		 kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &sr) == -EBADFD,
		 "not EBADFD");
	kg_check("kmod-order-disarm-unconfigured",
		 kg_ioctl(fd, MTRACE_IOC_DISARM, NULL) == -EBADFD, "not EBADFD");
	p = mmap(NULL, RING, PROT_READ, MAP_SHARED, fd, 0);
	kg_check("kmod-order-mmap-unconfigured",
		 p == MAP_FAILED && errno == EBADFD, "mmap worked or wrong errno");
}

static void bad_arguments(int fd)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	char junk[8] = { 0 };

	c.flags |= 1U << 20;
	kg_check("kmod-config-unknown-flag",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	c = kg_config(0, RING, 4096);
	c.reserved[0] = 1;
	kg_check("kmod-config-reserved",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	c = kg_config(0, RING + 4096, 4096);
	kg_check("kmod-config-ring-size",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	c = kg_config(0, RING, 4096);
	c.flags |= MTRACE_CFG_MTC;
	c.mtc_freq = 2;		/* Kaby Lake lists 0, 3, 6, 9 */
	kg_check("kmod-config-mtc-bitmap",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	c = kg_config(0x3ffffff0, RING, 4096);
	kg_check("kmod-config-no-such-pid",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -ESRCH, "not ESRCH");
	c = kg_config(2, RING, 4096);		/* kthreadd */
	kg_check("kmod-config-kernel-thread",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	kg_check("kmod-config-bad-pointer",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, (void *)16) == -EFAULT,
		 "not EFAULT");
	kg_check("kmod-ioctl-unknown",
		 kg_ioctl(fd, _IO(MTRACE_IOC_MAGIC, 0x3f), NULL) == -ENOTTY,
		 "not ENOTTY");
	kg_check("kmod-ioctl-wrong-size",
		 kg_ioctl(fd, _IOW(MTRACE_IOC_MAGIC, 0x02, junk), junk) == -ENOTTY,
		 "not ENOTTY");
}

static void configure(int fd)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	struct mtrace_cpu_info ci;
	struct mtrace_status st;

	kg_check("kmod-config-valid", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c),
		 "%s", strerror(errno));
	st = kg_status(fd);
	kg_check("kmod-status-ready", st.state == MTRACE_STATE_READY &&
		 st.nr_cpus == 2 && st.ring_size == RING &&
		 st.rtit_ctl == (0x8 | 0x100 | 0x400 | 0x2000),
		 "state %u cpus %u ctl %#llx", st.state, st.nr_cpus,
		 (unsigned long long)st.rtit_ctl);
	kg_check("kmod-cpu-layout", !kg_cpu(fd, 1, &ci) &&
		 ci.flags == MTRACE_CPU_RING && ci.mmap_offset == RING &&
		 ci.ring_size == RING, "flags %#x offset %llu", ci.flags,
		 (unsigned long long)ci.mmap_offset);
	kg_check("kmod-cpu-out-of-range", kg_cpu(fd, 4096, &ci) == -EINVAL,
		 "accepted");
	memset(&ci, 0, sizeof(ci));
	ci.reserved[1] = 1;
	kg_check("kmod-cpu-reserved",
		 kg_ioctl(fd, MTRACE_IOC_GET_CPU, &ci) == -EINVAL, "accepted");
	kg_check("kmod-freeze-not-armed",
		 kg_freeze(fd, MTRACE_PATH_MANUAL, 0) == -EBADFD, "not EBADFD");
	kg_check("kmod-freeze-bad-path",
		 kg_freeze(fd, MTRACE_PATH_KFUNC, 0) == -EINVAL, "accepted");
}

/* Oldest-first contents of one CPU's ring through the mapping. */
static void linearize(const unsigned char *ring, __u64 size,
		      const struct mtrace_cpu_info *ci, unsigned char *out,
		      __u64 *len)
{
	__u64 w = ci->write_offset;

	if (ci->flags & MTRACE_CPU_WRAPPED) {
		memcpy(out, ring + w, size - w);
		memcpy(out + size - w, ring, w);
		*len = size;
	} else {
		memcpy(out, ring, w);
		*len = w;
	}
}

/*
 * Injects n0 bytes on CPU 0 and n1 on CPU 1, freezes, and checks each
 * ring's oldest-first bytes against the tail of what was injected.
 */
static void ring_roundtrip(int fd, const char *name, __u64 ring,
			   __u64 n0, __u64 n1, __u64 cookie)
{
	unsigned char *in[2], *lin = malloc(ring);
	__u64 n[2] = { n0, n1 }, len, done;
	struct mtrace_cpu_info ci;
	struct mtrace_status st;
	unsigned char *map;
	char what[96];
	unsigned int cpu;

	for (cpu = 0; cpu < 2; cpu++) {
		in[cpu] = malloc(n[cpu]);
		kg_pattern(in[cpu], n[cpu], cpu + 1 + (unsigned int)cookie);
		for (done = 0; done < n[cpu]; done += MTRACE_SIM_INJECT_MAX) {
			__u64 k = n[cpu] - done < MTRACE_SIM_INJECT_MAX ?
				  n[cpu] - done : MTRACE_SIM_INJECT_MAX;
			long r = kg_inject(fd, cpu, in[cpu] + done, k);

			if (r != (long)k)
				kg_check(name, 0, "inject cpu %u: %ld", cpu, r);
		}
	}
	kg_check(sub(name, "poll-armed"), !readable(fd), "readable before freeze");
	kg_check(sub(name, "freeze-manual"), !kg_freeze(fd, MTRACE_PATH_MANUAL, cookie),
		 "%s", strerror(errno));
	kg_check(sub(name, "poll-frozen"), readable(fd), "not readable after freeze");
	kg_check(sub(name, "freeze-twice"),
		 kg_freeze(fd, MTRACE_PATH_MANUAL, 1) == -EALREADY, "not EALREADY");
	st = kg_status(fd);
	kg_check(sub(name, "trigger-record"), st.state == MTRACE_STATE_FROZEN &&
		 st.trigger.path == MTRACE_PATH_MANUAL &&
		 st.trigger.cookie == cookie &&
		 st.trigger.pid == (__u32)getpid() &&
		 st.trigger.tid == (__u32)syscall(SYS_gettid) &&
		 st.trigger.tsc >= st.arm_tsc && st.freeze_tsc >= st.trigger.tsc &&
		 st.freeze_ns >= st.arm_ns && !(st.flags & MTRACE_STATUS_CLOBBERED),
		 "state %u path %u pid %u", st.state, st.trigger.path,
		 st.trigger.pid);
	map = mmap(NULL, 2 * ring, PROT_READ, MAP_SHARED, fd, 0);
	if (!kg_check(name, map != MAP_FAILED, "mmap: %s", strerror(errno)))
		return;
	for (cpu = 0; cpu < 2; cpu++) {
		__u64 keep = n[cpu] < ring ? n[cpu] : ring;

		kg_cpu(fd, cpu, &ci);
		linearize(map + ci.mmap_offset, ring, &ci, lin, &len);
		snprintf(what, sizeof(what), "%s-cpu%u-tail", name, cpu);
		kg_check(what, len == keep && ci.write_offset == n[cpu] % ring &&
			 !!(ci.flags & MTRACE_CPU_WRAPPED) == (n[cpu] >= ring) &&
			 ci.stop_tsc >= st.trigger.tsc &&
			 !memcmp(lin, in[cpu] + n[cpu] - keep, keep),
			 "flags %#x write_offset %llu len %llu", ci.flags,
			 (unsigned long long)ci.write_offset,
			 (unsigned long long)len);
		free(in[cpu]);
	}
	munmap(map, 2 * ring);
	free(lin);
}

static void mapping_rules(int fd)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	void *p;

	p = mmap(NULL, RING, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	kg_check("kmod-mmap-no-write", p == MAP_FAILED && errno == EPERM,
		 "writable mapping");
	p = mmap(NULL, RING, PROT_READ, MAP_SHARED, fd, 0);
	kg_check("kmod-mmap-no-mprotect-write",
		 p != MAP_FAILED && mprotect(p, RING, PROT_READ | PROT_WRITE),
		 "mprotect to write worked");
	kg_check("kmod-config-while-mapped",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EBUSY, "not EBUSY");
	munmap(p, RING);
	p = mmap(NULL, RING, PROT_READ, MAP_SHARED, fd, 2 * RING);
	kg_check("kmod-mmap-out-of-range", p == MAP_FAILED && errno == EINVAL,
		 "mapped past the rings");
}

static void rearm(int fd)
{
	struct mtrace_cpu_info ci;
	struct mtrace_status st;
	unsigned char b[10];

	kg_pattern(b, sizeof(b), 9);
	kg_check("kmod-rearm", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s",
		 strerror(errno));
	kg_check("kmod-inject-after-rearm", kg_inject(fd, 0, b, 10) == 10, "short");
	kg_check("kmod-freeze-fallback", !kg_freeze(fd, MTRACE_PATH_FALLBACK, 5),
		 "%s", strerror(errno));
	st = kg_status(fd);
	kg_cpu(fd, 0, &ci);
	/* The old wrapped data is gone: the ring was zeroed at arm. */
	kg_check("kmod-rearm-zeroed", st.snapshots == 2 &&
		 st.trigger.path == MTRACE_PATH_FALLBACK &&
		 ci.write_offset == 10 && !(ci.flags & MTRACE_CPU_WRAPPED),
		 "snapshots %u offset %llu flags %#x", st.snapshots,
		 (unsigned long long)ci.write_offset, ci.flags);
	kg_check("kmod-disarm", !kg_ioctl(fd, MTRACE_IOC_DISARM, NULL) &&
		 kg_status(fd).state == MTRACE_STATE_READY, "not READY");
}

static long set_msr(int fd, unsigned int cpu, unsigned int msr, __u64 v)
{
	struct mtrace_sim_msr m = { .cpu = cpu, .msr = msr, .value = v };

	return kg_ioctl(fd, MTRACE_IOC_SIM_SET_MSR, &m);
}

static void coexistence(int fd)
{
	struct mtrace_cpu_info c0, c1;
	struct mtrace_status st;

	/* Another agent (perf) has TraceEn set on CPU 1. */
	set_msr(fd, 1, 0x570, 0x2101);
	kg_check("kmod-arm-busy", kg_ioctl(fd, MTRACE_IOC_ARM, NULL) == -EBUSY &&
		 kg_status(fd).state == MTRACE_STATE_READY, "armed over perf");
	set_msr(fd, 1, 0x570, 0x2100);	/* perf stops */
	kg_check("kmod-arm-after-busy", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL),
		 "%s", strerror(errno));
	/* ... and reprograms CPU 1 while we trace. */
	/* (it stops ours first: only TraceEn may change while it is set) */
	set_msr(fd, 1, 0x570, 0x2508);	/* ours is 0x2509 while tracing */
	set_msr(fd, 1, 0x570, 0x250d);
	kg_freeze(fd, MTRACE_PATH_EXIT, 0);
	st = kg_status(fd);
	kg_cpu(fd, 0, &c0);
	kg_cpu(fd, 1, &c1);
	kg_check("kmod-clobber-detected", (st.flags & MTRACE_STATUS_CLOBBERED) &&
		 (c1.flags & MTRACE_CPU_CLOBBERED) &&
		 !(c0.flags & MTRACE_CPU_CLOBBERED),
		 "status %#x cpu0 %#x cpu1 %#x", st.flags, c0.flags, c1.flags);
	kg_check("kmod-sim-msr-invalid", set_msr(fd, 0, 0x10, 1) == -EINVAL,
		 "accepted");
	set_msr(fd, 1, 0x570, 0);
}

static void sideband_args(int fd)
{
	struct mtrace_sb_record r[4];
	struct mtrace_sb_read sr = { .cpu = 0, .count = 4,
		.records_ptr = (__u64)(unsigned long)r };

	kg_check("kmod-sideband-read", !kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &sr),
		 "%s", strerror(errno));
	sr.reserved[0] = 1;
	kg_check("kmod-sideband-reserved",
		 kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &sr) == -EINVAL, "accepted");
	sr.reserved[0] = 0;
	sr.cpu = 9999;
	kg_check("kmod-sideband-cpu-range",
		 kg_ioctl(fd, MTRACE_IOC_READ_SIDEBAND, &sr) == -EINVAL, "accepted");
}

static void inject_args(int fd)
{
	unsigned char b = 1;

	kg_check("kmod-inject-empty", kg_inject(fd, 0, &b, 0) == -EINVAL, "accepted");
	kg_check("kmod-inject-too-long",
		 kg_inject(fd, 0, &b, MTRACE_SIM_INJECT_MAX + 1) == -EINVAL,
		 "accepted");
	kg_check("kmod-inject-bad-pointer",
		 kg_inject(fd, 0, (void *)16, 4) == -EFAULT, "not EFAULT");
}

static int abi(void)
{
	int fd = kg_open(), fd2;
	struct mtrace_config c;

	fd2 = open(MTRACE_DEVICE, O_RDWR);
	kg_check("kmod-second-owner", fd2 < 0 && errno == EBUSY,
		 "second open worked");
	version_and_caps(fd);
	wrong_order(fd);
	bad_arguments(fd);
	configure(fd);
	kg_check("kmod-arm", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s",
		 strerror(errno));
	kg_check("kmod-arm-twice", kg_ioctl(fd, MTRACE_IOC_ARM, NULL) == -EBADFD,
		 "not EBADFD");
	c = kg_config(0, RING, 4096);
	kg_check("kmod-config-while-armed",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EBADFD, "not EBADFD");
	inject_args(fd);
	ring_roundtrip(fd, "kmod-ring-wraps", RING, 200000, 1000, 77);
	sideband_args(fd);
	mapping_rules(fd);
	rearm(fd);
	coexistence(fd);
	/* A big ring: 1024 regions in three chained ToPA tables. */
	c = kg_config(0, 4 << 20, 4096);
	kg_check("kmod-config-chained", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno));
	ring_roundtrip(fd, "kmod-ring-chained-tables", 4 << 20, 9000001, 4 << 20, 3);
	close(fd);
	return kg_failures != 0;
}

static int single(void)
{
	int fd = kg_open();
	struct mtrace_config c = kg_config(0, RING, 4096);
	struct mtrace_caps caps = { 0 };

	kg_check("kmod-single-caps", !kg_ioctl(fd, MTRACE_IOC_GET_CAPS, &caps) &&
		 !(caps.flags & MTRACE_CAPS_MULTI_TOPA), "flags %#x", caps.flags);
	kg_check("kmod-single-rejects-regions",
		 kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) == -EINVAL, "accepted");
	c.region_size = 0;
	kg_check("kmod-single-config", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL), "%s", strerror(errno));
	ring_roundtrip(fd, "kmod-single-ring-wraps", RING, 150001, RING, 11);
	close(fd);
	return kg_failures != 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return 0;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static int set_online(unsigned int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online", cpu);
	return write_file(path, on ? "1\n" : "0\n");
}

/*
 * A CPU going offline while armed stops its PT in the hotplug callback and
 * keeps its snapshot; the freeze then completes without it; a CPU offline
 * at arm time is reported and not traced; once back it is armed again.
 */
static int hotplug(void)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	struct mtrace_cpu_info c0, c1;
	struct mtrace_status st;
	unsigned char b[1000];
	int fd = kg_open();

	kg_pattern(b, sizeof(b), 21);
	kg_check("kmod-hp-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 kg_inject(fd, 1, b, sizeof(b)) == sizeof(b) &&
		 kg_inject(fd, 0, b, 10) == 10, "%s", strerror(errno));
	if (!kg_check("kmod-hp-offline", set_online(1, 0), "%s", strerror(errno)))
		return 1;
	kg_check("kmod-hp-inject-offline", kg_inject(fd, 1, b, 1) == -ENXIO,
		 "wrote to an offline CPU");
	kg_check("kmod-hp-freeze", !kg_freeze(fd, MTRACE_PATH_MANUAL, 0) &&
		 readable(fd), "%s", strerror(errno));
	kg_cpu(fd, 0, &c0);
	kg_cpu(fd, 1, &c1);
	kg_check("kmod-hp-offlined-snapshot", c1.flags == (MTRACE_CPU_RING |
		 MTRACE_CPU_OFFLINED) && c1.write_offset == sizeof(b) &&
		 c0.flags == MTRACE_CPU_RING && c0.write_offset == 10,
		 "cpu1 flags %#x offset %llu cpu0 flags %#x", c1.flags,
		 (unsigned long long)c1.write_offset, c0.flags);
	kg_check("kmod-hp-arm-while-offline", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 !kg_freeze(fd, MTRACE_PATH_MANUAL, 0) && !kg_cpu(fd, 1, &c1) &&
		 (c1.flags & MTRACE_CPU_OFFLINED) && c1.write_offset == 0,
		 "cpu1 flags %#x", c1.flags);
	if (!kg_check("kmod-hp-online", set_online(1, 1), "%s", strerror(errno)))
		return 1;
	st = kg_status(fd);
	kg_check("kmod-hp-rearm", !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 kg_inject(fd, 1, b, 7) == 7 &&
		 !kg_freeze(fd, MTRACE_PATH_MANUAL, 0) && !kg_cpu(fd, 1, &c1) &&
		 c1.flags == MTRACE_CPU_RING && c1.write_offset == 7 &&
		 kg_status(fd).snapshots == st.snapshots + 1,
		 "cpu1 flags %#x offset %llu", c1.flags,
		 (unsigned long long)c1.write_offset);
	/* A CPU that comes online while armed has no ring: say so, and since when. */
	kg_check("kmod-hp-added-setup", set_online(1, 0) &&
		 !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) && set_online(1, 1),
		 "%s", strerror(errno));
	st = kg_status(fd);
	kg_cpu(fd, 1, &c1);
	kg_check("kmod-hp-added-flagged", st.flags & MTRACE_STATUS_CPU_ADDED &&
		 c1.flags == MTRACE_CPU_ADDED && c1.online_tsc > st.arm_tsc,
		 "status %#x cpu1 flags %#x online_tsc %llu arm_tsc %llu", st.flags,
		 c1.flags, (unsigned long long)c1.online_tsc,
		 (unsigned long long)st.arm_tsc);
	kg_check("kmod-hp-added-freeze", !kg_freeze(fd, MTRACE_PATH_MANUAL, 0),
		 "%s", strerror(errno));
	close(fd);
	return kg_failures != 0;
}

/*
 * A suspend must stop PT and keep the snapshot. pm_test=freezer runs the
 * real PM notifiers and task freezer, then resumes without sleeping.
 */
static int power(void)
{
	struct mtrace_config c = kg_config(0, RING, 4096);
	struct mtrace_cpu_info ci;
	struct mtrace_status st;
	unsigned char b[100];
	int fd = kg_open(), ok;

	kg_pattern(b, sizeof(b), 33);
	kg_check("kmod-pm-arm", !kg_ioctl(fd, MTRACE_IOC_SET_CONFIG, &c) &&
		 !kg_ioctl(fd, MTRACE_IOC_ARM, NULL) &&
		 kg_inject(fd, 0, b, sizeof(b)) == sizeof(b), "%s", strerror(errno));
	write_file("/sys/module/suspend/parameters/pm_test_delay", "0\n");
	ok = write_file("/sys/power/pm_test", "freezer\n") &&
	     write_file("/sys/power/state", "freeze\n");
	write_file("/sys/power/pm_test", "none\n");
	if (!kg_check("kmod-pm-suspend-test", ok, "suspend test failed: %s",
		      strerror(errno)))
		return 1;
	st = kg_status(fd);
	kg_cpu(fd, 0, &ci);
	kg_check("kmod-pm-frozen", st.state == MTRACE_STATE_FROZEN &&
		 st.trigger.path == MTRACE_PATH_POWER &&
		 ci.write_offset == sizeof(b) && kg_inject(fd, 0, b, 1) == -EAGAIN,
		 "state %u path %u offset %llu", st.state, st.trigger.path,
		 (unsigned long long)ci.write_offset);
	close(fd);
	return kg_failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "abi"))
		return abi();
	if (argc == 2 && !strcmp(argv[1], "single"))
		return single();
	if (argc == 2 && !strcmp(argv[1], "hotplug"))
		return hotplug();
	if (argc == 2 && !strcmp(argv[1], "power"))
		return power();
	fprintf(stderr, "usage: kmod_ioctl abi|single|hotplug|power\n");
	return 2;
}
