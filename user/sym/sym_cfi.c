// SPDX-License-Identifier: MIT
/*
 * Functions without symbols, from the call-frame information.
 *
 * Stripped binaries (most distribution libraries without their debug
 * package) keep only their exported symbols, so their internal functions
 * fall into the gaps between those and would all be one unknown region.
 * Every function the compiler emitted still has an FDE in .eh_frame
 * (unwinding needs it), and .eh_frame_hdr lists their start addresses in
 * order for the unwinder's binary search. Each start no symbol covers
 * becomes an anonymous function (mt_sym.anon) ending where its FDE's range
 * does. libdw splits .eh_frame into CIEs and FDEs (dwarf_next_cfi()) but
 * decodes no FDE's range (dwarf_frame_info() gives one row's), so the
 * range is read here in the encoding its CIE's augmentation names, and
 * trusted only when the FDE's own start decodes to the table's. Real
 * symbols always win: an FDE inside a symbol's range adds nothing.
 */
#include "sym/sym_internal.h"
#include "util/mt_array.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* .eh_frame_hdr's fixed part and the encodings every toolchain writes:
 * eh_frame_ptr pc-relative, fde_count a plain 32-bit number, the table
 * pairs of 32-bit offsets from the section's start. */
#define HDR_SIZE 12
#define ENC_PCREL_SDATA4 (DW_EH_PE_pcrel | DW_EH_PE_sdata4)
#define ENC_DATAREL_SDATA4 (DW_EH_PE_datarel | DW_EH_PE_sdata4)

static int32_t get_s32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return (int32_t)v;
}

/* ELF's section named NAME, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* The executable sections' address ranges, sorted: where functions may be. */
struct code {
	struct range {
		uint64_t lo, hi;
	} *v;
	size_t n;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int code_ranges(Elf *elf, struct code *c)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_EXECINSTR) &&
		    shdr.sh_type == SHT_PROGBITS && shdr.sh_size &&
		    shdr.sh_addr <= UINT64_MAX - shdr.sh_size) {
			if (MT_ARRAY_RESERVE(c->v, cap, c->n, 1))
				return -ENOMEM;
			c->v[c->n++] = (struct range){ shdr.sh_addr, shdr.sh_addr + shdr.sh_size };
		}
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cmp_range);
	return 0;
}

/* The end of the executable section holding ADDR, or 0 when none does
 * (the last one starting at or below it, by binary search). */
static uint64_t code_limit(const struct code *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < c->v[lo - 1].hi ? c->v[lo - 1].hi : 0;
}

/* .eh_frame: its data, address and identity for libdw, and the CIE last
 * looked up with the FDE pointer encoding it names. */
struct eh_frame {
	Elf_Data *data;
	uint64_t addr;
	const unsigned char *ident;
	Dwarf_Off cie;
	int enc;
};

/* Bytes of a pointer in encoding ENC (0: one not handled: LEB128, omitted). */
static size_t enc_size(int enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/* The FDE pointer encoding of the CIE at OFF ('R' of its augmentation;
 * absolute without one), or -1 when its augmentation is not understood. */
static int cie_encoding(struct eh_frame *eh, Dwarf_Off off)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const uint8_t *d, *dend;
	const char *a;

	if (eh->cie == off)
		return eh->enc;
	eh->cie = off;
	eh->enc = -1;
	if (dwarf_next_cfi(eh->ident, eh->data, true, off, &next, &e) || !dwarf_cfi_cie_p(&e))
		return -1;
	a = e.cie.augmentation;
	d = e.cie.augmentation_data;
	dend = d + e.cie.augmentation_data_size;
	if (a[0] != 'z' || !d)
		return -1;
	for (a++; *a && d < dend; a++) {
		if (*a == 'R') {
			eh->enc = *d;
			return eh->enc;
		}
		if (*a == 'L')
			d++;
		else if (*a == 'P' && enc_size(*d))
			d += 1 + enc_size(*d);
		else if (*a != 'S' && *a != 'B')
			return -1;
	}
	eh->enc = *a ? -1 : DW_EH_PE_absptr;
	return eh->enc;
}

/* N bytes at P as a number, sign-extended when SIGNED_. */
static uint64_t get_n(const uint8_t *p, size_t n, int signed_)
{
	uint64_t v = 0;

	memcpy(&v, p, n);	/* little-endian: x86-64 only */
	if (signed_ && n < 8 && (v >> (8 * n - 1) & 1))
		v |= ~0ull << (8 * n);
	return v;
}

/* The end of the function starting at START whose FDE is at .eh_frame
 * address AT, or 0 when the FDE cannot be read or is not START's. */
static uint64_t fde_end(struct eh_frame *eh, uint64_t at, uint64_t start)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	uint64_t init, range;
	size_t n;
	int enc;

	if (at < eh->addr || at - eh->addr >= eh->data->d_size ||
	    dwarf_next_cfi(eh->ident, eh->data, true, at - eh->addr, &next, &e) ||
	    dwarf_cfi_cie_p(&e))
		return 0;
	enc = cie_encoding(eh, e.fde.CIE_pointer);
	n = enc < 0 ? 0 : enc_size(enc);
	if (!n || e.fde.end - e.fde.start < (ptrdiff_t)(2 * n))
		return 0;
	init = get_n(e.fde.start, n, enc & 0x08);
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		init += eh->addr + (uint64_t)(e.fde.start - (const uint8_t *)eh->data->d_buf);
	else if ((enc & 0x70) != DW_EH_PE_absptr)
		return 0;
	range = get_n(e.fde.start + n, n, 0);
	return init == start && range && range <= UINT64_MAX - start ? start + range : 0;
}

/* Merges the N anonymous functions A (in address order, each in a gap of
 * F's table) into the table, each clipped at what follows it. */
static int merge(struct mt_sym_file *f, const struct mt_sym *a, size_t n)
{
	struct mt_sym *v = malloc((f->nsyms + n) * sizeof(*v));
	size_t i = 0, j = 0, out = 0;

	if (!v)
		return -ENOMEM;
	while (i < f->nsyms || j < n) {
		uint64_t end;

		if (j == n || (i < f->nsyms && f->syms[i].addr < a[j].addr)) {
			v[out++] = f->syms[i++];
			continue;
		}
		end = a[j].addr + a[j].size;
		if (i < f->nsyms && f->syms[i].addr < end)
			end = f->syms[i].addr;
		if (j + 1 < n && a[j + 1].addr < end)
			end = a[j + 1].addr;
		if (end > a[j].addr)
			v[out++] = (struct mt_sym){ a[j].addr, end - a[j].addr, "", false, true };
		j++;
	}
	free(f->syms);
	f->syms = v;
	f->nsyms = out;
	return 0;
}

int mt_sym_add_cfi(struct mt_sym_file *f, Elf *elf)
{
	GElf_Shdr shdr = { 0 }, eshdr = { 0 };
	Elf_Scn *scn = find_section(elf, ".eh_frame_hdr", &shdr);
	Elf_Scn *escn = find_section(elf, ".eh_frame", &eshdr);
	Elf_Data *data = scn && shdr.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;
	struct eh_frame eh = { escn && eshdr.sh_type == SHT_PROGBITS ? elf_getdata(escn, NULL) : NULL,
			       eshdr.sh_addr, (const unsigned char *)elf_getident(elf, NULL),
			       (Dwarf_Off)-1, -1 };
	const uint8_t *p = data ? data->d_buf : NULL;
	struct code code = { 0 };
	struct mt_sym *anon = NULL;
	size_t nanon = 0, cap = 0;
	uint64_t prev = 0;
	uint32_t n;
	int rc;

	if (!p || !eh.data || !eh.ident || data->d_size < HDR_SIZE || p[0] != 1 ||
	    p[1] != ENC_PCREL_SDATA4 || p[2] != DW_EH_PE_udata4 || p[3] != ENC_DATAREL_SDATA4)
		return 0;
	memcpy(&n, p + 8, sizeof(n));
	if (n > (data->d_size - HDR_SIZE) / 8)
		return 0;	/* a count the section cannot hold */
	rc = code_ranges(elf, &code);
	for (uint32_t i = 0; i < n && !rc; i++) {
		const uint8_t *ent = p + HDR_SIZE + 8 * (size_t)i;
		uint64_t start = shdr.sh_addr + (uint64_t)(int64_t)get_s32(ent);
		uint64_t at = shdr.sh_addr + (uint64_t)(int64_t)get_s32(ent + 4);
		uint64_t limit, end;

		/* The table is sorted for a binary search: one that is not is
		 * no table to trust. */
		if (start < prev)
			break;
		prev = start;
		if (mt_sym_lookup(f, start) || !(limit = code_limit(&code, start)))
			continue;
		end = fde_end(&eh, at, start);
		if (end <= start || end > limit)
			continue;
		if (MT_ARRAY_RESERVE(anon, cap, nanon, 1))
			rc = -ENOMEM;
		else
			anon[nanon++] = (struct mt_sym){ start, end - start, "", false, true };
	}
	if (!rc && nanon)
		rc = merge(f, anon, nanon);
	free(anon);
	free(code.v);
	return rc;
}
