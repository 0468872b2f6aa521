// SPDX-License-Identifier: MIT
/*
 * Injects a deterministic byte stream into one CPU's simulated PT ring of
 * a running capture. The device has one owner, so this borrows the
 * capture's own open file with pidfd_getfd(2) (root may, as a ptracer).
 * Injection retries while the CPU does not trace (target not running
 * there, or not armed yet): that is when real PT would write nothing.
 *   capture_inject MTRACE_USER_PID CPU TOTAL SEED
 *   capture_inject MTRACE_USER_PID CPU --file PATH
 * Byte i of the stream is capture_stream_byte(SEED, i) (capture_stream.h),
 * or the file's byte i (a PT stream made by the generator).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/mtrace.h"
#include "capture_stream.h"

#define CHUNK 4096
#define WAIT_MS 20000

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The capture's descriptor number for /dev/mtrace, or -1. */
static int find_fd(int pid)
{
	char dir[64], link[512], target[64];
	struct dirent *de;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while (fd < 0 && (de = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (!strcmp(target, MTRACE_DEVICE))
				fd = atoi(de->d_name);
		}
	}
	closedir(d);
	return fd;
}

/* The whole of @path in memory; exits on failure. */
static unsigned char *read_file(const char *path, unsigned long *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	long n = -1;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET))
		data = malloc(n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "capture_inject: cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (unsigned long)n;
	return data;
}

int main(int argc, char **argv)
{
	int pid, cpu, remote = -1, pidfd, fd, waited = 0;
	unsigned long total, seed = 0;
	unsigned char buf[CHUNK], *file = NULL;

	if (argc != 5) {
		fprintf(stderr, "usage: capture_inject MTRACE_USER_PID CPU (TOTAL SEED | --file PATH)\n");
		return 2;
	}
	pid = atoi(argv[1]);
	cpu = atoi(argv[2]);
	if (!strcmp(argv[3], "--file")) {
		file = read_file(argv[4], &total);
	} else {
		total = strtoul(argv[3], NULL, 0);
		seed = strtoul(argv[4], NULL, 0);
	}
	while ((remote = find_fd(pid)) < 0 && waited < WAIT_MS) {
		sleep_ms(10);
		waited += 10;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	fd = remote < 0 || pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, remote, 0);
	if (fd < 0) {
		fprintf(stderr, "capture_inject: no %s in process %d: %s\n", MTRACE_DEVICE, pid,
			strerror(errno));
		return 1;
	}
	for (unsigned long done = 0; done < total;) {
		unsigned long n = total - done < CHUNK ? total - done : CHUNK;
		struct mtrace_sim_inject in = { .cpu = (unsigned int)cpu,
						.data_ptr = (unsigned long)buf, .len = n };
		long r;

		for (unsigned long i = 0; i < n; i++)
			buf[i] = file ? file[done + i] : capture_stream_byte(seed, done + i);
		/* The module returns the bytes the "hardware" took: all, unless it stopped. */
		r = ioctl(fd, MTRACE_IOC_SIM_INJECT, &in);
		if (r > 0) {
			done += (unsigned long)r;
			continue;
		}
		if (r == 0)
			errno = ENOSPC;
		if ((errno != EAGAIN && errno != EBADFD) || waited >= WAIT_MS) {
			fprintf(stderr, "capture_inject: SIM_INJECT on CPU %d after %lu bytes: %s\n",
				cpu, done, strerror(errno));
			return 1;
		}
		sleep_ms(1);
		waited += 1;
	}
	close(fd);
	free(file);
	printf("injected %lu bytes on CPU %d\n", total, cpu);
	return 0;
}
