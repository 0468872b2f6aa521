// SPDX-License-Identifier: MIT
/* Binaries behind the trace's mappings; see binfile.h. */
#include "decode/binfile.h"
#include "util/mt_array.h"
#include "util/regfile.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void mt_bincache_init(struct mt_bincache *c, struct mt_bundle_reader *bundle,
		      const struct mt_sym_options *symopt)
{
	memset(c, 0, sizeof(*c));
	c->bundle = bundle;
	if (symopt)
		c->symopt = *symopt;
	pthread_mutex_init(&c->lock, NULL);
}

static void binfile_free(struct mt_binfile *b)
{
	mt_sym_file_close(b->sym);
	if (b->memfd >= 0)
		close(b->memfd);
	pthread_mutex_destroy(&b->sym_lock);
	free(b->segs);
	free(b->open_path);
	free(b->name);
	free(b);
}

void mt_bincache_fini(struct mt_bincache *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		binfile_free(c->files[i]);
	free(c->files);
	pthread_mutex_destroy(&c->lock);
	memset(c, 0, sizeof(*c));
}

/* Reads the build-id and executable segments of the ELF file at PATH.
 * A file that is not ELF (or unreadable as ELF) keeps is_elf false. */
static int read_elf(struct mt_binfile *b, const char *path)
{
	const void *id;
	ssize_t idlen;
	size_t phnum;
	Elf *elf;
	int fd;

	/* A map record may name anything; only regular files hold code. */
	fd = mt_open_regular(path, NULL);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &phnum)) {
		b->is_elf = true;
		idlen = dwelf_elf_gnu_build_id(elf, &id);
		if (idlen > 0 && (size_t)idlen <= sizeof(b->build_id)) {
			memcpy(b->build_id, id, (size_t)idlen);
			b->build_id_len = (size_t)idlen;
		}
		b->segs = calloc(phnum ? phnum : 1, sizeof(*b->segs));
		for (size_t i = 0; b->segs && i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X) || !ph.p_filesz)
				continue;
			b->segs[b->nsegs++] = (struct mt_exec_seg){ ph.p_offset, ph.p_filesz,
								    ph.p_vaddr };
		}
	}
	elf_end(elf);
	close(fd);
	return 0;
}

static bool same_id(const struct mt_binfile *b, const uint8_t *bid, size_t len)
{
	return b->build_id_len == len && !memcmp(b->build_id, bid, len);
}

/* Puts the bundle's copy of the file into a memfd that libipt and libdw
 * can open by name. */
static int use_embedded(struct mt_bincache *c, struct mt_binfile *b, const char *path,
			const uint8_t *bid, size_t bid_len, char *err, size_t errlen)
{
	const uint8_t *data;
	size_t len, done = 0;
	int idx, rc;

	if (!c->bundle)
		return -1;
	idx = mt_bundle_file_find(c->bundle, bid_len ? bid : NULL, bid_len, path);
	if (idx < 0)
		return -1;
	rc = mt_bundle_file_data(c->bundle, (size_t)idx, &data, &len);
	if (rc < 0) {
		snprintf(err, errlen, "%s: embedded copy unreadable: %s", path,
			 mt_bundle_reader_errmsg(c->bundle));
		return -1;
	}
	b->memfd = memfd_create("mtrace-embedded", MFD_CLOEXEC);
	if (b->memfd < 0)
		goto sys_err;
	while (done < len) {
		ssize_t n = write(b->memfd, data + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto sys_err;
		done += (size_t)n;
	}
	free(b->open_path);
	if (asprintf(&b->open_path, "/proc/self/fd/%d", b->memfd) < 0) {
		b->open_path = NULL;
		goto sys_err;
	}
	b->embedded = true;
	b->nsegs = 0;
	free(b->segs);
	b->segs = NULL;
	b->build_id_len = 0;
	b->is_elf = false;
	read_elf(b, b->open_path);
	return 0;
sys_err:
	snprintf(err, errlen, "%s: cannot stage embedded copy: %s", path, strerror(errno));
	return -1;
}

/* The local file for recorded PATH (--path-map, then --symfs); malloc'd. */
static char *local_path(const struct mt_bincache *c, const char *path)
{
	const char *rest = path, *dir = "";
	char *out;

	for (size_t i = 0; i < c->nmaps; i++) {
		size_t n = strlen(c->maps[i].from);

		while (n > 1 && c->maps[i].from[n - 1] == '/')
			n--;
		/* Whole components only: /opt/app maps /opt/app/x, not /opt/apple. */
		if (!strncmp(path, c->maps[i].from, n) && (path[n] == '/' || !path[n])) {
			dir = c->maps[i].to;
			rest = path + n;
			break;
		}
	}
	if (asprintf(&out, "%s%s%s", c->symfs ? c->symfs : "", dir, rest) < 0)
		return NULL;
	return out;
}

static struct mt_binfile *load(struct mt_bincache *c, const char *path, const uint8_t *bid,
			       size_t bid_len, char *err, size_t errlen)
{
	struct mt_binfile *b = calloc(1, sizeof(*b));
	char where[PATH_MAX + 16] = "";
	const char *copies = c->copies ? c->copies : "the bundle";
	bool local_ok;

	if (!b)
		return NULL;
	b->memfd = -1;
	pthread_mutex_init(&b->sym_lock, NULL);
	b->name = strdup(path);
	b->open_path = local_path(c, path);
	if (!b->name || !b->open_path) {
		binfile_free(b);
		return NULL;
	}
	if (strcmp(b->open_path, path))
		snprintf(where, sizeof(where), " (looked for %s)", b->open_path);
	if (c->embedded_only)
		snprintf(err, errlen, "%s: not embedded in the bundle (--embedded-only ignores local files)",
			 path);
	else if (!bid_len && c->copies_without_id)
		snprintf(err, errlen, "%s: no such file%s, and %s", path, where,
			 c->copies_without_id);
	else
		snprintf(err, errlen, "%s: no such file%s, and no copy in %s", path, where, copies);
	/* A recorded path that is not absolute ("[vdso]") names no file; an
	 * absolute one under a relative --symfs is looked for from here. */
	local_ok = !c->embedded_only && path[0] == '/' && !read_elf(b, b->open_path);
	/* Not under --symfs or the mapped directory: the recorded path (build-ids still guard). */
	if (!local_ok && !c->embedded_only && where[0] && path[0] == '/' && !read_elf(b, path)) {
		free(b->open_path);
		b->open_path = strdup(path);
		local_ok = b->open_path != NULL;
		where[0] = '\0';
	}
	if (local_ok && bid_len && !same_id(b, bid, bid_len))
		snprintf(err, errlen, "%s: local file%s has another build-id, and no copy in %s",
			 path, where, copies);
	/* The bundle's copy wins unless the local file is provably the same. */
	if ((!local_ok || (bid_len && !same_id(b, bid, bid_len))) &&
	    use_embedded(c, b, path, bid, bid_len, err, errlen)) {
		binfile_free(b);
		return NULL;
	}
	return b;
}

struct mt_binfile *mt_bincache_get(struct mt_bincache *c, const char *path, const uint8_t *bid,
				   size_t bid_len, char *err, size_t errlen)
{
	struct mt_binfile *b = NULL;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nfiles; i++) {
		struct mt_binfile *f = c->files[i];

		if (!strcmp(f->name, path) && (!bid_len || same_id(f, bid, bid_len))) {
			b = f;
			goto out;
		}
	}
	b = load(c, path, bid, bid_len, err, errlen);
	if (!b)
		goto out;
	if (MT_ARRAY_RESERVE(c->files, c->files_cap, c->nfiles, 1)) {
		binfile_free(b);
		b = NULL;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	c->files[c->nfiles++] = b;
out:
	pthread_mutex_unlock(&c->lock);
	return b;
}

struct mt_sym_file *mt_binfile_syms(struct mt_bincache *c, struct mt_binfile *b)
{
	if (atomic_load_explicit(&b->sym_ready, memory_order_acquire))
		return b->sym;
	pthread_mutex_lock(&b->sym_lock);
	if (!atomic_load_explicit(&b->sym_ready, memory_order_relaxed)) {
		if (b->is_elf)
			mt_sym_file_open(&b->sym, b->open_path, &c->symopt, b->sym_err,
					 sizeof(b->sym_err));
		atomic_store_explicit(&b->sym_ready, true, memory_order_release);
	}
	pthread_mutex_unlock(&b->sym_lock);
	return b->sym;
}
