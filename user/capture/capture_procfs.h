/* SPDX-License-Identifier: MIT */
/*
 * What /proc says about a traced process: its memory maps (with build-ids)
 * and its threads' names, in the bundle's record form.
 */
#ifndef MTRACE_CAPTURE_PROCFS_H
#define MTRACE_CAPTURE_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bundle/bundle.h"

#define MT_BUILD_ID_MAX 64

/* One line of /proc/PID/maps. path points into the line (or "" if anonymous). */
struct mt_maps_line {
	uint64_t start, end, offset;
	uint32_t prot;                  /* MT_BUNDLE_PROT_* */
	const char *path;
	size_t path_len;                /* without a " (deleted)" suffix */
	int deleted;
};

/*
 * Parses one line (without or with its newline). -EINVAL if it is not a
 * maps line. The line is not modified.
 */
int mt_maps_parse_line(const char *line, struct mt_maps_line *m);

/* The GNU build-id note of an ELF file: its length, 0 if absent, <0 on error. */
int mt_elf_build_id(const char *path, uint8_t *id, size_t cap);

/* Owned copies of the strings the records below point to. */
struct mt_strpool {
	char **s;
	size_t n, cap;
};

/* A copy of len bytes plus a NUL, owned by the pool; NULL when out of memory. */
char *mt_strpool_add(struct mt_strpool *p, const void *data, size_t len);
void mt_strpool_free(struct mt_strpool *p);

/*
 * The maps of one process, owned by this list: mappings a decoder may need
 * (file-backed, executable, and the kernel's special ones such as [vdso]),
 * each with the build-id of its file.
 */
struct mt_map_list {
	struct mt_bundle_map *maps;
	size_t n, cap;
	struct mt_strpool pool;         /* paths and build-ids */
};

/*
 * Appends the maps of pid, event MT_BUNDLE_MAP_PRESENT at tsc, read through
 * thread tid (0: the process itself). A process whose leader already left
 * has its address space only in the threads still running.
 */
int mt_maps_collect(struct mt_map_list *l, pid_t pid, pid_t tid, uint64_t tsc);
void mt_maps_free(struct mt_map_list *l);

/* Threads: the process itself (comm + cmdline) and each of its tasks. */
struct mt_thread_list {
	struct mt_bundle_thread *t;
	size_t n, cap;
	struct mt_strpool pool;         /* names and command lines */
};

/* The command line is read through thread via_tid (0: the process), as for maps. */
int mt_threads_collect(struct mt_thread_list *l, pid_t pid, pid_t via_tid, uint64_t tsc);
/*
 * While armed: adds pid's threads not yet in @seen, and a thread's new name
 * when it changed, so that threads that exit before the freeze still have
 * one. No command lines.
 */
int mt_threads_remember(struct mt_thread_list *seen, pid_t pid, uint64_t tsc);
/* TracerPid of thread @tid of @pid (0: none), or -1 when it is gone. */
pid_t mt_thread_tracer(pid_t pid, pid_t tid);
/* Appends to @l the threads of @seen that @l lacks (they exited since). */
int mt_threads_add_gone(struct mt_thread_list *l, const struct mt_thread_list *seen);
void mt_threads_free(struct mt_thread_list *l);

#endif
