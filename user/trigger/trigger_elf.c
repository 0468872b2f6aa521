// SPDX-License-Identifier: MIT
/*
 * Uprobe placement with libelf: a function name or link-time address in an
 * executable or shared library becomes the file offset the kernel's uprobe
 * API wants. The file is read from disk, so a library the target has not
 * loaded yet works the same, and PIE, non-PIE and libraries need no special
 * cases: a link-time address maps to a file offset through its PT_LOAD.
 */
#include "trigger/trigger.h"
#include "trigger/trigger_import.h"
#include "util/errmsg.h"
#include "util/regfile.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SUGGESTIONS 3
#define SUGGEST_DISTANCE 2

struct found {
	bool any;		/* a defined symbol of that name exists */
	bool imported;		/* an undefined one (the program calls it) */
	GElf_Sym sym;		/* first defined match */
	uint64_t other;		/* a second, different address, or 0 */
	char near[MAX_SUGGESTIONS][128];
	int nr_near;
};

/* Edit distance of A and B, or LIMIT+1 once it is certainly above LIMIT. */
static size_t distance(const char *a, const char *b, size_t limit)
{
	size_t la = strlen(a), lb = strlen(b), row[129];

	if (lb > 128 || (la > lb ? la - lb : lb - la) > limit)
		return limit + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0], best;

		row[0] = best = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
	}
	return row[lb];
}

static void note_near(struct found *f, const char *name)
{
	for (int i = 0; i < f->nr_near; i++)
		if (!strcmp(f->near[i], name))
			return;
	if (f->nr_near < MAX_SUGGESTIONS && strlen(name) < sizeof(f->near[0]))
		strcpy(f->near[f->nr_near++], name);
}

/* Looks NAME up in one symbol table; also gathers near misses. */
static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name,
			struct found *f)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym s;
		const char *sname;

		if (!gelf_getsym(data, i, &s))
			continue;
		sname = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!sname || !*sname)
			continue;
		if (s.st_shndx == SHN_UNDEF) {
			f->imported |= !strcmp(sname, name);
			continue;
		}
		if (!strcmp(sname, name)) {
			if (!f->any) {
				f->any = true;
				f->sym = s;
			} else if (s.st_value != f->sym.st_value && !f->other) {
				f->other = s.st_value;
			}
		} else if (GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			   distance(name, sname, SUGGEST_DISTANCE) <= SUGGEST_DISTANCE) {
			note_near(f, sname);
		}
	}
}

/* Looks NAME up in ELF's symbol tables (.dynsym only when DYNAMIC_ONLY);
 * returns whether it has any, and *SYMTAB whether a .symtab among them. */
static bool scan_tables(Elf *elf, const char *name, bool dynamic_only, struct found *f,
			bool *symtab)
{
	Elf_Scn *scn = NULL;
	bool any = false;
	GElf_Shdr sh;

	*symtab = false;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM &&
						(dynamic_only || sh.sh_type != SHT_SYMTAB)))
			continue;
		any = true;
		*symtab |= sh.sh_type == SHT_SYMTAB;
		scan_symtab(elf, scn, &sh, name, f);
	}
	return any;
}

bool mt_trigger_elf_defines(Elf *elf, const char *name)
{
	struct found f = { 0 };
	bool symtab;
	int type;

	scan_tables(elf, name, true, &f, &symtab);
	type = GELF_ST_TYPE(f.sym.st_info);
	return f.any && (type == STT_FUNC || type == STT_GNU_IFUNC);
}

/* The message for a SYMBOL that ELF does not define, into ERR. */
static int not_defined(Elf *elf, const struct mt_trigger_spec *spec, const struct found *f,
		       bool have_symtab, char *err, size_t errlen)
{
	const char *kind = mt_trigger_kind_name(spec->kind);
	char lib[PATH_MAX], needed[512];
	int n;

	if (f->imported) {
		if (mt_trigger_import_source(elf, spec->path, spec->symbol, lib, sizeof(lib), needed,
					     sizeof(needed)))
			snprintf(err, errlen, "'%s' is not in %s, which calls it from %s: "
				 "probe it there (%s:%s:%s)", spec->symbol, spec->path, lib, kind,
				 lib, spec->symbol);
		else
			snprintf(err, errlen, "'%s' is not in %s, which calls it from one of its "
				 "libraries (%s): probe it in the one that defines it",
				 spec->symbol, spec->path, needed[0] ? needed : "none named");
		return -ENOENT;
	}
	if (have_symtab)
		n = snprintf(err, errlen, "function '%s' not found in %s", spec->symbol, spec->path);
	else
		n = snprintf(err, errlen, "function '%s' not found in %s, which is stripped (only "
			     "its exported functions have names): give the address as %s:%s:0xADDR",
			     spec->symbol, spec->path, kind, spec->path);
	for (int i = 0; i < f->nr_near && n > 0 && (size_t)n < errlen; i++)
		n += snprintf(err + n, errlen - n, "%s%s", i ? ", " : " (did you mean: ",
			      f->near[i]);
	if (f->nr_near && n > 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - n, "?)");
	return -ENOENT;
}

static int lookup_symbol(Elf *elf, const struct mt_trigger_spec *spec, uint64_t *vaddr,
			 char *err, size_t errlen)
{
	struct found f = { 0 };
	bool have_symtab;

	if (!scan_tables(elf, spec->symbol, false, &f, &have_symtab)) {
		snprintf(err, errlen, "%s has no symbol table (stripped?): give the address "
			 "as %s:%s:0xADDR", spec->path, mt_trigger_kind_name(spec->kind), spec->path);
		return -ENOENT;
	}
	if (!f.any)
		return not_defined(elf, spec, &f, have_symtab, err, errlen);
	if (f.other) {
		snprintf(err, errlen, "function '%s' is ambiguous in %s: defined at 0x%llx and "
			 "0x%llx (pick one with %s:%s:0xADDR)", spec->symbol, spec->path,
			 (unsigned long long)f.sym.st_value, (unsigned long long)f.other,
			 mt_trigger_kind_name(spec->kind), spec->path);
		return -EINVAL;
	}
	if (GELF_ST_TYPE(f.sym.st_info) == STT_GNU_IFUNC) {
		snprintf(err, errlen, "'%s' in %s is an IFUNC: its symbol is the resolver that "
			 "picks an implementation at load time, not the code that runs; probe "
			 "the implementation by name or address instead", spec->symbol, spec->path);
		return -EINVAL;
	}
	if (GELF_ST_TYPE(f.sym.st_info) != STT_FUNC) {
		snprintf(err, errlen, "'%s' in %s is not a function", spec->symbol, spec->path);
		return -EINVAL;
	}
	if (f.sym.st_size && spec->offset >= f.sym.st_size) {
		snprintf(err, errlen, "offset +%llu is outside '%s' (%llu bytes long)",
			 (unsigned long long)spec->offset, spec->symbol,
			 (unsigned long long)f.sym.st_size);
		return -EINVAL;
	}
	*vaddr = f.sym.st_value + spec->offset;
	return 0;
}

/* The function symbol whose code holds VADDR (one starting there first,
 * an IFUNC first among those), with its NAME; false when the symbol
 * tables name none. */
static bool function_holding(Elf *elf, uint64_t vaddr, GElf_Sym *out, const char **name)
{
	Elf_Scn *scn = NULL;
	bool got = false;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Sym s;
			int type;

			if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || vaddr < s.st_value ||
			    vaddr - s.st_value >= (s.st_size ? s.st_size : 1))
				continue;
			/* An IFUNC's resolver has a name of its own at its address. */
			if (got && out->st_value == vaddr &&
			    (s.st_value != vaddr || GELF_ST_TYPE(out->st_info) == STT_GNU_IFUNC))
				continue;
			*out = s;
			*name = elf_strptr(elf, sh.sh_link, s.st_name);
			got = true;
		}
	}
	return got;
}

/*
 * An address given for a symbol (0xADDR) gets the checks a name gets where
 * the symbol tables tell: not an IFUNC's resolver, and for a uretprobe a
 * function's first instruction (elsewhere the return address it swaps is
 * not on the stack's top). A stripped binary's addresses are taken as
 * given.
 */
static int check_address(Elf *elf, const struct mt_trigger_spec *spec, uint64_t vaddr,
			 char *err, size_t errlen)
{
	const char *name = NULL;
	GElf_Sym s = { 0 };

	if (!function_holding(elf, vaddr, &s, &name))
		return 0;
	if (!name || !*name)
		name = "a function";
	if (GELF_ST_TYPE(s.st_info) == STT_GNU_IFUNC && s.st_value == vaddr)
		return mt_errmsg(err, errlen, EINVAL,
				 "0x%llx in %s is the IFUNC '%s': the resolver that picks an implementation at load time, not the code that runs; probe the implementation",
				 (unsigned long long)vaddr, spec->path, name);
	if (spec->kind == MT_TRIG_URETPROBE && s.st_value != vaddr)
		return mt_errmsg(err, errlen, EINVAL,
				 "0x%llx in %s is %s+%llu, not a function's start: a uretprobe probes a function's entry",
				 (unsigned long long)vaddr, spec->path, name,
				 (unsigned long long)(vaddr - s.st_value));
	return 0;
}

/* The file offset of link-time address VADDR inside an executable segment. */
static int vaddr_to_offset(Elf *elf, const char *path, uint64_t vaddr, uint64_t *off,
			   char *err, size_t errlen)
{
	size_t n;

	if (elf_getphdrnum(elf, &n)) {
		snprintf(err, errlen, "%s: cannot read program headers: %s", path, elf_errmsg(-1));
		return -EBADMSG;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			size_t size = 0;

			/* A corrupt segment may point past the file, or wrap around. */
			elf_rawfile(elf, &size);
			if (ph.p_offset > size || vaddr - ph.p_vaddr >= size - ph.p_offset) {
				snprintf(err, errlen, "%s: the segment holding 0x%llx lies outside "
					 "the file (corrupt program header)", path,
					 (unsigned long long)vaddr);
				return -EBADMSG;
			}
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	snprintf(err, errlen, "address 0x%llx is not in an executable segment of %s",
		 (unsigned long long)vaddr, path);
	return -EINVAL;
}

int mt_trigger_resolve(const struct mt_trigger_spec *spec, uint64_t *file_offset,
		       char *err, size_t errlen)
{
	uint64_t vaddr;

	return mt_trigger_locate(spec, &vaddr, file_offset, err, errlen);
}

int mt_trigger_locate(const struct mt_trigger_spec *spec, uint64_t *link_addr,
		      uint64_t *file_offset, char *err, size_t errlen)
{
	uint64_t vaddr = spec->addr;
	const char *kind;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int fd, rc = -EBADMSG;

	if (!spec->path) {
		snprintf(err, errlen, "%s triggers name no binary to resolve in",
			 mt_trigger_kind_name(spec->kind));
		return -EINVAL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -ENOSYS;
	}
	fd = mt_open_regular(spec->path, &kind);
	if (fd < 0 && kind)
		return mt_errmsg(err, errlen, EINVAL, "%s is %s, not an executable or shared library",
				 spec->path, kind);
	if (fd < 0)
		return mt_errmsg(err, errlen, errno, "cannot open %s: %s", spec->path,
				 strerror(errno));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "%s is not an ELF file", spec->path);
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		snprintf(err, errlen, "%s is not an executable or shared library", spec->path);
		goto out;
	}
	if ((spec->symbol && (rc = lookup_symbol(elf, spec, &vaddr, err, errlen))) ||
	    (!spec->symbol && (rc = check_address(elf, spec, vaddr, err, errlen))))
		goto out;
	*link_addr = vaddr;
	rc = vaddr_to_offset(elf, spec->path, vaddr, file_offset, err, errlen);
out:
	elf_end(elf);
	close(fd);
	return rc;
}
