// SPDX-License-Identifier: MIT
/*
 * Loading one binary's function symbols into a sorted, non-overlapping
 * table, and address lookup by binary search.
 *
 * libdwfl does the file handling: it reads .symtab, falls back to .dynsym,
 * and finds separate debug files by build-id and .gnu_debuglink (checking
 * that they belong to the binary). The table itself is ours because
 * dwfl's own lookup is neither thread-safe nor aware of PLT stubs.
 */
#include "sym/sym_internal.h"
#include "util/errmsg.h"
#include "util/mt_array.h"
#include "util/regfile.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mt_sym_vec_push(struct mt_sym_vec *vec, const struct mt_sym_raw *s)
{
	if (MT_ARRAY_RESERVE(vec->v, vec->cap, vec->n, 1))
		return -ENOMEM;
	vec->v[vec->n++] = *s;
	return 0;
}

/*
 * Checks what libelf would otherwise only notice lazily: that the file is
 * an ELF object whose headers lie inside the file. The message says which
 * part is wrong.
 */
static int check_elf(const char *path, char *err, size_t errlen, int *type)
{
	const char *kind;
	struct stat st;
	GElf_Ehdr eh;
	Elf *elf;
	int fd, ret;

	fd = mt_open_regular(path, &kind);
	if (fd < 0 && kind)
		return mt_errmsg(err, errlen, EINVAL, "%s: %s, not a regular file", path, kind);
	if (fd < 0 || fstat(fd, &st)) {
		ret = mt_errmsg(err, errlen, errno, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ret = mt_errmsg(err, errlen, EBADMSG, "%s: not an ELF file", path);
		goto out;
	}
	if (!gelf_getehdr(elf, &eh)) {
		ret = mt_errmsg(err, errlen, EBADMSG, "%s: bad ELF header: %s", path,
				elf_errmsg(-1));
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		ret = mt_errmsg(err, errlen, EBADMSG,
				"%s: ELF type %u is neither an executable nor a shared object",
				path, eh.e_type);
		goto out;
	}
	if (eh.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_shnum * eh.e_shentsize > (uint64_t)st.st_size - eh.e_shoff) {
		ret = mt_errmsg(err, errlen, EBADMSG,
				"%s: truncated: section headers end past the file's %lld bytes",
				path, (long long)st.st_size);
		goto out;
	}
	if (eh.e_phoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_phnum * eh.e_phentsize > (uint64_t)st.st_size - eh.e_phoff) {
		ret = mt_errmsg(err, errlen, EBADMSG,
				"%s: truncated: program headers end past the file's %lld bytes",
				path, (long long)st.st_size);
		goto out;
	}
	*type = eh.e_type;
	ret = 0;
out:
	elf_end(elf);
	close(fd);
	return ret;
}

static int binding_rank(const GElf_Sym *sym)
{
	int rank;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		rank = 6;
		break;
	case STB_WEAK:
		rank = 4;
		break;
	default:
		rank = 2;
	}
	/* Among aliases, a sized symbol describes the code better. */
	return rank + (sym->st_size > 0);
}

static int collect_symtab(struct mt_sym_file *f, struct mt_sym_vec *vec)
{
	int n = dwfl_module_getsymtab(f->mod);

	for (int i = 1; i < n; i++) {
		struct mt_sym_raw r = { 0 };
		GElf_Shdr shdr_mem, *shdr;
		GElf_Word shndx;
		GElf_Addr addr;
		Dwarf_Addr bias;
		const char *name;
		GElf_Sym sym;
		Elf *elf;
		int type;

		name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1)
			continue;
		shdr = gelf_getshdr(elf_getscn(elf, shndx), &shdr_mem);
		if (!shdr || !(shdr->sh_flags & SHF_EXECINSTR))
			continue;
		r.addr = addr;
		r.size = sym.st_size;
		r.limit = shdr->sh_addr + bias + shdr->sh_size;
		r.name = name;
		r.rank = binding_rank(&sym);
		if (mt_sym_vec_push(vec, &r))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct mt_sym_raw *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	return strcmp(x->name, y->name);
}

int mt_sym_keep_name(struct mt_sym_file *f, char *owned)
{
	if (MT_ARRAY_RESERVE(f->names, f->names_cap, f->nnames, 1))
		return -ENOMEM;
	f->names[f->nnames++] = owned;
	return 0;
}

/*
 * The display form of NAME: without a symbol version ("fn@@GLIBC_2.34",
 * from .symver in the defining object), demangled. Owned copies are made
 * only when the name changes.
 */
static int set_name(struct mt_sym_file *f, struct mt_sym *s, const char *name)
{
	const char *at = strchr(name, '@');
	char *base = at && at > name ? strndup(name, (size_t)(at - name)) : NULL, *dm;

	if (at && at > name && !base)
		return -ENOMEM;
	if (base && mt_sym_keep_name(f, base)) {
		free(base);
		return -ENOMEM;
	}
	if (base)
		s->name = name = base;
	dm = mt_sym_demangle(name);
	if (dm && mt_sym_keep_name(f, dm)) {
		free(dm);
		return -ENOMEM;
	}
	if (dm)
		s->name = dm;
	return 0;
}

/*
 * Sorts, keeps the best-ranked alias per address, gives every symbol a
 * size (unsized ones reach to the next symbol or their section's end) and
 * clips overlaps so that a binary search finds exactly one symbol.
 */
static int build_table(struct mt_sym_file *f, struct mt_sym_vec *vec)
{
	size_t out = 0;

	if (vec->n)	/* v is NULL when nothing was collected */
		qsort(vec->v, vec->n, sizeof(*vec->v), cmp_raw);
	f->syms = calloc(vec->n ? vec->n : 1, sizeof(*f->syms));
	if (!f->syms)
		return -ENOMEM;
	for (size_t i = 0; i < vec->n; i++) {
		const struct mt_sym_raw *r = &vec->v[i];
		uint64_t end;
		size_t j = i + 1;

		if (i > 0 && vec->v[i - 1].addr == r->addr)
			continue;
		while (j < vec->n && vec->v[j].addr == r->addr)
			j++;
		end = r->size ? r->addr + r->size : r->limit;
		if (j < vec->n && vec->v[j].addr < end)
			end = vec->v[j].addr;
		if (end <= r->addr)
			end = r->addr + 1;
		f->syms[out] = (struct mt_sym){ r->addr, end - r->addr, r->name, r->plt, false };
		if (!r->plt && set_name(f, &f->syms[out], r->name))
			return -ENOMEM;
		out++;
	}
	f->nsyms = out;
	return 0;
}

Dwfl_Module *mt_sym_report(struct mt_sym_file *f, Dwfl **dwfl, Dwfl_Callbacks *cb, int fd)
{
	Dwfl_Module *mod = NULL;
	void **userdata;

	cb->debuginfo_path = &f->debug_path;
	*dwfl = dwfl_begin(cb);
	if (*dwfl) {
		dwfl_report_begin(*dwfl);
		/* Base 0: module addresses are the file's own link-time addresses. */
		mod = dwfl_report_elf(*dwfl, f->path, f->path, fd, 0, false);
		dwfl_report_end(*dwfl, NULL, NULL);
	}
	if (!mod) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = f;
	return mod;
}

int mt_sym_file_open(struct mt_sym_file **out, const char *path, const struct mt_sym_options *opt,
		     char *err, size_t errlen)
{
	struct mt_sym_vec vec = { 0 };
	struct mt_sym_file *f;
	GElf_Addr bias;
	Elf *elf;
	int type = 0, rc;

	*out = NULL;
	elf_version(EV_CURRENT);
	rc = check_elf(path, err, errlen, &type);
	if (rc)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto nomem;
	pthread_mutex_init(&f->dwarf_lock, NULL);
	f->fd = -1;
	f->elf_type = type;
	f->path = strdup(path);
	f->debug_path = strdup(opt && opt->debug_path ? opt->debug_path : ":.debug:/usr/lib/debug");
	if (!f->path || !f->debug_path)
		goto nomem;
	f->cb = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = mt_sym_find_debug,
		.section_address = dwfl_offline_section_address,
	};
	f->mod = mt_sym_report(f, &f->dwfl, &f->cb, -1);
	if (!f->mod)
		goto dwfl_err;
	elf = dwfl_module_getelf(f->mod, &bias);
	if (!elf)
		goto dwfl_err;
	if (collect_symtab(f, &vec) || mt_sym_add_plt(f, elf, &vec) || build_table(f, &vec))
		goto nomem;
	/* The functions no symbol names, in the gaps of that table. */
	if (mt_sym_add_cfi(f, elf))
		goto nomem;
	free(vec.v);
	*out = f;
	return 0;

dwfl_err:
	rc = mt_errmsg(err, errlen, EBADMSG, "%s: %s", path, dwfl_errmsg(-1));
	free(vec.v);
	mt_sym_file_close(f);
	return rc;
nomem:
	rc = mt_errmsg(err, errlen, ENOMEM, "%s: out of memory loading symbols", path);
	free(vec.v);
	mt_sym_file_close(f);
	return rc;
}

void mt_sym_file_close(struct mt_sym_file *f)
{
	if (!f)
		return;
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->dwarf_dwfl)
		dwfl_end(f->dwarf_dwfl);
	for (size_t i = 0; i < f->nnames; i++)
		free(f->names[i]);
	mt_sym_free_inline_names(f);
	free(f->names);
	free(f->syms);
	free(f->path);
	free(f->debug_path);
	pthread_mutex_destroy(&f->dwarf_lock);
	free(f);
}

const struct mt_sym *mt_sym_find(const struct mt_sym_file *f, uint64_t addr, uint64_t *lo,
				 uint64_t *hi)
{
	size_t l = 0, h = f->nsyms;
	const struct mt_sym *s;

	/* Find the last symbol starting at or below addr. */
	while (l < h) {
		size_t mid = l + (h - l) / 2;

		if (f->syms[mid].addr <= addr)
			l = mid + 1;
		else
			h = mid;
	}
	*hi = l < f->nsyms ? f->syms[l].addr : UINT64_MAX;
	if (l == 0) {
		*lo = 0;
		return NULL;
	}
	s = &f->syms[l - 1];
	if (addr - s->addr >= s->size) {
		*lo = s->addr + s->size;
		return NULL;
	}
	*lo = s->addr;
	*hi = s->addr + s->size;
	return s;
}

const struct mt_sym *mt_sym_lookup(const struct mt_sym_file *f, uint64_t addr)
{
	uint64_t lo, hi;

	return mt_sym_find(f, addr, &lo, &hi);
}

size_t mt_sym_count(const struct mt_sym_file *f)
{
	return f->nsyms;
}

const struct mt_sym *mt_sym_at(const struct mt_sym_file *f, size_t i)
{
	return i < f->nsyms ? &f->syms[i] : NULL;
}

size_t mt_sym_build_id(const struct mt_sym_file *f, const uint8_t **bits)
{
	const unsigned char *b;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(f->mod, &b, &vaddr);

	if (n <= 0) {
		*bits = NULL;
		return 0;
	}
	*bits = b;
	return (size_t)n;
}

const char *mt_sym_debug_file(const struct mt_sym_file *f)
{
	const char *debug = NULL;

	dwfl_module_info(f->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	return debug;
}

int mt_sym_elf_type(const struct mt_sym_file *f)
{
	return f->elf_type;
}
