// SPDX-License-Identifier: MIT
/* Captured address space: /proc/PID/maps plus executable bytes. */
#include "ptg_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add_seg(struct ptg_image *img, const struct ptg_seg *s)
{
	struct ptg_seg *n = realloc(img->seg, (img->nseg + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	img->seg = n;
	img->seg[img->nseg++] = *s;
	return 0;
}

/* Executable bytes through /proc/PID/mem: the vDSO has no file, and the
 * loader may have relocated or patched text that the file does not show. */
static int read_mem(int memfd, struct ptg_seg *s)
{
	size_t len = s->end - s->start, done = 0;

	s->bytes = malloc(len);
	if (!s->bytes)
		return -ENOMEM;
	while (done < len) {
		ssize_t r = pread(memfd, s->bytes + done, len - done, (off_t)(s->start + done));

		if (r <= 0) {
			fprintf(stderr, "ptgen: cannot read %s at 0x%" PRIx64 ": %s\n",
				s->path, s->start + done, r ? strerror(errno) : "end of file");
			return -EIO;
		}
		done += (size_t)r;
	}
	return 0;
}

/* Reads @pid's maps into @img, with the bytes of the executable ones. */
static int read_maps(struct ptg_image *img, pid_t pid)
{
	char path[64], line[4096];
	FILE *maps;
	int memfd, err = 0;

	memset(img, 0, sizeof(*img));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	memfd = open(path, O_RDONLY | O_CLOEXEC);
	if (!maps || memfd < 0) {
		fprintf(stderr, "ptgen: cannot open %s: %s\n", path, strerror(errno));
		err = -errno;
		goto out;
	}
	while (!err && fgets(line, sizeof(line), maps)) {
		struct ptg_seg s = { 0 };
		char file[4096] = "";
		int n = sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s %4095[^\n]",
			       &s.start, &s.end, s.perms, &s.offset, file);

		if (n < 4 || s.end <= s.start) {
			fprintf(stderr, "ptgen: bad maps line: %s", line);
			err = -EINVAL;
			break;
		}
		/* [vsyscall] is not readable through /proc/PID/mem and is
		 * never executed by current libc. */
		if (!strcmp(file, "[vsyscall]"))
			continue;
		s.path = strdup(file);
		if (!s.path) {
			err = -ENOMEM;
			break;
		}
		if (s.perms[2] == 'x')
			err = read_mem(memfd, &s);
		if (!err)
			err = add_seg(img, &s);
		if (err) {
			free(s.path);
			free(s.bytes);
		}
	}
out:
	if (maps)
		fclose(maps);
	if (memfd >= 0)
		close(memfd);
	if (err)
		ptg_image_fini(img);
	return err;
}

int ptg_image_capture(struct ptg_image *img, pid_t pid)
{
	return read_maps(img, pid);
}

static bool same_code(const struct ptg_seg *a, const struct ptg_seg *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       !strcmp(a->perms, b->perms) && !strcmp(a->path, b->path);
}

static int add_event(struct ptg_map_event **ev, size_t *nev, const struct ptg_seg *s, int thread,
		     size_t index, bool unmapped)
{
	struct ptg_map_event *v = realloc(*ev, (*nev + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	*ev = v;
	v[*nev] = (struct ptg_map_event){ thread, index, unmapped, 0, s->start, s->end, s->offset,
					  "", strdup(s->path), s->bytes };
	memcpy(v[*nev].perms, s->perms, sizeof(s->perms));
	if (!v[*nev].path)
		return -ENOMEM;
	(*nev)++;
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct ptg_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int ptg_image_refresh(struct ptg_image *img, pid_t pid, int thread, size_t index,
		      struct ptg_map_event **ev, size_t *nev)
{
	struct ptg_image fresh, old = *img;
	int err = read_maps(&fresh, pid);

	for (size_t i = 0; !err && i < fresh.nseg; i++) {
		struct ptg_seg *f = &fresh.seg[i];
		bool known = false;

		for (size_t k = 0; f->bytes && k < old.nseg && !known; k++) {
			struct ptg_seg *o = &old.seg[k];

			if (o->bytes && !o->gone && same_code(o, f) &&
			    !memcmp(o->bytes, f->bytes, f->end - f->start)) {
				known = true;
				free(f->bytes);
				f->bytes = o->bytes;
				o->bytes = NULL;
			}
		}
		if (f->bytes && !known)
			err = add_event(ev, nev, f, thread, index, false);
	}
	/* Code that went away (or was there before and is still gone) stays
	 * in the image, where nothing new is. */
	for (size_t k = 0; !err && k < old.nseg; k++) {
		struct ptg_seg *o = &old.seg[k];

		if (!o->bytes)
			continue;
		if (!o->gone)
			err = add_event(ev, nev, o, thread, index, true);
		o->gone = true;
		for (size_t i = 0; !err && i < fresh.nseg; i++) {
			struct ptg_seg *f = &fresh.seg[i];

			if (f->start >= o->end || f->end <= o->start)
				continue;
			if (f->bytes) {
				fprintf(stderr, "ptgen: new code at 0x%" PRIx64 " where %s had code: "
					"not supported\n", f->start, o->path[0] ? o->path : "anonymous");
				err = -EINVAL;
			} else {
				/* A mapping without code over old code: the
				 * code is what the generator needs. */
				free(f->path);
				fresh.seg[i--] = fresh.seg[--fresh.nseg];
			}
		}
		if (!err)
			err = add_seg(&fresh, o);
		if (!err)
			*o = (struct ptg_seg){ 0 };
	}
	if (err) {
		ptg_image_fini(&fresh);
		return err;
	}
	qsort(fresh.seg, fresh.nseg, sizeof(*fresh.seg), cmp_seg);
	ptg_image_fini(&old);
	*img = fresh;
	return 0;
}

int ptg_image_load_elf(struct ptg_image *img, const char *path, uint64_t bias)
{
	int fd, err = 0;
	Elf *elf = NULL;
	size_t nph;

	memset(img, 0, sizeof(*img));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ptgen: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph)) {
		fprintf(stderr, "ptgen: %s: not an ELF file\n", path);
		err = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < nph && !err; i++) {
		GElf_Phdr ph;
		struct ptg_seg s = { 0 };

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    !ph.p_filesz)
			continue;
		s.start = ph.p_vaddr + bias;
		s.end = s.start + ph.p_filesz;
		s.offset = ph.p_offset;
		memcpy(s.perms, "r-xp", 5);
		s.path = strdup(path);
		s.bytes = malloc(ph.p_filesz);
		if (!s.path || !s.bytes)
			err = -ENOMEM;
		else if (pread(fd, s.bytes, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			err = -EIO;
		if (!err)
			err = add_seg(img, &s);
		if (err) {
			fprintf(stderr, "ptgen: %s: cannot load segment %zu\n", path, i);
			free(s.path);
			free(s.bytes);
		}
	}
	if (!err && !img->nseg) {
		fprintf(stderr, "ptgen: %s: no executable segment\n", path);
		err = -EINVAL;
	}
out:
	elf_end(elf);
	close(fd);
	if (err)
		ptg_image_fini(img);
	return err;
}

const struct ptg_seg *ptg_image_find(const struct ptg_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nseg;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct ptg_seg *s = &img->seg[mid];

		if (addr < s->start)
			hi = mid;
		else if (addr >= s->end)
			lo = mid + 1;
		else
			return s->bytes ? s : NULL;
	}
	return NULL;
}

size_t ptg_image_read(const struct ptg_image *img, uint64_t addr, uint8_t *buf, size_t n)
{
	const struct ptg_seg *s = ptg_image_find(img, addr);
	size_t avail;

	if (!s)
		return 0;
	avail = s->end - addr;
	if (n > avail)
		n = avail;
	memcpy(buf, s->bytes + (addr - s->start), n);
	return n;
}

void ptg_image_fini(struct ptg_image *img)
{
	for (size_t i = 0; i < img->nseg; i++) {
		free(img->seg[i].path);
		free(img->seg[i].bytes);
	}
	free(img->seg);
	memset(img, 0, sizeof(*img));
}
