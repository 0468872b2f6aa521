// SPDX-License-Identifier: MIT
/* A vmlinux-like ELF of a bundle's kernel text; see perfdata_vmlinux.h. */
#include "perfdata/perfdata_vmlinux.h"

#include "files/outfile.h"

#include "kcore/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The bundle's core kernel text: the copy named "kernel". */
static int find_kernel_text(struct mt_bundle_reader *r, struct mt_bundle_ktext *kt,
			    const uint8_t **code, size_t *len)
{
	for (size_t i = 0; i < mt_bundle_ktext_count(r); i++)
		if (!mt_bundle_ktext_info(r, i, kt) && !strcmp(kt->name, "kernel"))
			return mt_bundle_ktext_data(r, i, code, len) ? -EBADMSG : 1;
	return 0;
}

/* .symtab and .strtab contents: a null symbol, then one per code symbol. */
static int build_symbols(const struct mt_ksyms *ks, uint64_t lo, uint64_t hi, size_t shndx,
			 Elf64_Sym **syms, size_t *nsyms, char **strtab, size_t *strsz)
{
	size_t n = 1, at = 1;

	*syms = calloc(ks->n + 1, sizeof(**syms));
	*strtab = NULL;
	*strsz = 1;
	for (size_t i = 0; i < ks->n; i++)
		*strsz += strlen(ks->syms[i].name) + 1;
	*strtab = calloc(1, *strsz);
	if (!*syms || !*strtab)
		return -ENOMEM;
	for (size_t i = 0; i < ks->n; i++) {
		const struct mt_ksym *s = &ks->syms[i];
		const struct mt_ksym *next = mt_ksyms_next_code(ks, s->addr);
		uint64_t end = next && next->addr < hi ? next->addr : hi;

		if (s->module || !mt_ksym_is_code(s->type) || s->addr < lo || s->addr >= hi)
			continue;
		(*syms)[n] = (Elf64_Sym){
			.st_name = (Elf64_Word)at,
			/* All global: the table then needs no locals-first order. */
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = (Elf64_Section)shndx,
			.st_value = s->addr,
			.st_size = end - s->addr,
		};
		strcpy(*strtab + at, s->name);
		at += strlen(s->name) + 1;
		n++;
	}
	*nsyms = n;
	return 0;
}

/* A section named at NAME_OFF in .shstrtab. */
static Elf_Scn *add_section(Elf *e, size_t name_off, Elf64_Word type, Elf64_Xword flags,
			    void *data, size_t len, Elf64_Addr addr)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf_Data *d = scn ? elf_newdata(scn) : NULL;
	Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;

	if (!d || !sh)
		return NULL;
	d->d_buf = data;
	d->d_size = len;
	d->d_align = type == SHT_PROGBITS ? 16 : 8;
	d->d_type = ELF_T_BYTE;
	sh->sh_name = (Elf64_Word)name_off;
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addr = addr;
	sh->sh_addralign = d->d_align;
	return scn;
}

int perfdata_write_vmlinux(struct mt_bundle_reader *r, const char *path,
			   struct perfdata_kernel_text *out, char *err, size_t errlen)
{
	static char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	struct mt_ksyms ks = { 0 };
	struct mt_bundle_ktext kt;
	Elf64_Sym *syms = NULL;
	char *strtab = NULL;
	struct mt_outfile of = { .slot = -1 };
	const uint8_t *code;
	const char *ktext;
	size_t len, klen, nsyms = 0, strsz = 0;
	Elf *e = NULL;
	int fd = -1, rc;

	memset(out, 0, sizeof(*out));
	rc = find_kernel_text(r, &kt, &code, &len);
	if (rc <= 0) {
		if (rc)
			snprintf(err, errlen, "kernel text: %s", mt_bundle_reader_errmsg(r));
		return rc;
	}
	if (mt_bundle_kallsyms(r, &ktext, &klen) ||
	    mt_ksyms_parse(&ks, ktext, klen, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "the bundle has kernel text but no kallsyms");
		return -EBADMSG;
	}
	rc = -ENOMEM;
	if (build_symbols(&ks, kt.addr, kt.addr + len, 1, &syms, &nsyms, &strtab, &strsz)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((rc = mt_outfile_begin(&of, path, err, errlen)))
		goto out;
	if ((fd = open(of.write_path, O_WRONLY | O_TRUNC | O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		mt_outfile_abort(&of);
		goto out;
	}
	elf_version(EV_CURRENT);
	if (!(e = elf_begin(fd, ELF_C_WRITE, NULL)))
		goto elf_fail;
	Elf64_Ehdr *eh = elf64_newehdr(e);
	Elf64_Phdr *ph = eh ? elf64_newphdr(e, 1) : NULL;

	if (!ph)
		goto elf_fail;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = kt.addr;
	/* Offsets of the names in shstrtab. */
	Elf_Scn *text = add_section(e, 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, (void *)code,
				    len, kt.addr);
	Elf_Scn *sym = add_section(e, 7, SHT_SYMTAB, 0, syms, nsyms * sizeof(*syms), 0);
	Elf_Scn *str = add_section(e, 15, SHT_STRTAB, 0, strtab, strsz, 0);
	Elf_Scn *shs = add_section(e, 23, SHT_STRTAB, 0, shstrtab, sizeof(shstrtab), 0);

	if (!text || !sym || !str || !shs)
		goto elf_fail;
	elf64_getshdr(sym)->sh_link = (Elf64_Word)elf_ndxscn(str);
	elf64_getshdr(sym)->sh_info = 1; /* the first global symbol */
	elf64_getshdr(sym)->sh_entsize = sizeof(Elf64_Sym);
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(shs);
	if (elf_update(e, ELF_C_NULL) < 0)
		goto elf_fail;
	*ph = (Elf64_Phdr){
		.p_type = PT_LOAD,
		.p_flags = PF_R | PF_X,
		.p_offset = elf64_getshdr(text)->sh_offset,
		.p_vaddr = kt.addr,
		.p_paddr = kt.addr,
		.p_filesz = len,
		.p_memsz = len,
		.p_align = 16,
	};
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto elf_fail;
	elf_end(e);
	e = NULL;
	if (close(fd)) {
		fd = -1;
		rc = -errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		mt_outfile_abort(&of);
		goto out;
	}
	fd = -1;
	if ((rc = mt_outfile_commit(&of, err, errlen)))
		goto out;
	*out = (struct perfdata_kernel_text){ kt.addr, len, nsyms - 1 };
	rc = 1;
	goto out;
elf_fail:
	rc = -EIO;
	snprintf(err, errlen, "%s: cannot write the ELF file: %s", path, elf_errmsg(-1));
	if (e)
		elf_end(e);
	e = NULL;
	if (fd >= 0) {
		close(fd);
		fd = -1;
		mt_outfile_abort(&of);
	}
out:
	mt_ksyms_free(&ks);
	free(syms);
	free(strtab);
	return rc;
}
