// SPDX-License-Identifier: MIT
/* Thread names, tracers and the command line of a process, from /proc/PID. */
#include "capture/capture_procfs.h"
#include "util/mt_array.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a small /proc file; returns its length (0 if unreadable). */
static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	if (fd < 0)
		return 0;
	while (used < cap) {
		ssize_t n = read(fd, buf + used, cap - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	return used;
}

static int push_thread(struct mt_thread_list *l, const struct mt_bundle_thread *t)
{
	if (MT_ARRAY_RESERVE(l->t, l->cap, l->n, 1))
		return -ENOMEM;
	l->t[l->n++] = *t;
	return 0;
}

/* A task's name without the newline; 0 when it is gone. */
static size_t read_comm(pid_t pid, pid_t tid, char *comm, size_t cap)
{
	char path[64];
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	len = read_small(path, comm, cap);
	if (len && comm[len - 1] == '\n')
		len--;
	return len;
}

static struct mt_bundle_thread *find_tid(const struct mt_thread_list *l, uint32_t tid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->t[i].tid == tid)
			return &l->t[i];
	return NULL;
}

static int add_task(struct mt_thread_list *l, pid_t pid, pid_t tid, pid_t via, uint64_t tsc)
{
	struct mt_bundle_thread t = { .tsc = tsc, .pid = (uint32_t)pid, .tid = (uint32_t)tid };
	char path[64], comm[64];
	size_t len = read_comm(pid, tid, comm, sizeof(comm));

	if (len == 0)
		return 0; /* exited meanwhile */
	t.comm = mt_strpool_add(&l->pool, comm, len);
	if (!t.comm)
		return -ENOMEM;
	if (tid == pid) {
		/* Command lines are bounded by ARG_MAX in practice; 128 KiB keeps the table small. */
		static const size_t max = 128 << 10;
		char *buf = malloc(max);

		if (!buf)
			return -ENOMEM;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/cmdline", (int)pid,
			 (int)(via ? via : pid));
		len = read_small(path, buf, max);
		/* Drop the final NUL: the format separates arguments with NULs. */
		if (len && buf[len - 1] == '\0')
			len--;
		t.cmdline = mt_strpool_add(&l->pool, buf, len);
		t.cmdline_len = len;
		free(buf);
		if (!t.cmdline)
			return -ENOMEM;
	}
	return push_thread(l, &t);
}

int mt_threads_collect(struct mt_thread_list *l, pid_t pid, pid_t via_tid, uint64_t tsc)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	/* The process entry (with its command line) first. */
	err = add_task(l, pid, pid, via_tid, tsc);
	while (!err && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid > 0 && tid != pid)
			err = add_task(l, pid, (pid_t)tid, via_tid, tsc);
	}
	closedir(d);
	return err;
}

int mt_threads_remember(struct mt_thread_list *seen, pid_t pid, uint64_t tsc)
{
	char path[64], comm[64];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);
		size_t len = tid > 0 ? read_comm(pid, (pid_t)tid, comm, sizeof(comm)) : 0;
		struct mt_bundle_thread *t = len ? find_tid(seen, (uint32_t)tid) : NULL;
		const char *name;

		if (!len || (t && !strncmp(t->comm, comm, len) && !t->comm[len]))
			continue;
		name = mt_strpool_add(&seen->pool, comm, len);
		if (!name)
			err = -ENOMEM;
		else if (t)
			t->comm = name;	/* renamed since */
		else
			err = push_thread(seen, &(struct mt_bundle_thread){
				.tsc = tsc, .pid = (uint32_t)pid, .tid = (uint32_t)tid, .comm = name });
	}
	closedir(d);
	return err;
}

int mt_threads_add_gone(struct mt_thread_list *l, const struct mt_thread_list *seen)
{
	for (size_t i = 0; i < seen->n; i++) {
		struct mt_bundle_thread t = seen->t[i];

		if (find_tid(l, t.tid))
			continue;
		t.comm = mt_strpool_add(&l->pool, t.comm, strlen(t.comm));
		if (!t.comm || push_thread(l, &t))
			return -ENOMEM;
	}
	return 0;
}

pid_t mt_thread_tracer(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	int tracer = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

void mt_threads_free(struct mt_thread_list *l)
{
	free(l->t);
	mt_strpool_free(&l->pool);
	memset(l, 0, sizeof(*l));
}
