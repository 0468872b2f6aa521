// SPDX-License-Identifier: MIT
/*
 * Names for x86-64 PLT stubs ("malloc@plt").
 *
 * PLT entries carry no symbols; binutils synthesizes them by decoding each
 * entry's indirect jump, and libelf/libdw offer nothing equivalent. We do
 * the same: find the `jmp *disp32(%rip)` in every entry of .plt, .plt.sec
 * and .plt.got, compute the GOT slot it reads, and name the entry after
 * the dynamic symbol whose JUMP_SLOT or GLOB_DAT relocation fills that
 * slot. Matching by slot address (rather than by entry order) works for
 * lazy, -z now, IBT (.plt.sec) and address-taken (.plt.got) layouts alike.
 * A call to an IFUNC that cannot be preempted (inside the C library:
 * qsort's memcpy) goes through a slot filled by an IRELATIVE relocation,
 * which has no symbol but the resolver's address as addend: the stub is
 * named after the IFUNC symbol at that address (objdump only shows
 * "*ABS*+0xADDR@plt").
 */
#include "sym/sym_internal.h"
#include "util/mt_array.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct got_slot {
	uint64_t addr;
	const char *name;
	int rank;		/* collect_ifuncs(): of the name among aliases */
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int push_slot(struct got_slot **slots, size_t *n, size_t *cap, uint64_t addr,
		     const char *name, int rank)
{
	if (MT_ARRAY_RESERVE(*slots, *cap, *n, 1))
		return -ENOMEM;
	(*slots)[(*n)++] = (struct got_slot){ addr, name, rank };
	return 0;
}

/* Rank of an IFUNC's name among aliases at one address: global before
 * local or weak, then fewer leading underscores (rawmemchr, not
 * __rawmemchr). Lower is better. */
static int ifunc_rank(const GElf_Sym *s, const char *name)
{
	int r = GELF_ST_BIND(s->st_info) == STB_GLOBAL ? 0 : 100;

	while (*name++ == '_')
		r++;
	return r;
}

/* IFUNC symbols of .dynsym and .symtab by address (their resolvers), one
 * name per address, sorted. */
static struct got_slot *collect_ifuncs(Elf *elf, size_t *nout)
{
	struct got_slot *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;
			size_t k;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC || !s.st_value || !name || !*name)
				continue;
			for (k = 0; k < n && v[k].addr != s.st_value; k++)
				;
			if (k < n) {
				if (ifunc_rank(&s, name) < v[k].rank) {
					v[k].name = name;
					v[k].rank = ifunc_rank(&s, name);
				}
				continue;
			}
			if (push_slot(&v, &n, &cap, s.st_value, name, ifunc_rank(&s, name))) {
				n = 0;
				goto out;
			}
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_slot);
out:
	if (!n) {
		free(v);
		v = NULL;
	}
	*nout = n;
	return v;
}

static const char *slot_name(const struct got_slot *slots, size_t n, uint64_t addr)
{
	struct got_slot key = { addr, NULL, 0 };
	const struct got_slot *s = n ? bsearch(&key, slots, n, sizeof(*slots), cmp_slot) : NULL;

	return s ? s->name : NULL;
}

/* GOT slots filled by symbol-carrying relocations, or by IRELATIVE ones
 * whose resolver is a named IFUNC, sorted by address. */
static struct got_slot *collect_slots(Elf *elf, size_t *nslots)
{
	struct got_slot *slots = NULL;
	size_t n = 0, cap = 0, nifuncs = 0;
	struct got_slot *ifuncs = collect_ifuncs(elf, &nifuncs);
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *rel, *syms;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		rel = elf_getdata(scn, NULL);
		syms = elf_getdata(symscn, NULL);
		if (!rel || !syms)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym s;
			const char *name;
			int type;

			if (!gelf_getrela(rel, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_IRELATIVE)
				name = slot_name(ifuncs, nifuncs, (uint64_t)r.r_addend);
			else if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			else if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			else
				name = elf_strptr(elf, symsh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (push_slot(&slots, &n, &cap, r.r_offset, name, 0)) {
				free(slots);
				free(ifuncs);
				return NULL;
			}
		}
	}
	free(ifuncs);
	if (n)
		qsort(slots, n, sizeof(*slots), cmp_slot);
	*nslots = n;
	return slots;
}

/*
 * The GOT address read by the entry's indirect jump, or 0. Accepted forms:
 * jmp, bnd jmp, and either after endbr64.
 */
static uint64_t entry_got(const uint8_t *p, size_t len, uint64_t addr)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && !memcmp(p, endbr64, sizeof(endbr64)))
		i = sizeof(endbr64);
	if (i < len && p[i] == 0xf2)	/* bnd prefix */
		i++;
	if (i + 6 > len || p[i] != 0xff || p[i + 1] != 0x25)
		return 0;
	memcpy(&disp, p + i + 2, sizeof(disp));
	return addr + i + 6 + (int64_t)disp;
}

static char *plt_name(const char *name)
{
	char *dm = mt_sym_demangle(name), *out;

	if (asprintf(&out, "%s@plt", dm ? dm : name) < 0)
		out = NULL;
	free(dm);
	return out;
}

int mt_sym_add_plt(struct mt_sym_file *f, Elf *elf, struct mt_sym_vec *vec)
{
	struct got_slot *slots;
	Elf_Scn *scn = NULL;
	size_t nslots = 0, shstrndx;
	GElf_Ehdr eh;
	int ret = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	slots = collect_slots(elf, &nslots);
	if (!nslots)
		return 0;
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		const char *sname;
		Elf_Data *d;
		GElf_Shdr sh;
		size_t ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sname || (strcmp(sname, ".plt") && strcmp(sname, ".plt.sec") &&
			       strcmp(sname, ".plt.got")))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		ent = sh.sh_entsize ? sh.sh_entsize : 16;
		for (size_t off = 0; off + ent <= sh.sh_size; off += ent) {
			uint64_t at = sh.sh_addr + off;
			const char *name = slot_name(slots, nslots,
						     entry_got((const uint8_t *)d->d_buf + off,
							       ent, at));
			struct mt_sym_raw r = { at, ent, at + ent, NULL, 8, true };
			char *owned;

			if (!name)
				continue;
			owned = plt_name(name);
			if (!owned || mt_sym_keep_name(f, owned)) {
				free(owned);
				ret = -ENOMEM;
				break;
			}
			r.name = owned;
			ret = mt_sym_vec_push(vec, &r);
			if (ret)
				break;
		}
	}
	free(slots);
	return ret;
}
