// SPDX-License-Identifier: MIT
/* The GNU build-id of an ELF file, read from its notes with libelf. */
#include "capture/capture_procfs.h"
#include "util/regfile.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* Searches one note buffer; returns the id length or 0. */
static int find_in_notes(Elf_Data *data, uint8_t *id, size_t cap)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nh.n_descsz > 0) {
			size_t len = nh.n_descsz < cap ? nh.n_descsz : cap;

			memcpy(id, (const uint8_t *)data->d_buf + desc_off, len);
			return (int)len;
		}
	}
	return 0;
}

/*
 * Section headers first (present in every linked file); program headers
 * for stripped files whose sections were removed.
 */
static int build_id_of(Elf *elf, uint8_t *id, size_t cap)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	int len;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (len = find_in_notes(data, id, cap)) > 0)
			return len;
	}
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && (len = find_in_notes(data, id, cap)) > 0)
			return len;
	}
	return 0;
}

int mt_elf_build_id(const char *path, uint8_t *id, size_t cap)
{
	Elf *elf;
	int fd, len;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = mt_open_regular(path, NULL);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		len = -ENOEXEC;
	else
		len = build_id_of(elf, id, cap);
	elf_end(elf);
	close(fd);
	return len;
}
