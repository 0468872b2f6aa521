// SPDX-License-Identifier: MIT
/* /proc/PID/maps: the line parser and the per-process collection. */
#include "capture/capture_procfs.h"
#include "util/mt_array.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETED_SUFFIX " (deleted)"

int mt_maps_parse_line(const char *line, struct mt_maps_line *m)
{
	char perms[5];
	unsigned int major, minor;
	unsigned long long inode;
	int pos = -1;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %llu%n", &m->start, &m->end,
		   perms, &m->offset, &major, &minor, &inode, &pos) != 7 || pos < 0 ||
	    m->end <= m->start || strlen(perms) != 4)
		return -EINVAL;
	m->prot = (perms[0] == 'r' ? MT_BUNDLE_PROT_READ : 0) |
		  (perms[1] == 'w' ? MT_BUNDLE_PROT_WRITE : 0) |
		  (perms[2] == 'x' ? MT_BUNDLE_PROT_EXEC : 0);
	line += pos;
	while (*line == ' ' || *line == '\t')
		line++;
	len = strcspn(line, "\n");
	if (len >= sizeof(DELETED_SUFFIX) - 1 &&
	    !memcmp(line + len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		    sizeof(DELETED_SUFFIX) - 1)) {
		m->deleted = 1;
		len -= sizeof(DELETED_SUFFIX) - 1;
	}
	m->path = line;
	m->path_len = len;
	return 0;
}

static int push_map(struct mt_map_list *l, const struct mt_bundle_map *m)
{
	if (MT_ARRAY_RESERVE(l->maps, l->cap, l->n, 1))
		return -ENOMEM;
	l->maps[l->n++] = *m;
	return 0;
}

/* The build-id of the file behind one mapping, cached for the following lines. */
struct id_cache {
	char path[4096];
	uint8_t id[MT_BUILD_ID_MAX];
	int len;
};

static int file_build_id(struct id_cache *c, pid_t pid, const struct mt_maps_line *ml,
			 const char *path)
{
	char src[64];

	if (!strcmp(c->path, path))
		return c->len;
	snprintf(c->path, sizeof(c->path), "%s", path);
	/* map_files reaches the very file mapped, even deleted or in another mount namespace. */
	snprintf(src, sizeof(src), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, ml->start,
		 ml->end);
	c->len = mt_elf_build_id(src, c->id, sizeof(c->id));
	if (c->len < 0 && !ml->deleted)
		c->len = mt_elf_build_id(path, c->id, sizeof(c->id));
	return c->len;
}

int mt_maps_collect(struct mt_map_list *l, pid_t pid, pid_t tid, uint64_t tsc)
{
	struct id_cache *cache = calloc(1, sizeof(*cache));
	char fname[64], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	if (!cache)
		return -ENOMEM;
	if (tid)
		snprintf(fname, sizeof(fname), "/proc/%d/task/%d/maps", (int)pid, (int)tid);
	else
		snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f) {
		err = -errno;
		free(cache);
		return err;
	}
	while (!err && getline(&line, &cap, f) > 0) {
		struct mt_maps_line ml;
		struct mt_bundle_map m = { .tsc = tsc, .pid = (uint32_t)pid,
					   .event = MT_BUNDLE_MAP_PRESENT };
		int exec, file, idlen = 0;

		if (mt_maps_parse_line(line, &ml))
			continue;
		exec = ml.prot & MT_BUNDLE_PROT_EXEC;
		file = ml.path_len && ml.path[0] == '/';
		if (!exec && !file)
			continue;
		m.path = mt_strpool_add(&l->pool, ml.path, ml.path_len);
		if (!m.path) {
			err = -ENOMEM;
			break;
		}
		if (file)
			idlen = file_build_id(cache, pid, &ml, m.path);
		/* Data files (locales, fonts) matter only when mapped executable. */
		if (!exec && idlen <= 0)
			continue;
		if (idlen > 0) {
			m.build_id = (const uint8_t *)mt_strpool_add(&l->pool, cache->id,
								     (size_t)idlen);
			m.build_id_len = (size_t)idlen;
			if (!m.build_id) {
				err = -ENOMEM;
				break;
			}
		}
		m.start = ml.start;
		m.end = ml.end;
		m.file_offset = ml.offset;
		m.prot = ml.prot;
		err = push_map(l, &m);
	}
	free(line);
	fclose(f);
	free(cache);
	return err;
}

void mt_maps_free(struct mt_map_list *l)
{
	free(l->maps);
	mt_strpool_free(&l->pool);
	memset(l, 0, sizeof(*l));
}
