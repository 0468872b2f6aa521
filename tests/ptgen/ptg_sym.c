// SPDX-License-Identifier: MIT
/* Symbol addresses from ELF symbol tables (libelf). */
#include "ptg_sym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int find_in_symtab(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *vaddr)
{
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return -ENOENT;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *n;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value)
			continue;
		n = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (n && !strcmp(n, name)) {
			*vaddr = sym.st_value;
			return 0;
		}
	}
	return -ENOENT;
}

static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int ptg_sym_lookup(const char *path, const char *name, uint64_t *vaddr, uint64_t *file_off,
		   bool *is_dyn)
{
	int fd, err = -ENOENT;
	Elf *elf;
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ptgen: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh)) {
		fprintf(stderr, "ptgen: %s: not an ELF file\n", path);
		err = -EINVAL;
		goto out;
	}
	*is_dyn = eh.e_type == ET_DYN;
	for (int pass = 0; pass < 2 && err; pass++) {
		Elf_Scn *scn = NULL;

		while (err && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				err = find_in_symtab(elf, scn, name, vaddr);
		}
	}
	if (!err)
		err = vaddr_to_offset(elf, *vaddr, file_off);
	if (err)
		fprintf(stderr, "ptgen: %s: no function symbol '%s'\n", path, name);
out:
	elf_end(elf);
	close(fd);
	return err;
}

int ptg_sym_addr(const struct ptg_image *img, const char *path, const char *name,
		 uint64_t *addr)
{
	uint64_t vaddr, off;
	bool dyn;
	int err = ptg_sym_lookup(path, name, &vaddr, &off, &dyn);

	if (err)
		return err;
	for (size_t i = 0; i < img->nseg; i++) {
		const struct ptg_seg *s = &img->seg[i];

		if (!strcmp(s->path, path) && off >= s->offset &&
		    off < s->offset + (s->end - s->start)) {
			*addr = s->start + (off - s->offset);
			return 0;
		}
	}
	fprintf(stderr, "ptgen: %s is not mapped at file offset 0x%llx\n", path,
		(unsigned long long)off);
	return -ENOENT;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int collect(Elf_Scn *scn, uint64_t bias, const struct ptg_image *img, uint64_t **funcs,
		   size_t *n, size_t *cap)
{
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value || !sym.st_size || !ptg_image_find(img, sym.st_value + bias))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 1024;
			uint64_t *f = realloc(*funcs, c * sizeof(*f));

			if (!f)
				return -ENOMEM;
			*funcs = f;
			*cap = c;
		}
		(*funcs)[(*n)++] = sym.st_value + bias;
	}
	return 0;
}

int ptg_sym_functions(const char *path, uint64_t bias, const struct ptg_image *img,
		      uint64_t **funcs, size_t *n)
{
	int fd, err = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t cap = 0, k = 0;

	*funcs = NULL;
	*n = 0;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ptgen: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			err = collect(scn, bias, img, funcs, n, &cap);
	}
	elf_end(elf);
	close(fd);
	if (!err && !*n) {
		fprintf(stderr, "ptgen: %s: no function symbols in executable code\n", path);
		err = -ENOENT;
	}
	if (err) {
		free(*funcs);
		*funcs = NULL;
		*n = 0;
		return err;
	}
	qsort(*funcs, *n, sizeof(**funcs), cmp_u64);
	for (size_t i = 0; i < *n; i++)
		if (!k || (*funcs)[k - 1] != (*funcs)[i])
			(*funcs)[k++] = (*funcs)[i];
	*n = k;
	return 0;
}

int ptg_sym_is_dyn(const char *path, bool *is_dyn)
{
	int fd, err = 0;
	Elf *elf;
	GElf_Ehdr eh;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ptgen: cannot open %s: %s\n", path, strerror(errno));
		return -errno;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		fprintf(stderr, "ptgen: %s: not an ELF executable or shared library\n", path);
		err = -EINVAL;
	} else {
		*is_dyn = eh.e_type == ET_DYN;
	}
	elf_end(elf);
	close(fd);
	return err;
}
