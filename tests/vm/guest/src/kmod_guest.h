/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the module's guest test programs: result lines, ioctl
 * calls returning -errno, configurations, deterministic test bytes.
 */
#ifndef KMOD_GUEST_H
#define KMOD_GUEST_H

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uapi/linux/mtrace.h"

static int kg_failures __attribute__((unused));

/* Prints "PASS name" or "FAIL name: why" and returns whether it passed. */
__attribute__((format(printf, 3, 4)))
static inline int kg_check(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		kg_failures++;
	}
	fflush(stdout);
	return ok;
}

/* ioctl() as one value: the result, or -errno. */
static inline long kg_ioctl(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

/* Keeps exactly CAP_PERFMON (or nothing) after switching to uid. */
static inline void kg_become(uid_t uid, int perfmon)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (perfmon) {
		d[CAP_PERFMON / 32].effective = 1U << (CAP_PERFMON % 32);
		d[CAP_PERFMON / 32].permitted = 1U << (CAP_PERFMON % 32);
	}
	if (prctl(PR_SET_KEEPCAPS, 1) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid) || syscall(SYS_capset, &h, d)) {
		printf("FAIL become-uid-%u: %s\n", (unsigned int)uid, strerror(errno));
		exit(1);
	}
}

static inline int kg_open(void)
{
	int fd = open(MTRACE_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("FAIL open: %s: %s\n", MTRACE_DEVICE, strerror(errno));
		exit(1);
	}
	return fd;
}

static inline struct mtrace_config kg_config(int pid, __u64 ring, __u64 region)
{
	struct mtrace_config c;

	memset(&c, 0, sizeof(c));
	c.flags = MTRACE_CFG_USER | MTRACE_CFG_TSC |
		  (pid ? 0 : MTRACE_CFG_SYSTEM_WIDE);
	c.pid = pid;
	c.ring_size = ring;
	c.region_size = region;
	c.sb_records = 1024;
	return c;
}

/* Deterministic bytes, never zero (zero is a PAD packet). */
static inline void kg_pattern(unsigned char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		buf[i] = (seed >> 16) | 1;
	}
}

static inline long kg_inject(int fd, unsigned int cpu, const void *data, __u64 len)
{
	struct mtrace_sim_inject in = {
		.cpu = cpu, .data_ptr = (__u64)(unsigned long)data, .len = len,
	};

	return kg_ioctl(fd, MTRACE_IOC_SIM_INJECT, &in);
}

static inline long kg_freeze(int fd, __u32 path, __u64 cookie)
{
	struct mtrace_freeze f = { .path = path, .cookie = cookie };

	return kg_ioctl(fd, MTRACE_IOC_FREEZE, &f);
}

static inline struct mtrace_status kg_status(int fd)
{
	struct mtrace_status st;

	memset(&st, 0, sizeof(st));
	if (kg_ioctl(fd, MTRACE_IOC_GET_STATUS, &st))
		kg_check("get-status", 0, "%s", strerror(errno));
	return st;
}

static inline long kg_cpu(int fd, unsigned int cpu, struct mtrace_cpu_info *info)
{
	memset(info, 0, sizeof(*info));
	info->cpu = cpu;
	return kg_ioctl(fd, MTRACE_IOC_GET_CPU, info);
}

#endif
